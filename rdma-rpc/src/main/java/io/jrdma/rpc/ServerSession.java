package io.jrdma.rpc;

import static io.jrdma.rpc.Frames.RESPONSE_HEADER;

import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The server side of one connection: validates each received frame, fetches large payloads,
 * runs the function on the handler scheduler (off the poller thread unless it is immediate) and answers.
 * <p>
 * Credits: a request's receive buffer is posted again only when its call is finished, just
 * before the answer is posted. A client that never has more calls outstanding than the server's
 * receive queue depth (what the hello announces) therefore always finds a RECV posted, and a
 * slow server slows its clients down instead of dropping requests.
 */
final class ServerSession {
    static final byte[] EMPTY = new byte[0];
    private static final int MAX_ERROR_TEXT = 1024;
    // flags as fields, not AtomicBooleans: two objects less per call
    private static final AtomicIntegerFieldUpdater<Frame> FRAME_DONE = AtomicIntegerFieldUpdater.newUpdater(Frame.class, "done");
    /**
     * Payloads are fetched in READs of this size, a few at a time. One READ's responses go out
     * unpaced, and rxe loses long bursts: a single 1 MiB READ took 2.3 s in the lab (perftest's
     * ib_read_lat -s 1048576 too, 0.4 MiB/s), 64 KiB READs four at a time 34 ms for the same MiB.
     * On hardware the pipelined READs cost next to nothing.
     */
    static final int READ_CHUNK = 64 * 1024;
    static final int READS_IN_FLIGHT = 4;

    private final ServerCore core;
    private final RdmaConnection connection;
    private final RegisteredBuffer staging;
    private final RangeAllocator allocator;
    private final RemoteBuffer clientRegion;  // what the client exposed; null = nothing
    private final int sendLimit;
    /** The subscriber of every SEND of an answer, made once: a subscriber and two lambdas per answer cost a sixth of what a call allocated. */
    private final AnswerSent answerSent = new AnswerSent();
    private long lastRequestId;  // only the frame subscriber touches it: its signals are serialised
    private volatile Disposable subscription;

    ServerSession(ServerCore core, RdmaConnection connection) {
        this.core = core;
        this.connection = connection;
        this.staging = connection.exposedBuffer();
        this.allocator = new RangeAllocator(staging.capacity());
        this.clientRegion = connection.findRemoteBuffer().orElse(null);
        this.sendLimit = connection.config().bufferSize();
    }

    void start() {
        core.sessions.add(this);
        core.connectionsAccepted.increment();
        // receives() completes on an orderly close and fails on any other: the session ends either way
        subscription = connection.receives().subscribe(this::onFrame, e -> end(), this::end);
    }

    private void end() {
        core.sessions.remove(this);
    }

    Mono<Void> close() {
        Disposable s = subscription;
        if (s != null) s.dispose();
        return connection.disposeLater();
    }

    @Override
    public String toString() {
        return connection.toString();
    }

    // ------------------------------------------------------------------------------ frames

    /** A received frame; its buffer goes back to the receive queue exactly once. */
    private final class Frame {
        final ReceivedMessage message;
        private volatile int done;

        Frame(ReceivedMessage message) {
            this.message = message;
        }

        void release() {
            if (FRAME_DONE.compareAndSet(this, 0, 1)) {
                message.release();
                core.framesDone.increment();
            }
        }
    }

    private void onFrame(ReceivedMessage m) {
        core.frames.increment();
        Frame f = new Frame(m);
        try {
            handle(f);
        } catch (RuntimeException e) {
            // a bug must cost one frame, never the session: the subscription would end on a throw
            f.release();
            ServerCore.LOG.error("internal error handling a frame from " + this, e);
        }
    }

    private void handle(Frame f) {
        ReceivedMessage m = f.message;
        if (m.hasImmediate()) {
            f.release();
            core.logDrop(this, String.format("unexpected immediate data (a SEND_WITH_IMM or WRITE_WITH_IMM, imm 0x%08x)", m.immediate()));
            return;
        }
        MemorySegment frame = m.buffer().segment();
        switch (RequestHeader.decode(frame, m.length())) {
            case RequestHeader.Drop d -> {
                f.release();
                core.logDrop(this, d.reason());
            }
            case RequestHeader.Reject r -> {
                f.release();
                reject(r.requestId(), r.maxInlineResponse(), r.reason());
            }
            case RequestHeader.Ok ok -> accept(f, ok, frame);
        }
    }

