package io.jrdma.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Sinks;
import reactor.util.concurrent.Queues;

/**
 * The outbound frames of one {@link RdmaDuplexConnection} on their way to its single send stream.
 * RSocket's {@code sendFrame} has no flow control of its own (its request-n bounds what a
 * responder emits, nothing bounds what a requester fires): this queue is where frames wait for the
 * peer's receiver credits, and it says how much may wait.
 *
 * <p>Rules:
 * <ol>
 * <li>{@link #offer} may be called from any thread; frames reach {@link #frames()} in the order
 *     their {@code offer} calls returned (the calls are serialised on this queue's lock).</li>
 * <li>Bounded: the bytes offered and not yet taken by the send stream never exceed
 *     {@code maxQueuedBytes}. An offer that would pass it is refused ({@link Offer#OVERFLOW}); the
 *     caller decides what that means (the connection closes: a frame silently dropped would break
 *     RSocket's streams).</li>
 * <li>Every frame offered is released exactly once: by the taker, once it has copied it, or here
 *     when it is refused, or discarded (by {@link #abort}, or the send stream's cancel).</li>
 * <li>{@link #finish()} completes {@link #frames()} after the frames already offered (an error
 *     frame sent last, then the close); {@link #abort} drops the frames still queued. After
 *     either, offers are refused ({@link Offer#CLOSED}).</li>
 * </ol>
 */
final class FrameQueue {
    /** What became of an offered frame. */
    enum Offer { QUEUED, OVERFLOW, CLOSED }

    private final long maxQueuedBytes;
    private final Sinks.Many<ByteBuf> sink = Sinks.many().unicast().onBackpressureBuffer(Queues.<ByteBuf>unboundedMultiproducer().get());
    private long queuedBytes;  // guarded by this
    private boolean closed;    // guarded by this

    FrameQueue(long maxQueuedBytes) {
        if (maxQueuedBytes < 1) throw new IllegalArgumentException("maxQueuedBytes must be positive");
        this.maxQueuedBytes = maxQueuedBytes;
    }

    /** Takes ownership of {@code frame}: queued, or released at once when refused. */
    Offer offer(ByteBuf frame) {
        int bytes = frame.readableBytes();
        synchronized (this) {
            if (!closed) {
                if (queuedBytes + bytes > maxQueuedBytes) {
                    ReferenceCountUtil.safeRelease(frame);
                    return Offer.OVERFLOW;
                }
                queuedBytes += bytes;
                // unicast sink: onNext may run the send stream here, still in order (this lock)
                if (sink.tryEmitNext(frame).isSuccess()) return Offer.QUEUED;
                queuedBytes -= bytes;  // the send stream was cancelled: the connection is going
            }
        }
        ReferenceCountUtil.safeRelease(frame);
        return Offer.CLOSED;
    }

    /**
     * The frames, once, for the send stream: each arrives owned by the subscriber, which releases
     * it; those still queued when it cancels are released here.
     */
    Flux<ByteBuf> frames() {
        return sink.asFlux().doOnNext(this::taken).doOnDiscard(ByteBuf.class, ReferenceCountUtil::safeRelease);
    }

    private synchronized void taken(ByteBuf frame) {
        queuedBytes -= frame.readableBytes();
    }

    /** {@return the bytes offered and not yet taken} */
    synchronized long queuedBytes() {
        return queuedBytes;
    }

    /** Completes {@link #frames()} once the frames offered so far are taken. Idempotent. */
    synchronized void finish() {
        if (closed) return;
        closed = true;
        sink.tryEmitComplete();
    }

    /**
     * Refuses further offers and ends {@link #frames()} with {@code cause} once the frames queued
     * are taken; those the send stream never takes (it is cancelled as the connection closes) are
     * released by its cancel. Idempotent.
     */
    synchronized void abort(Throwable cause) {
        if (closed) return;
        closed = true;
        sink.tryEmitError(cause);
    }
}
