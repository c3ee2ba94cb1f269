package io.jrdma.reactive;

import io.jrdma.ffm.Access;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Set;

/**
 * The immutable settings a connection is built from; {@link RdmaClient} and {@link RdmaServer}
 * expose them fluently.
 *
 * @param sendQueueDepth    send WRs in flight at most: the credits posts wait for
 * @param receiveQueueDepth receive buffers kept posted: how many messages a peer may send ahead
 * @param bufferSize        size of each pooled send and receive buffer (the largest message)
 * @param exposedBufferSize bytes of memory this side exposes for the peer's READ/WRITE/atomics (0 = none)
 * @param exposedAccess     what the peer may do with it (least privilege: only what is listed)
 */
public record ConnectionConfig(int sendQueueDepth, int receiveQueueDepth, int bufferSize, int bufferCount,
                               PollingMode pollingMode, long exposedBufferSize, Set<Access> exposedAccess,
                               Duration connectTimeout, int maxInlineData, String device, int port) {
    public ConnectionConfig {
        if (sendQueueDepth < 1 || receiveQueueDepth < 1) throw new IllegalArgumentException("queue depths must be positive");
        if (receiveQueueDepth > 0xFFFF) {
            throw new IllegalArgumentException("receive queue depth " + receiveQueueDepth + " exceeds 65535, the connection descriptor's limit");
        }
        if (bufferSize < 8) throw new IllegalArgumentException("buffers need at least 8 bytes (atomics)");
        if (bufferCount < 1) throw new IllegalArgumentException("bufferCount must be positive");
        exposedAccess = exposedAccess.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(exposedAccess);
    }

    public static ConnectionConfig defaults() {
        return new ConnectionConfig(64, 64, 4096, 64, PollingMode.ADAPTIVE, 0,
                EnumSet.noneOf(Access.class), Duration.ofSeconds(10), 64, null, 1);
    }

    @Override
    public Set<Access> exposedAccess() {
        return EnumSet.copyOf(exposedAccess.isEmpty() ? EnumSet.noneOf(Access.class) : exposedAccess);
    }

    ConnectionConfig with(int sendDepth, int recvDepth, int bufSize, int bufCount) {
        return new ConnectionConfig(sendDepth, recvDepth, bufSize, bufCount, pollingMode, exposedBufferSize, exposedAccess,
                connectTimeout, maxInlineData, device, port);
    }

    ConnectionConfig with(PollingMode mode) {
        return new ConnectionConfig(sendQueueDepth, receiveQueueDepth, bufferSize, bufferCount, mode, exposedBufferSize,
                exposedAccess, connectTimeout, maxInlineData, device, port);
    }

    ConnectionConfig withExposed(long size, Set<Access> access) {
        return new ConnectionConfig(sendQueueDepth, receiveQueueDepth, bufferSize, bufferCount, pollingMode, size, access,
                connectTimeout, maxInlineData, device, port);
    }

    ConnectionConfig withConnectTimeout(Duration timeout) {
        return new ConnectionConfig(sendQueueDepth, receiveQueueDepth, bufferSize, bufferCount, pollingMode,
                exposedBufferSize, exposedAccess, timeout, maxInlineData, device, port);
    }

    ConnectionConfig withDevice(String deviceName, int devicePort) {
        return new ConnectionConfig(sendQueueDepth, receiveQueueDepth, bufferSize, bufferCount, pollingMode,
                exposedBufferSize, exposedAccess, connectTimeout, maxInlineData, deviceName, devicePort);
    }

    ConnectionConfig withMaxInline(int bytes) {
        return new ConnectionConfig(sendQueueDepth, receiveQueueDepth, bufferSize, bufferCount, pollingMode,
                exposedBufferSize, exposedAccess, connectTimeout, bytes, device, port);
    }

    Set<Access> qpAccess() {
        return exposedBufferSize > 0 ? exposedAccess() : EnumSet.noneOf(Access.class);
    }
}
