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
    /** This side of the exchange: what the peer needs to reach the QP. */
    record Local(int qpNumber, int psn, int lid, byte[] gid, Mtu mtu, Optional<RegisteredBuffer> exposed) {
        public Local {
            gid = gid.clone();
        }

        @Override
        public byte[] gid() {
            return gid.clone();
        }
    }

    /**
     * The peer's side: its QP number, starting PSN, LID (0 on RoCE) and GID (16 bytes; all zero
     * addresses by LID), and the memory it exposes, if the application learned one.
     */
    record Peer(int qpNumber, int psn, int lid, byte[] gid, Optional<RemoteBuffer> exposed) {
        public Peer {
            if (gid.length != 16) throw new IllegalArgumentException("a GID has 16 bytes, not " + gid.length);
            gid = gid.clone();
        }

        @Override
        public byte[] gid() {
            return gid.clone();
        }
    }

    /** Sends {@code local} to the peer and emits what the peer sent back, within the connect timeout. */
    Mono<Peer> exchange(Local local);

    /** After this side's QP is in RTS: e.g. swap a "ready" byte so neither SENDs before the other can receive. */
    default Mono<Void> ready(Peer peer) {
        return Mono.empty();
    }
}
