package io.jrdma.reactive;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.internal.setup.ServerSettings;
import io.jrdma.reactive.internal.setup.SetupAuthentication;
import java.net.InetSocketAddress;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Predicate;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;

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
    private final int srqDepth;
    private final int srqMaxDepth;
    private final long sharedExposedBytes;
    private final Function<ConnectRequest, AcceptDecision> rawAccept;
    private final PeerAuthentication authentication;
    private final Function<? super RdmaConnection, ? extends Publisher<Void>> handler;

    private RdmaServer(String host, int port, Transport transport, ConnectionConfig config, RdmaResources resources, Lifecycle lifecycle,
                       Predicate<InetSocketAddress> acceptFilter, int backlog, int srqDepth, int srqMaxDepth, long sharedExposedBytes,
                       Function<ConnectRequest, AcceptDecision> rawAccept, PeerAuthentication authentication,
                       Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        super(host, port, transport, config, resources, lifecycle);
        this.rawAccept = rawAccept;
        this.authentication = authentication;
        this.handler = handler;
        this.acceptFilter = acceptFilter;
        this.backlog = backlog;
        this.srqDepth = srqDepth;
        this.srqMaxDepth = srqMaxDepth;
        this.sharedExposedBytes = sharedExposedBytes;
    }

    private static final int DEFAULT_BACKLOG = 1024;

    /**
     * A server with the defaults: {@code 0.0.0.0:7471} over {@link Transport#RDMA_CM},
     * {@link ConnectionConfig#defaults()}, on {@link RdmaResources#shared()}, accepting every peer,
     * each connection with a receive queue of its own.
     *
     * @return the server configuration; nothing listens until {@link #bind()} is subscribed
     */
    public static RdmaServer create() {
        return new RdmaServer("0.0.0.0", 7471, Transport.RDMA_CM, ConnectionConfig.defaults(), null, Lifecycle.NONE, a -> true, DEFAULT_BACKLOG, 0, 0, 0, null, null, null);
    }

    @Override
    RdmaServer copy(String host, int port, Transport transport, ConnectionConfig config, RdmaResources resources, Lifecycle lifecycle) {
        return new RdmaServer(host, port, transport, config, resources, lifecycle, acceptFilter, backlog, srqDepth, srqMaxDepth, sharedExposedBytes, rawAccept, authentication, handler);
    }

    /**
     * Which peers to accept; the others are rejected with a reason (rdma_cm: in the reject's private data), which is also logged.
     *
     * @param filter true for a peer's address to accept; runs on the setup thread for each connect request: do not block
     * @return a copy with that filter (default: accept all)
     */
    public RdmaServer accept(Predicate<InetSocketAddress> filter) {
        return new RdmaServer(host, port, transport, config, resources, lifecycle, Objects.requireNonNull(filter), backlog, srqDepth, srqMaxDepth,
                sharedExposedBytes, rawAccept, authentication, handler);
    }

    /**
     * Connect requests the kernel queues before they are handled (default 1024, which is also
     * Linux's cap for rdma_cm, {@code net.rdma_ucm.max_backlog}). A request beyond it is dropped
     * and the client's CM retries it seconds later: with 128, 256 concurrent connects ran into the
     * 10 s connect timeout in the lab.
     *
     * @param backlog connect requests queued at most, from 1
     * @return a copy with that backlog
     * @throws IllegalArgumentException when {@code backlog} is below 1
     */
    public RdmaServer backlog(int backlog) {
        if (backlog < 1) throw new IllegalArgumentException("backlog must be positive");
        return new RdmaServer(host, port, transport, config, resources, lifecycle, acceptFilter, backlog, srqDepth, srqMaxDepth, sharedExposedBytes, rawAccept, authentication, handler);
    }

    /**
     * {@link #sharedReceiveQueue(int, int)} that may grow to four times {@code depth}.
     *
     * @param depth receive buffers posted to the shared queue at first, from 1
     * @return a copy whose connections share a receive queue
     */
    public RdmaServer sharedReceiveQueue(int depth) {
        return sharedReceiveQueue(depth, 4 * depth);
    }

    /**
     * Every connection receives into one shared receive queue per device instead of a receive
     * queue of its own, so receive memory stays {@code depth} buffers of {@code bufferSize} however
     * many clients connect. A buffer is posted again when its message is released; when the
     * application holds so many that fewer than a quarter of {@code depth} stay posted, the
     * device's SRQ limit event adds {@code depth} more, up to {@code maxDepth}.
     *
     * <p>Flow control: each client is still told {@code receiveQueueDepth} as its credit (how many
     * SENDs it may have outstanding). Those credits share the SRQ: if clients together send more
     * than is posted, a SEND meets an RNR NAK and the sender's NIC retries it (rnr_retry 7, never
     * lost); size {@code depth} for the expected burst, or keep credits in the application protocol
     * (as the RPC layer does).
     *
     * @param depth    receive buffers posted at first, from 1
     * @param maxDepth the most it grows to, at least {@code depth}
     * @return a copy whose connections share a receive queue per device
     * @throws IllegalArgumentException when {@code depth} is below 1 or above {@code maxDepth}
     */
    public RdmaServer sharedReceiveQueue(int depth, int maxDepth) {
        if (depth < 1 || maxDepth < depth) throw new IllegalArgumentException("SRQ depth must be positive and at most maxDepth");
        return new RdmaServer(host, port, transport, config, resources, lifecycle, acceptFilter, backlog, depth, maxDepth, sharedExposedBytes, rawAccept, authentication, handler);
    }

    /**
     * Exposes one region of {@code bytes} (per device) to every client with exactly {@code access},
     * instead of a region per connection ({@link #exposeBuffer}): all clients read and write the
     * same memory, which every accepted connection's {@code exposedBuffer()} returns. It is
     * registered when the first client of a device connects and freed after the server is disposed
     * and its last connection is closed.
     *
     * @param bytes the size of the shared region, from 1
     * @param first an access every client gets, e.g. {@link Access#REMOTE_WRITE}
     * @param rest  more access
     * @return a copy that exposes one shared region
     * @throws IllegalArgumentException when {@code bytes} is not positive
     */
    public RdmaServer exposeSharedBuffer(long bytes, Access first, Access... rest) {
        if (bytes <= 0) throw new IllegalArgumentException("a shared region needs at least one byte");
        // no region of each connection's own; the access travels in the configuration, where the QP's rights come from too
        RdmaServer s = exposeBuffer(0, first, rest);
        return new RdmaServer(s.host, s.port, s.transport, s.config, s.resources, s.lifecycle, acceptFilter, backlog, srqDepth, srqMaxDepth, bytes, rawAccept, authentication, handler);
    }

    /**
     * Accepts rdma_cm clients that are not jrdma (C programs written against librdmacm, say):
     * instead of jrdma's connection descriptor, {@code decide} answers each connect request with
     * the accept's private data in the client's own format (for example the memory this connection
     * exposes, {@code request.exposed()}, as {@code RemoteBuffer.toBigEndian()}), or a reject with
     * a reason. It runs on the rdma_cm thread, after the connection's QP exists and its receives
     * are about to be posted: keep it short and do not block. Needs {@link Transport#RDMA_CM}: on
     * another transport {@link #bind()} fails with {@link IllegalArgumentException}.
     *
     * @param decide the answer to each connect request
     * @return a copy that accepts with the application's private data
     * @throws IllegalArgumentException when the server has an {@link #authentication}: the two exclude each other
     */
    public RdmaServer acceptRaw(Function<ConnectRequest, AcceptDecision> decide) {
        if (authentication != null) throw new IllegalArgumentException(RAW_AND_AUTHENTICATION);
        return new RdmaServer(host, port, transport, config, resources, lifecycle, acceptFilter, backlog, srqDepth, srqMaxDepth, sharedExposedBytes,
                Objects.requireNonNull(decide), authentication, handler);
    }

    private static final String RAW_AND_AUTHENTICATION = "acceptRaw and authentication exclude each other: a raw client sends"
            + " its own private data, with no room for jrdma's proof; authenticate raw clients in the acceptRaw function";

    /**
     * Requires every client to prove its identity before anything is created for it (queue pair,
     * completion queue, registered memory) and before the exposed buffer's address and rkey are
     * sent; the server proves its own in its answer. A client that fails, or sends no proof, is
     * rejected with the reason (its {@link ConnectionException.Rejected}) and logged as one line.
     * Both setup paths; the clients set the same ({@link RdmaClient#authentication}). Peer
     * authentication, not encryption: see {@link PeerAuthentication} and docs/authentication.md
     * for what it protects and what it does not.
     *
     * @param authentication for instance {@link PeerAuthentication#preSharedKey(byte[])}
     * @return a copy that authenticates its clients
     * @throws IllegalArgumentException when the server has {@link #acceptRaw}: the two exclude each other; when the
     *         authentication's proofs exceed what the setup paths carry
     */
    public RdmaServer authentication(PeerAuthentication authentication) {
        if (rawAccept != null) throw new IllegalArgumentException(RAW_AND_AUTHENTICATION);
        return new RdmaServer(host, port, transport, config, resources, lifecycle, acceptFilter, backlog, srqDepth, srqMaxDepth, sharedExposedBytes,
                rawAccept, SetupAuthentication.fits(authentication), handler);
    }

    /**
     * Hands every accepted connection to {@code handler}, the way Reactor Netty's
     * {@code TcpServer.handle} does: it is called on the connection's loop thread (do not block
     * there; {@code publishOn} a scheduler for blocking work) and returns the connection's work as
     * a {@code Publisher<Void>}; when that completes, fails or is cancelled (the server disposed),
     * the connection is disposed, and once the connection is closed (by either side) a publisher
     * still running is cancelled. A failure is logged to {@code io.jrdma.reactive.server}. The
     * clients' counterpart is {@link RdmaClient#handle}. The bound server's
     * {@link DisposableRdmaServer#accept()} and {@code connections()} are then not available.
     *
     * <pre>{@code
     * RdmaServer.create().port(7471)
     *     .handle(c -> c.receives().concatMap(m -> c.send(m.buffer(), 0, m.length()).doFinally(s -> m.release())).then())
     *     .bind()
     * }</pre>
     *
     * @param handler the work of one connection; must not return null
     * @return a copy that hands its connections to {@code handler}
     */
    public RdmaServer handle(Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        return new RdmaServer(host, port, transport, config, resources, lifecycle, acceptFilter, backlog, srqDepth, srqMaxDepth, sharedExposedBytes,
                rawAccept, authentication, Objects.requireNonNull(handler));
    }

    /**
     * {@link #bind()}, waiting for it on this thread (never on a loop or a setup thread). As
     * Reactor Netty's {@code bindNow()}.
     *
     * @return the listening server, which the caller owns and disposes
     * @throws ConnectionException as {@link #bind()} fails, or when it does not listen within
     *         the connect timeout
     */
    public DisposableRdmaServer bindNow() {
        return bind().timeout(config.connectTimeout(), Mono.error(() -> new ConnectionException.Timeout(
                "the server at " + host + ":" + port + " did not listen within " + config.connectTimeout().toMillis() + " ms"))).block();
    }

    /**
     * Starts listening when subscribed; emits once the server accepts connections. A server that
     * could serve nobody fails here rather than at its first client: over {@link Transport#TCP}, a
     * host (or a bind address) without an RDMA device.
     *
     * <p>Once it listens, a client it cannot serve (a connection descriptor that is not jrdma's,
     * registration beyond the locked-memory limit, ...) is rejected with a reason the client's
     * {@link ConnectionException.Rejected} carries, and logged as one line to
     * {@code io.jrdma.reactive.server}; the server goes on listening.
     *
     * @return emits the listening server, which the subscriber owns and disposes; fails with a
     *         {@link ConnectionException} when the address cannot be bound (in use, not this host's;
     *         its cause is the system's error), {@link io.jrdma.ffm.NoRdmaDeviceException} when no
     *         RDMA device could serve it, {@link IllegalArgumentException} when the configuration
     *         does not fit the transport
     */
    public Mono<DisposableRdmaServer> bind() {
        return Mono.defer(() -> {
            DisposableRdmaServer server = new DisposableRdmaServer(handler, lifecycle);
            ServerSettings settings = new ServerSettings(config, new InetSocketAddress(host, port), backlog, acceptFilter, srqDepth,
                    srqMaxDepth, sharedExposedBytes, config.exposedAccess(), rawAccept, authentication, server::connected);
            return resources().core().listen(transport, settings).map(server::listening);
        });
    }
}
