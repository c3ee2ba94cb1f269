package io.jrdma.reactive;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.RnrNakTimer;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The immutable settings a connection is built from. {@link RdmaClient} and {@link RdmaServer} set
 * them fluently ({@code queueDepth}, {@code buffers}, {@code exposeBuffer}, ...); a connection's
 * {@code config()} reads them back. There is no public constructor, so a new setting never
 * breaks a caller.
 */
public final class ConnectionConfig {
    private static final ConnectionConfig DEFAULTS = new Draft().build();

    private final int sendQueueDepth;
    private final int receiveQueueDepth;
    private final int bufferSize;
    private final int bufferCount;
    private final int maxScatterGather;
    private final PollingMode pollingMode;
    private final long exposedBufferSize;
    private final Set<Access> exposedAccess;
    private final Duration connectTimeout;
    private final Duration operationTimeout;
    private final int maxInlineData;
    private final @Nullable String device;
    private final int port;
    private final int gidIndex;
    private final int responderResources;
    private final int initiatorDepth;
    private final int retryCount;
    private final int rnrRetryCount;
    private final int ackTimeout;
    private final int minRnrTimer;
    private final boolean metrics;
    /** A Micrometer {@code MeterRegistry}, typed Object so that this class loads without Micrometer; null: the global one. */
    private final @Nullable Object meterRegistry;
    private final boolean wiretap;
    private final boolean receiverCredits;
    private final int maxMessageSize;
    private final int eagerMessageSize;

    private ConnectionConfig(Draft d) {
        if (d.sendQueueDepth < 1 || d.receiveQueueDepth < 1) throw new IllegalArgumentException("queue depths must be positive");
        if (d.receiveQueueDepth > 0xFFFF) {
            throw new IllegalArgumentException("receive queue depth " + d.receiveQueueDepth
                    + " exceeds 65535, the connection descriptor's limit");
        }
        if (d.bufferSize < 8) throw new IllegalArgumentException("buffers need at least 8 bytes (atomics)");
        if (d.bufferCount < 1) throw new IllegalArgumentException("bufferCount must be positive");
        if (d.maxScatterGather < 1) throw new IllegalArgumentException("a work request needs at least one scatter-gather element");
        Objects.requireNonNull(d.pollingMode, "pollingMode");
        if (d.exposedBufferSize < 0) throw new IllegalArgumentException("exposed buffer size must not be negative");
        if (!d.connectTimeout.isPositive() || !d.operationTimeout.isPositive()) throw new IllegalArgumentException("timeouts must be positive");
        if (d.maxInlineData < 0) throw new IllegalArgumentException("maxInlineData must not be negative");
        if (d.port < 1) throw new IllegalArgumentException("device ports are numbered from 1");
        if (d.gidIndex < -1) throw new IllegalArgumentException("gidIndex must be -1 (by local address) or a GID table index");
        if (d.responderResources < 0 || d.responderResources > 255 || d.initiatorDepth < 0 || d.initiatorDepth > 255) {
            throw new IllegalArgumentException("responder resources and initiator depth are 0-255 (u8 in rdma_conn_param)");
        }
        if (d.retryCount < 0 || d.retryCount > 7 || d.rnrRetryCount < 0 || d.rnrRetryCount > 7) {
            throw new IllegalArgumentException("retry and RNR retry counts are 0-7 (7: RNR retries forever)");
        }
        if (d.ackTimeout != -1 && (d.ackTimeout < 1 || d.ackTimeout > 31)) {
            throw new IllegalArgumentException("the ACK timeout is 4.096 us x 2^n with n from 1 to 31 (about 8 us to 2.4 hours)");
        }
        if (d.minRnrTimer != -1) RnrNakTimer.delay(d.minRnrTimer);
        if (d.maxMessageSize < 1) throw new IllegalArgumentException("maxMessageSize must be positive");
        if (d.eagerMessageSize < 1) throw new IllegalArgumentException("eagerMessageSize must be positive");
        this.sendQueueDepth = d.sendQueueDepth;
        this.receiveQueueDepth = d.receiveQueueDepth;
        this.bufferSize = d.bufferSize;
        this.bufferCount = d.bufferCount;
        this.maxScatterGather = d.maxScatterGather;
        this.pollingMode = d.pollingMode;
        this.exposedBufferSize = d.exposedBufferSize;
        this.exposedAccess = d.exposedAccess.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(d.exposedAccess);
        this.connectTimeout = d.connectTimeout;
        this.operationTimeout = d.operationTimeout;
        this.maxInlineData = d.maxInlineData;
        this.device = d.device;
        this.metrics = d.metrics;
        this.meterRegistry = d.metrics ? d.meterRegistry : null;
        this.wiretap = d.wiretap;
        this.port = d.port;
        this.gidIndex = d.gidIndex;
        this.responderResources = d.responderResources;
        this.initiatorDepth = d.initiatorDepth;
        this.retryCount = d.retryCount;
        this.rnrRetryCount = d.rnrRetryCount;
        this.ackTimeout = d.ackTimeout;
        this.minRnrTimer = d.minRnrTimer;
        this.receiverCredits = d.receiverCredits;
        this.maxMessageSize = d.maxMessageSize;
        this.eagerMessageSize = d.eagerMessageSize;
    }

