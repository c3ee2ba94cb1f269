package io.jrdma.reactive.internal.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.OperationTimeoutException;
import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * One-sided waits on a real loop thread, without a device: a loop with no connection is an EVENT
 * loop that sleeps 5 s at a time, so what these tests see within a second or two is the loop's
 * own wiring of {@link Watches} (the hand-off's wake-up, the 1 ms cap on its sleep while waits are
 * pending, the deadline checks, the failure of a closing connection's waits as its drain starts,
 * and of every wait as the loop stops).
 */
@Timeout(60)
class LoopWatchesTest {
    private static final Duration LONG = Duration.ofSeconds(30);
    private static final long PROMPT_MS = 2_000;  // well below the loop's 5 s sleep

    private final Arena arena = Arena.ofShared();
    private final BufferPool pool = MemoryInternals.get().pool(arena.allocate(4 * 64, 64), 0x11, 0x22, 64, 4, () -> { });
    private final LoopGroup group = new LoopGroup("watch-test", 1, true);
    private final Loop loop = group.loops().getFirst();
    private final TestConnection owner = new TestConnection("test connection");

    @AfterEach
    void tearDown() {
        group.shutdown().block(LONG);
        arena.close();
    }

    @Test
    void anEventLoopSeesAChangedWordWithinMillisecondsThoughItSleepsSeconds() throws Exception {
        assertEquals(PollingMode.EVENT, loop.mode());
        RegisteredBuffer buf = pool.tryAcquire();
        buf.segment().fill((byte) 0);
        String[] thread = new String[1];
        CompletableFuture<Long> wait = loop.watches().word(owner, buf, 8, 0, LONG)
                .doOnNext(v -> thread[0] = Thread.currentThread().getName()).toFuture();
        Thread.sleep(50);  // the hand-off woke the loop; it registered the wait and sleeps again
        long sleepsBefore = loop.sleeps();
        // 20 wake-ups with nothing to do: ~20 ms with the 1 ms cap, 100 s with the loop's 5 s sleep (no rate asserted)
        await(() -> loop.sleeps() - sleepsBefore >= 20, "a loop with a pending wait wakes again and again to read it");
        assertTrue(!wait.isDone(), "nothing changed yet");
        long t0 = System.nanoTime();
        buf.segment().set(ValueLayout.JAVA_LONG, 8, 77L);
        assertEquals(77L, wait.get(PROMPT_MS, TimeUnit.MILLISECONDS));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertTrue(ms < PROMPT_MS, "seen after " + ms + " ms");
        assertEquals("watch-test-loop-0", thread[0], "signalled on the loop thread");
        await(() -> buf.refCount() == 1, "the loop released the buffer");
        buf.release();
    }

    @Test
    void aWaitOnALoopFailsAtItsTimeout() throws Exception {
        RegisteredBuffer buf = pool.tryAcquire();
        buf.segment().fill((byte) 0);
        long t0 = System.nanoTime();
        CompletableFuture<Long> wait = loop.watches().word(owner, buf, 0, 0, Duration.ofMillis(100)).toFuture();
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> wait.get(PROMPT_MS, TimeUnit.MILLISECONDS));
        long ms = (System.nanoTime() - t0) / 1_000_000;
        assertInstanceOf(OperationTimeoutException.class, e.getCause());
        assertTrue(ms >= 100, "timed out early, after " + ms + " ms");
        await(() -> buf.refCount() == 1, "the loop released the buffer");
        buf.release();
    }

    @Test
    void aStoppingLoopFailsItsWaits() throws Exception {
        RegisteredBuffer buf = pool.tryAcquire();
        buf.segment().fill((byte) 0);
        CompletableFuture<Long> wait = loop.watches().word(owner, buf, 0, 0, LONG).toFuture();
        await(() -> buf.refCount() == 2, "the wait holds the buffer");
        group.shutdown().block(LONG);
        ExecutionException e = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                () -> wait.get(PROMPT_MS, TimeUnit.MILLISECONDS));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertEquals(1, buf.refCount());
        CompletableFuture<Long> later = loop.watches().word(owner, buf, 0, 0, LONG).toFuture();
        assertInstanceOf(ConnectionException.Closed.class, assertThrows(later).getCause(), "a wait after the loop stopped");
        buf.release();
    }

    @Test
    void aDrainingConnectionsWaitsFailAsItsDrainStartsAndNoOtherConnectionsDo() throws Exception {
        RegisteredBuffer buf = pool.tryAcquire();
        buf.segment().fill((byte) 0);
        TestConnection closing = new TestConnection("the draining connection");
        CompletableFuture<Long> mine = loop.watches().word(closing, buf, 0, 0, LONG).toFuture();
        CompletableFuture<Byte> mineToo = loop.watches().oneByte(closing, buf, 16, (byte) 0, LONG).toFuture();
        CompletableFuture<Long> other = loop.watches().word(owner, buf, 8, 0, LONG).toFuture();
        assertEquals(4, buf.refCount());
        closing.closing = true;
        loop.drain(closing);  // what a close queues: the waits fail in the drain's task, with no task of their own
        assertInstanceOf(ConnectionException.Closed.class, assertThrows(mine).getCause());
        assertInstanceOf(ConnectionException.Closed.class, assertThrows(mineToo).getCause());
        await(() -> closing.destroyed, "drained and destroyed");
        assertEquals(2, buf.refCount(), "released as they failed");
        assertTrue(!other.isDone(), "another connection's wait goes on");
        buf.segment().set(ValueLayout.JAVA_LONG, 8, 5L);
        assertEquals(5L, other.get(PROMPT_MS, TimeUnit.MILLISECONDS));
        await(() -> buf.refCount() == 1, "the loop released the buffer");
        buf.release();
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + LONG.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) throw new AssertionError("not within " + LONG + ": " + what);
            Thread.sleep(5);
        }
    }

    private static ExecutionException assertThrows(CompletableFuture<?> f) {
        return org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, () -> f.get(PROMPT_MS, TimeUnit.MILLISECONDS));
    }
}
