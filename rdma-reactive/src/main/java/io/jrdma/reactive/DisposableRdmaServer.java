package io.jrdma.reactive;

import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.core.Disposal;
import io.jrdma.reactive.internal.setup.Listener;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Optional;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** A listening server: its accepted connections as a {@code Flux}, and a lifecycle. */
public final class DisposableRdmaServer implements Disposable {
    private final Sinks.Many<RdmaConnection> accepted = Sinks.many().unicast().onBackpressureBuffer();
    private final Sinks.Empty<Void> closed = Sinks.empty();
    private volatile Listener listener;
    private volatile boolean disposed;

    DisposableRdmaServer() {}

    DisposableRdmaServer listening(Listener l) {
        this.listener = l;
        return this;
    }

    /** Synchronized: connections are handed out on the setup threads, and a sink rejects concurrent emissions. */
    synchronized void connected(ConnectionCore core) {
        RdmaConnection c = new RdmaConnection(core);
        if (disposed || accepted.tryEmitNext(c).isFailure()) c.close().subscribe();
    }

    public InetSocketAddress address() {
        return listener.address();
    }

    /** Accepted connections, in order; one subscriber. Completes when the server is disposed. */
    public Flux<RdmaConnection> connections() {
        return accepted.asFlux();
    }

    /**
     * The region this server exposes to every client of {@code deviceName} ({@link RdmaServer#exposeSharedBuffer}),
     * once a client of that device connected.
     */
    public Optional<RegisteredBuffer> sharedBuffer(String deviceName) {
        return listener.sharedRegion(deviceName);
    }

    /** The server's shared receive queues ({@link RdmaServer#sharedReceiveQueue}), one per device a client connected through. */
    public List<SharedReceiveQueueStats> sharedReceiveQueues() {
        return listener.sharedReceivers().stream()
                .map(r -> new SharedReceiveQueueStats(r.deviceName(), r.buffers(), r.posted(), r.limitEvents(), r.maxPosted()))
                .toList();
    }

    /**
     * Stops listening at once ({@link #connections()} completes) and closes the connections it
     * accepted, all concurrently. The returned {@code Mono} completes when they are closed and the
     * listening port is free (the same moment as {@link #onDispose()}); the stopping happens on
     * the first call, subscribed or not. Blocks no thread: use it where {@link #dispose()} would wait.
     */
    public Mono<Void> disposeLater() {
        boolean first;
        synchronized (this) {
            first = !disposed;
            if (first) {
                disposed = true;
                accepted.tryEmitComplete();
            }
        }
        if (first) listener.close().subscribe(null, closed::tryEmitError, closed::tryEmitEmpty);
        return closed.asMono();
    }

    /**
     * {@link #disposeLater()}, waiting up to 30 s for the connections to close, except on a Reactor
     * thread that must not block (such as {@code parallel}, or a loop), where it returns without waiting.
     */
    @Override
    public void dispose() {
        Disposal.dispose(disposeLater(), this);
    }

    /** Completes when the server is disposed and every connection it accepted is closed. */
    public Mono<Void> onDispose() {
        return closed.asMono();
    }

    @Override
    public boolean isDisposed() {
        return disposed;
    }

    @Override
    public String toString() {
        return "DisposableRdmaServer[" + (listener == null ? "binding" : listener.address()) + "]";
    }
}
