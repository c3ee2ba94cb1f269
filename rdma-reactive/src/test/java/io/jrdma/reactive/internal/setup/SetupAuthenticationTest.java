package io.jrdma.reactive.internal.setup;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.PeerAuthentication;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.AcceptDecision;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Test;

/**
 * The rules of {@link SetupAuthentication}'s Javadoc, without a device: what each side of a setup
 * path sends, checks and says, with the bytes laid out as rdma_cm and the TCP hello carry them.
 */
class SetupAuthenticationTest {
    private static final byte[] KEY = "a key of thirty-two bytes, fine!".getBytes(StandardCharsets.US_ASCII);
    private static final InetSocketAddress SERVER = new InetSocketAddress("10.77.0.2", 7471);
    private static final InetSocketAddress CLIENT = new InetSocketAddress("10.77.0.1", 40001);

    /** What the client sends before its proof: the descriptor alone on rdma_cm, the 58-byte hello over TCP. */
    private static byte[] setup(Transport transport, int rkey) {
        byte[] descriptor = descriptor(rkey);
        if (transport == Transport.RDMA_CM) return SetupAuthentication.cmSetup(0x11, descriptor);
        return TcpHello.hello(new QueuePairAddress(0x11, 0x123, 0, new byte[16]), descriptor, null);
    }

    private static byte[] descriptor(int rkey) {
        return new ConnectionDescriptor(64, 4096, new RemoteBuffer(0x7f0000001000L, rkey, 1 << 20), true, true).encode();
    }

    /** What the server sends before its proof: its descriptor on rdma_cm, its hello over TCP. */
    private static byte[] answer(Transport transport, int rkey) {
        return transport == Transport.RDMA_CM ? descriptor(rkey) : setup(transport, rkey);
    }

    private static int answerDescriptorAt(Transport transport) {
        return transport == Transport.RDMA_CM ? 0 : QueuePairAddress.WIRE_SIZE;
    }

