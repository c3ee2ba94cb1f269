package io.jrdma.reactive;

import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.ConnectionParameters;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.PortSpace;
import io.jrdma.ffm.RdmaTimeoutException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Predicate;
import reactor.core.publisher.Mono;

/**
 * The passive side of rdma_cm: one thread reads the listener's event channel, accepts or rejects
 * connect requests, hands established connections out and routes DISCONNECTED to them.
 */
final class CmListener implements AcceptLoop {
    private final ConnectionConfig config;
    private final RdmaResources resources;
    private final Predicate<InetSocketAddress> acceptFilter;
    private final Consumer<RdmaConnection> onConnection;
    private final EventChannel channel;
    private final CmId listenId;
    private final InetSocketAddress address;
    private final Map<CmId, RdmaConnection> connections = new ConcurrentHashMap<>();
    /**
     * The channel's users: the listener itself (until {@link #close()}) and every accepted id not
     * yet destroyed. An accepted connection frees its id only once the application has returned
     * its buffers, possibly long after the server stopped, and the channel must outlive its ids.
     */
    private final AtomicInteger liveIds = new AtomicInteger(1);
    /** The listen id and the listener's share of the channel go once close() was called and the thread left. */
    private final EventLoopStop loop;

    CmListener(ConnectionConfig config, RdmaResources resources, InetSocketAddress bindAddress, int backlog,
               Predicate<InetSocketAddress> acceptFilter, Consumer<RdmaConnection> onConnection) {
        this.config = config;
        this.resources = resources;
        this.acceptFilter = acceptFilter;
        this.onConnection = onConnection;
        this.channel = EventChannel.create();
        try {
            this.listenId = CmId.create(channel, PortSpace.TCP);
            listenId.setReuseAddress(true);
            listenId.bind(bindAddress);
            listenId.listen(backlog);
            this.address = listenId.localAddress();
        } catch (RuntimeException e) {
            channel.close();
            throw e;
        }
        this.loop = new EventLoopStop(() -> {
            listenId.close();
            releaseChannel();
        });
    }

    @Override
    public InetSocketAddress address() {
        return address;
    }

    @Override
    public void run() {
        try {
            while (!loop.stopping()) {
                CmEvent e;
                try {
                    e = channel.next(CmConnector.EVENT_WAIT, loop.wakeup());
                } catch (RdmaTimeoutException timeout) {
                    continue;
                }
                if (e != null) handle(e);
            }
        } catch (RuntimeException e) {
            System.getLogger("io.jrdma.reactive").log(System.Logger.Level.ERROR,
                    "the rdma_cm listener on " + address + " stopped accepting", e);
        } finally {
            loop.exited();
        }
    }

    @Override
    public void neverStarted() {
        loop.exited();
    }

    private void handle(CmEvent e) {
        switch (e.type()) {
            case CONNECT_REQUEST -> onConnectRequest(e);
            case ESTABLISHED -> {
                RdmaConnection c = connections.get(e.id());
                if (c != null) {
                    c.start();
                    onConnection.accept(c);
                }
            }
            case DISCONNECTED, DEVICE_REMOVAL -> {
                RdmaConnection c = connections.remove(e.id());
                if (c != null) c.peerClosed("the peer disconnected");
            }
            case CONNECT_ERROR, UNREACHABLE, REJECTED -> {
                RdmaConnection c = connections.remove(e.id());
                if (c != null) c.abort(new ConnectionException("accepting failed: " + e));
            }
            default -> { }
        }
    }

    private void onConnectRequest(CmEvent e) {
        CmId id = e.id();
        InetSocketAddress peer = id.remoteAddress();
        ConnectionDescriptor theirs;
        try {
            theirs = ConnectionDescriptor.decode(e.privateData());
        } catch (ConnectionException.Protocol p) {
            reject(id, "bad descriptor: " + p.getMessage());
            return;
        }
        if (!acceptFilter.test(peer)) {
            reject(id, "rejected by server");
            return;
        }
        RdmaConnection connection = null;
        try {
            ConnectionResources res = ConnectionResources.create(id.context(), false, config, id::createQueuePair);
            res.cmId = id;
            connection = new RdmaConnection(res, config, resources, "rdma_cm " + address + " <- " + peer);
            liveIds.incrementAndGet();
            res.closeCm = () -> {
                try {
                    id.close();
                } finally {
                    releaseChannel();
                }
            };
            connection.remote(theirs.exposed());
            connection.postInitialReceives();
            connections.put(id, connection);
            ConnectionDescriptor mine = new ConnectionDescriptor(config.receiveQueueDepth(), config.bufferSize(), res.exposedDescriptor());
            id.accept(ConnectionParameters.defaults().withPrivateData(mine.encode()));
            RdmaConnection c = connection;
            connection.onClose().subscribe(null, null, () -> connections.remove(id, c));
        } catch (RuntimeException ex) {
            System.getLogger("io.jrdma.reactive").log(System.Logger.Level.WARNING, "accepting " + peer + " failed", ex);
            if (connection != null) {
                connections.remove(id);
                connection.abort(ex);
            } else {
                reject(id, "server error: " + ex.getMessage());
            }
        }
    }

    private static void reject(CmId id, String reason) {
        byte[] r = reason.getBytes(StandardCharsets.UTF_8);
        byte[] data = java.util.Arrays.copyOf(r, Math.min(r.length, CmId.MAX_PRIVATE_DATA_REJECT));
        try {
            id.reject(data);
        } finally {
            id.close();
        }
    }

    /**
     * Stops accepting and closes the connections it accepted, without blocking: the listener
     * thread wakes up and leaves, then its connections (established or still being accepted) close
     * concurrently. Completes when all of that is done.
     */
    @Override
    public Mono<Void> close() {
        return loop.stop().then(Mono.defer(() -> Disposal.closeAll(connections.values())));
    }

    private void releaseChannel() {
        if (liveIds.decrementAndGet() == 0) channel.close();
    }
}
