package io.jrdma.spring.rsocket;

import io.jrdma.rsocket.RdmaServerTransport;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.rsocket.server.RSocketServer;
import org.springframework.boot.rsocket.server.RSocketServerException;

/**
 * An RSocket server over RDMA as Spring Boot's {@link RSocketServer}, started and stopped by Boot's
 * {@code RSocketServerBootstrap}: {@link #address()} is null until it listens and after it stopped
 * (the bootstrap's {@code isRunning()}).
 */
public final class RdmaRSocketServer implements RSocketServer {
    private static final Log log = LogFactory.getLog(RdmaRSocketServer.class);

    private final io.rsocket.core.RSocketServer rsocket;
    private final RdmaServerTransport transport;
    private final Duration lifecycleTimeout;
    private volatile RdmaServerTransport.@Nullable BoundServer bound;

    RdmaRSocketServer(io.rsocket.core.RSocketServer rsocket, RdmaServerTransport transport, Duration lifecycleTimeout) {
        this.rsocket = rsocket;
        this.transport = transport;
        this.lifecycleTimeout = lifecycleTimeout;
    }

    /**
     * Listens, waiting at most the lifecycle timeout.
     *
     * @throws RSocketServerException when it could not (no RDMA device at the address, port taken, timeout)
     */
    @Override
    public void start() throws RSocketServerException {
        RdmaServerTransport.BoundServer server;
        try {
            server = rsocket.bind(transport).block(lifecycleTimeout);
        } catch (RuntimeException e) {
            throw new RSocketServerException("Unable to start the RSocket server over RDMA", e);
        }
        if (server == null) throw new RSocketServerException("The RSocket server over RDMA did not start", null);
        bound = server;
        log.info("RSocket over RDMA started on " + server.address());
        keepAlive(server);
    }

    /**
     * jrdma's threads are daemons, as Reactor Netty's are: this thread, which Boot's Netty server
     * has too, keeps the JVM of a server-only application alive until the server closes.
     */
    private static void keepAlive(RdmaServerTransport.BoundServer server) {
        Thread.ofPlatform().name("rsocket-rdma").daemon(false).start(() -> server.onClose().onErrorComplete().block());
    }

    /**
     * Stops listening and closes every connection, waiting at most the lifecycle timeout for them to close.
     *
     * @throws RSocketServerException when they did not close in time
     */
    @Override
    public void stop() throws RSocketServerException {
        RdmaServerTransport.BoundServer server = bound;
        if (server == null) return;
        bound = null;
        server.dispose();
        try {
            server.onClose().block(lifecycleTimeout);
        } catch (RuntimeException e) {
            throw new RSocketServerException("The RSocket server over RDMA did not stop in " + lifecycleTimeout, e);
        }
    }

    @Override
    public @Nullable InetSocketAddress address() {
        RdmaServerTransport.BoundServer server = bound;
        return server == null ? null : server.address();
    }
}
