package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.internal.core.ConnectionBuilder;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.core.Disposal;
import io.jrdma.reactive.internal.core.SharedCredits;
import io.jrdma.reactive.internal.loop.DeviceDomain;
import io.jrdma.reactive.internal.loop.SharedReceiver;
import io.jrdma.reactive.internal.observe.ConnectionMeters;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * What both listeners share: the connections they accepted, and what a server shares among them
 * per device, its shared receive queue and its shared exposed region. Those outlive the listening:
 * they go once the server is closed and the last of its connections is destroyed (an SRQ cannot
 * be destroyed while a QP uses it; an exposed region must stay until no QP can reach it).
 */
public abstract class Listener {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.server");

    final ResourcesCore resources;
    final ServerSettings settings;
    private final AcceptedConnections<ConnectionCore> connections = new AcceptedConnections<>();
    private final Map<DeviceDomain, SharedReceiver> receivers = new HashMap<>();      // guarded by this
    private final Map<DeviceDomain, RegisteredBuffer> regions = new HashMap<>();      // guarded by this
    private final Map<SharedReceiver, SharedCredits> sharedCredits = new HashMap<>(); // guarded by this
    private final Sinks.Empty<Void> sharedReleased = Sinks.empty();
    private Mono<Void> closed;                                                        // guarded by this
    /** NONE until bound ({@link #bound}). */
    private volatile ConnectionMeters meters = ConnectionMeters.NONE;
    /** With metrics on, when each connection in set-up was made (System.nanoTime()), for {@code jrdma.accept.time}. */
    private final Map<ConnectionCore, Long> settingUp = new ConcurrentHashMap<>();

    Listener(ResourcesCore resources, ServerSettings settings) {
        this.resources = resources;
        this.settings = settings;
    }

    public abstract InetSocketAddress address();

    /** Listening on {@link #address()}: its connection meters are named by it. On the setup thread, before any request. */
    final void bound(Transport transport) {
        meters = ConnectionMeters.of(settings.config(), ConnectionMeters.Side.SERVER, Metered.transport(transport, false),
                SetupMessages.address(address()));
    }

    /** A connect request was turned away for {@code reason}. */
    final void rejected(ConnectionMeters.Rejection reason) {
        meters.rejected(reason);
    }

    /** Stops accepting; completes once the listening endpoint is freed (its port can be bound again). */
    abstract Mono<Void> stopListening();

    final boolean isClosing() {
        return connections.isClosing();
    }

    /**
     * Creates a connection for a connect request, on the least loaded loop with the server's shared
     * SRQ and region for the device, {@code setUp} adding the rest; it belongs to the server until
     * destroyed. Refused once the server is closing ({@link AcceptedConnections}' rules).
     */
    final ConnectionCore accept(DeviceDomain domain, String description, UnaryOperator<ConnectionBuilder> setUp) {
        if (!connections.reserve()) throw new ConnectionException("the server is shutting down");
        ConnectionCore core;
        try {
            core = setUp.apply(builder(domain, description)).create();
        } catch (RuntimeException e) {
            if (connections.abandon()) releaseShared();
            throw e;
        }
        connections.add(core);
        resources.track(core);
        if (meters != ConnectionMeters.NONE) settingUp.put(core, System.nanoTime());
        core.onDestroyed(() -> {
            setUp(core, false);  // destroyed before its hand-out: a set-up that failed
            if (connections.remove(core)) releaseShared();
        });
        return core;
    }

    private ConnectionBuilder builder(DeviceDomain domain, String description) {
        ConnectionBuilder b = ConnectionCore.builder(domain, resources.chooseLoop(), settings.config(), description);
        synchronized (this) {
            if (settings.srqDepth() > 0) {
                SharedReceiver r = receivers.get(domain);
                if (r == null) {
                    r = SharedReceiver.create(domain, resources.loops(), settings.srqDepth(), settings.srqMaxDepth(),
                            settings.config().bufferSize());
                    receivers.put(domain, r);
                }
                SharedCredits credits = sharedCredits.get(r);
                if (credits == null) {
                    credits = new SharedCredits(r.buffers(), r::grow);
                    r.onPostedMore(credits::reposted, credits::grew);
                    sharedCredits.put(r, credits);
                }
                b.sharedReceiveQueue(r, credits);
            }
            if (settings.sharedExposedBytes() > 0) {
                RegisteredBuffer region = regions.get(domain);
                if (region == null) {
                    Set<Access> access = EnumSet.of(Access.LOCAL_WRITE);  // and exactly the remote access listed (DeviceDomain.pool)
                    access.addAll(settings.sharedExposedAccess());
                    region = domain.region(settings.sharedExposedBytes(), access);
                    regions.put(domain, region);
                }
                b.sharedExposed(region);
            }
        }
        return b;
    }

    /** Established: to the application, unless the server is closing. */
    final void handOut(ConnectionCore core) {
        if (isClosing()) {
            core.close().subscribe();
            return;
        }
        setUp(core, true);
        Metered.opened(meters, core);
        settings.onConnection().accept(core);
    }

    /** {@code core}'s set-up ended: timed once, at its hand-out or its destruction, whichever comes first. */
    private void setUp(ConnectionCore core, boolean established) {
        if (settingUp.isEmpty()) return;
        Long since = settingUp.remove(core);
        if (since != null) meters.accepted(System.nanoTime() - since, established);
    }

    /** The server's shared region on {@code domain}, if it exposes one and a client of that device connected. */
    public final synchronized Optional<RegisteredBuffer> sharedRegion(String deviceName) {
        return regions.entrySet().stream().filter(e -> e.getKey().deviceName().equals(deviceName)).map(Map.Entry::getValue).findFirst();
    }

    /** The server's SRQs, one per device a client connected through. */
    public final synchronized List<SharedReceiver> sharedReceivers() {
        return List.copyOf(receivers.values());
    }

    /**
     * Stops accepting and closes every connection it accepted, concurrently; completes once they
     * are destroyed and the shared SRQs and regions are freed. Never blocks.
     */
    public final Mono<Void> close() {
        List<ConnectionCore> toClose;
        Mono<Void> done;
        synchronized (this) {
            toClose = connections.close();
            if (toClose == null) return closed;
            done = closed = Mono.when(stopListening(), sharedReleased.asMono()).cache();
        }
        resources.untrack(this);
        if (connections.releaseIfIdle()) releaseShared();
        Disposal.closeAll(toClose, ConnectionCore::close).subscribe(null, e -> LOG.warn("closing " + this + " failed", e));
        return done;
    }

    private void releaseShared() {
        List<SharedReceiver> srqs;
        List<RegisteredBuffer> shared;
        synchronized (this) {
            srqs = List.copyOf(receivers.values());
            shared = List.copyOf(regions.values());
            receivers.clear();
            sharedCredits.clear();
            regions.clear();
        }
        srqs.forEach(SharedReceiver::close);
        shared.forEach(RegisteredBuffer::release);
        sharedReleased.tryEmitEmpty();
    }

    @Override
    public String toString() {
        return "the listener on " + SetupMessages.address(address());
    }
}
