package io.jrdma.rsocket;

import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaServer;
import io.rsocket.Closeable;
import io.rsocket.transport.ServerTransport;
import java.net.InetSocketAddress;
import reactor.core.publisher.Mono;

/**
 * Serves RSocket over RDMA, for {@code RSocketServer.bind(transport)}:
 *
 * <pre>{@code
 * RSocketServer.create(acceptor).bind(RdmaServerTransport.create(RdmaServer.create().host("10.77.0.2").port(7878)))
 * }</pre>
 *
 * Each accepted {@link io.jrdma.reactive.RdmaConnection} becomes an {@link RdmaDuplexConnection}
 * handed to RSocket on the connection's loop thread ({@link RdmaServer#handle}). Immutable.
 */
public final class RdmaServerTransport implements ServerTransport<RdmaServerTransport.BoundServer> {
    private final RdmaServer server;
    private final long maxQueuedBytes;

    private RdmaServerTransport(RdmaServer server, long maxQueuedBytes) {
        this.server = server;
        this.maxQueuedBytes = maxQueuedBytes;
    }

    /**
     * A transport listening on {@code host:port} with {@link RdmaServer}'s defaults.
     *
     * @param host the address to bind (an RDMA device's IP)
     * @param port the port, 0 for one the system picks
     * @return the transport; nothing listens until {@link #start} is subscribed
     */
    public static RdmaServerTransport create(String host, int port) {
        return create(RdmaServer.create().host(host).port(port));
    }

    /**
     * A transport listening as {@code server} is configured (address, transport, queue depths, buffers).
     *
     * @param server the server's settings; its {@code handle} function is replaced by RSocket's
     * @return the transport; nothing listens until {@link #start} is subscribed
     */
    public static RdmaServerTransport create(RdmaServer server) {
        return new RdmaServerTransport(server, RdmaDuplexConnection.DEFAULT_MAX_QUEUED_BYTES);
    }

    /**
     * The bytes of outbound frames that may wait for a peer's receiver credits before its
     * connection closes with {@link SendQueueOverflowException}. Keep it at least
     * {@link #maxFrameLength()}: a longer frame never fits, and closes the connection.
     *
     * @param bytes from 1 (default {@link RdmaDuplexConnection#DEFAULT_MAX_QUEUED_BYTES})
     * @return a copy with that bound
     * @throws IllegalArgumentException when {@code bytes} is not positive
     */
    public RdmaServerTransport maxQueuedBytes(long bytes) {
        if (bytes < 1) throw new IllegalArgumentException("maxQueuedBytes must be positive");
        return new RdmaServerTransport(server, bytes);
    }

    /**
     * Binds when subscribed; every accepted connection goes to {@code acceptor} and lives until
     * RSocket or the peer closes it, or the server is disposed.
     *
     * @param acceptor RSocket's handling of a new connection
     * @return emits the listening server; fails as {@link RdmaServer#bind()} does
     */
    @Override
    public Mono<BoundServer> start(ConnectionAcceptor acceptor) {
        return server.handle(c -> {
            RdmaDuplexConnection duplex = new RdmaDuplexConnection(c, new RdmaAddress(c.toString()), maxQueuedBytes);
            return acceptor.apply(duplex).then(duplex.onClose());
        }).bind().map(BoundServer::new);
    }

    /**
     * {@return the longest frame, which RSocket sends unfragmented: the server's {@code maxMessageSize}
     * (default 16 MiB) capped at RSocket's 16 MiB - 1, since every jrdma peer of this version takes
     * frames above its receive buffers by rendezvous (large messages); its buffer size
     * ({@code buffers(size, count)}) with {@code receiverCredits(false)}, which turns them off.
     * The peer's own {@code maxMessageSize} is not known before it connects: configure both sides
     * alike, or a larger frame closes the connection ({@link FrameTooLargeException})}
     */
    @Override
    public int maxFrameLength() {
        return FrameLimits.configured(server.configuration());
    }

    /** A listening RSocket server over RDMA: its address and lifecycle. */
    public static final class BoundServer implements Closeable {
        private final DisposableRdmaServer server;

        BoundServer(DisposableRdmaServer server) {
            this.server = server;
        }

        /** {@return the address it listens on, with the port the system picked for port 0} */
        public InetSocketAddress address() {
            return server.address();
        }

        /** {@return the jrdma server underneath} */
        public DisposableRdmaServer server() {
            return server;
        }

        /** Stops listening and closes every connection, without waiting ({@link DisposableRdmaServer#dispose()}). */
        @Override
        public void dispose() {
            server.dispose();
        }

        @Override
        public boolean isDisposed() {
            return server.isDisposed();
        }

        /** {@return completes when the server and all its connections are closed} */
        @Override
        public Mono<Void> onClose() {
            return server.onDispose();
        }

        @Override
        public String toString() {
            return "RdmaServerTransport.BoundServer[" + server + "]";
        }
    }
}
