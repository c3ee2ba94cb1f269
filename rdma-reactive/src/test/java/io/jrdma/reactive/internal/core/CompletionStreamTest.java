package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.WorkCompletion;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.BaseSubscriber;
import reactor.test.StepVerifier;
import reactor.test.subscriber.TestSubscriber;

/**
 * A connection's demand on a CQ the loop shares, without a device: the test is the loop (it offers
 * completions and runs the tasks the stream hands the loop), and "taken" is what the connection
 * would do with a completion (return its credit, release its buffers, signal its Mono).
 */
class CompletionStreamTest {
    private static final Duration WAIT = Duration.ofSeconds(5);

    private final ArrayDeque<Runnable> loopTasks = new ArrayDeque<>();
    private final List<Long> taken = new ArrayList<>();
    private final CompletionStream stream = new CompletionStream(loopTasks::add, wc -> taken.add(wc.wrId()));

    private static WorkCompletion wc(long id) {
        return new WorkCompletion(id, WcStatus.IBV_WC_SUCCESS, WcOpcode.RDMA_WRITE, 64, false, 0, 0x11, 0);
    }

    private void offer(long... ids) {
        for (long id : ids) stream.offer(wc(id));
    }

    /** What the loop does between polls. */
    private void runLoopTasks() {
        Runnable r;
        while ((r = loopTasks.poll()) != null) r.run();
    }

    @Test
    void withoutASubscriberEveryCompletionIsTakenAtOnce() {
        offer(1, 2, 3);
        assertEquals(List.of(1L, 2L, 3L), taken);
        assertEquals(0, stream.held());
    }

    @Test
    void aSubscriberWithoutDemandHoldsCompletionsAndEachRequestTakesAndEmitsOneInOrder() {
        TestSubscriber<WorkCompletion> s = TestSubscriber.builder().initialRequest(0).build();
        stream.flux().subscribe(s);
        offer(1, 2, 3);
        assertEquals(List.of(), taken, "no demand: nothing taken, so no credit comes back and posters wait");
        assertEquals(3, stream.held());

        s.request(1);
        runLoopTasks();
        assertEquals(List.of(1L), taken);
        assertEquals(List.of(1L), s.getReceivedOnNext().stream().map(WorkCompletion::wrId).toList());

        s.request(5);
        runLoopTasks();
        offer(4);
        assertEquals(List.of(1L, 2L, 3L, 4L), taken);
        assertEquals(List.of(1L, 2L, 3L, 4L), s.getReceivedOnNext().stream().map(WorkCompletion::wrId).toList());
        assertEquals(0, stream.held());
        s.cancel();
    }

    @Test
    void aCompletionIsNeverTakenBeforeOneThatArrivedEarlierWhenTheSubscriberLeaves() {
        TestSubscriber<WorkCompletion> s = TestSubscriber.builder().initialRequest(0).build();
        stream.flux().subscribe(s);
        offer(1, 2);
        s.cancel();
        offer(3);  // arrives before the loop ran the cancel's drain: must queue behind 1 and 2
        assertEquals(List.of(1L, 2L, 3L), taken, "held completions go first, in arrival order");
        runLoopTasks();
        assertEquals(List.of(1L, 2L, 3L), taken, "the cancel's drain finds nothing left");
        offer(4);
        assertEquals(List.of(1L, 2L, 3L, 4L), taken, "and then everything is taken at once again");
    }

    @Test
    void closingTakesWhatIsHeldWithoutEmittingWhatNobodyRequestedThenCompletes() {
        TestSubscriber<WorkCompletion> s = TestSubscriber.builder().initialRequest(1).build();
        stream.flux().subscribe(s);
        offer(1, 2, 3);
        assertEquals(List.of(1L), taken);
        stream.close();
        assertEquals(List.of(1L, 2L, 3L), taken, "closing takes everything held: their buffers and Monos must not wait for demand");
        offer(4);
        assertEquals(List.of(1L, 2L, 3L, 4L), taken, "and the flushes that follow as they come");
        assertEquals(List.of(1L), s.getReceivedOnNext().stream().map(WorkCompletion::wrId).toList(), "only what was requested is emitted");
        assertTrue(!s.isTerminated());
        stream.complete();
        assertTrue(s.isTerminatedComplete());
    }

