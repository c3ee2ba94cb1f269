package io.jrdma.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Fds.Ready;
import io.jrdma.ffm.abi.LibcCalls;
import io.jrdma.ffm.abi.Native;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * Wakeups and the waits in Fds, on real eventfds and pipes of the host kernel (no RDMA needed):
 * the fd a channel wait polls is stood in for by an eventfd nobody signals.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
class WakeupTest {
    private static final Duration LONG = Duration.ofSeconds(20);
    private static final Duration SHORT = Duration.ofMillis(200);
    /** Far below LONG: a wait that ended this fast was ended by the wakeup, not the timeout. */
    private static final long PROMPT_MS = 5_000;

    private static long millisSince(long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }

    @Test
    void aSignalGivenBeforeTheWaitMakesItReturnAtOnceAndTheNextWaitSleepsAgain() {
        try (Wakeup wakeup = Wakeup.create(); Wakeup idle = Wakeup.create()) {
            wakeup.signal();
            wakeup.signal();  // several signals before a wait are one wakeup
            long t0 = System.nanoTime();
            assertEquals(Ready.WOKEN, Fds.await(idle.fd(), wakeup, null, Fds.deadline(LONG), "idle"));
            assertTrue(millisSince(t0) < PROMPT_MS, "woken after " + millisSince(t0) + " ms");

            t0 = System.nanoTime();
            assertEquals(Ready.TIMED_OUT, Fds.await(idle.fd(), wakeup, null, Fds.deadline(SHORT), "idle"));
            assertTrue(millisSince(t0) >= SHORT.toMillis() - 20, "the drained wakeup let the wait end after " + millisSince(t0) + " ms");
        }
    }

    @Test
    void aSignalFromAnotherThreadEndsAWaitAtOnce() throws Exception {
        try (Wakeup wakeup = Wakeup.create(); Wakeup idle = Wakeup.create()) {
            CompletableFuture<Long> waited = new CompletableFuture<>();
            Thread waiter = Thread.ofPlatform().start(() -> {
                long t0 = System.nanoTime();
                Ready r = Fds.await(idle.fd(), wakeup, null, Fds.deadline(LONG), "idle");
                if (r == Ready.WOKEN) waited.complete(millisSince(t0));
                else waited.completeExceptionally(new AssertionError("wait ended " + r));
            });
            Thread.sleep(100);  // usually the waiter sleeps in poll(2) by now; if not, the signal is pending for it
            wakeup.signal();
            long ms = waited.get(LONG.toMillis() * 2, TimeUnit.MILLISECONDS);
            assertTrue(ms < PROMPT_MS, "woken after " + ms + " ms");
            waiter.join(LONG);
        }
    }

    @Test
    void aReadableFdWinsOverASignalWhichStaysPendingForTheNextWait() {
        try (Wakeup wakeup = Wakeup.create(); Wakeup channel = Wakeup.create()) {
            channel.signal();  // the "channel" has an event
            wakeup.signal();
            assertEquals(Ready.READABLE, Fds.await(channel.fd(), wakeup, null, Fds.deadline(LONG), "channel"));
            assertTrue(channel.enter());
            try {
                channel.drain();  // what the verbs read does to a real channel
            } finally {
                channel.leave();
            }
            assertEquals(Ready.WOKEN, Fds.await(channel.fd(), wakeup, null, Fds.deadline(LONG), "channel"));
        }
    }

