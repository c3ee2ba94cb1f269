package io.jrdma.rpc;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A call's context on the wire: what a tracer's propagator writes into a carrier
 * ({@code traceparent}, {@code tracestate}, {@code b3}, baggage), as key-value pairs after the request
 * header (docs/rpc-protocol.md, "Call context"). Each pair: u8 key length (1 to 255), the key
 * (printable US-ASCII: header names), u16 value length, the value (UTF-8). At most
 * {@link #MAX_BYTES} in all; a key given twice keeps its last value.
 */
final class CallContext {
    /** The most context bytes a request carries: enough for W3C trace context and some baggage, small against a receive buffer. */
    static final int MAX_BYTES = 1024;

    private CallContext() {}

    /** The pairs of {@code carrier}, encoded; throws {@link IllegalArgumentException} for a key or a size the wire cannot carry. */
    static byte[] encode(Map<String, String> carrier) {
        byte[][] parts = new byte[carrier.size() * 2][];
        int i = 0, size = 0;
        for (Map.Entry<String, String> e : carrier.entrySet()) {
            byte[] key = e.getKey().getBytes(StandardCharsets.US_ASCII);
            checkKey(key, e.getKey());
            byte[] value = e.getValue() == null ? new byte[0] : e.getValue().getBytes(StandardCharsets.UTF_8);
            if (value.length > 0xFFFF) throw new IllegalArgumentException("context value of " + e.getKey() + " has " + value.length + " bytes");
            parts[i++] = key;
            parts[i++] = value;
            size += 1 + key.length + 2 + value.length;
        }
        if (size > MAX_BYTES) throw new IllegalArgumentException("a call context of " + size + " bytes is larger than " + MAX_BYTES);
        byte[] out = new byte[size];
        int at = 0;
        for (int p = 0; p < parts.length; p += 2) {
            out[at++] = (byte) parts[p].length;
            System.arraycopy(parts[p], 0, out, at, parts[p].length);
            at += parts[p].length;
            Frames.putShort(out, at, parts[p + 1].length);
            at += 2;
            System.arraycopy(parts[p + 1], 0, out, at, parts[p + 1].length);
            at += parts[p + 1].length;
        }
        return out;
    }

    /** The pairs in {@code length} bytes of {@code frame} at {@code offset}; throws {@link IllegalArgumentException} saying what is malformed. */
    static Map<String, String> decode(MemorySegment frame, long offset, int length) {
        if (length > MAX_BYTES) throw new IllegalArgumentException(length + " bytes, more than " + MAX_BYTES);
        byte[] b = new byte[length];
        MemorySegment.copy(frame, ValueLayout.JAVA_BYTE, offset, b, 0, length);
        Map<String, String> pairs = new LinkedHashMap<>();
        int at = 0;
        while (at < length) {
            int keyLength = b[at++] & 0xFF;
            if (keyLength == 0) throw new IllegalArgumentException("an empty key at byte " + (at - 1));
            if (at + keyLength + 2 > length) throw new IllegalArgumentException("a pair runs past the context's end at byte " + (at - 1));
            byte[] key = java.util.Arrays.copyOfRange(b, at, at + keyLength);
            checkKey(key, null);
            at += keyLength;
            int valueLength = Frames.getUnsignedShort(b, at);
            at += 2;
            if (at + valueLength > length) throw new IllegalArgumentException("a value runs past the context's end at byte " + (at - 2));
            pairs.put(new String(key, StandardCharsets.US_ASCII), utf8(b, at, valueLength));
            at += valueLength;
        }
        return pairs;
    }

    private static void checkKey(byte[] key, String given) {
        if (key.length == 0 || key.length > 255) throw new IllegalArgumentException("a context key has 1 to 255 characters: " + given);
        for (byte k : key) {
            if (k < 0x21 || k > 0x7E) throw new IllegalArgumentException("a context key is printable US-ASCII"
                    + (given == null ? "" : ": " + given));
        }
    }

    private static String utf8(byte[] b, int at, int length) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT).onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(b, at, length)).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("a value is not UTF-8");
        }
    }
}
