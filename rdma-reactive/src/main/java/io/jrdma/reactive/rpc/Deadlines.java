package io.jrdma.reactive.rpc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
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
 * <p>
 * What is tracked sits in an array under this object's lock and knows its own slot, so tracking
 * and untracking are a lock and a few stores: the concurrent set this replaced hashed every call
 * by its identity (a runtime call to install the hash in a fresh object) and made a node per call.
 */
final class Deadlines {
    /** Something with a deadline; {@link #expire()} runs on the sweep thread, at most once. */
    interface Tracked {
        long deadlineNanos();

        void expire();

        /** The slot {@link Deadlines} keeps it in, plus one (0: not tracked); only Deadlines touches it, under its lock. */
        int deadlineSlot();

        void deadlineSlot(int slot);
    }

    static final Duration TICK = Duration.ofMillis(10);
    private static final int IDLE_TICKS_BEFORE_STOP = 100;
    private static final int MIN_SLOTS = 16;

    private Tracked[] tracked = new Tracked[MIN_SLOTS];  // guarded by this; [0, size) in use
    private int size;  // guarded by this
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

    /** Tracks {@code t} until it is untracked or expires; nothing if it is tracked already. */
    void track(Tracked t) {
        synchronized (this) {
            if (t.deadlineSlot() != 0) return;
            if (size == tracked.length) tracked = Arrays.copyOf(tracked, size * 2);
            tracked[size] = t;
            t.deadlineSlot(++size);
        }
        if (!running.get()) start();
    }

    void untrack(Tracked t) {
        synchronized (this) {
            int slot = t.deadlineSlot();
            if (slot != 0) remove(slot - 1);
        }
    }

    synchronized int size() {
        return size;
    }

    /** Under the lock: the last one moves into the hole. */
    private void remove(int i) {
        Tracked[] a = tracked;
        a[i].deadlineSlot(0);
        Tracked last = a[--size];
        a[size] = null;
        if (i != size) {
            a[i] = last;
            last.deadlineSlot(i + 1);
        }
        if (a.length > MIN_SLOTS && size < a.length / 4) tracked = Arrays.copyOf(a, a.length / 2);
    }

    private void start() {
        if (running.compareAndSet(false, true)) {
            long tick = TICK.toNanos();
            task = scheduler.schedulePeriodically(this::sweep, tick, tick, TimeUnit.NANOSECONDS);
        }
    }

    private void sweep() {
        long now = System.nanoTime();
        List<Tracked> expired = null;
        boolean empty;
        synchronized (this) {
            // downwards: what remove() moves into a hole was already looked at
            for (int i = size - 1; i >= 0; i--) {
                Tracked t = tracked[i];
                if (now - t.deadlineNanos() >= 0) {
                    remove(i);
                    if (expired == null) expired = new ArrayList<>();
                    expired.add(t);
                }
            }
            empty = size == 0;
        }
        if (expired != null) {
            for (Tracked t : expired) {
                try {
                    t.expire();
                } catch (RuntimeException e) {
                    ServerCore.LOG.log(System.Logger.Level.ERROR, "a timeout action failed", e);
                }
            }
        }
        if (!empty) {
            idleTicks = 0;
            return;
        }
        if (++idleTicks < IDLE_TICKS_BEFORE_STOP) return;
        idleTicks = 0;
        running.set(false);
        task.dispose();
        // a track() that saw running=true just before the flag fell has not started a sweep
        if (size() != 0) start();
    }
}