    /**
     * 64 send credits, 64 posted receives, 4 KiB buffers, ADAPTIVE polling, 10 s to connect, 30 s per operation.
     *
     * @return the defaults, also 64 pooled buffers, 4 scatter-gather elements, 64 bytes inline, port 1,
     *         16 READs/atomics each way and 7 (RNR) retries
     */
    public static ConnectionConfig defaults() {
        return DEFAULTS;
    }

    /** {@return the send WRs in flight at most: the credits posts wait for} */
    public int sendQueueDepth() {
        return sendQueueDepth;
    }

    /**
     * {@return the receive buffers kept posted: how many messages a peer may send ahead (with a
     * server's SRQ: its credit, see {@link RdmaServer#sharedReceiveQueue})}
     */
    public int receiveQueueDepth() {
        return receiveQueueDepth;
    }

    /** {@return the size in bytes of each pooled send and receive buffer: the largest message} */
    public int bufferSize() {
        return bufferSize;
    }

    /**
     * {@return the buffers of the connection's copy pool (registered on first use; each copying
     * operation holds one while in flight)}
     */
    public int bufferCount() {
        return bufferCount;
    }

    /** {@return the scatter-gather elements one send WR may list} */
    public int maxScatterGather() {
        return maxScatterGather;
    }

    /** {@return how eagerly the connection's loop polls (a loop polls as eagerly as its most eager connection asks)} */
    public PollingMode pollingMode() {
        return pollingMode;
    }

    /** {@return the bytes of memory this side exposes of its own for the peer's READ/WRITE/atomics (0 = none)} */
    public long exposedBufferSize() {
        return exposedBufferSize;
    }

    /** {@return a copy of what the peer may do with the exposed memory (least privilege: only what is listed)} */
    public Set<Access> exposedAccess() {
        return exposedAccess.isEmpty() ? EnumSet.noneOf(Access.class) : EnumSet.copyOf(exposedAccess);
    }

    /** {@return the limit for connection setup} */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** {@return the limit for each operation, from subscription to completion} */
    public Duration operationTimeout() {
        return operationTimeout;
    }

    /** {@return the size in bytes up to which sends and writes go inline (if the device grants it)} */
    public int maxInlineData() {
        return maxInlineData;
    }

    /** {@return the TCP path's RDMA device, or null for the one owning the local address} */
    public @Nullable String device() {
        return device;
    }

    /** {@return the device's port number (from 1)} */
    public int port() {
        return port;
    }

    /** {@return the TCP path's GID index, or -1 for the RoCE v2 GID of the local address} */
    public int gidIndex() {
        return gidIndex;
    }

    /**
     * {@return the RDMA READs and atomics the peer may have outstanding at this side
     * (rdma_conn_param's responder_resources; max_dest_rd_atomic), 0 to 255}
     */
    public int responderResources() {
        return responderResources;
    }

    /** {@return the RDMA READs and atomics this side may have outstanding at the peer (initiator_depth; max_rd_atomic), 0 to 255} */
    public int initiatorDepth() {
        return initiatorDepth;
    }

    /** {@return the transport retries before a send fails with retry exceeded (retry_count, 0-7)} */
    public int retryCount() {
        return retryCount;
    }