    private static int descriptorAt(Transport transport) {
        return transport == Transport.RDMA_CM ? SetupAuthentication.CM_DESCRIPTOR_AT : QueuePairAddress.WIRE_SIZE;
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aClientAndServerWithTheSameKeyProveThemselvesToEachOther(Transport transport) {
        PeerAuthentication auth = PeerAuthentication.preSharedKey(KEY);
        int at = descriptorAt(transport);
        SetupAuthentication client = SetupAuthentication.client(auth, transport, SERVER, CLIENT, setup(transport, 0x1234), at);
        byte[] sent = client.clientSetup();
        assertTrue(ConnectionDescriptor.authenticated(Arrays.copyOfRange(sent, at, at + ConnectionDescriptor.SIZE)), "the flag is set and bound");
        assertEquals(ConnectionDescriptor.decode(Arrays.copyOfRange(setup(transport, 0x1234), at, at + 32)),
                ConnectionDescriptor.decode(Arrays.copyOfRange(sent, at, at + 32)), "nothing else of the descriptor changes");
        if (transport == Transport.RDMA_CM) {
            // the QP number travels in the request's header: descriptor and proof fill its private data
            assertEquals(io.jrdma.ffm.CmId.MAX_PRIVATE_DATA_CONNECT, sent.length - at + client.clientProof().length);
        }
        SetupAuthentication server = SetupAuthentication.server(auth, transport, SERVER, CLIENT, sent, at, client.clientProof());
        byte[] answer = SetupAuthentication.flagged(answer(transport, 0x5678), answerDescriptorAt(transport));
        byte[] serverProof = server.serverProof(answer);
        client.verifyServer(answer, answerDescriptorAt(transport), serverProof, SERVER);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aServerRequiringAuthenticationTurnsAwayAClientWithoutOneSayingSo(Transport transport) {
        PeerAuthentication auth = PeerAuthentication.preSharedKey(KEY);
        ConnectionException.Authentication e = assertThrows(ConnectionException.Authentication.class,
                () -> SetupAuthentication.server(auth, transport, SERVER, CLIENT, setup(transport, 1), descriptorAt(transport), null));
        assertEquals("this server requires authentication, and the client sent none", e.getMessage());
        // a proof without the flag: the flag is part of what the proof binds, so a stripped flag is no proof
        assertThrows(ConnectionException.Authentication.class,
                () -> SetupAuthentication.server(auth, transport, SERVER, CLIENT, setup(transport, 1), descriptorAt(transport), new byte[24]));
    }

    @Test
    void aClientWithAnotherKeyIsToldItsKeyDiffers() {
        byte[] other = KEY.clone();
        other[5] ^= 1;
        SetupAuthentication client = SetupAuthentication.client(PeerAuthentication.preSharedKey(other), Transport.RDMA_CM, SERVER, CLIENT,
                setup(Transport.RDMA_CM, 7), 4);
        ConnectionException.Authentication e = assertThrows(ConnectionException.Authentication.class, () -> SetupAuthentication.server(
                PeerAuthentication.preSharedKey(KEY), Transport.RDMA_CM, SERVER, CLIENT, client.clientSetup(), 4, client.clientProof()));
        assertEquals("the client's authentication is wrong: its key differs from the server's, or its connect request was altered", e.getMessage());
        assertTrue(SetupMessages.rejectBytes(e.getMessage(), SetupMessages.CM_REJECT_BYTES).length <= SetupMessages.CM_REJECT_BYTES);
    }

    @Test
    void aCapturedConnectRequestReplayedIsRefusedAsAReplay() {
        PeerAuthentication server = PeerAuthentication.preSharedKey(KEY);
        SetupAuthentication client = SetupAuthentication.client(PeerAuthentication.preSharedKey(KEY), Transport.RDMA_CM, SERVER, CLIENT,
                setup(Transport.RDMA_CM, 9), 4);
        SetupAuthentication.server(server, Transport.RDMA_CM, SERVER, CLIENT, client.clientSetup(), 4, client.clientProof());
        ConnectionException.Authentication e = assertThrows(ConnectionException.Authentication.class, () -> SetupAuthentication.server(
                server, Transport.RDMA_CM, SERVER, new InetSocketAddress("10.77.0.9", 5555), client.clientSetup(), 4, client.clientProof()));
        assertEquals("the client's authentication was used before: a replayed connect request", e.getMessage());
    }

    /** The same private data in a request from another QP: the proof binds the QP number in the request's header. */
    @Test
    void aCapturedConnectRequestSentFromAnotherQueuePairFailsTheProof() {
        PeerAuthentication server = PeerAuthentication.preSharedKey(KEY);
        SetupAuthentication client = SetupAuthentication.client(PeerAuthentication.preSharedKey(KEY), Transport.RDMA_CM, SERVER, CLIENT,
                setup(Transport.RDMA_CM, 9), 4);
        byte[] fromAnotherQp = client.clientSetup();
        fromAnotherQp[3] ^= 1;
        ConnectionException.Authentication e = assertThrows(ConnectionException.Authentication.class, () -> SetupAuthentication.server(
                server, Transport.RDMA_CM, SERVER, CLIENT, fromAnotherQp, 4, client.clientProof()));
        assertEquals("the client's authentication is wrong: its key differs from the server's, or its connect request was altered", e.getMessage());
        SetupAuthentication.server(server, Transport.RDMA_CM, SERVER, CLIENT, client.clientSetup(), 4, client.clientProof());  // the genuine one still passes
    }

    @Test
    void aClientRefusesAServerThatProvesNothingOrProvesItWrong() {
        PeerAuthentication auth = PeerAuthentication.preSharedKey(KEY);
        SetupAuthentication client = SetupAuthentication.client(auth, Transport.RDMA_CM, SERVER, CLIENT, setup(Transport.RDMA_CM, 3), 4);
        ConnectionException.Authentication e = assertThrows(ConnectionException.Authentication.class,
                () -> client.verifyServer(descriptor(4), 0, new byte[32], SERVER));
        assertEquals("authenticating the server at 10.77.0.2:7471 failed: it sent no proof of its identity (it has no authentication"
                + " configured, or is an earlier version of jrdma): configure the same authentication on the server", e.getMessage());
        byte[] answer = SetupAuthentication.flagged(descriptor(4), 0);
        e = assertThrows(ConnectionException.Authentication.class, () -> client.verifyServer(answer, 0, new byte[32], SERVER));
        assertEquals("authenticating the server at 10.77.0.2:7471 failed: the server's authentication is wrong: its key differs from"
                + " this client's, or its answer was altered", e.getMessage());
    }

    /** An application's authentication whose code fails: the client is told the server failed, not that it did. */
    @Test
    void anAuthenticationThatThrowsRejectsAsTheServersFailure() {
        PeerAuthentication broken = new Fixed(24, 32) {
            @Override
            public void verifyClient(Handshake handshake, byte[] proof) {
                throw new NullPointerException("a bug");
            }
        };
        SetupAuthentication client = SetupAuthentication.client(broken, Transport.TCP, SERVER, CLIENT, setup(Transport.TCP, 1), 26);
        ConnectionException.Authentication e = assertThrows(ConnectionException.Authentication.class,
                () -> SetupAuthentication.server(broken, Transport.TCP, SERVER, CLIENT, client.clientSetup(), 26, client.clientProof()));
        assertEquals("the server could not check the client's authentication (see its log)", e.getMessage());
        assertFalse(e.getMessage().contains("a bug"));
    }

    @Test
    void aProofLongerThanThePathCarriesIsRefusedWhenConfiguredAndBeforeItIsSent() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RdmaClient.create().authentication(new Fixed(25, 32)));
        assertEquals("an authentication's proofs are 1 to 24 bytes (the client's) and 1 to 164 (the server's), not 25 and 32: that is"
                + " what an rdma_cm connect request and accept carry after the descriptor", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RdmaServer.create().authentication(new Fixed(24, 165)));
        IllegalStateException s = assertThrows(IllegalStateException.class, () -> SetupAuthentication.client(new Fixed(25, 32),
                Transport.RDMA_CM, SERVER, CLIENT, setup(Transport.RDMA_CM, 1), 4));
        assertEquals("the authentication's client proof has 25 bytes, more than the 24 the setup paths carry", s.getMessage());
        PeerAuthentication liar = new Fixed(24, 32) {
            @Override
            public byte[] clientProof(Handshake handshake) {
                return new byte[8];
            }
        };
        s = assertThrows(IllegalStateException.class, () -> SetupAuthentication.client(liar, Transport.TCP, SERVER, CLIENT, setup(Transport.TCP, 1), 26));
        assertEquals("the authentication's client proof has 8 bytes where it promised 24", s.getMessage());
    }

