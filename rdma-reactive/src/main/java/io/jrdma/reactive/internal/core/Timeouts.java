package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.OperationTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A send queue's operation timeouts: each operation's deadline, set when it is submitted, and one
 * timer for the whole queue that fails what is past its deadline ({@link Sweeps} keeps the timer's
 * tasks). A per-operation timer would cost a scheduler insert and cancel on every post. The rules:
 * <ul>
 * <li>a sweep is armed only while operations are outstanding, at the earliest deadline: a
 *     submitter arms one if none is armed, and a sweep re-arms for the earliest deadline it left;</li>
 * <li>every outstanding operation is in the waiting queue or the in-flight table (the drainer
 *     moves it from one to the other under the lock the sweep's scan of the queue holds), and the
 *     armed flag is cleared before the sweep looks, so an operation submitted meanwhile either is
 *     seen by the sweep or arms the timer itself;</li>
 * <li>an operation that times out while waiting is never posted: it gives its buffers (and a
 *     prepaid credit) back before its {@code Mono} signals; one that times out posted keeps its
 *     credit and buffers until its completion;</li>
 * <li>once {@link #cancelAll()} ran (the connection is destroyed) no sweep is armed; without one,
 *     operations still end with their completions or the close;</li>
 * <li>a <em>posted</em> operation past its deadline times out only once its loop has emptied its
 *     CQs in a pass that began after a sweep found it overdue ({@link LoopProgress}): its
 *     completion, had it come, would have been dispatched, so the peer or the wire is late, not
 *     this side. A sweep that finds one overdue asks the loop for a pass (a sleeping loop wakes)
 *     and looks again {@link #RECHECK_NANOS} later. While the loop's thread is held (application
 *     code on it: a subscriber, a handler, a synchronous source emitting into a send) it makes no
 *     pass, so nothing posted times out for it: the wait is this side's. Such a hold is logged
 *     once it has lasted a whole timeout. Without a loop (tests, unbound queues) the deadline
 *     alone decides.</li>
 * </ul>
 */
final class Timeouts {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.connection");
    /** How soon a sweep looks again at posted operations it found overdue, for the loop's pass. */
    static final long RECHECK_NANOS = 10_000_000;
    private static final long NO_MARK = Long.MIN_VALUE;

    /**
     * The loop that dispatches a queue's completions, as its timeouts see it.
     *
     * @param drainedPasses {@link io.jrdma.reactive.internal.loop.Loop#drainedPasses()}
     * @param executor      runs a task on the loop, which then makes a pass (a sleeping loop
     *                      wakes); may throw {@link RejectedExecutionException} once it has stopped
     * @param name          the loop thread's name, for the log
     */
    record LoopProgress(LongSupplier drainedPasses, Executor executor, String name) { }

    private final SendQueue queue;
    private final String connection;
    /** Deadlines are read from this clock (nanoseconds): the timer's own clock costs a unit conversion per operation. */
    private final LongSupplier clock;
    private final Duration timeout;
    private final long timeoutNanos;
    /** One timer for the whole queue, armed only while operations are outstanding, at the earliest deadline. */
    private final AtomicBoolean sweepArmed = new AtomicBoolean();
    /** The armed sweeps, cancelled at destroy: until its deadline each keeps the queue, and the connection, reachable. */
    private final Sweeps sweeps;
    private final @Nullable LoopProgress loop;
    /** A pass asked of the loop and not run yet: at most one at a time. */
    private final AtomicBoolean passRequested = new AtomicBoolean();
    private final Runnable passDone = () -> passRequested.set(false);
    /** When a sweep last found posted operations overdue, and the loop's drained passes then: guarded by this. */
    private long markTime = NO_MARK, markPasses;
    private boolean holdLogged;  // guarded by this

    /**
     * @param clock nanoseconds on a clock that runs at the rate of {@code timer}'s delays
     *              (System::nanoTime with a real scheduler)
     * @param loop  the loop that dispatches the queue's completions, or null: the deadline alone decides
     */
    Timeouts(SendQueue queue, Scheduler timer, LongSupplier clock, Duration timeout, String connection, @Nullable LoopProgress loop) {
        this.queue = queue;
        this.loop = loop;
        this.sweeps = new Sweeps(timer, this::sweep);
        this.clock = clock;
        this.timeout = timeout;
        this.timeoutNanos = timeout.toNanos();
        this.connection = connection;
    }

    /** The deadline of an operation submitted now. */
    long deadline() {
        return clock.getAsLong() + timeoutNanos;
    }

    /** Arms a sweep for {@code deadline} unless one is armed. */
    void ensureArmed(long deadline) {
        if (!sweepArmed.get() && sweepArmed.compareAndSet(false, true)) armSweep(deadline);
    }

    /** Takes every armed sweep off the timer; none is armed afterwards (the connection is destroyed). */
    void cancelAll() {
        sweeps.cancelAll();
    }

    private void armSweep(long deadline) {
        // none armed: the timer is shut down, or the connection destroyed; operations still end with their completions or the close
        if (!sweeps.arm(Math.max(0, deadline - clock.getAsLong()))) sweepArmed.set(false);
    }

    /** Times out every operation past its deadline, then re-arms for the earliest deadline left (the rules above). */
    private void sweep() {
        sweepArmed.set(false);
        long now = clock.getAsLong();
        long next = Long.MAX_VALUE;
        List<Op> expired = null;  // signalled outside the lock: subscribers run in the signal
        synchronized (queue.lock) {
            for (Op op = queue.head; op != null; op = op.next) {
                if (op.isTerminated() || op.isAbandoned()) continue;
                if (op.deadline - now <= 0) {
                    if (expired == null) expired = new ArrayList<>();
                    expired.add(op);
                } else {
                    next = op.deadline;  // FIFO with one timeout: the rest are later still
                    break;
                }
            }
        }
        if (expired != null) expired.forEach(this::timedOut);
        List<Op> due = postedDue(now);
        if (due != null) due.forEach(this::timedOut);
        for (int slot = 0; slot < queue.inFlight.length(); slot++) {
            Op op = queue.inFlight.get(slot);
            if (op == null || op.isTerminated()) continue;
            // overdue and not judged yet: looked at again soon, once the loop had its pass
            next = Math.min(next, op.deadline - now <= 0 ? now + RECHECK_NANOS : op.deadline);
        }
        if (next != Long.MAX_VALUE) {
            // armed for the earliest deadline left even if a post during this sweep armed the timer
            // first (a retry from a timeout's signal, say): that post's deadline is a whole timeout
            // away, and the operations seen here would have timed out that much late. The timer
            // the post armed runs too, and finds what is due then.
            sweepArmed.set(true);
            armSweep(next);
        }
    }

    /**
     * The posted operations that time out now (the rules above), or null; marks the overdue ones the
     * loop has not answered for yet, and asks it for a pass.
     */
    private synchronized @Nullable List<Op> postedDue(long now) {
        LoopProgress loop = this.loop;
        long passes = loop == null ? 0 : loop.drainedPasses().getAsLong();
        boolean passedSinceMark = markTime != NO_MARK && passes - markPasses >= 2;
        List<Op> due = null;
        boolean unjudged = false;
        for (int slot = 0; slot < queue.inFlight.length(); slot++) {
            Op op = queue.inFlight.get(slot);
            if (op == null || op.isTerminated() || op.deadline - now > 0) continue;
            if (loop == null || passedSinceMark && op.deadline - markTime <= 0) {
                if (due == null) due = new ArrayList<>();
                due.add(op);
            } else {
                unjudged = true;
            }
        }
        if (!unjudged || loop == null) {
            markTime = NO_MARK;
            holdLogged = false;
            return due;
        }
        if (markTime == NO_MARK || passedSinceMark) {
            markTime = now;
            markPasses = passes;
            holdLogged = false;
        } else if (!holdLogged && now - markTime >= timeoutNanos) {
            holdLogged = true;
            LOG.warn(connection + ": its loop thread " + loop.name() + " has not polled its completion queues for "
                    + Duration.ofNanos(now - markTime).toMillis() + " ms: application code running on that thread holds it (a "
                    + "subscriber or handler that blocks, or a synchronous source emitting a long stream into a send); every "
                    + "connection of that loop waits, and no posted operation times out until it polls again");
        }
        if (passRequested.compareAndSet(false, true)) {
            try {
                loop.executor().execute(passDone);
            } catch (RejectedExecutionException e) {
                passRequested.set(false);  // the loop has stopped: the close fails what is left
            }
        }
        return due;
    }

    private void timedOut(Op op) {
        if (op.isTerminated()) return;
        boolean wasWaiting = op.abandonWaiting();
        if (wasWaiting) {
            op.release();  // before the signal: whoever sees the timeout may reuse the buffer
            queue.returnPrepaid(op);
        }
        Credits cr = queue.credits;
        boolean awaitingCredit = wasWaiting && op.consumesReceive && cr != null && cr.available() == 0;
        op.fail(OperationTimeoutException.of(op.opcode, !wasWaiting, awaitingCredit, timeout, connection));
        if (wasWaiting) {
            queue.purge = true;
            queue.drain();
        }
    }
}
