package io.jrdma.reactive.rpc;

import static io.jrdma.reactive.rpc.Frames.REQUEST_HEADER;
import static io.jrdma.reactive.rpc.Frames.RESPONSE_HEADER;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.retry.Retry;

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
public final class RpcClient {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.rpc");
    private static final Duration RETRY_BACKOFF = Duration.ofMillis(20);
    private static final Duration MAX_RETRY_BACKOFF = Duration.ofSeconds(1);
    /** Attempt timeouts of every client, swept together (a timer per call costs a thread wake-up each). */
    private static final Deadlines DEADLINES = new Deadlines();
    private static final AtomicIntegerFieldUpdater<PendingCall> BEGUN = AtomicIntegerFieldUpdater.newUpdater(PendingCall.class, "begun");

    private final RdmaConnection connection;
    private final CallOptions defaults;
    private final CreditGate credits = new CreditGate(1);  // one for the hello; the window opens after it
    private final RegisteredBuffer exposed;
    private final int exposedRkey;
    private final RangeAllocator staging;
    private final boolean canLendPayload;
    private final boolean canReceiveWritten;
    /**
     * Posted requests by their id's low bits (the immediate of a written answer is the id's low 32
     * bits): an array, not a map keyed by a boxed Integer, which made two objects per call. The
     * credits bound the requests posted and unanswered to the receive queue depth, and the table
     * has twice as many slots; an id whose slot is taken is skipped.
     */
    private final AtomicReferenceArray<PendingCall> pending;
    private final int pendingMask;
    /**
     * Attempts begun and not yet over, which a closing connection fails: linked through the calls
     * themselves under {@code liveLock}. A concurrent set hashed every call by its identity (a
     * runtime call to install the hash in a fresh object) and made a node per call.
     */
    private final Object liveLock = new Object();
    private @Nullable PendingCall liveHead;  // guarded by liveLock
    private final Object sendLock = new Object();
    private long lastId;  // guarded by sendLock
    private volatile Hello hello;
    private volatile int window = 1;
    private volatile Throwable closedBy;
    /** The last function called and its id: its name's UTF-8 and CRC32C cost two arrays per call. */
    private volatile FunctionId lastFunction;

    private final LongAdder calls = new LongAdder();
    private final LongAdder attempts = new LongAdder();
    private final LongAdder retries = new LongAdder();
    private final LongAdder succeeded = new LongAdder();
    private final LongAdder failed = new LongAdder();
    private final LongAdder timeouts = new LongAdder();
    private final LongAdder lateResponses = new LongAdder();
    private final LongAdder unexpectedResponses = new LongAdder();
    private final LongAdder protocolErrors = new LongAdder();

