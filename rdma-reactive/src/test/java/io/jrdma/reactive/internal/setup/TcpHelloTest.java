package io.jrdma.reactive.internal.setup;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

/** The TCP setup's bytes: how long a hello is with and without a proof, and a reject read as it arrives. */
class TcpHelloTest {
    private static final byte[] DESCRIPTOR = new ConnectionDescriptor(16, 1024, new RemoteBuffer(0, 0, 0)).encode();

    private static ByteBuffer received(byte[] bytes, int count) {
        return ByteBuffer.allocate(TcpHello.MAX_READ).put(bytes, 0, count);
    }

    @Test
    void aHelloWithoutTheFlagIs58BytesAndCarriesNoProof() {
        byte[] hello = TcpHello.hello(new QueuePairAddress(1, 2, 0, new byte[16]), DESCRIPTOR, null);
        assertEquals(58, hello.length);
        assertEquals(TcpHello.HELLO, TcpHello.needed(received(hello, 20)));
        assertEquals(TcpHello.HELLO, TcpHello.needed(received(hello, 58)));
        assertNull(TcpHello.proof(received(hello, 58)));
    }

    @Test
    void aFlaggedHelloNeedsItsProofsLengthThenTheProof() {
        byte[] setup = SetupAuthentication.flagged(TcpHello.hello(new QueuePairAddress(1, 2, 0, new byte[16]), DESCRIPTOR, null),
                QueuePairAddress.WIRE_SIZE);
        byte[] proof = new byte[24];
        for (int i = 0; i < proof.length; i++) proof[i] = (byte) (i + 1);
        byte[] hello = TcpHello.withProof(setup, proof);
        assertEquals(58 + 1 + 24, hello.length);
        assertEquals(58 + 1, TcpHello.needed(received(hello, 58)), "the length byte first");
        assertEquals(58 + 1 + 24, TcpHello.needed(received(hello, 59)));
        assertArrayEquals(proof, TcpHello.proof(received(hello, hello.length)));
        assertArrayEquals(setup, TcpHello.setup(received(hello, hello.length)));
        assertTrue(TcpHello.couldBeHello(received(hello, hello.length)));
        assertTrue(58 + 1 + io.jrdma.reactive.PeerAuthentication.MAX_SERVER_PROOF_BYTES <= TcpHello.MAX_READ, "the largest proof fits the buffer");
    }

    @Test
    void aRejectIsReadOnceItsReasonIsIn() {
        ByteBuffer frame = TcpHello.reject("this server requires authentication, and the client sent none");
        byte[] bytes = new byte[frame.remaining()];
        frame.get(bytes);
        ByteBuffer in = received(bytes, 4);
        assertTrue(TcpHello.isReject(in));
        assertNull(TcpHello.rejected(in, new InetSocketAddress("10.77.0.2", 7471)));
        in = received(bytes, 10);
        assertNull(TcpHello.rejected(in, new InetSocketAddress("10.77.0.2", 7471)));
        assertEquals(bytes.length, in.limit(), "reads up to the reason's end, not into what follows");
        ConnectionException.Rejected r = TcpHello.rejected(received(bytes, bytes.length), new InetSocketAddress("10.77.0.2", 7471));
        assertEquals("10.77.0.2:7471 rejected the connection: this server requires authentication, and the client sent none", r.getMessage());
    }
}
