package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.PeerAuthentication.Handshake;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Arrays;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The pre-shared-key authenticator without a device: what it accepts, what it refuses and why, on a clock the test moves. */
class PreSharedKeyTest {
    private static final byte[] KEY = "0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final InetSocketAddress SERVER = new InetSocketAddress("10.77.0.2", 7471);
    private static final InetSocketAddress CLIENT = new InetSocketAddress("10.77.0.1", 40000);
    private static final byte[] CLIENT_DESCRIPTOR = HexFormat.of().parseHex(
            "4a52444d" + "01" + "07" + "0040" + "00000000" + "00001000" + "00007f0011223340" + "1a2b3c4d" + "00010000");
    private static final byte[] SERVER_DESCRIPTOR = HexFormat.of().parseHex(
            "4a52444d" + "01" + "07" + "0040" + "00000000" + "00001000" + "00007f00aabbcc00" + "5e6f7a8b" + "00100000");

    /** A clock the test sets: epoch seconds. */
    private static final class Clock implements InstantSource {
        long seconds = 1_800_000_000L;

        @Override
        public Instant instant() {
            return Instant.ofEpochSecond(seconds);
        }
    }

    private final Clock clock = new Clock();

    private PreSharedKey key(byte[] key) {
        return new PreSharedKey(key, Duration.ofSeconds(60), 1000, clock);
    }

