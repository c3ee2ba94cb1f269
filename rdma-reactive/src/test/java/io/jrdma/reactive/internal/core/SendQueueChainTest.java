package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.VerbsException;
import io.jrdma.ffm.WcStatus;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.BaseSubscriber;

/**
 * The send queue's chains: what the loop defers during a poll batch goes out after it as one
 * chain, in FIFO order, within the provider's limits (work requests and bytes per post call), and
 * a chain the provider refuses in part fails only what it refused. On virtual time and without a
 * device ({@link SendQueueHarness}).
 */
class SendQueueChainTest extends SendQueueHarness {
    /** Chains of up to four (the NIC's view: what each post call carried), refusing from {@code refuseFrom} on. */
    private class ChainingPoster implements SendQueue.Poster {
        final List<List<Op>> chains = new CopyOnWriteArrayList<>();
        private final List<Op> pending = new ArrayList<>();
        private final List<Integer> pendingSlots = new ArrayList<>();
        int refuseFrom = Integer.MAX_VALUE;
        long maxChainBytes = Long.MAX_VALUE;

        @Override
        public void post(Op op, int slot) {
            chains.add(List.of(op));
            posted.add(op);
            slots.add(slot);
        }

        @Override
        public int maxChain() {
            return 4;
        }

        @Override
        public long maxChainBytes() {
            return maxChainBytes;
        }

        @Override
        public void chain(Op op, int slot, int index) {
            assertEquals(pending.size(), index, "chained in order");
            pending.add(op);
            pendingSlots.add(slot);
        }

        @Override
        public int postChain(int count, RuntimeException[] failure) {
            int accepted = Math.min(count, refuseFrom);
            chains.add(List.copyOf(pending.subList(0, accepted)));
            posted.addAll(pending.subList(0, accepted));
            slots.addAll(pendingSlots.subList(0, accepted));
            pending.clear();
            pendingSlots.clear();
            if (accepted < count) failure[0] = new VerbsException("ibv_post_send(QP 0x11)", 22);
            return accepted;
        }
    }

