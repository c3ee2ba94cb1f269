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
import java.util.Map;
import java.util.zip.CRC32C;
import org.jspecify.annotations.Nullable;

/**
 * The 80-byte request header, big-endian (docs/rpc-protocol.md has the table):
 * <pre>
 *  0 u32 magic "JRPQ"        16 u64 request id            48 u64 payload address   64 u64 window address
 *  4 u8  version (1)         24 u64 idempotency key hi    56 u32 payload rkey      72 u32 window rkey
 *  5 u8  flags               32 u64 idempotency key lo    60 u32 max inline resp.  76 u32 window length
 *  6 u16 context length     40 u32 payload length
 *  8 u32 function id         44 u32 payload crc32c
 * 12 u32 header crc32c
 * </pre>
 * With {@link #CONTEXT} the context ({@link CallContext}: trace context and the like, as key-value
 * pairs) follows at 80 and the header checksum covers it too; the inline payload follows the
 * context (at 80 without one) unless {@link #REMOTE_PAYLOAD} is set.
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
    /** A call context follows the header: its length at offset 6. Sent only to servers whose hello offers {@link Hello#CONTEXT}. */
    static final int CONTEXT = 0x08;
    static final int KNOWN_FLAGS = REMOTE_PAYLOAD | KEYED | WINDOW | CONTEXT;
    static final int CRC_OFFSET = 12;

    boolean remotePayload() {
        return (flags & REMOTE_PAYLOAD) != 0;
    }

    boolean hasWindow() {
        return (flags & WINDOW) != 0;
    }

    /** Writes the 80 header bytes at {@code offset}, checksum included: built on the heap, copied out at once. */
    void encode(MemorySegment out, long offset) {
        encode(out, offset, null);
    }

    /**
     * Writes the header and, with the {@link #CONTEXT} flag, {@code context} (encoded, {@link CallContext#encode})
     * after it: {@code 80 + context.length} bytes at {@code offset}, the checksum over both.
     */
    void encode(MemorySegment out, long offset, byte @Nullable [] context) {
        Frames.Checksum c = Frames.scratch();
        byte[] h = c.header;
        int contextLength = (flags & CONTEXT) != 0 && context != null ? context.length : 0;
        putInt(h, 0, Frames.REQUEST_MAGIC);
        h[4] = (byte) Frames.VERSION;
        h[5] = (byte) flags;
        putShort(h, 6, contextLength);
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
        CRC32C crc = c.reset();
        crc.update(h, 0, REQUEST_HEADER);
        if (contextLength > 0) crc.update(context, 0, contextLength);
        putInt(h, CRC_OFFSET, (int) crc.getValue());
        MemorySegment.copy(h, 0, out, ValueLayout.JAVA_BYTE, offset, REQUEST_HEADER);
        if (contextLength > 0) MemorySegment.copy(context, 0, out, ValueLayout.JAVA_BYTE, offset + REQUEST_HEADER, contextLength);
    }

    /** What the server makes of a received frame. */
    sealed interface Decoded permits Ok, Drop, Reject {}

    /**
     * A well-formed request (its inline payload, if any, checksummed), its context (empty without
     * one) and where its inline payload starts.
     */
    record Ok(RequestHeader header, Map<String, String> context, int payloadOffset) implements Decoded {}

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
        int flags = Byte.toUnsignedInt(h[5]);
        int contextLength = (flags & CONTEXT) != 0 ? getUnsignedShort(h, 6) : 0;
        if (contextLength > length - REQUEST_HEADER) return new Drop("truncated context: " + (length - REQUEST_HEADER) + " bytes after the header");
        CRC32C headerCrc = c.reset();
        headerCrc.update(h, 0, REQUEST_HEADER);
        if (contextLength > 0) c.update(frame, REQUEST_HEADER, contextLength);
        if (crc != (int) headerCrc.getValue()) return new Drop("header checksum mismatch");

        // From here on the header is what the client sent: answer to its request id, in a SEND
        // no larger than the receive buffers it announced (a larger one would break its QP).
        long maxInline = Frames.u32(getInt(h, 60));
        if (maxInline < MIN_INLINE_RESPONSE) return new Drop("max inline response " + maxInline + " is too small to answer");
        int inline = (int) Math.min(maxInline, Integer.MAX_VALUE);
        long id = getLong(h, 16);
        if (id == 0) return new Reject(0, inline, "request id 0 is reserved");
        if ((flags & ~KNOWN_FLAGS) != 0) return new Reject(id, inline, String.format("unknown flags 0x%02x", flags & ~KNOWN_FLAGS));
        if ((flags & CONTEXT) == 0 && getUnsignedShort(h, 6) != 0) return new Reject(id, inline, "reserved bytes (the context length) set without the context flag");
        if ((flags & CONTEXT) != 0 && contextLength == 0) return new Reject(id, inline, "the context flag with an empty context");
        Map<String, String> context;
        try {
            context = contextLength == 0 ? Map.of() : CallContext.decode(frame, REQUEST_HEADER, contextLength);
        } catch (IllegalArgumentException e) {
            return new Reject(id, inline, "malformed context: " + e.getMessage());
        }
        int payloadOffset = REQUEST_HEADER + contextLength;
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
        if (payloadLength > Integer.MAX_VALUE - payloadOffset) return new Reject(id, inline, "payload length " + payloadLength + " is too large");
        if ((flags & REMOTE_PAYLOAD) != 0) {
            if (length != payloadOffset) return new Reject(id, inline, "remote payload but " + (length - payloadOffset) + " inline bytes");
        } else {
            if (payloadAddress != 0 || payloadRkey != 0) return new Reject(id, inline, "payload descriptor without the remote-payload flag");
            if (length != payloadOffset + payloadLength) {
                return new Reject(id, inline, "frame of " + length + " bytes but the header announces " + payloadLength + " payload bytes"
                        + (contextLength > 0 ? " after " + contextLength + " context bytes" : "")
                        + (length < payloadOffset + payloadLength ? " (truncated)" : " (trailing bytes)"));
            }
            // the same thread's scratch: a thread-local lookup is a few calls under the lab's C1
            if (c.crc32c(frame, payloadOffset, payloadLength) != payloadCrc) return new Reject(id, inline, "payload checksum mismatch");
        }
        return new Ok(new RequestHeader(flags, functionId, id, key, (int) payloadLength, payloadCrc, payloadAddress,
                payloadRkey, inline, windowAddress, windowRkey, (int) Math.min(windowLength, Integer.MAX_VALUE)), context, payloadOffset);
    }
}