    private static Handshake handshake(Transport transport) {
        return new Handshake(transport, SERVER, CLIENT, CLIENT_DESCRIPTOR, new byte[0]);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aClientWithTheServersKeyIsAcceptedAndTheServersProofPassesAtTheClient(Transport transport) {
        PreSharedKey client = key(KEY);
        PreSharedKey server = key(KEY.clone());
        byte[] proof = client.clientProof(handshake(transport));
        assertEquals(PeerAuthentication.MAX_CLIENT_PROOF_BYTES, proof.length, "fits what a connect request has after the descriptor");
        server.verifyClient(handshake(transport), proof);
        Handshake answered = handshake(transport).withServerSetup(SERVER_DESCRIPTOR);
        byte[] serverProof = server.serverProof(answered, proof);
        assertEquals(client.serverProofBytes(), serverProof.length);
        client.verifyServer(answered, proof, serverProof);
    }

    @Test
    void aClientWithAnotherKeyIsRefusedSayingTheKeysDiffer() {
        byte[] other = KEY.clone();
        other[31] ^= 1;
        byte[] proof = key(other).clientProof(handshake(Transport.RDMA_CM));
        ConnectionException.Authentication e = assertThrows(ConnectionException.Authentication.class,
                () -> key(KEY).verifyClient(handshake(Transport.RDMA_CM), proof));
        assertEquals("the client's authentication is wrong: its key differs from the server's, or its connect request was altered", e.getMessage());
    }

    @Test
    void aProofMovedOntoAnotherDescriptorIsRefused() {
        PreSharedKey psk = key(KEY);
        byte[] proof = psk.clientProof(handshake(Transport.RDMA_CM));
        byte[] tampered = CLIENT_DESCRIPTOR.clone();
        tampered[27] ^= 1;  // another rkey: an attacker's, say
        Handshake altered = new Handshake(Transport.RDMA_CM, SERVER, CLIENT, tampered, new byte[0]);
        assertThrows(ConnectionException.Authentication.class, () -> psk.verifyClient(altered, proof));
        assertEquals(0, psk.remembered(), "a proof whose MAC fails takes no room in the replay cache");
    }

    @Test
    void aProofIsBoundToTheServerAddressTheTransportAndEveryByteOfItself() {
        PreSharedKey psk = key(KEY);
        byte[] proof = psk.clientProof(handshake(Transport.RDMA_CM));
        assertThrows(ConnectionException.Authentication.class, () -> psk.verifyClient(
                new Handshake(Transport.RDMA_CM, new InetSocketAddress("10.77.0.2", 7472), CLIENT, CLIENT_DESCRIPTOR, new byte[0]), proof));
        assertThrows(ConnectionException.Authentication.class, () -> psk.verifyClient(
                new Handshake(Transport.RDMA_CM, new InetSocketAddress("10.77.0.3", 7471), CLIENT, CLIENT_DESCRIPTOR, new byte[0]), proof));
        assertThrows(ConnectionException.Authentication.class, () -> psk.verifyClient(handshake(Transport.TCP), proof));
        for (int i = 0; i < proof.length; i++) {
            byte[] flipped = proof.clone();
            flipped[i] ^= 0x10;
            assertThrows(ConnectionException.Authentication.class, () -> psk.verifyClient(handshake(Transport.RDMA_CM), flipped), "byte " + i);
        }
        assertThrows(ConnectionException.Authentication.class, () -> psk.verifyClient(handshake(Transport.RDMA_CM), Arrays.copyOf(proof, 23)));
        // the client's own address is not bound (NAT): the same proof passes whoever it seems to come from
        psk.verifyClient(new Handshake(Transport.RDMA_CM, SERVER, null, CLIENT_DESCRIPTOR, new byte[0]), proof);
    }

    @Test
    void aStaleOrFutureTimestampIsRefusedOutsideTheWindowAndAcceptedAtItsEdge() {
        PreSharedKey psk = key(KEY);
        long now = clock.seconds;
        byte[] stale = psk.clientProof(handshake(Transport.RDMA_CM), now - 61, 1);
        ConnectionException.Authentication e = assertThrows(ConnectionException.Authentication.class,
                () -> psk.verifyClient(handshake(Transport.RDMA_CM), stale));
        assertEquals("the client's authentication is stale: its clock is 61 s behind the server's (allowed: 60 s)", e.getMessage());
        byte[] future = psk.clientProof(handshake(Transport.RDMA_CM), now + 61, 2);
        e = assertThrows(ConnectionException.Authentication.class, () -> psk.verifyClient(handshake(Transport.RDMA_CM), future));
        assertEquals("the client's authentication is from the future: its clock is 61 s ahead of the server's (allowed: 60 s)", e.getMessage());
        psk.verifyClient(handshake(Transport.RDMA_CM), psk.clientProof(handshake(Transport.RDMA_CM), now - 60, 3));
        psk.verifyClient(handshake(Transport.RDMA_CM), psk.clientProof(handshake(Transport.RDMA_CM), now + 60, 4));
    }

    @Test
    void aReplayedProofIsRefusedForAsLongAsItsTimestampIsInTheWindowAndByTheWindowAfter() {
        PreSharedKey psk = key(KEY);
        byte[] captured = psk.clientProof(handshake(Transport.RDMA_CM));
        psk.verifyClient(handshake(Transport.RDMA_CM), captured);
        ConnectionException.Authentication e = assertThrows(ConnectionException.Authentication.class,
                () -> psk.verifyClient(handshake(Transport.RDMA_CM), captured));
        assertEquals("the client's authentication was used before: a replayed connect request", e.getMessage());
        clock.seconds += 60;  // the last second the window lets it in: the cache still has it
        assertThrows(ConnectionException.Authentication.class, () -> psk.verifyClient(handshake(Transport.RDMA_CM), captured));
        clock.seconds += 1;   // out of the window: refused as stale, the cache may forget it
        e = assertThrows(ConnectionException.Authentication.class, () -> psk.verifyClient(handshake(Transport.RDMA_CM), captured));
        assertTrue(e.getMessage().startsWith("the client's authentication is stale"), e.getMessage());
    }

    @Test
    void theReplayCacheIsBoundedRefusesWhenFullAndFreesRoomAsProofsExpire() {
        PreSharedKey psk = new PreSharedKey(KEY, Duration.ofSeconds(10), 3, clock);
        for (int i = 0; i < 3; i++) psk.verifyClient(handshake(Transport.TCP), psk.clientProof(handshake(Transport.TCP)));
        assertEquals(3, psk.remembered());
        byte[] fourth = psk.clientProof(handshake(Transport.TCP));
        ConnectionException.Authentication e = assertThrows(ConnectionException.Authentication.class,
                () -> psk.verifyClient(handshake(Transport.TCP), fourth));
        assertEquals("the server is authenticating too many clients at once: try again later", e.getMessage());
        clock.seconds += 11;  // the three leave the window
        psk.verifyClient(handshake(Transport.TCP), psk.clientProof(handshake(Transport.TCP)));
        assertEquals(1, psk.remembered(), "the expired proofs were forgotten");
    }

    @Test
    void replayCacheKeepsAnEntryUntilItsExpiryAndNeverBeyondCapacity() {
        ReplayCache cache = new ReplayCache(2);
        assertEquals(ReplayCache.Outcome.FIRST, cache.remember(1, 1, 100, 50));
        assertEquals(ReplayCache.Outcome.FIRST, cache.remember(2, 2, 120, 50));
        assertEquals(ReplayCache.Outcome.REPLAYED, cache.remember(1, 1, 100, 100));
        assertEquals(ReplayCache.Outcome.FULL, cache.remember(3, 3, 150, 100));
        assertEquals(ReplayCache.Outcome.FIRST, cache.remember(3, 3, 150, 101), "the first expired at 100");
        assertEquals(2, cache.size());
        assertEquals(ReplayCache.Outcome.REPLAYED, cache.remember(2, 2, 120, 120));
        assertThrows(IllegalArgumentException.class, () -> new ReplayCache(0));
    }

    @Test
    void aTamperedOrForeignServerProofIsRefusedByTheClient() {
        PreSharedKey client = key(KEY);
        PreSharedKey server = key(KEY);
        byte[] proof = client.clientProof(handshake(Transport.RDMA_CM));
        server.verifyClient(handshake(Transport.RDMA_CM), proof);
        Handshake answered = handshake(Transport.RDMA_CM).withServerSetup(SERVER_DESCRIPTOR);
        byte[] serverProof = server.serverProof(answered, proof);
        byte[] flipped = serverProof.clone();
        flipped[0] ^= 1;
        ConnectionException.Authentication e = assertThrows(ConnectionException.Authentication.class,
                () -> client.verifyServer(answered, proof, flipped));
        assertEquals("the server's authentication is wrong: its key differs from this client's, or its answer was altered", e.getMessage());
        byte[] otherRkey = SERVER_DESCRIPTOR.clone();
        otherRkey[27] ^= 1;  // the rkey changed on the way
        assertThrows(ConnectionException.Authentication.class,
                () -> client.verifyServer(handshake(Transport.RDMA_CM).withServerSetup(otherRkey), proof, serverProof));
        // an answer recorded for an earlier connect does not satisfy a new one
        byte[] later = client.clientProof(handshake(Transport.RDMA_CM));
        assertThrows(ConnectionException.Authentication.class, () -> client.verifyServer(answered, later, serverProof));
        // a server with another key
        byte[] other = KEY.clone();
        other[0] ^= 1;
        assertThrows(ConnectionException.Authentication.class, () -> client.verifyServer(answered, proof, key(other).serverProof(answered, proof)));
        // the labels keep the two proofs apart: a client tag is never a server proof
        assertNotEquals(HexFormat.of().formatHex(Arrays.copyOfRange(proof, 8, 24)), HexFormat.of().formatHex(Arrays.copyOf(serverProof, 16)));
    }

    @Test
    void keysShorterThan16BytesAreRefusedAndTheKeyIsCopiedAndNeverShown() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PeerAuthentication.preSharedKey(new byte[15]));
        assertEquals("a pre-shared key needs at least 16 bytes, not 15 (32 random bytes make a good key)", e.getMessage());
        byte[] key = KEY.clone();
        PreSharedKey psk = key(key);
        byte[] proof = psk.clientProof(handshake(Transport.RDMA_CM));
        Arrays.fill(key, (byte) 0);  // the caller wipes its array: the authenticator kept its own copy
        psk.verifyClient(handshake(Transport.RDMA_CM), proof);
        assertFalse(psk.toString().contains("0123"), psk.toString());
        assertThrows(IllegalArgumentException.class, () -> PeerAuthentication.preSharedKey(KEY, Duration.ZERO, 10));
        assertThrows(IllegalArgumentException.class, () -> PeerAuthentication.preSharedKey(KEY, Duration.ofSeconds(60), 0));
    }

    @Test
    void aDeterministicProofHasTheDocumentedLayout() {
        byte[] proof = key(KEY).clientProof(handshake(Transport.RDMA_CM), 0x6b49d200L, 0x01020304);
        assertEquals("6b49d200" + "01020304", HexFormat.of().formatHex(proof, 0, 8));
        assertArrayEquals(proof, key(KEY).clientProof(handshake(Transport.RDMA_CM), 0x6b49d200L, 0x01020304));
    }

    /**
     * Tags and server proofs are compared in constant time: a compare that stops at the first
     * differing byte tells a peer, by its timing, how much of a forged tag was right.
     */
    @Test
    void proofsAreComparedInConstantTime() throws IOException {
        String source = Files.readString(Path.of("src/main/java/io/jrdma/reactive/PreSharedKey.java"));
        assertEquals(2, source.split("MessageDigest\\.isEqual\\(", -1).length - 1, "the client tag's and the server proof's compares");
        assertFalse(source.contains("Arrays.equals"), "no early-exit compare of secrets");
    }
}
