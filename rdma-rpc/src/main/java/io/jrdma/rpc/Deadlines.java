package io.jrdma.rpc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Timeouts for many short-lived calls without a timer per call. Scheduling and cancelling a
 * timer wakes the timer thread each time, and under emulation (the SoftRoCE lab) every wake-up
 * costs a scheduler turn: per-call timers tripled the round trip of a small call. Instead one
 * sweep at a time is scheduled, at the earliest deadline tracked, and it schedules the next at the
 * earliest deadline left (at least a tick later: deadlines close together are swept together); a
 * deadline fires up to one tick late. Calls of 30 s that take a millisecond sweep about once per 30 s, not on every tick:
 * a sweep every 10 ms was 4 % of a process's CPU in the lab's EVENT rows, and a thread wake-up
 * every tick beside the loops on the guest's two vCPUs.
 * <p>
 * What is tracked sits in an array under this object's lock and knows its own slot, so tracking
 * and untracking are a lock and a few stores: the concurrent set this replaced hashed every call
 * by its identity (a runtime call to install the hash in a fresh object) and made a node per call.
 * A track only schedules when its deadline comes more than a tick before the sweep scheduled.
 */
final class Deadlines {
    /** Something with a deadline; {@link #expire()} runs on the sweep thread, at most once. */
    interface Tracked {
        /** {@return the deadline, on the clock this Deadlines reads (System.nanoTime by default); fixed while tracked} */
        long deadlineNanos();

        void expire();

        /** The slot {@link Deadlines} keeps it in, plus one (0: not tracked); only Deadlines touches it, under its lock. */
        int deadlineSlot();

        void deadlineSlot(int slot);
    }

    static final Duration TICK = Duration.ofMillis(10);
    private static final long TICK_NANOS = TICK.toNanos();
    private static final int MIN_SLOTS = 16;

    private final Scheduler scheduler;
    private final LongSupplier clock;
    // guarded by this
    private Tracked[] tracked = new Tracked[MIN_SLOTS];  // [0, size) in use
    private int size;
    /** Whether a sweep is scheduled, when, and which: a sweep that finds another scheduled after it does nothing. */
    private boolean scheduled;
    private long sweepAt;
    private long generation;
    private @Nullable Disposable pending;
    private long sweeps;

    Deadlines(Scheduler scheduler, LongSupplier clock) {
        this.scheduler = scheduler;
        this.clock = clock;
    }

    Deadlines() {
        this(Schedulers.parallel(), System::nanoTime);
    }

    /** Tracks {@code t} until it is untracked or expires; nothing if it is tracked already. */
    void track(Tracked t) {
        long at;
        long gen;
        Disposable replaced;
        synchronized (this) {
            if (t.deadlineSlot() != 0) return;
            if (size == tracked.length) tracked = Arrays.copyOf(tracked, size * 2);
            tracked[size] = t;
            t.deadlineSlot(++size);
            long deadline = t.deadlineNanos();
            if (scheduled && sweepAt - deadline <= TICK_NANOS) return;  // the sweep scheduled is soon enough
            at = deadline;
            gen = ++generation;
            scheduled = true;
            sweepAt = at;
            replaced = pending;
            pending = null;
        }
        if (replaced != null) replaced.dispose();
        schedule(gen, at);
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

    /** {@return the sweeps that ran so far (for tests: what a call's deadline costs the timer thread)} */
    synchronized long sweeps() {
        return sweeps;
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

    private void schedule(long gen, long at) {
        Disposable d = scheduler.schedule(() -> sweep(gen), Math.max(0, at - clock.getAsLong()), TimeUnit.NANOSECONDS);
        synchronized (this) {
            if (gen == generation) pending = d;  // else replaced meanwhile, and its sweep will find out
        }
    }

    private void sweep(long gen) {
        long now = clock.getAsLong();
        List<Tracked> expired = null;
        long next = 0;
        long nextGen = 0;
        synchronized (this) {
            if (gen != generation) return;  // a track scheduled an earlier sweep instead
            sweeps++;
            pending = null;
            scheduled = false;
            boolean left = false;
            long earliest = 0;
            // downwards: what remove() moves into a hole was already looked at
            for (int i = size - 1; i >= 0; i--) {
                Tracked t = tracked[i];
                long deadline = t.deadlineNanos();
                if (now - deadline >= 0) {
                    remove(i);
                    if (expired == null) expired = new ArrayList<>();
                    expired.add(t);
                } else if (!left || deadline - earliest < 0) {
                    earliest = deadline;
                    left = true;
                }
            }
            if (left) {
                // no sooner than a tick from now: deadlines close together are swept together
                next = earliest - (now + TICK_NANOS) < 0 ? now + TICK_NANOS : earliest;
                nextGen = ++generation;
                scheduled = true;
                sweepAt = next;
            }
        }
        if (expired != null) {
            for (Tracked t : expired) {
                try {
                    t.expire();
                } catch (RuntimeException e) {
                    ServerCore.LOG.error("a timeout action failed", e);
                }
            }
        }
        if (nextGen != 0) schedule(nextGen, next);
    }
}
