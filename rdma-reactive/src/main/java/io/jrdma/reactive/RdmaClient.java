package io.jrdma.reactive;

import io.jrdma.ffm.CmId;
import io.jrdma.reactive.internal.HandOff;
import io.jrdma.reactive.internal.Leaks;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.setup.SetupAuthentication;
import io.jrdma.reactive.internal.setup.SetupCallback;
import io.jrdma.reactive.internal.setup.SetupOptions;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Connects to an {@link RdmaServer} (or any peer speaking the same descriptor):
 *
 * <pre>{@code
 * RdmaClient.create().host("10.77.0.2").port(7471).localAddress("10.77.0.1")
 *     .queueDepth(64, 64).connect()            // Mono<RdmaConnection>
 * }</pre>
 *
 * Immutable: every setter returns a new client.
 */
public final class RdmaClient extends ConnectionSpec<RdmaClient> {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.client");

    private final String localAddress;
    private final SetupOptions options;
    /**
     * No handler: {@link #handle} not called. A sentinel, not null: a type annotation on this field
     * names {@code Publisher} in the class file, and javadoc of a module that reads the class
     * without reactive-streams on its path fails on it.
     */
    private static final Function<RdmaConnection, Publisher<Void>> NO_HANDLER = c -> Mono.empty();

    private final Function<? super RdmaConnection, ? extends Publisher<Void>> handler;

    private RdmaClient(String host, int port, String localAddress, Transport transport, ConnectionConfig config,
                       RdmaResources resources, Lifecycle lifecycle, SetupOptions options,
                       Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        super(host, port, transport, config, resources, lifecycle);
        this.localAddress = localAddress;
        this.options = options;
        this.handler = handler;
    }

    /**
     * A client with the defaults: {@code 127.0.0.1:7471} over {@link Transport#RDMA_CM},
     * {@link ConnectionConfig#defaults()}, on {@link RdmaResources#shared()}, from the local
     * address rdma_cm's route resolution picks.
     *
     * @return the client configuration; nothing connects until {@link #connect()} is subscribed
     */
    public static RdmaClient create() {
        return new RdmaClient("127.0.0.1", 7471, null, Transport.RDMA_CM, ConnectionConfig.defaults(), null, Lifecycle.NONE, SetupOptions.JRDMA, NO_HANDLER);
    }

    @Override
    RdmaClient copy(String host, int port, Transport transport, ConnectionConfig config, RdmaResources resources, Lifecycle lifecycle) {
        return new RdmaClient(host, port, localAddress, transport, config, resources, lifecycle, options, handler);
    }

    /**
     * The local IP to connect from; selects the RDMA device (its RoCE v2 GID).
     *
     * @param address an IP address (or host name) of this machine that an RDMA device owns
     * @return a copy connecting from that address
     */
    public RdmaClient localAddress(String address) {
        return new RdmaClient(host, port, address, transport, config, resources, lifecycle, options, handler);
    }

    /**
     * Connects over rdma_cm to a server that is not jrdma (a C program written against
     * librdmacm, say): sends exactly {@code privateData} with the connect request (at most 56
     * bytes on RoCE and InfiniBand; may be empty) instead of jrdma's connection descriptor, and
     * requires none back. What the server accepted with is {@link RdmaConnection#peerPrivateData()};
     * memory it advertises there in its own format becomes a {@code RemoteBuffer} the application
     * builds ({@link io.jrdma.reactive.memory.RemoteBuffer#fromBigEndian}). Everything else of
     * the connection is the same.
     *
     * @param privateData the bytes to send with the connect request; copied
     * @return a copy that connects with those bytes
     * @throws IllegalArgumentException when {@code privateData} exceeds rdma_cm's 56 bytes, or the
     *         client has an {@link #authentication}
     */
    public RdmaClient rawPrivateData(byte[] privateData) {
        if (options.authentication() != null) throw new IllegalArgumentException("rawPrivateData and authentication exclude each other: raw private"
                + " data is the application's own, with no room for jrdma's proof");
        if (privateData.length > CmId.MAX_PRIVATE_DATA_CONNECT) {
            throw new IllegalArgumentException(privateData.length + " bytes of connect private data exceed rdma_cm's "
                    + CmId.MAX_PRIVATE_DATA_CONNECT);
        }
        return new RdmaClient(host, port, localAddress, transport, config, resources, lifecycle,
                new SetupOptions(privateData.clone(), null, null), handler);
    }

    /**
     * Sets up the connection with an exchange the application performs itself, in its peer's
     * format ({@link OutOfBandExchange}); host and port are not used. The device is the one named
     * by {@code device(name, port)}, or the one owning {@link #localAddress}.
     *
     * @param exchange swaps the two sides' queue pair details; called once per {@link #connect()}
     * @return a copy that connects through {@code exchange}
     * @throws IllegalArgumentException when the client has an {@link #authentication}
     */
    public RdmaClient outOfBand(OutOfBandExchange exchange) {
        if (options.authentication() != null) throw new IllegalArgumentException("outOfBand and authentication exclude each other: the"
                + " application's own exchange authenticates its peer itself");
        return new RdmaClient(host, port, localAddress, transport, config, resources, lifecycle,
                new SetupOptions(null, Objects.requireNonNull(exchange), null), handler);
    }

