package io.jrdma.reactive;

import io.jrdma.ffm.Access;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The immutable settings a connection is built from; {@link RdmaClient} and {@link RdmaServer}
 * expose them fluently.
 *
 * @param sendQueueDepth    send WRs in flight at most: the credits posts wait for
 * @param receiveQueueDepth receive buffers kept posted: how many messages a peer may send ahead
 * @param bufferSize        size of each pooled send and receive buffer (the largest message)
 * @param bufferCount       pooled send buffers (copying operations take one each while in flight)
 * @param maxScatterGather  SGEs one send WR may list (scatter-gather operations)
 * @param exposedBufferSize bytes of memory this side exposes for the peer's READ/WRITE/atomics (0 = none)
 * @param exposedAccess     what the peer may do with it (least privilege: only what is listed)
 * @param connectTimeout    the limit for connection setup
 * @param operationTimeout  the limit for each operation, from subscription to completion
 * @param device            the TCP path's RDMA device, or null for the one owning the local address
 * @param port              the device's port number (from 1)
 * @param gidIndex          the TCP path's GID index, or -1 for the RoCE v2 GID of the local address
 */
public record ConnectionConfig(int sendQueueDepth, int receiveQueueDepth, int bufferSize, int bufferCount,
                               int maxScatterGather, PollingMode pollingMode, long exposedBufferSize,
                               Set<Access> exposedAccess, Duration connectTimeout, Duration operationTimeout,
                               int maxInlineData, String device, int port, int gidIndex) {
    public ConnectionConfig {
        if (sendQueueDepth < 1 || receiveQueueDepth < 1) throw new IllegalArgumentException("queue depths must be positive");
        if (receiveQueueDepth > 0xFFFF) {
            throw new IllegalArgumentException("receive queue depth " + receiveQueueDepth + " exceeds 65535, the connection descriptor's limit");
        }
        if (bufferSize < 8) throw new IllegalArgumentException("buffers need at least 8 bytes (atomics)");
        if (bufferCount < 1) throw new IllegalArgumentException("bufferCount must be positive");
        if (maxScatterGather < 1) throw new IllegalArgumentException("a work request needs at least one scatter-gather element");
        Objects.requireNonNull(pollingMode, "pollingMode");
        if (!connectTimeout.isPositive() || !operationTimeout.isPositive()) throw new IllegalArgumentException("timeouts must be positive");
        if (maxInlineData < 0) throw new IllegalArgumentException("maxInlineData must not be negative");
        if (port < 1) throw new IllegalArgumentException("device ports are numbered from 1");
        if (gidIndex < -1) throw new IllegalArgumentException("gidIndex must be -1 (by local address) or a GID table index");
        exposedAccess = exposedAccess.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(exposedAccess);
    }

    public static ConnectionConfig defaults() {
        return new ConnectionConfig(64, 64, 4096, 64, 4, PollingMode.ADAPTIVE, 0, EnumSet.noneOf(Access.class),
                Duration.ofSeconds(10), Duration.ofSeconds(30), 64, null, 1, -1);
    }

    @Override
    public Set<Access> exposedAccess() {
        return exposedAccess.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(exposedAccess);
    }

    Set<Access> qpAccess() {
        return exposedBufferSize > 0 ? exposedAccess() : EnumSet.noneOf(Access.class);
    }

    /** A copy with {@code change} applied to a mutable draft of this configuration. */
    ConnectionConfig with(Consumer<Draft> change) {
        Draft d = new Draft(this);
        change.accept(d);
        return d.build();
    }

    /** The fields of a configuration under change; the record's constructor validates the result. */
    static final class Draft {
        int sendQueueDepth, receiveQueueDepth, bufferSize, bufferCount, maxScatterGather, maxInlineData, port, gidIndex;
        PollingMode pollingMode;
        long exposedBufferSize;
        Set<Access> exposedAccess;
        Duration connectTimeout, operationTimeout;
        String device;

        private Draft(ConnectionConfig c) {
            sendQueueDepth = c.sendQueueDepth;
            receiveQueueDepth = c.receiveQueueDepth;
            bufferSize = c.bufferSize;
            bufferCount = c.bufferCount;
            maxScatterGather = c.maxScatterGather;
            pollingMode = c.pollingMode;
            exposedBufferSize = c.exposedBufferSize;
            exposedAccess = c.exposedAccess;
            connectTimeout = c.connectTimeout;
            operationTimeout = c.operationTimeout;
            maxInlineData = c.maxInlineData;
            device = c.device;
            port = c.port;
            gidIndex = c.gidIndex;
        }

        private ConnectionConfig build() {
            return new ConnectionConfig(sendQueueDepth, receiveQueueDepth, bufferSize, bufferCount, maxScatterGather,
                    pollingMode, exposedBufferSize, exposedAccess, connectTimeout, operationTimeout, maxInlineData, device,
                    port, gidIndex);
        }
    }
}