    /** {@return the retries after an RNR NAK (rnr_retry_count, 0-7; 7 retries forever)} */
    public int rnrRetryCount() {
        return rnrRetryCount;
    }

    /**
     * {@return how long the NIC waits for an acknowledgement before it retransmits (the QP's local
     * ACK timeout, 4.096 µs × 2^n), or null for the setup path's own: rdma_cm's, derived from the
     * path, and 4.096 µs × 2^14 ≈ 67 ms on the TCP path}
     */
    public @Nullable Duration ackTimeout() {
        return ackTimeout < 0 ? null : Duration.ofNanos(4096L << ackTimeout);
    }

    /** {@return the exponent n of the ACK timeout 4.096 µs × 2^n ({@code ibv_qp_attr.timeout}), or -1 for the setup path's own} */
    public int ackTimeoutExponent() {
        return ackTimeout;
    }

    /**
     * {@return how long a peer whose SEND (or WRITE with immediate) finds no receive posted on this
     * side is asked to wait before it retries (the QP's RNR NAK delay, {@code min_rnr_timer}), or
     * null for the default: 0.64 ms, except on a server's {@linkplain RdmaServer#sharedReceiveQueue
     * shared receive queue} over rdma_cm, which keeps rdma_cm's 655.36 ms}
     */
    public @Nullable Duration minRnrTimer() {
        return minRnrTimer < 0 ? null : RnrNakTimer.delay(minRnrTimer);
    }

    /** {@return the RNR NAK delay's code ({@link RnrNakTimer}), or -1 for the default, see {@link #minRnrTimer()}} */
    public int minRnrTimerCode() {
        return minRnrTimer;
    }

    /**
     * {@return whether this side offers receiver credits to a jrdma peer (default true): a message
     * is then posted only when the peer has a receive for it (docs/credit-protocol.md)}
     */
    public boolean receiverCredits() {
        return receiverCredits;
    }

    /**
     * {@return the largest message this side accepts from a jrdma peer (default 16 MiB): a larger
     * one fails the peer's send with {@link MessageTooLargeException}, and the connection goes on
     * (docs/credit-protocol.md, "Large messages")}
     */
    public int maxMessageSize() {
        return maxMessageSize;
    }

    /**
     * {@return the largest message a stream sends eagerly, as one SEND, when the peer takes large
     * messages (default: unlimited, that is up to the peer's receive buffer size); larger ones go by
     * rendezvous: the peer reads them by RDMA READ}
     */
    public int eagerMessageSize() {
        return eagerMessageSize;
    }

    /** {@return whether connections, operations, bytes, latencies, errors and loop activity are recorded to Micrometer} */
    public boolean metrics() {
        return metrics;
    }

    /**
     * {@return the Micrometer {@code MeterRegistry} metrics are recorded to, as given to
     * {@code metrics(true, registry)}, or null for Micrometer's global registry (and when metrics
     * are off)} Typed {@code Object} so that this class loads without Micrometer, an optional dependency.
     */
    public @Nullable Object meterRegistry() {
        return meterRegistry;
    }

    /** {@return whether every work request and completion is logged (logger {@code io.jrdma.reactive.wiretap}, DEBUG)} */
    public boolean wiretap() {
        return wiretap;
    }

    /**
     * What the peer may do to this side's QP: the remote access of what is exposed ({@code shared}: a server's shared region).
     *
     * @param shared whether a server's shared region is exposed on the connection
     * @return the remote flags of {@link #exposedAccess()} when memory is exposed, else no access at all
     */
    public Set<Access> qpAccess(boolean shared) {
        Set<Access> access = exposedBufferSize > 0 || shared ? exposedAccess() : EnumSet.noneOf(Access.class);
        access.remove(Access.LOCAL_WRITE);  // not the peer's to use: memory registered only for this side (RPC staging) grants it
        return access;
    }

    /** A copy with {@code change} applied to a mutable draft of this configuration. */
    ConnectionConfig with(Consumer<Draft> change) {
        Draft d = new Draft(this);
        change.accept(d);
        return d.build();
    }

