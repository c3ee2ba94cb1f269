package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;
import reactor.test.scheduler.VirtualTimeScheduler;

class StagingAndCreditsTest {
    @Test
    void rangesAreAlignedDisjointAndCoalesceWhenFreed() {
        RangeAllocator a = new RangeAllocator(1024);
        long[] got = new long[3];
        assertNull(a.allocate(100, o -> got[0] = o));
        assertNull(a.allocate(1, o -> got[1] = o));
        assertNull(a.allocate(64, o -> got[2] = o));
        assertEquals(0, got[0]);
        assertEquals(128, got[1]);
        assertEquals(192, got[2]);
        a.free(128, 1);
        a.free(0, 100);
        a.free(192, 64);
        assertEquals(1024, a.freeBytes());
        assertEquals(0, a.tryAllocate(1024), "everything coalesced back into one range");
    }

    @Test
    void aWaiterIsServedInOrderWhenMemoryReturnsAndCanBeWithdrawn() {
        RangeAllocator a = new RangeAllocator(1024);
        long whole = a.tryAllocate(1024);
        List<String> order = new ArrayList<>();
        RangeAllocator.Waiter big = a.allocate(1024, o -> order.add("big"));
        RangeAllocator.Waiter small = a.allocate(64, o -> order.add("small"));
        assertNotNull(big);
        assertNotNull(small);
        assertEquals(-1, a.tryAllocate(64), "no overtaking a waiter");
        assertTrue(a.cancel(big));
        assertFalse(a.cancel(big));
        a.free(whole, 1024);
        assertEquals(List.of("small"), order);
        assertThrows(IllegalArgumentException.class, () -> a.allocate(2048, o -> { }));
        a.free(0, 64);  // small's range
        assertThrows(IllegalStateException.class, () -> a.free(0, 64));
    }

    @Test
    @Timeout(30)
    void concurrentAllocationNeverHandsOutOverlappingRanges() throws Exception {
        RangeAllocator a = new RangeAllocator(64 * 1024);
        byte[] owner = new byte[64 * 1024 / 64];
        AtomicInteger overlaps = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(4);
        CountDownLatch done = new CountDownLatch(4);
        for (int t = 0; t < 4; t++) {
            int me = t + 1;
            pool.execute(() -> {
                SplittableRandom r = new SplittableRandom(me);
                for (int i = 0; i < 20_000; i++) {
                    long size = 1 + r.nextInt(4096);
                    long o = a.tryAllocate(size);
                    if (o < 0) continue;
                    int from = (int) (o / 64), to = (int) ((o + RangeAllocator.sizeOf(size)) / 64);
                    synchronized (owner) {
                        for (int k = from; k < to; k++) {
                            if (owner[k] != 0) overlaps.incrementAndGet();
                            owner[k] = (byte) me;
                        }
                    }
                    synchronized (owner) {
                        for (int k = from; k < to; k++) owner[k] = 0;
                    }
                    a.free(o, size);
                }
                done.countDown();
            });
        }
        assertTrue(done.await(25, TimeUnit.SECONDS));
        pool.shutdown();
        assertEquals(0, overlaps.get());
        assertEquals(64 * 1024, a.freeBytes());
    }

    @Test
    void creditsAreFifoAndAWithdrawnWaiterNeverGetsOne() {
        CreditGate g = new CreditGate(1);
        AtomicLong granted = new AtomicLong();
        assertNull(g.acquire(granted::incrementAndGet));
        List<String> order = new ArrayList<>();
        CreditGate.Waiter a = g.acquire(() -> order.add("a"));
        CreditGate.Waiter b = g.acquire(() -> order.add("b"));
        assertEquals(2, g.waiting());
        assertTrue(g.cancel(a));
        g.release();
        assertEquals(List.of("b"), order);
        assertFalse(g.cancel(b), "already granted");
        g.release();
        assertEquals(1, g.available());
        g.add(3);
        assertEquals(4, g.available());
    }

