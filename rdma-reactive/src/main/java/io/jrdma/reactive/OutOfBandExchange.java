package io.jrdma.reactive;

import io.jrdma.ffm.Mtu;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.util.Optional;
import reactor.core.publisher.Mono;

/**
 * Connection setup where the application swaps the queue pairs' addresses with its peer itself,
 * in the peer's own format and over its own channel (a socket, a file, a key-value store): how C
 * programs that exchange QP information over a TCP socket in their own struct layout are met.
 * jrdma creates the QP (INIT, receives posted), hands the local address to {@link #exchange},
 * and drives the QP to RTR and RTS with what comes back; then {@link #ready} runs, for peers that
 * confirm RTS to each other before the first SEND.
 *
 * <p>{@code RdmaClient.create().device("mlx5_0", 1).gidIndex(3).outOfBand(exchange).connect()};
 * either side of such a pair uses {@code RdmaClient} this way. Without rdma_cm or a socket of
 * jrdma's own, nothing tells jrdma when the peer leaves: a QP whose peer is gone fails its next
 * operation (retry exceeded), and the application closes the connection when its channel ends.
 */
@FunctionalInterface
public interface OutOfBandExchange {
    /**
     * This side of the exchange: what the peer needs to reach the QP.
     *
     * @param qpNumber the QP's number
     * @param psn      its first send PSN (random, 24 bits): the peer's {@code rq_psn}
     * @param lid      its port's LID (InfiniBand); 0 on RoCE
     * @param gid      the GID it sends from, 16 bytes (RoCE: the local IP address)
     * @param mtu      the active MTU of its port, which jrdma programs as the path MTU: the peer
     *                 should use the smaller of this and its own
     * @param exposed  the memory this side exposes (its own region), if any, to advertise to the
     *                 peer in its format ({@link RegisteredBuffer#toRemote})
     */
    record Local(int qpNumber, int psn, int lid, byte[] gid, Mtu mtu, Optional<RegisteredBuffer> exposed) {
        /** Copies {@code gid}. */
        public Local {
            gid = gid.clone();
        }

        /** {@return a copy of the 16 GID bytes} */
        @Override
        public byte[] gid() {
            return gid.clone();
        }
    }

    /**
     * The peer's side: its QP number, starting PSN, LID (0 on RoCE) and GID (16 bytes; all zero
     * addresses by LID), and the memory it exposes, if the application learned one.
     *
     * @param qpNumber the peer's QP number
     * @param psn      its first send PSN, 24 bits
     * @param lid      its port's LID; 0 on RoCE
     * @param gid      its GID, 16 bytes; all zeros for a LID-routed InfiniBand path; copied
     * @param exposed  the memory it exposes to this side, which becomes the connection's
     *                 {@code remoteBuffer()}; empty when none or unknown
     */
    record Peer(int qpNumber, int psn, int lid, byte[] gid, Optional<RemoteBuffer> exposed) {
        /** Checks that {@code gid} has 16 bytes ({@link IllegalArgumentException} otherwise) and copies it. */
        public Peer {
            if (gid.length != 16) throw new IllegalArgumentException("a GID has 16 bytes, not " + gid.length);
            gid = gid.clone();
        }

        /** {@return a copy of the 16 GID bytes} */
        @Override
        public byte[] gid() {
            return gid.clone();
        }
    }

    /**
     * Sends {@code local} to the peer and emits what the peer sent back, within the connect timeout.
     * Runs once per connect; it must not block (subscribe on another scheduler if the channel
     * blocks).
     *
     * @param local this side's QP address and exposed memory
     * @return the peer's side; empty or an error fails the connect, and so does the connect timeout
     */
    Mono<Peer> exchange(Local local);

    /**
     * After this side's QP is in RTS: e.g. swap a "ready" byte so neither SENDs before the other can receive.
     *
     * @param peer what {@link #exchange} emitted
     * @return completes when the connection may be used (default: at once); an error fails the connect
     */
    default Mono<Void> ready(Peer peer) {
        return Mono.empty();
    }
}
