package io.jrdma.rsocket;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.MessageTooLargeException;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.rsocket.DuplexConnection;
import io.rsocket.RSocketErrorException;
import io.rsocket.frame.ErrorFrameCodec;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.core.scheduler.Schedulers;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * An RSocket {@link DuplexConnection} over one {@link RdmaConnection}: each frame is one RDMA
 * message, whole (a SEND carries its length, so no length prefix as over TCP).
 *
 * <ul>
 * <li><b>Outbound.</b> {@link #sendFrame} queues the frame ({@link FrameQueue}); one
 *     {@link RdmaConnection#sendGather(org.reactivestreams.Publisher)} stream takes the frames in order,
 *     each only when the peer has a receive posted for it (its receiver credits), copies it into a
 *     buffer of the connection's pool (one copy: RSocket's frames live in Netty's memory, not in
 *     registered memory) and releases it; the pool buffer goes back once its SEND completed. A
 *     frame longer than the pool's buffers is copied, once too, into a buffer of the connection's
 *     large-message memory ({@link RdmaConnection#largeMessageBuffer}: size classes registered once
 *     and reused, nothing registered per frame), which the peer reads by RDMA READ when it is
 *     longer than its receive buffers (jrdma's large messages), up to {@link #maxFrameLength()}. A
 *     frame that carries a payload received on a connection of the same device (passed on,
 *     decoded zero-copy) goes as one gather SEND instead, those bytes sent where they are
 *     ({@link FrameGather}, {@link #framesSentInPlace()}). A longer frame, or one the peer refuses (its
 *     {@code maxMessageSize} is smaller), closes the connection with {@link FrameTooLargeException}.
 *     What waits for credits is bounded by {@code maxQueuedBytes}: past it the connection closes
 *     with {@link SendQueueOverflowException}.</li>
 * <li><b>Inbound.</b> {@link #receive()} emits each message as a {@code ByteBuf} over its receive
 *     buffer, without a copy ({@link ReceivedFrame}), released when the subscriber's
 *     {@code onNext} returns, as Reactor Netty's inbound is ({@link ReleaseAfterDelivery}): RSocket
 *     retains what it keeps, and the buffer is posted again when the last reference goes. It never completes: it fails with {@link ClosedChannelException} (cause:
 *     jrdma's {@link ConnectionException.Closed}) when the connection closes, whoever closed it.
 *     One subscriber; a second fails with {@link IllegalStateException}.</li>
 * <li><b>Lifecycle.</b> {@link #dispose()} closes the RDMA connection without waiting;
 *     {@link #onClose()} completes once its native resources are freed. The send stream ending
 *     (the connection closed, a SEND failed, {@link #sendErrorAndClose}) disposes it too.</li>
 * </ul>
 */
public final class RdmaDuplexConnection implements DuplexConnection {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.rsocket");

    /** What may wait for the peer's credits by default: 32 MiB of frames, two of RSocket's largest. */
    public static final long DEFAULT_MAX_QUEUED_BYTES = 32L << 20;

    private final RdmaConnection connection;
    private final SocketAddress remoteAddress;
    private final ByteBufAllocator alloc;
    private final int maxFrameLength;
    private final boolean largeMessages;
    private final long maxQueuedBytes;
    private final FrameQueue outbound;
    private final AtomicBoolean received = new AtomicBoolean();
    private final LongAdder framesInPlace = new LongAdder();
    private final Predicate<RegisteredBuffer> inDomain;
    private final int maxSlices;
    /** A view of each buffer of the connection's pool, made once ({@link #view}). */
    private final Map<RegisteredBuffer, ByteBuffer> views = new ConcurrentHashMap<>();
    /** Why the send stream failed, if it did: the cause of the {@link ClosedChannelException} that follows. */
    private volatile @Nullable Throwable sendFailure;

    RdmaDuplexConnection(RdmaConnection connection, SocketAddress remoteAddress, long maxQueuedBytes) {
        this.connection = connection;
        this.remoteAddress = remoteAddress;
        this.alloc = ByteBufAllocator.DEFAULT;
        // a peer granting receiver credits is a jrdma peer of this version: it takes large messages
        this.largeMessages = connection.peerCredits() >= 0;
        this.maxFrameLength = FrameLimits.maxFrameLength(largeMessages, connection.config().maxMessageSize(), connection.config().bufferSize());
        this.maxQueuedBytes = maxQueuedBytes;
        this.outbound = new FrameQueue(maxQueuedBytes);
        this.inDomain = connection.domain()::contains;
        this.maxSlices = connection.config().maxScatterGather();
        connection.sendGather(outbound.frames().concatMap(this::stage, 0)
                        .doOnDiscard(List.class, RdmaDuplexConnection::release))  // staged, then the stream ended
                .onErrorMap(MessageTooLargeException.class, e -> new FrameTooLargeException("the peer of " + connection + " refused an RSocket frame"
                        + " of " + e.length() + " bytes: its maxMessageSize is below this side's maxFrameLength " + maxFrameLength, e))
                .doFinally(s -> connection.dispose())
                .subscribe(null, e -> {
                    if (e instanceof ConnectionException.Closed || e instanceof ClosedChannelException) return;  // closed: no failure of sending
                    sendFailure = e;
                    LOG.warn(connection + ": sending RSocket frames failed; closing it", e);
                });
        connection.onDispose().subscribe(null, e -> { }, () -> outbound.abort(closedChannel(null)));
    }

    /**
     * Copies {@code frame} into a pool buffer (a frame passed on: its parts other than the received
     * ones, {@link FrameGather}): at once when one is free ({@link Staged}: the element, its list
     * and its Mono, three objects a frame), else once one comes back (at most the pool's
     * count are out: a SEND holds its buffer until it completed); or, longer than those, into a
     * buffer of the connection's large-message memory ({@link RdmaConnection#largeMessageBuffer}:
     * registered once per size class and reused, which the peer reads where it is), and releases
     * it, whatever happens: once copied, or at once if the stream ends before the copy began (never
     * during it).
     */
    private Mono<List<ScatterGatherElement>> stage(ByteBuf frame) {
        int length = frame.readableBytes();
        if (length > maxFrameLength) {
            frame.release();
            return Mono.error(new FrameTooLargeException("an RSocket frame of " + length + " bytes exceeds maxFrameLength " + maxFrameLength
                    + " of " + connection + (largeMessages ? "" : " (its buffer size: the peer takes no large"
                    + " messages)") + ": configure fragment(mtu) on the RSocket connector and server", null));
        }
        BufferPool pool = connection.buffers();
        // a frame passed on, with a received part to send where it is (FrameGather), or a small one: a pool buffer
        long plan = FrameGather.plan(frame, Math.min(connection.eagerLimit(), maxFrameLength), maxSlices, pool.bufferSize(), inDomain);
        int copied = plan == FrameGather.COPY_WHOLE ? -1 : FrameGather.copiedBytes(plan);  // -1: the whole frame
        if (copied >= 0 || length <= pool.bufferSize()) {
            // the common case, a pool buffer free (or none needed): staged at once, one Staged, no chain of operators
            RegisteredBuffer free = null;
            try {
                if (copied != 0) free = pool.tryAcquire();
            } catch (RuntimeException e) {  // the pool closed: the connection is going
                frame.release();
                return Mono.error(e);
            }
            if (free != null || copied == 0) {
                try {
                    return new Staged<>(stage(frame, free, plan, length), RdmaDuplexConnection::release);
                } finally {
                    frame.release();
                }
            }
        }
        // copying megabytes is no work for the connection's loop thread, where a buffer coming back may resume this
        Mono<RegisteredBuffer> buffer = copied >= 0 || length <= pool.bufferSize() ? Mono.defer(pool::acquire)
                : connection.largeMessageBuffer(length)
                        .publishOn(Schedulers.boundedElastic())
                        .doOnDiscard(RegisteredBuffer.class, RegisteredBuffer::release);  // acquired, then cancelled before the copy
        // the frame's one release: the copy's once done, or the stream's if it ends (cancels) before the copy began, never during it
        AtomicBoolean claimed = new AtomicBoolean();
        return buffer.<List<ScatterGatherElement>>handle((b, sink) -> {
            if (!claimed.compareAndSet(false, true)) {
                b.release();  // cancelled meanwhile: the frame is gone
                return;
            }
            try {
                sink.next(stage(frame, b, plan, length));
            } finally {
                frame.release();
            }
        }).doFinally(s -> {
            if (claimed.compareAndSet(false, true)) frame.release();
        });
    }

    @SuppressWarnings("unchecked")
    private static void release(List<?> gather) {
        FrameGather.release((List<ScatterGatherElement>) gather);
    }

    /** {@code frame} staged: as its {@code plan}'s gather list ({@code b}, if any, for its copied parts), or copied whole into {@code b}. */
    private List<ScatterGatherElement> stage(ByteBuf frame, @Nullable RegisteredBuffer b, long plan, int length) {
        if (plan == FrameGather.COPY_WHOLE) return List.of(copy(frame, b, length));
        List<ScatterGatherElement> gather = FrameGather.build(frame, b, plan);
        framesInPlace.increment();
        return gather;
    }

    private ScatterGatherElement copy(ByteBuf frame, RegisteredBuffer b, int length) {
        try {
            frame.getBytes(frame.readerIndex(), view(b, length));
            return ScatterGatherElement.of(b, 0, length);
        } catch (RuntimeException e) {
            b.release();
            throw e;
        }
    }

    /**
     * {@return a {@code ByteBuffer} over the first {@code length} bytes of {@code b}}: for a buffer of
     * the connection's pool the one view made for it once (a frame's copy then allocates no slice
     * and no {@code ByteBuffer}, ~110 B a frame), its position and limit set here; the frames are
     * staged one at a time, each into a buffer it holds alone. Other buffers (large-message memory,
     * for frames above the pool's buffers) get a view of their own.
     */
    private ByteBuffer view(RegisteredBuffer b, int length) {
        if (b.pool() != connection.buffers()) return b.segment().asSlice(0, length).asByteBuffer();
        return views.computeIfAbsent(b, RdmaDuplexConnection::wholeView).clear().limit(length);
    }

    private static ByteBuffer wholeView(RegisteredBuffer b) {
        return b.segment().asByteBuffer();
    }

    @Override
    public void sendFrame(int streamId, ByteBuf frame) {
        switch (outbound.offer(frame, streamId == 0)) {
            case QUEUED, CLOSED -> { }  // closed: the frame went with the connection, as over TCP
            case OVERFLOW -> {
                SendQueueOverflowException e = new SendQueueOverflowException(connection + ": more than " + maxQueuedBytes
                        + " bytes of frames waited for the peer's receiver credits");
                LOG.warn(e.getMessage() + "; closing it");
                outbound.abort(e);
                connection.dispose();
            }
        }
    }

    /**
     * Sends an ERROR frame on stream 0 after the frames already queued, then closes the connection;
     * within the connection's operation timeout at the latest, sent or not.
     */
    @Override
    public void sendErrorAndClose(RSocketErrorException errorException) {
        outbound.offer(ErrorFrameCodec.encode(alloc, 0, errorException), false);  // after the frames queued, the last
        outbound.finish();
        // RSocket closes this way when the peer stopped answering (keepalive timeout): a peer that
        // grants no more credits would otherwise hold the ERROR frame, and the connection, forever
        Disposable deadline = Mono.delay(connection.config().operationTimeout()).subscribe(t -> connection.dispose());
        connection.onDispose().subscribe(null, e -> deadline.dispose(), deadline::dispose);
    }

    @Override
    public Flux<ByteBuf> receive() {
        return Flux.defer(() -> {
            if (!received.compareAndSet(false, true)) {
                return Flux.error(new IllegalStateException(connection + ": receive() allows one subscriber"));
            }
            return connection.receives().map(m -> (ByteBuf) ReceivedFrame.of(m, alloc))
                    .concatWith(Mono.error(() -> closedChannel(null)))
                    .onErrorMap(ConnectionException.Closed.class, this::closedChannel)
                    .transform(Operators.<ByteBuf, ByteBuf>lift((scannable, actual) -> new ReleaseAfterDelivery(actual)));
        });
    }

    /** The connection closed; its cause is why the send stream failed (a frame too large, say) if it did, else {@code cause}. */
    private ClosedChannelException closedChannel(ConnectionException.@Nullable Closed cause) {
        ClosedChannelException e = new ClosedChannelException();
        Throwable failure = sendFailure;
        if (failure != null) {
            e.initCause(failure);
            if (cause != null) e.addSuppressed(cause);
        } else if (cause != null) {
            e.initCause(cause);
        }
        return e;
    }

    @Override
    public ByteBufAllocator alloc() {
        return alloc;
    }

    @Override
    public SocketAddress remoteAddress() {
        return remoteAddress;
    }

    /** {@return the RDMA connection the frames travel over} */
    public RdmaConnection connection() {
        return connection;
    }

    /**
     * {@return the longest frame one message of this connection carries: where the peer takes large
     * messages (a jrdma peer of this version: it grants receiver credits), this side's
     * {@code maxMessageSize}, at most RSocket's 16 MiB - 1; else the buffer size}
     */
    public int maxFrameLength() {
        return maxFrameLength;
    }

    /**
     * {@return the frames sent so far with a part in place: a payload received on a connection of
     * the same device (decoded with {@code PayloadDecoder.ZERO_COPY}) and passed on, at least
     * 1 KiB of it, in a frame that goes as one SEND; the rest of such a frame is copied}
     */
    public long framesSentInPlace() {
        return framesInPlace.sum();
    }

    /** {@return the bytes of frames waiting for the peer's receiver credits} */
    public long queuedBytes() {
        return outbound.queuedBytes();
    }

    @Override
    public Mono<Void> onClose() {
        return connection.onDispose();
    }

    @Override
    public void dispose() {
        connection.dispose();
    }

    @Override
    public boolean isDisposed() {
        return connection.isDisposed();
    }

    @Override
    public String toString() {
        return "RdmaDuplexConnection[" + connection + "]";
    }
}
