package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.PeerAuthentication;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.test.StepVerifier;

/**
 * Authenticated set-up on rxe (issue 28), on both setup paths: a client with the server's key
 * connects and gets its exposed buffer; a client with another key, without one, or replaying a
 * captured handshake is rejected with the reason and costs the server no QP; a client with a key
 * refuses a server without one.
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class AuthenticationTest {
    private static final byte[] KEY = HexFormat.of().parseHex("8f1e2d3c4b5a69788796a5b4c3d2e1f00112233445566778899aabbccddeeff0");

    private static DisposableRdmaServer server(Transport transport, PeerAuthentication authentication, AtomicInteger connected) {
        RdmaServer server = RdmaServer.create().host(LabPeers.SERVER_IP).port(0).transport(transport)
                .exposeBuffer(1 << 16, Access.REMOTE_READ, Access.REMOTE_WRITE).doOnConnected(c -> connected.incrementAndGet());
        return (authentication == null ? server : server.authentication(authentication)).bind().block(TIMEOUT);
    }

    private static RdmaClient client(Transport transport, DisposableRdmaServer server) {
        return RdmaClient.create().host(LabPeers.SERVER_IP).port(server.address().getPort()).localAddress(LabPeers.CLIENT_IP)
                .transport(transport).connectTimeout(TIMEOUT);
    }

    /** Connects {@code client}, exchanges one message, and returns the server side's QP number. */
    private static int connectsAndExchanges(DisposableRdmaServer server, RdmaClient client) {
        var both = client.connect().zipWith(server.connections().next()).block(TIMEOUT.multipliedBy(2));
        RdmaConnection c = both.getT1();
        RdmaConnection accepted = both.getT2();
        try {
            assertNotEquals(0, c.remoteBuffer().rkey(), "the server's exposed buffer reached the authenticated client");
            c.send("authenticated").block(TIMEOUT);
            try (var m = accepted.receive().block(TIMEOUT)) {
                assertEquals("authenticated", m.text());
            }
            return accepted.qpNumber();
        } finally {
            c.disposeNow(TIMEOUT);
            accepted.disposeNow(TIMEOUT);
        }
    }

    /** The reject a client got: its message, checked readable, after "{server} rejected the connection: ". */
    private static String rejectReason(Throwable e, DisposableRdmaServer server) {
        String message = UserLines.assertReadable(assertInstanceOf(ConnectionException.Rejected.class, e, LabPeers.describe(e)).getMessage());
        String prefix = LabPeers.SERVER_IP + ":" + server.address().getPort() + " rejected the connection: ";
        assertTrue(message.startsWith(prefix), message);
        return message.substring(prefix.length());
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aClientWithTheServersKeyConnectsAndExchangesAMessage(Transport transport) {
        AtomicInteger connected = new AtomicInteger();
        DisposableRdmaServer server = server(transport, PeerAuthentication.preSharedKey(KEY), connected);
        try {
            connectsAndExchanges(server, client(transport, server).authentication(PeerAuthentication.preSharedKey(KEY.clone())));
            connectsAndExchanges(server, client(transport, server).authentication(PeerAuthentication.preSharedKey(KEY.clone())));
            assertEquals(2, connected.get(), "each connect proves itself anew: no replay");
        } finally {
            server.disposeNow();
        }
    }

    /**
     * A wrong key is rejected before the server creates anything: rxe hands out QP numbers
     * cyclically per device, so the server's next QP after the rejects is the one after its last,
     * and no device object made during the rejects outlives them. One loop for both sides, warmed
     * by the first connection: its completion queues exist before the baseline.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aClientWithAnotherKeyIsRejectedWithTheReasonAndCostsTheServerNoQueuePair(Transport transport) {
        byte[] other = KEY.clone();
        other[0] ^= 1;
        AtomicInteger connected = new AtomicInteger();
        RdmaResources resources = RdmaResources.create("auth-reject", 1);
        DisposableRdmaServer server = RdmaServer.create().runOn(resources).host(LabPeers.SERVER_IP).port(0).transport(transport)
                .exposeBuffer(1 << 16, Access.REMOTE_READ, Access.REMOTE_WRITE).doOnConnected(c -> connected.incrementAndGet())
                .authentication(PeerAuthentication.preSharedKey(KEY)).bind().block(TIMEOUT);
        RdmaClient client = client(transport, server).runOn(resources);
        try (UserLines log = new UserLines("io.jrdma.reactive.server")) {
            int before = connectsAndExchanges(server, client.authentication(PeerAuthentication.preSharedKey(KEY)));
            Map<String, String> held = DeviceResources.held();
            for (int i = 0; i < 3; i++) {
                StepVerifier.create(client.authentication(PeerAuthentication.preSharedKey(other)).connect())
                        .expectErrorSatisfies(e -> assertEquals("the client's authentication is wrong: its key differs from the server's,"
                                + " or its connect request was altered", rejectReason(e, server)))
                        .verify(TIMEOUT.multipliedBy(2));
            }
            assertTrue(log.await("its key differs from the server's").startsWith("rejected a " + (transport == Transport.TCP ? "TCP " : "")
                    + "connection from " + LabPeers.CLIENT_IP + ":"), log.lines()::toString);
            assertFalse(log.lines().stream().anyMatch(l -> l.startsWith("could not accept")), log.lines()::toString);
            DeviceResources.awaitNoneNewSince(held, TIMEOUT);
            assertEquals(1, connected.get(), "no connection for a client that failed");
            int after = connectsAndExchanges(server, client.authentication(PeerAuthentication.preSharedKey(KEY)));
            assertEquals(before + 1, after, "the server created no QP for the three rejected clients");
        } finally {
            server.disposeNow();
            resources.disposeNow();
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aClientWithoutAKeyIsRejectedByAServerThatRequiresOne(Transport transport) {
        AtomicInteger connected = new AtomicInteger();
        DisposableRdmaServer server = server(transport, PeerAuthentication.preSharedKey(KEY), connected);
        try {
            StepVerifier.create(client(transport, server).connect())
                    .expectErrorSatisfies(e -> assertEquals("this server requires authentication, and the client sent none", rejectReason(e, server)))
                    .verify(TIMEOUT.multipliedBy(2));
            assertEquals(0, connected.get());
        } finally {
            server.disposeNow();
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aClientWithAKeyRefusesAServerThatProvesNothing(Transport transport) {
        DisposableRdmaServer server = server(transport, null, new AtomicInteger());
        try {
            StepVerifier.create(client(transport, server).authentication(PeerAuthentication.preSharedKey(KEY)).connect())
                    .expectErrorSatisfies(e -> assertEquals("authenticating the server at " + LabPeers.SERVER_IP + ":" + server.address().getPort()
                            + " failed: it sent no proof of its identity (it has no authentication configured, or is an earlier version of"
                            + " jrdma): configure the same authentication on the server", UserLines.assertReadable(
                                    assertInstanceOf(ConnectionException.Authentication.class, e, LabPeers.describe(e)).getMessage())))
                    .verify(TIMEOUT.multipliedBy(2));
        } finally {
            server.disposeNow();
        }
    }

    /**
     * A genuine client's handshake, captured as it is sent (what an on-path attacker sees), then
     * sent again. Over TCP, the same hello on a socket: the server has seen that proof, and refuses
     * it as a replay; a copy with another rkey fails the proof. Over rdma_cm, the same 56 bytes of
     * private data in a connect request of another QP (a replayer cannot send from the genuine
     * client's QP): the proof binds the QP number in the request's header, and fails. Either way
     * only the genuine client got a connection.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aCapturedHandshakeReplayedIsRejected(Transport transport) throws IOException {
        AtomicReference<byte[]> captured = new AtomicReference<>();
        PeerAuthentication genuine = PeerAuthentication.preSharedKey(KEY);
        PeerAuthentication recording = new PeerAuthentication() {
            @Override
            public int clientProofBytes() {
                return genuine.clientProofBytes();
            }

            @Override
            public int serverProofBytes() {
                return genuine.serverProofBytes();
            }

            @Override
            public byte[] clientProof(Handshake handshake) {
                byte[] proof = genuine.clientProof(handshake);
                byte[] setup = handshake.clientSetup();
                // on the wire: rdma_cm, the descriptor then the proof (the QP number that precedes the descriptor in
                // the bound bytes is in the request's header); TCP, the hello, the proof's length, the proof
                captured.set(transport == Transport.RDMA_CM
                        ? ByteBuffer.allocate(setup.length - 4 + proof.length).put(setup, 4, setup.length - 4).put(proof).array()
                        : ByteBuffer.allocate(setup.length + 1 + proof.length).put(setup).put((byte) proof.length).put(proof).array());
                return proof;
            }

            @Override
            public void verifyClient(Handshake handshake, byte[] proof) {
                genuine.verifyClient(handshake, proof);
            }

            @Override
            public byte[] serverProof(Handshake handshake, byte[] clientProof) {
                return genuine.serverProof(handshake, clientProof);
            }

            @Override
            public void verifyServer(Handshake handshake, byte[] clientProof, byte[] serverProof) {
                genuine.verifyServer(handshake, clientProof, serverProof);
            }
        };
        AtomicInteger connected = new AtomicInteger();
        DisposableRdmaServer server = server(transport, PeerAuthentication.preSharedKey(KEY), connected);
        try (UserLines log = new UserLines("io.jrdma.reactive.server")) {
            connectsAndExchanges(server, client(transport, server).authentication(recording));
            byte[] replay = captured.get();
            assertNotNull(replay);
            if (transport == Transport.RDMA_CM) {
                assertEquals(56, replay.length, "all of an rdma_cm connect request's private data");
                String wrong = "the client's authentication is wrong: its key differs from the server's, or its connect request was altered";
                StepVerifier.create(client(transport, server).rawPrivateData(replay).connect())
                        .expectErrorSatisfies(e -> assertEquals(wrong, rejectReason(e, server)))
                        .verify(TIMEOUT.multipliedBy(2));
                assertTrue(log.await("its connect request was altered").startsWith("rejected a connection from "), log.lines()::toString);
            } else {
                assertEquals("the client's authentication was used before: a replayed connect request", rejectedOverTcp(server, replay));
                assertTrue(log.await("a replayed connect request").startsWith("rejected a TCP connection from "), log.lines()::toString);
                byte[] tampered = replay.clone();
                tampered[26 + 27] ^= 1;  // the rkey's last byte, in the hello's descriptor
                assertTrue(rejectedOverTcp(server, tampered).startsWith("the client's authentication is wrong"));
            }
            assertEquals(1, connected.get(), "the genuine client only");
        } finally {
            server.disposeNow();
        }
    }

    /** The reason of the reject the server answers {@code hello} with on its TCP setup port. */
    private static String rejectedOverTcp(DisposableRdmaServer server, byte[] hello) throws IOException {
        ByteBuffer answer = ByteBuffer.wrap(exchange(server.address().getPort(), hello));
        assertEquals(0x4A52454A, answer.getInt(), "a reject (JREJ), not a hello");
        byte[] reason = new byte[Byte.toUnsignedInt(answer.get())];
        answer.get(reason);
        assertFalse(answer.hasRemaining(), "the reject, then the server closes");
        return new String(reason, UTF_8);
    }

    /** Connects to the TCP port from the client's address, sends {@code bytes}, and returns all the server sends until it closes. */
    private static byte[] exchange(int port, byte[] bytes) throws IOException {
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(LabPeers.CLIENT_IP, 0));
            s.connect(new InetSocketAddress(LabPeers.SERVER_IP, port), (int) TIMEOUT.toMillis());
            s.setSoTimeout((int) TIMEOUT.toMillis());
            s.getOutputStream().write(bytes);
            s.shutdownOutput();
            return s.getInputStream().readAllBytes();
        }
    }
}
