package io.jrdma.rpc;

import static io.jrdma.rpc.Frames.REQUEST_HEADER;
import static io.jrdma.rpc.Frames.RESPONSE_HEADER;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaDisposable;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.retry.Retry;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Calls functions on an {@link RpcServer} over one RDMA connection.
 *
 * <pre>{@code
 * RpcClient.connect(RdmaClient.create().host("10.77.0.2").port(7471)
 *         .exposeBuffer(4 << 20, Access.REMOTE_READ, Access.REMOTE_WRITE))   // only for payloads beyond one buffer
 *     .flatMap(c -> c.call("upper", "hello".getBytes(UTF_8)))
 * }</pre>
 *
 * <h2>Guarantees</h2>
 * <ul>
 * <li><b>Credits.</b> At most {@link RpcClientStats#window()} requests are outstanding - the
 *     server's receive queue depth as its hello announced, bounded by this side's - so a request
 *     always finds a RECV posted. Further calls wait, without blocking a thread, for an answer.
 *     A timed-out request keeps its credit (and its staging memory, which the server may still
 *     READ or WRITE) until its late answer arrives: a slow server slows its clients down.</li>
 * <li><b>Ordering.</b> Request ids increase in the order requests are posted, and the server
 *     refuses any id not above the last (duplicates). Answers are matched by id and may arrive in
 *     any order.</li>
 * <li><b>At most once.</b> With {@link CallOptions#retries(int)} every attempt carries the same
 *     idempotency key, and the server executes the call at most once, answering retries from
 *     its result table.</li>
 * <li><b>Threads.</b> Calls complete on the connection's poller thread (as the
 *     {@link RdmaConnection} operations do): do not block in operators downstream of a call;
 *     {@code publishOn} a scheduler for blocking work.</li>
 * </ul>
 */
public final class RpcClient implements RdmaDisposable {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.rpc");
    private static final Duration RETRY_BACKOFF = Duration.ofMillis(20);
    private static final Duration MAX_RETRY_BACKOFF = Duration.ofSeconds(1);
    /** Attempt timeouts of every client, swept together (a timer per call costs a thread wake-up each). */
    static final Deadlines DEADLINES = new Deadlines();

    final RdmaConnection connection;
    private final CallOptions defaults;
    final CreditGate credits = new CreditGate(1);  // one for the hello; the window opens after it
    final RegisteredBuffer exposed;
    final int exposedRkey;
    final RangeAllocator staging;
    private final boolean canLendPayload;
    private final boolean canReceiveWritten;
    /**
     * Posted requests by their id's low bits (the immediate of a written answer is the id's low 32
     * bits): an array, not a map keyed by a boxed Integer, which made two objects per call. The
     * credits bound the requests posted and unanswered to the receive queue depth, and the table
     * has twice as many slots; an id whose slot is taken is skipped.
     */
    final AtomicReferenceArray<PendingCall> pending;
    final int pendingMask;
    /**
     * Attempts begun and not yet over, which a closing connection fails: linked through the calls
     * themselves under {@code liveLock}. A concurrent set hashed every call by its identity (a
     * runtime call to install the hash in a fresh object) and made a node per call.
     */
    private final Object liveLock = new Object();
    private @Nullable PendingCall liveHead;  // guarded by liveLock
    final Object sendLock = new Object();
    private long lastId;  // guarded by sendLock
    private volatile Hello hello;
    private volatile int window = 1;
    volatile Throwable closedBy;
    /** The last function called and its id: its name's UTF-8 and CRC32C cost two arrays per call. */
    private volatile FunctionId lastFunction;

    private final LongAdder calls = new LongAdder();
    final LongAdder attempts = new LongAdder();
    private final LongAdder retries = new LongAdder();
    final LongAdder succeeded = new LongAdder();
    final LongAdder failed = new LongAdder();
    final LongAdder timeouts = new LongAdder();
    final LongAdder lateResponses = new LongAdder();
    private final LongAdder unexpectedResponses = new LongAdder();
    private final LongAdder protocolErrors = new LongAdder();
    /** Null without metrics: then nothing on a call's path records anything. */
    final @Nullable ClientMeters meters;
    /** Null without observations ({@link RpcObservations}). */
    private final @Nullable CallObservations observations;

    private RpcClient(RdmaConnection connection, CallOptions defaults, @Nullable ClientMeters meters, @Nullable CallObservations observations) {
        this.connection = connection;
        this.defaults = defaults;
        this.meters = meters;
        this.observations = observations;
        RegisteredBuffer e = connection.findExposedBuffer().orElse(null);  // none: only payloads and answers that fit a SEND
        this.exposed = e;
        this.exposedRkey = e == null ? 0 : e.toRemote(0, 0).rkey();
        this.staging = e == null ? null : new RangeAllocator(e.capacity());
        Set<Access> access = connection.config().exposedAccess();
        this.canLendPayload = e != null && access.contains(Access.REMOTE_READ);
        this.canReceiveWritten = e != null && access.contains(Access.REMOTE_WRITE);
        int slots = Integer.highestOneBit(Math.max(1, connection.config().receiveQueueDepth()) - 1) << 2;
        this.pending = new AtomicReferenceArray<>(Math.max(2, slots));
        this.pendingMask = pending.length() - 1;
    }

    /**
     * Connects and exchanges the protocol hello; emits a client ready to call.
     *
     * @param rdma the connection to make; its {@code connectTimeout} also bounds the hello
     * @return emits the client, which the subscriber owns and disposes; fails with the connection's
     *         error, or an {@link RpcException} when the hello failed (the connection is then closed)
     */
    public static Mono<RpcClient> connect(RdmaClient rdma) {
        return connect(rdma, CallOptions.defaults());
    }

    /**
     * As {@link #connect(RdmaClient)}, with the options {@link #call(String, byte[])} uses.
     *
     * @param rdma     the connection to make
     * @param defaults the options of calls that give none
     * @return emits the client, which the subscriber owns and disposes
     */
    public static Mono<RpcClient> connect(RdmaClient rdma, CallOptions defaults) {
        return create(rdma).defaults(defaults).connect();
    }

    /**
     * A client configuration over {@code rdma}, in Reactor Netty's shape:
     * {@code RpcClient.create(rdma).defaults(options).metrics(true).connect()}.
     *
     * @param rdma the connection to make; its {@code connectTimeout} also bounds the hello
     * @return a configuration with the default call options and no metrics; nothing connects until {@code connect()} is subscribed
     */
    public static RpcClientSpec create(RdmaClient rdma) {
        return new RpcClientSpec(Objects.requireNonNull(rdma, "rdma"), CallOptions.defaults(), null, null);
    }

    /** {@code meterRegistry}: a {@code MeterRegistry}, {@link RpcMetering#GLOBAL_REGISTRY}, or null for no metrics. */
    static Mono<RpcClient> connect(RdmaClient rdma, CallOptions defaults, @Nullable Object meterRegistry, @Nullable RpcObservations observed) {
        Objects.requireNonNull(defaults, "defaults");
        Duration helloTimeout = rdma.configuration().connectTimeout();
        return rdma.connect().flatMap(c -> {
            // named after the server it calls (a connection an OutOfBandExchange set up has no address)
            String name = c.remoteAddress().map(RpcMetering::name).orElse("out-of-band");
            ClientMeters meters = meterRegistry == null ? null : ClientMeters.create(meterRegistry, name);
            RpcClient client = new RpcClient(c, defaults, meters, observed == null ? null : new CallObservations(observed, name));
            client.start();
            Request hello = new Request("$hello", Frames.HELLO_FUNCTION, new byte[0], Frames.crc32c(new byte[0]), null, false, 0, null);
            return client.attempt(hello, 0, helloTimeout, new AtomicInteger())
                    .map(bytes -> client.opened(Hello.decode(bytes)))
                    .onErrorResume(e -> client.disposeLater().then(Mono.error(e)));
        });
    }

    private void start() {
        connection.receives().subscribe(this::onMessage, this::closed, this::closedInOrder);
    }

    /**
     * receives() completed: the connection closed in an orderly way, the peer's doing or ours.
     * Pending calls are told which ("the peer disconnected"): receive() on the closed connection
     * fails with the closure itself, which receives() does not pass on.
     */
    private void closedInOrder() {
        connection.receive().subscribe(m -> {
            m.release();
            closed(null);
        }, this::closed, () -> closed(null));
    }

    private RpcClient opened(Hello h) {
        if (h.version() != Frames.VERSION) throw new RpcException.Protocol("the server speaks RPC protocol version " + h.version());
        hello = h;
        int w = Math.min(h.credits(), connection.config().receiveQueueDepth());
        window = w;
        credits.add(w - 1);
        return this;
    }

    // ------------------------------------------------------------------------------ calls

    /**
     * Calls {@code function} with the default options; emits the result payload.
     *
     * @param function the function's name
     * @param payload  the request; must not change until the call terminates
     * @return emits the result (empty array for no bytes), as {@link #call(String, byte[], CallOptions)}
     */
    public Mono<byte[]> call(String function, byte[] payload) {
        return call(function, payload, defaults);
    }

    /**
     * Calls {@code function}. Emits the result, or fails with an {@link RpcException} saying why
     * and whether the function ran. {@code payload} must not change until the call terminates.
     * Payloads that fit the server's receive buffers travel in the SEND; larger ones are lent
     * from this side's exposed buffer for the server to READ.
     *
     * @param function the function's name
     * @param payload  the request
     * @param options  timeout, retries, idempotency key and response window of this call
     * @return calls when subscribed, once per subscription; emits the result payload (an empty
     *         array for no bytes) on the connection's poller thread
     */
    public Mono<byte[]> call(String function, byte[] payload, CallOptions options) {
        Objects.requireNonNull(payload, "payload");
        Objects.requireNonNull(options, "options");
        CallObservations o = observations;
        if (o != null) return o.client(function, hello.offers(Hello.CONTEXT), context -> call(function, payload, options, context));
        return call(function, payload, options, null);
    }

    /** A call whose request carries {@code context} (encoded, {@link CallContext}), or none. */
    private Mono<byte[]> call(String function, byte[] payload, CallOptions options, byte @Nullable [] context) {
        if (options.retries() == 0 && options.idempotencyKey() == null) {
            // one attempt without a key, the common call: no operator around it, the attempt counts its own outcome
            return new SingleCall(function, payload, options, context);
        }
        return Mono.defer(() -> {
            Request r = prepare(function, payload, options, context);
            AtomicInteger attempt = new AtomicInteger();
            Mono<byte[]> call = attempt(r, r.window, options.timeout(), attempt);
            if (r.key != null) {
                call = call.onErrorResume(RpcException.ResponseTooLarge.class, e -> fetchLarger(r, e, options.timeout(), attempt));
            }
            if (options.retries() > 0) {
                call = call.retryWhen(Retry.backoff(options.retries(), RETRY_BACKOFF).maxBackoff(MAX_RETRY_BACKOFF)
                        .filter(e -> e instanceof RpcException.Timeout || e instanceof RpcException.Overloaded)
                        .doBeforeRetry(s -> retries.increment())
                        .onRetryExhaustedThrow((spec, signal) -> signal.failure()));
            }
            call = call.doOnSuccess(b -> succeeded.increment()).doOnError(e -> failed.increment());
            return meters == null ? call : meters.measure(function, call);
        });
    }

    /**
     * A call of one attempt and no key, each subscription a call whose attempt counts the call's
     * outcome. Its subscription is the attempt itself: {@code Mono.create} cost a lambda, the
     * create operator, its sink, and a disposable and a method reference for the cancel per call.
     */
    private final class SingleCall extends Mono<byte[]> {
        private final String function;
        private final byte[] payload;
        private final CallOptions options;
        private final byte @Nullable [] context;

        SingleCall(String function, byte[] payload, CallOptions options, byte @Nullable [] context) {
            this.function = function;
            this.payload = payload;
            this.options = options;
            this.context = context;
        }

        @Override
        public void subscribe(CoreSubscriber<? super byte[]> actual) {
            Request r;
            try {
                r = prepare(function, payload, options, context);
            } catch (RuntimeException e) {
                Operators.error(actual, e);
                return;
            }
            actual.onSubscribe(new PendingCall(RpcClient.this, r, r.window, actual, options.timeout(), 1, true));
        }
    }

    /** One more attempt of a prepared request per subscription; the operators around it count the call's outcome. */
    private final class Attempt extends Mono<byte[]> {
        private final Request request;
        private final int windowBytes;
        private final Duration timeout;
        private final AtomicInteger attempt;

        Attempt(Request request, int windowBytes, Duration timeout, AtomicInteger attempt) {
            this.request = request;
            this.windowBytes = windowBytes;
            this.timeout = timeout;
            this.attempt = attempt;
        }

        @Override
        public void subscribe(CoreSubscriber<? super byte[]> actual) {
            actual.onSubscribe(new PendingCall(RpcClient.this, request, windowBytes, actual, timeout, attempt.incrementAndGet(), false));
        }
    }

    /**
     * Counts the call and makes its request; a request that cannot be made is counted failed and
     * thrown, which the call's {@code Mono} and {@code Mono.defer} signal as the call's error.
     */
    private Request prepare(String function, byte[] payload, CallOptions options, byte @Nullable [] context) {
        calls.increment();
        try {
            return request(function, payload, options, context);
        } catch (RpcException | IllegalArgumentException e) {
            failed.increment();
            if (meters != null) meters.failedEarly(function, e);
            throw e;
        }
    }

    /**
     * Calls with typed request and result: {@code in} encodes the request, {@code out} decodes the result.
     *
     * @param <I>      the request type
     * @param <O>      the result type
     * @param function the function's name
     * @param request  the request value
     * @param in       encodes the request
     * @param out      decodes the result
     * @return emits the decoded result; fails as {@link #call(String, byte[], CallOptions)}, or
     *         with what a codec threw
     */
    public <I, O> Mono<O> call(String function, I request, Codec<I> in, Codec<O> out) {
        return call(function, request, in, out, defaults);
    }

    /**
     * Calls with typed request and result and these options.
     *
     * @param <I>      the request type
     * @param <O>      the result type
     * @param function the function's name
     * @param request  the request value, encoded when subscribed
     * @param in       encodes the request
     * @param out      decodes the result
     * @param options  timeout, retries, idempotency key and response window of this call
     * @return emits the decoded result; fails as {@link #call(String, byte[], CallOptions)}, or
     *         with what a codec threw
     */
    public <I, O> Mono<O> call(String function, I request, Codec<I> in, Codec<O> out, CallOptions options) {
        return Mono.fromCallable(() -> in.encode(request)).flatMap(b -> call(function, b, options)).map(out::decode);
    }

    /**
     * The call as UTF-8 text both ways.
     *
     * @param function the function's name
     * @param text     the request
     * @return emits the result as text
     */
    public Mono<String> call(String function, String text) {
        return call(function, text, Codec.utf8(), Codec.utf8());
    }

    /**
     * A result too large for the window: with a key the server kept it, so ask again with a
     * window that fits - the function does not run twice. Without a key there is nothing to fetch.
     */
    private Mono<byte[]> fetchLarger(Request r, RpcException.ResponseTooLarge e, Duration timeout, AtomicInteger attempt) {
        if (!canReceiveWritten || e.requiredBytes() > staging.capacity() - (r.remote ? Frames.align(r.payload.length) : 0)) {
            return Mono.error(e);
        }
        return attempt(r, (int) e.requiredBytes(), timeout, attempt);
    }

    private Request request(String function, byte[] payload, CallOptions options, byte @Nullable [] context) {
        int id = functionId(function);
        IdempotencyKey key = options.idempotencyKey() != null ? options.idempotencyKey()
                : options.retries() > 0 ? IdempotencyKey.random() : null;
        Hello h = hello;
        if (context != null && REQUEST_HEADER + context.length > maxInlineRequest()) context = null;  // the receive buffers cannot take it: the call goes without
        int header = REQUEST_HEADER + (context == null ? 0 : context.length);
        boolean remote = header + (long) payload.length > maxInlineRequest();
        if (remote) {
            if (!canLendPayload) {
                throw new RpcException.PayloadTooLarge(function, payload.length + " bytes do not fit a SEND of " + maxInlineRequest()
                        + " and this client exposes no buffer the server may READ (configure exposeBuffer(bytes, REMOTE_READ, REMOTE_WRITE))");
            }
            if (payload.length > h.maxPayload()) {
                throw new RpcException.PayloadTooLarge(function, payload.length + " bytes exceed the server's limit of " + h.maxPayload());
            }
            if (Frames.align(payload.length) > staging.capacity()) {
                throw new RpcException.PayloadTooLarge(function, payload.length + " bytes exceed this client's exposed buffer of " + staging.capacity());
            }
        }
        return new Request(function, id, payload, Frames.crc32c(payload), key, remote, responseCapacity(function, payload, remote, options), context);
    }

    private record FunctionId(String name, int id) {}

    private int functionId(String function) {
        FunctionId f = lastFunction;
        if (f == null || !f.name.equals(function)) {
            f = new FunctionId(function, Frames.functionId(function));
            lastFunction = f;
        }
        return f.id;
    }

    /** The first attempt's response window: what {@code options} ask for, or a guess from the payload. */
    private int responseCapacity(String function, byte[] payload, boolean remote, CallOptions options) {
        if (!canReceiveWritten) {
            if (options.responseCapacity() > 0) {
                throw new RpcException.PayloadTooLarge(function, "a response window needs an exposed buffer with REMOTE_WRITE");
            }
            return 0;
        }
        long room = staging.capacity() - (remote ? Frames.align(payload.length) : 0);
        if (options.responseCapacity() >= 0) {
            if (options.responseCapacity() > room) {
                throw new RpcException.PayloadTooLarge(function, "a response window of " + options.responseCapacity()
                        + " bytes does not fit this client's exposed buffer (" + room + " bytes left)");
            }
            return options.responseCapacity() == 0 ? 0 : Math.max(options.responseCapacity(), RESPONSE_HEADER);
        }
        // automatic: a staged request probably has a large answer too (echo, transforms)
        return remote ? (int) Math.min(RESPONSE_HEADER + (long) payload.length, Math.min(room, hello.maxResponse())) : 0;
    }

    private int maxInlineRequest() {
        Hello h = hello;
        int mine = connection.config().bufferSize();
        return h == null ? Math.min(mine, REQUEST_HEADER) : Math.min(mine, h.maxInlineRequest());
    }

    private Mono<byte[]> attempt(Request r, int windowBytes, Duration timeout, AtomicInteger attempt) {
        return new Attempt(r, windowBytes, timeout, attempt);
    }

    /** What is sent, shared by a call's attempts, the first attempt's response window, and the call's context (encoded) or null. */
    record Request(String function, int functionId, byte[] payload, int payloadCrc, IdempotencyKey key, boolean remote, int window,
                   byte @Nullable [] context) {}

    // ------------------------------------------------------------------------------ answers

    private void onMessage(ReceivedMessage m) {
        try {
            if (m.hasImmediate()) onWritten(m);
            else onSent(m);
        } catch (RuntimeException e) {
            m.release();
            LOG.error("internal error handling an answer on " + connection, e);
        }
    }

    private void onSent(ReceivedMessage m) {
        ResponseHeader.Frame f = ResponseHeader.decode(m.buffer().segment(), m.length(), true);
        m.release();  // copied out: the RECV goes back before anyone can send on the credit this answer frees
        if (!f.ok()) {
            protocolErrors.increment();
            LOG.warn("unusable answer on " + connection + ": " + f.error());
            return;
        }
        if ((f.header().flags() & ResponseHeader.IN_WINDOW) != 0) {
            protocolErrors.increment();
            LOG.warn("an answer in a SEND claims to be in a window on " + connection);
            return;
        }
        long id = f.header().requestId();
        PendingCall p = pending.get((int) id & pendingMask);
        if (p == null || p.requestId != id || !pending.compareAndSet((int) id & pendingMask, p, null)) {
            unexpectedResponses.increment();
            return;
        }
        p.onAnswer(f);
    }

    private void onWritten(ReceivedMessage m) {
        int imm = m.immediate();
        m.release();
        PendingCall p = pending.get(imm & pendingMask);
        if (p == null || (int) p.requestId != imm || !pending.compareAndSet(imm & pendingMask, p, null)) {
            unexpectedResponses.increment();
            return;
        }
        ResponseHeader.Frame f = p.readWindow();
        if (!f.ok() || f.header().requestId() != p.requestId || (f.header().flags() & ResponseHeader.IN_WINDOW) == 0) {
            protocolErrors.increment();
            String why = !f.ok() ? f.error() : "the window holds an answer to another request";
            p.onAnswer(new ResponseHeader.Frame(null, null, why));
            return;
        }
        p.onAnswer(f);
    }

    private void closed(@Nullable Throwable cause) {
        closedBy = cause != null ? cause : new ConnectionException.Closed(connection + " closed");
        List<PendingCall> calls = new ArrayList<>();
        synchronized (liveLock) {
            for (PendingCall p = liveHead; p != null; p = p.liveNext) calls.add(p);
        }
        for (PendingCall p : calls) p.lost(closedBy);
    }

    // ------------------------------------------------------------------------------ attempts (PendingCall)

    void addLive(PendingCall p) {
        synchronized (liveLock) {
            PendingCall head = liveHead;
            p.liveNext = head;
            if (head != null) head.livePrev = p;
            liveHead = p;
            p.isLive = true;
        }
    }

    void removeLive(PendingCall p) {
        synchronized (liveLock) {
            if (!p.isLive) return;
            p.isLive = false;
            PendingCall prev = p.livePrev;
            PendingCall next = p.liveNext;
            if (prev != null) prev.liveNext = next;
            else liveHead = next;
            if (next != null) next.livePrev = prev;
            p.livePrev = null;
            p.liveNext = null;
        }
    }

    private int posted() {
        int n = 0;
        for (int i = 0; i < pending.length(); i++) {
            if (pending.get(i) != null) n++;
        }
        return n;
    }

    long nextId() {
        long id;
        do {
            id = ++lastId;
        } while (id == 0 || pending.get((int) id & pendingMask) != null);  // an old request still unanswered keeps its slot
        return id;
    }

    // ------------------------------------------------------------------------------ lifecycle

    /** Starts closing the connection and returns at once; outstanding calls fail with {@link RpcException.ConnectionLost}. */
    @Override
    public void dispose() {
        connection.dispose();
    }

    /** {@return true once the connection began closing, by either side or a failure} */
    @Override
    public boolean isDisposed() {
        return connection.isDisposed();
    }

    /** {@return completes when the connection is fully closed, by either side or a failure} */
    @Override
    public Mono<Void> onDispose() {
        return connection.onDispose();
    }

    /**
     * Closes when subscribed.
     *
     * @return closes when subscribed; completes once the connection is destroyed
     * @deprecated a lazy {@code Mono}: use {@link #disposeNow()}, or {@link #dispose()} and {@link #onDispose()}
     */
    @Deprecated(forRemoval = true, since = "0.1.0")
    public Mono<Void> close() {
        return Mono.defer(this::disposeLater);
    }

    /**
     * {@return {@link #onDispose()}}
     * @deprecated use {@link #onDispose()}
     */
    @Deprecated(forRemoval = true, since = "0.1.0")
    public Mono<Void> onClose() {
        return onDispose();
    }

    /**
     * {@return {@link #isDisposed()}}
     * @deprecated use {@link #isDisposed()}
     */
    @Deprecated(forRemoval = true, since = "0.1.0")
    public boolean isClosed() {
        return isDisposed();
    }

    /** {@return the connection underneath, e.g. for its own operations next to the calls} */
    public RdmaConnection connection() {
        return connection;
    }

    /** {@return a snapshot of the counters} */
    public RpcClientStats stats() {
        return new RpcClientStats(calls.sum(), attempts.sum(), retries.sum(), succeeded.sum(), failed.sum(), timeouts.sum(),
                lateResponses.sum(), unexpectedResponses.sum(), protocolErrors.sum(), posted(), credits.available(), window);
    }

    @Override
    public String toString() {
        return "RpcClient[" + connection + "]";
    }
}