    private void accept(Frame f, RequestHeader.Ok ok, MemorySegment frame) {
        RequestHeader h = ok.header();
        if (Long.compareUnsigned(h.requestId(), lastRequestId) <= 0) {
            f.release();
            reject(h.requestId(), h.maxInlineResponse(), "request id " + Long.toUnsignedString(h.requestId())
                    + " is not above the previous one (" + Long.toUnsignedString(lastRequestId) + "): duplicate or reordered");
            return;
        }
        lastRequestId = h.requestId();
        if (h.functionId() == Frames.HELLO_FUNCTION) {
            f.release();
            core.hellos.increment();
            respond(h, RpcStatus.OK, hello().encode());
            return;
        }
        FunctionRegistry.Function fn = core.functions.byId(h.functionId());
        if (fn == null) {
            f.release();
            core.unknownFunction.increment();
            if (core.meters != null) core.meters.refused(ServerMeters.Refusal.UNKNOWN_FUNCTION);
            respond(h, RpcStatus.UNKNOWN_FUNCTION, EMPTY);
            return;
        }
        String bad = checkMemory(h);
        if (bad != null) {
            f.release();
            reject(h.requestId(), h.maxInlineResponse(), bad);
            return;
        }
        Call call = new Call(f, h, fn);
        call.context = ok.context();
        if (h.key() != null) {
            switch (core.table.begin(h.key(), h.functionId(), new ServerCore.Waiter(this, h))) {
                case ResultTable.Started s -> call.keyed = true;
                case ResultTable.Joined j -> {
                    f.release();
                    core.joined.increment();
                    return;
                }
                case ResultTable.Replay r -> {
                    f.release();
                    core.replayed.increment();
                    respond(h, r.payload() == null && r.status() == RpcStatus.OK ? RpcStatus.ALREADY_EXECUTED : r.status(),
                            r.payload() == null ? EMPTY : r.payload());
                    return;
                }
                case ResultTable.Conflict c -> {
                    f.release();
                    reject(h.requestId(), h.maxInlineResponse(), String.format("idempotency key %s is in use for function 0x%08x", h.key(), c.functionId()));
                    return;
                }
            }
        }
        call.begin();
        if (!core.tryStartHandler()) {
            core.overloaded.increment();
            call.finish(RpcStatus.OVERLOADED, text(core.settings.maxConcurrentCalls() + " calls are running"), false);
            return;
        }
        call.handlerSlot = true;
        if (h.remotePayload()) fetch(call);
        else run(call, f.message.buffer(), frame, ok.payloadOffset(), false);
    }

    private Hello hello() {
        int staged = (int) Math.min(allocator.capacity(), Integer.MAX_VALUE);
        return new Hello(Frames.VERSION, Hello.FEATURES, connection.config().receiveQueueDepth(), connection.config().bufferSize(), staged,
                staged, core.settings.maxConcurrentCalls());
    }

    /**
     * Descriptors are checked against the buffer the client advertised before anything is
     * posted: a READ or WRITE outside it would fail with a remote access error, and on RC that
     * puts the QP in error and kills the connection - a bad frame must cost one frame only.
     */
    private String checkMemory(RequestHeader h) {
        if (h.remotePayload()) {
            if (h.payloadLength() == 0) return "remote payload of 0 bytes";
            if (h.payloadLength() > allocator.capacity()) {
                return "payload of " + h.payloadLength() + " bytes exceeds the server's limit of " + allocator.capacity();
            }
            String r = within("payload", h.payloadAddress(), h.payloadRkey(), h.payloadLength());
            if (r != null) return r;
        }
        if (h.hasWindow()) return within("response window", h.windowAddress(), h.windowRkey(), h.windowLength());
        return null;
    }

    private String within(String what, long address, int rkey, long length) {
        RemoteBuffer region = clientRegion;
        if (region == null) return "the client exposes no memory, so no " + what + " descriptor can be valid";
        if (rkey != region.rkey()) return String.format("%s rkey 0x%08x is not the client's exposed buffer's", what, rkey);
        if (!inside(region.address(), region.length(), address, length)) {
            return String.format("%s [0x%x, +%d) lies outside the client's exposed buffer %s", what, address, length, region);
        }
        return null;
    }

    /**
     * Whether {@code [address, address + length)} lies in {@code [base, base + regionLength)}.
     * Unsigned throughout: an address 2^63 above the base gives a negative signed offset that a
     * signed comparison would let through (the lab's fuzz test found exactly that).
     */
    static boolean inside(long base, long regionLength, long address, long length) {
        long offset = address - base;
        return Long.compareUnsigned(address, base) >= 0 && Long.compareUnsigned(offset, regionLength) <= 0
                && Long.compareUnsigned(length, regionLength - offset) <= 0;
    }

    // ------------------------------------------------------------------------------ execution

