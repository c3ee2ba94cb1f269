package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class RequestHeaderTest {
    private static final byte[] HELLO = "hello".getBytes(StandardCharsets.UTF_8);

    private static RequestHeader.Decoded decode(byte[] frame) {
        return RequestHeader.decode(MemorySegment.ofArray(frame), frame.length);
    }

    @Test
    void aRequestSurvivesEncodeAndDecodeFieldForField() {
        IdempotencyKey key = new IdempotencyKey(7, 9);
        byte[] f = TestFrames.frame(TestFrames.FLAG_KEYED | TestFrames.FLAG_WINDOW, 0x1234, 42, key, HELLO, 0, 0, 4096, 0x7000, 0x55, 128);
        RequestHeader h = assertInstanceOf(RequestHeader.Ok.class, decode(f)).header();
        assertEquals(0x1234, h.functionId());
        assertEquals(42, h.requestId());
        assertEquals(key, h.key());
        assertEquals(5, h.payloadLength());
        assertEquals(4096, h.maxInlineResponse());
        assertEquals(0x7000, h.windowAddress());
        assertEquals(0x55, h.windowRkey());
        assertEquals(128, h.windowLength());
        assertEquals(Frames.REQUEST_HEADER + 5, f.length);
    }

    @Test
    void theHeaderLayoutIsTheDocumentedOne() {
        byte[] f = TestFrames.inline("upper", 0x0102030405060708L, HELLO);
        ByteBuffer b = ByteBuffer.wrap(f);
        assertEquals(0x4A525051, b.getInt(0));            // "JRPQ"
        assertEquals(1, b.get(4));                         // version
        assertEquals(TestFrames.functionId("upper"), b.getInt(8));
        assertEquals(0x0102030405060708L, b.getLong(16));
        assertEquals(5, b.getInt(40));
        assertEquals(Frames.crc32c(HELLO), b.getInt(44));
        assertEquals(4096, b.getInt(60));
    }

    @Test
    void aRemotePayloadTravelsAsADescriptorOnly() {
        byte[] f = TestFrames.frame(TestFrames.FLAG_REMOTE, 5, 1, null, new byte[1 << 20], 0x10000, 0x77, 4096, 0, 0, 0);
        assertEquals(Frames.REQUEST_HEADER, f.length);
        RequestHeader h = assertInstanceOf(RequestHeader.Ok.class, decode(f)).header();
        assertTrue(h.remotePayload());
        assertEquals(1 << 20, h.payloadLength());
        assertEquals(0x10000, h.payloadAddress());
    }

    @Test
    void framesWhoseIdCannotBeTrustedAreDropped() {
        byte[] good = TestFrames.inline("upper", 3, HELLO);
        assertInstanceOf(RequestHeader.Drop.class, decode(java.util.Arrays.copyOf(good, 79)));
        byte[] magic = good.clone();
        magic[0] ^= 1;
        assertInstanceOf(RequestHeader.Drop.class, decode(magic));
        byte[] version = good.clone();
        version[4] = 2;
        assertInstanceOf(RequestHeader.Drop.class, decode(version));
        byte[] flipped = good.clone();
        flipped[17] ^= 0x10;  // inside the request id: the header checksum catches it
        assertInstanceOf(RequestHeader.Drop.class, decode(flipped));
        byte[] tiny = TestFrames.frame(0, 5, 1, null, HELLO, 0, 0, 32, 0, 0, 0);
        assertTrue(TestFrames.classify(tiny).contains("too small to answer"), TestFrames.classify(tiny));
    }

    @Test
    void intactHeadersWithBadContentAreRejectedToTheirId() {
        byte[] good = TestFrames.inline("upper", 3, HELLO);
        byte[] truncated = java.util.Arrays.copyOf(good, good.length - 1);
        RequestHeader.Reject r = assertInstanceOf(RequestHeader.Reject.class, decode(truncated));
        assertEquals(3, r.requestId());
        assertTrue(r.reason().contains("truncated"), r.reason());
        byte[] trailing = java.util.Arrays.copyOf(good, good.length + 3);
        assertTrue(TestFrames.classify(trailing).contains("trailing"));
        byte[] payloadFlip = good.clone();
        payloadFlip[Frames.REQUEST_HEADER + 1] ^= 4;
        assertTrue(TestFrames.classify(payloadFlip).contains("payload checksum"));
        assertTrue(TestFrames.classify(TestFrames.inline("upper", 0, HELLO)).contains("request id 0"));
        byte[] flags = good.clone();
        flags[5] = (byte) 0x80;
        assertTrue(TestFrames.classify(TestFrames.resealHeader(flags)).contains("unknown flags"));
        byte[] reserved = good.clone();
        reserved[7] = 1;
        assertTrue(TestFrames.classify(TestFrames.resealHeader(reserved)).contains("reserved"));
        byte[] hugeLength = good.clone();
        ByteBuffer.wrap(hugeLength).putInt(40, 0xFFFF_FFF0);
        assertTrue(TestFrames.classify(TestFrames.resealHeader(hugeLength)).contains("too large"));
        byte[] keyNoFlag = good.clone();
        ByteBuffer.wrap(keyNoFlag).putLong(24, 1);
        assertTrue(TestFrames.classify(TestFrames.resealHeader(keyNoFlag)).contains("without its flag"));
        byte[] zeroKey = good.clone();
        zeroKey[5] = (byte) TestFrames.FLAG_KEYED;
        assertTrue(TestFrames.classify(TestFrames.resealHeader(zeroKey)).contains("key is zero"));
        byte[] smallWindow = TestFrames.frame(TestFrames.FLAG_WINDOW, 5, 1, null, HELLO, 0, 0, 4096, 0x1000, 1, 16);
        assertTrue(TestFrames.classify(smallWindow).contains("cannot hold"));
        byte[] strayWindow = good.clone();
        ByteBuffer.wrap(strayWindow).putInt(76, 64);
        assertTrue(TestFrames.classify(TestFrames.resealHeader(strayWindow)).contains("without the window flag"));
        byte[] strayDescriptor = good.clone();
        ByteBuffer.wrap(strayDescriptor).putLong(48, 0x1000);
        assertTrue(TestFrames.classify(TestFrames.resealHeader(strayDescriptor)).contains("without the remote-payload flag"));
        byte[] remoteWithBytes = TestFrames.frame(TestFrames.FLAG_REMOTE, 5, 1, null, HELLO, 0x1000, 1, 4096, 0, 0, 0);
        assertTrue(TestFrames.classify(java.util.Arrays.copyOf(remoteWithBytes, 90)).contains("inline bytes"));
    }

    @Test
    void functionIdsAreTheCrc32cOfTheName() {
        java.util.zip.CRC32C c = new java.util.zip.CRC32C();
        c.update("sha256".getBytes(StandardCharsets.UTF_8));
        assertEquals((int) c.getValue(), Frames.functionId("sha256"));
        assertNotEquals(Frames.functionId("upper"), Frames.functionId("Upper"));
        assertThrows(IllegalArgumentException.class, () -> Frames.functionId("$hello"));
        assertThrows(IllegalArgumentException.class, () -> Frames.functionId(""));
        assertThrows(IllegalArgumentException.class, () -> Frames.functionId("x".repeat(256)));
    }

    @Test
    void responsesRoundTripAndRejectCorruption() {
        MemorySegment s = MemorySegment.ofArray(new byte[256]);
        int n = ResponseHeader.encodeFrame(RpcStatus.HANDLER_ERROR, 0, 99, "boom".getBytes(StandardCharsets.UTF_8), s, 0);
        ResponseHeader.Frame f = ResponseHeader.decode(s, n, true);
        assertTrue(f.ok(), f.error());
        assertEquals(RpcStatus.HANDLER_ERROR, f.header().status());
        assertEquals(99, f.header().requestId());
        assertEquals("boom", new String(f.payload(), StandardCharsets.UTF_8));
        assertTrue(ResponseHeader.decode(s, 256, false).ok(), "a window may be larger than its frame");
        assertTrue(ResponseHeader.decode(s, 256, true).error().contains("announces"));
        s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 33, (byte) 'X');
        assertTrue(ResponseHeader.decode(s, n, true).error().contains("payload checksum"));
        s.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 9, (byte) 1);
        assertTrue(ResponseHeader.decode(s, n, true).error().contains("header checksum"));
    }

    @Test
    void theHelloRoundTripsAndRefusesNonsense() {
        Hello h = new Hello(1, Hello.FEATURES, 64, 4096, 4 << 20, 4 << 20, 256);
        assertEquals(h, Hello.decode(h.encode()));
        assertThrows(RpcException.Protocol.class, () -> Hello.decode(new byte[3]));
        assertThrows(RpcException.Protocol.class, () -> Hello.decode(new Hello(1, 0, 0, 4096, 1, 1, 1).encode()));
    }

    @Test
    void errorTextsAreCutAtCharacterBoundaries() {
        byte[] cut = Frames.utf8("aé", 2);  // é is 2 bytes: cutting after 'a' + half of it must drop the half
        assertEquals("a", new String(cut, StandardCharsets.UTF_8));
    }
}
