package io.jrdma.reactive;

import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmException;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.ConnectionParameters;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.PortSpace;
import io.jrdma.ffm.RdmaException;
import io.jrdma.ffm.RdmaTimeoutException;
import java.net.InetSocketAddress;
import java.time.Duration;

/** The active side of an rdma_cm connection. */
final class CmConnector {
    private CmConnector() {}

    /** How long an event thread sleeps between checks; a stop wakes it at once through its Wakeup. */
    static final Duration EVENT_WAIT = Duration.ofSeconds(5);

    static RdmaConnection connect(ConnectionConfig config, RdmaResources resources, InetSocketAddress local,
                                  InetSocketAddress remote) {
        long deadline = System.nanoTime() + config.connectTimeout().toNanos();
        EventChannel channel = EventChannel.create();
        CmId id = null;
        ConnectionResources res = null;
        RdmaConnection connection = null;
        try {
            id = CmId.create(channel, PortSpace.TCP);
            id.resolveAddress(local, remote, left(deadline));
            channel.await(id, CmEventType.ADDR_RESOLVED, left(deadline));
            id.resolveRoute(left(deadline));
            channel.await(id, CmEventType.ROUTE_RESOLVED, left(deadline));
            CmId cmId = id;
            res = ConnectionResources.create(id.context(), false, config, cmId::createQueuePair);
            res.cmId = id;
            connection = new RdmaConnection(res, config, resources, "rdma_cm " + local + " -> " + remote);
            // receives are posted before connecting: the server may send the moment it is established
            connection.postInitialReceives();
            ConnectionDescriptor mine = new ConnectionDescriptor(config.receiveQueueDepth(), config.bufferSize(), res.exposedDescriptor());
            id.connect(ConnectionParameters.defaults().withPrivateData(mine.encode()));
            CmEvent established = channel.await(id, CmEventType.ESTABLISHED, left(deadline));
            connection.remote(ConnectionDescriptor.decode(established.privateData()).exposed());
            Watcher watcher = new Watcher(channel, id, connection);
            res.closeCm = watcher::stop;
            try {
                resources.newThread("cm-events", watcher).start();
            } catch (RuntimeException e) {
                watcher.loop.exited();  // it never ran: closing the connection frees id and channel through it
                throw e;
            }
            connection.start();
            return connection;
        } catch (RuntimeException e) {
            if (connection != null) connection.abort(e);  // destroys the QP, then frees its buffers and resources
            else if (res != null) res.close();
            else if (id != null) id.close();
            try {
                channel.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw translate(e, remote);
        }
    }

    static Duration left(long deadline) {
        long n = deadline - System.nanoTime();
        if (n <= 0) throw new RdmaTimeoutException("connection setup", Duration.ZERO);
        return Duration.ofNanos(n);
    }

    static RuntimeException translate(RuntimeException e, InetSocketAddress remote) {
        if (e instanceof CmException cm) {
            return switch (cm.event()) {
                case REJECTED -> new ConnectionException.Rejected("connection to " + remote + " rejected: " + cm.getMessage(),
                        cm.privateData(), cm);
                case UNREACHABLE, ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR ->
                        new ConnectionException.Unreachable(remote + " is unreachable: " + cm.getMessage(), cm);
                default -> new ConnectionException("connecting to " + remote + " failed: " + cm.getMessage(), cm);
            };
        }
        if (e instanceof RdmaTimeoutException) {
            return new ConnectionException.Timeout("connecting to " + remote + " timed out: " + e.getMessage());
        }
        if (e instanceof ConnectionException) return e;
        if (e instanceof RdmaException) return new ConnectionException("connecting to " + remote + " failed: " + e.getMessage(), e);
        return e;
    }

    /**
     * Reads the client connection's own event channel: DISCONNECTED closes the connection. The
     * channel and id are freed once both the connection asked for it and this thread has left.
     */
    static final class Watcher implements Runnable {
        private final EventChannel channel;
        private final RdmaConnection connection;
        final EventLoopStop loop;

        Watcher(EventChannel channel, CmId id, RdmaConnection connection) {
            this.channel = channel;
            this.connection = connection;
            this.loop = new EventLoopStop(() -> {
                id.close();
                channel.close();
            });
        }

        @Override
        public void run() {
            try {
                while (!loop.stopping()) {
                    CmEvent e;
                    try {
                        e = channel.next(EVENT_WAIT, loop.wakeup());
                    } catch (RdmaTimeoutException timeout) {
                        continue;
                    }
                    if (e == null) continue;  // woken: the loop condition decides
                    if (e.type() == CmEventType.DISCONNECTED || e.type() == CmEventType.DEVICE_REMOVAL) {
                        connection.peerClosed(e.type() == CmEventType.DISCONNECTED ? "the peer disconnected" : "the RDMA device was removed");
                    }
                }
            } catch (RuntimeException e) {
                connection.beginClose(e);
            } finally {
                loop.exited();
            }
        }

        /** Called as the connection frees its resources; never blocks. */
        void stop() {
            loop.stop();
        }
    }
}
