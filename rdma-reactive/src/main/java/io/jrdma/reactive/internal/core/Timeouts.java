package io.jrdma.reactive.internal.core;

import io.jrdma.reactive.OperationTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import reactor.core.scheduler.Scheduler;

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
 *     operations still end with their completions or the close.</li>
 * </ul>
 */
final class Timeouts {
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

    /**
     * @param clock nanoseconds on a clock that runs at the rate of {@code timer}'s delays
     *              (System::nanoTime with a real scheduler)
     */
    Timeouts(SendQueue queue, Scheduler timer, LongSupplier clock, Duration timeout, String connection) {
        this.queue = queue;
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
        for (int slot = 0; slot < queue.inFlight.length(); slot++) {
            Op op = queue.inFlight.get(slot);
            if (op == null || op.isTerminated()) continue;
            if (op.deadline - now <= 0) timedOut(op);
            else next = Math.min(next, op.deadline);
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
