package io.jrdma.reactive;

import io.jrdma.reactive.memory.RegisteredBuffer;
import java.net.InetSocketAddress;
import java.util.Optional;

/**
 * A connect request as a server that speaks a peer's own protocol sees it
 * ({@link RdmaServer#acceptRaw}).
 *
 * @param peer        the client's address
 * @param privateData what the client sent with its connect: rdma_cm reports the whole field, so on
 *                    RoCE and InfiniBand this is 56 bytes, the client's own bytes followed by zeros
 * @param exposed     the memory this connection exposes to the client (its own region, or the
 *                    server's shared one), to advertise in the accept's private data in whatever
 *                    format the client expects ({@link io.jrdma.reactive.memory.RemoteBuffer#toBigEndian()}
 *                    for the common {address, rkey, length} layout)
 */
public record ConnectRequest(InetSocketAddress peer, byte[] privateData, Optional<RegisteredBuffer> exposed) {
    /** Copies {@code privateData}. */
    public ConnectRequest {
        privateData = privateData.clone();
    }

    /** {@return a copy of what the client sent with its connect} */
    @Override
    public byte[] privateData() {
        return privateData.clone();
    }
}
