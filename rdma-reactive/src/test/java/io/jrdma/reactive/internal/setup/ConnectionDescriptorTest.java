package io.jrdma.reactive.internal.setup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The connection descriptor's wire form: what a C peer must produce, and what a foreign peer gets. */
class ConnectionDescriptorTest {

    @Test
    void encodesTheDocumentedBigEndianLayout() {
        ConnectionDescriptor d = new ConnectionDescriptor(64, 4096, new RemoteBuffer(0x00007f0011223340L, 0x1a2b3c4d, 65536));
        assertEquals("4a52444d" + "01" + "00" + "0040" + "00000000" + "00001000"
                        + "00007f0011223340" + "1a2b3c4d" + "00010000",
                HexFormat.of().formatHex(d.encode()));
        assertEquals(ConnectionDescriptor.SIZE, d.encode().length);
    }

    @Test
    void unsignedFieldsSurviveTheRoundTripAtTheirLimits() {
        ConnectionDescriptor d = new ConnectionDescriptor(0xFFFF, Integer.MAX_VALUE, new RemoteBuffer(-8L, 0xFFFFFFFF, 0xFFFF_FFFFL));
        assertEquals(d, ConnectionDescriptor.decode(d.encode()));
    }

    @Test
    void rdmaCmPaddingAfterTheDescriptorIsIgnored() {
        // an IB CM REQ carries a fixed 56-byte private data field: the peer sees the descriptor plus zeros
        ConnectionDescriptor d = new ConnectionDescriptor(16, 1024, new RemoteBuffer(0, 0, 0));
        assertEquals(d, ConnectionDescriptor.decode(Arrays.copyOf(d.encode(), 56)));
    }

    @Test
    void aShortDescriptorIsAProtocolError() {
        byte[] truncated = Arrays.copyOf(new ConnectionDescriptor(1, 8, new RemoteBuffer(0, 0, 0)).encode(), 31);
        ConnectionException.Protocol e = assertThrows(ConnectionException.Protocol.class, () -> ConnectionDescriptor.decode(truncated));
        assertEquals("31 bytes where jrdma's connection descriptor has 32", e.getMessage());
        assertThrows(ConnectionException.Protocol.class, () -> ConnectionDescriptor.decode(new byte[0]));
    }

    @Test
    void aPeerThatIsNotJrdmaIsAProtocolError() {
        byte[] foreign = new byte[56];
        foreign[0] = 'H';
        ConnectionException.Protocol e = assertThrows(ConnectionException.Protocol.class, () -> ConnectionDescriptor.decode(foreign));
        assertEquals("no jrdma connection descriptor (it starts 0x48000000, not JRDM)", e.getMessage());
    }

    @Test
    void aDescriptorCutShortAndPaddedWithZerosIsAProtocolError() {
        // rdma_cm pads a connect's private data to 56 bytes: the magic and version alone arrive followed by zeros
        byte[] cut = Arrays.copyOf(Arrays.copyOf(new ConnectionDescriptor(16, 4096, new RemoteBuffer(0, 0, 0)).encode(), 5), 56);
        ConnectionException.Protocol e = assertThrows(ConnectionException.Protocol.class, () -> ConnectionDescriptor.decode(cut));
        assertEquals("a jrdma connection descriptor with receive depth 0 and buffer size 0 (cut short?)", e.getMessage());
    }

    @Test
    void aRejectsReasonIsTheTextBeforeRdmaCmsPaddingAndNothingElse() {
        assertEquals("the server is shutting down", ConnectionDescriptor.reason(Arrays.copyOf("the server is shutting down".getBytes(), 148)));
        assertEquals(null, ConnectionDescriptor.reason(new byte[148]), "all zeros: no reason");
        assertEquals(null, ConnectionDescriptor.reason(new byte[] {1, 2, (byte) 0xff, 0}), "binary: no reason");
    }

    @Test
    void anUnknownProtocolVersionIsAProtocolError() {
        byte[] future = new ConnectionDescriptor(1, 8, new RemoteBuffer(0, 0, 0)).encode();
        future[4] = 2;
        ConnectionException.Protocol e = assertThrows(ConnectionException.Protocol.class, () -> ConnectionDescriptor.decode(future));
        assertTrue(e.getMessage().contains("version 2"), e.getMessage());
    }

    @Test
    void anExposedRegionOfMoreThan4GiBTravelsWithTheHighHalfOfItsLengthWhereVersion1HadZeros() {
        ConnectionDescriptor big = new ConnectionDescriptor(8, 4096, new RemoteBuffer(0x7f0000000000L, 7, (5L << 32) + 12));
        byte[] wire = big.encode();
        assertEquals("00000005", HexFormat.of().formatHex(wire, 8, 12));
        assertEquals("0000000c", HexFormat.of().formatHex(wire, 28, 32));
        assertEquals(big, ConnectionDescriptor.decode(wire));
    }

    @Test
    void valuesTheWireCannotCarryAreRefusedRatherThanTruncated() {
        RemoteBuffer none = new RemoteBuffer(0, 0, 0);
        assertThrows(IllegalArgumentException.class, () -> new ConnectionDescriptor(0x10000, 8, none));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RdmaClient.create().queueDepth(16, 0x10000));
        assertTrue(e.getMessage().contains("65535"), e.getMessage());
    }
}
