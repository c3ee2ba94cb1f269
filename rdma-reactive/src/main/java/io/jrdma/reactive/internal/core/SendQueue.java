package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Scheduler;

/**
 * The scheduling half of a send queue: credits (free slots of the QP's send queue), the posts
 * waiting for one, the table of work requests in flight, and operation timeouts ({@link Timeouts}).
 * It holds no verbs: a {@link Poster} turns an operation into {@code ibv_post_send}, and the poller
 * reports completions by slot. That split keeps the rules provable without a device:
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
 * <li>what one drainer pass takes is posted as one chain of work requests, in FIFO order; when the
 *     provider refuses the chain from one work request on ({@code ibv_post_send}'s {@code bad_wr}),
 *     the ones before it were posted, and each refused one fails alone, giving back its credit and
 *     buffers;</li>
 * <li>a chain carries at most {@link Poster#maxChainBytes} of payload past its first work request
 *     (a first one goes whatever its size); what the pass has left starts the next chain, posted at
 *     once, FIFO as before. A chain saves a doorbell per work request, which counts for small
 *     messages only, while a provider may do a post's work inside the call up to a limit and defer
 *     the rest: rxe sends up to 1,024 packets inside {@code ibv_post_send} and leaves the rest to a
 *     softirq, which then competes with the spinning loops for a CPU (lab, send_bw 64 KiB BUSY:
 *     0.65-0.68 of ib_send_bw with chains of up to 16 SENDs, 0.96-1.03 with chains of 256 KiB);</li>
 * <li>a drain may be deferred only to a drain that is certain to come: the loop defers the drains
 *     started while it dispatches a poll batch to the batch's end, so the posts the batch's
 *     completions made possible go out as one chain, with one doorbell; not those started while it
 *     dispatches the batch's last completion: nothing after it could join the chain, so the chain
 *     goes at once, ahead of the rest of that dispatch (a ping-pong's answer leaves before its
 *     receive is posted again);</li>
 * <li>a submitter that finds nothing waiting and no drainer becomes the drainer and posts its
 *     operation without queueing it (FIFO holds: nothing waited before it, and what is queued
 *     meanwhile finds the drain taken and goes after it); without a credit, once closed, or with its
 *     subscriber gone, it is queued and drained like any other;</li>
 * <li>a thread other than the loop drains one pass at most: it posts its own operation (directly,
 *     or with whatever else waits, up to a chain), and a drain asked for meanwhile (the loop's,
 *     after a poll batch) is handed to the loop, not taken over. Otherwise an application thread
 *     that posts while completions keep the loop posting goes on posting the loop's operations, one
 *     {@code ibv_post_send} after another, for as long as they keep coming: a second busy thread
 *     beside the loop, and a lockstep of one post per completion;</li>
 * <li>every operation's {@code Mono} terminates once: success, its typed error, a timeout, or closed;
 *     a completion that arrives before the subscriber requested waits for the request;</li>
 * <li>an argument the NIC would refuse, or worse, not refuse (a range outside a buffer, a buffer the
 *     {@link Poster} refuses because it is registered in another protection domain than the QP's)
 *     fails the operation at subscription, before it is queued: it takes no credit, holds no buffer;</li>
 * <li>a failed completion taken once the queue is closing has the closure's reason as its cause:
 *     that reason explains a flush, and a remote error from a peer that is going away; the
 *     connection may give the error instead (one it held until it could say why);</li>
 * <li>once the connection is destroyed ({@link #failInFlight}) no deadline sweep is left on the
 *     timer: not a second one (a post made during a sweep arms one beside the sweep's own re-arm),
 *     nor one a sweep re-arms on the timer's thread while the destroy runs (it takes its own task
 *     off). An armed sweep holds the queue, and through its poster the connection, until its
 *     deadline ({@link Sweeps});</li>
 * <li>an operation is an {@link Op}: its own {@code Mono}, its first subscriber's {@code Subscription}
 *     and its own entry in the waiting queue and the in-flight table (its rules are in its Javadoc).</li>
 * </ul>
 */
public final class SendQueue {
    /**
     * Turns operations into {@code ibv_post_send}: one at a time ({@link #post}), or, when the
     * drainer takes several in one pass, as one chain of work requests posted with one call.
     */
    interface Poster {
        /** Posts {@code op} as work request {@code slot} (its wr_id); throws if the post failed. */
        void post(Op op, int slot);

        /** The longest chain {@link #postChain} takes; 1: no chains. */
        default int maxChain() {
            return 1;
        }

