package io.jrdma.rsocket;

import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.CompositeByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/**
 * An outbound frame as one gather list, its received parts sent where they are. The gap: RSocket
 * builds a frame as a {@code CompositeByteBuf} of a header it allocates and the payload's
 * {@code ByteBuf}s, and a payload a responder passes on (an echo, a proxy, decoded with
 * {@code PayloadDecoder.ZERO_COPY}) is a slice of a frame that arrived in a registered receive
 * buffer: copying the whole frame copies registered memory into registered memory. The rules:
 * <ol>
 * <li>a part goes in place when it is a slice of a received frame ({@link ReceivedFrame}) or of
 *     registered memory the application wrapped ({@link RegisteredByteBufs}) whose buffer lies in
 *     the connection's memory domain (the same device: its lkey is valid here), and
 *     is at least {@link #IN_PLACE_MIN} bytes: a shorter one is copied, which is cheaper than holding
 *     a receive buffer out of its queue (its peer gets that credit back only once this SEND completed);</li>
 * <li>the other parts are copied, in order, into one buffer of the connection's pool; adjacent
 *     copied parts make one slice;</li>
 * <li>only when the frame goes as one SEND (at most {@code limit} bytes, at most
 *     {@code maxScatterGather} slices, the copied parts within one pool buffer), else the caller
 *     copies the frame whole, as before; a frame that needs a pool buffer waits for one as a
 *     copied frame does;</li>
 * <li>each slice holds its own reference to its buffer (a receive buffer stays out of its queue
 *     until the SEND completed); the frame is not released here: the caller releases it once,
 *     whatever happened.</li>
 * </ol>
 */
final class FrameGather {
    /** The shortest part sent in place: below it, a copy. Chosen, not measured (a 1 KiB copy is ~0.1 us on a host CPU). */
    static final int IN_PLACE_MIN = 1024;

    private FrameGather() {
    }

    /** The plan of a frame that goes copied whole: no part in place, or it cannot go as one gather list (rule 3). */
    static final long COPY_WHOLE = -1;
    /** The most parts a frame may have to go as a gather list: the plan has a bit for each. */
    static final int MAX_PARTS = 31;

    /**
     * {@return how {@code frame} goes: {@link #COPY_WHOLE}, or as a gather list, which parts in place
     * (a bit each) and how many bytes are copied ({@link #copiedBytes}), for {@link #build}}
     *
     * @param limit     the longest frame one SEND carries (the peer's receive buffers)
     * @param maxSlices the connection's {@code maxScatterGather}
     * @param maxCopy   the pool's buffer size, where the copied parts go
     * @param inDomain  whether a receive buffer lies in the connection's memory domain
     */
    static long plan(ByteBuf frame, int limit, int maxSlices, int maxCopy, Predicate<RegisteredBuffer> inDomain) {
        int length = frame.readableBytes();
        if (length < IN_PLACE_MIN || length > limit) return COPY_WHOLE;
        CompositeByteBuf composite = frame instanceof CompositeByteBuf c ? c : null;
        int parts = composite == null ? 1 : composite.numComponents();
        if (parts > MAX_PARTS) return COPY_WHOLE;
        if (composite != null && (composite.readerIndex() != 0 || composite.writerIndex() != composite.capacity())) return COPY_WHOLE;
        int slices = 0, copied = 0, inPlace = 0;
        boolean lastCopied = false;
        for (int i = 0; i < parts; i++) {
            if (inPlace(frame, composite, i, inDomain)) {
                inPlace |= 1 << i;
                slices++;
                lastCopied = false;
            } else {
                copied += partLength(frame, composite, i);
                if (!lastCopied) slices++;
                lastCopied = true;
            }
        }
        return inPlace == 0 || slices > maxSlices || copied > maxCopy ? COPY_WHOLE : (long) inPlace << 32 | copied;
    }

    /** {@return the bytes a {@link #plan} other than {@link #COPY_WHOLE} copies into a pool buffer (0: none)} */
    static int copiedBytes(long plan) {
        return (int) plan;
    }

