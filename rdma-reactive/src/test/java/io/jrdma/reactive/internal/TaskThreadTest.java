package io.jrdma.reactive.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.internal.TaskThread.AfterStop;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.util.Loggers;

/**
 * The rules of {@link TaskThread}'s Javadoc, on a thread whose own wait is a semaphore: no device,
 * no fd. Its wait is long (30 s), so what a test sees within its timeout was woken by a wake().
 */
@Timeout(60)
class TaskThreadTest {
    private static final Duration LONG = Duration.ofSeconds(30);

    /** A task thread waiting on a semaphore, as the loop waits on its channels. */
    static final class SemaphoreThread extends TaskThread {
        final Semaphore wakeups = new Semaphore(0);
        final Semaphore asleep = new Semaphore(0);
        final AtomicInteger wakes = new AtomicInteger();
        final AtomicInteger sleeps = new AtomicInteger();
        final AtomicInteger passes = new AtomicInteger();
        final List<String> events = Collections.synchronizedList(new ArrayList<>());
        final AtomicReference<@Nullable Throwable> releasedOn = new AtomicReference<>();
        volatile boolean released;
        /** True while release() runs: a task that sees it ran beside the release. */
        volatile boolean releasing;
        /** How long release() takes: long enough for late submitters to arrive while it runs. */
        volatile long releaseNanos;
        volatile boolean idle = true;
        volatile boolean failTheWait;
        /** The test ends the waits itself: a wake is only counted. */
        volatile boolean holdWakes;
        volatile Runnable beforeStop = () -> { };

        SemaphoreThread(String name, AfterStop afterStop) {
            super(name, true, Loggers.getLogger(TaskThreadTest.class), "the test goes on", afterStop);
            start();
        }

        @Override
        protected void serve() throws InterruptedException {
            while (true) {
                passes.incrementAndGet();
                runTasks();
                if (stopRequested() && idle) {
                    beforeStop.run();
                    if (tryStop()) return;
                }
                if (!beginSleep()) continue;
                try {
                    sleeps.incrementAndGet();
                    asleep.release();
                    wakeups.tryAcquire(LONG.toMillis(), TimeUnit.MILLISECONDS);
                    wakeups.drainPermits();  // several wakes before one wait are one, as an eventfd's
                    if (failTheWait) throw new IllegalStateException("the wait failed");
                } finally {
                    endSleep();
                }
            }
        }

        @Override
        protected void wake() {
            wakes.incrementAndGet();
            if (!holdWakes) wakeups.release();
        }

        @Override
        protected void release(@Nullable Throwable failure) {
            releasing = true;
            events.add("release");
            releasedOn.set(failure);
            long end = System.nanoTime() + releaseNanos;
            while (System.nanoTime() - end < 0) Thread.onSpinWait();
            released = true;
            releasing = false;
        }

        Runnable record(String event) {
            return () -> events.add(event);
        }

        void stop() {
            requestStop().block(LONG);
        }

        void awaitAsleep() throws InterruptedException {
            assertTrue(asleep.tryAcquire(LONG.toMillis(), TimeUnit.MILLISECONDS), "the thread went to sleep");
        }
    }