    /**
     * Proves this client's identity to the server with its connect request, and checks the
     * server's proof before the connection is handed out (over TCP, before this side's queue pair
     * reaches RTR): a server that proves nothing, or proves it wrong, fails the connect with
     * {@link ConnectionException.Authentication} and the connection is closed unused. A server
     * that refuses this client fails it with {@link ConnectionException.Rejected} and its reason.
     * Both setup paths; set the same on the server ({@link RdmaServer#authentication}). Peer
     * authentication, not encryption: see {@link PeerAuthentication}.
     *
     * @param authentication for instance {@link PeerAuthentication#preSharedKey(byte[])}
     * @return a copy that authenticates itself and the server
     * @throws IllegalArgumentException when the client has {@link #rawPrivateData} or {@link #outOfBand}: they exclude each
     *         other; when the authentication's proofs exceed what the setup paths carry
     */
    public RdmaClient authentication(PeerAuthentication authentication) {
        if (options.rawConnectData() != null || options.outOfBand() != null) {
            throw new IllegalArgumentException("authentication excludes " + (options.outOfBand() != null ? "outOfBand" : "rawPrivateData")
                    + ": jrdma's proof travels with jrdma's own connection descriptor");
        }
        return new RdmaClient(host, port, localAddress, transport, config, resources, lifecycle,
                new SetupOptions(null, null, SetupAuthentication.fits(authentication)), handler);
    }

    /**
     * Gives every connection this client makes to {@code handler}, the way Reactor Netty's
     * {@code TcpClient.handle} does, and the way {@link RdmaServer#handle} serves a server's: once
     * {@link #connect()} has emitted the connection, {@code handler} is called on the connection's
     * loop thread (do not block there; {@code publishOn} a scheduler for blocking work) and returns
     * the connection's work as a {@code Publisher<Void>}. When that completes or fails, the
     * connection is disposed; disposing the connection (or the peer closing it) cancels a
     * publisher still running, once the connection is closed. A failure is logged once to
     * {@code io.jrdma.reactive.client}. The subscriber of {@code connect()} still receives the
     * connection, to wait for its end ({@code onDispose()}) or to dispose it early.
     *
     * <pre>{@code
     * RdmaConnection conn = RdmaClient.create().host("10.77.0.2").localAddress("10.77.0.1")
     *     .handle(c -> c.send("hello").then(c.receive()).doOnNext(ReceivedMessage::release).then())
     *     .connectNow();
     * conn.onDispose().block();                       // the handler ended, and disposed it
     * }</pre>
     *
     * @param handler the work of one connection; must not return null
     * @return a copy that hands its connections to {@code handler}
     */
    public RdmaClient handle(Function<? super RdmaConnection, ? extends Publisher<Void>> handler) {
        return new RdmaClient(host, port, localAddress, transport, config, resources, lifecycle, options, Objects.requireNonNull(handler));
    }

    /**
     * {@link #connect()}, waiting for it on this thread: never on a loop or a setup thread, nor
     * in a {@code Mono}'s operator. As Reactor Netty's {@code connectNow()}.
     *
     * @return the established connection, which the caller owns and disposes
     * @throws ConnectionException as {@link #connect()} fails; its {@link ConnectionException.Timeout}
     *         after the connect timeout, plus a margin of 5 s for the timeout's own signal
     */
    public RdmaConnection connectNow() {
        return connect().block(config.connectTimeout().plusSeconds(5));
    }

    /**
     * Connects when subscribed, within {@code connectTimeout}. Setup is driven by rdma_cm events
     * (or a non-blocking socket) on the resources' setup thread: no thread waits for it, and the
     * connection is emitted there. A subscriber that cancels meanwhile stops the setup; a
     * connection established anyway is closed, never leaked. At most 128 setups of one
     * {@link RdmaResources} run at once; more wait and start in order, within their connectTimeout
     * (a burst of 512 finishes in order instead of all at once, past the timeout).
     *
     * @return emits the established connection, which the subscriber owns and disposes; fails with a
     *         {@link ConnectionException} ({@link ConnectionException.Rejected},
     *         {@link ConnectionException.Unreachable}, {@link ConnectionException.Timeout},
     *         {@link ConnectionException.Protocol}) saying which step failed
     */
    public Mono<RdmaConnection> connect() {
        Leaks.Site site = Leaks.site("RdmaClient.connect()");
        return Mono.defer(() -> {
            AtomicReference<Runnable> cancel = new AtomicReference<>();
            return HandOff.<RdmaConnection>create(waiter -> {
                InetSocketAddress remote = new InetSocketAddress(host, port);
                InetSocketAddress local = localAddress == null ? null : new InetSocketAddress(localAddress, 0);
                // a setup that waited for the gate gets what is left of connectTimeout
                Function<Duration, ConnectionConfig> withTimeout =
                        left -> left.equals(config.connectTimeout()) ? config : config.with(d -> d.connectTimeout = left);
                cancel.set(resources().core().connect(transport, config, withTimeout, local, remote, options, new SetupCallback() {
                    @Override
                    public void established(ConnectionCore core) {
                        RdmaConnection c = new RdmaConnection(core);
                        try {
                            lifecycle.established(c);
                        } catch (RuntimeException e) {
                            c.dispose();
                            waiter.fail(e);
                            return;
                        }
                        if (waiter.offer(c.tracked(site))) {
                            if (handler != NO_HANDLER) ConnectionHandler.handOff(handler, c, core.loop(), LOG, RdmaClient.this, null);
                            return;
                        }
                        c.untrack();
                        c.dispose();
                    }

                    @Override
                    public void failed(Throwable error) {
                        waiter.fail(error);
                    }
                }));
            }, waiter -> {
                Runnable c = cancel.get();
                if (c != null) c.run();
            });
        });
    }

    @Override
    public String toString() {
        return "RdmaClient[" + host + ":" + port + "]";
    }
}
