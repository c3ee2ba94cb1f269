package io.jrdma.spring.rsocket;

import io.jrdma.reactive.RdmaServer;
import io.jrdma.rsocket.RdmaServerTransport;
import io.rsocket.SocketAcceptor;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import org.springframework.boot.rsocket.server.RSocketServerCustomizer;
import org.springframework.boot.rsocket.server.RSocketServerFactory;

/**
 * Spring Boot's {@link RSocketServerFactory} over RDMA: what {@code NettyRSocketServerFactory} is
 * for TCP and WebSocket, with an {@link RdmaServerTransport} in place of Netty's. Boot's
 * {@code RSocketServerBootstrap} calls {@link #create} with the {@code RSocketMessageHandler}'s
 * responder when the context is built, and starts and stops the server with the context.
 * Immutable.
 */
public final class RdmaRSocketServerFactory implements RSocketServerFactory {
    private final RdmaServer server;
    private final Duration lifecycleTimeout;
    private final List<RSocketServerCustomizer> customizers;

    /**
     * @param server           the jrdma server's settings (address, polling, buffers)
     * @param lifecycleTimeout how long starting waits for the server to listen, and stopping for it to close
     * @param customizers      applied in order to each {@link io.rsocket.core.RSocketServer} before it binds
     *                         (interceptors, payload decoder, resume, lease, as with Boot's Netty factory)
     */
    public RdmaRSocketServerFactory(RdmaServer server, Duration lifecycleTimeout, List<RSocketServerCustomizer> customizers) {
        this.server = Objects.requireNonNull(server, "server");
        this.lifecycleTimeout = Objects.requireNonNull(lifecycleTimeout, "lifecycleTimeout");
        this.customizers = List.copyOf(customizers);
    }

    /** {@return the jrdma server's settings} */
    public RdmaServer server() {
        return server;
    }

    /** {@return how long the server's start and stop wait} */
    public Duration lifecycleTimeout() {
        return lifecycleTimeout;
    }

    /** A server that {@code acceptor} answers, not yet listening: nothing touches a device before {@link RdmaRSocketServer#start()}. */
    @Override
    public RdmaRSocketServer create(SocketAcceptor acceptor) {
        io.rsocket.core.RSocketServer rsocket = io.rsocket.core.RSocketServer.create(acceptor);
        customizers.forEach(c -> c.customize(rsocket));
        return new RdmaRSocketServer(rsocket, RdmaServerTransport.create(server), lifecycleTimeout);
    }
}
