package io.jrdma.reactive;

import java.net.InetSocketAddress;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** A listening server: its accepted connections as a {@code Flux}, and a lifecycle. */
public final class DisposableRdmaServer implements Disposable {
    private final Sinks.Many<RdmaConnection> accepted = Sinks.many().unicast().onBackpressureBuffer();
    private final Sinks.Empty<Void> closed = Sinks.empty();
    private InetSocketAddress address;
    private Runnable stop;
    private volatile boolean disposed;

    DisposableRdmaServer() {}

    void start(InetSocketAddress address, Thread acceptor, Runnable stop) {
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

    /** Stops listening and closes the connections it accepted. */
    @Override
    public void dispose() {
        if (disposed) return;
        disposed = true;
        stop.run();
        synchronized (this) {
            accepted.tryEmitComplete();
        }
        closed.tryEmitEmpty();
    }

    public Mono<Void> onDispose() {
        return closed.asMono();
    }

    @Override
    public boolean isDisposed() {
        return disposed;
    }
}
