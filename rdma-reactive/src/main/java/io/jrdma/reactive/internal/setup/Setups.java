package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.internal.ResourcesCore;
import java.net.InetSocketAddress;
import reactor.core.publisher.Mono;

/** The two setup paths behind one entry point. */
public final class Setups {
    private Setups() {}

    /** Starts connecting; failures (no device included) reach the callback. The returned action cancels the setup. */
    public static Runnable connect(ResourcesCore resources, Transport transport, ConnectionConfig config, InetSocketAddress local,
                                   InetSocketAddress remote, SetupCallback callback) {
        try {
            return transport == Transport.RDMA_CM
                    ? CmConnect.start(resources, config, local, remote, callback)
                    : TcpHandshake.connect(resources, config, local, remote, callback);
        } catch (RuntimeException e) {
            callback.failed(e);
            return () -> { };
        }
    }

    public static Mono<Listener> listen(ResourcesCore resources, Transport transport, ServerSettings settings) {
        return transport == Transport.RDMA_CM ? CmListen.bind(resources, settings) : TcpListen.bind(resources, settings);
    }
}
