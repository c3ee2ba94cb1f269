package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.reactive.OperationTimeoutException;
import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import java.time.Duration;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.Supplier;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Scheduler;

/**
 * The scheduling half of a send queue: credits (free slots of the QP's send queue), the posts
 * waiting for one, the table of work requests in flight, and operation timeouts. It holds no
 * verbs: a {@link Poster} turns an operation into {@code ibv_post_send}, and the poller reports
 * completions by slot. That split keeps the rules provable without a device:
 * <ul>
 * <li>at most {@code depth} operations are posted; the rest wait in FIFO order, without a thread;</li>
 * <li>an operation's buffers are retained from subscription until its completion is reported (or,
 *     if it was never posted, until it is abandoned), whatever its subscriber does;</li>
 * <li>a cancelled or timed-out operation that was not posted is never posted and gives its buffers
 *     back before its {@code Mono} signals; one that was posted keeps its credit and buffers until
 *     its completion;</li>
 * <li>whoever moves an operation out of the waiting phase owns the release of its buffers: the
 *     drainer that posts it (released at the completion), or the canceller, timer or closer that
 *     abandons it (released at once); so nothing is released twice;</li>
 * <li>every operation's {@code Mono} terminates once: success, its typed error, a timeout, or closed.</li>
 * </ul>
 */
public final class SendQueue {
    /** Posts {@code op} as work request {@code slot} (its wr_id); throws if the post failed. */
    interface Poster {
        void post(Op op, int slot);
    }

    private final Poster poster;
    private final String connection;
    private final Scheduler timer;
    private final Duration timeout;
    // written by the posting thread, read by the poller: the NIC in between is no Java happens-before edge
    private final AtomicReferenceArray<Op> inFlight;
    private final int[] freeSlots;
    private int freeTop;  // guarded by freeSlots
    private final Queue<Op> waiting = new ConcurrentLinkedQueue<>();
    private final AtomicInteger drainWip = new AtomicInteger();
    private final AtomicInteger posted = new AtomicInteger();
    /** A drainer is between its look at {@code closed} and the end of its post. */
    private volatile boolean posting;
    private volatile boolean purge;
    /** One timer for the whole queue, armed only while operations are outstanding, at the earliest deadline. */
    private final AtomicBoolean sweepArmed = new AtomicBoolean();
    private volatile Supplier<? extends Throwable> closed;
    private volatile Throwable closeCause;

    SendQueue(int depth, Poster poster, Scheduler timer, Duration timeout, String connection) {
        this.poster = poster;
        this.timer = timer;
        this.timeout = timeout;
        this.connection = connection;
        this.inFlight = new AtomicReferenceArray<>(depth);
        this.freeSlots = new int[depth];
        for (int i = 0; i < depth; i++) freeSlots[i] = depth - 1 - i;
        this.freeTop = depth;
    }

    /** Queues {@code op} when subscribed; posts it as soon as a credit is free. */
    public Mono<WorkCompletion> submit(Op op) {
        return Mono.create(sink -> {
            Supplier<? extends Throwable> c = closed;
            if (c != null) {
                sink.error(c.get());
                return;
            }
            op.retain();  // held until the completion, whatever the subscriber does
            op.sink = sink;
            op.deadline = timer.now(TimeUnit.NANOSECONDS) + timeout.toNanos();
            sink.onCancel(() -> abandon(op));
            waiting.add(op);
            if (sweepArmed.compareAndSet(false, true)) armSweep(op.deadline);
            drain();
        });
    }

    private void armSweep(long deadline) {
        try {
            timer.schedule(this::sweep, Math.max(0, deadline - timer.now(TimeUnit.NANOSECONDS)), TimeUnit.NANOSECONDS);
        } catch (RejectedExecutionException e) {
            sweepArmed.set(false);  // the timer is shut down: operations still end with their completions or the close
        }
    }

    /**
     * Times out every operation past its deadline, then re-arms for the earliest deadline left.
     * Every outstanding operation is in the waiting queue or the in-flight table (the drainer
     * publishes it in flight before taking it off the queue), and the flag is cleared before
     * looking, so an operation submitted meanwhile either is seen here or arms the timer itself.
     * A per-operation timer would cost a scheduler insert and cancel on every post.
     */
    private void sweep() {
        sweepArmed.set(false);
        long now = timer.now(TimeUnit.NANOSECONDS);
        long next = Long.MAX_VALUE;
        for (Op op : waiting) {
            if (op.isTerminated()) continue;
            if (op.deadline - now <= 0) timedOut(op);
            else {
                next = op.deadline;  // FIFO with one timeout: the rest are later still
                break;
            }
        }
        for (int slot = 0; slot < inFlight.length(); slot++) {
            Op op = inFlight.get(slot);
            if (op == null || op.isTerminated()) continue;
            if (op.deadline - now <= 0) timedOut(op);
            else next = Math.min(next, op.deadline);
        }
        if (next != Long.MAX_VALUE && sweepArmed.compareAndSet(false, true)) armSweep(next);
    }

