package io.jrdma.rpc;

import java.lang.foreign.MemorySegment;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceFieldUpdater;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.Exceptions;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Scheduler;
import reactor.util.context.Context;

/**
 * One accepted request on the server, from its handler's start to its outcome: the task that runs
 * the handler on the handler scheduler, the subscriber of the handler's {@code Mono}, and its
 * deadline. One object instead of a worker and an operator chain per call: {@code subscribeOn}
 * created and disposed of a bounded-elastic worker per call, and four operators and their lambdas
 * took the result to the answer (JFR in the lab: the hand-off was a third of the server's time per
 * call). What the call holds and how it is answered is the session's ({@link #finished}).
 * <p>
 * Rules:
 * <ol>
 * <li>A call finishes once: the first of its handler's result or error, its timeout, or a failure
 *     before the handler ran (no handler slot or staging memory, the fetch failing, a payload
 *     whose checksum does not match); every later outcome is ignored. Finishing untracks the
 *     deadline and hands the outcome to {@link #finished}.</li>
 * <li>A handler that throws, returns null or fails answers HANDLER_ERROR; its value, or no value,
 *     answers OK.</li>
 * <li>The timeout is decided before the handler is interrupted: a handler that returns when
 *     interrupted must not get its result in first (the lab saw an expired call answered OK).</li>
 * <li>A timeout interrupts the handler wherever it runs: on a scheduler the user gave, its task is
 *     disposed; on jrdma's pool ({@code handlerPool()}) the call is its own task and cancels itself (it never runs if
 *     it had not started).</li>
 * <li>A task the user's scheduler hands back after the call expired (the deadline passed while
 *     {@code schedule()} ran) is disposed at once: the expiry found no task to interrupt.</li>
 * </ol>
 * {@code ServerCallTest} proves these rules without a device, its expiries called in the orders
 * that matter.
 */
abstract class ServerCall extends HandlerPool.Task implements Deadlines.Tracked, Runnable, CoreSubscriber<byte[]> {
    private static final AtomicReferenceFieldUpdater<ServerCall, Subscription> UPSTREAM =
            AtomicReferenceFieldUpdater.newUpdater(ServerCall.class, Subscription.class, "upstream");
    private static final AtomicReferenceFieldUpdater<ServerCall, Disposable> TASK =
            AtomicReferenceFieldUpdater.newUpdater(ServerCall.class, Disposable.class, "task");
    // a flag as a field, not an AtomicBoolean: an object less per call
    private static final AtomicIntegerFieldUpdater<ServerCall> FINISHED = AtomicIntegerFieldUpdater.newUpdater(ServerCall.class, "finished");
    /** In {@code task} once the call expired, so a task scheduled after that is disposed at once (rule 5). */
    private static final Disposable EXPIRED = () -> { };

    final ServerCore core;
    final RequestHeader header;
    final FunctionRegistry.Function function;
    private RpcRequest request;
    /** A payload fetched by READ: its checksum is checked on the handler's thread before the handler runs. */
    @Nullable MemorySegment fetched;
    private long deadline;
    /** The handler's task on a scheduler the user gave, disposed on expiry (rule 4); {@link #EXPIRED} after it. */
    private volatile @Nullable Disposable task;
    /** The handler's {@code Mono}, cancelled on expiry. */
    private volatile @Nullable Subscription upstream;
    private volatile int finished;
    private int deadlineSlot;  // Deadlines' lock guards it
    /** When the call began, for the server's meters ({@link #begin()}; 0 without metrics). */
    private long started;
    /** The request's context (trace context and the like), empty without one. */
    Map<String, String> context = Map.of();
    /** The call's {@code Observation} with observations on ({@link CallObservations}), else null; an Object, so this class loads without Micrometer. */
    private @Nullable Object observation;

    ServerCall(ServerCore core, RequestHeader header, FunctionRegistry.Function function) {
        this.core = core;
        this.header = header;
        this.function = function;
    }

    /**
     * The outcome, once (rule 1): the session frees what the call holds, records a keyed result
     * or forgets a key that never ran, and answers.
     */
    abstract void finished(RpcStatus status, byte[] payload, boolean executed);

    /** The call was accepted: from here it finishes exactly once (rule 1), and the server's meters count it in flight. */
    final void begin() {
        ServerMeters m = core.meters;
        if (m != null) started = m.begin();
        CallObservations o = core.observations;
        if (o != null) observation = o.serverStart(function.name(), context);
    }

    /** Finishes the call with this outcome, unless it finished already (rule 1). */
    final void finish(RpcStatus status, byte[] payload, boolean executed) {
        finish(status, payload, executed, false);
    }

