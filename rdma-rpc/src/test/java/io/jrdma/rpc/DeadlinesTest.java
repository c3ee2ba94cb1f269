package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.test.scheduler.VirtualTimeScheduler;

@Timeout(30)
class DeadlinesTest {
    private static Deadlines.Tracked at(long deadline, Runnable action) {
        return new Deadlines.Tracked() {
            private int slot;

            @Override
            public int deadlineSlot() {
                return slot;
            }

            @Override
            public void deadlineSlot(int slot) {
                this.slot = slot;
            }

            @Override
            public long deadlineNanos() {
                return deadline;
            }

            @Override
            public void expire() {
                action.run();
            }
        };
    }

    @Test
    void expiresOnceWithinATickAndNeverWhatWasUntracked() throws Exception {
        Deadlines d = new Deadlines();
        CountDownLatch fired = new CountDownLatch(1);
        AtomicInteger expiries = new AtomicInteger();
        long start = System.nanoTime();
        long deadline = start + Duration.ofMillis(50).toNanos();
        long[] firedAt = new long[1];
        d.track(at(deadline, () -> {
            firedAt[0] = System.nanoTime();
            expiries.incrementAndGet();
            fired.countDown();
        }));
        Deadlines.Tracked cancelled = at(deadline, expiries::incrementAndGet);
        d.track(cancelled);
        d.untrack(cancelled);
        assertTrue(fired.await(5, TimeUnit.SECONDS));
        Thread.sleep(100);
        assertEquals(1, expiries.get());
        assertTrue(firedAt[0] >= deadline, "never early");
        assertEquals(0, d.size());
    }

    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();

    private Deadlines onVirtualTime() {
        return new Deadlines(time, () -> time.now(TimeUnit.NANOSECONDS));
    }

    private long now() {
        return time.now(TimeUnit.NANOSECONDS);
    }

    /**
     * Tracked things sit in slots that a removal refills from the end: untracking in any order,
     * and a sweep that expires some of them, must leave exactly the others tracked, each once.
     */
    @Test
    void untrackingAndExpiringInAnyOrderKeepsExactlyTheRest() {
        Deadlines d = onVirtualTime();
        long soon = now() + Duration.ofSeconds(1).toNanos();
        long later = now() + Duration.ofHours(1).toNanos();
        Random random = new Random(7);
        int n = 300;
        AtomicInteger[] expiries = new AtomicInteger[n];
        List<Deadlines.Tracked> all = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            AtomicInteger e = expiries[i] = new AtomicInteger();
            Deadlines.Tracked t = at(i % 3 == 0 ? soon : later, e::incrementAndGet);  // every third one is due soon
            all.add(t);
            d.track(t);
            d.track(t);  // twice is once
        }
        assertEquals(n, d.size());
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < n; i++) if (i % 2 == 0) order.add(i);
        Collections.shuffle(order, random);
        for (int i : order) {
            d.untrack(all.get(i));
            d.untrack(all.get(i));  // twice is once
        }
        time.advanceTimeBy(Duration.ofSeconds(1).plus(Deadlines.TICK));
        // left: the odd ones; due among them: odd multiples of 3
        int due = 0;
        for (int i = 1; i < n; i += 2) if (i % 3 == 0) due++;
        assertEquals(n / 2 - due, d.size(), "the due ones expired, the rest are still tracked");
        for (int i = 0; i < n; i++) {
            int expected = i % 2 == 1 && i % 3 == 0 ? 1 : 0;
            assertEquals(expected, expiries[i].get(), "expiries of #" + i);
        }
        for (int i = 1; i < n; i += 2) d.untrack(all.get(i));
        assertEquals(0, d.size());
    }

    /**
     * Calls of 30 s that are answered within a millisecond, one after another for ten seconds,
     * cost no sweep at all: one is scheduled at the first deadline, none per tick (a periodic
     * sweep ran a thousand times here). The one sweep, at the first deadline, finds nothing and
     * schedules no other.
     */
    @Test
    void shortCallsWithLongDeadlinesScheduleOneSweepAtTheEarliestDeadline() {
        Deadlines d = onVirtualTime();
        AtomicInteger expiries = new AtomicInteger();
        for (int i = 0; i < 10_000; i++) {
            Deadlines.Tracked call = at(now() + Duration.ofSeconds(30).toNanos(), expiries::incrementAndGet);
            d.track(call);
            time.advanceTimeBy(Duration.ofMillis(1));
            d.untrack(call);
        }
        assertEquals(0, d.sweeps(), "no sweep before the first deadline");
        time.advanceTimeBy(Duration.ofSeconds(30));
        assertEquals(1, d.sweeps(), "one sweep, at the first deadline");
        time.advanceTimeBy(Duration.ofMinutes(10));
        assertEquals(1, d.sweeps(), "nothing tracked: no further sweep");
        assertEquals(0, expiries.get());
    }

    /**
     * A deadline earlier than the sweep scheduled gets a sweep of its own, within a tick of it;
     * the later one still expires at its own time, never early.
     */
    @Test
    void anEarlierDeadlineTrackedLaterIsNotLate() {
        Deadlines d = onVirtualTime();
        long start = now();
        long[] expiredAt = {-1, -1};
        d.track(at(start + Duration.ofSeconds(30).toNanos(), () -> expiredAt[0] = now()));
        d.track(at(start + Duration.ofSeconds(1).toNanos(), () -> expiredAt[1] = now()));
        time.advanceTimeBy(Duration.ofSeconds(1).plus(Deadlines.TICK));
        assertTrue(expiredAt[1] >= start + Duration.ofSeconds(1).toNanos(), "never early");
        assertTrue(expiredAt[1] <= start + Duration.ofSeconds(1).plus(Deadlines.TICK).toNanos(), "within a tick");
        assertEquals(-1, expiredAt[0]);
        time.advanceTimeBy(Duration.ofSeconds(29));
        assertTrue(expiredAt[0] >= start + Duration.ofSeconds(30).toNanos(), "never early");
        assertEquals(0, d.size());
        assertTrue(d.sweeps() <= 3, d.sweeps() + " sweeps for two deadlines");
    }

    @Test
    void restartsAfterGoingIdle() throws Exception {
        Deadlines d = new Deadlines();
        CountDownLatch first = new CountDownLatch(1);
        d.track(at(System.nanoTime(), first::countDown));
        assertTrue(first.await(5, TimeUnit.SECONDS));
        Thread.sleep(Deadlines.TICK.toMillis() * 120);  // past the idle stop
        CountDownLatch second = new CountDownLatch(1);
        d.track(at(System.nanoTime() + 1_000_000, second::countDown));
        assertTrue(second.await(5, TimeUnit.SECONDS), "a sweep started again");
    }
}