    /** The subscriber is gone: if the operation still waits, it leaves the queue now, not when a credit reaches it. */
    private void abandon(Op op) {
        op.terminate();
        if (op.abandonWaiting()) {
            op.release();  // never posted, and now never will be: the NIC never had these buffers
            purge = true;
            drain();
        }
    }

    private void timedOut(Op op) {
        if (!op.terminate()) return;
        boolean wasWaiting = op.abandonWaiting();
        if (wasWaiting) op.release();  // before the signal: whoever sees the timeout may reuse the buffer
        op.sink.error(OperationTimeoutException.of(op.opcode, !wasWaiting, timeout, connection));
        if (wasWaiting) {
            purge = true;
            drain();
        }
    }

    /**
     * Posts waiting operations while credits last. One thread drains at a time (whoever finds the
     * work-in-progress counter at zero), so the poster needs no lock and only the drainer removes
     * operations from the queue.
     */
    public void drain() {
        if (drainWip.getAndIncrement() != 0) return;
        int missed = 1;
        do {
            if (purge) {
                purge = false;
                for (Iterator<Op> it = waiting.iterator(); it.hasNext(); ) {
                    if (it.next().isAbandoned()) it.remove();  // its abandoner released its buffers
                }
            }
            Op op;
            while ((op = waiting.peek()) != null) {
                if (op.isAbandoned()) {
                    waiting.poll();  // its abandoner released its buffers
                    continue;
                }
                // set before looking at closed, cleared only after the post: the closer sets closed,
                // then awaitNoPoster() reads posting, so one of the two sees the other
                posting = true;
                Supplier<? extends Throwable> c = closed;
                if (c != null) {
                    posting = false;
                    waiting.poll();
                    if (op.abandonWaiting()) {
                        op.release();  // never posted: the NIC never had these buffers
                        op.fail(c.get());
                    }
                    continue;
                }
                int slot = takeSlot();
                if (slot < 0) {
                    posting = false;
                    break;
                }
                if (!op.startPosting()) {  // abandoned just now, and released by its abandoner
                    posting = false;
                    returnSlot(slot);
                    waiting.poll();
                    continue;
                }
                inFlight.set(slot, op);  // before the post (the completion can beat its return) and before the poll (the sweep must see it)
                posted.incrementAndGet();
                waiting.poll();
                postNow(op, slot);
            }
            missed = drainWip.addAndGet(-missed);
        } while (missed != 0);
    }

    private void postNow(Op op, int slot) {
        try {
            poster.post(op, slot);
            posting = false;
        } catch (RuntimeException e) {
            posting = false;
            inFlight.set(slot, null);
            posted.decrementAndGet();
            returnSlot(slot);
            op.release();
            Supplier<? extends Throwable> c = closed;
            op.fail(c != null ? c.get() : e);  // a QP torn down under the post is the closure, not a verbs fault
        }
    }

    /**
     * The poller's report: the work request in {@code slot} completed. Releases its buffers (the
     * NIC is done with them), signals its {@code Mono}, returns the credit to the next waiting post.
     *
     * @return the operation's error, or null if it succeeded (or the slot held nothing)
     */
    RdmaOperationException complete(int slot, WorkCompletion wc) {
        return complete(slot, wc, null);
    }

    /** {@link #complete(int, WorkCompletion)}, failing the operation with {@code error} when given (a connection's first error, held). */
    RdmaOperationException complete(int slot, WorkCompletion wc, RdmaOperationException error) {
        Op op = inFlight.getAndSet(slot, null);
        RdmaOperationException failed = null;
        if (op != null) {
            posted.decrementAndGet();
            returnSlot(slot);
            op.release();
            if (wc.isSuccess()) {
                op.succeed(wc);
            } else {
                // closing already: its reason explains a flush, and a remote error from a peer that is going away
                failed = error != null ? error : RdmaOperationException.of(wc, completionOpcode(op.opcode), closeCause);
                op.fail(failed);
            }
        }
        drain();
        return failed;
    }

    /** From now on nothing is posted; the next {@link #drain()} fails waiting operations with {@code closedError}. */
    void close(Supplier<? extends Throwable> closedError, Throwable cause) {
        closeCause = cause;
        closed = closedError;
    }

