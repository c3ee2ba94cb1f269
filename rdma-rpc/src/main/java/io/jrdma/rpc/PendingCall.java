package io.jrdma.rpc;

import static io.jrdma.rpc.Frames.REQUEST_HEADER;

import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.scheduler.Schedulers;

/**
 * One attempt of an {@link RpcClient} call, from credit to answer, begun by its subscriber's
 * first request: the I/O of each step, with {@link CallState} deciding under this object's monitor
 * what each event means (what is given back, and whether the caller is told).
 * <p>
 * It is also its caller's {@code Subscription} (a cancel abandons it) and the subscriber of its
 * own SEND: a call allocates no operator, sink or lambda around it.
 */
final class PendingCall extends CallState<RegisteredBuffer> implements Deadlines.Tracked, Subscription, CoreSubscriber<WorkCompletion> {
    private static final AtomicIntegerFieldUpdater<PendingCall> BEGUN = AtomicIntegerFieldUpdater.newUpdater(PendingCall.class, "begun");
    private static final AtomicIntegerFieldUpdater<PendingCall> MEASURED = AtomicIntegerFieldUpdater.newUpdater(PendingCall.class, "measured");

    private final RpcClient client;
    final RpcClient.Request request;
    final int windowBytes;
    final CoreSubscriber<? super byte[]> actual;
    final Duration timeout;
    final int attemptNumber;
    /** The call's only attempt: it counts the call succeeded or failed (else operators around the attempts do). */
    final boolean countsOutcome;
    final long deadline;
    volatile long requestId;
    /** The caller's first request began the call; a cancel ended the caller's interest (nothing is signalled after it). */
    private volatile int begun;
    private volatile boolean cancelled;
    /** With the client's meters, when the call began ({@code countsOutcome} only), and whether its outcome was recorded. */
    private final long started;
    private volatile int measured;
    private int deadlineSlot;  // Deadlines' lock guards it
    // the client's live list; its lock guards these
    @Nullable PendingCall livePrev;
    @Nullable PendingCall liveNext;
    boolean isLive;

    PendingCall(RpcClient client, RpcClient.Request request, int windowBytes, CoreSubscriber<? super byte[]> actual, Duration timeout,
                int attemptNumber, boolean countsOutcome) {
        this.client = client;
        this.countsOutcome = countsOutcome;
        this.request = request;
        this.windowBytes = windowBytes;
        this.actual = actual;
        this.timeout = timeout;
        this.attemptNumber = attemptNumber;
        this.deadline = System.nanoTime() + timeout.toNanos();
        ClientMeters m = client.meters;
        this.started = countsOutcome && m != null ? m.begin() : 0;
    }

    /**
     * Records the call's outcome with the client's meters, once: a cancel that follows the value,
     * or races the answer, is not a second outcome.
     */
    private void measure(CallOutcome outcome) {
        ClientMeters m = client.meters;
        if (countsOutcome && m != null && MEASURED.compareAndSet(this, 0, 1)) m.end(request.function(), started, outcome);
    }

    @Override
    public long deadlineNanos() {
        return deadline;
    }

    @Override
    public int deadlineSlot() {
        return deadlineSlot;
    }

    @Override
    public void deadlineSlot(int slot) {
        deadlineSlot = slot;
    }

    @Override
    public void request(long n) {
        if (n <= 0) {
            if (BEGUN.compareAndSet(this, 0, 1) && !cancelled) {
                failWith(new IllegalArgumentException("request must be positive (rule 3.9): " + n));
            }
            return;
        }
        if (!BEGUN.compareAndSet(this, 0, 1) || cancelled) return;
        client.attempts.increment();
        RpcClient.DEADLINES.track(this);
        start();
    }

    @Override
    public void cancel() {
        measure(CallOutcome.CANCELLED);
        cancelled = true;
        RpcClient.DEADLINES.untrack(this);
        cancelled();
    }

    /** The attempt timed out: like a cancel, and the caller learns why. */
    @Override
    public void expire() {
        if (timedOut()) {  // false if over, or abandoned already (told of a cancel): one terminal signal
            client.timeouts.increment();
            failWith(new RpcException.Timeout(request.function(), timeout, attemptNumber));
        }
    }

    long payloadBytes() {
        return request.remote() ? Frames.align(request.payload().length) : 0;
    }

