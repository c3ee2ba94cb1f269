package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.WorkCompletion;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * The rules of a remote error held for the peer's departure, on virtual time and without a
 * device: the loop is a queue of tasks the test runs, the target records what the held
 * completions became.
 */
class HeldErrorsTest {
    private static final Duration WAIT = HeldErrors.DEPARTURE_WAIT;

    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final Queue<Runnable> loop = new ArrayDeque<>();
    /** What the target was told, in order: "holding", "first <wr_id> <meanwhile>", "next <wr_id>". */
    private final List<String> told = new ArrayList<>();
    private final List<@Nullable Throwable> meanwhiles = new ArrayList<>();
    private @Nullable Throwable closing;
    private final HeldErrors held = new HeldErrors(loop::add, clock, new HeldErrors.Target() {
        @Override
        public @Nullable Throwable closing() {
            return closing;
        }

        @Override
        public void holding() {
            told.add("holding");
        }

        @Override
        public void first(WorkCompletion wc, @Nullable Throwable meanwhile) {
            told.add("first " + wc.wrId());
            meanwhiles.add(meanwhile);
        }

        @Override
        public void next(WorkCompletion wc) {
            told.add("next " + wc.wrId());
        }
    });

    @AfterEach
    void tearDown() {
        clock.dispose();
    }

    private static WorkCompletion wc(long wrId, WcStatus status) {
        return new WorkCompletion(wrId, status, status == WcStatus.IBV_WC_SUCCESS ? WcOpcode.RDMA_READ : WcOpcode.UNKNOWN, 8, false, 0, 0x11, 0);
    }

    /** Runs what was handed to the loop, as the loop thread would. */
    private void runLoop() {
        for (Runnable task; (task = loop.poll()) != null; ) task.run();
    }

    @Test
    void aRemoteErrorIsHeldUntilTheDepartureIsReportedAndThenNamesIt() {
        assertTrue(held.hold(wc(1, WcStatus.IBV_WC_REM_ACCESS_ERR)));
        assertTrue(held.isHolding());
        clock.advanceTimeBy(WAIT.minusMillis(1));
        runLoop();
        assertEquals(List.of("holding"), told, "nothing is released before the departure or the wait");

        ConnectionException.Closed gone = new ConnectionException.Closed("the peer disconnected", true);
        assertTrue(held.departed(gone), "a held error takes the departure");
        runLoop();
        assertEquals(List.of("holding", "first 1"), told);
        assertSame(gone, meanwhiles.getFirst(), "the first held error names the departure");
        assertFalse(held.isHolding());
    }

    @Test
    void aRemoteErrorIsReleasedWhenTheWaitPassesWithoutADeparture() {
        assertTrue(held.hold(wc(1, WcStatus.IBV_WC_RETRY_EXC_ERR)));
        clock.advanceTimeBy(WAIT.minusMillis(1));
        runLoop();
        assertEquals(List.of("holding"), told);
        clock.advanceTimeBy(Duration.ofMillis(1));
        runLoop();
        assertEquals(List.of("holding", "first 1"), told);
        assertNull(meanwhiles.getFirst(), "no departure was reported: the error is reported as it is");
    }

    @Test
    void laterCompletionsAreHeldInOrderBehindTheFirst() {
        assertTrue(held.hold(wc(3, WcStatus.IBV_WC_REM_OP_ERR)));
        assertTrue(held.hold(wc(1, WcStatus.IBV_WC_WR_FLUSH_ERR)), "a flush behind it is held");
        assertTrue(held.hold(wc(2, WcStatus.IBV_WC_SUCCESS)), "so is a success behind it");
        assertTrue(held.hold(wc(0, WcStatus.IBV_WC_REM_ACCESS_ERR)), "and a second remote error, which begins nothing");
        clock.advanceTimeBy(WAIT);
        runLoop();
        assertEquals(List.of("holding", "first 3", "next 1", "next 2", "next 0"), told);
    }

    @Test
    void theHoldIsReleasedOnceWhenTheDepartureAndTheWaitBothCome() {
        held.hold(wc(1, WcStatus.IBV_WC_REM_INV_REQ_ERR));
        held.hold(wc(2, WcStatus.IBV_WC_WR_FLUSH_ERR));
        assertTrue(held.departed(new ConnectionException.Closed("socket EOF", true)));
        runLoop();
        clock.advanceTimeBy(WAIT);
        runLoop();
        assertEquals(List.of("holding", "first 1", "next 2"), told);
        assertFalse(held.departed(new ConnectionException.Closed("late", true)), "once released, a departure is the caller's to close with");
        assertFalse(held.hold(wc(3, WcStatus.IBV_WC_SUCCESS)), "and completions go on as usual");
    }

    @Test
    void onlyAFailedCompletionAPeerCanCauseOnAnOpenConnectionBeginsTheHold() {
        assertFalse(held.hold(wc(1, WcStatus.IBV_WC_SUCCESS)));
        assertFalse(held.hold(wc(2, WcStatus.IBV_WC_WR_FLUSH_ERR)));
        assertFalse(held.hold(wc(3, WcStatus.IBV_WC_LOC_PROT_ERR)), "a local error is this side's own");
        closing = new ConnectionException.Closed("closed locally");
        assertFalse(held.hold(wc(4, WcStatus.IBV_WC_REM_ACCESS_ERR)), "a closing connection reports the error at once");
        assertFalse(held.isHolding());
        assertFalse(held.departed(new ConnectionException.Closed("gone", true)), "nothing held takes no departure");
        assertEquals(List.of(), told);
        assertTrue(loop.isEmpty());
    }

    @Test
    void aCloseThatRacesTheHoldReleasesItAtOnceNamingTheClose() {
        Throwable cause = new ConnectionException.Closed("the peer disconnected", true);
        HeldErrors racing = new HeldErrors(loop::add, clock, new HeldErrors.Target() {
            @Override
            public @Nullable Throwable closing() {
                return told.isEmpty() ? null : cause;  // the close begins while the hold begins
            }

            @Override
            public void holding() {
                told.add("holding");
            }

            @Override
            public void first(WorkCompletion wc, @Nullable Throwable meanwhile) {
                told.add("first " + wc.wrId());
                meanwhiles.add(meanwhile);
            }

            @Override
            public void next(WorkCompletion wc) {
                told.add("next " + wc.wrId());
            }
        });
        assertTrue(racing.hold(wc(1, WcStatus.IBV_WC_REM_ACCESS_ERR)));
        runLoop();
        assertEquals(List.of("holding", "first 1"), told, "released without waiting");
        assertSame(cause, meanwhiles.getFirst());
    }

    @Test
    void withoutATimerTheErrorIsReleasedAtOnce() {
        clock.dispose();
        assertTrue(held.hold(wc(1, WcStatus.IBV_WC_REM_ACCESS_ERR)));
        runLoop();
        assertEquals(List.of("holding", "first 1"), told);
    }
}
