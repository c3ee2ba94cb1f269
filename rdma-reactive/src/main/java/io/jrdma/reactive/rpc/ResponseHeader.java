package io.jrdma.reactive.rpc;

import static io.jrdma.reactive.rpc.Frames.BE_INT;
import static io.jrdma.reactive.rpc.Frames.BE_LONG;
import static io.jrdma.reactive.rpc.Frames.BE_SHORT;
import static io.jrdma.reactive.rpc.Frames.RESPONSE_HEADER;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The 32-byte response header, big-endian:
 * <pre>
 *  0 u32 magic "JRPR"   5 u8  status       8 u64 request id        20 u32 payload crc32c   28 u32 reserved (0)
 *  4 u8  version (1)    6 u16 flags       16 u32 payload length    24 u32 header crc32c
 * </pre>
 * The payload follows at 32, in a SEND or, with {@link #IN_WINDOW}, in the client's response
 * window, written there by RDMA WRITE_WITH_IMM whose immediate is the request id's low 32 bits.
 */
record ResponseHeader(RpcStatus status, int flags, long requestId, int payloadLength, int payloadCrc) {
    static final int IN_WINDOW = 0x01;
    static final int CRC_OFFSET = 24;

    void encode(MemorySegment out, long offset) {
        MemorySegment h = out.asSlice(offset, RESPONSE_HEADER);
        h.fill((byte) 0);
        h.set(BE_INT, 0, Frames.RESPONSE_MAGIC);
        h.set(ValueLayout.JAVA_BYTE, 4, (byte) Frames.VERSION);
        h.set(ValueLayout.JAVA_BYTE, 5, (byte) status.code());
        h.set(BE_SHORT, 6, (short) flags);
        h.set(BE_LONG, 8, requestId);
        h.set(BE_INT, 16, payloadLength);
        h.set(BE_INT, 20, payloadCrc);
        h.set(BE_INT, CRC_OFFSET, Frames.headerCrc(h, 0, RESPONSE_HEADER, CRC_OFFSET));
    }

    /** A whole response frame: header and payload, written into {@code out} at {@code offset}. */
    static int encodeFrame(RpcStatus status, int flags, long requestId, byte[] payload, MemorySegment out, long offset) {
        new ResponseHeader(status, flags, requestId, payload.length, Frames.crc32c(payload)).encode(out, offset);
        MemorySegment.copy(payload, 0, out, ValueLayout.JAVA_BYTE, offset + RESPONSE_HEADER, payload.length);
        return RESPONSE_HEADER + payload.length;
    }

    /** A decoded response: header and a copy of its payload, or why it is unusable. */
    record Frame(ResponseHeader header, byte[] payload, String error) {
        boolean ok() {
            return error == null;
        }
    }

    /**
     * Validates a response of at most {@code length} bytes (a SEND's exact length, or a window's
     * size, where the frame may be shorter). Never throws.
     */
    static Frame decode(MemorySegment frame, long length, boolean exactLength) {
        if (length < RESPONSE_HEADER) return bad("truncated response header: " + length + " bytes");
        int magic = frame.get(BE_INT, 0);
        if (magic != Frames.RESPONSE_MAGIC) return bad(String.format("bad response magic 0x%08x", magic));
        int version = Byte.toUnsignedInt(frame.get(ValueLayout.JAVA_BYTE, 4));
        if (version != Frames.VERSION) return bad("unsupported response version " + version);
        if (frame.get(BE_INT, CRC_OFFSET) != Frames.headerCrc(frame, 0, RESPONSE_HEADER, CRC_OFFSET)) return bad("response header checksum mismatch");
        RpcStatus status = RpcStatus.of(Byte.toUnsignedInt(frame.get(ValueLayout.JAVA_BYTE, 5)));
        if (status == null) return bad("unknown response status " + Byte.toUnsignedInt(frame.get(ValueLayout.JAVA_BYTE, 5)));
        long payloadLength = Frames.u32(frame.get(BE_INT, 16));
        long total = RESPONSE_HEADER + payloadLength;
        if (exactLength ? total != length : total > length) {
            return bad("response announces " + payloadLength + " payload bytes in a frame of " + length);
        }
        int payloadCrc = frame.get(BE_INT, 20);
        if (Frames.crc32c(frame, RESPONSE_HEADER, payloadLength) != payloadCrc) return bad("response payload checksum mismatch");
        ResponseHeader h = new ResponseHeader(status, Short.toUnsignedInt(frame.get(BE_SHORT, 6)), frame.get(BE_LONG, 8),
                (int) payloadLength, payloadCrc);
        return new Frame(h, Frames.copyOut(frame, RESPONSE_HEADER, payloadLength), null);
    }

    private static Frame bad(String why) {
        return new Frame(null, null, why);
    }
}