    @Test
    void signalAfterCloseDoesNothingAndASecondCloseDoesNothing() {
        Wakeup wakeup = Wakeup.create();
        wakeup.close();
        assertTrue(wakeup.isClosed());
        wakeup.signal();
        wakeup.close();
        try (Wakeup idle = Wakeup.create()) {
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> Fds.await(idle.fd(), wakeup, null, Fds.deadline(SHORT), "idle"));
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
        }
    }

    @Test
    void closingAWakeupWakesTheThreadWaitingWithItBeforeTheFdIsClosed() throws Exception {
        try (Wakeup idle = Wakeup.create()) {
            Wakeup wakeup = Wakeup.create();
            CompletableFuture<Ready> waited = new CompletableFuture<>();
            Thread waiter = Thread.ofPlatform().start(() -> {
                try {
                    waited.complete(Fds.await(idle.fd(), wakeup, null, Fds.deadline(LONG), "idle"));
                } catch (Throwable t) {
                    waited.completeExceptionally(t);
                }
            });
            Thread.sleep(100);
            long t0 = System.nanoTime();
            wakeup.close();
            // close returned only after the waiter left the fd; either it was in poll(2) and woke,
            // or it had not started and found the wakeup closed
            assertTrue(millisSince(t0) < PROMPT_MS, "close took " + millisSince(t0) + " ms");
            try {
                assertEquals(Ready.WOKEN, waited.get(LONG.toMillis(), TimeUnit.MILLISECONDS));
            } catch (java.util.concurrent.ExecutionException e) {
                assertTrue(e.getCause() instanceof IllegalStateException, e.toString());
            }
            waiter.join(LONG);
        }
    }

    @Test
    void waitingOnAnFdThatIsNotOpenFailsAsClosedInsteadOfReportingItReadable() {
        int neverOpen = 1 << 30;  // above fs.nr_open's ceiling, so no process can have it open
        long t0 = System.nanoTime();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Fds.awaitReadable(neverOpen, LONG, "CompletionChannel(test)"));
        assertTrue(e.getMessage().contains("CompletionChannel(test) was closed while a thread waited on it"), e.getMessage());
        assertTrue(millisSince(t0) < PROMPT_MS, "failed only after " + millisSince(t0) + " ms");
    }

    @Test
    void aHungUpFdCountsAsReadableSoTheReadThatFollowsReportsWhy() throws Throwable {
        MethodHandle pipe = Linker.nativeLinker().downcallHandle(Linker.nativeLinker().defaultLookup().find("pipe").orElseThrow(),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment fds = arena.allocate(ValueLayout.JAVA_INT, 2);
            assertEquals(0, (int) pipe.invokeExact(fds));
            int readEnd = fds.getAtIndex(ValueLayout.JAVA_INT, 0);
            int writeEnd = fds.getAtIndex(ValueLayout.JAVA_INT, 1);
            try {
                assertEquals(0, (int) LibcCalls.close.invokeExact(Native.errnoBuffer(), writeEnd));
                long t0 = System.nanoTime();
                assertTrue(Fds.awaitReadable(readEnd, LONG, "pipe"), "a pipe whose writer is gone (POLLHUP)");
                assertTrue(millisSince(t0) < PROMPT_MS, "reported after " + millisSince(t0) + " ms");
            } finally {
                assertEquals(0, (int) LibcCalls.close.invokeExact(Native.errnoBuffer(), readEnd));
            }
        }
    }

    @Test
    void signallingAndWaitingAllocateNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        Duration zero = Duration.ZERO;
        try (Wakeup wakeup = Wakeup.create(); Wakeup idle = Wakeup.create()) {
            for (int i = 0; i < 20_000; i++) cycle(wakeup, idle, zero);  // class loading, thread locals, JIT
            int rounds = 10_000;
            long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < rounds; i++) cycle(wakeup, idle, zero);
            long allocated = threads.getCurrentThreadAllocatedBytes() - before;
            assertTrue(allocated < rounds, allocated + " bytes allocated in " + rounds + " signal-and-wait rounds");
        }
    }

    private static void cycle(Wakeup wakeup, Wakeup idle, Duration zero) {
        wakeup.signal();
        if (Fds.await(idle.fd(), wakeup, null, Fds.deadline(zero), "idle") != Ready.WOKEN) throw new AssertionError("not woken");
        if (Fds.await(idle.fd(), wakeup, null, Fds.deadline(zero), "idle") != Ready.TIMED_OUT) throw new AssertionError("woken twice");
    }
}