        /**
         * The most payload bytes a chain carries: a work request that would take it past this
         * starts the next chain (a chain's first one goes whatever its size). Unbounded by default.
         */
        default long maxChainBytes() {
            return Long.MAX_VALUE;
        }

        /** Makes {@code op} work request {@code index} of the next chain, with wr_id {@code slot}. */
        default void chain(Op op, int slot, int index) {
            throw new UnsupportedOperationException();
        }

        /**
         * Posts the first {@code count} chained work requests with one call.
         *
         * @return {@code count} if all were posted, else the index of the first that was not (those
         *         before it were posted); {@code failure} then holds the error
         */
        default int postChain(int count, RuntimeException[] failure) {
            throw new UnsupportedOperationException();
        }

        /**
         * Why the QP cannot use {@code buffer} (registered in another protection domain: a device
         * that checks fails it late, and the connection with it); null if it can. Checked before
         * the operation is queued, for each of its buffers.
         */
        default @Nullable RuntimeException refuses(RegisteredBuffer buffer) {
            return null;
        }
    }

    final Poster poster;
    final int maxScatterGather;
    // written by the posting thread, read by the poller: the NIC in between is no Java happens-before edge
    final AtomicReferenceArray<Op> inFlight;
    /** Guards the free slots and the waiting queue (linked through {@link Op#next}): one lock per post. */
    final Object lock = new Object();
    private final int[] freeSlots;
    private int freeTop;
    /** Volatile for the drainer's look without the lock (an operation queued after that look drains itself). */
    volatile @Nullable Op head;
    private @Nullable Op tail;
    private int waitingCount;
    private final AtomicInteger drainWip = new AtomicInteger();
    /** A drainer is between its look at {@code closed} and the end of its post. */
    private volatile boolean posting;
    volatile boolean purge;
    /** Deadlines and the sweep that enforces them. */
    private final Timeouts timeouts;
    private volatile @Nullable Supplier<? extends Throwable> closed;
    private volatile @Nullable Throwable closeCause;
    /** Asked by a drainer before it drains: true if the drain is taken over by a later call (the loop, after its poll batch). */
    private final BooleanSupplier deferDrain;
    /** Where a drain asked for during another thread's pass goes, and whether the caller is there; null: no hand-off. */
    private final @Nullable Executor home;
    private final BooleanSupplier atHome;
    private final Runnable drainTask = this::drain;
    // the drainer's, for a chain: what it took in one pass
    private final Op[] chainOps;
    private final int[] chainSlots;
    private final long chainBytes;
    private final RuntimeException[] chainFailure = new RuntimeException[1];
    /** The peer's receiver credits, once the connection knows it speaks them; null: messages need none. */
    volatile @Nullable Credits credits;
    /** The peer takes large messages: SEND_WITH_IMM immediates with bits 31 and 30 set are jrdma's (rendezvous). */
    volatile boolean rendezvousImmediates;

    /**
     * @param clock      nanoseconds on a clock that runs at the rate of {@code timer}'s delays
     *                   (System::nanoTime with a real scheduler)
     * @param deferDrain asked by each drainer first: true when a later {@link #drain()} is certain
     *                   (the loop defers a drain started while it dispatches a poll batch to the
     *                   batch's end, so the posts the batch's completions and signals freed go
     *                   out as one chain)
     * @param home       the loop: a drainer that is not on it ({@code atHome} false) posts one pass and
     *                   hands a drain asked for meanwhile to it ({@code execute}), which must run it;
     *                   null: no hand-off
     * @param atHome     whether the calling thread is the loop's
     * @param progress   the loop's progress, which a posted operation's timeout waits for
     *                   ({@link Timeouts}); null: the deadline alone decides
     */
    SendQueue(int depth, int maxScatterGather, Poster poster, Scheduler timer, LongSupplier clock, Duration timeout,
              String connection, BooleanSupplier deferDrain, @Nullable Executor home, BooleanSupplier atHome,
              Timeouts.@Nullable LoopProgress progress) {
        this.deferDrain = deferDrain;
        this.home = home;
        this.atHome = atHome;
        int chain = Math.max(1, Math.min(depth, poster.maxChain()));
        this.chainOps = new Op[chain];
        this.chainSlots = new int[chain];
        this.chainBytes = poster.maxChainBytes();
        this.poster = poster;
        this.timeouts = new Timeouts(this, timer, clock, timeout, connection, progress);
        this.maxScatterGather = maxScatterGather;
        this.inFlight = new AtomicReferenceArray<>(depth);
        this.freeSlots = new int[depth];
        for (int i = 0; i < depth; i++) freeSlots[i] = depth - 1 - i;
        this.freeTop = depth;
    }