    /** An accepted request and what it holds here: its frame, a handler slot, a staging range, a key. */
    private final class Call extends ServerCall {
        final Frame frame;
        boolean keyed;
        boolean handlerSlot;
        long stagingOffset = -1;
        long stagingSize;
        boolean stagingRetained;

        Call(Frame frame, RequestHeader header, FunctionRegistry.Function function) {
            super(ServerSession.this.core, header, function);
            this.frame = frame;
        }

        /**
         * Frees what the call holds (the handler is done with the payload), records a keyed result
         * or forgets a key that never ran, then answers this request and any retries that joined.
         */
        @Override
        void finished(RpcStatus status, byte[] payload, boolean executed) {
            if (stagingOffset >= 0) allocator.free(stagingOffset, stagingSize);
            if (stagingRetained) staging.release();
            if (handlerSlot) core.handlerDone();
            frame.release();  // before answering: the client may send its next request the moment it has the answer
            List<ServerCore.Waiter> waiters = !keyed ? List.of()
                    : executed ? core.table.complete(header.key(), status, payload) : core.table.abort(header.key());
            respond(header, status, payload);
            for (ServerCore.Waiter w : waiters) w.session().respond(w.header(), status, payload);
        }
    }

    private void fetch(Call call) {
        long n = call.header.payloadLength();
        new StagingWait() {
            @Override
            void granted(long offset) {
                staged(call, offset, n);
            }

            @Override
            void timedOut() {
                core.overloaded.increment();
                call.finish(RpcStatus.OVERLOADED, text("no staging memory for " + n + " bytes within "
                        + core.settings.handlerTimeout().toMillis() + " ms"), false);
            }
        }.await(allocator, n, core.settings.handlerTimeout().toMillis(), Schedulers.parallel());
    }

    private void staged(Call call, long offset, long n) {
        call.stagingOffset = offset;
        call.stagingSize = n;
        if (!staging.tryRetain()) {  // the handler reads this memory: it must outlive a connection closing meanwhile
            call.finish(RpcStatus.OVERLOADED, text("connection closing"), false);
            return;
        }
        call.stagingRetained = true;
        core.payloadsFetched.increment();
        RequestHeader h = call.header;
        RemoteBuffer source = new RemoteBuffer(h.payloadAddress(), h.payloadRkey(), n);
        // delayError: every READ has completed or flushed before a failure frees the staging range
        Flux.range(0, (int) ((n + READ_CHUNK - 1) / READ_CHUNK))
                .flatMapDelayError(i -> {
                    long at = (long) i * READ_CHUNK;
                    return connection.read(source, at, (int) Math.min(READ_CHUNK, n - at), staging, (int) (offset + at));
                }, READS_IN_FLIGHT, 1)
                // one hop to the handler scheduler, where the checksum is checked before the handler runs
                // (a publishOn for the checksum and then the handler's own task made two)
                .subscribe(null, e -> call.finish(RpcStatus.OVERLOADED, text("fetching the payload failed: " + e.getMessage()), false), () -> {
                    try {
                        call.fetched = staging.segment().asSlice(offset, n);
                        run(call, staging, staging.segment(), (int) offset, true);
                    } catch (RuntimeException e) {
                        call.finish(RpcStatus.OVERLOADED, text("payload unavailable: " + e.getMessage()), false);
                    }
                });
    }

    /** Runs the call's handler on its payload, which lies in {@code memory} (the segment of {@code buffer}) at {@code offset}. */
    private void run(Call call, RegisteredBuffer buffer, MemorySegment memory, int offset, boolean fetched) {
        RequestHeader h = call.header;
        call.start(new RpcRequest(call.function.name(), h.requestId(), h.key(), memory, buffer, offset, h.payloadLength(), fetched));
    }

    // ------------------------------------------------------------------------------ answers

    private void reject(long requestId, int maxInline, String reason) {
        core.rejected.increment();
        if (core.meters != null) core.meters.refused(ServerMeters.Refusal.BAD_REQUEST);
        if (ServerCore.LOG.isDebugEnabled()) ServerCore.LOG.debug("rejected request " + Long.toUnsignedString(requestId) + " from " + this + ": " + reason);
        sendInline(requestId, RpcStatus.BAD_REQUEST, fit(text(reason), Math.min(maxInline, sendLimit)));
    }

