package io.jrdma.rpc;

import static io.jrdma.rpc.Frames.REQUEST_HEADER;
import static io.jrdma.rpc.Frames.getInt;
import static io.jrdma.rpc.Frames.getLong;
import static io.jrdma.rpc.Frames.getUnsignedShort;
import static io.jrdma.rpc.Frames.putInt;
import static io.jrdma.rpc.Frames.putLong;
import static io.jrdma.rpc.Frames.putShort;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The 80-byte request header, big-endian (docs/rpc-protocol.md has the table):
 * <pre>
 *  0 u32 magic "JRPQ"        16 u64 request id            48 u64 payload address   64 u64 window address
 *  4 u8  version (1)         24 u64 idempotency key hi    56 u32 payload rkey      72 u32 window rkey
 *  5 u8  flags               32 u64 idempotency key lo    60 u32 max inline resp.  76 u32 window length
 *  6 u16 reserved (0)        40 u32 payload length
 *  8 u32 function id         44 u32 payload crc32c
 * 12 u32 header crc32c
 * </pre>
 * The inline payload follows at 80 unless {@link #REMOTE_PAYLOAD} is set.
 */
record RequestHeader(int flags, int functionId, long requestId, IdempotencyKey key, int payloadLength, int payloadCrc,
                     long payloadAddress, int payloadRkey, int maxInlineResponse, long windowAddress, int windowRkey,
                     int windowLength) {
    /** The payload stays in the client's exposed memory; the server fetches it with RDMA READ. */
    static final int REMOTE_PAYLOAD = 0x01;
    /** Idempotency key present. */
    static final int KEYED = 0x02;
    /** Response window present: a large response may be written there with WRITE_WITH_IMM. */
    static final int WINDOW = 0x04;
    static final int KNOWN_FLAGS = REMOTE_PAYLOAD | KEYED | WINDOW;
    static final int CRC_OFFSET = 12;

    boolean remotePayload() {
        return (flags & REMOTE_PAYLOAD) != 0;
    }

    boolean hasWindow() {
        return (flags & WINDOW) != 0;
    }

    /** Writes the 80 header bytes at {@code offset}, checksum included: built on the heap, copied out at once. */
    void encode(MemorySegment out, long offset) {
        Frames.Checksum c = Frames.scratch();
        byte[] h = c.header;
        putInt(h, 0, Frames.REQUEST_MAGIC);
        h[4] = (byte) Frames.VERSION;
        h[5] = (byte) flags;
        putShort(h, 6, 0);
        putInt(h, 8, functionId);
        putInt(h, CRC_OFFSET, 0);
        putLong(h, 16, requestId);
        putLong(h, 24, key == null ? 0 : key.high());
        putLong(h, 32, key == null ? 0 : key.low());
        putInt(h, 40, payloadLength);
        putInt(h, 44, payloadCrc);
        putLong(h, 48, payloadAddress);
        putInt(h, 56, payloadRkey);
        putInt(h, 60, maxInlineResponse);
        putLong(h, 64, windowAddress);
        putInt(h, 72, windowRkey);
        putInt(h, 76, windowLength);
        putInt(h, CRC_OFFSET, c.crc32c(h, 0, REQUEST_HEADER));
        MemorySegment.copy(h, 0, out, ValueLayout.JAVA_BYTE, offset, REQUEST_HEADER);
    }

    /** What the server makes of a received frame. */
    sealed interface Decoded permits Ok, Drop, Reject {}

    /** A well-formed request (its inline payload, if any, checksummed). */
    record Ok(RequestHeader header) implements Decoded {}

    /** Not even the request id can be trusted: no answer, a log line and a counter. */
    record Drop(String reason) implements Decoded {}

    /**
     * The header is intact (its checksum matched) but the request is invalid: answer BAD_REQUEST
     * in a SEND of at most {@code maxInlineResponse} bytes.
     */
    record Reject(long requestId, int maxInlineResponse, String reason) implements Decoded {}

    /** The smallest receive buffer a client may announce: room for a response header and a short reason. */
    static final int MIN_INLINE_RESPONSE = 64;

    /**
     * Validates a received frame of {@code length} bytes. Never throws for any input: every
     * field is checked before it is used, and lengths are compared as unsigned numbers.
     */
    static Decoded decode(MemorySegment frame, long length) {
        if (length < REQUEST_HEADER) return new Drop("truncated header: " + length + " bytes, a request header has " + REQUEST_HEADER);
        // one copy of the header, checked and read on the heap (its checksum field zeroed there)
        Frames.Checksum c = Frames.scratch();
        byte[] h = c.load(frame, REQUEST_HEADER);
        int magic = getInt(h, 0);
        if (magic != Frames.REQUEST_MAGIC) return new Drop(String.format("bad magic 0x%08x", magic));
        int version = Byte.toUnsignedInt(h[4]);
        if (version != Frames.VERSION) return new Drop("unsupported protocol version " + version);
        int crc = getInt(h, CRC_OFFSET);
        putInt(h, CRC_OFFSET, 0);
        if (crc != c.crc32c(h, 0, REQUEST_HEADER)) return new Drop("header checksum mismatch");

        // From here on the header is what the client sent: answer to its request id, in a SEND
        // no larger than the receive buffers it announced (a larger one would break its QP).
        long maxInline = Frames.u32(getInt(h, 60));
        if (maxInline < MIN_INLINE_RESPONSE) return new Drop("max inline response " + maxInline + " is too small to answer");
        int inline = (int) Math.min(maxInline, Integer.MAX_VALUE);
        long id = getLong(h, 16);
        int flags = Byte.toUnsignedInt(h[5]);
        if (id == 0) return new Reject(0, inline, "request id 0 is reserved");
        if ((flags & ~KNOWN_FLAGS) != 0) return new Reject(id, inline, String.format("unknown flags 0x%02x", flags & ~KNOWN_FLAGS));
        if (getUnsignedShort(h, 6) != 0) return new Reject(id, inline, "reserved header bytes are not zero");
        int functionId = getInt(h, 8);
        long keyHi = getLong(h, 24);
        long keyLo = getLong(h, 32);
        long payloadLength = Frames.u32(getInt(h, 40));
        int payloadCrc = getInt(h, 44);
        long payloadAddress = getLong(h, 48);
        int payloadRkey = getInt(h, 56);
        long windowAddress = getLong(h, 64);
        int windowRkey = getInt(h, 72);
        long windowLength = Frames.u32(getInt(h, 76));

        IdempotencyKey key = null;
        if ((flags & KEYED) != 0) {
            if (keyHi == 0 && keyLo == 0) return new Reject(id, inline, "idempotency flag set but the key is zero");
            key = new IdempotencyKey(keyHi, keyLo);
        } else if (keyHi != 0 || keyLo != 0) {
            return new Reject(id, inline, "idempotency key without its flag");
        }
        if ((flags & WINDOW) != 0) {
            if (windowLength < Frames.RESPONSE_HEADER) return new Reject(id, inline, "response window of " + windowLength + " bytes cannot hold a response header");
        } else if (windowAddress != 0 || windowRkey != 0 || windowLength != 0) {
            return new Reject(id, inline, "response window fields without the window flag");
        }
        if (payloadLength > Integer.MAX_VALUE - REQUEST_HEADER) return new Reject(id, inline, "payload length " + payloadLength + " is too large");
        if ((flags & REMOTE_PAYLOAD) != 0) {
            if (length != REQUEST_HEADER) return new Reject(id, inline, "remote payload but " + (length - REQUEST_HEADER) + " inline bytes");
        } else {
            if (payloadAddress != 0 || payloadRkey != 0) return new Reject(id, inline, "payload descriptor without the remote-payload flag");
            if (length != REQUEST_HEADER + payloadLength) {
                return new Reject(id, inline, "frame of " + length + " bytes but the header announces " + payloadLength + " payload bytes"
                        + (length < REQUEST_HEADER + payloadLength ? " (truncated)" : " (trailing bytes)"));
            }
            // the same thread's scratch: a thread-local lookup is a few calls under the lab's C1
            if (c.crc32c(frame, REQUEST_HEADER, payloadLength) != payloadCrc) return new Reject(id, inline, "payload checksum mismatch");
        }
        return new Ok(new RequestHeader(flags, functionId, id, key, (int) payloadLength, payloadCrc, payloadAddress,
                payloadRkey, inline, windowAddress, windowRkey, (int) Math.min(windowLength, Integer.MAX_VALUE)));
    }
}
