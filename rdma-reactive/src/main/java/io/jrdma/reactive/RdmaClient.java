package io.jrdma.reactive;

import io.jrdma.ffm.Access;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
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
public final class RdmaClient {
    private final String host;
    private final int port;
    private final String localAddress;
    private final Transport transport;
    private final ConnectionConfig config;
    private final RdmaResources resources;

    private RdmaClient(String host, int port, String localAddress, Transport transport, ConnectionConfig config,
                       RdmaResources resources) {
        this.host = host;
        this.port = port;
        this.localAddress = localAddress;
        this.transport = transport;
        this.config = config;
        this.resources = resources;
    }

    public static RdmaClient create() {
        return new RdmaClient("127.0.0.1", 7471, null, Transport.RDMA_CM, ConnectionConfig.defaults(), RdmaResources.shared());
    }

    public RdmaClient host(String host) {
        return new RdmaClient(Objects.requireNonNull(host), port, localAddress, transport, config, resources);
    }

    public RdmaClient port(int port) {
        return new RdmaClient(host, port, localAddress, transport, config, resources);
    }

    /** The local IP to connect from; selects the RDMA device (its RoCE v2 GID). */
    public RdmaClient localAddress(String address) {
        return new RdmaClient(host, port, address, transport, config, resources);
    }

    public RdmaClient transport(Transport transport) {
        return new RdmaClient(host, port, localAddress, Objects.requireNonNull(transport), config, resources);
    }

    /** Send WRs in flight and receives kept posted. */
    public RdmaClient queueDepth(int send, int receive) {
        return with(config.with(d -> {
            d.sendQueueDepth = send;
            d.receiveQueueDepth = receive;
            d.bufferCount = Math.max(d.bufferCount, send);
        }));
    }

    /** Size and number of pooled buffers (the largest message is one buffer). */
    public RdmaClient buffers(int size, int count) {
        return with(config.with(d -> {
            d.bufferSize = size;
            d.bufferCount = count;
        }));
    }

    /** How many scatter-gather elements one operation may list (default 4). */
    public RdmaClient maxScatterGather(int elements) {
        return with(config.with(d -> d.maxScatterGather = elements));
    }

    public RdmaClient pollingMode(PollingMode mode) {
        return with(config.with(d -> d.pollingMode = Objects.requireNonNull(mode)));
    }

    /** Exposes {@code bytes} of registered memory to the server with exactly {@code access}. */
    public RdmaClient exposeBuffer(long bytes, Access first, Access... rest) {
        return with(config.with(d -> {
            d.exposedBufferSize = bytes;
            d.exposedAccess = EnumSet.of(first, rest);
        }));
    }

    public RdmaClient connectTimeout(Duration timeout) {
        return with(config.with(d -> d.connectTimeout = timeout));
    }

    /** The limit for each operation from subscription to completion (default 30 s): see {@link OperationTimeoutException}. */
    public RdmaClient operationTimeout(Duration timeout) {
        return with(config.with(d -> d.operationTimeout = timeout));
    }

    /** For the TCP path: the device and port to use instead of the one owning the local address. */
    public RdmaClient device(String name, int port) {
        return with(config.with(d -> {
            d.device = name;
            d.port = port;
        }));
    }

    /** For the TCP path: the GID index to address the peer from, instead of the RoCE v2 GID of the local address. */
    public RdmaClient gidIndex(int index) {
        return with(config.with(d -> d.gidIndex = index));
    }

    public RdmaClient maxInlineData(int bytes) {
        return with(config.with(d -> d.maxInlineData = bytes));
    }

    public RdmaClient resources(RdmaResources resources) {
        return new RdmaClient(host, port, localAddress, transport, config, Objects.requireNonNull(resources));
    }

    private RdmaClient with(ConnectionConfig c) {
        return new RdmaClient(host, port, localAddress, transport, c, resources);
    }

    public ConnectionConfig configuration() {
        return config;
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