    /**
     * For tests: a queue whose deadlines come from {@code timer}'s own clock (virtual time), with no
     * limit on scatter-gather elements, no deferred drains and no loop to hand drains to.
     */
    static SendQueue forTest(int depth, Poster poster, Scheduler timer, Duration timeout, String connection) {
        return forTest(depth, poster, timer, timeout, connection, null);
    }

    /** {@link #forTest(int, Poster, Scheduler, Duration, String)} whose posted operations' timeouts wait for {@code progress}. */
    static SendQueue forTest(int depth, Poster poster, Scheduler timer, Duration timeout, String connection,
                             Timeouts.@Nullable LoopProgress progress) {
        return new SendQueue(depth, Integer.MAX_VALUE, poster, timer, () -> timer.now(TimeUnit.NANOSECONDS), timeout, connection,
                () -> false, null, () -> true, progress);
    }

    /** An operation over {@code length} bytes at {@code offset} of {@code buffer}; posted when subscribed. */
    public Op operation(SendOpcode opcode, RegisteredBuffer buffer, long offset, int length) {
        return new Op(this, opcode, buffer, offset, length, null);
    }

    /** An operation over a gather/scatter list (read when subscribed); posted when subscribed. */
    public Op operation(SendOpcode opcode, List<ScatterGatherElement> sges) {
        return new Op(this, opcode, null, 0, 0, sges);
    }

    /** The subscriber of {@code op} is set and has had its onSubscribe: queue it for a credit. */
    void submit(Op op) {
        Supplier<? extends Throwable> c = closed;
        if (c != null) {
            returnPrepaid(op);
            op.fail(c.get());
            return;
        }
        try {
            op.retain();  // held until the completion, whatever the subscriber does
        } catch (IllegalStateException e) {
            returnPrepaid(op);
            op.fail(e);
            return;
        }
        op.deadline = timeouts.deadline();
        op.phase = Op.WAITING;
        boolean deferred = false;
        if (head == null && drainWip.get() == 0) {  // nothing waits, nobody drains: the common case
            deferred = deferDrain.getAsBoolean();
            if (!deferred && drainWip.compareAndSet(0, 1)) {
                postDirectly(op);
                return;
            }
        }
        enqueue(op);
        timeouts.ensureArmed(op.deadline);
        if (op.isTerminated()) abandon(op);  // its subscriber cancelled while it was being queued
        if (!deferred) drain();  // a deferred one is drained at the batch's end
    }

    private void enqueue(Op op) {
        synchronized (lock) {
            link(op);
        }
    }

    /** Under the lock: {@code op} at the tail of the waiting queue. */
    private void link(Op op) {
        if (tail == null) head = op;
        else tail.next = op;
        tail = op;
        waitingCount++;
    }

    /**
     * The submitter found nothing waiting and took the drain (drainWip 0 to 1): its operation
     * takes a credit and is posted without passing through the waiting queue, one lock instead of
     * two and no drain pass (FIFO holds: nothing waited before it, and whoever queues meanwhile
     * finds the drain taken and is posted after it). Without a credit, closed, or abandoned by its
     * subscriber meanwhile, it goes the queue's way, and this thread drains as any drainer would.
     */
    private void postDirectly(Op op) {
        int slot = -1;
        posting = true;  // before the look at closed, as in drain()
        Supplier<? extends Throwable> c = closed;
        synchronized (lock) {
            // startPosting fails if the subscriber abandoned it; isTerminated: it cancelled before the
            // operation was WAITING, when abandoning it did nothing
            int credit;
            if (c == null && head == null && freeTop > 0 && !op.isTerminated() && (credit = takeCredit(op)) >= 0) {
                if (op.startPosting()) {
                    slot = freeSlots[--freeTop];
                    inFlight.set(slot, op);  // under the lock, so the sweep sees it here or in the queue
                } else {
                    returnCredit(credit);
                    link(op);
                }
            } else {
                link(op);
            }
        }
        timeouts.ensureArmed(op.deadline);
        if (slot < 0) {
            posting = false;
            if (op.isTerminated()) abandon(op);  // counted in drainWip: drained below
            drainPasses(1);
            return;
        }
        postNow(op, slot);  // clears posting
        int missed = drainWip.addAndGet(-1);
        if (missed == 0) return;
        // someone queued or abandoned meanwhile: this thread's one post is done if it is not the loop's
        if (away()) handHome(missed);
        else drainPasses(missed);
    }

    /** The subscriber is gone: if the operation still waits, it leaves the queue now, not when a credit reaches it. */
    void abandon(Op op) {
        if (op.abandonWaiting()) {
            op.release();  // never posted, and now never will be: the NIC never had these buffers
            returnPrepaid(op);
            purge = true;
            drain();
        }
    }

