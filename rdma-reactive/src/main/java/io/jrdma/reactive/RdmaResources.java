package io.jrdma.reactive;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;

/**
 * The threads behind connections, as an explicit resource (like Reactor Netty's LoopResources):
 * each connection gets one poller thread, and each rdma_cm event channel one event thread. They
 * block in native calls (poll, ibv_get_cq_event), so they are platform threads of their own and
 * never Reactor scheduler threads. {@link #dispose()} and {@link #disposeLater()} close every
 * connection still open.
 */
public final class RdmaResources implements Disposable {
    private static final RdmaResources SHARED = new RdmaResources("jrdma");

    private final String prefix;
    private final AtomicInteger counter = new AtomicInteger();
    private final Set<RdmaConnection> connections = ConcurrentHashMap.newKeySet();
    private volatile boolean disposed;

    private RdmaResources(String prefix) {
        this.prefix = prefix;
    }

    /** Process-wide resources with daemon threads; the default of every client and server. */
    public static RdmaResources shared() {
        return SHARED;
    }

    public static RdmaResources create(String threadNamePrefix) {
        return new RdmaResources(threadNamePrefix);
    }

    Thread newThread(String role, Runnable body) {
        if (disposed) throw new IllegalStateException("RdmaResources " + prefix + " disposed");
        Thread t = Thread.ofPlatform().name(prefix + "-" + role + "-" + counter.incrementAndGet()).daemon(true).unstarted(body);
        return t;
    }

    void register(RdmaConnection c) {
        connections.add(c);
        if (disposed) c.close().subscribe();
    }

    void unregister(RdmaConnection c) {
        connections.remove(c);
    }

    /** Connections currently open on these resources. */
    public int openConnections() {
        return connections.size();
    }

    /**
     * Refuses new connections from now on and closes every open one, concurrently; completes when
     * all are closed. Blocks no thread.
     */
    public Mono<Void> disposeLater() {
        disposed = true;
        return Disposal.closeAll(connections);
    }

    /**
     * {@link #disposeLater()}, waiting up to 30 s for the connections to close, except on a Reactor
     * thread that must not block (such as {@code parallel}), where it returns without waiting.
     */
    @Override
    public void dispose() {
        Disposal.dispose(disposeLater(), this);
    }

    @Override
    public boolean isDisposed() {
        return disposed;
    }

    @Override
    public String toString() {
        return "RdmaResources[" + prefix + "]";
    }
}