    private void start() {
        if (!begin()) {  // cancelled meanwhile: given back, maybe before the deadline was tracked
            RpcClient.DEADLINES.untrack(this);
            return;
        }
        Throwable closedBy = client.closedBy;
        if (closedBy != null) {
            lost(closedBy);
            return;
        }
        CreditGate.Waiter w = client.credits.acquire(this::onCredit);
        if (w != null && !waitingForCredit(w)) client.credits.cancel(w);  // lost its race with a withdrawal; granted meanwhile, onCredit() gives it back
    }

    @Override
    void began() {
        client.addLive(this);
    }

    private void onCredit() {
        if (!credited()) {
            client.credits.release();
            return;
        }
        long need = payloadBytes() + windowBytes;
        if (need == 0) {
            onStaging(-1);
            return;
        }
        RangeAllocator.Waiter w;
        try {
            w = client.staging.allocate(need, this::onStaging);
        } catch (IllegalArgumentException e) {
            fail(new RpcException.PayloadTooLarge(request.function(), e.getMessage()));
            return;
        }
        if (w != null && !waitingForStaging(w)) client.staging.cancel(w);
    }

    private void onStaging(long offset) {
        long bytes = payloadBytes() + windowBytes;
        switch (staged(offset, bytes)) {
            case OVER -> {
                if (offset >= 0) client.staging.free(offset, bytes);
                return;
            }
            case BUFFER_GONE -> {  // the connection closed and freed the exposed buffer: only the credit is held
                client.staging.free(offset, bytes);
                fail(new RpcException.ConnectionLost(request.function(), client.closedBy));
                return;
            }
            case READY -> { }
        }
        // a free buffer at once, as nearly always: the acquire Mono and its subscriber cost a sixth of the client's time per call
        RegisteredBuffer b;
        try {
            b = client.connection.buffers().tryAcquire();
        } catch (RuntimeException e) {
            fail(new RpcException.ConnectionLost(request.function(), e));
            return;
        }
        if (b != null) onBuffer(b);
        else client.connection.buffers().acquire().subscribe(this::onBuffer, e -> fail(new RpcException.ConnectionLost(request.function(), e)));
    }

    @Override
    boolean stage(long offset) {
        if (!client.exposed.tryRetain()) return false;
        // copied under the monitor: a withdrawal cannot free the range mid-copy
        if (request.remote()) {
            MemorySegment.copy(request.payload(), 0, client.exposed.segment(), ValueLayout.JAVA_BYTE, offset, request.payload().length);
        }
        return true;
    }

    private void onBuffer(RegisteredBuffer b) {
        try {
            post(b);
        } catch (RuntimeException e) {
            fail(new RpcException.ConnectionLost(request.function(), e));
        } finally {
            b.release();  // the engine holds its own reference until the SEND completes
        }
    }

    @Override
    void send(RegisteredBuffer b) {
        synchronized (client.sendLock) {
            long id = client.nextId();
            requestId = id;
            int length = encode(id, b);
            client.pending.set((int) id & client.pendingMask, this);
            // Subscribed under the lock: the engine queues posts in subscription order, so ids
            // reach the wire in order. A failure may be signalled synchronously, inside these
            // locks; its cleanup frees credits and staging that wake other calls, so it runs
            // on another thread rather than nest their locks inside ours.
            client.connection.send(b, 0, length).subscribe(this);
        }
    }

    private int encode(long id, RegisteredBuffer b) {
        RpcClient.Request r = request;
        byte[] context = r.context();
        int flags = (r.remote() ? RequestHeader.REMOTE_PAYLOAD : 0) | (r.key() != null ? RequestHeader.KEYED : 0)
                | (windowBytes > 0 ? RequestHeader.WINDOW : 0) | (context != null ? RequestHeader.CONTEXT : 0);
        long base = client.exposed == null ? 0 : client.exposed.address();
        int rkey = client.exposedRkey;
        long payloadAddress = r.remote() ? base + stagingOffset : 0;
        long windowAddress = windowBytes > 0 ? base + stagingOffset + payloadBytes() : 0;
        RequestHeader h = new RequestHeader(flags, r.functionId(), id, r.key(), r.payload().length, r.payloadCrc(), payloadAddress,
                r.remote() ? rkey : 0, client.connection.config().bufferSize(), windowAddress, windowBytes > 0 ? rkey : 0, windowBytes);
        h.encode(b.segment(), 0, context);
        int at = REQUEST_HEADER + (context == null ? 0 : context.length);
        if (r.remote()) return at;
        MemorySegment.copy(r.payload(), 0, b.segment(), ValueLayout.JAVA_BYTE, at, r.payload().length);
        return at + r.payload().length;
    }

