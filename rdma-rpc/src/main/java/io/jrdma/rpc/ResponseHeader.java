package io.jrdma.rpc;

import static io.jrdma.rpc.Frames.RESPONSE_HEADER;
import static io.jrdma.rpc.Frames.getInt;
import static io.jrdma.rpc.Frames.getLong;
import static io.jrdma.rpc.Frames.getUnsignedShort;
import static io.jrdma.rpc.Frames.putInt;
import static io.jrdma.rpc.Frames.putLong;
import static io.jrdma.rpc.Frames.putShort;

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

    /** Writes the 32 header bytes at {@code offset}, checksum included: built on the heap, copied out at once. */
    void encode(MemorySegment out, long offset) {
        encode(Frames.scratch(), out, offset);
    }

    private void encode(Frames.Checksum c, MemorySegment out, long offset) {
        byte[] h = c.header;
        putInt(h, 0, Frames.RESPONSE_MAGIC);
        h[4] = (byte) Frames.VERSION;
        h[5] = (byte) status.code();
        putShort(h, 6, flags);
        putLong(h, 8, requestId);
        putInt(h, 16, payloadLength);
        putInt(h, 20, payloadCrc);
        putInt(h, CRC_OFFSET, 0);
        putInt(h, 28, 0);
        putInt(h, CRC_OFFSET, c.crc32c(h, 0, RESPONSE_HEADER));
        MemorySegment.copy(h, 0, out, ValueLayout.JAVA_BYTE, offset, RESPONSE_HEADER);
    }

    /** A whole response frame: header and payload, written into {@code out} at {@code offset}. */
    static int encodeFrame(RpcStatus status, int flags, long requestId, byte[] payload, MemorySegment out, long offset) {
        Frames.Checksum c = Frames.scratch();
        new ResponseHeader(status, flags, requestId, payload.length, c.crc32c(payload)).encode(c, out, offset);
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
        Frames.Checksum c = Frames.scratch();
        byte[] b = c.load(frame, RESPONSE_HEADER);
        int magic = getInt(b, 0);
        if (magic != Frames.RESPONSE_MAGIC) return bad(String.format("bad response magic 0x%08x", magic));
        int version = Byte.toUnsignedInt(b[4]);
        if (version != Frames.VERSION) return bad("unsupported response version " + version);
        int crc = getInt(b, CRC_OFFSET);
        putInt(b, CRC_OFFSET, 0);
        if (crc != c.crc32c(b, 0, RESPONSE_HEADER)) return bad("response header checksum mismatch");
        RpcStatus status = RpcStatus.of(Byte.toUnsignedInt(b[5]));
        if (status == null) return bad("unknown response status " + Byte.toUnsignedInt(b[5]));
        long payloadLength = Frames.u32(getInt(b, 16));
        long total = RESPONSE_HEADER + payloadLength;
        if (exactLength ? total != length : total > length) {
            return bad("response announces " + payloadLength + " payload bytes in a frame of " + length);
        }
        int payloadCrc = getInt(b, 20);
        ResponseHeader h = new ResponseHeader(status, getUnsignedShort(b, 6), getLong(b, 8), (int) payloadLength, payloadCrc);
        // the header copy is read: the payload's checksum may use the thread's scratch now
        if (c.crc32c(frame, RESPONSE_HEADER, payloadLength) != payloadCrc) return bad("response payload checksum mismatch");
        return new Frame(h, Frames.copyOut(frame, RESPONSE_HEADER, payloadLength), null);
    }

    private static Frame bad(String why) {
        return new Frame(null, null, why);
    }
}