    @Test
    void aGrantedStagingWaitDisposesOfItsTimer() {
        RangeAllocator a = new RangeAllocator(1024);
        long whole = a.tryAllocate(1024);
        TimerSpy timers = new TimerSpy(() -> { });
        List<String> outcomes = await64(a, timers);
        assertEquals(1, timers.scheduled.size());
        assertFalse(timers.scheduled.get(0).isDisposed());
        a.free(whole, 1024);
        assertGrantedOnceWithoutItsTimer(timers, outcomes);
    }

    @Test
    void aGrantBeforeScheduleReturnsDisposesOfTheTimerScheduleHandsBack() {
        RangeAllocator a = new RangeAllocator(1024);
        long whole = a.tryAllocate(1024);
        TimerSpy timers = new TimerSpy(() -> a.free(whole, 1024));  // another thread frees memory meanwhile
        assertGrantedOnceWithoutItsTimer(timers, await64(a, timers));
    }

    @Test
    void aStagingWaitNotServedInTimeIsWithdrawnAndTimesOutOnce() {
        RangeAllocator a = new RangeAllocator(1024);
        long whole = a.tryAllocate(1024);
        TimerSpy timers = new TimerSpy(() -> { });
        List<String> outcomes = await64(a, timers);
        timers.clock.advanceTimeBy(Duration.ofMillis(999));
        assertEquals(List.of(), outcomes);
        timers.clock.advanceTimeBy(Duration.ofMillis(1));
        assertEquals(List.of("timed out"), outcomes);
        assertEquals(0, a.waiting());
        a.free(whole, 1024);
        assertEquals(List.of("timed out"), outcomes);
        assertEquals(1024, a.freeBytes());
    }

    @Test
    void aStagingWaitThatFitsAtOnceSchedulesNoTimer() {
        TimerSpy timers = new TimerSpy(() -> { });
        List<String> outcomes = await64(new RangeAllocator(1024), timers);
        assertEquals(List.of("granted at 0"), outcomes);
        assertEquals(List.of(), timers.scheduled);
    }

    private static void assertGrantedOnceWithoutItsTimer(TimerSpy timers, List<String> outcomes) {
        assertEquals(List.of("granted at 0"), outcomes);
        assertTrue(timers.scheduled.get(0).isDisposed(), "a served wait must not keep its timer (and session) until the timeout");
        timers.clock.advanceTimeBy(Duration.ofSeconds(2));
        assertEquals(List.of("granted at 0"), outcomes, "the timeout after the grant is no outcome");
    }

    /** Asks {@code a} for 64 bytes, for at most 1000 ms on {@code timers}; the list records how the wait ended. */
    private static List<String> await64(RangeAllocator a, TimerSpy timers) {
        List<String> outcomes = new ArrayList<>();
        new StagingWait() {
            @Override
            void granted(long offset) {
                outcomes.add("granted at " + offset);
            }

            @Override
            void timedOut() {
                outcomes.add("timed out");
            }
        }.await(a, 64, 1000, timers);
        return outcomes;
    }

    /** A virtual clock that records the timers it hands back and runs {@code beforeScheduling} inside schedule(). */
    private static final class TimerSpy implements Scheduler {
        final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        final List<Disposable> scheduled = new ArrayList<>();
        private final Runnable beforeScheduling;

        TimerSpy(Runnable beforeScheduling) {
            this.beforeScheduling = beforeScheduling;
        }

        @Override
        public Disposable schedule(Runnable task) {
            return schedule(task, 0, TimeUnit.MILLISECONDS);
        }

        @Override
        public Disposable schedule(Runnable task, long delay, TimeUnit unit) {
            beforeScheduling.run();
            Disposable d = clock.schedule(task, delay, unit);
            scheduled.add(d);
            return d;
        }

        @Override
        public Worker createWorker() {
            return clock.createWorker();
        }
    }
}
