package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The call context on the wire (docs/rpc-protocol.md, "Call context"): its pairs, the header checksum over it, and what an old or hostile peer meets. */
class CallContextTest {
    private static final Map<String, String> TRACE = Map.of("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
    private static final byte[] PAYLOAD = "hello".getBytes(StandardCharsets.UTF_8);

    /** A request as the client encodes it: header, context, then the inline payload. */
    private static byte[] frame(Map<String, String> context, byte[] payload) {
        byte[] c = CallContext.encode(context);
        MemorySegment s = Arena.ofAuto().allocate(Frames.REQUEST_HEADER + c.length + payload.length);
        new RequestHeader(RequestHeader.CONTEXT, Frames.functionId("upper"), 9, null, payload.length, Frames.crc32c(payload), 0, 0,
                4096, 0, 0, 0).encode(s, 0, c);
        MemorySegment.copy(payload, 0, s, ValueLayout.JAVA_BYTE, Frames.REQUEST_HEADER + c.length, payload.length);
        return s.toArray(ValueLayout.JAVA_BYTE);
    }

    private static RequestHeader.Decoded decode(byte[] frame) {
        return RequestHeader.decode(MemorySegment.ofArray(frame), frame.length);
    }

    @Test
    void theContextTravelsBetweenHeaderAndPayload() {
        Map<String, String> context = new LinkedHashMap<>(TRACE);
        context.put("baggage", "tenant=ä");
        byte[] f = frame(context, PAYLOAD);
        RequestHeader.Ok ok = assertInstanceOf(RequestHeader.Ok.class, decode(f));
        assertEquals(context, ok.context());
        int length = ByteBuffer.wrap(f).getShort(6) & 0xFFFF;
        assertEquals(Frames.REQUEST_HEADER + length, ok.payloadOffset());
        assertArrayEquals(PAYLOAD, java.util.Arrays.copyOfRange(f, ok.payloadOffset(), f.length));
        assertEquals(1 + 11 + 2 + 55, CallContext.encode(TRACE).length, "u8 key length, key, u16 value length, value");
    }

    @Test
    void withoutTheFlagNothingChanges() {
        RequestHeader.Ok ok = assertInstanceOf(RequestHeader.Ok.class, decode(TestFrames.inline("upper", 3, PAYLOAD)));
        assertEquals(Map.of(), ok.context());
        assertEquals(Frames.REQUEST_HEADER, ok.payloadOffset());
    }

    @Test
    void theHeaderChecksumCoversTheContext() {
        byte[] f = frame(TRACE, PAYLOAD);
        f[Frames.REQUEST_HEADER + 20] ^= 1;
        assertTrue(TestFrames.classify(f).startsWith("drop: header checksum"), TestFrames.classify(f));
    }

    @Test
    void aContextLongerThanTheFrameIsDroppedAndMalformedPairsAreRejected() {
        byte[] f = frame(TRACE, new byte[0]);
        byte[] cut = java.util.Arrays.copyOf(f, f.length - 3);
        assertTrue(TestFrames.classify(cut).startsWith("drop: truncated context"), TestFrames.classify(cut));
        byte[] emptyKey = f.clone();
        emptyKey[Frames.REQUEST_HEADER] = 0;
        assertTrue(TestFrames.classify(TestFrames.resealHeader(emptyKey, 69)).contains("malformed context: an empty key"));
        byte[] longValue = f.clone();
        ByteBuffer.wrap(longValue).putShort(Frames.REQUEST_HEADER + 12, (short) 56);
        assertTrue(TestFrames.classify(TestFrames.resealHeader(longValue, 69)).contains("malformed context: a value runs past"));
        byte[] flagOnly = TestFrames.inline("upper", 3, PAYLOAD);
        flagOnly[5] = RequestHeader.CONTEXT;
        assertTrue(TestFrames.classify(TestFrames.resealHeader(flagOnly)).contains("empty context"));
        byte[] lengthOnly = TestFrames.inline("upper", 3, PAYLOAD);
        lengthOnly[7] = 5;
        assertTrue(TestFrames.classify(TestFrames.resealHeader(lengthOnly)).contains("reserved bytes (the context length)"));
    }

    @Test
    void whatTheWireCannotCarryIsRefusedAtTheSender() {
        assertThrows(IllegalArgumentException.class, () -> CallContext.encode(Map.of("", "x")));
        assertThrows(IllegalArgumentException.class, () -> CallContext.encode(Map.of("a key", "x")));
        assertThrows(IllegalArgumentException.class, () -> CallContext.encode(Map.of("k", "x".repeat(CallContext.MAX_BYTES))));
        assertThrows(IllegalArgumentException.class, () -> CallContext.decode(MemorySegment.ofArray(new byte[] {1, (byte) 0xC3, 0, 0}), 0, 4),
                "a key is printable US-ASCII");
    }

    @Test
    void aClientSendsTheContextOnlyToAServerWhoseHelloOffersIt() {
        Hello today = Hello.decode(new Hello(1, Hello.FEATURES, 64, 4096, 1, 1, 1).encode());
        Hello older = Hello.decode(new Hello(1, 0, 64, 4096, 1, 1, 1).encode());  // its bytes 2-3 were reserved, 0
        assertTrue(today.offers(Hello.CONTEXT));
        assertFalse(older.offers(Hello.CONTEXT));
    }
}
