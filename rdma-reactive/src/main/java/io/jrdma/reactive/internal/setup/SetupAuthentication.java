package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.PeerAuthentication;
import io.jrdma.reactive.PeerAuthentication.Handshake;
import io.jrdma.reactive.Transport;
import java.net.InetSocketAddress;
import java.util.Arrays;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * {@link PeerAuthentication} on the setup paths, the same on rdma_cm and TCP: which bytes a proof
 * binds, where it travels, and what each side says when the other fails. The client's setup bytes
 * carry the {@link ConnectionDescriptor#AUTHENTICATED} flag, set before the proof is made, so the
 * flag is bound too. Rules:
 * <ol>
 *   <li>a server with an authentication checks the client's proof before it creates anything for
 *       the connection; a client without one (no flag) is told "this server requires
 *       authentication";</li>
 *   <li>a server without one ignores a client's proof and answers without its own; the client
 *       then fails, saying the server proved nothing, instead of trusting it;</li>
 *   <li>what the peer is told is the authentication's own sentence; a failure of the
 *       authentication itself (an application's code that throws) is logged with its stack trace
 *       and told as the server's failure, not the client's.</li>
 * </ol>
 * One instance per connection attempt, on one setup thread.
 */
public final class SetupAuthentication {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.server");

    private final PeerAuthentication authentication;
    private Handshake handshake;
    private byte[] clientProof;

    private SetupAuthentication(PeerAuthentication authentication, Handshake handshake, byte[] clientProof) {
        this.authentication = authentication;
        this.handshake = handshake;
        this.clientProof = clientProof;
    }

    /**
     * The client's side: flags {@code setup} (its bytes, the descriptor at {@code descriptorAt}),
     * proves it, and keeps both for the server's answer.
     */
    static SetupAuthentication client(PeerAuthentication authentication, Transport transport, InetSocketAddress server,
                                      InetSocketAddress client, byte[] setup, int descriptorAt) {
        Handshake h = new Handshake(transport, server, client, flagged(setup, descriptorAt), new byte[0]);
        byte[] proof = checked(authentication.clientProof(h), authentication.clientProofBytes(), PeerAuthentication.MAX_CLIENT_PROOF_BYTES, "client");
        return new SetupAuthentication(authentication, h, proof);
    }

    /** The client's setup bytes, flagged, that the proof binds. */
    byte[] clientSetup() {
        return handshake.clientSetup();
    }

    byte[] clientProof() {
        return clientProof.clone();
    }

    /**
     * The client's check of the server's answer: {@code serverSetup} (its descriptor at
     * {@code descriptorAt}) and the proof after it, {@code null} when the server sent none.
     *
     * @throws ConnectionException.Authentication when the server did not prove its identity
     */
    void verifyServer(byte[] serverSetup, int descriptorAt, byte[] serverProof, InetSocketAddress server) {
        String who = "authenticating the server at " + SetupMessages.address(server) + " failed: ";
        byte[] descriptor = Arrays.copyOfRange(serverSetup, descriptorAt, descriptorAt + ConnectionDescriptor.SIZE);
        if (!ConnectionDescriptor.authenticated(descriptor) || serverProof == null) {
            throw new ConnectionException.Authentication(who + "it sent no proof of its identity (it has no authentication configured,"
                    + " or is an earlier version of jrdma): configure the same authentication on the server");
        }
        try {
            authentication.verifyServer(handshake.withServerSetup(serverSetup), clientProof.clone(), serverProof.clone());
        } catch (ConnectionException.Authentication e) {
            throw new ConnectionException.Authentication(who + e.getMessage());
        }
    }

    /**
     * The server's check of a client: {@code setup} (the client's bytes, its descriptor at
     * {@code descriptorAt}) and {@code proof} (null when the client sent none), before anything is
     * created for the connection.
     *
     * @return the verified handshake, for the server's answer
     * @throws ConnectionException.Authentication with the reason for the client's reject
     */
    static SetupAuthentication server(PeerAuthentication authentication, Transport transport, InetSocketAddress server,
                                      InetSocketAddress client, byte[] setup, int descriptorAt, byte[] proof) {
        if (!ConnectionDescriptor.authenticated(Arrays.copyOfRange(setup, descriptorAt, descriptorAt + ConnectionDescriptor.SIZE)) || proof == null) {
            throw new ConnectionException.Authentication("this server requires authentication, and the client sent none");
        }
        Handshake h = new Handshake(transport, server, client, setup, new byte[0]);
        try {
            authentication.verifyClient(h, proof.clone());
        } catch (ConnectionException.Authentication e) {
            throw e;
        } catch (RuntimeException e) {
            LOG.warn("the authentication failed while checking " + SetupMessages.address(client) + " on " + SetupMessages.address(server), e);
            throw new ConnectionException.Authentication("the server could not check the client's authentication (see its log)");
        }
        return new SetupAuthentication(authentication, h, proof.clone());
    }

    /**
     * What a client's proof binds on rdma_cm: its QP number (u32, big-endian), which travels in the
     * connect request's header and reaches the server as the request's {@code qp_num}, then its
     * descriptor (at 4). Binding the number makes a captured request sent from another QP fail the
     * proof: without it, whoever got a copy of a genuine request to the server first (an on-path
     * attacker racing the client) would get the connection, and the genuine client a replay reject.
     */
    static byte[] cmSetup(int qpNumber, byte[] descriptor) {
        byte[] setup = new byte[4 + ConnectionDescriptor.SIZE];
        setup[0] = (byte) (qpNumber >>> 24);
        setup[1] = (byte) (qpNumber >>> 16);
        setup[2] = (byte) (qpNumber >>> 8);
        setup[3] = (byte) qpNumber;
        System.arraycopy(descriptor, 0, setup, 4, ConnectionDescriptor.SIZE);
        return setup;
    }

    /** Where the descriptor is in {@link #cmSetup}. */
    static final int CM_DESCRIPTOR_AT = 4;

    /** {@code setup} with the {@link ConnectionDescriptor#AUTHENTICATED} flag set in its descriptor at {@code descriptorAt}. */
    static byte[] flagged(byte[] setup, int descriptorAt) {
        byte[] flagged = setup.clone();
        System.arraycopy(ConnectionDescriptor.withAuthenticated(Arrays.copyOfRange(setup, descriptorAt, descriptorAt + ConnectionDescriptor.SIZE)),
                0, flagged, descriptorAt, ConnectionDescriptor.SIZE);
        return flagged;
    }

    /** The server's proof for its answer, {@code serverSetup} (its bytes before the proof, {@link #flagged}). */
    byte[] serverProof(byte[] serverSetup) {
        handshake = handshake.withServerSetup(serverSetup);
        return checked(authentication.serverProof(handshake, clientProof.clone()), authentication.serverProofBytes(),
                PeerAuthentication.MAX_SERVER_PROOF_BYTES, "server");
    }

    /** An application's proof as it promised it, and within what the setup path carries: a bug of its code if not. */
    private static byte[] checked(byte[] proof, int promised, int max, String which) {
        if (proof == null || proof.length != promised) {
            throw new IllegalStateException("the authentication's " + which + " proof has " + (proof == null ? "no" : proof.length)
                    + " bytes where it promised " + promised);
        }
        if (proof.length > max) {
            throw new IllegalStateException("the authentication's " + which + " proof has " + proof.length + " bytes, more than the "
                    + max + " the setup paths carry");
        }
        return proof.clone();
    }

    /** The authentication's proof lengths checked where it is configured: what the setup paths carry. */
    public static PeerAuthentication fits(PeerAuthentication authentication) {
        int client = authentication.clientProofBytes();
        int server = authentication.serverProofBytes();
        if (client < 1 || client > PeerAuthentication.MAX_CLIENT_PROOF_BYTES || server < 1 || server > PeerAuthentication.MAX_SERVER_PROOF_BYTES) {
            throw new IllegalArgumentException("an authentication's proofs are 1 to " + PeerAuthentication.MAX_CLIENT_PROOF_BYTES
                    + " bytes (the client's) and 1 to " + PeerAuthentication.MAX_SERVER_PROOF_BYTES + " (the server's), not "
                    + client + " and " + server + ": that is what an rdma_cm connect request and accept carry after the descriptor");
        }
        return authentication;
    }
}
