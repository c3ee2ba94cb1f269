package io.jrdma.rsocket;

import io.netty.buffer.ByteBuf;
import io.netty.util.ReferenceCountUtil;
import java.util.AbstractQueue;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jspecify.annotations.Nullable;
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
 *     their {@code offer} calls returned (the calls are serialised on this queue's lock), except
 *     that a frame offered as urgent (stream 0's: KEEPALIVE, LEASE, METADATA_PUSH, a connection
 *     ERROR) goes ahead of the others still queued, behind urgent ones only, as rsocket-java's own
 *     transports send them ({@code BaseDuplexConnection.sendFrame}: {@code tryEmitPrioritized}).
 *     Without it a KEEPALIVE's answer waited behind every frame queued for the peer's credits, and
 *     a responder that had queued a minute of frames lost its connection to the keepalive
 *     timeout.</li>
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
    private final Lanes lanes = new Lanes();
    private final Sinks.Many<ByteBuf> sink = Sinks.many().unicast().onBackpressureBuffer(lanes);
    private long queuedBytes;  // guarded by this
    private boolean closed;    // guarded by this

    FrameQueue(long maxQueuedBytes) {
        if (maxQueuedBytes < 1) throw new IllegalArgumentException("maxQueuedBytes must be positive");
        this.maxQueuedBytes = maxQueuedBytes;
    }

    /** Takes ownership of {@code frame}: queued (ahead of the others if {@code urgent}), or released at once when refused. */
    Offer offer(ByteBuf frame, boolean urgent) {
        int bytes = frame.readableBytes();
        synchronized (this) {
            if (!closed) {
                if (queuedBytes + bytes > maxQueuedBytes) {
                    ReferenceCountUtil.safeRelease(frame);
                    return Offer.OVERFLOW;
                }
                queuedBytes += bytes;
                // unicast sink: onNext may run the send stream here, still in order (this lock)
                lanes.nextUrgent = urgent;
                boolean queued = sink.tryEmitNext(frame).isSuccess();
                lanes.nextUrgent = false;
                if (queued) return Offer.QUEUED;
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

    /**
     * The sink's queue: two lanes, the urgent one polled first. Offers come one at a time (under
     * the queue's lock, which sets {@link #nextUrgent} around each); the sink's drain polls from
     * any thread, concurrently with offers.
     */
    private static final class Lanes extends AbstractQueue<ByteBuf> {
        private final Queue<ByteBuf> urgent = new ConcurrentLinkedQueue<>();
        private final Queue<ByteBuf> normal = Queues.<ByteBuf>unboundedMultiproducer().get();
        boolean nextUrgent;  // written and read under FrameQueue's lock only

        @Override
        public boolean offer(ByteBuf frame) {
            return nextUrgent ? urgent.offer(frame) : normal.offer(frame);
        }

        @Override
        public @Nullable ByteBuf poll() {
            ByteBuf f = urgent.poll();
            return f != null ? f : normal.poll();
        }

        @Override
        public @Nullable ByteBuf peek() {
            ByteBuf f = urgent.peek();
            return f != null ? f : normal.peek();
        }

        @Override
        public boolean isEmpty() {
            return urgent.isEmpty() && normal.isEmpty();
        }

        @Override
        public int size() {
            return urgent.size() + normal.size();
        }

        @Override
        public Iterator<ByteBuf> iterator() {
            throw new UnsupportedOperationException("the sink polls");
        }
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
