package io.jrdma.reactive;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.RnrNakTimer;
import io.jrdma.reactive.internal.observe.Metering;
import java.time.Duration;
import java.util.EnumSet;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * What clients and servers configure alike: where, over which setup path, with which
 * {@link ConnectionConfig} and on which {@link RdmaResources}. Immutable: every setter returns a
 * new instance of the concrete type. Settings are validated as they are set: an out-of-range
 * value fails the setter with {@link IllegalArgumentException}.
 *
 * @param <T> the concrete type, {@link RdmaClient} or {@link RdmaServer}, which every setter returns
 */
public abstract sealed class ConnectionSpec<T extends ConnectionSpec<T>> permits RdmaClient, RdmaServer {
    final String host;
    final int port;
    final Transport transport;
    final ConnectionConfig config;
    /** null: {@link RdmaResources#shared()}, looked up when used, so a spec does not start threads. */
    final RdmaResources resources;
    final Lifecycle lifecycle;

    ConnectionSpec(String host, int port, Transport transport, ConnectionConfig config, RdmaResources resources, Lifecycle lifecycle) {
        this.host = host;
        this.port = port;
        this.transport = transport;
        this.config = config;
        this.resources = resources;
        this.lifecycle = lifecycle;
    }

    /** A copy with these common settings and this instance's own. */
    abstract T copy(String host, int port, Transport transport, ConnectionConfig config, RdmaResources resources, Lifecycle lifecycle);

    RdmaResources resources() {
        return resources == null ? RdmaResources.shared() : resources;
    }

    private T with(Consumer<ConnectionConfig.Draft> change) {
        return copy(host, port, transport, config.with(change), resources, lifecycle);
    }

    /**
     * The server's address (client), or the address to listen on (server).
     *
     * @param host a host name or IP address; a client's default is {@code 127.0.0.1}, a server's {@code 0.0.0.0}
     * @return a copy with that host
     */
    public T host(String host) {
        return copy(Objects.requireNonNull(host), port, transport, config, resources, lifecycle);
    }

    /**
     * The rdma_cm or TCP port; a server given 0 picks a free one.
     *
     * @param port the port (default 7471)
     * @return a copy with that port
     */
    public T port(int port) {
        return copy(host, port, transport, config, resources, lifecycle);
    }

    /**
     * How the two sides set up their queue pairs; both must use the same.
     *
     * @param transport {@link Transport#RDMA_CM} (the default) or {@link Transport#TCP}
     * @return a copy with that transport
     */
    public T transport(Transport transport) {
        return copy(host, port, Objects.requireNonNull(transport), config, resources, lifecycle);
    }

    /**
     * The loops, setup threads and device domains to run on (default: {@link RdmaResources#shared()}),
     * as Reactor Netty's {@code runOn(LoopResources)}.
     *
     * @param resources the resources; the caller keeps owning them (disposing them closes this spec's connections)
     * @return a copy on those resources
     */
    public T runOn(RdmaResources resources) {
        return copy(host, port, transport, config, Objects.requireNonNull(resources), lifecycle);
    }

    /**
     * The former name of {@link #runOn(RdmaResources)}, kept for code written against it.
     *
     * @param resources the resources
     * @return a copy on those resources
     * @deprecated use {@link #runOn(RdmaResources)}, Reactor Netty's name
     */
    @Deprecated
    public T resources(RdmaResources resources) {
        return runOn(resources);
    }

    /**
     * Runs {@code callback} for every connection once it is set up, before the application has
     * it (the client's subscriber, the server's taker or handler), on the thread that established
     * it: it must not block. If it throws, the connection is closed instead: a client's
     * {@code connect()} fails with the error, a server logs it and serves the next. Set again,
     * the callbacks run in the order they were set. As Reactor Netty's {@code doOnConnected}.
     *
     * @param callback what to do with each new connection
     * @return a copy with the callback
     */
    public T doOnConnected(Consumer<? super RdmaConnection> callback) {
        return copy(host, port, transport, config, resources, lifecycle.withConnected(Objects.requireNonNull(callback)));
    }

