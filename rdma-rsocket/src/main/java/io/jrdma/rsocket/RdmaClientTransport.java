package io.jrdma.rsocket;

import io.jrdma.reactive.RdmaClient;
import io.rsocket.DuplexConnection;
import io.rsocket.transport.ClientTransport;
import java.net.InetSocketAddress;
import java.util.Objects;
import reactor.core.publisher.Mono;

/**
 * Connects RSocket over RDMA, for {@code RSocketConnector.connect(transport)}:
 *
 * <pre>{@code
 * RSocketConnector.connectWith(RdmaClientTransport.create(RdmaClient.create().host("10.77.0.2").port(7878)))
 * }</pre>
 *
 * Every connection is one {@link io.jrdma.reactive.RdmaConnection} configured by the
 * {@link RdmaClient} (transport, queue depths, buffers): one RSocket frame per RDMA message, up to
 * {@link #maxFrameLength()} (16 MiB - 1 by default) without RSocket's fragmentation. Immutable.
 */
public final class RdmaClientTransport implements ClientTransport {
    private final RdmaClient client;
    private final InetSocketAddress server;
    private final long maxQueuedBytes;

    private RdmaClientTransport(RdmaClient client, InetSocketAddress server, long maxQueuedBytes) {
        this.client = client;
        this.server = server;
        this.maxQueuedBytes = maxQueuedBytes;
    }

    /**
     * A transport to {@code host:port} with {@link RdmaClient}'s defaults.
     *
     * @param host the server's IP address or host name (an RDMA device's)
     * @param port the server's port
     * @return the transport; nothing connects until {@link #connect()} is subscribed
     */
    public static RdmaClientTransport create(String host, int port) {
        return create(RdmaClient.create(), host, port);
    }

    /**
     * A transport whose connections {@code client} configures, to {@code host:port}.
     *
     * @param client the connection settings (local address, transport, queue depths, buffers)
     * @param host   the server's IP address or host name
     * @param port   the server's port
     * @return the transport; nothing connects until {@link #connect()} is subscribed
     */
    public static RdmaClientTransport create(RdmaClient client, String host, int port) {
        return new RdmaClientTransport(client.host(host).port(port), InetSocketAddress.createUnresolved(host, port),
                RdmaDuplexConnection.DEFAULT_MAX_QUEUED_BYTES);
    }

    /**
     * The bytes of outbound frames that may wait for the peer's receiver credits before a
     * connection closes with {@link SendQueueOverflowException}. Keep it at least
     * {@link #maxFrameLength()}: a longer frame never fits, and closes the connection.
     *
     * @param bytes from 1 (default {@link RdmaDuplexConnection#DEFAULT_MAX_QUEUED_BYTES})
     * @return a copy with that bound
     * @throws IllegalArgumentException when {@code bytes} is not positive
     */
    public RdmaClientTransport maxQueuedBytes(long bytes) {
        if (bytes < 1) throw new IllegalArgumentException("maxQueuedBytes must be positive");
        return new RdmaClientTransport(client, server, bytes);
    }

    /**
     * Connects once per subscription ({@link RdmaClient#connect()}).
     *
     * @return emits the connection, which RSocket owns; fails as {@link RdmaClient#connect()} does
     */
    @Override
    public Mono<DuplexConnection> connect() {
        return client.connect().map(c -> new RdmaDuplexConnection(c, server, maxQueuedBytes));
    }

    /**
     * {@return the longest frame, which RSocket sends unfragmented: the client's {@code maxMessageSize}
     * (default 16 MiB) capped at RSocket's 16 MiB - 1, since every jrdma peer of this version takes
     * frames above its receive buffers by rendezvous (large messages); its buffer size
     * ({@code buffers(size, count)}) with {@code receiverCredits(false)}, which turns them off.
     * The peer's own {@code maxMessageSize} is not known before it connects: configure both sides
     * alike, or a larger frame closes the connection ({@link FrameTooLargeException})}
     */
    @Override
    public int maxFrameLength() {
        return FrameLimits.configured(client.configuration());
    }

    @Override
    public String toString() {
        return "RdmaClientTransport[" + server + "]";
    }
}
