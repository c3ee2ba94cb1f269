package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.ScatterGatherElement;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.publisher.TestPublisher;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * {@link MessageStream}'s rules on virtual time, without a device: a real {@link SendQueue} whose
 * poster records the posts, real {@link Credits} whose grants the test makes, real pool buffers
 * whose reference counts show who holds them.
 */
@Timeout(value = 20, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)  // a waiter that re-registers itself must not spin forever
class MessageStreamTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Arena arena = Arena.ofShared();
    private final BufferPool pool = MemoryInternals.get().pool(arena.allocate(64 * 64, 64), 0x11, 0x22, 64, 64, () -> { });
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final List<Op> posted = new CopyOnWriteArrayList<>();
    private final List<Integer> slots = new CopyOnWriteArrayList<>();
    private final SendQueue queue = SendQueue.forTest(8, (op, slot) -> {
        posted.add(op);
        slots.add(slot);
    }, clock, TIMEOUT, "QP 0x11");

    @AfterEach
    void tearDown() {
        clock.dispose();
        arena.close();
    }

    private MessageStream.Outlet outlet(@Nullable Credits credits) {
        return outlet(credits, Integer.MAX_VALUE);
    }

    /** The queue's outlet, {@code eagerLimit} its largest eager message (no rendezvous slot ever). */
    private MessageStream.Outlet outlet(@Nullable Credits credits, int eagerLimit) {
        if (credits != null) queue.credits(credits);
        return new MessageStream.Outlet() {
            @Override
            public int maxInFlight() {
                return 8;
            }

            @Override
            public @Nullable Credits credits() {
                return credits;
            }

            @Override
            public void awaitCredit(Runnable wake) {
                credits.awaitCredit(wake);  // the connection's own waiting list, as CreditLink uses it
            }

            @Override
            public Op operation(ScatterGatherElement m) {
                return queue.operation(SendOpcode.SEND, m.buffer(), m.offset(), m.length());
            }

            @Override
            public int eagerLimit() {
                return eagerLimit;
            }
        };
    }

    /** What CreditLink does when a grant arrives: the count, the send queue's drain, the waiters. */
    private void grant(Credits credits, int cumulative) {
        credits.controlArrived(Credits.CONTROL | cumulative);
        queue.drain();
        credits.wakeWaiters();
    }

    /** Completes what is posted now (what those completions let post waits for the next call). */
    private void completeAll() {
        List<Integer> now = List.copyOf(slots);
        slots.removeAll(now);
        for (int slot : now) queue.complete(slot, new WorkCompletion(slot, WcStatus.IBV_WC_SUCCESS, WcOpcode.SEND, 8, false, 0, 0x11, 0));
    }

    private Flux<ScatterGatherElement> messages(int n, AtomicLong requested) {
        return Flux.range(0, n).doOnRequest(requested::addAndGet).map(i -> ScatterGatherElement.of(pool.tryAcquire(), 0, 8));
    }

    @Test
    void upstreamIsRequestedOnlyWhatThePeersCreditsAllowAndMoreWhenItGrantsMore() {
        Credits credits = new Credits(16, 3);
        AtomicLong requested = new AtomicLong();
        List<Object> result = new CopyOnWriteArrayList<>();
        Disposable d = MessageStream.of(messages(10, requested), outlet(credits)).subscribe(v -> { }, result::add, () -> result.add("done"));

        assertEquals(3, requested.get(), "three credits: three requested");
        assertEquals(3, posted.size());
        completeAll();
        assertEquals(3, requested.get(), "completions free send slots, not the peer's receives");
        assertEquals(0, queue.waiting(), "nothing waits in the send queue, where its timeout would run");

        clock.advanceTimeBy(TIMEOUT.multipliedBy(3));  // the consumer pauses: nothing times out, nothing is requested
        assertEquals(List.of(), result);

        grant(credits, 3 + 5);
        assertEquals(8, requested.get());
        assertEquals(8, posted.size());
        completeAll();
        grant(credits, 8 + 100);
        completeAll();
        assertEquals(10, posted.size());
        assertEquals(List.of("done"), result, "completes once upstream did and every message completed");
        assertEquals(98, credits.available(), "credits of elements never requested stay with the connection");
        assertEquals(64, pool.available(), "every element's buffer went back");
        d.dispose();
    }

    /**
     * The lab (an RSocket connection closed by its peer): the stream waited for a credit, the
     * connection closed, and CreditLink, closing, ran the wait at once, and again on every look:
     * the drain spun on the rdma_cm event thread for good. It fails with the closed error instead.
     */
    @Test
    void aStreamWaitingForACreditWhenTheConnectionClosesFailsWithTheClosedErrorAndDoesNotSpin() {
        Credits credits = new Credits(16, 1);
        AtomicReference<Throwable> closed = new AtomicReference<>();
        MessageStream.Outlet open = outlet(credits);
        MessageStream.Outlet outlet = new MessageStream.Outlet() {
            @Override
            public int maxInFlight() {
                return open.maxInFlight();
            }

            @Override
            public @Nullable Credits credits() {
                return credits;
            }

            @Override
            public void awaitCredit(Runnable wake) {  // as CreditLink: at once when closing
                if (closed.get() != null) wake.run();
                else credits.awaitCredit(wake);
            }

            @Override
            public @Nullable Throwable closed() {
                return closed.get();
            }

            @Override
            public Op operation(ScatterGatherElement m) {
                return open.operation(m);
            }
        };
        TestPublisher<ScatterGatherElement> source = TestPublisher.create();  // like RSocket's frames: never completes
        List<Object> result = new CopyOnWriteArrayList<>();
        MessageStream.of(source, outlet).subscribe(v -> { }, result::add, () -> result.add("done"));
        source.next(ScatterGatherElement.of(pool.tryAcquire(), 0, 8));
        assertEquals(1, posted.size(), "one credit, one message");
        completeAll();

        IllegalStateException error = new IllegalStateException("the connection closed");
        closed.set(error);
        credits.wakeWaiters();  // CreditLink.closing()
        assertEquals(List.of(error), result);
        source.assertCancelled();
        assertEquals(0, credits.available(), "its one credit went with the one message; none was taken for more");
        assertEquals(64, pool.available());
    }

    @Test
    void withoutCreditsTheSendSlotsBoundTheStream() {
        AtomicLong requested = new AtomicLong();
        StepVerifier.create(MessageStream.of(messages(20, requested), outlet(null)))
                .then(() -> assertEquals(8, requested.get(), "eight send slots"))
                .then(this::completeAll)
                .then(() -> assertEquals(16, requested.get()))
                .then(this::completeAll)
                .then(this::completeAll)
                .expectComplete()
                .verify(Duration.ofSeconds(5));
        assertEquals(20, posted.size());
    }

    @Test
    void cancellingStopsUpstreamAndGivesBackTheCreditsOfElementsThatNeverCame() {
        Credits credits = new Credits(16, 6);
        TestPublisher<ScatterGatherElement> source = TestPublisher.create();
        Disposable d = MessageStream.of(source, outlet(credits)).subscribe();
        source.assertMinRequested(6);
        source.next(ScatterGatherElement.of(pool.tryAcquire(), 0, 8), ScatterGatherElement.of(pool.tryAcquire(), 0, 8));
        assertEquals(0, credits.available());
        d.dispose();
        source.assertCancelled();
        assertEquals(4, credits.available(), "the four requested and never sent");
        completeAll();
        assertEquals(64, pool.available());
    }

    @Test
    void aFailedMessageFailsTheStreamAndCancelsUpstream() {
        TestPublisher<ScatterGatherElement> source = TestPublisher.create();
        StepVerifier.create(MessageStream.of(source, outlet(null)))
                .then(() -> source.next(ScatterGatherElement.of(pool.tryAcquire(), 0, 8)))
                .then(() -> queue.complete(slots.getFirst(), new WorkCompletion(slots.getFirst(), WcStatus.IBV_WC_REM_ACCESS_ERR,
                        WcOpcode.SEND, 0, false, 0, 0x11, 0)))
                .expectErrorSatisfies(e -> assertTrue(e.getMessage().contains("REM_ACCESS"), e.getMessage()))
                .verify(Duration.ofSeconds(5));
        source.assertCancelled();
        assertEquals(64, pool.available());
    }

    @Test
    void anUpstreamErrorFailsTheStreamAndTheElementsThatCameAreStillSent() {
        Credits credits = new Credits(16, 4);
        TestPublisher<ScatterGatherElement> source = TestPublisher.create();
        StepVerifier.create(MessageStream.of(source, outlet(credits)))
                .then(() -> source.next(ScatterGatherElement.of(pool.tryAcquire(), 0, 8)))
                .then(() -> source.error(new IllegalStateException("producer broke")))
                .expectErrorMessage("producer broke")
                .verify(Duration.ofSeconds(5));
        assertEquals(1, posted.size());
        assertEquals(3, credits.available(), "the three requested and never sent came back");
        completeAll();
        assertEquals(64, pool.available());
    }

    /**
     * An outlet with an eager limit of 32 bytes and one rendezvous slot: a rendezvous records
     * itself in {@code order} (as the queue's posts do, by the element's offset) and completes when
     * the test completes {@code read}, which frees the slot.
     */
    private MessageStream.Outlet largeOutlet(List<String> order, List<Sinks.Empty<Void>> read, AtomicBoolean slotTaken,
                                             AtomicReference<Runnable> slotWaiter) {
        return new MessageStream.Outlet() {
            @Override
            public int maxInFlight() {
                return 8;
            }

            @Override
            public @Nullable Credits credits() {
                return null;
            }

            @Override
            public void awaitCredit(Runnable wake) {
                wake.run();
            }

            @Override
            public Op operation(ScatterGatherElement m) {
                order.add("S" + m.offset());
                return queue.operation(SendOpcode.SEND, m.buffer(), m.offset(), m.length());
            }

            @Override
            public Op operation(List<ScatterGatherElement> gather) {
                order.add("G" + String.join(",", gather.stream().map(e -> String.valueOf(e.offset())).toList()));
                return queue.operation(SendOpcode.SEND, gather);
            }

            @Override
            public int eagerLimit() {
                return 32;
            }

            @Override
            public int tryTakeSlot() {
                return slotTaken.compareAndSet(false, true) ? 0 : -1;
            }

            @Override
            public void awaitSlot(Runnable wake) {
                slotWaiter.set(wake);
            }

            @Override
            public Mono<WorkCompletion> rendezvous(ScatterGatherElement m, int slot) {
                order.add("R" + m.offset());
                m.buffer().retain();
                Sinks.Empty<Void> done = Sinks.empty();
                read.add(done);
                return done.asMono().then(Mono.<WorkCompletion>empty()).doFinally(x -> {
                    m.buffer().release();
                    slotTaken.set(false);
                    Runnable w = slotWaiter.getAndSet(null);
                    if (w != null) w.run();
                });
            }
        };
    }

    @Test
    void aLargeElementWaitsForARendezvousSlotAndTheElementsAfterItWaitBehindIt() {
        List<String> order = new CopyOnWriteArrayList<>();
        List<Sinks.Empty<Void>> read = new CopyOnWriteArrayList<>();
        AtomicBoolean slotTaken = new AtomicBoolean();
        AtomicReference<Runnable> slotWaiter = new AtomicReference<>();
        int[] sizes = {8, 64, 8, 64, 8};
        Flux<ScatterGatherElement> elements = Flux.range(0, sizes.length).map(i -> ScatterGatherElement.of(pool.tryAcquire(), i, sizes[i] - i));
        List<Object> result = new CopyOnWriteArrayList<>();
        MessageStream.of(elements, largeOutlet(order, read, slotTaken, slotWaiter)).subscribe(v -> { }, result::add, () -> result.add("done"));

        assertEquals(List.of("S0", "R1", "S2"), order, "the second large one has no slot: it and the one after it wait");
        completeAll();
        assertEquals(List.of(), result);
        read.getFirst().tryEmitEmpty();  // the peer has read the first: its slot is free
        assertEquals(List.of("S0", "R1", "S2", "R3", "S4"), order, "in order once the slot came free");
        completeAll();
        assertEquals(List.of(), result, "the stream waits for the last rendezvous");
        read.get(1).tryEmitEmpty();
        assertEquals(List.of("done"), result);
        assertEquals(64, pool.available(), "every element's buffer went back");
    }

    @Test
    void aGatherIsOneSendOfItsSlicesAGatherOfOneLargeSliceGoesByRendezvousOneOfSeveralFailsTheStream() {
        List<String> order = new CopyOnWriteArrayList<>();
        List<Sinks.Empty<Void>> read = new CopyOnWriteArrayList<>();
        AtomicBoolean slotTaken = new AtomicBoolean();
        AtomicReference<Runnable> slotWaiter = new AtomicReference<>();
        TestPublisher<List<ScatterGatherElement>> source = TestPublisher.create();
        List<Object> result = new CopyOnWriteArrayList<>();
        new MessageStream<>(source, MessageStream.GATHER, largeOutlet(order, read, slotTaken, slotWaiter))
                .subscribe(v -> { }, result::add, () -> result.add("done"));
        source.next(List.of(ScatterGatherElement.of(pool.tryAcquire(), 0, 8), ScatterGatherElement.of(pool.tryAcquire(), 1, 24)));
        source.next(List.of(ScatterGatherElement.of(pool.tryAcquire(), 2, 8)));
        source.next(List.of(ScatterGatherElement.of(pool.tryAcquire(), 3, 40)));
        assertEquals(List.of("G0,1", "S2", "R3"), order, "32 bytes in two slices: one SEND; 40 in one: by rendezvous");
        assertEquals(2, posted.getFirst().sgeCount(), "one work request of two slices");
        assertEquals(60, pool.available(), "each slice held by its operation until it completes");

        source.next(List.of(ScatterGatherElement.of(pool.tryAcquire(), 4, 20), ScatterGatherElement.of(pool.tryAcquire(), 5, 20)));
        assertEquals(1, result.size());
        assertTrue(result.getFirst() instanceof IllegalArgumentException e && e.getMessage().contains("40 bytes"), result.toString());
        source.assertCancelled();
        assertEquals(List.of("G0,1", "S2", "R3"), order, "the gather of 40 bytes in two slices was never posted");
        assertEquals(60, pool.available(), "and its slices went back");
        completeAll();
        read.getFirst().tryEmitEmpty();
        assertEquals(64, pool.available());
    }

    @Test
    void aGatherRefusedForItsSizeGivesItsCreditBack() {
        Credits credits = new Credits(16, 2);
        MessageStream.Outlet outlet = outlet(credits, 32);
        TestPublisher<List<ScatterGatherElement>> source = TestPublisher.create();
        List<Object> result = new CopyOnWriteArrayList<>();
        new MessageStream<>(source, MessageStream.GATHER, outlet).subscribe(v -> { }, result::add, () -> result.add("done"));
        source.assertMinRequested(2);
        assertEquals(0, credits.available());
        source.next(List.of(ScatterGatherElement.of(pool.tryAcquire(), 0, 30), ScatterGatherElement.of(pool.tryAcquire(), 0, 30)));
        assertTrue(result.getFirst() instanceof IllegalArgumentException, result.toString());
        assertEquals(2, credits.available(), "the refused message's credit and the one never used");
        assertEquals(64, pool.available());
        assertEquals(List.of(), posted);
    }

    @Test
    void cancellingReleasesWhatWaitsForARendezvousSlot() {
        List<String> order = new CopyOnWriteArrayList<>();
        List<Sinks.Empty<Void>> read = new CopyOnWriteArrayList<>();
        AtomicBoolean slotTaken = new AtomicBoolean();
        AtomicReference<Runnable> slotWaiter = new AtomicReference<>();
        Flux<ScatterGatherElement> elements = Flux.range(0, 4).map(i -> ScatterGatherElement.of(pool.tryAcquire(), i, 40));
        Disposable d = MessageStream.of(elements, largeOutlet(order, read, slotTaken, slotWaiter)).subscribe();
        assertEquals(List.of("R0"), order);
        assertEquals(60, pool.available(), "one read by the peer, three parked");
        d.dispose();
        assertEquals(63, pool.available(), "the parked ones went back at the cancel; the one being read is held until read");
        read.getFirst().tryEmitEmpty();
        assertEquals(64, pool.available());
    }

    /**
     * A message that fails while upstream completes on another thread: the stream fails with the
     * message's error. Before the rule, the message's subscriber counted it done before failing the
     * stream, and a drain on upstream's thread between the two completed it (the error dropped).
     */
    @Test
    void aMessageThatFailsAsUpstreamCompletesFailsTheStreamNeverCompletesIt() throws Exception {
        java.util.concurrent.ExecutorService other = java.util.concurrent.Executors.newSingleThreadExecutor();
        try {
            for (int round = 0; round < 2_000; round++) {
                posted.clear();
                slots.clear();
                TestPublisher<ScatterGatherElement> upstream = TestPublisher.create();
                AtomicReference<Object> outcome = new AtomicReference<>();
                MessageStream.of(upstream, outlet(null)).subscribe(v -> { }, outcome::set, () -> outcome.set("completed"));
                upstream.next(ScatterGatherElement.of(pool.tryAcquire(), 0, 8));
                int slot = slots.getFirst();
                java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
                java.util.concurrent.Future<?> failing = other.submit(() -> {
                    start.await();
                    return queue.complete(slot, new WorkCompletion(slot, WcStatus.IBV_WC_REM_ACCESS_ERR, WcOpcode.SEND, 0, false, 0, 0x11, 1));
                });
                start.await();
                upstream.complete();
                failing.get();
                assertTrue(outcome.get() instanceof Throwable, "round " + round + ": the stream ended with " + outcome.get());
            }
        } finally {
            other.shutdownNow();
        }
    }
}