    /**
     * Runs {@code callback} once for every connection that reached {@link #doOnConnected}'s
     * point (also one a {@code doOnConnected} callback threw for), when it is disposed, however it
     * ended (closed by either side, failed, its resources disposed). A connection that ends during
     * set-up reaches neither. What it throws is logged. As Reactor Netty's {@code doOnDisconnected}.
     *
     * @param callback what to do when a connection is gone
     * @return a copy with the callback
     */
    public T doOnDisconnected(Consumer<? super RdmaConnection> callback) {
        return copy(host, port, transport, config, resources, lifecycle.withDisconnected(Objects.requireNonNull(callback)));
    }

    /**
     * Send WRs in flight and receives kept posted. The copy pool grows to at least {@code send}
     * buffers, so every send credit can have one.
     *
     * @param send    send WRs in flight at most (default 64)
     * @param receive receives kept posted: messages the peer may send ahead, at most 65535 (default 64)
     * @return a copy with those depths
     */
    public T queueDepth(int send, int receive) {
        return with(d -> {
            d.sendQueueDepth = send;
            d.receiveQueueDepth = receive;
            d.bufferCount = Math.max(d.bufferCount, send);
        });
    }

    /**
     * Size and number of the copy pool's buffers (the largest message is one buffer; receive buffers have the same size).
     *
     * @param size  bytes per buffer, at least 8 (default 4096)
     * @param count buffers, at least 1 (default 64)
     * @return a copy with those buffers
     */
    public T buffers(int size, int count) {
        return with(d -> {
            d.bufferSize = size;
            d.bufferCount = count;
        });
    }

    /**
     * How many scatter-gather elements one operation may list (default 4).
     *
     * @param elements at least 1; the device's max_sge bounds it
     * @return a copy with that limit
     */
    public T maxScatterGather(int elements) {
        return with(d -> d.maxScatterGather = elements);
    }

    /**
     * How eagerly completions are polled; a loop polls as eagerly as the most eager of its connections asks.
     *
     * @param mode the polling mode (default {@link PollingMode#ADAPTIVE})
     * @return a copy with that mode
     */
    public T pollingMode(PollingMode mode) {
        return with(d -> d.pollingMode = Objects.requireNonNull(mode));
    }

    /**
     * Exposes {@code bytes} of registered memory of the connection's own (one region per
     * connection; above 2 GiB is fine) to the peer with exactly {@code access}.
     *
     * @param bytes the size of the region; 0 exposes nothing (the default)
     * @param first an access the peer gets, e.g. {@link Access#REMOTE_WRITE}
     * @param rest  more access
     * @return a copy that exposes that memory
     */
    public T exposeBuffer(long bytes, Access first, Access... rest) {
        return with(d -> {
            d.exposedBufferSize = bytes;
            d.exposedAccess = EnumSet.of(first, rest);
        });
    }

    /**
     * The limit for connection setup: address and route resolution, connect and accept, or the
     * TCP exchange.
     *
     * @param timeout positive (default 10 s)
     * @return a copy with that limit
     */
    public T connectTimeout(Duration timeout) {
        return with(d -> d.connectTimeout = timeout);
    }

    /**
     * The limit for each operation from subscription to completion (default 30 s): see {@link OperationTimeoutException}.
     *
     * @param timeout positive
     * @return a copy with that limit
     */
    public T operationTimeout(Duration timeout) {
        return with(d -> d.operationTimeout = timeout);
    }

    /**
     * For the TCP path: the device and port to use instead of the one owning the local address.
     *
     * @param name the device, e.g. {@code mlx5_0}
     * @param port its port, from 1
     * @return a copy with that device
     */
    public T device(String name, int port) {
        return with(d -> {
            d.device = name;
            d.port = port;
        });
    }

    /**
     * For the TCP path: the GID index to address the peer from, instead of the RoCE v2 GID of the local address.
     *
     * @param index a GID table index of the port, or -1 for the RoCE v2 GID of the local address (the default)
     * @return a copy with that GID index
     */
    public T gidIndex(int index) {
        return with(d -> d.gidIndex = index);
    }

