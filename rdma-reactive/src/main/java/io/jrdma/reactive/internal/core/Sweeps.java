package io.jrdma.reactive.internal.core;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * A send queue's deadline sweeps on the timer ({@link SendQueue} decides when to arm one). Usually
 * one is armed; a post made during a sweep arms another beside the sweep's own re-arm, and that one
 * may arm a third. Each holds the queue, and through its poster the connection, until its
 * deadline. The rules:
 * <ul>
 * <li>every armed sweep is known here until it runs or is cancelled;</li>
 * <li>{@link #cancelAll()} (the connection is destroyed) takes every armed one off the timer, and
 *     none is armed after it: an {@link #arm} racing with it cancels its own task;</li>
 * <li>a timer that refuses (shut down) arms nothing, and the caller is told.</li>
 * </ul>
 */
final class Sweeps {
    private final Scheduler timer;
    private final Runnable sweep;
    private final Set<Armed> armed = ConcurrentHashMap.newKeySet();
    private volatile boolean cancelled;

    Sweeps(Scheduler timer, Runnable sweep) {
        this.timer = timer;
        this.sweep = sweep;
    }

    /** Arms a sweep in {@code delayNanos}; false if none was armed (cancelled, or the timer refused). */
    boolean arm(long delayNanos) {
        if (cancelled) return false;
        Armed a = new Armed();
        armed.add(a);
        try {
            a.task = timer.schedule(a, delayNanos, TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            armed.remove(a);
            return false;
        }
        if (cancelled) a.cancel();  // cancelAll ran between the check and the schedule: it may have missed this task
        return true;
    }

    /** Takes every armed sweep off the timer; none is armed afterwards. Once or more, any thread. */
    void cancelAll() {
        cancelled = true;
        for (Armed a : armed) a.cancel();
    }

    /** Sweeps armed now (for tests). */
    int armed() {
        return armed.size();
    }

    private final class Armed implements Runnable {
        private volatile @Nullable Disposable task;

        @Override
        public void run() {
            armed.remove(this);
            sweep.run();
        }

        void cancel() {
            armed.remove(this);
            Disposable t = task;
            if (t != null) t.dispose();
        }
    }
}