    /**
     * {@return the gather list of {@code frame} as its {@code plan} says (not {@link #COPY_WHOLE}):
     * the parts in place, the others copied into {@code staging} (null when the plan copies nothing)};
     * takes over the caller's reference to {@code staging}, also when it fails
     */
    static List<ScatterGatherElement> build(ByteBuf frame, @Nullable RegisteredBuffer staging, long plan) {
        if (plan == COPY_WHOLE) throw new IllegalArgumentException("a frame copied whole has no gather list");
        int inPlace = (int) (plan >>> 32);
        CompositeByteBuf composite = frame instanceof CompositeByteBuf c ? c : null;
        int parts = composite == null ? 1 : composite.numComponents();
        List<ScatterGatherElement> gather = new ArrayList<>(Math.min(parts, 4));
        try {
            int at = 0, runStart = -1, runEnd = -1;  // a run of copied parts: [runStart, runEnd) of the frame
            for (int i = 0; i <= parts; i++) {
                boolean last = i == parts, copiedPart = !last && (inPlace & 1 << i) == 0;
                if (copiedPart) {  // extends the run
                    int start = composite == null ? frame.readerIndex() : composite.toByteIndex(i);
                    if (runStart < 0) runStart = start;
                    runEnd = start + partLength(frame, composite, i);
                    continue;
                }
                if (runStart >= 0) {  // the run before an in-place part, or the last: one slice of the staging buffer
                    if (staging == null) throw new IllegalArgumentException("a part to copy and no buffer for it");
                    int n = runEnd - runStart;
                    frame.getBytes(runStart, staging.segment().asSlice(at, n).asByteBuffer());
                    gather.add(ScatterGatherElement.of(staging.retain(), at, n));
                    at += n;
                    runStart = -1;
                }
                if (!last) {
                    ByteBuf part = part(frame, composite, i);
                    RegisteredBuffer registered = registeredRoot(part);
                    if (registered == null) throw new IllegalArgumentException("part " + i + " of the plan is not registered memory");
                    long offset = address(part) - registered.address();
                    gather.add(ScatterGatherElement.of(registered.retain(), offset, part.readableBytes()));
                }
            }
            return gather;
        } catch (RuntimeException e) {
            release(gather);
            throw e;
        } finally {
            if (staging != null) staging.release();  // the acquisition's reference: each slice holds its own
        }
    }

    /** Whether part {@code i} of {@code frame} goes in place (rule 1); a part's slice is taken only when it is long enough. */
    private static boolean inPlace(ByteBuf frame, @Nullable CompositeByteBuf composite, int i, Predicate<RegisteredBuffer> inDomain) {
        if (partLength(frame, composite, i) < IN_PLACE_MIN) return false;
        RegisteredBuffer root = registeredRoot(part(frame, composite, i));
        return root != null && inDomain.test(root);
    }

    /** Part {@code i} of {@code frame}: the frame itself, or a component's slice, which Netty makes once and keeps. */
    private static ByteBuf part(ByteBuf frame, @Nullable CompositeByteBuf composite, int i) {
        return composite == null ? frame : composite.internalComponent(i);
    }

    /** The bytes of part {@code i}, without taking its slice. */
    private static int partLength(ByteBuf frame, @Nullable CompositeByteBuf composite, int i) {
        if (composite == null) return frame.readableBytes();
        int end = i + 1 < composite.numComponents() ? composite.toByteIndex(i + 1) : composite.capacity();
        return end - composite.toByteIndex(i);
    }

    static void release(List<ScatterGatherElement> gather) {
        for (ScatterGatherElement e : gather) e.buffer().release();
    }

    /** The registered buffer under {@code part}: a slice (or duplicate) of a received frame or of a {@link RegisteredByteBufs#wrap}ped buffer, or null. */
    private static @Nullable RegisteredBuffer registeredRoot(ByteBuf part) {
        ByteBuf b = part;
        for (int depth = 0; b != null && depth < 4; depth++) {
            RegisteredBuffer r = RegisteredByteBufs.registered(b);
            if (r != null) return r;
            b = b.unwrap();
        }
        return null;
    }

    /** Where {@code part}'s readable bytes start: a slice of a received frame has the frame's address plus its offset. */
    private static long address(ByteBuf part) {
        return part.memoryAddress() + part.readerIndex();
    }
}
