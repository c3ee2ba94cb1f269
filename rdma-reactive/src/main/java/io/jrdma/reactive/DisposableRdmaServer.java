package io.jrdma.reactive;

import java.net.InetSocketAddress;
import java.util.function.Supplier;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** A listening server: its accepted connections as a {@code Flux}, and a lifecycle. */
public final class DisposableRdmaServer implements Disposable {
    private final Sinks.Many<RdmaConnection> accepted = Sinks.many().unicast().onBackpressureBuffer();
    private final Sinks.Empty<Void> closed = Sinks.empty();
    private InetSocketAddress address;
    private Supplier<Mono<Void>> stop;
    private volatile boolean disposed;

    DisposableRdmaServer() {}

    void start(InetSocketAddress address, Thread acceptor, Supplier<Mono<Void>> stop) {
        this.address = address;
        this.stop = stop;
        acceptor.start();
    }

    /** Synchronized: TCP handshakes finish on threads of their own, and a sink rejects concurrent emissions. */
    synchronized void connected(RdmaConnection c) {
        if (accepted.tryEmitNext(c).isFailure()) c.close().subscribe();
    }

    public InetSocketAddress address() {
        return address;
    }

    /** Accepted connections, in order; one subscriber. Completes when the server is disposed. */
    public Flux<RdmaConnection> connections() {
        return accepted.asFlux();
    }

    /**
     * Stops listening at once ({@link #connections()} completes) and closes the connections it
     * accepted, all concurrently. The returned {@code Mono} completes when they are closed (the
     * same moment as {@link #onDispose()}); the stopping happens on the first call, subscribed or
     * not. Blocks no thread: use it where {@link #dispose()} would wait.
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
        if (first) stop.get().subscribe(null, closed::tryEmitError, closed::tryEmitEmpty);
        return closed.asMono();
    }

    /**
     * {@link #disposeLater()}, waiting up to 30 s for the connections to close, except on a Reactor
     * thread that must not block (such as {@code parallel}), where it returns without waiting.
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
        return "DisposableRdmaServer[" + address + "]";
    }
}
