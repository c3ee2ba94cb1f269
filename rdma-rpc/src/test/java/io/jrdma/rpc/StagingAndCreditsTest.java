package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
}
