package io.jrdma.reactive;

import java.net.InetSocketAddress;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Connects to an {@link RdmaServer} (or any peer speaking the same descriptor):
 *
 * <pre>{@code
 * RdmaClient.create().host("10.77.0.2").port(7471).localAddress("10.77.0.1")
 *     .queueDepth(64, 64).connect()            // Mono<RdmaConnection>
 * }</pre>
 *
 * Immutable: every setter returns a new client.
 */
public final class RdmaClient extends ConnectionSpec<RdmaClient> {
    private final String localAddress;

    private RdmaClient(String host, int port, String localAddress, Transport transport, ConnectionConfig config,
                       RdmaResources resources) {
        super(host, port, transport, config, resources);
        this.localAddress = localAddress;
    }

    public static RdmaClient create() {
        return new RdmaClient("127.0.0.1", 7471, null, Transport.RDMA_CM, ConnectionConfig.defaults(), RdmaResources.shared());
    }

    @Override
    RdmaClient copy(String host, int port, Transport transport, ConnectionConfig config, RdmaResources resources) {
        return new RdmaClient(host, port, localAddress, transport, config, resources);
    }

    /** The local IP to connect from; selects the RDMA device (its RoCE v2 GID). */
    public RdmaClient localAddress(String address) {
        return new RdmaClient(host, port, address, transport, config, resources);
    }

    /**
     * Connects when subscribed. Setup blocks in native calls, so it runs on a bounded-elastic
     * thread, within {@code connectTimeout}; a subscriber that cancels meanwhile never gets the
     * connection, which is closed as soon as setup finishes.
     */
    public Mono<RdmaConnection> connect() {
        return HandOff.<RdmaConnection>create(waiter -> Schedulers.boundedElastic().schedule(() -> {
            try {
                InetSocketAddress remote = new InetSocketAddress(host, port);
                InetSocketAddress local = localAddress == null ? null : new InetSocketAddress(localAddress, 0);
                RdmaConnection c = transport == Transport.RDMA_CM
                        ? CmConnector.connect(config, resources, local, remote)
                        : TcpConnector.connect(config, resources, local, remote);
                if (!waiter.offer(c)) c.close().subscribe();
            } catch (Throwable t) {
                waiter.fail(t);
            }
        }), waiter -> { });
    }
}