    /**
     * The connection parameters C peers set in {@code struct rdma_conn_param}: RDMA READs/atomics
     * the peer may have outstanding here ({@code responder_resources}) and this side there
     * ({@code initiator_depth}), transport retries and RNR retries (7 = forever). Defaults 16, 16,
     * 7, 7. The TCP path programs the same values into the QP (max_dest_rd_atomic, max_rd_atomic,
     * retry_cnt, rnr_retry).
     *
     * @param responderResources RDMA READs/atomics the peer may have outstanding here, 0 to 255
     * @param initiatorDepth     RDMA READs/atomics this side may have outstanding at the peer, 0 to 255
     * @param retryCount         transport retries, 0 to 7
     * @param rnrRetryCount      RNR retries, 0 to 7 (7 = forever)
     * @return a copy with those parameters
     */
    public T connectionParameters(int responderResources, int initiatorDepth, int retryCount, int rnrRetryCount) {
        return with(d -> {
            d.responderResources = responderResources;
            d.initiatorDepth = initiatorDepth;
            d.retryCount = retryCount;
            d.rnrRetryCount = rnrRetryCount;
        });
    }

    /**
     * How long the NIC waits for an acknowledgement before it retransmits: the QP's local ACK
     * timeout, 4.096 µs × 2^n, rounded up to the next such value. A peer that stops answering
     * (gone, or the path to it broken) fails operations with
     * {@link RdmaOperationException.RetryExceededException} after about (retry count + 1) × this
     * ({@link #connectionParameters}); whatever it is, each operation still ends within
     * {@link #operationTimeout}. Default: the setup path's own: rdma_cm's, which it derives from
     * the path (RoCE on Linux 6.1: n = 19, about 2.1 s), and about 67 ms (n = 14) on the TCP path.
     *
     * @param timeout from 8.192 µs to about 2.4 hours
     * @return a copy with that ACK timeout
     */
    public T ackTimeout(Duration timeout) {
        long ns = timeout.toNanos();
        int n = 1;
        while (n < 31 && (4096L << n) < ns) n++;
        if ((4096L << n) < ns || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("the ACK timeout is 4.096 us x 2^n with n from 1 to 31 (about 8 us to 2.4 hours), not " + timeout);
        }
        int exponent = n;
        return with(d -> d.ackTimeout = exponent);
    }

    /**
     * How long a peer whose SEND (or WRITE with immediate) finds no receive posted on this side is
     * asked to wait before it retries: the QP's RNR NAK delay ({@code min_rnr_timer}), rounded up
     * to the next value the verbs can say ({@link RnrNakTimer}, 10 µs to 655.36 ms).
     * It matters when a receiver falls behind, for instance a subscriber that requests no more
     * messages: the peer's SENDs wait (with {@link #connectionParameters} RNR retries at 7, forever)
     * and go on this long after a receive is posted again. Default: 0.64 ms, perftest's, on every
     * setup path; over rdma_cm, which programs 655.36 ms, it is changed once the QP is in RTS. A
     * server's {@linkplain RdmaServer#sharedReceiveQueue shared receive queue} over rdma_cm keeps
     * rdma_cm's 655.36 ms, unless this is set, for clients without {@linkplain #receiverCredits
     * receiver credits} (C peers, raw connections): with many senders, short retries into a shared
     * queue that ran dry flood the receiving device with RNR NAKs while the queue grows (measured on
     * SoftRoCE: 64 clients, 274 NAKs for 128 messages and a SEND stalled beyond 30 s). A client
     * with credits never meets an empty queue, so its connection gets the 0.64 ms.
     *
     * @param delay from 10 µs to 655.36 ms
     * @return a copy with that delay
     */
    public T minRnrTimer(Duration delay) {
        int code = RnrNakTimer.code(delay);
        return with(d -> d.minRnrTimer = code);
    }

    /**
     * Whether this side offers receiver credits to a jrdma peer (default true). With credits on
     * both sides, a message (SEND, SEND_WITH_IMM, WRITE_WITH_IMM) is posted only when the peer has
     * a receive posted for it, so a slow consumer slows its producer instead of meeting it with RNR
     * NAKs; each side posts two receives more than its depth, for the peer's credit grants
     * (docs/credit-protocol.md). Off, a connection behaves as RDMA does between C programs: a
     * message that finds no receive is NAKed and retried ({@link #minRnrTimer}). Connections to C
     * peers and raw connections never use credits.
     *
     * @param enabled false to leave them off
     * @return a copy with that choice
     */
    public T receiverCredits(boolean enabled) {
        return with(d -> d.receiverCredits = enabled);
    }

