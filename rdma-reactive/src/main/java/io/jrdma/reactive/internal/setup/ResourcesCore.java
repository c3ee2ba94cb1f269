package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.core.Disposal;
import io.jrdma.reactive.internal.loop.Domains;
import io.jrdma.reactive.internal.loop.Loop;
import io.jrdma.reactive.internal.loop.LoopGroup;
import io.jrdma.reactive.internal.observe.ConnectionMeters;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Everything behind an {@code RdmaResources}: the loop group, the device domains, one rdma_cm
 * event thread and one TCP selector thread (each started on first use), and the connections and
 * listeners alive on them. Threads: one per loop, plus at most two, whatever the number of
 * connections.
 */
public final class ResourcesCore {
    private final String prefix;
    private final boolean daemon;
    private final LoopGroup loops;
    private final Domains domains;
    private CmEvents cm;    // guarded by this
    private TcpEvents tcp;  // guarded by this
    private final Set<ConnectionCore> connections = ConcurrentHashMap.newKeySet();
    private final Set<Listener> listeners = ConcurrentHashMap.newKeySet();
    private volatile boolean disposed;
    private Mono<Void> disposal;  // guarded by this
    private final SetupGate setups = new SetupGate(SetupGate.DEFAULT_LIMIT, Schedulers.parallel());

    public ResourcesCore(String prefix, int loopCount, boolean daemon) {
        this.prefix = prefix;
        this.daemon = daemon;
        this.loops = new LoopGroup(prefix, loopCount, daemon);
        this.domains = new Domains(loops);
    }

    public String prefix() {
        return prefix;
    }

    public LoopGroup loops() {
        return loops;
    }

    public Loop chooseLoop() {
        return loops.choose();
    }

    public Domains domains() {
        return domains;
    }

    public synchronized CmEvents cm() {
        checkOpen();
        if (cm == null) cm = new CmEvents(prefix + "-cm", daemon);
        return cm;
    }

    public synchronized TcpEvents tcp() {
        checkOpen();
        if (tcp == null) tcp = new TcpEvents(prefix + "-tcp", daemon);
        return tcp;
    }

    private void checkOpen() {
        if (disposed) throw new IllegalStateException("RdmaResources " + prefix + " is disposed");
    }

    /**
     * Starts a connection setup through the {@link SetupGate} (at most {@link SetupGate#DEFAULT_LIMIT}
     * at once); {@code withTimeout} gives the configuration with what is left of its connect timeout
     * when it starts. The returned action cancels it while it waits or is in progress.
     */
    public Runnable connect(Transport transport, ConnectionConfig config, Function<Duration, ConnectionConfig> withTimeout,
                            InetSocketAddress local, InetSocketAddress remote, SetupOptions options, SetupCallback setupCallback) {
        SetupCallback callback = Metered.timed(ConnectionMeters.of(config, ConnectionMeters.Side.CLIENT,
                Metered.transport(transport, options.outOfBand() != null), null), setupCallback);
        if (disposed) {
            callback.failed(new IllegalStateException("RdmaResources " + prefix + " is disposed"));
            return () -> { };
        }
        return setups.submit(config.connectTimeout(), "connecting to " + SetupMessages.address(remote), callback, (left, cb) -> {
            if (disposed) {  // it waited at the gate while the resources were disposed: its threads may be gone
                cb.failed(new IllegalStateException("RdmaResources " + prefix + " was disposed before the connect could start"));
                return () -> { };
            }
            return Setups.connect(this, transport, withTimeout.apply(left), local, remote, options, cb);
        });
    }

    /** Binds a listener; emits it once it accepts connections. */
    public Mono<Listener> listen(Transport transport, ServerSettings settings) {
        return Mono.defer(() -> {
            checkOpen();
            return Setups.listen(this, transport, settings);
        });
    }

    /** A connection lives on these resources until destroyed; closed at once if they are disposed. */
    public void track(ConnectionCore core) {
        connections.add(core);
        core.onDestroyed(() -> connections.remove(core));
        if (disposed) core.close().subscribe();
    }

    public void track(Listener listener) {
        listeners.add(listener);
        if (disposed) listener.close().subscribe();
    }

    public void untrack(Listener listener) {
        listeners.remove(listener);
    }

    public int openConnections() {
        return connections.size();
    }

    public boolean isDisposed() {
        return disposed;
    }

    /**
     * Refuses new connections, closes listeners and connections concurrently, then stops the
     * threads and frees the protection domains (each once its memory is back). Blocks no thread.
     */
    public synchronized Mono<Void> disposeLater() {
        if (disposal != null) return disposal;
        disposed = true;
        Mono<Void> closeAll = Mono.whenDelayError(
                Disposal.closeAll(listeners, Listener::close),
                Disposal.closeAll(connections, ConnectionCore::close));
        disposal = closeAll.onErrorResume(e -> Mono.empty()).then(Mono.defer(this::stopThreads)).cache();
        disposal.subscribe();
        return disposal;
    }

    /**
     * The setup threads first, then the loops: a setup still under way (its connect timed out while
     * its thread created the QP, say) owns a QP on a loop's completion queue that no connection
     * list knows of yet; its thread closes it once it sees the failure, and only then may the
     * loops destroy their queues (before, a loop that went first failed to destroy a queue with
     * that QP on it, and said so on stderr: CliFailuresTest).
     */
    private Mono<Void> stopThreads() {
        List<Mono<Void>> setups = new ArrayList<>();
        synchronized (this) {
            if (cm != null) setups.add(cm.shutdown());
            if (tcp != null) setups.add(tcp.shutdown());
        }
        return Mono.when(setups).then(Mono.defer(loops::shutdown)).then(Mono.fromRunnable(domains::close));
    }

    @Override
    public String toString() {
        return "RdmaResources[" + prefix + "]";
    }
}
