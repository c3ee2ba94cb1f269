package io.jrdma.rpc;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Builds request frames the way a client does, for host tests and the lab's raw fuzz client. */
public final class TestFrames {
    private TestFrames() {}

    public static final int REQUEST_HEADER = Frames.REQUEST_HEADER;
    public static final int RESPONSE_HEADER = Frames.RESPONSE_HEADER;

    public static int functionId(String name) {
        return Frames.functionId(name);
    }

    /** A valid inline request frame. */
    public static byte[] inline(String function, long requestId, byte[] payload) {
        return frame(0, functionId(function), requestId, null, payload, 0, 0, 4096, 0, 0, 0);
    }

    /** Any frame: the header is checksummed as given; for remote payloads {@code payload} only feeds the checksum. */
    public static byte[] frame(int flags, int functionId, long requestId, IdempotencyKey key, byte[] payload, long payloadAddress,
                               int payloadRkey, int maxInlineResponse, long windowAddress, int windowRkey, int windowLength) {
        boolean remote = (flags & RequestHeader.REMOTE_PAYLOAD) != 0;
        int size = REQUEST_HEADER + (remote ? 0 : payload.length);
        MemorySegment s = Arena.ofAuto().allocate(size);
        new RequestHeader(flags, functionId, requestId, key, payload.length, Frames.crc32c(payload), payloadAddress, payloadRkey,
                maxInlineResponse, windowAddress, windowRkey, windowLength).encode(s, 0);
        if (!remote) MemorySegment.copy(payload, 0, s, ValueLayout.JAVA_BYTE, REQUEST_HEADER, payload.length);
        return s.toArray(ValueLayout.JAVA_BYTE);
    }

    /** A request whose payload the server is to READ: the header alone, with whatever length and checksum it claims. */
    public static byte[] remote(int functionId, long requestId, int payloadLength, int payloadCrc, long address, int rkey,
                                int windowFlagAndLength, long windowAddress, int windowRkey) {
        MemorySegment s = Arena.ofAuto().allocate(REQUEST_HEADER);
        int flags = RequestHeader.REMOTE_PAYLOAD | (windowFlagAndLength > 0 ? RequestHeader.WINDOW : 0);
        new RequestHeader(flags, functionId, requestId, null, payloadLength, payloadCrc, address, rkey, 4096,
                windowFlagAndLength > 0 ? windowAddress : 0, windowFlagAndLength > 0 ? windowRkey : 0, Math.max(0, windowFlagAndLength)).encode(s, 0);
        return s.toArray(ValueLayout.JAVA_BYTE);
    }

    /** The status of an answer frame as received in a SEND, or "invalid: why". */
    public static String responseStatus(byte[] answer) {
        ResponseHeader.Frame f = ResponseHeader.decode(MemorySegment.ofArray(answer), answer.length, true);
        return f.ok() ? f.header().status().name() : "invalid: " + f.error();
    }

    /** Re-computes the header checksum of {@code frame} in place after a deliberate field change. */
    public static byte[] resealHeader(byte[] frame) {
        MemorySegment s = MemorySegment.ofArray(frame);
        s.set(Frames.BE_INT, RequestHeader.CRC_OFFSET, Frames.headerCrc(s, 0, REQUEST_HEADER, RequestHeader.CRC_OFFSET));
        return frame;
    }

    /** As {@link #resealHeader(byte[])}, the checksum over the header and the {@code contextLength} bytes after it. */
    public static byte[] resealHeader(byte[] frame, int contextLength) {
        MemorySegment s = MemorySegment.ofArray(frame);
        s.set(Frames.BE_INT, RequestHeader.CRC_OFFSET, 0);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(frame, 0, REQUEST_HEADER + contextLength);
        s.set(Frames.BE_INT, RequestHeader.CRC_OFFSET, (int) crc.getValue());
        return frame;
    }

    /** Outcome of the server's decoder on {@code frame}: "ok", "drop: ..." or "reject: ...". */
    public static String classify(byte[] frame) {
        MemorySegment s = Arena.ofAuto().allocate(Math.max(frame.length, 1));
        MemorySegment.copy(frame, 0, s, ValueLayout.JAVA_BYTE, 0, frame.length);
        return switch (RequestHeader.decode(s, frame.length)) {
            case RequestHeader.Ok ok -> "ok";
            case RequestHeader.Drop d -> "drop: " + d.reason();
            case RequestHeader.Reject r -> "reject: " + r.reason();
        };
    }

    public static final int FLAG_REMOTE = RequestHeader.REMOTE_PAYLOAD;
    public static final int FLAG_KEYED = RequestHeader.KEYED;
    public static final int FLAG_WINDOW = RequestHeader.WINDOW;
}
