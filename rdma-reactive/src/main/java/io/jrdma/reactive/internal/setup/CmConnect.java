package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmException;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.RdmaException;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.internal.ResourcesCore;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/**
 * The active side of an rdma_cm connection, driven by its events on the resources' event thread:
 * resolve the address, resolve the route, create the QP (on its loop's shared CQ) and post the
 * receives, connect with the connection descriptor, and on ESTABLISHED hand the connection out.
 * After that it routes DISCONNECTED to the connection. Any failure, the connect timeout or a
 * cancellation undoes what was created and reports once.
 */
final class CmConnect implements CmEvents.Handler {
    private final ResourcesCore resources;
    private final CmEvents events;
    private final ConnectionConfig config;
    private final InetSocketAddress local;
    private final InetSocketAddress remote;
    private final SetupCallback callback;
    /** The application's own connect private data, or null for jrdma's descriptor. */
    private final byte[] raw;
    private final long deadline;
    private final String description;
    private CmId id;
    private ConnectionCore core;
    private boolean done;
    private Disposable timer;

    private CmConnect(ResourcesCore resources, ConnectionConfig config, InetSocketAddress local, InetSocketAddress remote,
                      byte[] raw, SetupCallback callback) {
        this.raw = raw;
        this.resources = resources;
        this.events = resources.cm();
        this.config = config;
        this.local = local;
        this.remote = remote;
        this.callback = callback;
        this.deadline = System.nanoTime() + config.connectTimeout().toNanos();
        this.description = "rdma_cm " + (local == null ? "" : local + " ") + "-> " + remote;
    }

    /** Starts connecting; the returned action cancels a setup still in progress. */
    static Runnable start(ResourcesCore resources, ConnectionConfig config, InetSocketAddress local, InetSocketAddress remote,
                          byte[] raw, SetupCallback callback) {
        CmConnect c = new CmConnect(resources, config, local, remote, raw, callback);
        c.events.execute(c::begin);
        return () -> c.events.execute(() -> c.fail(new CancellationException("connecting to " + remote + " was cancelled")));
    }

    private void begin() {
        try {
            timer = Schedulers.parallel().schedule(() -> events.execute(() -> fail(new ConnectionException.Timeout(
                    "connecting to " + remote + " timed out after " + config.connectTimeout().toMillis() + " ms"))),
                    config.connectTimeout().toNanos(), TimeUnit.NANOSECONDS);
            id = events.create(this);
            id.resolveAddress(local, remote, left());
        } catch (RuntimeException e) {
            fail(e);
        }
    }

    private Duration left() {
        return Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime()));
    }

    @Override
    public void onEvent(CmEvent e) {
        if (done) {
            if (core != null && (e.type() == CmEventType.DISCONNECTED || e.type() == CmEventType.DEVICE_REMOVAL)) {
                if (e.type() == CmEventType.DISCONNECTED) core.peerClosed("the peer disconnected");
                else core.peerLost("the RDMA device was removed");
            }
            return;
        }
        try {
            switch (e.type()) {
                case ADDR_RESOLVED -> id.resolveRoute(left());
                case ROUTE_RESOLVED -> connect();
                case ESTABLISHED -> established(e);
                default -> fail(CmException.of(e, core == null ? "address and route resolution" : "ESTABLISHED"));
            }
        } catch (RuntimeException ex) {
            fail(ex);
        }
    }

    private void connect() {
        CmId cmId = id;
        core = ConnectionCore.builder(resources.domains().of(id.context()), resources.chooseLoop(), config, description)
                .queuePairFactory(cmId::createQueuePair)
                .teardown(new CmTeardown(events, cmId))
                .create();
        resources.track(core);
        // receives are posted before connecting: the server may send the moment it is established
        core.postReceives();
        byte[] data = raw != null ? raw : ConnectionDescriptor.of(config, core.exposed()).encode();
        Parameters.ackTimeout(config, id);
        id.connect(Parameters.cm(config, data));
    }

    private void established(CmEvent e) {
        RemoteBuffer exposed = raw != null ? null : ConnectionDescriptor.decode(e.privateData()).exposed();
        done = true;
        timer.dispose();
        core.established(exposed, e.privateData());
        callback.established(core);
    }

    private void fail(Throwable t) {
        if (done) return;
        done = true;
        if (timer != null) timer.dispose();
        if (core != null) core.abort(t);  // destroys the QP, then the id (its teardown)
        else if (id != null) events.destroy(id);
        callback.failed(translate(t, remote));
    }

    static Throwable translate(Throwable e, InetSocketAddress remote) {
        if (e instanceof CmException cm) {
            return switch (cm.event()) {
                case REJECTED -> new ConnectionException.Rejected("connection to " + remote + " rejected: " + cm.getMessage()
                        + ConnectionDescriptor.reason(cm.privateData()), cm.privateData(), cm);
                case UNREACHABLE, ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR ->
                        new ConnectionException.Unreachable(remote + " is unreachable: " + cm.getMessage(), cm);
                default -> new ConnectionException("connecting to " + remote + " failed: " + cm.getMessage(), cm);
            };
        }
        if (e instanceof ConnectionException || e instanceof CancellationException) return e;
        if (e instanceof RdmaException) return new ConnectionException("connecting to " + remote + " failed: " + e.getMessage(), e);
        return e;
    }

    /** An rdma_cm connection's teardown: rdma_disconnect, and the id destroyed on the event thread after the QP. */
    static final class CmTeardown implements ConnectionCore.Teardown {
        private final CmEvents events;
        private final CmId id;

        CmTeardown(CmEvents events, CmId id) {
            this.events = events;
            this.id = id;
        }

        @Override
        public void disconnect(QueuePair qp) {
            try {
                id.disconnect();
            } catch (RuntimeException notConnected) {
                // not connected (yet): the plain transition flushes just the same
                if (!qp.isClosed()) qp.modifyToError();
            }
        }

        @Override
        public void release() {
            events.destroy(id);
        }
    }
}
