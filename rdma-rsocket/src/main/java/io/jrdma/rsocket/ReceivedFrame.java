package io.jrdma.rsocket;

import io.jrdma.reactive.memory.ReceivedMessage;
import io.netty.buffer.ByteBufAllocator;

/**
 * An inbound RSocket frame: a {@code ByteBuf} over the registered receive buffer its SEND landed
 * in, without a copy. RSocket owns it like any frame; when its reference count reaches zero (the
 * frame and every slice RSocket retained of it released), the {@link ReceivedMessage} is released
 * and its buffer posted again, returning the peer its credit. Until then the peer has one credit
 * less: an application holding zero-copy payloads ({@code PayloadDecoder.ZERO_COPY}) holds the
 * sender back, as a slow consumer should.
 *
 * <p>Safe because Netty checks the reference count on every access: once released, a read through
 * a stale reference throws {@code IllegalReferenceCountException} instead of reading a buffer the
 * NIC may be writing the next message into.
 */
final class ReceivedFrame extends RegisteredByteBuf {
    private final ReceivedMessage message;

    private ReceivedFrame(ByteBufAllocator alloc, ReceivedMessage message) {
        super(alloc, message.buffer(), 0, message.length());
        this.message = message;
    }

    /** Takes over {@code message}: it is released with the frame, or now if wrapping fails. */
    static ReceivedFrame of(ReceivedMessage message, ByteBufAllocator alloc) {
        try {
            return new ReceivedFrame(alloc, message);
        } catch (RuntimeException e) {
            message.release();
            throw e;
        }
    }

    @Override
    protected void deallocate() {
        super.deallocate();
        message.release();
    }
}
