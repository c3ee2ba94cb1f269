package io.jrdma.rsocket;

import io.jrdma.reactive.memory.RegisteredBuffer;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledDirectByteBuf;

/**
 * A {@code ByteBuf} over a range of registered memory, of that fixed capacity, readable whole: a
 * received frame ({@link ReceivedFrame}) or the application's memory
 * ({@link RegisteredByteBufs#wrap}). The subclass says what its last release gives back.
 *
 * <p>It has a native address: its memory is the registered buffer's, live while this is. With it
 * a slice's {@code memoryAddress()} (Netty adds the slice's offset) tells where a part of a frame
 * lies without allocating ({@link FrameGather}); Netty's own uses of an address are guarded by
 * {@code PlatformDependent.hasUnsafe()} and read the same bytes as the buffer's.
 */
abstract class RegisteredByteBuf extends UnpooledDirectByteBuf {
    private final RegisteredBuffer buffer;
    private final long address;

    RegisteredByteBuf(ByteBufAllocator alloc, RegisteredBuffer buffer, long offset, int length) {
        // doNotFree: the memory is the registered buffer's; writerIndex = length
        super(alloc, buffer.segment().asSlice(offset, length).asByteBuffer(), length);
        this.buffer = buffer;
        this.address = buffer.address() + offset;
    }

    /** {@return the registered buffer these bytes lie in} */
    final RegisteredBuffer buffer() {
        return buffer;
    }

    @Override
    public final boolean hasMemoryAddress() {
        return true;
    }

    @Override
    public final long memoryAddress() {
        ensureAccessible();
        return address;
    }
}
