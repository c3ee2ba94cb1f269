package io.jrdma.reactive;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Who may connect: the client proves it holds a secret before the server creates anything for it,
 * and the server proves the same back before the client hands its connection out. Set the same
 * authentication on both sides ({@link RdmaServer#authentication}, {@link RdmaClient#authentication}):
 *
 * <pre>{@code
 * PeerAuthentication auth = PeerAuthentication.preSharedKey(key);   // at least 16 bytes, e.g. 32 from SecureRandom
 * RdmaServer.create().port(7471).authentication(auth).exposeBuffer(1 << 20, Access.REMOTE_WRITE).bind();
 * RdmaClient.create().host("10.77.0.2").port(7471).authentication(auth).connect();
 * }</pre>
 *
 * <p>The order, on both setup paths (docs/authentication.md has the bytes):
 * <ol>
 *   <li>the client sends its connection descriptor (rdma_cm: in the connect request; TCP: in its
 *       hello) with its {@linkplain #clientProof proof} after it;</li>
 *   <li>the server {@linkplain #verifyClient verifies} the proof before it creates the
 *       connection's queue pair, completion queue or registered memory: a client that fails is
 *       rejected with the reason and costs the server nothing but the check;</li>
 *   <li>the server answers with its descriptor (the exposed buffer's address and rkey) and its
 *       {@linkplain #serverProof proof}, which binds the client's;</li>
 *   <li>the client {@linkplain #verifyServer verifies} it before it hands the connection out
 *       (over TCP also before its queue pair reaches RTR); one that fails ends the connection and
 *       fails the connect with {@link ConnectionException.Authentication}.</li>
 * </ol>
 *
 * <p>This is peer authentication, not confidentiality: nothing is encrypted. The descriptors,
 * rkeys among them, cross the network in clear (RoCE does not encrypt), and so does every message
 * after; whoever can read the traffic on the path can read the rkey and, on the same network,
 * use it. What it prevents is a peer without the secret (a port scan, a stray client, a replayed
 * connect request) getting a connection and the server's rkey.
 *
 * <p>Bring your own: implement the four methods. They run on the setup thread for every
 * connection (do not block there), and their proofs are bounded by what the setup path carries:
 * {@value #MAX_CLIENT_PROOF_BYTES} bytes for the client (what an rdma_cm connect request has left
 * after jrdma's 32-byte descriptor) and {@value #MAX_SERVER_PROOF_BYTES} for the server. Replay
 * protection is then the implementation's work, as {@link #preSharedKey} does it.
 */
public interface PeerAuthentication {
    /** The most a client's proof may hold: rdma_cm's 56 bytes of connect private data less the descriptor's 32. */
    int MAX_CLIENT_PROOF_BYTES = 24;
    /** The most a server's proof may hold: rdma_cm's 196 bytes of accept private data less the descriptor's 32. */
    int MAX_SERVER_PROOF_BYTES = 164;

    /**
     * What a proof binds: the setup path, the server's address as the client dialed it (as the
     * server was reached, on the server), the client's address (for an application's own policy;
     * behind NAT it differs between the two sides) and the bytes each side sent before its proof:
     * on rdma_cm the client's QP number (4 bytes, big-endian: it travels in the connect request's
     * header) and its connection descriptor, and the server's descriptor; over TCP each side's hello
     * (queue pair address and descriptor).
     *
     * @param transport   the setup path
     * @param server      the server's address and port
     * @param client      the client's address as this side sees it, or null when not known
     * @param clientSetup the client's bytes before its proof
     * @param serverSetup the server's bytes before its proof; empty while the client's proof is made and checked
     */
    record Handshake(Transport transport, InetSocketAddress server, @Nullable InetSocketAddress client, byte[] clientSetup,
                     byte[] serverSetup) {
        /** Copies the bytes. */
        public Handshake {
            Objects.requireNonNull(transport);
            Objects.requireNonNull(server);
            clientSetup = clientSetup.clone();
            serverSetup = serverSetup.clone();
        }

        /** {@return a copy of the client's bytes before its proof} */
        @Override
        public byte[] clientSetup() {
            return clientSetup.clone();
        }

        /** {@return a copy of the server's bytes before its proof (empty before the server answered)} */
        @Override
        public byte[] serverSetup() {
            return serverSetup.clone();
        }

        /**
         * The same handshake with the server's bytes, once it answered.
         *
         * @param serverSetup the server's bytes before its proof
         * @return a copy with them
         */
        public Handshake withServerSetup(byte[] serverSetup) {
            return new Handshake(transport, server, client, clientSetup, serverSetup);
        }
    }

    /** {@return the length of every client proof, 1 to {@value #MAX_CLIENT_PROOF_BYTES}} */
    int clientProofBytes();

    /** {@return the length of every server proof, 1 to {@value #MAX_SERVER_PROOF_BYTES}} */
    int serverProofBytes();

    /**
     * The client's proof for one connect, made on the client.
     *
     * @param handshake what the proof binds ({@code serverSetup} empty)
     * @return exactly {@link #clientProofBytes()} bytes
     */
    byte[] clientProof(Handshake handshake);

    /**
     * Checks a client's proof on the server, before anything is created for the connection.
     *
     * @param handshake what the proof should bind ({@code serverSetup} empty)
     * @param proof     the {@link #clientProofBytes()} bytes the client sent
     * @throws ConnectionException.Authentication when the client fails, with a short sentence the
     *         client's reject carries (no secrets in it); anything else thrown also rejects, as a
     *         failure of the server's own
     */
    void verifyClient(Handshake handshake, byte[] proof);

    /**
     * The server's proof, made on the server once the client's passed.
     *
     * @param handshake   what the proof binds, the server's bytes included
     * @param clientProof the client's proof, which the server's should bind (it makes the answer fresh)
     * @return exactly {@link #serverProofBytes()} bytes
     */
    byte[] serverProof(Handshake handshake, byte[] clientProof);

    /**
     * Checks the server's proof on the client, before the connection is handed out.
     *
     * @param handshake   what the proof should bind, the server's bytes included
     * @param clientProof the proof this client sent
     * @param serverProof the {@link #serverProofBytes()} bytes the server sent
     * @throws ConnectionException.Authentication when the server fails, saying why
     */
    void verifyServer(Handshake handshake, byte[] clientProof, byte[] serverProof);

    /**
     * Authentication by a key both sides hold: HMAC-SHA256 over what the {@link Handshake}
     * binds, a timestamp and a random nonce; a server accepts a client's timestamp within 60 s of
     * its own clock and each proof once (it remembers up to 65536 within that window).
     *
     * @param key the shared secret, at least 16 bytes (32 random bytes are a good key); copied, never logged
     * @return the authentication, to set on the server and its clients alike
     * @throws IllegalArgumentException when the key is shorter than 16 bytes
     */
    static PeerAuthentication preSharedKey(byte[] key) {
        return preSharedKey(key, Duration.ofSeconds(60), 65_536);
    }

    /**
     * {@link #preSharedKey(byte[])} with its window and replay memory chosen. A client's clock may
     * be off the server's by up to {@code window}; each proof is remembered until its timestamp
     * leaves the window, and when {@code replayCapacity} proofs are remembered the server rejects
     * further clients (saying it is busy) until some expire, rather than forget one that could be
     * replayed.
     *
     * @param key            the shared secret, at least 16 bytes; copied, never logged
     * @param window         how far a client's timestamp may be from the server's clock, 1 s to 1 hour
     * @param replayCapacity proofs remembered at most, from 1
     * @return the authentication
     * @throws IllegalArgumentException when an argument is out of range
     */
    static PeerAuthentication preSharedKey(byte[] key, Duration window, int replayCapacity) {
        return new PreSharedKey(key, window, replayCapacity, InstantSource.system());
    }
}
