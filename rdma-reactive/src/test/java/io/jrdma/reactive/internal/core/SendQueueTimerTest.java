package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.OperationTimeoutException;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.ffm.WcStatus;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * The send queue's timeout sweep on the timer: a destroyed connection's queue leaves no task
 * there (a task would hold the connection until its deadline), whatever raced the destroy, and
 * the sweep re-arms for the earliest deadline left. On virtual time and without a device
 * ({@link SendQueueHarness}).
 */
class SendQueueTimerTest extends SendQueueHarness {
    @Test
    void aDestroyedConnectionsQueueLeavesNoSweepOnTheTimer() {
        // the sweep task holds the queue, and through its poster the connection: left on the timer it kept every
        // closed connection's objects reachable for the operation timeout (ConnectCycleTest counted them in the lab)
        List<Disposable> pending = new CopyOnWriteArrayList<>();
        reactor.core.scheduler.Scheduler timer = countingTimer(pending);
        SendQueue q = SendQueue.forTest(1, (op, slot) -> slots.add(slot), timer, TIMEOUT, "QP 0x11");
        RegisteredBuffer b = pool.tryAcquire();
        subscribe(send(q, b));
        assertEquals(1, pending.size(), "a posted operation armed the sweep");
        q.complete(slots.get(0), wc(slots.get(0), WcStatus.IBV_WC_SUCCESS));
        ConnectionException.Closed reason = new ConnectionException.Closed("QP 0x11 closed locally");
        q.close(() -> reason, reason);
        q.drain();
        q.failInFlight(reason);  // what the connection's destroy() does once the QP is gone
        assertEquals(List.of(), pending, "no task left on the timer");
        b.release();
    }

    /** {@link #clock}, counting the tasks scheduled with a delay that neither ran nor were disposed in {@code pending}. */
    private reactor.core.scheduler.Scheduler countingTimer(List<Disposable> pending) {
        return countingTimer(pending, () -> { });
    }

    /** {@link #countingTimer(List)}, running {@code beforeSchedule} as each task with a delay is handed to it. */
    private reactor.core.scheduler.Scheduler countingTimer(List<Disposable> pending, Runnable beforeSchedule) {
        return new reactor.core.scheduler.Scheduler() {
            @Override
            public Disposable schedule(Runnable task) {
                return clock.schedule(task);
            }

            @Override
            public Disposable schedule(Runnable task, long delay, java.util.concurrent.TimeUnit unit) {
                beforeSchedule.run();
                Disposable[] self = new Disposable[1];
                self[0] = clock.schedule(() -> {
                    pending.remove(self[0]);
                    task.run();
                }, delay, unit);
                pending.add(self[0]);
                return () -> {
                    pending.remove(self[0]);
                    self[0].dispose();
                };
            }

            @Override
            public long now(java.util.concurrent.TimeUnit unit) {
                return clock.now(unit);
            }

            @Override
            public Worker createWorker() {
                return clock.createWorker();
            }
        };
    }

    /**
     * A post made during a sweep (a retry from a timeout's signal) arms a second sweep beside the
     * sweep's own re-arm; destroying the connection takes both off the timer (one of them was left
     * there, holding the destroyed connection until its deadline).
     */
    @Test
    void aDestroyedConnectionsQueueLeavesNoSweepOnTheTimerAlsoWhenAPostDuringASweepArmedASecond() {
        List<Disposable> pending = new CopyOnWriteArrayList<>();
        SendQueue q = SendQueue.forTest(3, (op, slot) -> slots.add(slot), countingTimer(pending), TIMEOUT, "QP 0x11");
        RegisteredBuffer b = pool.tryAcquire();
        subscriptions.add(send(q, b).subscribe(null, e -> subscribe(send(q, b))));  // times out at 30 s, posts again from its error
        clock.advanceTimeBy(Duration.ofSeconds(10));
        subscribe(send(q, b));  // times out at 40 s
        clock.advanceTimeBy(Duration.ofSeconds(20));  // the sweep at 30 s: the retry arms one (60 s), the sweep its own (40 s)
        assertEquals(2, pending.size(), "two sweeps armed");
        ConnectionException.Closed reason = new ConnectionException.Closed("QP 0x11 closed locally");
        q.close(() -> reason, reason);
        q.drain();
        q.failInFlight(reason);
        assertEquals(List.of(), pending, "no task left on the timer");
    }

    /**
     * The connection is destroyed on the loop while a sweep re-arms on the timer's thread: the
     * destroy's cancel runs after the re-arm looked (not cancelled yet) and before the timer
     * returned its task, so the cancel cannot see that task; the re-arm then takes it off itself.
     */
    @Test
    void aDestroyedConnectionsQueueLeavesNoSweepOnTheTimerWhenTheDestroyRacesASweepsReArm() {
        List<Disposable> pending = new CopyOnWriteArrayList<>();
        SendQueue[] queue = new SendQueue[1];
        ConnectionException.Closed reason = new ConnectionException.Closed("QP 0x11 closed locally");
        int[] armings = new int[1];
        reactor.core.scheduler.Scheduler timer = countingTimer(pending, () -> {
            if (++armings[0] == 2) {  // the sweep's re-arm: the destroy comes in between
                queue[0].close(() -> reason, reason);
                queue[0].failInFlight(reason);
            }
        });
        SendQueue q = queue[0] = SendQueue.forTest(1, (op, slot) -> slots.add(slot), timer, TIMEOUT, "QP 0x11");
        RegisteredBuffer b = pool.tryAcquire();
        List<Object> first = subscribe(send(q, b));  // posted, times out at 30 s
        clock.advanceTimeBy(Duration.ofSeconds(10));
        List<Object> second = subscribe(send(q, b));  // waits for the credit, times out at 40 s
        clock.advanceTimeBy(Duration.ofSeconds(20));  // the sweep at 30 s re-arms for 40 s
        assertEquals(2, armings[0], "the sweep re-armed");
        assertInstanceOf(OperationTimeoutException.class, first.get(0));
        assertEquals(List.of(), pending, "no task left on the timer");
        q.drain();  // what the close's drain on the loop does: the waiting one fails with the closure
        assertEquals(List.of(reason), second);
        assertEquals(1, b.refCount(), "both operations gave their buffers back");
    }

    /**
     * The sweep re-arms for the earliest deadline left, even when a post made during the sweep
     * armed the timer first, for its own, later deadline: here the subscriber of the operation
     * that times out posts again from its error (a retry), inside the sweep. The operation posted
     * in between must still time out at its own deadline, not a whole timeout later.
     */
    @Test
    void anOperationTimesOutAtItsDeadlineWhenARetryPostedDuringTheSweepArmedALaterOne() {
        SendQueue q = queue(3);
        RegisteredBuffer b = pool.tryAcquire();
        List<Object> retried = new CopyOnWriteArrayList<>();
        subscriptions.add(send(q, b).subscribe(null, e -> subscribe(send(q, b)).forEach(retried::add)));  // times out at 30 s
        clock.advanceTimeBy(Duration.ofSeconds(10));
        List<Object> second = subscribe(send(q, b));  // times out at 40 s
        clock.advanceTimeBy(Duration.ofSeconds(20));  // 30 s: the first times out and its retry posts (deadline 60 s)
        assertEquals(3, posted.size(), "the retry was posted during the sweep");
        clock.advanceTimeBy(Duration.ofSeconds(10));  // 40 s
        assertEquals(1, second.size(), "the second operation timed out at its deadline, 40 s, not at the retry's 60 s");
        assertTrue(second.get(0) instanceof OperationTimeoutException, String.valueOf(second));
    }
}