    /**
     * Answers in a SEND when the frame fits both the client's receive buffers and ours, else in
     * the client's response window with WRITE_WITH_IMM, else with RESPONSE_TOO_LARGE. Error texts
     * are cut to fit a SEND.
     */
    void respond(RequestHeader h, RpcStatus status, byte[] payload) {
        if (connection.isDisposed()) {
            core.responseFailures.increment();
            return;
        }
        int limit = Math.min(h.maxInlineResponse(), sendLimit);
        long frameLength = RESPONSE_HEADER + (long) payload.length;
        if (frameLength <= limit) {
            sendInline(h.requestId(), status, payload);
        } else if (status == RpcStatus.HANDLER_ERROR || status == RpcStatus.BAD_REQUEST || status == RpcStatus.OVERLOADED) {
            sendInline(h.requestId(), status, fit(payload, limit));
        } else if (h.hasWindow() && frameLength <= h.windowLength()) {
            writeToWindow(h, status, payload);
        } else {
            core.responsesTooLarge.increment();
            sendInline(h.requestId(), RpcStatus.RESPONSE_TOO_LARGE, ByteBuffer.allocate(8).putLong(frameLength).array());
        }
    }

    private void sendInline(long requestId, RpcStatus status, byte[] payload) {
        // a free buffer at once, as nearly always: Mono.usingWhen around the pool's acquire cost a
        // fifth of the handler thread's time per call (JFR in the lab)
        RegisteredBuffer b;
        try {
            b = connection.buffers().tryAcquire();
        } catch (RuntimeException e) {
            undeliverable(e);
            return;
        }
        if (b != null) sendInline(b, requestId, status, payload);
        else connection.buffers().acquire().subscribe(a -> sendInline(a, requestId, status, payload), this::undeliverable);
    }

    /** Posts the answer from {@code b} and gives {@code b} back: the send holds its own reference until its completion. */
    private void sendInline(RegisteredBuffer b, long requestId, RpcStatus status, byte[] payload) {
        try {
            connection.send(b, 0, ResponseHeader.encodeFrame(status, 0, requestId, payload, b.segment(), 0)).subscribe(answerSent);
        } catch (RuntimeException e) {
            undeliverable(e);
        } finally {
            b.release();
        }
    }

    private void writeToWindow(RequestHeader h, RpcStatus status, byte[] payload) {
        int n = RESPONSE_HEADER + payload.length;
        new StagingWait() {
            @Override
            void granted(long offset) {
                writeStaged(h, status, payload, offset, n);
            }

            @Override
            void timedOut() {
                sendInline(h.requestId(), RpcStatus.HANDLER_ERROR, fit(text("the function ran but its " + n
                        + "-byte result could not be staged for writing"), Math.min(h.maxInlineResponse(), sendLimit)));
            }
        }.await(allocator, n, core.settings.handlerTimeout().toMillis(), Schedulers.parallel());
    }

    private void writeStaged(RequestHeader h, RpcStatus status, byte[] payload, long offset, int n) {
        if (!staging.tryRetain()) {  // the connection closed and freed it
            allocator.free(offset, n);
            core.responseFailures.increment();
            return;
        }
        try {
            ResponseHeader.encodeFrame(status, ResponseHeader.IN_WINDOW, h.requestId(), payload, staging.segment(), offset);
        } catch (RuntimeException e) {
            staging.release();
            allocator.free(offset, n);
            undeliverable(e);
            return;
        }
        RemoteBuffer window = new RemoteBuffer(h.windowAddress(), h.windowRkey(), h.windowLength());
        // the immediate names the call; the client finds the frame, header first, at the window's start
        connection.writeWithImmediate(staging, (int) offset, n, window, 0, (int) h.requestId())
                .doFinally(s -> {
                    staging.release();
                    allocator.free(offset, n);
                })
                .subscribe(wc -> core.responsesWritten.increment(), this::undeliverable);
    }

    /**
     * Counts the answers sent and those that could not be. Stateless, so one serves every SEND of
     * the session at once, as Reactor's own drain subscriber serves any number of sources: it
     * requests everything and keeps no subscription.
     */
    private final class AnswerSent implements CoreSubscriber<WorkCompletion> {
        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(WorkCompletion wc) {
            core.responsesSent.increment();
        }

        @Override
        public void onError(Throwable e) {
            undeliverable(e);
        }

        @Override
        public void onComplete() {
        }
    }

    private void undeliverable(Throwable e) {
        core.responseFailures.increment();
        if (ServerCore.LOG.isDebugEnabled()) ServerCore.LOG.debug("an answer to " + this + " was not delivered: " + e);
    }

    static byte[] text(String s) {
        return Frames.utf8(s, MAX_ERROR_TEXT);
    }

    /** An error text cut to fit a SEND of {@code limit} bytes. */
    private static byte[] fit(byte[] text, int limit) {
        int room = Math.max(0, limit - RESPONSE_HEADER);
        if (text.length <= room) return text;
        return Frames.utf8(new String(text, java.nio.charset.StandardCharsets.UTF_8), room);
    }
}
