package io.jrdma.reactive.internal.setup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.internal.core.ConnectionCore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

/** The rules of {@link SetupGate}'s Javadoc, on virtual time, with setups that only record what happens to them. */
class SetupGateTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);

    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final SetupGate gate = new SetupGate(2, clock);
    private final List<Setup> started = new ArrayList<>();

    /** One submitted setup: when it started, with how much time, and what its subscriber saw. */
    private final class Setup implements SetupCallback {
        final String name;
        Duration startedWith;
        SetupCallback gateSide;
        boolean cancelledWhileRunning;
        Throwable failure;
        int signals;
        Runnable cancel;

        Setup(String name) {
            this.name = name;
        }

        Setup submit() {
            cancel = gate.submit(TIMEOUT, "connecting " + name, this, (left, cb) -> {
                startedWith = left;
                gateSide = cb;
                started.add(this);
                return () -> {
                    cancelledWhileRunning = true;
                    cb.failed(new IllegalStateException("cancelled"));  // a real setup ends through its callback
                };
            });
            return this;
        }

        void succeed() {
            gateSide.established(null);
        }

        void fail() {
            gateSide.failed(new IllegalStateException(name + " failed"));
        }

        @Override
        public void established(ConnectionCore core) {
            signals++;
        }

        @Override
        public void failed(Throwable error) {
            signals++;
            failure = error;
        }
    }

    @Test
    void atMostTheLimitRunAndTheOthersStartInTheOrderTheyCame() {
        Setup a = new Setup("a").submit(), b = new Setup("b").submit(), c = new Setup("c").submit(), d = new Setup("d").submit();
        assertEquals(List.of(a, b), started);
        assertEquals(2, gate.running());
        assertEquals(2, gate.waiting());

        b.succeed();
        assertEquals(List.of(a, b, c), started);
        a.fail();
        assertEquals(List.of(a, b, c, d), started);
        assertEquals(1, a.signals);
        assertEquals(1, b.signals);

        c.succeed();
        d.succeed();
        assertEquals(0, gate.running());
        assertEquals(0, gate.waiting());
    }

    @Test
    void theTimeoutCountsFromSubmissionAndAStartedSetupGetsWhatIsLeft() {
        Setup a = new Setup("a").submit(), b = new Setup("b").submit();
        assertEquals(TIMEOUT, a.startedWith, "a setup that did not wait has its whole timeout");
        Setup c = new Setup("c").submit();
        clock.advanceTimeBy(Duration.ofSeconds(4));
        a.succeed();
        assertEquals(Duration.ofSeconds(6), c.startedWith);
        b.succeed();
        c.succeed();
    }

    @Test
    void aWaitingSetupPastItsTimeoutFailsNeverStartsAndLeavesItsTurnToTheNext() {
        Setup a = new Setup("a").submit(), b = new Setup("b").submit();
        Setup late = new Setup("late").submit();
        clock.advanceTimeBy(Duration.ofSeconds(5));
        Setup next = new Setup("next").submit();
        clock.advanceTimeBy(Duration.ofSeconds(5));

        ConnectionException.Timeout timeout = assertInstanceOf(ConnectionException.Timeout.class, late.failure);
        assertTrue(timeout.getMessage().contains("connecting late did not start within the connect timeout of 10 s"), timeout.getMessage());
        assertEquals(1, late.signals);
        assertEquals(1, gate.waiting());

        a.succeed();
        assertEquals(List.of(a, b, next), started, "the expired setup never started");
        assertEquals(Duration.ofSeconds(5), next.startedWith);
        b.succeed();
        next.succeed();
        assertEquals(0, gate.running());
    }

    @Test
    void cancellingAWaitingSetupRemovesItSilently() {
        Setup a = new Setup("a").submit(), b = new Setup("b").submit();
        Setup gone = new Setup("gone").submit();
        Setup next = new Setup("next").submit();
        gone.cancel.run();
        assertEquals(0, gone.signals, "its subscriber is gone: nobody to tell");
        assertEquals(1, gate.waiting());

        clock.advanceTimeBy(TIMEOUT.multipliedBy(2));
        assertEquals(0, gone.signals, "its timer was disposed with it");
        assertNull(gone.startedWith);
        a.succeed();
        b.succeed();
        assertEquals(List.of(a, b), started, "next timed out while waiting");
        assertInstanceOf(ConnectionException.Timeout.class, next.failure);
    }

    @Test
    void cancellingARunningSetupCancelsItAndItsEndFreesTheSlot() {
        Setup a = new Setup("a").submit(), b = new Setup("b").submit(), c = new Setup("c").submit();
        a.cancel.run();
        assertTrue(a.cancelledWhileRunning);
        assertEquals(1, a.signals);
        assertEquals(List.of(a, b, c), started);
        b.succeed();
        c.succeed();
        assertEquals(0, gate.running());
    }

    @Test
    void aSetupThatFailsAsItStartsFreesItsSlotAndIsSignalledOnce() {
        List<Throwable> failures = new ArrayList<>();
        SetupCallback subscriber = new SetupCallback() {
            @Override
            public void established(ConnectionCore core) {
            }

            @Override
            public void failed(Throwable error) {
                failures.add(error);
            }
        };
        // Setups.connect reports a failure to start through the callback, then returns a no-op
        gate.submit(TIMEOUT, "no device", subscriber, (left, cb) -> {
            cb.failed(new IllegalStateException("no RDMA device"));
            return () -> { };
        });
        // a start that throws instead
        gate.submit(TIMEOUT, "throws", subscriber, (left, cb) -> {
            throw new IllegalStateException("bad address");
        });
        assertEquals(2, failures.size());
        assertEquals(0, gate.running());
    }
}
