package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * ServerCall's rules (its Javadoc) without a device or a clock: the deadline's expiry is called
 * at the moments that matter, the handler scheduler is a stub that says when a task was scheduled
 * and whether it was disposed (what interrupts a handler on a Reactor scheduler), and the
 * session's part of finishing is a record of the answers.
 */
@Timeout(30)
class ServerCallTest {
    /** A call whose session records its answers. */
    private static final class Call extends ServerCall {
        final List<String> answers = new CopyOnWriteArrayList<>();

        Call(ServerCore core, RpcHandler handler) {
            super(core, new RequestHeader(0, Frames.functionId("f"), 1, null, 0, 0, 0, 0, 4096, 0, 0, 0),
                    new FunctionRegistry.Function("f", Frames.functionId("f"), handler));
        }

        @Override
        void finished(RpcStatus status, byte[] payload, boolean executed) {
            answers.add(status + (executed ? "" : " (not executed)") + (payload.length == 0 ? "" : ": " + new String(payload, StandardCharsets.UTF_8)));
        }
    }

    /** A handler scheduler that hands {@code schedule} to a function of the task, and a task whose disposal is seen. */
    private static final class StubScheduler implements Scheduler {
        Function<Runnable, Disposable> onSchedule = task -> () -> { };

        @Override
        public Disposable schedule(Runnable task) {
            return onSchedule.apply(task);
        }

        @Override
        public Worker createWorker() {
            throw new UnsupportedOperationException("a call schedules its task, it makes no worker");
        }
    }

    /** A scheduled task; {@code dispose()} stands for the interrupt of a running handler. */
    private static final class Task implements Disposable {
        final AtomicBoolean disposed = new AtomicBoolean();
        Runnable onDispose = () -> { };

        @Override
        public void dispose() {
            disposed.set(true);
            onDispose.run();
        }

        @Override
        public boolean isDisposed() {
            return disposed.get();
        }
    }

    private final StubScheduler scheduler = new StubScheduler();

    private ServerCore core(@Nullable Scheduler handlerScheduler) {
        return core(handlerScheduler, null);
    }

    private static ServerCore core(@Nullable Scheduler handlerScheduler, @Nullable ServerMeters meters) {
        return new ServerCore(FunctionRegistry.of(Map.of("f", RpcHandler.of(r -> new byte[0]))),
                new RpcServer.Settings(256, Duration.ofSeconds(30), handlerScheduler, 4L << 20, 1024, 1L << 20, Duration.ofMinutes(5)), meters);
    }

    private static final String TIMED_OUT = "HANDLER_ERROR: handler timed out after 30000 ms and was cancelled";

    @Test
    void aDeadlinePassingInsideScheduleStillInterruptsTheHandler() {
        Task task = new Task();
        Call[] call = new Call[1];
        scheduler.onSchedule = t -> {
            call[0].expire();  // the sweep fired while schedule() ran: no task to interrupt yet
            return task;
        };
        call[0] = new Call(core(scheduler), RpcHandler.of(r -> new byte[0]));
        call[0].start(RpcRequest.of("f", new byte[0]));
        assertTrue(task.isDisposed(), "the task schedule() returned after the expiry is disposed: the handler is interrupted");
        assertEquals(List.of(TIMED_OUT), call[0].answers);
    }

    @Test
    void aTimeoutDisposesTheScheduledTaskAndAnswersOnce() {
        Task task = new Task();
        scheduler.onSchedule = t -> task;
        ServerCore core = core(scheduler);
        Call call = new Call(core, RpcHandler.of(r -> new byte[0]));
        call.start(RpcRequest.of("f", new byte[0]));
        assertFalse(task.isDisposed());
        call.expire();
        call.expire();
        assertTrue(task.isDisposed());
        assertEquals(List.of(TIMED_OUT), call.answers);
        assertEquals(1, core.handlerErrors.sum());
    }

    @Test
    void theTimeoutIsDecidedBeforeTheInterruptSoAHandlerReturningThenIsNotAnswered() {
        Task task = new Task();
        scheduler.onSchedule = t -> task;
        Call call = new Call(core(scheduler), r -> Mono.never());
        task.onDispose = () -> call.onNext("returned when interrupted".getBytes(StandardCharsets.UTF_8));
        call.start(RpcRequest.of("f", new byte[0]));
        call.run();  // the scheduler runs it: the handler's Mono is subscribed and never signals
        call.expire();
        assertTrue(task.isDisposed());
        assertEquals(List.of(TIMED_OUT), call.answers);
    }

    @Test
    void aResultThenTheTimeoutAnswersTheResultOnce() {
        scheduler.onSchedule = t -> {
            t.run();  // a scheduler that runs the task at once
            return new Task();
        };
        ServerCore core = core(scheduler);
        Call call = new Call(core, RpcHandler.of(r -> "ok".getBytes(StandardCharsets.UTF_8)));
        call.start(RpcRequest.of("f", new byte[0]));
        call.expire();  // the sweep took the deadline before the finish untracked it
        assertEquals(List.of("OK: ok"), call.answers);
        assertEquals(0, core.handlerErrors.sum());
        assertEquals(1, core.executed.sum());
    }

    @Test
    void onTheDefaultPoolAnExpiredCallThatHadNotStartedNeverRuns() {
        AtomicInteger ran = new AtomicInteger();
        Call call = new Call(core(null), RpcHandler.of(r -> {
            ran.incrementAndGet();
            return new byte[0];
        }));
        call.expire();  // before any worker took it
        call.runOn(Thread.currentThread());  // a worker takes it now
        assertEquals(0, ran.get());
        assertEquals(List.of(TIMED_OUT), call.answers);
    }

    @Test
    void aHandlerThatThrowsAnswersHandlerErrorOnce() {
        scheduler.onSchedule = t -> {
            t.run();
            return new Task();
        };
        ServerCore core = core(scheduler);
        Call call = new Call(core, RpcHandler.of(r -> {
            throw new IllegalStateException("no");
        }));
        call.start(RpcRequest.of("f", new byte[0]));
        call.onComplete();
        call.expire();
        assertEquals(List.of("HANDLER_ERROR: java.lang.IllegalStateException: no"), call.answers);
        assertEquals(1, core.handlerErrors.sum());
    }

    @Test
    void aFetchedPayloadWhoseChecksumDoesNotMatchIsRefusedBeforeTheHandlerRuns() {
        AtomicInteger ran = new AtomicInteger();
        ServerCore core = core(scheduler);
        Call call = new Call(core, RpcHandler.of(r -> {
            ran.incrementAndGet();
            return new byte[0];
        }));
        call.fetched = MemorySegment.ofArray(new byte[] {1, 2, 3});  // the header's CRC is 0
        call.start(RpcRequest.of("f", new byte[] {1, 2, 3}));
        call.run();
        assertEquals(0, ran.get());
        assertEquals(List.of("BAD_REQUEST (not executed): payload checksum mismatch (fetched 3 bytes)"), call.answers);
        assertEquals(1, core.rejected.sum());
    }
}
