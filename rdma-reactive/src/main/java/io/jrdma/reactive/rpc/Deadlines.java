package io.jrdma.reactive.rpc;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Timeouts for many short-lived calls without a timer per call. Scheduling and cancelling a
 * timer wakes the timer thread each time, and under emulation (the SoftRoCE lab) every wake-up
 * costs a scheduler turn: per-call timers tripled the round trip of a small call. Instead one
 * periodic sweep runs while anything is tracked and stops after a second of idleness; a deadline
 * fires up to one tick late.
 */
final class Deadlines {
    /** Something with a deadline; {@link #expire()} runs on the sweep thread, at most once. */
    interface Tracked {
        long deadlineNanos();

        void expire();
    }

    static final Duration TICK = Duration.ofMillis(10);
    private static final int IDLE_TICKS_BEFORE_STOP = 100;

    private final Set<Tracked> tracked = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean running = new AtomicBoolean();
    private final Scheduler scheduler;
    private volatile Disposable task;
    private int idleTicks;  // only the sweep touches it

    Deadlines(Scheduler scheduler) {
        this.scheduler = scheduler;
    }

    Deadlines() {
        this(Schedulers.parallel());
    }

    void track(Tracked t) {
        tracked.add(t);
        if (!running.get()) start();
    }

    void untrack(Tracked t) {
        tracked.remove(t);
    }

    int size() {
        return tracked.size();
    }

    private void start() {
        if (running.compareAndSet(false, true)) {
            long tick = TICK.toNanos();
            task = scheduler.schedulePeriodically(this::sweep, tick, tick, TimeUnit.NANOSECONDS);
        }
    }

    private void sweep() {
        long now = System.nanoTime();
        for (Tracked t : tracked) {
            if (now - t.deadlineNanos() >= 0 && tracked.remove(t)) {
                try {
                    t.expire();
                } catch (RuntimeException e) {
                    ServerCore.LOG.log(System.Logger.Level.ERROR, "a timeout action failed", e);
                }
            }
        }
        if (!tracked.isEmpty()) {
            idleTicks = 0;
            return;
        }
        if (++idleTicks < IDLE_TICKS_BEFORE_STOP) return;
        idleTicks = 0;
        running.set(false);
        task.dispose();
        // a track() that saw running=true just before the flag fell has not started a sweep
        if (!tracked.isEmpty()) start();
    }
}
