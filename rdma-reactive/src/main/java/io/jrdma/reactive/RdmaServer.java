package io.jrdma.reactive;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
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
public final class RdmaServer extends ConnectionSpec<RdmaServer> {
    private final Predicate<InetSocketAddress> acceptFilter;
    private final int backlog;

    private RdmaServer(String host, int port, Transport transport, ConnectionConfig config, RdmaResources resources,
                       Predicate<InetSocketAddress> acceptFilter, int backlog) {
        super(host, port, transport, config, resources);
        this.acceptFilter = acceptFilter;
        this.backlog = backlog;
    }

    public static RdmaServer create() {
        return new RdmaServer("0.0.0.0", 7471, Transport.RDMA_CM, ConnectionConfig.defaults(), RdmaResources.shared(), a -> true, 16);
    }

    @Override
    RdmaServer copy(String host, int port, Transport transport, ConnectionConfig config, RdmaResources resources) {
        return new RdmaServer(host, port, transport, config, resources, acceptFilter, backlog);
    }

    /** Which peers to accept; the others are rejected (rdma_cm: with a reason in the reject's private data). */
    public RdmaServer accept(Predicate<InetSocketAddress> filter) {
        return new RdmaServer(host, port, transport, config, resources, Objects.requireNonNull(filter), backlog);
    }

    /** Starts listening when subscribed; emits once the server accepts connections. */
    public Mono<DisposableRdmaServer> bind() {
        return Mono.fromCallable(() -> {
            InetSocketAddress address = new InetSocketAddress(host, port);
            DisposableRdmaServer server = new DisposableRdmaServer();
            AcceptLoop l;
            if (transport == Transport.RDMA_CM) {
                l = new CmListener(config, resources, address, backlog, acceptFilter, server::connected);
            } else {
                try {
                    l = new TcpConnector.Listener(config, resources, address, backlog, acceptFilter, server::connected);
                } catch (IOException e) {
                    throw new UncheckedIOException("binding " + address + " failed", e);
                }
            }
            try {
                server.start(l.address(), resources.newThread(transport == Transport.RDMA_CM ? "cm-listener" : "tcp-listener", l), l::close);
            } catch (RuntimeException e) {
                l.neverStarted();
                l.close().subscribe();
                throw e;
            }
            return server;
        }).subscribeOn(Schedulers.boundedElastic());
    }
}
