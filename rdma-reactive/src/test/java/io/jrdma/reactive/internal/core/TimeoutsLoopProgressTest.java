package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.OperationTimeoutException;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.test.scheduler.VirtualTimeScheduler;

/**
 * {@link Timeouts}' rule for posted operations, on virtual time without a device: one past its
 * deadline times out only after its loop emptied its CQs in a pass that began after a sweep found it
 * overdue; a loop whose thread is held (no pass) holds such timeouts; waiting operations keep theirs.
 */
class TimeoutsLoopProgressTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Duration RECHECK = Duration.ofNanos(Timeouts.RECHECK_NANOS);

    private final Arena arena = Arena.ofShared();
    private final BufferPool pool = MemoryInternals.get().pool(arena.allocate(4 * 64, 64), 0x11, 0x22, 64, 4, () -> { });
    private final VirtualTimeScheduler clock = VirtualTimeScheduler.create();
    private final List<Integer> slots = new CopyOnWriteArrayList<>();
    private final List<Disposable> subscriptions = new ArrayList<>();
    /** The fake loop: its drained passes, and the tasks asked of it (each asks for a pass). */
    private final AtomicLong passes = new AtomicLong();
    private final List<Runnable> loopTasks = new CopyOnWriteArrayList<>();
    private final Timeouts.LoopProgress loop = new Timeouts.LoopProgress(passes::get, loopTasks::add, "jrdma-loop-test");

    @AfterEach
    void tearDown() {
        subscriptions.forEach(Disposable::dispose);
        clock.dispose();
        arena.close();
    }

    private SendQueue queue(int depth) {
        return SendQueue.forTest(depth, (op, slot) -> slots.add(slot), clock, TIMEOUT, "QP 0x11", loop);
    }

    private List<Object> subscribe(Mono<WorkCompletion> mono) {
        List<Object> signals = new CopyOnWriteArrayList<>();
        subscriptions.add(mono.subscribe(signals::add, signals::add, () -> signals.add("complete")));
        return signals;
    }

    private Op send(SendQueue q, RegisteredBuffer b) {
        return q.operation(SendOpcode.SEND, b, 0, 8);
    }

    /** The loop runs the tasks asked of it, then empties its CQs in {@code n} passes. */
    private void loopPasses(int n) {
        List<Runnable> tasks = List.copyOf(loopTasks);
        loopTasks.clear();
        tasks.forEach(Runnable::run);
        passes.addAndGet(n);
    }

    @Test
    void aPostedOperationPastItsDeadlineTimesOutOnceTheLoopPassedAfterTheSweepFoundIt() {
        SendQueue q = queue(1);
        RegisteredBuffer b = pool.tryAcquire();
        List<Object> signals = subscribe(send(q, b));
        clock.advanceTimeBy(TIMEOUT);
        assertEquals(List.of(), signals, "overdue, but the loop has not looked at its CQs since");
        assertEquals(1, loopTasks.size(), "the sweep asked the loop for a pass");

        loopPasses(1);  // the pass that may have begun before the sweep: not enough
        clock.advanceTimeBy(RECHECK);
        assertEquals(List.of(), signals);

        loopPasses(1);
        clock.advanceTimeBy(RECHECK);
        assertEquals(1, signals.size());
        OperationTimeoutException e = assertInstanceOf(OperationTimeoutException.class, signals.get(0));
        assertTrue(e.getMessage().contains("posted, but no completion came"), e.getMessage());
        b.release();
    }

    @Test
    void whileTheLoopMakesNoPassNothingPostedTimesOutAndItsCompletionEndsTheOperation() {
        SendQueue q = queue(1);
        RegisteredBuffer b = pool.tryAcquire();
        List<Object> signals = subscribe(send(q, b));
        clock.advanceTimeBy(TIMEOUT.multipliedBy(10));
        assertEquals(List.of(), signals, "the loop's thread is held: the wait is this side's, not the peer's");
        assertEquals(1, loopTasks.size(), "one pass asked for while the last is not run");

        // the hold ends: the loop runs its task and, in its next pass, dispatches the completion that was waiting
        loopTasks.removeFirst().run();
        q.complete(slots.get(0), new WorkCompletion(slots.get(0), WcStatus.IBV_WC_SUCCESS, WcOpcode.SEND, 8, false, 0, 0x11, 0));
        passes.addAndGet(2);
        clock.advanceTimeBy(RECHECK);
        assertEquals(2, signals.size());
        assertInstanceOf(WorkCompletion.class, signals.get(0));
        assertEquals("complete", signals.get(1));
        b.release();
    }

    @Test
    void anOperationOverdueAfterAnEarlierOnesPassWaitsForAPassOfItsOwn() {
        SendQueue q = queue(2);
        RegisteredBuffer b = pool.tryAcquire();
        List<Object> first = subscribe(send(q, b));
        clock.advanceTimeBy(TIMEOUT.dividedBy(2));
        List<Object> second = subscribe(send(q, b));
        clock.advanceTimeBy(TIMEOUT.dividedBy(2));
        loopPasses(2);
        clock.advanceTimeBy(RECHECK);
        assertEquals(1, first.size(), "the first timed out after the loop's pass");
        assertEquals(List.of(), second, "the second is not due yet");

        clock.advanceTimeBy(TIMEOUT.dividedBy(2));
        clock.advanceTimeBy(RECHECK.multipliedBy(5));
        assertEquals(List.of(), second, "overdue now, and the loop has made no pass since");
        loopPasses(2);
        clock.advanceTimeBy(RECHECK);
        assertInstanceOf(OperationTimeoutException.class, second.get(0));
        b.release();
    }

    @Test
    void anOperationWaitingForASendSlotTimesOutAtItsDeadlineEvenWhileTheLoopIsHeld() {
        SendQueue q = queue(1);
        RegisteredBuffer b = pool.tryAcquire();
        List<Object> posted = subscribe(send(q, b));
        List<Object> waiting = subscribe(send(q, b));
        clock.advanceTimeBy(TIMEOUT);
        OperationTimeoutException e = assertInstanceOf(OperationTimeoutException.class, waiting.get(0));
        assertTrue(e.getMessage().contains("never posted: no send credit came free"), e.getMessage());
        assertEquals(List.of(), posted, "the posted one waits for the loop");
        b.release();
    }
}