    /**
     * The largest message this side accepts from a jrdma peer (default 16 MiB). A message larger
     * than the receive buffers travels by rendezvous: the peer SENDs where it is, and this side
     * reads it by RDMA READ into registered memory of its own, allocated when it arrives (kept in
     * a small cache per size, so steady traffic registers nothing). A message above this limit
     * fails the peer's send with {@link MessageTooLargeException}; the connection goes on
     * (docs/credit-protocol.md, "Large messages"). Needs receiver credits on both sides.
     *
     * @param bytes at least 1
     * @return a copy with that limit
     */
    public T maxMessageSize(int bytes) {
        return with(d -> d.maxMessageSize = bytes);
    }

    /**
     * The largest message {@link RdmaConnection#send(org.reactivestreams.Publisher)} and
     * {@link RdmaConnection#sendByteArray} send eagerly, as one SEND into a receive buffer of the
     * peer; larger ones go by rendezvous (see {@link #maxMessageSize}). Default: unlimited, that is
     * up to the peer's receive buffer size, the most an eager message can be.
     *
     * @param bytes at least 1
     * @return a copy with that threshold
     */
    public T eagerMessageSize(int bytes) {
        return with(d -> d.eagerMessageSize = bytes);
    }

    /**
     * Sends and writes up to this size go inline: the NIC takes the bytes with the work request,
     * without a DMA read of the buffer (if the device grants that much).
     *
     * @param bytes 0 for never (default 64)
     * @return a copy with that inline size
     */
    public T maxInlineData(int bytes) {
        return with(d -> d.maxInlineData = bytes);
    }

    /**
     * Records what the connections do to Micrometer's global registry ({@code Metrics.globalRegistry}),
     * like Reactor Netty's {@code metrics(true)}: connections ({@code jrdma.connections.active},
     * {@code .opened}, {@code .closed} by cause; a client's {@code jrdma.connect.time} by outcome, a
     * server's {@code jrdma.accepts.rejected} by reason), operations ({@code jrdma.operations} by
     * opcode and status, {@code jrdma.operation.bytes}, {@code jrdma.operation.time} from post to
     * completion, {@code jrdma.operations.in.flight}) and per loop {@code jrdma.loop.completions} and
     * {@code jrdma.loop.sleep}; docs/running.md has their tags. The library's operation {@code Mono}s
     * are then named {@code jrdma.operation} for Reactor's {@code tap()}. Needs
     * {@code io.micrometer:micrometer-core} on the class or module path; throws
     * {@link IllegalStateException} here if it is missing.
     *
     * @param enabled whether to record
     * @return a copy with metrics on or off
     */
    public T metrics(boolean enabled) {
        if (enabled) Metering.requireMicrometer();
        return with(d -> {
            d.metrics = enabled;
            d.meterRegistry = null;
        });
    }

    /**
     * {@link #metrics(boolean)} to an application's registry instead of the global one, like
     * Reactor Netty's {@code metrics(true, recorder)}:
     * {@code metrics(true, MetricsRecorder.micrometer(registry))}.
     *
     * @param enabled  whether to record
     * @param recorder where the meters go; kept only while {@code enabled}
     * @return a copy with metrics on (to {@code recorder}'s registry) or off
     */
    public T metrics(boolean enabled, MetricsRecorder recorder) {
        Objects.requireNonNull(recorder, "recorder");
        return with(d -> {
            d.metrics = enabled;
            d.meterRegistry = recorder.registry;
        });
    }

    /**
     * Logs every work request as it is posted and every completion as it is taken, with its
     * opcode, length, status and QP, at DEBUG to the logger {@code io.jrdma.reactive.wiretap}
     * (like Reactor Netty's {@code wiretap(true)}); raise that logger's level to see them. Costs
     * a string per event when the logger is enabled, nothing measurable when it is not.
     *
     * @param enabled whether to log
     * @return a copy with the wiretap on or off
     */
    public T wiretap(boolean enabled) {
        return with(d -> d.wiretap = enabled);
    }

    /** {@return the connection settings as configured so far} */
    public ConnectionConfig configuration() {
        return config;
    }
}