    /**
     * Waits out a drainer that may be inside {@code ibv_post_send} (it saw the queue open); call
     * after {@link #close}. Only the post itself is waited for, never a drainer running a
     * subscriber's signal, which might wait for this very close.
     */
    void awaitNoPoster() {
        while (posting) Thread.onSpinWait();
    }

    /** After the QP is destroyed: operations whose completions never came give their buffers back and fail. */
    void failInFlight(Throwable error) {
        for (int slot = 0; slot < inFlight.length(); slot++) {
            Op op = inFlight.getAndSet(slot, null);
            if (op != null) {
                posted.decrementAndGet();
                op.release();
                op.fail(error);
            }
        }
    }

    /** The completion opcode of what is posted in {@code slot}, or UNKNOWN if nothing is. */
    WcOpcode postedOpcode(int slot) {
        Op op = inFlight.get(slot);
        return op == null ? WcOpcode.UNKNOWN : completionOpcode(op.opcode);
    }

    int availableCredits() {
        synchronized (freeSlots) {
            return freeTop;
        }
    }

    int waiting() {
        return waiting.size();
    }

    int inFlight() {
        return posted.get();
    }

    private int takeSlot() {
        synchronized (freeSlots) {
            return freeTop == 0 ? -1 : freeSlots[--freeTop];
        }
    }

    private void returnSlot(int slot) {
        synchronized (freeSlots) {
            freeSlots[freeTop++] = slot;
        }
    }

    static WcOpcode completionOpcode(SendOpcode op) {
        return switch (op) {
            case SEND, SEND_WITH_IMM -> WcOpcode.SEND;
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> WcOpcode.RDMA_WRITE;
            case RDMA_READ -> WcOpcode.RDMA_READ;
            case ATOMIC_CMP_AND_SWP -> WcOpcode.COMP_SWAP;
            case ATOMIC_FETCH_AND_ADD -> WcOpcode.FETCH_ADD;
        };
    }

    /** One send-queue operation, from subscription to completion. */
    public static final class Op {
        public final SendOpcode opcode;
        public final ScatterGatherElement[] sges;
        /** Bytes the gather/scatter list covers. */
        public final long length;
        public RemoteBuffer remote;
        public long remoteOffset;
        boolean hasImmediate;
        int immediate;
        long compareAdd, swap;
        MonoSink<WorkCompletion> sink;
        /** When the operation times out, on the queue's timer clock. */
        long deadline;
        private static final int WAITING = 0, POSTED = 1, ABANDONED = 2;
        /** Waiting for a credit, then posted (the NIC owns the buffers until the completion) or abandoned unposted. */
        private final AtomicInteger phase = new AtomicInteger(WAITING);
        /** Set once the Mono has terminated or its subscriber left: nothing more is signalled. */
        private final AtomicBoolean terminated = new AtomicBoolean();

        public Op(SendOpcode opcode, ScatterGatherElement... sges) {
            this.opcode = opcode;
            this.sges = sges;
            long total = 0;
            for (ScatterGatherElement s : sges) total += s.length();
            this.length = total;
        }

        public Op remote(RemoteBuffer target, long offset) {
            this.remote = target;
            this.remoteOffset = offset;
            return this;
        }

        public Op immediate(int value) {
            this.hasImmediate = true;
            this.immediate = value;
            return this;
        }

        public Op atomic(long compareAdd, long swap) {
            this.compareAdd = compareAdd;
            this.swap = swap;
            return this;
        }

        boolean isAtomic() {
            return opcode == SendOpcode.ATOMIC_CMP_AND_SWP || opcode == SendOpcode.ATOMIC_FETCH_AND_ADD;
        }

        /** Retains every listed buffer, or none: a buffer already returned to its pool fails the whole operation. */
        void retain() {
            int i = 0;
            try {
                for (; i < sges.length; i++) sges[i].buffer().retain();
            } catch (IllegalStateException e) {
                while (--i >= 0) sges[i].buffer().release();
                throw e;
            }
        }

        void release() {
            for (ScatterGatherElement s : sges) s.buffer().release();
        }

        boolean terminate() {
            return terminated.compareAndSet(false, true);
        }

        /** The drainer claims a waiting operation for posting; false if its subscriber abandoned it first. */
        boolean startPosting() {
            return phase.compareAndSet(WAITING, POSTED);
        }

        /** True if the operation was still waiting and now never will be posted. */
        boolean abandonWaiting() {
            return phase.compareAndSet(WAITING, ABANDONED);
        }

        boolean isAbandoned() {
            return phase.get() == ABANDONED;
        }

        boolean isTerminated() {
            return terminated.get();
        }

        void succeed(WorkCompletion wc) {
            if (terminate()) sink.success(wc);
        }

        void fail(Throwable e) {
            if (sink != null && terminate()) sink.error(e);
        }
    }
}