    @Test
    void tasksRunOnTheThreadOneAtATimeInTheOrderEachSubmitterHandedThemOver() throws Exception {
        SemaphoreThread t = new SemaphoreThread("task-thread-order", AfterStop.REFUSED);
        int submitters = 4;
        int each = 2_000;
        AtomicInteger running = new AtomicInteger();
        AtomicBoolean overlap = new AtomicBoolean();
        AtomicBoolean offThread = new AtomicBoolean();
        int[] next = new int[submitters];
        AtomicBoolean outOfOrder = new AtomicBoolean();
        CountDownLatch done = new CountDownLatch(submitters * each);
        List<Thread> threads = new ArrayList<>();
        for (int s = 0; s < submitters; s++) {
            int submitter = s;
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < each; i++) {
                    int seq = i;
                    t.execute(() -> {
                        if (running.incrementAndGet() != 1) overlap.set(true);
                        if (!t.inThread()) offThread.set(true);
                        if (next[submitter]++ != seq) outOfOrder.set(true);
                        running.decrementAndGet();
                        done.countDown();
                    });
                }
            }));
        }
        for (Thread th : threads) th.join();
        assertTrue(done.await(LONG.toMillis(), TimeUnit.MILLISECONDS), "every task ran");
        assertFalse(overlap.get(), "two tasks at once");
        assertFalse(offThread.get(), "a task off the thread");
        assertFalse(outOfOrder.get(), "a submitter's tasks out of order");
        t.stop();
    }

    @Test
    void aTaskThatThrowsIsLoggedAndTheTasksAfterItRun() throws Exception {
        SemaphoreThread t = new SemaphoreThread("task-thread-throws", AfterStop.REFUSED);
        CountDownLatch after = new CountDownLatch(1);
        t.execute(() -> {
            throw new IllegalStateException("a failing task (expected in the log)");
        });
        t.execute(after::countDown);
        assertTrue(after.await(LONG.toMillis(), TimeUnit.MILLISECONDS));
        t.stop();
    }

    @Test
    void theWakeupIsCalledOncePerSleepByTheFirstSubmitterToSeeItAsleep() throws Exception {
        SemaphoreThread t = new SemaphoreThread("task-thread-wakeup", AfterStop.REFUSED);
        t.holdWakes = true;
        t.awaitAsleep();
        CountDownLatch ran = new CountDownLatch(100);
        for (int i = 0; i < 100; i++) t.execute(ran::countDown);
        assertEquals(1, t.wakes.get(), "100 tasks handed to a sleeping thread: one wake");
        t.holdWakes = false;
        t.wakeups.release();  // what the one wake did
        assertTrue(ran.await(LONG.toMillis(), TimeUnit.MILLISECONDS));
        t.stop();
    }

    @Test
    void aTaskHandedOverWhileTheThreadIsAwakeOrByTheThreadItselfWakesNothing() throws Exception {
        SemaphoreThread t = new SemaphoreThread("task-thread-awake", AfterStop.REFUSED);
        t.awaitAsleep();
        CountDownLatch busy = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        t.execute(() -> {
            busy.countDown();
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(busy.await(LONG.toMillis(), TimeUnit.MILLISECONDS));
        int wakes = t.wakes.get();
        CountDownLatch ran = new CountDownLatch(51);
        for (int i = 0; i < 50; i++) t.execute(ran::countDown);  // while it runs a task: no wake, it looks at the queue next
        t.execute(() -> t.execute(ran::countDown));  // and one the thread hands itself
        release.countDown();
        assertTrue(ran.await(LONG.toMillis(), TimeUnit.MILLISECONDS));
        assertEquals(wakes, t.wakes.get());
        t.stop();
    }

    @Test
    void aTaskHandedToAStoppedRefusingThreadIsRefusedAndNeverRuns() {
        SemaphoreThread t = new SemaphoreThread("task-thread-refused", AfterStop.REFUSED);
        t.stop();
        AtomicBoolean ran = new AtomicBoolean();
        assertThrows(RejectedExecutionException.class, () -> t.execute(() -> ran.set(true)));
        assertFalse(ran.get());
    }

    @Test
    void aTaskHandedToAStoppedThreadRunsOnItsSubmitterAfterTheReleaseAndItsOwnTasksAfterIt() {
        SemaphoreThread t = new SemaphoreThread("task-thread-late", AfterStop.RUN_BY_SUBMITTER);
        t.stop();
        List<String> seen = new ArrayList<>();
        t.execute(() -> {
            seen.add("first, on " + (t.inThread() ? "the thread's stand-in" : "another thread") + (t.released ? ", released" : ""));
            t.execute(() -> seen.add("second"));  // not nested: after the first, as on the thread
            seen.add("first done");
        });
        assertEquals(List.of("first, on the thread's stand-in, released", "first done", "second"), seen, "all before execute returned");
        assertFalse(t.inThread());
    }

    @Test
    void lateTasksFromManySubmittersRunOneAtATime() throws Exception {
        SemaphoreThread t = new SemaphoreThread("task-thread-late-many", AfterStop.RUN_BY_SUBMITTER);
        t.stop();
        AtomicInteger running = new AtomicInteger();
        AtomicBoolean overlap = new AtomicBoolean();
        AtomicInteger ran = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int s = 0; s < 4; s++) {
            threads.add(Thread.ofPlatform().start(() -> {
                for (int i = 0; i < 5_000; i++) {
                    t.execute(() -> {
                        if (running.incrementAndGet() != 1) overlap.set(true);
                        ran.incrementAndGet();
                        running.decrementAndGet();
                    });
                }
            }));
        }
        for (Thread th : threads) th.join();
        assertEquals(20_000, ran.get(), "every late task ran by the time its submitters returned");
        assertFalse(overlap.get(), "two late tasks at once");
    }

    @Test
    void everyTaskHandedOverAsTheThreadStopsIsRunBeforeTheReleaseOrRefusedNeverDropped() throws Exception {
        for (int round = 0; round < 20; round++) {
            SemaphoreThread t = new SemaphoreThread("task-thread-race-" + round, AfterStop.REFUSED);
            AtomicInteger handed = new AtomicInteger();
            AtomicInteger refused = new AtomicInteger();
            AtomicInteger ran = new AtomicInteger();
            AtomicBoolean ranAfterRelease = new AtomicBoolean();
            handOverWhileStopping(t, () -> {
                handed.incrementAndGet();
                try {
                    t.execute(() -> {
                        if (t.released) ranAfterRelease.set(true);
                        ran.incrementAndGet();
                    });
                    return true;
                } catch (RejectedExecutionException e) {
                    refused.incrementAndGet();
                    return false;
                }
            });
            assertEquals(handed.get(), ran.get() + refused.get(), "round " + round + ": each task run or refused");
            assertFalse(ranAfterRelease.get(), "round " + round + ": a refusing thread runs nothing after its release");
        }
    }

    @Test
    void everyTaskHandedOverAsALoopLikeThreadStopsRunsOnceAndNeverBesideAnotherOrItsRelease() throws Exception {
        for (int round = 0; round < 20; round++) {
            SemaphoreThread t = new SemaphoreThread("task-thread-late-race-" + round, AfterStop.RUN_BY_SUBMITTER);
            t.releaseNanos = 2_000_000;
            AtomicInteger handed = new AtomicInteger();
            AtomicInteger ran = new AtomicInteger();
            AtomicInteger running = new AtomicInteger();
            AtomicBoolean overlap = new AtomicBoolean();
            handOverWhileStopping(t, () -> {
                handed.incrementAndGet();
                t.execute(() -> {
                    if (running.incrementAndGet() != 1 || t.releasing) overlap.set(true);
                    ran.incrementAndGet();
                    running.decrementAndGet();
                });
                return true;
            });
            assertEquals(handed.get(), ran.get(), "round " + round + ": every task ran by the time its submitter returned");
            assertFalse(overlap.get(), "round " + round + ": two at once, or one beside the release");
        }
    }

    @Test
    void aTaskQueuedAsTheThreadDecidesToStopMakesItGoOnAndRunIt() throws Exception {
        SemaphoreThread t = new SemaphoreThread("task-thread-go-on", AfterStop.REFUSED);
        AtomicBoolean ran = new AtomicBoolean();
        AtomicBoolean once = new AtomicBoolean();
        t.beforeStop = () -> {
            if (!once.compareAndSet(false, true)) return;
            // another thread's task, queued between the thread's idle check and its decision
            Thread submitter = Thread.ofPlatform().start(() -> t.execute(() -> ran.set(true)));
            try {
                submitter.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        };
        t.stop();
        assertTrue(ran.get(), "accepted, so run before the thread stopped");
        assertEquals(List.of("release"), t.events);
    }

    @Test
    void aStopRequestMakesTheThreadLookAtItsStopConditionOnceThenSleepAgainWhileNotIdle() throws Exception {
        SemaphoreThread t = new SemaphoreThread("task-thread-not-idle", AfterStop.REFUSED);
        t.awaitAsleep();
        t.idle = false;
        int passes = t.passes.get();
        var stopped = t.requestStop().toFuture();
        t.awaitAsleep();  // woken by the request, it found itself busy and went back to sleep
        Thread.sleep(200);
        assertTrue(t.passes.get() - passes <= 3, "no spinning while it waits to be idle: " + (t.passes.get() - passes) + " passes");
        assertFalse(stopped.isDone());
        t.execute(() -> t.idle = true);
        stopped.get(LONG.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Test
    void aThreadThatStopsOnAnErrorRunsTheTasksQueuedBeforeThenReleases() throws Exception {
        SemaphoreThread t = new SemaphoreThread("task-thread-error", AfterStop.REFUSED);
        t.awaitAsleep();
        t.failTheWait = true;
        t.execute(t.record("queued before the error"));  // wakes it: the wait fails
        await(() -> t.released);
        t.stop();
        assertEquals(List.of("queued before the error", "release"), t.events);
        Throwable failure = t.releasedOn.get();
        assertTrue(failure instanceof IllegalStateException, "the release is told why: " + failure);
        assertThrows(RejectedExecutionException.class, () -> t.execute(() -> { }));
    }

    @Test
    void aStoppedThreadsStopCompletesAtOnce() {
        SemaphoreThread t = new SemaphoreThread("task-thread-stop-twice", AfterStop.RUN_BY_SUBMITTER);
        t.stop();
        t.stop();
        assertEquals(List.of("release"), t.events, "released once");
    }

    /** Three threads hand tasks over ({@code handOne}, 20,000 times each or until it returns false) while the test stops {@code t}. */
    private static void handOverWhileStopping(SemaphoreThread t, BooleanSupplier handOne) throws InterruptedException {
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        for (int s = 0; s < 3; s++) {
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    go.await();
                } catch (InterruptedException e) {
                    return;
                }
                for (int i = 0; i < 20_000 && handOne.getAsBoolean(); i++) {
                    // handOne hands one over
                }
            }));
        }
        go.countDown();
        t.stop();
        for (Thread th : threads) th.join();
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + LONG.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) throw new AssertionError("not within " + LONG);
            Thread.sleep(5);
        }
    }
}
