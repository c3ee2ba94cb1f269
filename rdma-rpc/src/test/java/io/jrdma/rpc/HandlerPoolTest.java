package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(30)
class HandlerPoolTest {
    private static final long MINUTE = TimeUnit.MINUTES.toNanos(1);

    private static HandlerPool.Task task(Runnable r) {
        return new HandlerPool.Task() {
            @Override
            void execute() {
                r.run();
            }
        };
    }

    @Test
    void aRunningTaskIsInterruptedWhenCancelledAndTheWorkersNextTaskIsNot() throws Exception {
        HandlerPool pool = new HandlerPool("test", 1, 10, MINUTE);
        CountDownLatch blocked = new CountDownLatch(1);
        CountDownLatch interrupted = new CountDownLatch(1);
        HandlerPool.Task sleeper = task(() -> {
            blocked.countDown();
            try {
                Thread.sleep(20_000);
            } catch (InterruptedException e) {
                interrupted.countDown();
                Thread.currentThread().interrupt();  // left set on purpose: the pool must clear it
            }
        });
        pool.execute(sleeper);
        assertTrue(blocked.await(10, TimeUnit.SECONDS));
        sleeper.cancel();
        assertTrue(interrupted.await(10, TimeUnit.SECONDS), "the blocked task was interrupted");
        AtomicBoolean nextSawInterrupt = new AtomicBoolean(true);
        CountDownLatch next = new CountDownLatch(1);
        pool.execute(task(() -> {
            nextSawInterrupt.set(Thread.currentThread().isInterrupted());
            next.countDown();
        }));
        assertTrue(next.await(10, TimeUnit.SECONDS));
        assertFalse(nextSawInterrupt.get(), "the same worker's next task starts uninterrupted");
        assertEquals(1, pool.threads());
    }

    @Test
    void aTaskCancelledBeforeItStartsNeverRunsAndCancellingAFinishedTaskDoesNothing() throws Exception {
        HandlerPool pool = new HandlerPool("test", 1, 10, MINUTE);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch firstRuns = new CountDownLatch(1);
        pool.execute(task(() -> {
            firstRuns.countDown();
            await(release);
        }));
        assertTrue(firstRuns.await(10, TimeUnit.SECONDS));
        AtomicInteger ran = new AtomicInteger();
        HandlerPool.Task queued = task(ran::incrementAndGet);
        pool.execute(queued);  // the only thread is busy: queued
        queued.cancel();
        CountDownLatch after = new CountDownLatch(1);
        AtomicBoolean afterInterrupted = new AtomicBoolean(true);
        HandlerPool.Task last = task(() -> {
            afterInterrupted.set(Thread.currentThread().isInterrupted());
            after.countDown();
        });
        pool.execute(last);
        release.countDown();
        assertTrue(after.await(10, TimeUnit.SECONDS));
        last.cancel();
        assertEquals(0, ran.get(), "cancelled while queued: never ran");
        assertFalse(afterInterrupted.get());
    }

    @Test
    void aTaskNeverWaitsBehindABlockedOneWhileAThreadMayStartAndTheLastIdleWorkerIsReused() throws Exception {
        HandlerPool pool = new HandlerPool("test", 4, 10, MINUTE);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch blocking = new CountDownLatch(1);
        AtomicReference<Thread> blocker = new AtomicReference<>();
        pool.execute(task(() -> {
            blocker.set(Thread.currentThread());
            blocking.countDown();
            await(release);
        }));
        assertTrue(blocking.await(10, TimeUnit.SECONDS));
        AtomicReference<Thread> first = new AtomicReference<>();
        CountDownLatch ran = new CountDownLatch(1);
        pool.execute(task(() -> {
            first.set(Thread.currentThread());
            ran.countDown();
        }));
        assertTrue(ran.await(10, TimeUnit.SECONDS), "ran beside the blocked task");
        assertNotSame(blocker.get(), first.get());
        for (int i = 0; i < 20; i++) {
            while (!idle(first.get())) Thread.onSpinWait();
            AtomicReference<Thread> again = new AtomicReference<>();
            CountDownLatch done = new CountDownLatch(1);
            pool.execute(task(() -> {
                again.set(Thread.currentThread());
                done.countDown();
            }));
            assertTrue(done.await(10, TimeUnit.SECONDS));
            assertSame(first.get(), again.get(), "handed to the worker that went idle last");
        }
        assertEquals(2, pool.threads(), "no thread beyond the two needed");
        release.countDown();
    }

    @Test
    void aFullQueueRefusesAndIdleWorkersEnd() throws Exception {
        HandlerPool pool = new HandlerPool("test", 1, 1, TimeUnit.MILLISECONDS.toNanos(200));
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        pool.execute(task(() -> {
            started.countDown();
            await(release);
        }));
        assertTrue(started.await(10, TimeUnit.SECONDS));
        CountDownLatch queuedRan = new CountDownLatch(1);
        pool.execute(task(queuedRan::countDown));
        assertThrows(RejectedExecutionException.class, () -> pool.execute(task(() -> { })));
        release.countDown();
        assertTrue(queuedRan.await(10, TimeUnit.SECONDS), "the queued task ran when the thread was free");
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (pool.threads() > 0 && System.nanoTime() < until) Thread.sleep(20);
        assertEquals(0, pool.threads(), "the idle worker ended");
        CountDownLatch later = new CountDownLatch(1);
        pool.execute(task(later::countDown));
        assertTrue(later.await(10, TimeUnit.SECONDS), "a new worker starts after the last ended");
    }

    /**
     * A worker going idle and a submitter handing it a task meet at the worker's {@code handed}
     * field: the worker's take must read and clear it in one step, or a task handed between the
     * read and the clear is lost (its RPC call then times out). Submitters race idle workers here
     * for a few seconds; each task must run.
     */
    @Test
    void everyTaskHandedToAWorkerGoingIdleRuns() throws Exception {
        HandlerPool pool = new HandlerPool("test", 4, 100_000, MINUTE);
        int submitters = 4;
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
        AtomicReference<String> lost = new AtomicReference<>();
        AtomicInteger ran = new AtomicInteger();
        Thread[] threads = new Thread[submitters];
        for (int s = 0; s < submitters; s++) {
            threads[s] = Thread.ofPlatform().start(() -> {
                try {
                    while (System.nanoTime() < until && lost.get() == null) {
                        CountDownLatch done = new CountDownLatch(1);
                        pool.execute(task(() -> {
                            ran.incrementAndGet();
                            done.countDown();
                        }));
                        if (!done.await(5, TimeUnit.SECONDS)) lost.compareAndSet(null, "a task handed to the pool never ran");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
        }
        for (Thread t : threads) t.join(TimeUnit.SECONDS.toMillis(20));
        assertEquals(null, lost.get(), "after " + ran.get() + " tasks");
        assertTrue(ran.get() > 1000, "the race was exercised: " + ran.get() + " tasks");
    }

    private static boolean idle(Thread t) {
        Thread.State s = t.getState();
        return s == Thread.State.TIMED_WAITING || s == Thread.State.WAITING;
    }

    private static void await(CountDownLatch l) {
        try {
            l.await(20, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
