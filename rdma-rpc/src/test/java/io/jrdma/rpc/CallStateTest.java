package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * CallState's rules (its Javadoc) on virtual time, without a device: an attempt whose I/O is a
 * record of what it gave back and what its caller was told, its timeout swept by a
 * {@link Deadlines} on a {@link VirtualTimeScheduler}. Every race the client's terminal signal
 * lost before (issue 14) is played in both orders: exactly one terminal signal, and what the
 * attempt held given back exactly once.
 */
@Timeout(30)
class CallStateTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final Deadlines deadlines = new Deadlines(clock, () -> clock.now(TimeUnit.NANOSECONDS));

    @AfterEach
    void tearDown() {
        clock.dispose();
    }

    /** An attempt with no I/O, its ends mapped to the caller's signals as PendingCall maps them. */
    private final class Attempt extends CallState<String> implements Deadlines.Tracked {
        final List<String> told = new CopyOnWriteArrayList<>();
        final List<String> givenBack = new CopyOnWriteArrayList<>();
        final List<String> sent = new CopyOnWriteArrayList<>();
        final AtomicInteger late = new AtomicInteger();
        final long deadline = clock.now(TimeUnit.NANOSECONDS) + TIMEOUT.toNanos();
        boolean bufferAlive = true;
        private int slot;

        @Override
        void giveBack(boolean credit, long offset, long bytes, CreditGate.@Nullable Waiter cw, RangeAllocator.@Nullable Waiter sw) {
            deadlines.untrack(this);
            givenBack.add("credit " + credit + ", staging " + (offset < 0 ? "none" : offset + "+" + bytes));
        }

        @Override
        void began() {
        }

        @Override
        boolean stage(long offset) {
            return bufferAlive;
        }

        @Override
        void send(String b) {
            sent.add(b);
        }

        @Override
        public void expire() {
            if (timedOut()) told.add("Timeout");
        }

        void answer() {
            switch (answered()) {
                case TELL -> told.add("answer");
                case LATE -> late.incrementAndGet();
                case OVER -> { }
            }
        }

        void connectionLost() {
            if (ended()) told.add("ConnectionLost");
        }

        void sendFailed() {
            if (ended()) told.add("ConnectionLost: the SEND failed");
        }

        @Override
        public long deadlineNanos() {
            return deadline;
        }

        @Override
        public int deadlineSlot() {
            return slot;
        }

        @Override
        public void deadlineSlot(int slot) {
            this.slot = slot;
        }
    }

    /** An attempt begun, credited, staged at offset 0 (64 bytes) and its SEND posted. */
    private Attempt sent() {
        Attempt a = new Attempt();
        deadlines.track(a);
        assertTrue(a.begin());
        assertTrue(a.credited());
        assertEquals(CallState.Staged.READY, a.staged(0, 64));
        a.post("request");
        assertEquals(List.of("request"), a.sent);
        return a;
    }

    private void pastTheDeadline() {
        clock.advanceTimeBy(TIMEOUT.plus(Deadlines.TICK));
    }

    private static void assertGivenBackOnce(Attempt a) {
        assertEquals(List.of("credit true, staging 0+64"), a.givenBack, "the credit and the staging range go back once");
    }

    @Test
    void anAnswerThenTheTimeoutTellsTheAnswerOnly() {
        Attempt a = sent();
        a.answer();
        a.expire();  // the sweep took it before the answer untracked it
        pastTheDeadline();
        assertEquals(List.of("answer"), a.told);
        assertGivenBackOnce(a);
    }

    @Test
    void theTimeoutThenTheAnswerTellsTheTimeoutAndTheAnswerIsLate() {
        Attempt a = sent();
        pastTheDeadline();
        assertEquals(List.of("Timeout"), a.told);
        assertEquals(List.of(), a.givenBack, "sent: the server may still READ or WRITE the staging, kept until the answer");
        a.answer();
        assertEquals(List.of("Timeout"), a.told);
        assertEquals(1, a.late.get());
        assertGivenBackOnce(a);
    }

    @Test
    void theTimeoutThenTheConnectionLostTellsTheTimeoutOnly() {
        Attempt a = sent();
        pastTheDeadline();
        a.connectionLost();
        assertEquals(List.of("Timeout"), a.told);
        assertGivenBackOnce(a);
    }

    @Test
    void theConnectionLostThenTheTimeoutTellsTheLossOnly() {
        Attempt a = sent();
        a.connectionLost();
        a.expire();
        pastTheDeadline();
        assertEquals(List.of("ConnectionLost"), a.told);
        assertGivenBackOnce(a);
    }

    @Test
    void aSendFailingAfterTheTimeoutTellsTheTimeoutOnly() {
        Attempt a = sent();
        pastTheDeadline();
        a.sendFailed();
        a.answer();
        assertEquals(List.of("Timeout"), a.told, "issue 14: the SEND's failure was a second terminal signal");
        assertGivenBackOnce(a);
    }

    @Test
    void aCancelThenTheTimeoutTellsNothingAndKeepsTheStagingUntilTheAnswer() {
        Attempt a = sent();
        a.cancelled();
        a.expire();
        assertEquals(List.of(), a.told);
        assertEquals(List.of(), a.givenBack);
        a.answer();
        assertEquals(1, a.late.get());
        assertEquals(List.of(), a.told);
        assertGivenBackOnce(a);
    }

    @Test
    void aTimeoutBeforeTheSendGivesBackAtOnceAndTheSendNeverGoes() {
        Attempt a = new Attempt();
        deadlines.track(a);
        assertTrue(a.begin());
        assertTrue(a.credited());
        pastTheDeadline();
        assertEquals(List.of("Timeout"), a.told);
        assertEquals(List.of("credit true, staging none"), a.givenBack);
        assertEquals(CallState.Staged.OVER, a.staged(0, 64), "a range granted now is the caller's to free");
        a.post("request");
        assertEquals(List.of(), a.sent);
        a.connectionLost();
        a.answer();
        assertEquals(List.of("Timeout"), a.told);
        assertEquals(List.of("credit true, staging none"), a.givenBack);
    }

    @Test
    void whatIsGrantedAfterTheEndIsTheGrantersToGiveBack() {
        Attempt a = new Attempt();
        a.cancelled();  // before the caller's first request
        assertFalse(a.begin());
        assertFalse(a.credited(), "a credit granted now goes back at once");
        assertEquals(List.of("credit false, staging none"), a.givenBack);
        assertEquals(List.of(), a.told);
    }

    @Test
    void anExposedBufferFreedByTheClosingConnectionFailsTheAttemptHoldingOnlyItsCredit() {
        Attempt a = new Attempt();
        assertTrue(a.begin());
        assertTrue(a.credited());
        a.bufferAlive = false;
        assertEquals(CallState.Staged.BUFFER_GONE, a.staged(0, 64));
        a.connectionLost();
        a.expire();
        assertEquals(List.of("ConnectionLost"), a.told);
        assertEquals(List.of("credit true, staging none"), a.givenBack);
    }

    /** The same ends on real threads at once, many times: one signal and one give-back, whoever wins. */
    @Test
    void racingEndsTellOnceAndGiveBackOnce() throws Exception {
        for (int i = 0; i < 500; i++) {
            Attempt a = sent();
            CyclicBarrier start = new CyclicBarrier(3);
            Runnable[] ends = {a::expire, (i & 1) == 0 ? a::answer : a::connectionLost, a::sendFailed};
            Thread[] threads = new Thread[ends.length];
            for (int t = 0; t < ends.length; t++) {
                Runnable end = ends[t];
                threads[t] = Thread.ofPlatform().start(() -> {
                    try {
                        start.await();
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                    end.run();
                });
            }
            for (Thread t : threads) t.join();
            assertEquals(1, a.told.size(), "round " + i + ": " + a.told);
            assertGivenBackOnce(a);
        }
    }
}