    /**
     * Posts waiting operations while credits last. One thread drains at a time (whoever finds the
     * work-in-progress counter at zero), so the poster needs no lock and only the drainer removes
     * operations from the queue. An operation moves to the in-flight table and off the queue in one
     * step under the lock, before its post (the completion can beat the post's return). What one
     * pass takes (up to the poster's chain length) is posted with one call, in FIFO order.
     */
    public void drain() {
        if (head == null && !purge && drainWip.get() == 0) return;  // nothing to post: not even a deferral
        if (deferDrain.getAsBoolean()) return;
        if (drainWip.getAndIncrement() != 0) return;
        drainPasses(1);
    }

    /** The drainer's passes, while drainWip says more was asked ({@code missed}: what this drainer owes it). */
    private void drainPasses(int missed) {
        // away from the loop: one chain, then what is left (or was asked for meanwhile) is the loop's
        boolean away = away();
        boolean left = false;
        do {
            if (purge) {
                purge = false;
                purgeAbandoned();
            }
            while (head != null) {  // racy, and safe: whoever queues after this look calls drain() and bumps drainWip
                int taken = 0;
                long bytes = 0;
                Op failedOnClose = null;
                // set before looking at closed, cleared only after the post: the closer sets closed,
                // then awaitNoPoster() reads posting, so one of the two sees the other
                posting = true;
                Supplier<? extends Throwable> c = closed;
                synchronized (lock) {
                    Op op;
                    while (taken < chainOps.length && (op = head) != null) {
                        if (op.isAbandoned()) {  // its abandoner released its buffers
                            unlinkHead();
                            continue;
                        }
                        if (c != null) {
                            unlinkHead();
                            failedOnClose = op;
                            break;
                        }
                        if (freeTop == 0) break;  // no credit
                        if (taken > 0 && op.length > chainBytes - bytes) break;  // the chain is full: op starts the next
                        int credit = takeCredit(op);
                        if (credit < 0) break;  // the peer has no receive for it: it waits, and all behind it (FIFO)
                        unlinkHead();
                        if (!op.startPosting()) {  // abandoned just now, and released (a prepaid credit returned) by its abandoner
                            returnCredit(credit);
                            continue;
                        }
                        int slot = freeSlots[--freeTop];
                        inFlight.set(slot, op);  // before the post; under the lock, so the sweep sees it here or in the queue
                        bytes += op.length;
                        chainOps[taken] = op;
                        chainSlots[taken++] = slot;
                    }
                }
                if (failedOnClose != null) {
                    posting = false;
                    if (failedOnClose.abandonWaiting()) {
                        failedOnClose.release();  // never posted: the NIC never had these buffers
                        returnPrepaid(failedOnClose);
                        failedOnClose.fail(c.get());
                    }
                    continue;
                }
                if (taken == 0) break;  // no credit, or nothing but abandoned operations
                if (taken == 1) postNow(chainOps[0], chainSlots[0]);
                else postChain(taken);
                for (int k = 0; k < taken; k++) chainOps[k] = null;
                if (away) {
                    left = head != null;
                    break;
                }
            }
            posting = false;
            missed = drainWip.addAndGet(-missed);
            if (away && (missed != 0 || left)) {
                handHome(missed);
                return;
            }
        } while (missed != 0);
    }

    /** Whether the calling thread is not the loop's (which keeps draining while there is more). */
    private boolean away() {
        return home != null && !atHome.getAsBoolean();
    }

    /**
     * A drainer away from the loop lets go of the drain entirely first (a later drain() then takes
     * it itself) and hands one to the loop: it starts after every request that found this drainer
     * holding it. {@code missed}: what the drainer still owes drainWip.
     */
    private void handHome(int missed) {
        while (missed != 0) missed = drainWip.addAndGet(-missed);
        home.execute(drainTask);
    }

    private void postChain(int count) {
        int postedUpTo;
        try {
            for (int k = 0; k < count; k++) poster.chain(chainOps[k], chainSlots[k], k);
            postedUpTo = poster.postChain(count, chainFailure);
        } catch (RuntimeException e) {
            chainFailure[0] = e;
            postedUpTo = 0;
        }
        posting = false;
        RuntimeException e = chainFailure[0];
        chainFailure[0] = null;
        for (int k = postedUpTo; k < count; k++) notPosted(chainOps[k], chainSlots[k], e);
    }

    /** Under the lock. */
    private void unlinkHead() {
        Op h = head;
        head = h.next;
        h.next = null;
        if (head == null) tail = null;
        waitingCount--;
    }

