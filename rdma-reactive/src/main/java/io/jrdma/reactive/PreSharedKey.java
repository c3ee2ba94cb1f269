package io.jrdma.reactive;

import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * {@link PeerAuthentication#preSharedKey}: HMAC-SHA256 with a key both sides hold.
 * <pre>
 * client proof (24 bytes): u32 timestamp (epoch seconds) | u32 nonce (random) | tag (16 bytes)
 *   tag = HMAC(key, "jrdma-auth-v1 client" | handshake | timestamp | nonce), first 16 bytes
 * server proof (32 bytes): HMAC(key, "jrdma-auth-v1 server" | handshake | client proof)
 *   handshake = u8 transport (1 rdma_cm, 2 TCP) | u8 n | server IP (n bytes) | u16 server port
 *             | u16 n | client's setup bytes | u16 n | server's setup bytes (none in the client's tag)
 * </pre>
 * Rules:
 * <ol>
 *   <li>the labels separate the two proofs: a client's tag is never a valid server proof, nor the
 *       reverse, and no other use of the key can produce either;</li>
 *   <li>a tag binds the client's descriptor (its rkey, its credits), its queue pair (the number
 *       on rdma_cm, the whole address over TCP) and the server's address and port as dialed: a
 *       proof made for one server, or moved onto other setup bytes or another QP, fails the MAC;</li>
 *   <li>the server checks the MAC first (constant time, {@link MessageDigest#isEqual}), then the
 *       timestamp against its clock (within {@code window} either way), then that the proof is new
 *       ({@link ReplayCache}): what it tells a peer without the key is only that its MAC failed;</li>
 *   <li>the server proof binds the client's whole proof, fresh by its nonce and timestamp, so an
 *       old server answer does not satisfy a new client.</li>
 * </ol>
 * The key is copied and is never part of a message, a log line or {@link #toString()}.
 */
final class PreSharedKey implements PeerAuthentication {
    public static final int MIN_KEY_BYTES = 16;
    static final int CLIENT_PROOF = 24;
    static final int SERVER_PROOF = 32;
    private static final int TAG = 16;
    private static final byte[] CLIENT_LABEL = "jrdma-auth-v1 client".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SERVER_LABEL = "jrdma-auth-v1 server".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SecretKeySpec key;
    private final long window;
    private final InstantSource clock;
    private final ReplayCache replays;

    PreSharedKey(byte[] key, Duration window, int replayCapacity, InstantSource clock) {
        if (key.length < MIN_KEY_BYTES) {
            throw new IllegalArgumentException("a pre-shared key needs at least " + MIN_KEY_BYTES + " bytes, not " + key.length
                    + " (32 random bytes make a good key)");
        }
        if (window.compareTo(Duration.ofSeconds(1)) < 0 || window.compareTo(Duration.ofHours(1)) > 0) {
            throw new IllegalArgumentException("the authentication window is 1 s to 1 hour, not " + window);
        }
        this.key = new SecretKeySpec(key.clone(), "HmacSHA256");  // SecretKeySpec copies too; the clone says so here
        this.window = window.toSeconds();
        this.clock = clock;
        this.replays = new ReplayCache(replayCapacity);
    }

    @Override
    public int clientProofBytes() {
        return CLIENT_PROOF;
    }

    @Override
    public int serverProofBytes() {
        return SERVER_PROOF;
    }

    @Override
    public byte[] clientProof(Handshake handshake) {
        return clientProof(handshake, clock.instant().getEpochSecond(), RANDOM.nextInt());
    }

    /** The proof with this timestamp and nonce: what a test replays, or makes stale. */
    byte[] clientProof(Handshake handshake, long timestamp, int nonce) {
        ByteBuffer proof = ByteBuffer.allocate(CLIENT_PROOF).putInt((int) timestamp).putInt(nonce);
        proof.put(clientTag(handshake, (int) timestamp, nonce));
        return proof.array();
    }

    private byte[] clientTag(Handshake h, int timestamp, int nonce) {
        Mac mac = mac();
        mac.update(CLIENT_LABEL);
        mac.update(bound(h, false));
        mac.update(ByteBuffer.allocate(8).putInt(timestamp).putInt(nonce).array());
        return Arrays.copyOf(mac.doFinal(), TAG);
    }

    @Override
    public void verifyClient(Handshake handshake, byte[] proof) {
        if (proof.length != CLIENT_PROOF) {
            throw new ConnectionException.Authentication("the client's authentication has " + proof.length + " bytes, not " + CLIENT_PROOF);
        }
        ByteBuffer b = ByteBuffer.wrap(proof);
        int timestamp = b.getInt();
        int nonce = b.getInt();
        byte[] tag = Arrays.copyOfRange(proof, 8, CLIENT_PROOF);
        if (!MessageDigest.isEqual(tag, clientTag(handshake, timestamp, nonce))) {
            throw new ConnectionException.Authentication("the client's authentication is wrong: its key differs from the server's,"
                    + " or its connect request was altered");
        }
        long now = clock.instant().getEpochSecond();
        long skew = Integer.toUnsignedLong(timestamp) - now;
        if (Math.abs(skew) > window) {
            throw new ConnectionException.Authentication("the client's authentication is " + (skew < 0 ? "stale" : "from the future")
                    + ": its clock is " + Math.abs(skew) + " s " + (skew < 0 ? "behind" : "ahead of") + " the server's (allowed: " + window + " s)");
        }
        ByteBuffer t = ByteBuffer.wrap(tag);
        switch (replays.remember(t.getLong(), t.getLong(), Integer.toUnsignedLong(timestamp) + window, now)) {
            case REPLAYED -> throw new ConnectionException.Authentication("the client's authentication was used before: a replayed connect request");
            case FULL -> throw new ConnectionException.Authentication("the server is authenticating too many clients at once: try again later");
            case FIRST -> { }
        }
    }

    @Override
    public byte[] serverProof(Handshake handshake, byte[] clientProof) {
        Mac mac = mac();
        mac.update(SERVER_LABEL);
        mac.update(bound(handshake, true));
        mac.update(clientProof);
        return mac.doFinal();
    }

    @Override
    public void verifyServer(Handshake handshake, byte[] clientProof, byte[] serverProof) {
        if (!MessageDigest.isEqual(serverProof, serverProof(handshake, clientProof))) {
            throw new ConnectionException.Authentication("the server's authentication is wrong: its key differs from this client's,"
                    + " or its answer was altered");
        }
    }

    /** What both proofs bind: the handshake, length-prefixed field by field so no two handshakes encode alike. */
    private static byte[] bound(Handshake h, boolean withServer) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(160);
        InetSocketAddress server = h.server();
        byte[] ip = server.getAddress() == null ? server.getHostString().getBytes(StandardCharsets.UTF_8) : server.getAddress().getAddress();
        out.write(h.transport() == Transport.RDMA_CM ? 1 : 2);
        out.write(ip.length);
        out.writeBytes(ip);
        out.write(server.getPort() >>> 8);
        out.write(server.getPort());
        field(out, h.clientSetup());
        if (withServer) field(out, h.serverSetup());
        return out.toByteArray();
    }

    private static void field(ByteArrayOutputStream out, byte[] bytes) {
        out.write(bytes.length >>> 8);
        out.write(bytes.length);
        out.writeBytes(bytes);
    }

    /** A Mac per call: a Mac is not thread-safe, and one authentication serves several setup threads. */
    private Mac mac() {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(key);
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is missing from this JDK", e);
        }
    }

    /** Proofs remembered against replay now. */
    int remembered() {
        return replays.size();
    }

    @Override
    public String toString() {
        return "PeerAuthentication.preSharedKey(window " + window + " s)";
    }
}
