package io.jrdma.reactive.internal.setup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The rules of {@link TcpSteps}' Javadoc on virtual time: one timeout, when it is due, naming the step it expired in. */
class TcpStepsTest {
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final TcpSteps steps = new TcpSteps();
    private final AtomicReference<ConnectionException.Timeout> timedOut = new AtomicReference<>();
    private final AtomicReference<ConnectionException.Timeout> ended = new AtomicReference<>();
    /** The selector thread's queue: its tasks run when the test says. */
    private final Queue<Runnable> selector = new ArrayDeque<>();

    @Test
    void theTimeoutComesWhenDueAndNamesTheStepAndTheHelloBytesThatCame() {
        steps.phase = TcpSteps.Phase.CONNECTING;
        steps.arm(clock, Duration.ofSeconds(2), "connecting to 10.77.0.2:7471 over TCP", "the server's", timedOut::set,
                selector::add, ended::set);
        steps.phase = TcpSteps.Phase.HELLO;
        steps.received = 58;
        steps.helloBytes = 58 + 1 + 32;  // a server's hello with its proof
        clock.advanceTimeBy(Duration.ofMillis(1999));
        assertNull(timedOut.get());
        clock.advanceTimeBy(Duration.ofMillis(1));
        assertEquals("connecting to 10.77.0.2:7471 over TCP did not finish within the connect timeout of 2 s: it waited for the"
                + " server's hello (58 of 91 bytes came)", timedOut.get().getMessage());
        assertNull(ended.get(), "the setup ends on the selector thread, not the timer's");
        selector.remove().run();
        assertSame(timedOut.get(), ended.get());
    }

    @Test
    void aTimerThatFiresAsTheSetupGoesLiveLeavesTheConnectionAlone() {
        steps.phase = TcpSteps.Phase.READY;
        steps.arm(clock, Duration.ofSeconds(10), "accepting 10.77.0.1:45871 on 10.77.0.2:36769", "the client's", timedOut::set,
                selector::add, ended::set);
        clock.advanceTimeBy(Duration.ofSeconds(10));  // it fired: its end is queued behind the client's ready
        steps.phase = TcpSteps.Phase.LIVE;            // the selector reads the ready first and hands the connection out
        steps.stop();
        selector.remove().run();
        assertNull(ended.get(), "a connection handed out is not closed by its setup's timer");
        assertTrue(selector.isEmpty());
    }

    @Test
    void aServersTimeoutWaitsForTheClientsSteps() {
        steps.phase = TcpSteps.Phase.REJECTED;
        steps.arm(clock, Duration.ofMillis(1500), "accepting 10.77.0.1:40000 on 10.77.0.2:7471", "the client's", timedOut::set,
                selector::add, ended::set);
        clock.advanceTimeBy(Duration.ofMillis(1500));
        assertEquals("accepting 10.77.0.1:40000 on 10.77.0.2:7471 did not finish within the connect timeout of 1.5 s: it waited for"
                + " the client to read the reject and close", timedOut.get().getMessage());
        assertEquals("the client's ready", withPhase(TcpSteps.Phase.READY).awaiting("the client's"));
        assertEquals("its queue pair to be created (the TCP connection was up)", withPhase(TcpSteps.Phase.QUEUE_PAIR).awaiting("the server's"));
    }

    @Test
    void aStoppedTimerNeverFiresAndTheClientIsToldOnce() {
        steps.phase = TcpSteps.Phase.READY;
        steps.arm(clock, Duration.ofSeconds(1), "connecting to 10.77.0.2:7471 over TCP", "the server's", timedOut::set,
                selector::add, ended::set);
        steps.stop();
        clock.advanceTimeBy(Duration.ofSeconds(5));
        assertNull(timedOut.get());
        assertFalse(steps.told());
        assertTrue(steps.tell());
        assertFalse(steps.tell(), "the timer's signal and the connection's cannot both reach the subscriber");
        assertTrue(steps.told());
    }

    private static TcpSteps withPhase(TcpSteps.Phase phase) {
        TcpSteps s = new TcpSteps();
        s.phase = phase;
        return s;
    }
}
