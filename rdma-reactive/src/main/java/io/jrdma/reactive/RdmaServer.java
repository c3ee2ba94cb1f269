package io.jrdma.reactive;

import io.jrdma.ffm.Access;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.function.Predicate;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Accepts connections:
 *
 * <pre>{@code
 * RdmaServer.create().host("10.77.0.2").port(7471).exposeBuffer(1 << 20, Access.REMOTE_READ, Access.REMOTE_WRITE)
 *     .bind()                                   // Mono<DisposableRdmaServer>
 *     .flatMapMany(DisposableRdmaServer::connections)
 * }</pre>
 */
public final class RdmaServer {
    private final String host;
    private final int port;
    private final Transport transport;
    private final ConnectionConfig config;
    private final RdmaResources resources;
    private final Predicate<InetSocketAddress> acceptFilter;
    private final int backlog;

    private RdmaServer(String host, int port, Transport transport, ConnectionConfig config, RdmaResources resources,
                       Predicate<InetSocketAddress> acceptFilter, int backlog) {
        this.host = host;
        this.port = port;
        this.transport = transport;
        this.config = config;
        this.resources = resources;
        this.acceptFilter = acceptFilter;
        this.backlog = backlog;
    }

    public static RdmaServer create() {
        return new RdmaServer("0.0.0.0", 7471, Transport.RDMA_CM, ConnectionConfig.defaults(), RdmaResources.shared(), a -> true, 16);
    }

    public RdmaServer host(String host) {
        return new RdmaServer(Objects.requireNonNull(host), port, transport, config, resources, acceptFilter, backlog);
    }

    /** 0 picks a free port ({@link DisposableRdmaServer#address()} tells which). */
    public RdmaServer port(int port) {
        return new RdmaServer(host, port, transport, config, resources, acceptFilter, backlog);
    }

    public RdmaServer transport(Transport transport) {
        return new RdmaServer(host, port, Objects.requireNonNull(transport), config, resources, acceptFilter, backlog);
    }

    /** Which peers to accept; the others are rejected (rdma_cm: with a reason in the reject's private data). */
    public RdmaServer accept(Predicate<InetSocketAddress> filter) {
        return new RdmaServer(host, port, transport, config, resources, Objects.requireNonNull(filter), backlog);
    }

    public RdmaServer queueDepth(int send, int receive) {
        return with(config.with(d -> {
            d.sendQueueDepth = send;
            d.receiveQueueDepth = receive;
            d.bufferCount = Math.max(d.bufferCount, send);
        }));
    }

    public RdmaServer buffers(int size, int count) {
        return with(config.with(d -> {
            d.bufferSize = size;
            d.bufferCount = count;
        }));
    }

    public RdmaServer maxScatterGather(int elements) {
        return with(config.with(d -> d.maxScatterGather = elements));
    }

    public RdmaServer pollingMode(PollingMode mode) {
        return with(config.with(d -> d.pollingMode = Objects.requireNonNull(mode)));
    }

    public RdmaServer exposeBuffer(long bytes, Access first, Access... rest) {
        return with(config.with(d -> {
            d.exposedBufferSize = bytes;
            d.exposedAccess = EnumSet.of(first, rest);
        }));
    }

    public RdmaServer connectTimeout(Duration timeout) {
        return with(config.with(d -> d.connectTimeout = timeout));
    }

    public RdmaServer operationTimeout(Duration timeout) {
        return with(config.with(d -> d.operationTimeout = timeout));
    }

    public RdmaServer device(String name, int port) {
        return with(config.with(d -> {
            d.device = name;
            d.port = port;
        }));
    }

    public RdmaServer gidIndex(int index) {
        return with(config.with(d -> d.gidIndex = index));
    }

    public RdmaServer maxInlineData(int bytes) {
        return with(config.with(d -> d.maxInlineData = bytes));
    }

    public RdmaServer resources(RdmaResources resources) {
        return new RdmaServer(host, port, transport, config, Objects.requireNonNull(resources), acceptFilter, backlog);
    }

    private RdmaServer with(ConnectionConfig c) {
        return new RdmaServer(host, port, transport, c, resources, acceptFilter, backlog);
    }

    public ConnectionConfig configuration() {
        return config;
    }

    /** Starts listening when subscribed; emits once the server accepts connections. */
    public Mono<DisposableRdmaServer> bind() {
        return Mono.fromCallable(() -> {
            InetSocketAddress address = new InetSocketAddress(host, port);
            DisposableRdmaServer server = new DisposableRdmaServer();
            if (transport == Transport.RDMA_CM) {
                CmListener l = new CmListener(config, resources, address, backlog, acceptFilter, server::connected);
                server.start(l.address(), resources.newThread("cm-listener", l), l::close);
            } else {
                try {
                    TcpConnector.Listener l = new TcpConnector.Listener(config, resources, address, backlog, acceptFilter, server::connected);
                    server.start(l.address(), resources.newThread("tcp-listener", l), l::close);
                } catch (IOException e) {
                    throw new UncheckedIOException("binding " + address + " failed", e);
                }
            }
            return server;
        }).subscribeOn(Schedulers.boundedElastic());
    }
}
