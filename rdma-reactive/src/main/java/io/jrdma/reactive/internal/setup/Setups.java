package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.Transport;
import java.net.InetSocketAddress;
import reactor.core.publisher.Mono;

/** The two setup paths behind one entry point. */
public final class Setups {
    private Setups() {}

    /** Starts connecting; failures (no device included) reach the callback. The returned action cancels the setup. */
    public static Runnable connect(ResourcesCore resources, Transport transport, ConnectionConfig config, InetSocketAddress local,
                                   InetSocketAddress remote, SetupOptions options, SetupCallback callback) {
        try {
            if (options.outOfBand() != null) return OutOfBandSetup.start(resources, config, local, options.outOfBand(), callback);
            return transport == Transport.RDMA_CM
                    ? CmConnect.start(resources, config, local, remote, options, callback)
                    : TcpHandshake.connect(resources, config, local, remote, options.authentication(), callback);
        } catch (RuntimeException e) {
            callback.failed(e);
            return () -> { };
        }
    }

    public static Mono<Listener> listen(ResourcesCore resources, Transport transport, ServerSettings settings) {
        if (settings.rawAccept() != null && transport != Transport.RDMA_CM) {
            return Mono.error(new IllegalArgumentException("acceptRaw answers rdma_cm connect requests: use Transport.RDMA_CM"
                    + " (for a peer with its own TCP exchange, use RdmaClient.outOfBand on this side)"));
        }
        return transport == Transport.RDMA_CM ? CmListen.bind(resources, settings) : TcpListen.bind(resources, settings);
    }
}
