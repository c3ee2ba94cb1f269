package io.jrdma.reactive;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import reactor.core.Disposable;

/**
 * The threads behind connections, as an explicit resource (like Reactor Netty's LoopResources):
 * each connection gets one poller thread, and each rdma_cm event channel one event thread. They
 * block in native calls (poll, ibv_get_cq_event), so they are platform threads of their own and
 * never Reactor scheduler threads. {@link #dispose()} closes every connection still open.
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

    @Override
    public void dispose() {
        disposed = true;
        for (RdmaConnection c : connections) c.close().block(java.time.Duration.ofSeconds(15));
    }

    @Override
    public boolean isDisposed() {
        return disposed;
    }
}