    @Test
    void whileClosingRequestedCompletionsAreStillEmitted() {
        TestSubscriber<WorkCompletion> s = TestSubscriber.builder().initialRequest(0).build();
        stream.flux().subscribe(s);
        stream.close();
        s.request(2);
        runLoopTasks();
        offer(1, 2, 3);
        assertEquals(List.of(1L, 2L, 3L), taken);
        assertEquals(List.of(1L, 2L), s.getReceivedOnNext().stream().map(WorkCompletion::wrId).toList());
    }

    @Test
    void oneSubscriberAtATimeAndALateOneCompletesAtOnce() {
        Disposable first = stream.flux().subscribe();
        StepVerifier.create(stream.flux()).expectErrorMessage("completions() already has a subscriber").verify(WAIT);
        first.dispose();
        stream.complete();
        StepVerifier.create(stream.flux()).expectComplete().verify(WAIT);
    }

    @Test
    void manyCompletionsUnderUnboundedDemandAreEmittedInOrder() {
        List<Long> ids = LongStream.range(0, 1000).boxed().toList();
        TestSubscriber<WorkCompletion> s = TestSubscriber.create();
        stream.flux().subscribe(s);
        ids.forEach(this::offer);
        assertEquals(ids, taken);
        assertEquals(ids, s.getReceivedOnNext().stream().map(WorkCompletion::wrId).toList());
        assertEquals(0, stream.held());
    }

    /**
     * A request from another thread and a completion the loop holds for lack of demand meet at the
     * held count: the loop must publish it before it looks at the demand, or a request between its
     * look (no demand) and its count (nothing held, still) asks for no drain, and the completion
     * stays held with demand left: its credit never comes back. A "loop" thread offers the first
     * completion of one fresh stream after another while the test thread chases it, requesting one
     * from the stream being offered to; then every completion must have been emitted.
     */
    @Test
    void aCompletionHeldWhileItsRequestArrivesIsEmitted() throws Exception {
        int streams = 2_000;
        long until = System.nanoTime() + Duration.ofSeconds(2).toNanos();
        long offers = 0;
        while (System.nanoTime() < until) {
            ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
            CompletionStream[] shared = new CompletionStream[streams];
            List<BaseSubscriber<WorkCompletion>> subscribers = new ArrayList<>(streams);
            AtomicLong emitted = new AtomicLong();
            for (int j = 0; j < streams; j++) {
                shared[j] = new CompletionStream(tasks::add, wc -> { });
                BaseSubscriber<WorkCompletion> s = new BaseSubscriber<>() {
                    @Override
                    protected void hookOnSubscribe(Subscription subscription) {
                        // no demand yet
                    }

                    @Override
                    protected void hookOnNext(WorkCompletion wc) {
                        emitted.incrementAndGet();
                    }
                };
                shared[j].flux().subscribe(s);
                subscribers.add(s);
            }
            AtomicInteger offering = new AtomicInteger(-1);
            Thread loop = Thread.ofPlatform().name("loop").start(() -> {
                for (int j = 0; j < streams; j++) {
                    offering.set(j);
                    // the request lands around the offer's look at the demand: a varying delay sweeps the window
                    for (int k = j % 8; k > 0; k--) Thread.onSpinWait();
                    shared[j].offer(wc(j));
                }
            });
            boolean[] requested = new boolean[streams];
            for (int seen = -1; seen < streams - 1; ) {
                int j = offering.get();
                if (j == seen) {
                    Thread.onSpinWait();
                    continue;
                }
                seen = j;
                requested[j] = true;
                subscribers.get(j).request(1);
            }
            loop.join(WAIT.toMillis());
            for (int j = 0; j < streams; j++) if (!requested[j]) subscribers.get(j).request(1);
            Runnable r;
            while ((r = tasks.poll()) != null) r.run();  // the loop's turn: the drains the requests asked for
            int held = 0;
            for (CompletionStream c : shared) held += c.held();
            assertEquals(streams, emitted.get(), held + " completions were requested but stay held, after " + offers + " offers");
            offers += streams;
        }
        assertTrue(offers > 10_000, "the race was exercised: " + offers + " offers");
    }
}