    @Test
    void rawPeersAndAuthenticationExcludeEachOtherWhenConfigured() {
        PeerAuthentication auth = PeerAuthentication.preSharedKey(KEY);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RdmaServer.create().acceptRaw(r -> AcceptDecision.accept(new byte[0])).authentication(auth));
        assertTrue(e.getMessage().startsWith("acceptRaw and authentication exclude each other"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> RdmaServer.create().authentication(auth).acceptRaw(r -> AcceptDecision.accept(new byte[0])));
        assertThrows(IllegalArgumentException.class, () -> RdmaClient.create().rawPrivateData(new byte[4]).authentication(auth));
        assertThrows(IllegalArgumentException.class, () -> RdmaClient.create().authentication(auth).rawPrivateData(new byte[4]));
        assertThrows(IllegalArgumentException.class, () -> RdmaClient.create().authentication(auth).outOfBand(side -> null));
    }

    /** A bring-your-own authentication that proves with fixed bytes (a test double, not a mechanism). */
    private static class Fixed implements PeerAuthentication {
        private final int client;
        private final int server;

        Fixed(int client, int server) {
            this.client = client;
            this.server = server;
        }

        @Override
        public int clientProofBytes() {
            return client;
        }

        @Override
        public int serverProofBytes() {
            return server;
        }

        @Override
        public byte[] clientProof(Handshake handshake) {
            return new byte[client];
        }

        @Override
        public void verifyClient(Handshake handshake, byte[] proof) {
            assertArrayEquals(new byte[client], proof);
        }

        @Override
        public byte[] serverProof(Handshake handshake, byte[] clientProof) {
            return new byte[server];
        }

        @Override
        public void verifyServer(Handshake handshake, byte[] clientProof, byte[] serverProof) {
        }
    }
}
