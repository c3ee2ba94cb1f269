package io.jrdma.rpc;

import io.jrdma.reactive.DisposableRdmaServer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/** A listening RPC server: its address, counters and lifecycle. */
public final class DisposableRpcServer implements Disposable {
    private final DisposableRdmaServer rdma;
    private final ServerCore core;
    private final Disposable accepting;
    private final Sinks.Empty<Void> closed = Sinks.empty();
    private boolean disposing;  // guarded by this

    DisposableRpcServer(DisposableRdmaServer rdma, ServerCore core) {
        this.rdma = rdma;
        this.core = core;
        this.accepting = rdma.connections().subscribe(c -> {
            try {
                new ServerSession(core, c).start();
            } catch (RuntimeException e) {
                ServerCore.LOG.warn("cannot serve " + c + "; closing it", e);
                c.close().subscribe();
            }
        }, e -> ServerCore.LOG.warn("the RDMA server stopped accepting", e));
    }

    /** {@return the address the server listens on, with the port it picked if it was given 0} */
    public InetSocketAddress address() {
        return rdma.address();
    }

    /** {@return a snapshot of the counters} */
    public RpcServerStats stats() {
        return core.stats();
    }

    /** {@return the names of the functions this server executes (registered and provided)} */
    public List<String> functions() {
        return core.functions.names();
    }

    /**
     * Stops listening and closes every connection, concurrently; calls running on them finish but
     * cannot answer. The stopping happens on the first call, subscribed or not; the returned
     * {@code Mono} completes when every connection is closed (the same moment as
     * {@link #onDispose()}). Blocks no thread.
     *
     * @return completes when the server and its connections are closed
     */
    public Mono<Void> disposeLater() {
        boolean first;
        synchronized (this) {
            first = !disposing;
            disposing = true;
        }
        if (first) {
            accepting.dispose();
            Mono<Void> sessions = Flux.fromIterable(List.copyOf(core.sessions)).flatMap(ServerSession::close).then();
            Mono.when(rdma.disposeLater(), sessions).subscribe(null, closed::tryEmitError, closed::tryEmitEmpty);
        }
        return closed.asMono();
    }

    /**
     * {@link #disposeLater()}, waiting up to 30 s for the connections to close, except on a Reactor
     * thread that must not block (a loop, {@code parallel}), where it returns without waiting.
     */
    @Override
    public void dispose() {
        Disposal.dispose(disposeLater(), this);
    }

    /** {@link #disposeNow(Duration)} waiting up to 30 s. */
    public void disposeNow() {
        disposeNow(Disposal.BLOCKING_DISPOSE_TIMEOUT);
    }

    /**
     * {@link #disposeLater()} and waits for it, at most {@code timeout}: throws
     * {@link IllegalStateException} if it took longer (the closing goes on) or when called on a
     * thread that must not block, such as a loop.
     *
     * @param timeout how long to wait at most
     */
    public void disposeNow(Duration timeout) {
        Disposal.disposeNow(disposeLater(), this, timeout);
    }

    /**
     * Completes when the server is disposed and every connection it accepted is closed.
     *
     * @return completes then; nothing is disposed by subscribing
     */
    public Mono<Void> onDispose() {
        return closed.asMono();
    }

    @Override
    public boolean isDisposed() {
        synchronized (this) {
            return disposing;
        }
    }

    @Override
    public String toString() {
        return "DisposableRpcServer[" + rdma.address() + ", functions " + functions() + "]";
    }
}
