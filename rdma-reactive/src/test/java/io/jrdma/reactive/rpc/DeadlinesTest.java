package io.jrdma.reactive.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class DeadlinesTest {
    private static Deadlines.Tracked at(long deadline, Runnable action) {
        return new Deadlines.Tracked() {
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
