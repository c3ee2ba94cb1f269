package io.jrdma.reactive;

import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.Leaks;
import io.jrdma.reactive.internal.core.Inbox;
import io.jrdma.reactive.internal.setup.Listener;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A listening server: its accepted connections, and a lifecycle. Take connections with
 * {@link #accept()} or {@link #connections()} (any number of takers, each connection to one), or
 * give the server a per-connection function before binding ({@link RdmaServer#handle}). Its
 * lifecycle is {@link RdmaDisposable}'s: {@link #dispose()} stops listening and starts closing the
 * accepted connections without waiting; {@link #disposeNow()} waits; {@link #onDispose()} tells the end.
 */
public final class DisposableRdmaServer extends AbstractRdmaDisposable {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.server");

    private final Inbox<RdmaConnection> accepted = new Inbox<>(RdmaConnection::dispose);
    private final Function<? super RdmaConnection, ? extends Publisher<Void>> handler;  // null: taken by accept()
    private final Disposable.Composite handling = Disposables.composite();
    private volatile Listener listener;

    private final Lifecycle lifecycle;

    DisposableRdmaServer(Function<? super RdmaConnection, ? extends Publisher<Void>> handler, Lifecycle lifecycle) {
        this.handler = handler;
        this.lifecycle = lifecycle;
    }

    DisposableRdmaServer listening(Listener l) {
        this.listener = l;
        return this;
    }

    /** On a setup thread: to the handler (on the connection's loop), else to the next taker. */
    void connected(ConnectionCore core) {
        RdmaConnection c = new RdmaConnection(core);
        if (isDisposed()) {
            c.dispose();
            return;
        }
        try {
            lifecycle.established(c);
        } catch (RuntimeException e) {
            LOG.warn("doOnConnected of " + this + " failed on " + c + "; closing it", e);
            c.dispose();
            return;
        }
        if (handler != null) {
            ConnectionHandler.handOff(handler, c, core.loop(), LOG, this, handling);
        } else {
            accepted.deliver(c);
            if (isDisposed()) accepted.takeUnread().forEach(RdmaConnection::dispose);  // raced with disposeLater()
        }
    }

    /** {@return the address the server listens on, with the port it picked if it was given 0} */
    public InetSocketAddress address() {
        return listener.address();
    }

    /**
     * The next accepted connection, when subscribed and requested: each connection goes to one
     * taker, the one that waited longest; a taker that cancels leaves it to the next. Fails with
     * {@link ConnectionException.Closed} once the server is disposed and no accepted connection is
     * left, and with {@link IllegalStateException} on a server whose connections go to a
     * {@link RdmaServer#handle handler}. The taker owns the connection: dispose it.
     *
     * @return emits the next accepted connection
     */
    public Mono<RdmaConnection> accept() {
        return accept(Leaks.site("DisposableRdmaServer.accept()"));
    }

    /** Each connection is tracked from the taker that received it, as taken at {@code site} (null: not tracked). */
    private Mono<RdmaConnection> accept(Leaks.@Nullable Site site) {
        if (handler != null) {
            return Mono.error(new IllegalStateException(this + " hands its connections to the handle(...) function given before bind()"));
        }
        return site == null ? accepted.receive() : accepted.receive().map(c -> c.tracked(site));
    }

    /**
     * Accepted connections, in order, one per demand ({@link #accept()} repeated): completes when
     * the server is disposed. Subscribers may come and go, and several may take at once; a
     * connection nobody takes waits for the next, and is closed when the server is disposed.
     *
     * @return the accepted connections, each owned by the subscriber that received it
     */
    public Flux<RdmaConnection> connections() {
        Leaks.Site site = Leaks.streamSite("DisposableRdmaServer.connections()");
        return Flux.defer(() -> accept(site != null && Leaks.sample() ? site : null)).repeat()
                .onErrorComplete(ConnectionException.Closed.class::isInstance);
    }

    /**
     * The region this server exposes to every client of {@code deviceName} ({@link RdmaServer#exposeSharedBuffer}),
     * once a client of that device connected.
     *
     * @param deviceName an RDMA device's name, e.g. {@code mlx5_0} or {@code rxe0}
     * @return the region, owned by the server; empty before a client of that device connected, or when
     *         the server exposes no shared region
     */
    public Optional<RegisteredBuffer> sharedBuffer(String deviceName) {
        return listener.sharedRegion(deviceName);
    }

    /**
     * The server's shared receive queues ({@link RdmaServer#sharedReceiveQueue}), one per device a client connected through.
     *
     * @return a snapshot of each queue's counters; empty without shared receive queues
     */
    public List<SharedReceiveQueueStats> sharedReceiveQueues() {
        return listener.sharedReceivers().stream()
                .map(r -> new SharedReceiveQueueStats(r.deviceName(), r.buffers(), r.posted(), r.limitEvents(), r.maxPosted()))
                .toList();
    }

    /**
     * Stops listening at once ({@link #connections()} completes, handlers are cancelled) and closes
     * the connections it accepted, all concurrently; {@link #onDispose()} completes when they are
     * closed and the listening port is free.
     */
    @Override
    protected Mono<Void> disposal() {
        accepted.close(() -> new ConnectionException.Closed(this + " is disposed: it accepts no more connections"));
        accepted.takeUnread().forEach(RdmaConnection::dispose);
        handling.dispose();
        return listener == null ? Mono.empty() : listener.close();
    }

    @Override
    public String toString() {
        return "DisposableRdmaServer[" + (listener == null ? "binding" : listener.address()) + "]";
    }
}
