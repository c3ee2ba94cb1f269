package io.jrdma.ffm.device;

import static io.jrdma.ffm.device.Bytes.pattern;
import static io.jrdma.ffm.device.Bytes.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.CompletionChannel;
import io.jrdma.ffm.CompletionQueue;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.RdmaDevices;
import io.jrdma.ffm.SendFlags;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.Wakeup;
import io.jrdma.ffm.device.Completions.Completion;
import io.jrdma.ffm.device.RxePair.Connection;
import io.jrdma.ffm.device.RxePair.Options;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;

/**
 * Event-driven completion waits: an armed CQ signals its channel, an idle one lets the wait time
 * out, a Wakeup or closing the channel ends it at once.
 */
@Tag("device")
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
class CompletionChannelTest {
    private static final Duration SHORT = Duration.ofMillis(300);
    private static final Duration LONG = Duration.ofSeconds(10);
    /** A wait that ended in a third of this was ended by something else than its timeout. */
    private static final Duration VERY_LONG = Duration.ofSeconds(30);

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void awaitEventReturnsEmptyAfterTheTimeoutWhenNothingCompletes() {
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_B);
             CompletionChannel channel = ctx.createCompletionChannel();
             CompletionQueue cq = ctx.createCompletionQueue(16, channel, 0)) {
            assertTrue(channel.fd() >= 0);
            cq.requestNotification(false);
            long t0 = System.nanoTime();
            Optional<CompletionQueue> event = channel.awaitEvent(SHORT);
            long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(event.isEmpty(), "no completion, no event");
            assertTrue(elapsedMs >= SHORT.toMillis() - 20, "returned after " + elapsedMs + " ms, before the timeout");
            assertTrue(elapsedMs < SHORT.toMillis() + 5_000, "returned only after " + elapsedMs + " ms");
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void armedCqIsReturnedByAwaitEventWhenASendArrives() {
        try (RxePair p = RxePair.connect(Connection.MANUAL, Options.defaults().withCompletionChannelOnB())) {
            p.b.postReceive(201, 0, 256);
            p.b.cq.requestNotification(false);
            assertTrue(p.b.channel.awaitEvent(SHORT).isEmpty(), "nothing sent yet");

            put(p.a.memory(), 0, pattern(48, 11));
            p.a.send.reset().wrId(1).opcode(SendOpcode.SEND).flags(SendFlags.SIGNALED).sge(0, p.a.mr, 0, 48);
            p.a.qp.postSend(p.a.send);

            Optional<CompletionQueue> event = p.b.channel.awaitEvent(LONG);
            assertSame(p.b.cq, event.orElseThrow(() -> new AssertionError("no completion event within " + LONG)));
            Completion received = Completions.awaitSuccess(p.b.cq, 1).getFirst();
            assertEquals(201, received.wrId());
            assertEquals(WcOpcode.RECV, received.opcode());
            assertEquals(48, received.byteLength());
            Completions.awaitSuccess(p.a.cq, 1);

            // the same through a wait that a wakeup could have cut short
            try (Wakeup wakeup = Wakeup.create()) {
                p.b.postReceive(202, 0, 256);
                p.b.cq.requestNotification(false);
                p.a.send.reset().wrId(2).opcode(SendOpcode.SEND).flags(SendFlags.SIGNALED).sge(0, p.a.mr, 0, 48);
                p.a.qp.postSend(p.a.send);
                assertSame(p.b.cq, p.b.channel.awaitEvent(LONG, wakeup).orElseThrow(() -> new AssertionError("no event with a wakeup")));
                assertEquals(202, Completions.awaitSuccess(p.b.cq, 1).getFirst().wrId());
                Completions.awaitSuccess(p.a.cq, 1);
            }
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void solicitedOnlyNotificationWakesOnlyForSolicitedSends() {
        try (RxePair p = RxePair.connect(Connection.MANUAL, Options.defaults().withCompletionChannelOnB())) {
            p.b.postReceive(301, 0, 256);
            p.b.postReceive(302, 256, 256);
            p.b.cq.requestNotification(true);
            put(p.a.memory(), 0, pattern(16, 12));

            p.a.send.reset().wrId(1).opcode(SendOpcode.SEND).flags(SendFlags.SIGNALED).sge(0, p.a.mr, 0, 16);
            p.a.qp.postSend(p.a.send);
            assertEquals(301, Completions.awaitSuccess(p.b.cq, 1).getFirst().wrId(), "the unsolicited send arrived");
            assertTrue(p.b.channel.awaitEvent(SHORT).isEmpty(), "but raised no event");

            p.a.send.reset().wrId(2).opcode(SendOpcode.SEND).flags(SendFlags.SIGNALED | SendFlags.SOLICITED).sge(0, p.a.mr, 0, 16);
            p.a.qp.postSend(p.a.send);
            assertSame(p.b.cq, p.b.channel.awaitEvent(LONG).orElseThrow(() -> new AssertionError("no event for a solicited send")));
            assertEquals(302, Completions.awaitSuccess(p.b.cq, 1).getFirst().wrId());
            Completions.awaitSuccess(p.a.cq, 2);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void aWakeupSignalledByAnotherThreadEndsTheWaitAtOnceWithNoEvent() throws Exception {
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_B);
             CompletionChannel channel = ctx.createCompletionChannel();
             CompletionQueue cq = ctx.createCompletionQueue(16, channel, 0);
             Wakeup wakeup = Wakeup.create()) {
            cq.requestNotification(false);
            Waits.Waiter<Optional<CompletionQueue>> waiter = Waits.start("cq-waiter", () -> channel.awaitEvent(VERY_LONG, wakeup));
            waiter.awaitBlockedInWait(LONG);
            wakeup.signal();
            Waits.Outcome<Optional<CompletionQueue>> woken = waiter.outcome(LONG);
            assertNull(woken.failure());
            assertTrue(woken.value().isEmpty(), "woken, not an event");
            assertTrue(woken.millis() < VERY_LONG.toMillis() / 3, "woken only after " + woken.millis() + " ms");
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void aWakeupSignalledBeforeTheWaitEndsItAtOnceAndTheNextWaitSleepsAgain() {
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_B);
             CompletionChannel channel = ctx.createCompletionChannel();
             CompletionQueue cq = ctx.createCompletionQueue(16, channel, 0);
             Wakeup wakeup = Wakeup.create()) {
            cq.requestNotification(false);
            wakeup.signal();
            long t0 = System.nanoTime();
            assertTrue(channel.awaitEvent(VERY_LONG, wakeup).isEmpty());
            long wokenMs = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(wokenMs < VERY_LONG.toMillis() / 3, "a pending signal ended the wait only after " + wokenMs + " ms");

            t0 = System.nanoTime();
            assertTrue(channel.awaitEvent(SHORT, wakeup).isEmpty());
            long sleptMs = (System.nanoTime() - t0) / 1_000_000;
            assertTrue(sleptMs >= SHORT.toMillis() - 20, "the signal was not cleared: the next wait ended after " + sleptMs + " ms");
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void closingTheChannelWakesTheThreadWaitingOnItWhichFailsAsClosed() throws Exception {
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_B)) {
            CompletionChannel channel = ctx.createCompletionChannel();
            Waits.Waiter<Optional<CompletionQueue>> waiter = Waits.start("cq-waiter", () -> channel.awaitEvent(VERY_LONG));
            waiter.awaitBlockedInWait(LONG);
            long t0 = System.nanoTime();
            channel.close();  // frees the channel only after the waiter left it
            long closeMs = (System.nanoTime() - t0) / 1_000_000;
            Waits.Outcome<Optional<CompletionQueue>> outcome = waiter.outcome(LONG);
            assertInstanceOf(IllegalStateException.class, outcome.failure(), "the waiter got " + outcome);
            assertTrue(outcome.failure().getMessage().contains("was closed while a thread waited on it"), outcome.failure().getMessage());
            assertTrue(outcome.millis() < VERY_LONG.toMillis() / 3, "the waiter left only after " + outcome.millis() + " ms");
            assertTrue(closeMs < VERY_LONG.toMillis() / 3, "close took " + closeMs + " ms");
            assertTrue(channel.isClosed());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void waitsThatTimeOutOrAreWokenAllocateNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_B);
             CompletionChannel channel = ctx.createCompletionChannel();
             CompletionQueue cq = ctx.createCompletionQueue(16, channel, 0);
             Wakeup wakeup = Wakeup.create()) {
            cq.requestNotification(false);
            Duration zero = Duration.ZERO;
            for (int i = 0; i < 2_000; i++) waitTwice(channel, wakeup, zero);  // class loading, thread locals, JIT
            int rounds = 2_000;
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < rounds; i++) waitTwice(channel, wakeup, zero);
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            assertTrue(allocated < rounds, allocated + " bytes allocated by " + rounds + " signal, woken wait, timed-out wait rounds");
        }
    }

    private static void waitTwice(CompletionChannel channel, Wakeup wakeup, Duration zero) {
        wakeup.signal();
        if (channel.awaitEvent(zero, wakeup).isPresent()) throw new AssertionError("an event on an idle CQ");
        if (channel.awaitEvent(zero, wakeup).isPresent()) throw new AssertionError("an event on an idle CQ");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void armingACqWithoutAChannelIsAnIllegalState() {
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_A); CompletionQueue cq = ctx.createCompletionQueue(4)) {
            assertThrows(IllegalStateException.class, () -> cq.requestNotification(false));
        }
    }
}
