package io.jrdma.reactive.rpc;

import io.jrdma.reactive.DisposableRdmaServer;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** A listening RPC server: its address, counters and lifecycle. */
public final class DisposableRpcServer implements Disposable {
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(15);

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
                ServerCore.LOG.log(Level.WARNING, "cannot serve " + c + "; closing it", e);
                c.close().subscribe();
            }
        }, e -> ServerCore.LOG.log(Level.WARNING, "the RDMA server stopped accepting", e));
    }

    public InetSocketAddress address() {
        return rdma.address();
    }

    /** A snapshot of the counters. */
    public RpcServerStats stats() {
        return core.stats();
    }

    /** The functions this server executes (registered and provided). */
    public List<String> functions() {
        return core.functions.names();
    }

    /** Stops listening and closes every connection; calls running on them finish but cannot answer. */
    @Override
    public void dispose() {
        if (rdma.isDisposed()) return;
        accepting.dispose();
        rdma.dispose();
        Flux.fromIterable(List.copyOf(core.sessions)).flatMap(ServerSession::close).then().block(CLOSE_TIMEOUT);
    }

    public Mono<Void> onDispose() {
        return rdma.onDispose();
    }

    @Override
    public boolean isDisposed() {
        return rdma.isDisposed();
    }
}
