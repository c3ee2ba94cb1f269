package io.jrdma.rsocket;

import io.jrdma.reactive.memory.RegisteredBuffer;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import org.jspecify.annotations.Nullable;

/**
 * Registered memory as Netty {@code ByteBuf}s, for RSocket payloads sent without a copy: a frame
 * that carries at least 1 KiB of such a buffer, over a connection of the same device, goes as one
 * gather SEND with those bytes read where they are (the frame's header copied; the rules of
 * rdma-rsocket's {@code FrameGather}, as for a payload received and passed on). Anywhere else (a
 * frame above the peer's receive buffers, another device, RSocket over TCP) the bytes are copied
 * like any {@code ByteBuf}'s.
 *
 * <pre>{@code
 * RegisteredBuffer b = memoryDomain.register(1 << 20, Access.LOCAL_WRITE);  // filled by the application
 * rsocket.fireAndForget(ByteBufPayload.create(RegisteredByteBufs.wrap(b, 0, length)));
 * }</pre>
 */
public final class RegisteredByteBufs {
    private RegisteredByteBufs() {
    }

    /**
     * {@return {@code length} bytes of {@code buffer} from {@code offset}, readable, as a
     * {@code ByteBuf} of that fixed capacity}; it takes over one reference to {@code buffer} (the
     * caller's: retain first to keep one), released when the {@code ByteBuf}'s last reference goes,
     * and a SEND from it holds one more until it completed, so the memory stays registered while
     * the NIC may read it
     *
     * @param buffer registered memory, of the device of the connections that send it in place
     * @param offset where the bytes start in {@code buffer}
     * @param length the bytes
     * @throws IllegalArgumentException when the range is not within the buffer (the reference stays the caller's)
     */
    public static ByteBuf wrap(RegisteredBuffer buffer, long offset, int length) {
        if (offset < 0 || length < 0 || offset + length > buffer.capacity()) {
            throw new IllegalArgumentException("[" + offset + ", " + offset + " + " + length + ") is not within " + buffer);
        }
        return new Registered(buffer, offset, length);
    }

    /** {@return the registered buffer {@code b} lies in, if it is a {@link #wrap}ped one or a received frame, else null} */
    static @Nullable RegisteredBuffer registered(ByteBuf b) {
        return b instanceof RegisteredByteBuf r ? r.buffer() : null;
    }

    private static final class Registered extends RegisteredByteBuf {
        Registered(RegisteredBuffer buffer, long offset, int length) {
            super(ByteBufAllocator.DEFAULT, buffer, offset, length);
        }

        @Override
        protected void deallocate() {
            super.deallocate();
            buffer().release();
        }
    }
}