    private void finish(RpcStatus status, byte[] payload, boolean executed, boolean timedOut) {
        if (!FINISHED.compareAndSet(this, 0, 1)) return;
        core.deadlines.untrack(this);
        ServerMeters m = core.meters;
        if (m != null) m.end(function, started, CallOutcome.of(status, timedOut));
        Object o = observation;
        if (o != null) CallObservations.serverStop(o, function.name(), status, timedOut, payload);
        finished(status, payload, executed);
    }

    /** Starts the handler on {@code request}: its deadline from now, on the handler scheduler. */
    final void start(RpcRequest request) {
        this.request = request;
        deadline = System.nanoTime() + core.handlerTimeoutNanos;
        core.deadlines.track(this);
        Scheduler scheduler = core.settings.scheduler();
        Disposable t;
        try {
            if (scheduler == null) {
                HandlerPool.DEFAULT.execute(this);
                return;
            }
            t = scheduler.schedule(this);
        } catch (RejectedExecutionException e) {
            core.overloaded.increment();
            finish(RpcStatus.OVERLOADED, ServerSession.text("the handler scheduler refused the call: " + e.getMessage()), false);
            return;
        }
        if (!TASK.compareAndSet(this, null, t)) t.dispose();  // expired inside schedule(): interrupted here (rule 5)
    }

    /** The handler ran out of time: cancel it and answer HANDLER_ERROR (it may have had effects). */
    @Override
    public final void expire() {
        Operators.terminate(UPSTREAM, this);  // rule 3: decided before the interrupt
        if (finished == 0) core.handlerErrors.increment();
        finish(RpcStatus.HANDLER_ERROR, ServerSession.text("handler timed out after " + core.settings.handlerTimeout().toMillis()
                + " ms and was cancelled"), true, true);
        Disposable t = TASK.getAndSet(this, EXPIRED);
        if (t != null) t.dispose();
        else cancel();  // the call is its own task on jrdma's pool (elsewhere, not scheduled yet: start() disposes it)
    }

    @Override
    final void execute() {
        run();
    }

    /** On the handler scheduler: checks a fetched payload, calls the handler and subscribes to its result; its observation current meanwhile. */
    @Override
    public final void run() {
        Object o = observation;
        if (o == null) {
            handle();
            return;
        }
        Object scope = CallObservations.openScope(o);
        try {
            handle();
        } finally {
            CallObservations.closeScope(scope);
        }
    }

    private void handle() {
        MemorySegment payload = fetched;
        if (payload != null && Frames.crc32c(payload, 0, payload.byteSize()) != header.payloadCrc()) {
            core.rejected.increment();
            finish(RpcStatus.BAD_REQUEST, ServerSession.text("payload checksum mismatch (fetched " + payload.byteSize() + " bytes)"), false);
            return;
        }
        core.executed.increment();
        if (function.handler() instanceof SynchronousHandler sync) {
            byte[] out;
            try {
                out = sync.apply(request);
            } catch (Throwable e) {
                Exceptions.throwIfJvmFatal(e);
                onError(e);
                return;
            }
            finish(RpcStatus.OK, out == null ? ServerSession.EMPTY : out, true);
            return;
        }
        Mono<byte[]> result;
        try {
            result = Objects.requireNonNull(function.handler().handle(request), "the handler returned null");
        } catch (Throwable e) {
            Exceptions.throwIfJvmFatal(e);
            onError(e);
            return;
        }
        result.subscribe(this);
    }

    /** The handler's {@code Mono} sees the call's observation in its Reactor context, as a tracing-aware operator expects. */
    @Override
    public final Context currentContext() {
        Object o = observation;
        return o == null ? Context.empty() : CallObservations.reactorContext(o);
    }

    @Override
    public final void onSubscribe(Subscription s) {
        if (Operators.setOnce(UPSTREAM, this, s)) s.request(Long.MAX_VALUE);
    }

    @Override
    public final void onNext(byte[] bytes) {
        finish(RpcStatus.OK, bytes, true);
    }

    @Override
    public final void onError(Throwable e) {
        if (finished != 0) return;
        core.handlerErrors.increment();
        finish(RpcStatus.HANDLER_ERROR, ServerSession.text(describe(e)), true);
    }

    @Override
    public final void onComplete() {
        finish(RpcStatus.OK, ServerSession.EMPTY, true);  // no-op after onNext
    }

    private static String describe(Throwable e) {
        return e.getMessage() == null ? e.getClass().getName() : e.getClass().getName() + ": " + e.getMessage();
    }

    @Override
    public final long deadlineNanos() {
        return deadline;
    }

    @Override
    public final int deadlineSlot() {
        return deadlineSlot;
    }

    @Override
    public final void deadlineSlot(int slot) {
        deadlineSlot = slot;
    }
}
