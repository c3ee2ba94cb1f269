package io.jrdma.rsocket;

import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;

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
final class ReceivedFrame extends UnpooledDirectByteBuf {
    private final ReceivedMessage message;

    private ReceivedFrame(ByteBufAllocator alloc, ReceivedMessage message) {
        // doNotFree: the memory is the receive pool's; writerIndex = the message's length
        super(alloc, message.buffer().segment().asSlice(0, message.length()).asByteBuffer(), message.length());
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

    /**
     * The frame's native address: its memory is the receive buffer's, live while the frame is. With
     * it a slice's {@code memoryAddress()} (Netty adds the slice's offset) tells where a part of the
     * frame lies without allocating ({@link FrameGather}); Netty's own uses of an address are
     * guarded by {@code PlatformDependent.hasUnsafe()} and read the same bytes as the buffer's.
     */
    @Override
    public boolean hasMemoryAddress() {
        return true;
    }

    @Override
    public long memoryAddress() {
        ensureAccessible();
        return message.buffer().address();
    }

    /** {@return the receive buffer this frame's bytes lie in, from its offset 0} */
    RegisteredBuffer buffer() {
        return message.buffer();
    }

    @Override
    protected void deallocate() {
        super.deallocate();
        message.release();
    }
}
