package io.jrdma.rsocket;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.CompositeByteBuf;
import io.netty.buffer.Unpooled;
import java.lang.foreign.Arena;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link FrameGather}'s rules without a device: pools over plain memory (no registration), a
 * received frame over a buffer of the "receive" pool, frames composed as RSocket composes them
 * (a header it allocates, then the payload's parts).
 */
class FrameGatherTest {
    private static final int SIZE = 4096;

    private final Arena arena = Arena.ofShared();
    private final BufferPool receives = MemoryInternals.get().pool(arena.allocate(SIZE * 4L, 64), 0x1, 0x2, SIZE, 4, () -> { });
    private final BufferPool sends = MemoryInternals.get().pool(arena.allocate(SIZE * 4L, 64), 0x3, 0x4, SIZE, 4, () -> { });
    private final Predicate<RegisteredBuffer> sameDevice = b -> b.pool() == receives || b.pool() == sends;

    @AfterEach
    void tearDown() {
        arena.close();
    }

    /** A frame of {@code length} bytes 0, 1, 2, ... received in a buffer of {@link #receives}. */
    private ReceivedFrame received(int length) {
        RegisteredBuffer b = receives.tryAcquire();
        for (int i = 0; i < length; i++) b.segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) i);
        return ReceivedFrame.of(MemoryInternals.get().message(b, length, false, 0, () -> { }), ByteBufAllocator.DEFAULT);
    }

    private static CompositeByteBuf frame(ByteBuf... parts) {
        return ByteBufAllocator.DEFAULT.compositeBuffer(parts.length).addComponents(true, parts);
    }

    /** FrameGather's two steps as the connection takes them, a pool buffer taken when something is copied; null: copied whole. */
    private List<ScatterGatherElement> gather(ByteBuf frame, int limit, int maxSlices, Predicate<RegisteredBuffer> inDomain) {
        long plan = FrameGather.plan(frame, limit, maxSlices, sends.bufferSize(), inDomain);
        if (plan == FrameGather.COPY_WHOLE) return null;
        return FrameGather.build(frame, FrameGather.copiedBytes(plan) == 0 ? null : sends.tryAcquire(), plan);
    }

    private static byte[] bytes(ScatterGatherElement e) {
        return e.buffer().bytes(e.offset(), e.length());
    }

    @Test
    void aReceivedPayloadGoesWhereItIsTheHeaderIsCopiedAndEachSliceHoldsItsBuffer() {
        ReceivedFrame in = received(3000);
        ByteBuf payload = in.retainedSlice(100, 2000);  // as ZERO_COPY's decoder keeps a payload
        in.release();
        CompositeByteBuf frame = frame(Unpooled.wrappedBuffer(new byte[] {9, 8, 7}), payload);

        List<ScatterGatherElement> gather = gather(frame, SIZE, 4, sameDevice);
        assertNotNull(gather);
        assertEquals(2, gather.size());
        assertEquals(sends, gather.get(0).buffer().pool());
        assertArrayEquals(new byte[] {9, 8, 7}, bytes(gather.get(0)));
        assertEquals(in.buffer(), gather.get(1).buffer(), "in place: the receive buffer itself");
        assertEquals(100, gather.get(1).offset());
        assertEquals(2000, gather.get(1).length());
        assertEquals((byte) 100, bytes(gather.get(1))[0]);

        frame.release();  // the caller's one release: the received frame is gone, its buffer held by the slice
        assertEquals(1, in.buffer().refCount());
        assertEquals(3, receives.available());
        assertEquals(3, sends.available());
        FrameGather.release(gather);
        assertEquals(4, receives.available(), "back to the receive queue once the SEND completed");
        assertEquals(4, sends.available());
    }

    @Test
    void copiedPartsBetweenInPlaceOnesMakeOneSliceEachAndTooManySlicesMeanACopy() {
        ReceivedFrame in = received(3000);
        ByteBuf metadata = in.retainedSlice(0, 1500);
        ByteBuf data = in.retainedSlice(1500, 1500);
        in.release();
        CompositeByteBuf frame = frame(Unpooled.wrappedBuffer(new byte[] {1, 2}), Unpooled.wrappedBuffer(new byte[] {3}), metadata,
                Unpooled.wrappedBuffer(new byte[] {4}), data);

        assertNull(gather(frame, SIZE, 3, sameDevice), "four slices, three allowed");
        List<ScatterGatherElement> gather = gather(frame, SIZE, 4, sameDevice);
        assertNotNull(gather);
        assertEquals(List.of(3, 1500, 1, 1500), gather.stream().map(ScatterGatherElement::length).toList());
        assertArrayEquals(new byte[] {1, 2, 3}, bytes(gather.get(0)), "the header and the part after it: one slice");
        assertArrayEquals(new byte[] {4}, bytes(gather.get(2)), "the next copied part: after them in the same buffer");
        assertEquals(gather.get(0).buffer(), gather.get(2).buffer());
        assertEquals(3, gather.get(2).offset());
        frame.release();
        FrameGather.release(gather);
        assertEquals(4, receives.available());
        assertEquals(4, sends.available());
    }

    @Test
    void aFrameAllInPlaceNeedsNoPoolBuffer() {
        ReceivedFrame in = received(3000);
        ByteBuf whole = in.retainedSlice(10, 2500);
        in.release();
        assertEquals(1L << 32, FrameGather.plan(whole, SIZE, 4, SIZE, sameDevice), "part 0 in place, nothing copied");
        List<ScatterGatherElement> gather = gather(whole, SIZE, 4, sameDevice);
        assertEquals(1, gather.size());
        assertEquals(10, gather.getFirst().offset());
        whole.release();
        FrameGather.release(gather);
        assertEquals(4, receives.available());
        assertEquals(4, sends.available());
    }

    @Test
    void registeredMemoryTheApplicationWrappedGoesInPlaceLikeAReceivedFrame() {
        RegisteredBuffer own = receives.tryAcquire();
        for (int i = 0; i < 3000; i++) own.segment().set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte) (i * 3));
        ByteBuf wrapped = RegisteredByteBufs.wrap(own, 500, 2000);
        CompositeByteBuf frame = frame(Unpooled.wrappedBuffer(new byte[] {5, 6}), wrapped.retainedSlice(800, 1200));
        wrapped.release();

        List<ScatterGatherElement> gather = gather(frame, SIZE, 4, sameDevice);
        assertNotNull(gather);
        assertEquals(own, gather.get(1).buffer());
        assertEquals(1300, gather.get(1).offset(), "the wrapped range's offset plus the slice's");
        assertEquals((byte) (1300 * 3), bytes(gather.get(1))[0]);
        frame.release();
        assertEquals(1, own.refCount(), "the slice's reference: the ByteBuf's went with its last release");
        FrameGather.release(gather);
        assertEquals(4, receives.available(), "and the buffer back once the SEND completed");
        assertThrows(IllegalArgumentException.class, () -> RegisteredByteBufs.wrap(receives.tryAcquire(), SIZE - 10, 11));
    }

    @Test
    void withoutAPartToSendInPlaceOrWhereItCannotGoInOneSendTheFrameIsCopiedWhole() {
        ReceivedFrame in = received(3000);
        ByteBuf small = in.retainedSlice(0, FrameGather.IN_PLACE_MIN - 1);
        ByteBuf large = in.retainedSlice(0, 2000);
        in.release();
        byte[] header = {9};
        CompositeByteBuf smallFrame = frame(Unpooled.wrappedBuffer(header), small);
        CompositeByteBuf largeFrame = frame(Unpooled.wrappedBuffer(header), large);

        assertNull(gather(smallFrame, SIZE, 4, sameDevice), "below IN_PLACE_MIN: copied");
        assertNull(gather(largeFrame, SIZE, 4, b -> false), "another device's buffer: its lkey means nothing here");
        assertNull(gather(largeFrame, 2000, 4, sameDevice), "above the peer's receive buffers: goes by rendezvous");
        assertNull(gather(Unpooled.wrappedBuffer(new byte[2000]), SIZE, 4, sameDevice), "nothing received in it");
        assertEquals(FrameGather.COPY_WHOLE, FrameGather.plan(largeFrame, SIZE, 4, 0, sameDevice), "its header would not fit a pool buffer");
        ByteBuf[] many = new ByteBuf[FrameGather.MAX_PARTS + 1];
        many[0] = large.retainedSlice();
        for (int i = 1; i < many.length; i++) many[i] = Unpooled.wrappedBuffer(header);
        CompositeByteBuf manyParts = frame(many);
        assertEquals(FrameGather.COPY_WHOLE, FrameGather.plan(manyParts, SIZE, 64, SIZE, sameDevice), "more parts than the plan has bits");
        manyParts.release();

        assertEquals(4, sends.available(), "nothing taken by the refusals");
        assertEquals(3, receives.available());
        smallFrame.release();
        largeFrame.release();
        assertEquals(4, receives.available());
    }
}