    /** Out of the table of posted requests, if it is there. */
    private void unpend() {
        long id = requestId;
        if (id != 0) client.pending.compareAndSet((int) id & client.pendingMask, this, null);
    }

    /** The answer WRITE_WITH_IMM put into this request's window (valid: it is still reserved). */
    ResponseHeader.Frame readWindow() {
        synchronized (this) {
            if (state != State.SENT || windowBytes == 0) return new ResponseHeader.Frame(null, null, "no window for this request");
            MemorySegment w = client.exposed.segment().asSlice(stagingOffset + payloadBytes(), windowBytes);
            return ResponseHeader.decode(w, windowBytes, false);
        }
    }

    private void sendFailed(Throwable e) {
        unpend();
        fail(new RpcException.ConnectionLost(request.function(), e));
    }

    // the SEND's subscriber: only its failure matters

    @Override
    public void onSubscribe(Subscription s) {
        s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(WorkCompletion wc) {
    }

    @Override
    public void onError(Throwable e) {
        Schedulers.parallel().schedule(() -> sendFailed(e));
    }

    @Override
    public void onComplete() {
    }

    void onAnswer(ResponseHeader.Frame f) {
        switch (answered()) {
            case OVER -> {
                return;
            }
            case LATE -> {  // cancelled or timed out: the caller has its answer
                client.lateResponses.increment();
                return;
            }
            case TELL -> { }
        }
        String function = request.function();
        if (!f.ok()) {
            failWith(new RpcException.Protocol(function + ": " + f.error()));
            return;
        }
        byte[] payload = f.payload();
        if (f.header().status() == RpcStatus.OK) {
            succeed(payload);
            return;
        }
        String text = new String(payload, StandardCharsets.UTF_8);
        switch (f.header().status()) {
            case UNKNOWN_FUNCTION -> failWith(new RpcException.UnknownFunction(function));
            case HANDLER_ERROR -> failWith(new RpcException.HandlerFailed(function, text));
            case BAD_REQUEST -> failWith(new RpcException.BadRequest(function, text));
            case OVERLOADED -> failWith(new RpcException.Overloaded(function, text));
            case ALREADY_EXECUTED -> failWith(new RpcException.AlreadyExecuted(function));
            case RESPONSE_TOO_LARGE -> failWith(new RpcException.ResponseTooLarge(function,
                    payload.length >= 8 ? ByteBuffer.wrap(payload).getLong() : -1, windowBytes));
        }
    }

    private void succeed(byte[] payload) {
        if (countsOutcome) client.succeeded.increment();
        measure(CallOutcome.SUCCESS);
        if (cancelled) return;
        actual.onNext(payload);
        actual.onComplete();
    }

    private void failWith(Throwable e) {
        if (countsOutcome) client.failed.increment();
        measure(CallOutcome.of(e));
        if (!cancelled) actual.onError(e);
    }

    void lost(Throwable cause) {
        unpend();
        if (ended()) failWith(new RpcException.ConnectionLost(request.function(), cause));
    }

    /** Fails the call, unless it is over or its caller was told already (a timeout, a cancel): one terminal signal. */
    private void fail(RpcException e) {
        if (ended()) failWith(e);
    }

    @Override
    void giveBack(boolean credit, long offset, long bytes, CreditGate.@Nullable Waiter cw, RangeAllocator.@Nullable Waiter sw) {
        client.removeLive(this);
        RpcClient.DEADLINES.untrack(this);
        if (cw != null) client.credits.cancel(cw);  // granted meanwhile? onCredit() sees DONE and returns it
        if (sw != null) client.staging.cancel(sw);  // likewise onStaging()
        if (offset >= 0) {
            client.staging.free(offset, bytes);
            client.exposed.release();
        }
        if (credit) client.credits.release();
    }
}