    @Override
    public boolean equals(@Nullable Object o) {
        return o instanceof ConnectionConfig c && sendQueueDepth == c.sendQueueDepth && receiveQueueDepth == c.receiveQueueDepth
                && bufferSize == c.bufferSize && bufferCount == c.bufferCount && maxScatterGather == c.maxScatterGather
                && pollingMode == c.pollingMode && exposedBufferSize == c.exposedBufferSize && exposedAccess.equals(c.exposedAccess)
                && connectTimeout.equals(c.connectTimeout) && operationTimeout.equals(c.operationTimeout)
                && maxInlineData == c.maxInlineData && Objects.equals(device, c.device) && port == c.port && gidIndex == c.gidIndex
                && responderResources == c.responderResources && initiatorDepth == c.initiatorDepth && retryCount == c.retryCount
                && rnrRetryCount == c.rnrRetryCount && ackTimeout == c.ackTimeout && minRnrTimer == c.minRnrTimer && metrics == c.metrics && meterRegistry == c.meterRegistry && wiretap == c.wiretap
                && receiverCredits == c.receiverCredits && maxMessageSize == c.maxMessageSize && eagerMessageSize == c.eagerMessageSize;
    }

    @Override
    public int hashCode() {
        return Objects.hash(sendQueueDepth, receiveQueueDepth, bufferSize, bufferCount, pollingMode, exposedBufferSize, device, port);
    }

    @Override
    public String toString() {
        return "ConnectionConfig[send " + sendQueueDepth + ", receive " + receiveQueueDepth + ", buffers " + bufferCount + " x "
                + bufferSize + ", sge " + maxScatterGather + ", " + pollingMode + ", exposed " + exposedBufferSize + " " + exposedAccess
                + ", connect " + connectTimeout + ", operation " + operationTimeout + ", inline " + maxInlineData
                + (device == null ? "" : ", device " + device + " port " + port) + (gidIndex < 0 ? "" : ", GID " + gidIndex)
                + ", reads " + responderResources + "/" + initiatorDepth + ", retry " + retryCount + "/" + rnrRetryCount
                + (ackTimeout < 0 ? "" : ", ACK timeout 2^" + ackTimeout + " x 4.096 us")
                + (minRnrTimer < 0 ? "" : ", RNR NAK delay " + RnrNakTimer.delay(minRnrTimer))
                + (metrics ? meterRegistry == null ? ", metrics" : ", metrics to " + meterRegistry.getClass().getSimpleName() : "") + (wiretap ? ", wiretap" : "") + (receiverCredits ? "" : ", no receiver credits")
                + ", messages up to " + maxMessageSize + (eagerMessageSize == Integer.MAX_VALUE ? "" : ", eager up to " + eagerMessageSize) + "]";
    }

    /** The fields of a configuration under change; building validates them. */
    static final class Draft {
        int sendQueueDepth = 64, receiveQueueDepth = 64, bufferSize = 4096, bufferCount = 64, maxScatterGather = 4;
        int maxInlineData = 64, port = 1, gidIndex = -1;
        int responderResources = 16, initiatorDepth = 16, retryCount = 7, rnrRetryCount = 7, ackTimeout = -1, minRnrTimer = -1;
        PollingMode pollingMode = PollingMode.ADAPTIVE;
        long exposedBufferSize;
        Set<Access> exposedAccess = EnumSet.noneOf(Access.class);
        Duration connectTimeout = Duration.ofSeconds(10), operationTimeout = Duration.ofSeconds(30);
        @Nullable String device;
        boolean metrics, wiretap;
        @Nullable Object meterRegistry;
        boolean receiverCredits = true;
        int maxMessageSize = 16 << 20, eagerMessageSize = Integer.MAX_VALUE;

        private Draft() {}

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
            responderResources = c.responderResources;
            initiatorDepth = c.initiatorDepth;
            retryCount = c.retryCount;
            rnrRetryCount = c.rnrRetryCount;
            ackTimeout = c.ackTimeout;
            minRnrTimer = c.minRnrTimer;
            metrics = c.metrics;
            meterRegistry = c.meterRegistry;
            wiretap = c.wiretap;
            receiverCredits = c.receiverCredits;
            maxMessageSize = c.maxMessageSize;
            eagerMessageSize = c.eagerMessageSize;
        }

        private ConnectionConfig build() {
            return new ConnectionConfig(this);
        }
    }
}