    private RpcClient(RdmaConnection connection, CallOptions defaults) {
        this.connection = connection;
        this.defaults = defaults;
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
     * @return emits the client, which the subscriber owns and closes; fails with the connection's
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
     * @return emits the client, which the subscriber owns and closes
     */
    public static Mono<RpcClient> connect(RdmaClient rdma, CallOptions defaults) {
        Objects.requireNonNull(defaults, "defaults");
        Duration helloTimeout = rdma.configuration().connectTimeout();
        return rdma.connect().flatMap(c -> {
            RpcClient client = new RpcClient(c, defaults);
            client.start();
            Request hello = new Request("$hello", Frames.HELLO_FUNCTION, new byte[0], Frames.crc32c(new byte[0]), null, false, 0);
            return client.attempt(hello, 0, helloTimeout, new AtomicInteger())
                    .map(bytes -> client.opened(Hello.decode(bytes)))
                    .onErrorResume(e -> client.close().then(Mono.error(e)));
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
        if (options.retries() == 0 && options.idempotencyKey() == null) {
            // one attempt without a key, the common call: no operator around it, the attempt counts its own outcome
            return new SingleCall(function, payload, options);
        }
        return Mono.defer(() -> {
            Request r = prepare(function, payload, options);
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
            return call.doOnSuccess(b -> succeeded.increment()).doOnError(e -> failed.increment());
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

        SingleCall(String function, byte[] payload, CallOptions options) {
            this.function = function;
            this.payload = payload;
            this.options = options;
        }

        @Override
        public void subscribe(CoreSubscriber<? super byte[]> actual) {
            Request r;
            try {
                r = prepare(function, payload, options);
            } catch (RuntimeException e) {
                Operators.error(actual, e);
                return;
            }
            actual.onSubscribe(new PendingCall(r, r.window, actual, options.timeout(), 1, true));
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
            actual.onSubscribe(new PendingCall(request, windowBytes, actual, timeout, attempt.incrementAndGet(), false));
        }
    }

    /**
     * Counts the call and makes its request; a request that cannot be made is counted failed and
     * thrown, which the call's {@code Mono} and {@code Mono.defer} signal as the call's error.
     */
    private Request prepare(String function, byte[] payload, CallOptions options) {
        calls.increment();
        try {
            return request(function, payload, options);
        } catch (RpcException | IllegalArgumentException e) {
            failed.increment();
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

    private Request request(String function, byte[] payload, CallOptions options) {
        int id = functionId(function);
        IdempotencyKey key = options.idempotencyKey() != null ? options.idempotencyKey()
                : options.retries() > 0 ? IdempotencyKey.random() : null;
        Hello h = hello;
        boolean remote = REQUEST_HEADER + (long) payload.length > maxInlineRequest();
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
        return new Request(function, id, payload, Frames.crc32c(payload), key, remote, responseCapacity(function, payload, remote, options));
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

    /** What is sent, shared by a call's attempts, and the first attempt's response window. */
    private record Request(String function, int functionId, byte[] payload, int payloadCrc, IdempotencyKey key, boolean remote, int window) {}

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
        p.answered(f);
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
            p.answered(new ResponseHeader.Frame(null, null, why));
            return;
        }
        p.answered(f);
    }

    private void closed(@Nullable Throwable cause) {
        closedBy = cause != null ? cause : new ConnectionException.Closed(connection + " closed");
        List<PendingCall> calls = new ArrayList<>();
        synchronized (liveLock) {
            for (PendingCall p = liveHead; p != null; p = p.liveNext) calls.add(p);
        }
        for (PendingCall p : calls) p.lost(closedBy);
    }

    // ------------------------------------------------------------------------------ one attempt

    private void addLive(PendingCall p) {
        synchronized (liveLock) {
            PendingCall head = liveHead;
            p.liveNext = head;
            if (head != null) head.livePrev = p;
            liveHead = p;
            p.isLive = true;
        }
    }

    private void removeLive(PendingCall p) {
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

    /**
     * One request from credit to answer, begun by its subscriber's first request. Every
     * transition holds the monitor; what the request holds (credit, staging range, a reference
     * on the exposed buffer) is given back exactly once: at once when it is abandoned before the
     * post, else when the answer arrives or the connection closes - the server may READ the
     * payload or WRITE the window until then.
     * <p>
     * It is also its caller's {@code Subscription} (a cancel abandons it) and the subscriber of
     * its own SEND: a call allocates no operator, sink or lambda around it.
     */
    private final class PendingCall implements Deadlines.Tracked, Subscription, CoreSubscriber<WorkCompletion> {
        private enum State { CREDIT, STAGING, BUFFER, SENT, DONE }

        final Request request;
        final int windowBytes;
        final CoreSubscriber<? super byte[]> actual;
        final Duration timeout;
        final int attemptNumber;
        /** The call's only attempt: it counts the call succeeded or failed (else operators around the attempts do). */
        final boolean countsOutcome;
        final long deadline;
        State state = State.CREDIT;
        boolean abandoned;
        CreditGate.Waiter creditWaiter;
        RangeAllocator.Waiter stagingWaiter;
        boolean hasCredit;
        long stagingOffset = -1;
        long stagingBytes;
        volatile long requestId;
        /** The caller's first request began the call; a cancel ended the caller's interest (nothing is signalled after it). */
        private volatile int begun;
        private volatile boolean cancelled;
        private int deadlineSlot;  // Deadlines' lock guards it
        // the client's live list; its lock guards these
        @Nullable PendingCall livePrev;
        @Nullable PendingCall liveNext;
        boolean isLive;

        PendingCall(Request request, int windowBytes, CoreSubscriber<? super byte[]> actual, Duration timeout, int attemptNumber,
                    boolean countsOutcome) {
            this.countsOutcome = countsOutcome;
            this.request = request;
            this.windowBytes = windowBytes;
            this.actual = actual;
            this.timeout = timeout;
            this.attemptNumber = attemptNumber;
            this.deadline = System.nanoTime() + timeout.toNanos();
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
            attempts.increment();
            DEADLINES.track(this);
            begin();
        }

        @Override
        public void cancel() {
            cancelled = true;
            abandon();
        }

        /** The attempt timed out: like a cancel, and the caller learns why. */
        @Override
        public void expire() {
            if (withdraw()) {  // false if over, or abandoned already (told of a cancel): one terminal signal
                timeouts.increment();
                failWith(new RpcException.Timeout(request.function, timeout, attemptNumber));
            }
        }

        long payloadBytes() {
            return request.remote ? Frames.align(request.payload.length) : 0;
        }

        void begin() {
            boolean over;
            synchronized (this) {
                over = state == State.DONE;  // cancelled meanwhile: giveBack has run, maybe before the deadline was tracked
                if (!over) addLive(this);
            }
            if (over) {
                DEADLINES.untrack(this);
                return;
            }
            if (closedBy != null) {
                lost(closedBy);
                return;
            }
            CreditGate.Waiter w = credits.acquire(this::credited);
            if (w != null) {
                boolean cancel;
                synchronized (this) {
                    cancel = state == State.DONE;
                    if (!cancel && state == State.CREDIT) creditWaiter = w;
                }
                if (cancel) credits.cancel(w);  // lost its race with abandon; if granted meanwhile, credited() gives it back
            }
        }

        private void credited() {
            synchronized (this) {
                if (state == State.DONE) {
                    credits.release();
                    return;
                }
                hasCredit = true;
                creditWaiter = null;
                state = State.STAGING;
            }
            long need = payloadBytes() + windowBytes;
            if (need == 0) {
                staged(-1);
                return;
            }
            RangeAllocator.Waiter w;
            try {
                w = staging.allocate(need, this::staged);
            } catch (IllegalArgumentException e) {
                fail(new RpcException.PayloadTooLarge(request.function, e.getMessage()));
                return;
            }
            if (w != null) {
                boolean cancel;
                synchronized (this) {
                    cancel = state == State.DONE;
                    if (!cancel) stagingWaiter = w;
                }
                if (cancel) staging.cancel(w);
            }
        }

        private void staged(long offset) {
            synchronized (this) {
                if (state == State.DONE) {
                    if (offset >= 0) staging.free(offset, payloadBytes() + windowBytes);
                    return;
                }
                stagingWaiter = null;
                if (offset >= 0) {
                    if (!exposed.tryRetain()) {  // the connection closed and freed it
                        staging.free(offset, payloadBytes() + windowBytes);
                        state = State.BUFFER;  // so that fail() below releases only the credit
                        stagingOffset = -1;
                        offset = -2;
                    }
                    if (offset >= 0) {
                        stagingOffset = offset;
                        stagingBytes = payloadBytes() + windowBytes;
                        // copied under the monitor: an abandon cannot free the range mid-copy
                        if (request.remote) MemorySegment.copy(request.payload, 0, exposed.segment(), ValueLayout.JAVA_BYTE, offset, request.payload.length);
                    }
                }
                if (offset != -2) state = State.BUFFER;
            }
            if (offset == -2) {
                fail(new RpcException.ConnectionLost(request.function, closedBy));
                return;
            }
            // a free buffer at once, as nearly always: the acquire Mono and its subscriber cost a sixth of the client's time per call
            RegisteredBuffer b;
            try {
                b = connection.buffers().tryAcquire();
            } catch (RuntimeException e) {
                fail(new RpcException.ConnectionLost(request.function, e));
                return;
            }
            if (b != null) post(b);
            else connection.buffers().acquire().subscribe(this::post, e -> fail(new RpcException.ConnectionLost(request.function, e)));
        }

        private void post(RegisteredBuffer b) {
            try {
                synchronized (this) {
                    if (state == State.DONE) return;
                    synchronized (sendLock) {
                        long id = nextId();
                        requestId = id;
                        int length = encode(id, b);
                        pending.set((int) id & pendingMask, this);
                        state = State.SENT;
                        // Subscribed under the lock: the engine queues posts in subscription order, so ids
                        // reach the wire in order. A failure may be signalled synchronously, inside these
                        // locks; its cleanup frees credits and staging that wake other calls, so it runs
                        // on another thread rather than nest their locks inside ours.
                        connection.send(b, 0, length).subscribe(this);
                    }
                }
            } catch (RuntimeException e) {
                fail(new RpcException.ConnectionLost(request.function, e));
            } finally {
                b.release();  // the engine holds its own reference until the SEND completes
            }
        }

        private int encode(long id, RegisteredBuffer b) {
            Request r = request;
            int flags = (r.remote ? RequestHeader.REMOTE_PAYLOAD : 0) | (r.key != null ? RequestHeader.KEYED : 0)
                    | (windowBytes > 0 ? RequestHeader.WINDOW : 0);
            long base = exposed == null ? 0 : exposed.address();
            int rkey = exposedRkey;
            long payloadAddress = r.remote ? base + stagingOffset : 0;
            long windowAddress = windowBytes > 0 ? base + stagingOffset + payloadBytes() : 0;
            RequestHeader h = new RequestHeader(flags, r.functionId, id, r.key, r.payload.length, r.payloadCrc, payloadAddress,
                    r.remote ? rkey : 0, connection.config().bufferSize(), windowAddress, windowBytes > 0 ? rkey : 0, windowBytes);
            h.encode(b.segment(), 0);
            if (r.remote) return REQUEST_HEADER;
            MemorySegment.copy(r.payload, 0, b.segment(), ValueLayout.JAVA_BYTE, REQUEST_HEADER, r.payload.length);
            return REQUEST_HEADER + r.payload.length;
        }

        /** Out of the table of posted requests, if it is there. */
        private void unpend() {
            long id = requestId;
            if (id != 0) pending.compareAndSet((int) id & pendingMask, this, null);
        }

        /** The answer WRITE_WITH_IMM put into this request's window (valid: it is still reserved). */
        ResponseHeader.Frame readWindow() {
            synchronized (this) {
                if (state != State.SENT || windowBytes == 0) return new ResponseHeader.Frame(null, null, "no window for this request");
                MemorySegment w = exposed.segment().asSlice(stagingOffset + payloadBytes(), windowBytes);
                return ResponseHeader.decode(w, windowBytes, false);
            }
        }

        private void sendFailed(Throwable e) {
            unpend();
            fail(new RpcException.ConnectionLost(request.function, e));
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

        void answered(ResponseHeader.Frame f) {
            int given = giveBack();
            if (given == OVER) return;
            if (given == GIVEN_BACK_TOLD) {  // cancelled or timed out: the caller has its answer
                lateResponses.increment();
                return;
            }
            if (!f.ok()) {
                failWith(new RpcException.Protocol(request.function + ": " + f.error()));
                return;
            }
            byte[] payload = f.payload();
            if (f.header().status() == RpcStatus.OK) {
                succeed(payload);
                return;
            }
            String text = new String(payload, StandardCharsets.UTF_8);
            switch (f.header().status()) {
                case UNKNOWN_FUNCTION -> failWith(new RpcException.UnknownFunction(request.function));
                case HANDLER_ERROR -> failWith(new RpcException.HandlerFailed(request.function, text));
                case BAD_REQUEST -> failWith(new RpcException.BadRequest(request.function, text));
                case OVERLOADED -> failWith(new RpcException.Overloaded(request.function, text));
                case ALREADY_EXECUTED -> failWith(new RpcException.AlreadyExecuted(request.function));
                case RESPONSE_TOO_LARGE -> failWith(new RpcException.ResponseTooLarge(request.function,
                        payload.length >= 8 ? ByteBuffer.wrap(payload).getLong() : -1, windowBytes));
            }
        }

        private void succeed(byte[] payload) {
            if (countsOutcome) succeeded.increment();
            if (cancelled) return;
            actual.onNext(payload);
            actual.onComplete();
        }

        private void failWith(Throwable e) {
            if (countsOutcome) failed.increment();
            if (!cancelled) actual.onError(e);
        }

        /** The caller gave up (cancel). */
        void abandon() {
            DEADLINES.untrack(this);
            withdraw();
        }

        void lost(Throwable cause) {
            unpend();
            if (giveBack() == GIVEN_BACK) failWith(new RpcException.ConnectionLost(request.function, cause));
        }

        /** Fails the call, unless it is over or its caller was told already (a timeout, a cancel): one terminal signal. */
        private void fail(RpcException e) {
            if (giveBack() == GIVEN_BACK) failWith(e);
        }

        /**
         * Before the post everything goes back now; after it, the request is only marked
         * abandoned and keeps its credit and staging until the answer (the server may still READ
         * the payload or WRITE the window). Decided under the monitor, together with the state
         * change, so a post cannot slip in between. False if the call was already over, or was
         * abandoned after its post already (its caller was told then: a cancel, then the timeout).
         */
        private boolean withdraw() {
            return giveBack(true) != OVER;
        }

        /**
         * Returns credit, staging and the exposed-buffer reference, once: {@link #OVER} if the call
         * was over already, {@link #GIVEN_BACK_TOLD} if its caller was told before (a timeout or a
         * cancel abandoned it after the post), else {@link #GIVEN_BACK}. Whether the caller was told
         * is read with the state change, in one step: read before it, a timeout in between was
         * followed by a second terminal signal (an answer, or the SEND's failure).
         */
        private int giveBack() {
            return giveBack(false);
        }

        private int giveBack(boolean unlessSent) {
            boolean credit;
            long offset;
            long bytes;
            CreditGate.Waiter cw;
            RangeAllocator.Waiter sw;
            int given;
            synchronized (this) {
                if (state == State.DONE) return OVER;
                if (unlessSent && state == State.SENT) {
                    if (abandoned) return OVER;  // a cancel and then the timeout: the caller was told once
                    abandoned = true;
                    return GIVEN_BACK;
                }
                given = abandoned ? GIVEN_BACK_TOLD : GIVEN_BACK;
                state = State.DONE;
                credit = hasCredit;
                hasCredit = false;
                offset = stagingOffset;
                bytes = stagingBytes;
                stagingOffset = -1;
                cw = creditWaiter;
                sw = stagingWaiter;
            }
            removeLive(this);
            DEADLINES.untrack(this);
            if (cw != null) credits.cancel(cw);  // granted meanwhile? credited() sees DONE and returns it
            if (sw != null) staging.cancel(sw);  // likewise staged()
            if (offset >= 0) {
                staging.free(offset, bytes);
                exposed.release();
            }
            if (credit) credits.release();
            return given;
        }
    }

    /** What {@code giveBack} did: nothing (the call was over), gave back, gave back a call whose caller was told already. */
    private static final int OVER = 0, GIVEN_BACK = 1, GIVEN_BACK_TOLD = 2;

    private int posted() {
        int n = 0;
        for (int i = 0; i < pending.length(); i++) {
            if (pending.get(i) != null) n++;
        }
        return n;
    }

    private long nextId() {
        long id;
        do {
            id = ++lastId;
        } while (id == 0 || pending.get((int) id & pendingMask) != null);  // an old request still unanswered keeps its slot
        return id;
    }

    // ------------------------------------------------------------------------------ lifecycle

    /**
     * Closes the connection; outstanding calls fail with {@link RpcException.ConnectionLost}.
     *
     * @return closes when subscribed, as {@link RdmaConnection#close()}; completes once the connection is destroyed
     */
    public Mono<Void> close() {
        return connection.close();
    }

    /** {@return completes when the connection is fully closed, by either side or a failure} */
    public Mono<Void> onClose() {
        return connection.onClose();
    }

    /** {@return true once the connection began closing} */
    public boolean isClosed() {
        return connection.isClosed();
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
