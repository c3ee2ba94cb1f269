package io.jrdma.rpc;

import io.jrdma.reactive.AbstractRdmaDisposable;
import io.jrdma.reactive.DisposableRdmaServer;
import java.net.InetSocketAddress;
import java.util.List;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A listening RPC server: its address, counters and lifecycle, {@link io.jrdma.reactive.RdmaDisposable}'s
 * ({@link #dispose()} returns at once, {@link #disposeNow()} waits, {@link #onDispose()} tells the end).
 */
public final class DisposableRpcServer extends AbstractRdmaDisposable {
    private final DisposableRdmaServer rdma;
    private final ServerCore core;
    private final Disposable accepting;

    DisposableRpcServer(DisposableRdmaServer rdma, ServerCore core) {
        this.rdma = rdma;
        this.core = core;
        this.accepting = rdma.connections().subscribe(c -> {
            try {
                new ServerSession(core, c).start();
            } catch (RuntimeException e) {
                ServerCore.LOG.warn("cannot serve " + c + "; closing it", e);
                c.dispose();
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
     * cannot answer. {@link #onDispose()} completes when every connection is closed.
     */
    @Override
    protected Mono<Void> disposal() {
        accepting.dispose();
        Mono<Void> sessions = Flux.fromIterable(List.copyOf(core.sessions)).flatMap(ServerSession::close).then();
        return Mono.when(rdma.disposeLater(), sessions);
    }

    @Override
    public String toString() {
        return "DisposableRpcServer[" + rdma.address() + ", functions " + functions() + "]";
    }
}