    @Test
    void creditsFreedWhileTheLoopDispatchesABatchArePostedAfterItAsOneChainInFifoOrder() {
        AtomicBoolean batch = new AtomicBoolean();
        ChainingPoster nic = new ChainingPoster();
        SendQueue q = new SendQueue(2, 4, nic, clock, () -> clock.now(TimeUnit.NANOSECONDS),
                TIMEOUT, "QP 0x11", batch::get, null, () -> true, null);
        RegisteredBuffer b = pool.tryAcquire();
        List<Op> ops = List.of(send(q, b), send(q, b), send(q, b), send(q, b), send(q, b));
        List<List<Object>> signals = ops.stream().map(this::subscribe).toList();
        assertEquals(List.of(List.of(ops.get(0)), List.of(ops.get(1))), nic.chains, "outside a batch: posted one by one");
        assertEquals(3, q.waiting());

        batch.set(true);  // the loop dispatches a poll batch: both completions, each freeing a credit
        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));
        q.complete(slots.get(1), wc(slots.get(1), WcStatus.IBV_WC_SUCCESS));
        assertEquals(2, signals.get(0).size(), "the Monos are signalled in the batch");
        assertEquals(2, nic.chains.size(), "but nothing is posted during it");
        assertEquals(2, q.availableCredits());

        batch.set(false);
        q.drain();  // the loop's afterBatch
        assertEquals(List.of(ops.get(2), ops.get(3)), nic.chains.get(2), "one chain, oldest first, as many as credits");
        assertEquals(1, q.waiting());
        q.complete(slots.get(2), wc(slots.get(2), WcStatus.IBV_WC_SUCCESS));
        assertEquals(List.of(ops.get(4)), nic.chains.get(3));
        q.complete(slots.get(3), wc(slots.get(3), WcStatus.IBV_WC_SUCCESS));
        q.complete(slots.get(4), wc(slots.get(4), WcStatus.IBV_WC_SUCCESS));
        assertEquals(1, b.refCount());
        signals.forEach(sig -> assertEquals(2, sig.size(), "every operation completed once: " + sig));
    }

    @Test
    void aPostStartedAtABatchsLastCompletionGoesAtOnceBehindThoseDeferredEarlierInOneChainNeverAheadOfThem() {
        // the loop's deferral: on while it dispatches a batch, off for the batch's last completion
        AtomicBoolean deferring = new AtomicBoolean();
        ChainingPoster nic = new ChainingPoster();
        SendQueue q = new SendQueue(2, 4, nic, clock, () -> clock.now(TimeUnit.NANOSECONDS),
                TIMEOUT, "QP 0x11", deferring::get, null, () -> true, null);
        RegisteredBuffer b = pool.tryAcquire();
        List<Op> ops = List.of(send(q, b), send(q, b), send(q, b), send(q, b), send(q, b));
        List<List<Object>> signals = new ArrayList<>();
        for (int k = 0; k < 4; k++) signals.add(subscribe(ops.get(k)));
        assertEquals(List.of(List.of(ops.get(0)), List.of(ops.get(1))), nic.chains, "nothing waited: each posted directly");

        deferring.set(true);  // the batch's first completion: its credit's post is deferred
        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));
        assertEquals(2, nic.chains.size(), "deferred");
        assertEquals(1, q.availableCredits());

        deferring.set(false);  // its last completion frees the other credit, and its subscriber posts once more
        q.complete(slots.get(1), wc(slots.get(1), WcStatus.IBV_WC_SUCCESS));
        assertEquals(List.of(ops.get(2), ops.get(3)), nic.chains.get(2), "the waiting ones as one chain, at once");
        signals.add(subscribe(ops.get(4)));
        assertEquals(3, nic.chains.size(), "no credit: it waits, behind those that waited before it");
        assertEquals(1, q.waiting());
        q.drain();  // the loop's afterBatch: nothing left for it
        assertEquals(3, nic.chains.size());

        q.complete(slots.get(2), wc(slots.get(2), WcStatus.IBV_WC_SUCCESS));
        assertEquals(List.of(ops.get(4)), nic.chains.get(3));
        q.complete(slots.get(3), wc(slots.get(3), WcStatus.IBV_WC_SUCCESS));
        q.complete(slots.get(4), wc(slots.get(4), WcStatus.IBV_WC_SUCCESS));
        assertEquals(ops, posted, "FIFO");
        assertEquals(1, b.refCount());
        signals.forEach(sig -> assertEquals(2, sig.size(), "every operation completed once: " + sig));
    }

    @Test
    void aDirectPostNeverJumpsAheadOfOperationsWaitingForTheDrainTheLoopDeferred() {
        AtomicBoolean deferring = new AtomicBoolean();
        ChainingPoster nic = new ChainingPoster();
        SendQueue q = new SendQueue(1, 4, nic, clock, () -> clock.now(TimeUnit.NANOSECONDS),
                TIMEOUT, "QP 0x11", deferring::get, null, () -> true, null);
        RegisteredBuffer b = pool.tryAcquire();
        List<Op> ops = List.of(send(q, b), send(q, b), send(q, b));
        ops.subList(0, 2).forEach(this::subscribe);
        deferring.set(true);
        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));  // a credit is free, ops[1] waits for the batch's end
        deferring.set(false);
        // a post from another thread (or the loop outside a batch) finds the credit free and nobody draining
        subscribe(ops.get(2));
        assertEquals(List.of(ops.get(0), ops.get(1)), posted, "the waiting one took the credit, not the newcomer");
        assertEquals(1, q.waiting());
        q.complete(slots.get(1), wc(slots.get(1), WcStatus.IBV_WC_SUCCESS));
        assertEquals(ops, posted);
        q.complete(slots.get(2), wc(slots.get(2), WcStatus.IBV_WC_SUCCESS));
        assertEquals(1, b.refCount());
    }

    @Test
    void anOperationCancelledWhileItIsSubmittedIsNeverPostedAndGivesItsBufferBack() {
        // the cancel lands between the subscription's look at it and the queue's: here, at the deadline's clock read
        List<BaseSubscriber<WorkCompletion>> cancelOnClockRead = new CopyOnWriteArrayList<>();
        SendQueue q = new SendQueue(2, 4, (op, slot) -> posted.add(op), clock, () -> {
            if (!cancelOnClockRead.isEmpty()) cancelOnClockRead.removeFirst().cancel();
            return clock.now(TimeUnit.NANOSECONDS);
        }, TIMEOUT, "QP 0x11", () -> false, null, () -> true, null);
        RegisteredBuffer b = pool.tryAcquire();
        List<Object> signals = new CopyOnWriteArrayList<>();
        BaseSubscriber<WorkCompletion> leaving = new BaseSubscriber<>() {
            @Override
            protected void hookOnNext(WorkCompletion value) {
                signals.add(value);
            }

            @Override
            protected void hookOnError(Throwable e) {
                signals.add(e);
            }
        };
        cancelOnClockRead.add(leaving);
        send(q, b).subscribe(leaving);
        assertEquals(List.of(), posted, "never posted");
        assertEquals(1, b.refCount(), "its buffer back");
        assertEquals(0, q.waiting());
        assertEquals(2, q.availableCredits());
        assertEquals(List.of(), signals, "a cancelled subscriber hears nothing");
        subscribe(send(q, b));
        assertEquals(1, posted.size(), "the queue goes on");
    }

    @Test
    void aThreadAwayFromTheLoopPostsOneChainAndHandsWhatCameMeanwhileToTheLoop() {
        // an application thread is inside ibv_post_send with its operation when the loop, dispatching
        // completions, queues five more; it must not go on posting the loop's operations
        AtomicBoolean onLoop = new AtomicBoolean();
        List<Runnable> loopTasks = new ArrayList<>();
        List<Op> fromLoop = new ArrayList<>();
        List<List<Object>> signals = new ArrayList<>();
        ChainingPoster nic = new ChainingPoster() {
            @Override
            public void post(Op op, int slot) {
                super.post(op, slot);
                if (chains.size() == 2) {
                    onLoop.set(true);
                    fromLoop.forEach(o -> signals.add(subscribe(o)));
                    onLoop.set(false);
                }
            }
        };
        SendQueue q = new SendQueue(8, 4, nic, clock, () -> clock.now(TimeUnit.NANOSECONDS), TIMEOUT, "QP 0x11", () -> false,
                loopTasks::add, onLoop::get, null);
        RegisteredBuffer b = pool.tryAcquire();
        Op alone = send(q, b);
        Op own = send(q, b);
        for (int k = 0; k < 5; k++) fromLoop.add(send(q, b));

        signals.add(subscribe(alone));
        assertEquals(List.of(List.of(alone)), nic.chains, "posted by the application's thread");
        assertEquals(List.of(), loopTasks, "nothing came meanwhile: nothing for the loop");

        signals.add(subscribe(own));
        assertEquals(List.of(List.of(alone), List.of(own)), nic.chains, "the application's thread posted its own and no more");
        assertEquals(5, q.waiting(), "the loop's operations wait");
        assertEquals(1, loopTasks.size(), "the drain the loop asked for is handed to it");

        onLoop.set(true);
        loopTasks.removeFirst().run();
        onLoop.set(false);
        assertEquals(List.of(List.of(alone), List.of(own), fromLoop.subList(0, 4), fromLoop.subList(4, 5)), nic.chains,
                "the loop posts them, in order, and keeps the drain while there is more");
        assertEquals(List.of(), loopTasks);
        for (int slot : slots) q.complete(slot, wc(slot, WcStatus.IBV_WC_SUCCESS));
        signals.forEach(sig -> assertEquals(2, sig.size(), "every operation completed once: " + sig));
        assertEquals(1, b.refCount());
    }

    @Test
    void aChainCarriesNoMoreBytesThanTheProviderTakesPastItsFirstWorkRequestAndTheLoopPostsTheRestAsFurtherChainsAtOnce() {
        AtomicBoolean batch = new AtomicBoolean(true);
        ChainingPoster nic = new ChainingPoster();
        nic.maxChainBytes = 32;  // the length limit (4) would take all five below but the last
        SendQueue q = new SendQueue(8, 4, nic, clock, () -> clock.now(TimeUnit.NANOSECONDS),
                TIMEOUT, "QP 0x11", batch::get, null, () -> true, null);
        RegisteredBuffer b = pool.tryAcquire();
        List<Op> ops = List.of(q.operation(SendOpcode.SEND, b, 0, 16), q.operation(SendOpcode.SEND, b, 0, 16),
                q.operation(SendOpcode.SEND, b, 0, 8), q.operation(SendOpcode.SEND, b, 0, 64), q.operation(SendOpcode.SEND, b, 0, 0),
                q.operation(SendOpcode.SEND, b, 0, 32));
        List<List<Object>> signals = ops.stream().map(this::subscribe).toList();  // queued during a poll batch
        assertEquals(List.of(), nic.chains, "deferred");

        batch.set(false);
        q.drain();  // the loop's afterBatch
        assertEquals(List.of(ops.subList(0, 2), List.of(ops.get(2)), List.of(ops.get(3)), ops.subList(4, 6)), nic.chains,
                "16 + 16 fill one chain; 8 cannot take 64 along; 64 goes alone, being first; 0 + 32 fit; all in FIFO order,"
                        + " in one drain");
        assertEquals(0, q.waiting());
        for (int slot : slots) q.complete(slot, wc(slot, WcStatus.IBV_WC_SUCCESS));
        signals.forEach(sig -> assertEquals(2, sig.size(), "every operation completed once: " + sig));
        assertEquals(1, b.refCount());
    }

    @Test
    void aChainTheProviderRefusesFromOneWorkRequestOnFailsOnlyThoseWhichGiveBackCreditsAndBuffers() {
        AtomicBoolean batch = new AtomicBoolean(true);
        ChainingPoster nic = new ChainingPoster();
        nic.refuseFrom = 2;  // ibv_post_send's bad_wr: the third
        SendQueue q = new SendQueue(4, 4, nic, clock, () -> clock.now(TimeUnit.NANOSECONDS),
                TIMEOUT, "QP 0x11", batch::get, null, () -> true, null);
        List<RegisteredBuffer> buffers = List.of(pool.tryAcquire(), pool.tryAcquire(), pool.tryAcquire(), pool.tryAcquire());
        List<List<Object>> signals = buffers.stream().map(b -> subscribe(send(q, b))).toList();
        assertEquals(List.of(), nic.chains, "deferred");

        batch.set(false);
        q.drain();
        assertEquals(1, nic.chains.size());
        assertEquals(2, nic.chains.get(0).size(), "the provider took the first two");
        for (int k = 2; k < 4; k++) {
            assertInstanceOf(VerbsException.class, signals.get(k).get(0), "refused: " + signals.get(k));
            assertEquals(1, buffers.get(k).refCount(), "a refused work request gives its buffer back");
        }
        assertEquals(2, q.availableCredits(), "and its credit");
        assertEquals(List.of(), signals.get(0));
        assertEquals(2, buffers.get(0).refCount(), "a posted one keeps its buffer until its completion");

        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));
        q.complete(slots.get(1), wc(slots.get(1), WcStatus.IBV_WC_SUCCESS));
        assertEquals(2, signals.get(1).size());
        assertEquals(1, buffers.get(1).refCount());
        assertEquals(4, q.availableCredits());
    }
}
