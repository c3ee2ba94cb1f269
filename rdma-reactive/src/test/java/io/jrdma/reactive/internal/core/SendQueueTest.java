package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.OperationTimeoutException;
import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.WorkRequestSubscription;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.VerbsException;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.RdmaOperationException.FlushedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import io.jrdma.reactive.memory.ScatterGatherElement;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The send queue's scheduling rules ({@link SendQueue}'s Javadoc): credits, timeouts, cancel and
 * failures, one operation at a time; chains in {@link SendQueueChainTest}, the timer's sweeps in
 * {@link SendQueueTimerTest}. On virtual time and without a device ({@link SendQueueHarness}).
 */
class SendQueueTest extends SendQueueHarness {
    @Test
    void noMoreThanDepthArePostedAndEachFreedCreditGoesToTheOldestWaitingPost() {
        SendQueue q = queue(2);
        RegisteredBuffer b = pool.tryAcquire();
        List<Op> ops = List.of(send(q, b), send(q, b), send(q, b), send(q, b));
        List<List<Object>> signals = ops.stream().map(this::subscribe).toList();

        assertEquals(ops.subList(0, 2), posted, "two credits: the first two are posted");
        assertEquals(2, q.waiting());
        assertEquals(0, q.availableCredits());
        assertEquals(5, b.refCount(), "the caller's reference and one per operation");

        q.complete(slots.get(1), wc(slots.get(1), WcStatus.IBV_WC_SUCCESS));
        assertEquals(ops.subList(0, 3), posted, "the freed credit posted the oldest waiting operation");
        assertEquals(slots.get(1), slots.get(2), "into the slot that came free");
        assertEquals(2, signals.get(1).size(), "the completed operation emitted its completion and completed");
        assertEquals(List.of(), signals.get(0));

        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));
        q.complete(slots.get(2), wc(slots.get(2), WcStatus.IBV_WC_SUCCESS));
        q.complete(slots.get(3), wc(slots.get(3), WcStatus.IBV_WC_SUCCESS));
        assertEquals(ops, posted);
        assertEquals(2, q.availableCredits());
        assertEquals(1, b.refCount(), "every operation gave its reference back with its completion");
    }

    @Test
    void aPostWaitingForACreditPastTheTimeoutFailsUnpostedAndReleasesItsBufferAtOnce() {
        SendQueue q = queue(1);
        RegisteredBuffer holder = pool.tryAcquire();
        RegisteredBuffer waiter = pool.tryAcquire();
        subscribe(send(q, holder));  // takes the only credit and never completes in time

        StepVerifier.withVirtualTime(() -> send(q, waiter), () -> clock, Long.MAX_VALUE)
                .expectSubscription()
                .then(() -> assertEquals(2, waiter.refCount(), "the waiting post holds its buffer"))
                .expectNoEvent(TIMEOUT.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorSatisfies(e -> {
                    OperationTimeoutException t = assertInstanceOf(OperationTimeoutException.class, e);
                    assertFalse(t.wasPosted(), t.getMessage());
                    assertEquals(SendOpcode.SEND, t.opcode());
                    // the lab once saw 2 here on another thread: the error was signalled before the release
                    assertEquals(1, waiter.refCount(), "released before the timeout is signalled");
                })
                .verify(Duration.ofSeconds(5));
        assertEquals(1, waiter.refCount(), "released when it timed out, not when a credit frees up");
        assertEquals(0, q.waiting());

        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));
        assertEquals(1, posted.size(), "the timed-out post was never posted");
        assertEquals(1, q.availableCredits());
    }

    @Test
    void aPostedOperationPastTheTimeoutFailsButKeepsItsBufferAndCreditUntilItsCompletion() {
        SendQueue q = queue(1);
        RegisteredBuffer b = pool.tryAcquire();
        List<Object> signals = new CopyOnWriteArrayList<>();

        StepVerifier.withVirtualTime(() -> send(q, b).doOnEach(signals::add), () -> clock, Long.MAX_VALUE)
                .expectSubscription()
                .then(() -> assertEquals(1, posted.size()))
                .thenAwait(TIMEOUT)
                .expectErrorSatisfies(e -> assertTrue(assertInstanceOf(OperationTimeoutException.class, e).wasPosted()))
                .verify(Duration.ofSeconds(5));
        assertEquals(2, b.refCount(), "the NIC may still read the buffer: the WR keeps its reference");
        assertEquals(0, q.availableCredits(), "and its send-queue slot");
        assertEquals(1, q.inFlight());

        clock.advanceTimeBy(Duration.ofHours(1));
        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));  // the completion comes after all
        assertEquals(1, b.refCount(), "the late completion released it");
        assertEquals(1, q.availableCredits());
        assertEquals(1, signals.size(), "the Mono terminated once, with the timeout");
    }

    @Test
    void aCompletionInTimeCancelsTheTimeout() {
        SendQueue q = queue(1);
        RegisteredBuffer b = pool.tryAcquire();
        StepVerifier.withVirtualTime(() -> send(q, b), () -> clock, Long.MAX_VALUE)
                .expectSubscription()
                .thenAwait(TIMEOUT.minusSeconds(1))
                .then(() -> q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS)))
                .assertNext(wc -> assertEquals(WcStatus.IBV_WC_SUCCESS, wc.status()))
                .expectComplete()
                .verify(Duration.ofSeconds(5));
        clock.advanceTimeBy(Duration.ofHours(1));
        assertEquals(1, b.refCount());
    }

    @Test
    void cancellingAWaitingPostReleasesAtOnceButCancellingAPostedOneWaitsForItsCompletion() {
        SendQueue q = queue(1);
        RegisteredBuffer first = pool.tryAcquire();
        RegisteredBuffer second = pool.tryAcquire();
        Disposable postedOp = send(q, first).subscribe();
        Disposable waitingOp = send(q, second).subscribe();

        waitingOp.dispose();
        assertEquals(0, q.waiting(), "the cancelled post left the queue without waiting for a credit");
        assertEquals(1, second.refCount());

        postedOp.dispose();
        assertEquals(2, first.refCount(), "a cancelled operation the NIC has keeps its buffer");
        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));
        assertEquals(1, first.refCount(), "until its completion");
        assertEquals(1, posted.size(), "the cancelled waiting post was never posted");
    }

    @Test
    void anOperationIsWithdrawableUntilPostedAndNotAfterItsSubscriberLeftOrItTerminated() {
        SendQueue q = queue(1);
        RegisteredBuffer b = pool.tryAcquire();
        Recorder posted = new Recorder(Long.MAX_VALUE), waiting = new Recorder(Long.MAX_VALUE), cancelled = new Recorder(Long.MAX_VALUE);
        send(q, b).subscribe(posted);
        send(q, b).subscribe(waiting);
        send(q, b).subscribe(cancelled);
        WorkRequestSubscription first = (WorkRequestSubscription) posted.subscription;
        WorkRequestSubscription second = (WorkRequestSubscription) waiting.subscription;
        WorkRequestSubscription third = (WorkRequestSubscription) cancelled.subscription;

        assertFalse(first.isWithdrawable(), "posted within subscribe (a credit was free): a cancel cannot withdraw it");
        assertTrue(second.isWithdrawable(), "waiting for a credit: a cancel withdraws it");
        third.cancel();
        assertFalse(third.isWithdrawable(), "cancelled: nothing left to withdraw");

        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));  // its credit posts the second
        assertFalse(second.isWithdrawable(), "posted once a credit came");
        q.complete(slots.get(1), wc(slots.get(1), WcStatus.IBV_WC_SUCCESS));
        assertFalse(first.isWithdrawable());
        assertFalse(second.isWithdrawable());
        assertEquals(2, this.posted.size(), "the cancelled one was never posted");
    }

    @Test
    void aFailedPostFailsOnlyItsOwnOperationAndReturnsItsCreditAndBuffer() {
        List<Op> accepted = new ArrayList<>();
        RegisteredBuffer bad = pool.tryAcquire();
        RegisteredBuffer good = pool.tryAcquire();
        SendQueue q = SendQueue.forTest(1, (op, slot) -> {
            if (op.buffer == bad) throw new VerbsException("ibv_post_send(QP 0x11)", 12);
            accepted.add(op);
        }, clock, TIMEOUT, "QP 0x11");

        StepVerifier.create(send(q, bad)).expectError(VerbsException.class).verify(Duration.ofSeconds(5));
        assertEquals(1, bad.refCount());
        assertEquals(1, q.availableCredits());
        subscribe(send(q, good));
        assertEquals(1, accepted.size(), "the queue kept posting");
    }

    @Test
    void closingFailsWaitingPostsAndFlushedCompletionsCarryTheReason() {
        SendQueue q = queue(1);
        RegisteredBuffer b = pool.tryAcquire();
        Mono<WorkCompletion> inFlight = send(q, b).cache();
        Mono<WorkCompletion> waiting = send(q, b).cache();
        subscriptions.add(inFlight.subscribe(v -> { }, e -> { }));
        subscriptions.add(waiting.subscribe(v -> { }, e -> { }));
        ConnectionException.Closed reason = new ConnectionException.Closed("QP 0x11: the peer disconnected");

        q.close(() -> reason, reason);
        q.drain();
        StepVerifier.create(waiting).expectErrorSatisfies(e -> assertSame(reason, e)).verify(Duration.ofSeconds(5));
        assertEquals(2, b.refCount(), "only the posted operation still holds the buffer");

        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_WR_FLUSH_ERR));
        StepVerifier.create(inFlight).expectErrorSatisfies(e -> {
            FlushedException f = assertInstanceOf(FlushedException.class, e);
            assertEquals(WcOpcode.SEND, f.opcode(), "the posted opcode, not the flush's");
            assertSame(reason, f.getCause());
        }).verify(Duration.ofSeconds(5));
        assertEquals(1, b.refCount());
        StepVerifier.create(send(q, b)).expectErrorSatisfies(e -> assertSame(reason, e)).verify(Duration.ofSeconds(5));
        assertEquals(1, posted.size());
    }

    /** Records signals and keeps its Subscription, to call it late. */
    private static final class Recorder implements CoreSubscriber<WorkCompletion> {
        final List<Object> signals = new CopyOnWriteArrayList<>();
        final long initialRequest;
        volatile Subscription subscription;

        Recorder(long initialRequest) {
            this.initialRequest = initialRequest;
        }

        @Override
        public void onSubscribe(Subscription s) {
            subscription = s;
            if (initialRequest != 0) s.request(initialRequest);
        }

        @Override
        public void onNext(WorkCompletion wc) {
            signals.add(wc);
        }

        @Override
        public void onError(Throwable t) {
            signals.add(t);
        }

        @Override
        public void onComplete() {
            signals.add("complete");
        }
    }

    @Test
    void aCompletionThatArrivesBeforeTheRequestWaitsForItAndIsEmittedOnce() {
        SendQueue q = queue(1);
        RegisteredBuffer b = pool.tryAcquire();
        Recorder r = new Recorder(0);
        send(q, b).subscribe(r);
        assertEquals(1, posted.size(), "posted on subscription, not on request");

        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));
        assertEquals(List.of(), r.signals, "no demand: nothing emitted");
        assertEquals(1, b.refCount(), "but the completion was taken: buffer and credit are back");
        assertEquals(1, q.availableCredits());

        r.subscription.request(1);
        r.subscription.request(1);
        assertEquals(2, r.signals.size(), "the completion, then complete: " + r.signals);
        assertEquals("complete", r.signals.get(1));
    }

    @Test
    void eachSubscriptionToTheSameMonoPostsItsOwnWorkRequest() {
        SendQueue q = queue(2);
        RegisteredBuffer b = pool.tryAcquire();
        Mono<WorkCompletion> write = send(q, b);
        List<Object> first = subscribe(write);
        List<Object> second = subscribe(write);
        assertEquals(2, posted.size());
        assertEquals(3, b.refCount());

        q.complete(slots.get(1), wc(slots.get(1), WcStatus.IBV_WC_SUCCESS));
        assertEquals(List.of(), first, "the first subscription's work request is still in flight");
        assertEquals(2, second.size());
        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));
        assertEquals(2, first.size());
        assertEquals(1, b.refCount());
    }

    /**
     * The ABA of reused operation state: a subscriber that already saw its operation terminate may
     * still call request or cancel on its Subscription (an operator cancelling upstream after the
     * value, a coroutine cancelled as it resumed). That must not reach whatever operation comes
     * next: not a later subscription of the same Mono, not an operation waiting for a credit.
     */
    @Test
    void aLateCancelThroughATerminatedOperationsSubscriptionNeverReachesALaterOperation() {
        SendQueue q = queue(1);
        RegisteredBuffer b = pool.tryAcquire();
        Mono<WorkCompletion> write = send(q, b);
        Recorder first = new Recorder(1);
        write.subscribe(first);
        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));
        assertEquals(2, first.signals.size(), "the first operation terminated");

        Recorder again = new Recorder(1);
        write.subscribe(again);  // the same Mono, subscribed again: posted into the same slot
        Recorder waiting = new Recorder(1);
        send(q, b).subscribe(waiting);
        assertEquals(2, posted.size());
        assertEquals(1, q.waiting());

        first.subscription.cancel();
        first.subscription.request(1);
        first.subscription.request(0);
        assertEquals(2, first.signals.size(), "nothing more for the terminated operation");
        assertEquals(1, q.waiting(), "the waiting operation still waits");
        assertEquals(3, b.refCount(), "both later operations hold their buffers");

        q.complete(slots.get(1), wc(slots.get(1), WcStatus.IBV_WC_SUCCESS));
        assertEquals(2, again.signals.size(), "the later subscription completed normally: " + again.signals);
        assertInstanceOf(WorkCompletion.class, again.signals.get(0));
        assertEquals(3, posted.size(), "the waiting operation got the credit");
        q.complete(slots.get(2), wc(slots.get(2), WcStatus.IBV_WC_SUCCESS));
        assertInstanceOf(WorkCompletion.class, waiting.signals.get(0));
        assertEquals(1, b.refCount());
    }

    @Test
    void aRequestThatIsNotPositiveFailsAWaitingOperationWhichGivesItsBufferBackUnposted() {
        SendQueue q = queue(1);
        RegisteredBuffer holder = pool.tryAcquire();
        RegisteredBuffer waiter = pool.tryAcquire();
        subscribe(send(q, holder));
        Recorder r = new Recorder(0);
        send(q, waiter).subscribe(r);
        assertEquals(2, waiter.refCount());

        r.subscription.request(0);
        assertInstanceOf(IllegalArgumentException.class, r.signals.get(0), "rule 3.9");
        assertEquals(1, waiter.refCount());
        assertEquals(0, q.waiting());
        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));
        assertEquals(1, posted.size(), "never posted");
    }

    @Test
    void aSubscriberThatCancelsInOnSubscribeNeitherRetainsNorPosts() {
        SendQueue q = queue(1);
        RegisteredBuffer b = pool.tryAcquire();
        send(q, b).subscribe(new BaseSubscriber<WorkCompletion>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                s.cancel();
            }
        });
        assertEquals(List.of(), posted);
        assertEquals(1, b.refCount());
        assertEquals(0, q.waiting());
        assertEquals(1, q.availableCredits());
    }

    @Test
    void anArgumentTheNicWouldRefuseFailsTheSubscriberAndPostsNothing() {
        SendQueue q = new SendQueue(2, 1, (op, slot) -> posted.add(op), clock, () -> clock.now(TimeUnit.NANOSECONDS),
                TIMEOUT, "QP 0x11", () -> false, null, () -> true, null);
        RegisteredBuffer b = pool.tryAcquire();
        StepVerifier.create(q.operation(SendOpcode.SEND, b, 60, 8)).expectError(IndexOutOfBoundsException.class).verify(Duration.ofSeconds(5));
        StepVerifier.create(q.operation(SendOpcode.SEND, List.of(ScatterGatherElement.of(b, 0, 8), ScatterGatherElement.of(b, 8, 8))))
                .expectErrorSatisfies(e -> assertTrue(e.getMessage().contains("maxScatterGather 1"), e.getMessage()))
                .verify(Duration.ofSeconds(5));
        StepVerifier.create(q.operation(SendOpcode.RDMA_READ, List.of())).expectError(IllegalArgumentException.class).verify(Duration.ofSeconds(5));
        assertEquals(List.of(), posted);
        assertEquals(1, b.refCount());
    }

    @Test
    void aBufferThePosterRefusesFailsTheOperationBeforeItIsQueuedAndHoldsNothing() {
        RegisteredBuffer foreign = pool.tryAcquire();
        RegisteredBuffer own = pool.tryAcquire();
        IllegalArgumentException refusal = new IllegalArgumentException("registered in another protection domain");
        SendQueue q = new SendQueue(1, 2, new SendQueue.Poster() {
            @Override
            public void post(Op op, int slot) {
                posted.add(op);
                slots.add(slot);
            }

            @Override
            public RuntimeException refuses(RegisteredBuffer b) {
                return b == foreign ? refusal : null;
            }
        }, clock, () -> clock.now(TimeUnit.NANOSECONDS), TIMEOUT, "QP 0x11", () -> false, null, () -> true, null);

        StepVerifier.create(send(q, foreign)).expectErrorSatisfies(e -> assertSame(refusal, e)).verify(Duration.ofSeconds(5));
        StepVerifier.create(q.operation(SendOpcode.SEND, List.of(ScatterGatherElement.of(own, 0, 8), ScatterGatherElement.of(foreign, 0, 8))))
                .expectErrorSatisfies(e -> assertSame(refusal, e, "any element's buffer"))
                .verify(Duration.ofSeconds(5));
        assertEquals(List.of(), posted);
        assertEquals(1, foreign.refCount(), "never retained");
        assertEquals(1, own.refCount());
        assertEquals(1, q.availableCredits());
        subscribe(send(q, own));
        assertEquals(1, posted.size(), "a buffer of its own domain is posted");
    }

    @Test
    void aRemoteErrorTakenWhileClosingHasTheClosureAsItsCauseAndAHeldErrorIsTheOneReported() {
        SendQueue q = queue(2);
        RegisteredBuffer b = pool.tryAcquire();
        Mono<WorkCompletion> closing = send(q, b).cache();
        Mono<WorkCompletion> held = send(q, b).cache();
        subscriptions.add(closing.subscribe(v -> { }, e -> { }));
        subscriptions.add(held.subscribe(v -> { }, e -> { }));
        ConnectionException.Closed reason = new ConnectionException.Closed("QP 0x11: the peer disconnected", true);

        q.close(() -> reason, reason);
        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_REM_ACCESS_ERR));
        StepVerifier.create(closing).expectErrorSatisfies(e -> {
            RdmaOperationException.RemoteAccessException r = assertInstanceOf(RdmaOperationException.RemoteAccessException.class, e);
            assertSame(reason, r.getCause());
            assertTrue(r.getMessage().contains("the peer disconnected"), r.getMessage());
        }).verify(Duration.ofSeconds(5));

        RdmaOperationException given = RdmaOperationException.of(wc(slots.get(1), WcStatus.IBV_WC_RETRY_EXC_ERR), WcOpcode.SEND, reason);
        assertSame(given, q.complete(slots.get(1), wc(slots.get(1), WcStatus.IBV_WC_RETRY_EXC_ERR), given));
        StepVerifier.create(held).expectErrorSatisfies(e -> assertSame(given, e)).verify(Duration.ofSeconds(5));
        assertEquals(1, b.refCount(), "both gave their buffer back");
        assertEquals(2, q.availableCredits());
    }
}
