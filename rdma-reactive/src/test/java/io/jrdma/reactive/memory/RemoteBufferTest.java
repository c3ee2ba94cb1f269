package io.jrdma.reactive.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The range arithmetic every READ, WRITE and atomic is checked with before it is posted. */
class RemoteBufferTest {
    private static final RemoteBuffer PEER = new RemoteBuffer(0x1000, 0xabcd, 4096);

    @Test
    void aSliceNarrowsAddressAndLengthAndKeepsTheKey() {
        RemoteBuffer slice = PEER.slice(256, 1024);
        assertEquals(new RemoteBuffer(0x1100, 0xabcd, 1024), slice);
        assertEquals(new RemoteBuffer(0x1110, 0xabcd, 16), slice.slice(16, 16));
        assertEquals(new RemoteBuffer(0x2000, 0xabcd, 0), PEER.slice(4096, 0), "an empty range at the end is inside");
        assertEquals(PEER, PEER.slice(0, 4096));
    }

    @Test
    void rangesOutsideTheBufferAreRemoteRangeErrors() {
        assertThrows(RemoteRangeException.class, () -> PEER.slice(4090, 8));
        assertThrows(RemoteRangeException.class, () -> PEER.slice(4097, 0));
        assertThrows(RemoteRangeException.class, () -> PEER.slice(-1, 8));
        assertThrows(RemoteRangeException.class, () -> PEER.slice(0, -1));
        assertThrows(RemoteRangeException.class, () -> PEER.slice(16, 16).slice(8, 9));
        RemoteRangeException e = assertThrows(RemoteRangeException.class, () -> PEER.slice(4000, 100));
        assertTrue(e.getMessage().contains("[4000, 4100) is outside the remote buffer of 4096 bytes"), e.getMessage());
    }

    @Test
    void aRangeWhoseEndOverflowsIsOutside() {
        // offset + length wraps to a negative sum that is "less than" the length
        assertThrows(RemoteRangeException.class, () -> PEER.slice(Long.MAX_VALUE, 8));
        assertThrows(RemoteRangeException.class, () -> PEER.slice(8, Long.MAX_VALUE));
    }

    @Test
    void aNegativeLengthIsNoBuffer() {
        assertThrows(IllegalArgumentException.class, () -> new RemoteBuffer(0, 0, -1));
    }

    @Test
    void theCommonCLayoutIsAddressKeyLengthInNetworkOrder() {
        byte[] wire = PEER.toBigEndian();
        assertEquals("0000000000001000" + "0000abcd" + "00001000", HexFormat.of().formatHex(wire));
        assertEquals(PEER, RemoteBuffer.fromBigEndian(wire, 0));
        byte[] padded = new byte[196];  // rdma_cm pads accept private data with zeros to the field's size
        System.arraycopy(wire, 0, padded, 0, wire.length);
        assertEquals(PEER, RemoteBuffer.fromBigEndian(padded, 0));
        assertEquals(0xFFFF_FFFFL, RemoteBuffer.fromBigEndian(HexFormat.of().parseHex("00000000000000000000000" + "1ffffffff"), 0).length(),
                "the length is unsigned");
        assertThrows(IllegalArgumentException.class, () -> RemoteBuffer.fromBigEndian(new byte[15], 0));
        assertThrows(IllegalStateException.class, () -> new RemoteBuffer(0, 1, 1L << 32).toBigEndian());
    }
}