    private void purgeAbandoned() {
        synchronized (lock) {
            Op prev = null;
            for (Op op = head; op != null; ) {
                Op next = op.next;
                if (op.isAbandoned()) {  // its abandoner released its buffers
                    if (prev == null) head = next;
                    else prev.next = next;
                    if (tail == op) tail = prev;
                    op.next = null;
                    waitingCount--;
                } else {
                    prev = op;
                }
                op = next;
            }
        }
    }

    private void postNow(Op op, int slot) {
        try {
            poster.post(op, slot);
            posting = false;
        } catch (RuntimeException e) {
            posting = false;
            notPosted(op, slot, e);
        }
    }

    /** The provider refused {@code op}'s work request: its credit and buffers come back, and it fails alone. */
    private void notPosted(Op op, int slot, RuntimeException e) {
        inFlight.set(slot, null);
        returnSlot(slot);
        Credits cr = credits;
        if (cr != null && op.consumesReceive) cr.refund();  // taken by the drainer, or prepaid: the peer's receive is still free
        op.release();
        Supplier<? extends Throwable> c = closed;
        op.fail(c != null ? c.get() : e);  // a QP torn down under the post is the closure, not a verbs fault
    }

    /**
     * The poller's report: the work request in {@code slot} completed. Releases its buffers (the
     * NIC is done with them), signals its {@code Mono}, returns the credit to the next waiting post.
     *
     * @return the operation's error, or null if it succeeded (or the slot held nothing)
     */
    @Nullable RdmaOperationException complete(int slot, WorkCompletion wc) {
        return complete(slot, wc, null);
    }

    /**
     * {@link #complete(int, WorkCompletion)}, failing the operation with {@code error} when given
     * (a connection's first error, held until it could say why: {@link ConnectionCore}).
     */
    @Nullable RdmaOperationException complete(int slot, WorkCompletion wc, @Nullable RdmaOperationException error) {
        Op op = inFlight.getAndSet(slot, null);
        RdmaOperationException failed = null;
        if (op != null) {
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

    /**
     * From now on a message (an operation that consumes a receive of the peer) is posted only
     * against one of the peer's credits; set once, when the connection is established, before
     * anything is posted.
     */
    void credits(Credits peerCredits) {
        this.credits = peerCredits;
    }

    /** The peer takes large messages: SEND_WITH_IMM immediates with bits 31 and 30 set are jrdma's (rendezvous), refused to the application. */
    void reserveRendezvousImmediates() {
        this.rendezvousImmediates = true;
    }

    /**
     * The drainer's credit for {@code op}: 0 if it needs none or brought its own ({@link Op#prepaid()}),
     * 1 if one was taken now (to return if the operation is not posted after all), -1 if none is left.
     */
    private int takeCredit(Op op) {
        Credits cr = credits;
        if (cr == null || !op.consumesReceive || op.prepaid) return 0;
        return cr.tryTake() ? 1 : -1;
    }

    private void returnCredit(int taken) {
        if (taken > 0) credits.refund();
    }

    /** An operation that brought its own credit leaves unposted: by whoever abandoned it, once. */
    void returnPrepaid(Op op) {
        Credits cr = credits;
        if (op.prepaid && cr != null && op.consumesReceive) cr.refund();
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

    /**
     * After the QP is destroyed: operations whose completions never came give their buffers back
     * and fail, and the sweep is cancelled (nothing is left to time out; armed, it would keep the
     * destroyed connection reachable until the operation timeout, a connection's worth of heap per
     * connection closed in the last 30 s).
     */
    void failInFlight(Throwable error) {
        for (int slot = 0; slot < inFlight.length(); slot++) {
            Op op = inFlight.getAndSet(slot, null);
            if (op != null) {
                returnSlot(slot);
                op.release();
                op.fail(error);
            }
        }
        timeouts.cancelAll();
    }

    /** The completion opcode of what is posted in {@code slot}, or UNKNOWN if nothing is. */
    WcOpcode postedOpcode(int slot) {
        Op op = inFlight.get(slot);
        return op == null ? WcOpcode.UNKNOWN : completionOpcode(op.opcode);
    }

    int availableCredits() {
        synchronized (lock) {
            return freeTop;
        }
    }

    int waiting() {
        synchronized (lock) {
            return waitingCount;
        }
    }

    /** Work requests posted (or being posted) whose completions have not come: the credits taken. */
    int inFlight() {
        synchronized (lock) {
            return freeSlots.length - freeTop;
        }
    }

    private void returnSlot(int slot) {
        synchronized (lock) {
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
}
