package io.jrdma.reactive;

import io.jrdma.ffm.Access;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * What clients and servers configure alike: where, over which setup path, with which
 * {@link ConnectionConfig} and on which {@link RdmaResources}. Immutable: every setter returns a
 * new instance of the concrete type.
 */
public abstract sealed class ConnectionSpec<T extends ConnectionSpec<T>> permits RdmaClient, RdmaServer {
    final String host;
    final int port;
    final Transport transport;
    final ConnectionConfig config;
    /** null: {@link RdmaResources#shared()}, looked up when used, so a spec does not start threads. */
    final RdmaResources resources;

    ConnectionSpec(String host, int port, Transport transport, ConnectionConfig config, RdmaResources resources) {
        this.host = host;
        this.port = port;
        this.transport = transport;
        this.config = config;
        this.resources = resources;
    }

    /** A copy with these common settings and this instance's own. */
    abstract T copy(String host, int port, Transport transport, ConnectionConfig config, RdmaResources resources);

    RdmaResources resources() {
        return resources == null ? RdmaResources.shared() : resources;
    }

    private T with(Consumer<ConnectionConfig.Draft> change) {
        return copy(host, port, transport, config.with(change), resources);
    }

    /** The server's address (client), or the address to listen on (server). */
    public T host(String host) {
        return copy(Objects.requireNonNull(host), port, transport, config, resources);
    }

    /** The rdma_cm or TCP port; a server given 0 picks a free one. */
    public T port(int port) {
        return copy(host, port, transport, config, resources);
    }

    public T transport(Transport transport) {
        return copy(host, port, Objects.requireNonNull(transport), config, resources);
    }

    /** The loops, setup threads and device domains to run on (default: {@link RdmaResources#shared()}). */
    public T resources(RdmaResources resources) {
        return copy(host, port, transport, config, Objects.requireNonNull(resources));
    }

    /** Send WRs in flight and receives kept posted. */
    public T queueDepth(int send, int receive) {
        return with(d -> {
            d.sendQueueDepth = send;
            d.receiveQueueDepth = receive;
            d.bufferCount = Math.max(d.bufferCount, send);
        });
    }

    /** Size and number of the copy pool's buffers (the largest message is one buffer; receive buffers have the same size). */
    public T buffers(int size, int count) {
        return with(d -> {
            d.bufferSize = size;
            d.bufferCount = count;
        });
    }

    /** How many scatter-gather elements one operation may list (default 4). */
    public T maxScatterGather(int elements) {
        return with(d -> d.maxScatterGather = elements);
    }

    /** How eagerly completions are polled; a loop polls as eagerly as the most eager of its connections asks. */
    public T pollingMode(PollingMode mode) {
        return with(d -> d.pollingMode = Objects.requireNonNull(mode));
    }

    /**
     * Exposes {@code bytes} of registered memory of the connection's own (one region per
     * connection; above 2 GiB is fine) to the peer with exactly {@code access}.
     */
    public T exposeBuffer(long bytes, Access first, Access... rest) {
        return with(d -> {
            d.exposedBufferSize = bytes;
            d.exposedAccess = EnumSet.of(first, rest);
        });
    }

    public T connectTimeout(Duration timeout) {
        return with(d -> d.connectTimeout = timeout);
    }

    /** The limit for each operation from subscription to completion (default 30 s): see {@link OperationTimeoutException}. */
    public T operationTimeout(Duration timeout) {
        return with(d -> d.operationTimeout = timeout);
    }

    /** For the TCP path: the device and port to use instead of the one owning the local address. */
    public T device(String name, int port) {
        return with(d -> {
            d.device = name;
            d.port = port;
        });
    }

    /** For the TCP path: the GID index to address the peer from, instead of the RoCE v2 GID of the local address. */
    public T gidIndex(int index) {
        return with(d -> d.gidIndex = index);
    }

    /**
     * The connection parameters C peers set in {@code struct rdma_conn_param}: RDMA READs/atomics
     * the peer may have outstanding here ({@code responder_resources}) and this side there
     * ({@code initiator_depth}), transport retries and RNR retries (7 = forever). Defaults 16, 16,
     * 7, 7. The TCP path programs the same values into the QP (max_dest_rd_atomic, max_rd_atomic,
     * retry_cnt, rnr_retry).
     */
    public T connectionParameters(int responderResources, int initiatorDepth, int retryCount, int rnrRetryCount) {
        return with(d -> {
            d.responderResources = responderResources;
            d.initiatorDepth = initiatorDepth;
            d.retryCount = retryCount;
            d.rnrRetryCount = rnrRetryCount;
        });
    }

    public T maxInlineData(int bytes) {
        return with(d -> d.maxInlineData = bytes);
    }

    public ConnectionConfig configuration() {
        return config;
    }
}
