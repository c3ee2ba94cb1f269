package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmException;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.RdmaException;
import io.jrdma.ffm.VerbsException;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.PeerAuthentication;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.internal.core.ConnectionBuilder;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.core.Teardown;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CancellationException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import reactor.core.Disposable;
import reactor.core.scheduler.Schedulers;

/**
 * The active side of an rdma_cm connection, driven by its events on the resources' event thread:
 * resolve the address, resolve the route, create the QP (on its loop's shared CQ) and post the
 * receives, connect with the connection descriptor, and on ESTABLISHED hand the connection out.
 * After that it routes DISCONNECTED to the connection. Any failure, the connect timeout or a
 * cancellation undoes what was created and reports once.
 *
 * <p>With a {@link io.jrdma.reactive.PeerAuthentication}, the connect request carries the client's
 * proof after the descriptor (56 bytes of private data in all; the proof binds the QP number in the
 * request's header too, {@link SetupAuthentication#cmSetup}), and the server's proof after its
 * descriptor in the accept is checked on ESTABLISHED, before the connection is handed out: a
 * server that fails is disconnected and the connect fails with {@link ConnectionException.Authentication}.
 * librdmacm has moved the QP to RTS by then (it does so on the reply, before the event); nothing
 * was posted to the peer but receives, and the connection is destroyed unused.
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
    /** What proves this client and checks the server, or null. */
    private final PeerAuthentication authentication;
    private SetupAuthentication proof;
    private final long deadline;
    private String description;
    /** What the setup waits for now, for a timeout's message. */
    private volatile String awaiting = "address resolution (ARP) to finish";  // volatile, as timer: the connect timer reads it
    private CmId id;
    private ConnectionCore core;
    private boolean done;
    private volatile Disposable timer;
    private final AtomicBoolean told = new AtomicBoolean();  // the callback has had its one signal

    private CmConnect(ResourcesCore resources, ConnectionConfig config, InetSocketAddress local, InetSocketAddress remote,
                      SetupOptions options, SetupCallback callback) {
        this.raw = options.rawConnectData();
        this.authentication = options.authentication();
        this.resources = resources;
        this.events = resources.cm();
        this.config = config;
        this.local = local;
        this.remote = remote;
        this.callback = callback;
        this.deadline = System.nanoTime() + config.connectTimeout().toNanos();
        this.description = "rdma_cm -> " + SetupMessages.address(remote);
    }

    /** Starts connecting; the returned action cancels a setup still in progress. */
    static Runnable start(ResourcesCore resources, ConnectionConfig config, InetSocketAddress local, InetSocketAddress remote,
                          SetupOptions options, SetupCallback callback) {
        CmConnect c = new CmConnect(resources, config, local, remote, options, callback);
        c.armTimer();  // the connect timeout counts from here, not from when the rdma_cm thread gets to this setup
        if (!SetupTasks.offer(c.events, c::begin)) c.fail(SetupTasks.refused(resources));
        return () -> SetupTasks.offer(c.events, () -> c.fail(new CancellationException("connecting to " + SetupMessages.address(remote) + " was cancelled")));
    }

    /**
     * The subscriber is told of its timeout when the timer fires, not when the rdma_cm thread is
     * next free (it makes every setup's verbs calls; on a loaded host they took the time a connect
     * timeout promises); the id and QP are then released on that thread, in order.
     */
    private void armTimer() {
        timer = Schedulers.parallel().schedule(() -> {
            ConnectionException.Timeout t = new ConnectionException.Timeout("connecting to " + SetupMessages.address(remote)
                    + " over rdma_cm did not finish within the connect timeout of " + SetupMessages.duration(config.connectTimeout())
                    + ": it waited for " + awaiting);
            failClient(t);
            SetupTasks.offer(events, () -> fail(t));
        }, config.connectTimeout().toNanos(), TimeUnit.NANOSECONDS);
    }

    /** The callback's one failure signal: none when it had its signal already (the timer's, say). */
    private void failClient(Throwable error) {
        if (told.compareAndSet(false, true)) callback.failed(error);
    }

    private void begin() {
        if (told.get()) {  // timed out while the rdma_cm thread was busy: nothing to start
            fail(new CancellationException("connecting to " + SetupMessages.address(remote) + " timed out before it started"));
            return;
        }
        try {
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
                case ADDR_RESOLVED -> {
                    awaiting = "route resolution to finish";
                    id.resolveRoute(left());
                }
                case ROUTE_RESOLVED -> {
                    awaiting = "the server's reply to the connect request";
                    connect();
                }
                case ESTABLISHED -> established(e);
                default -> fail(CmException.of(e, core == null ? "address and route resolution" : "ESTABLISHED"));
            }
        } catch (RuntimeException ex) {
            fail(ex);
        }
    }

    private void connect() {
        CmId cmId = id;
        InetSocketAddress from = id.localAddress();
        description = "rdma_cm " + (from == null ? "" : SetupMessages.address(from) + " ") + "-> " + SetupMessages.address(remote);
        ConnectionBuilder b = ConnectionCore.builder(resources.domains().of(id.context()), resources.chooseLoop(), config, description)
                .queuePairFactory(cmId::createQueuePair)
                .teardown(new CmTeardown(events, cmId)).addresses(from, remote);
        if (raw == null && config.receiverCredits()) b.speaksCredits();
        core = b.create();
        resources.track(core);
        // receives are posted before connecting: the server may send the moment it is established
        core.postReceives();
        byte[] data = raw != null ? raw : ConnectionDescriptor.of(config, core).encode();
        if (authentication != null) {
            proof = SetupAuthentication.client(authentication, Transport.RDMA_CM, remote, from,
                    SetupAuthentication.cmSetup(core.qpNumber(), data), SetupAuthentication.CM_DESCRIPTOR_AT);
            byte[] setup = proof.clientSetup();  // the QP number goes in the request's header: the descriptor and proof here
            data = concat(Arrays.copyOfRange(setup, SetupAuthentication.CM_DESCRIPTOR_AT, setup.length), proof.clientProof());  // 32 + 24: rdma_cm's 56 bytes
        }
        byte[] request = data;
        core.setUp(qp -> {
            Parameters.ackTimeout(config, id);
            id.connect(Parameters.cm(config, request));
        });
    }

    private void established(CmEvent e) {
        RemoteBuffer exposed = null;
        if (raw == null) {
            ConnectionDescriptor theirs;
            try {
                theirs = ConnectionDescriptor.decode(e.privateData());
            } catch (ConnectionException.Protocol p) {
                throw new ConnectionException.Protocol(SetupMessages.address(remote) + " is not a jrdma server: " + p.getMessage()
                        + " in its accept; to talk to a server that is not jrdma, connect with rawPrivateData");
            }
            if (proof != null) {
                byte[] data = e.privateData();
                byte[] serverProof = data.length >= ConnectionDescriptor.SIZE + authentication.serverProofBytes()
                        ? Arrays.copyOfRange(data, ConnectionDescriptor.SIZE, ConnectionDescriptor.SIZE + authentication.serverProofBytes()) : null;
                proof.verifyServer(Arrays.copyOf(data, ConnectionDescriptor.SIZE), 0, serverProof, remote);
            }
            exposed = theirs.exposed();
            // librdmacm moved the QP to RTS before this event: a message may have come; it waits until the loop knows this
            core.peerDescribed(theirs.credits(), theirs.receiveDepth(), theirs.large(), theirs.receiveBufferSize());
        }
        if (!told.compareAndSet(false, true)) {
            // its timeout was told as the accept came: nobody waits for this connection
            fail(new CancellationException("connecting to " + SetupMessages.address(remote) + " timed out as it was established"));
            return;
        }
        done = true;
        timer.dispose();
        core.setUp(qp -> Parameters.minRnrTimer(config, false, qp, core.description()));  // librdmacm moved the QP to RTS before this event
        core.established(exposed, e.privateData());
        callback.established(core);
    }

    private void fail(Throwable t) {
        if (done) return;
        done = true;
        if (timer != null) timer.dispose();
        if (core != null) core.abort(t);  // destroys the QP, then the id (its teardown)
        else if (id != null) events.destroy(id);
        failClient(translate(t, local, remote));
    }

    static byte[] concat(byte[] a, byte[] b) {
        byte[] both = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }

    static Throwable translate(Throwable e, InetSocketAddress local, InetSocketAddress remote) {
        String to = SetupMessages.address(remote);
        if (e instanceof CmException cm) {
            return switch (cm.event()) {
                case REJECTED -> rejected(cm, to);
                case UNREACHABLE -> new ConnectionException.Unreachable(to + " did not answer the connect request (rdma_cm UNREACHABLE, "
                        + errno(cm.status()) + "): is the server's host up, and its RDMA device on this network?", cm);
                case ADDR_ERROR -> new ConnectionException.Unreachable("could not resolve " + to + " to an RDMA device (rdma_cm ADDR_ERROR, "
                        + errno(cm.status()) + "): check the address, and that one of this host's RDMA devices' networks reaches it", cm);
                case ROUTE_ERROR -> new ConnectionException.Unreachable("no RDMA route to " + to + " (rdma_cm ROUTE_ERROR, "
                        + errno(cm.status()) + ")", cm);
                case CONNECT_ERROR -> new ConnectionException.Unreachable("connecting to " + to + " failed (rdma_cm CONNECT_ERROR, "
                        + errno(cm.status()) + ")", cm);
                default -> new ConnectionException("connecting to " + to + " failed: " + cm.getMessage(), cm);
            };
        }
        if (e instanceof ConnectionException || e instanceof CancellationException) return e;
        if (e instanceof RdmaException r) {
            if (r instanceof VerbsException v && v.function().startsWith("rdma_resolve_addr") && v.errno() == 99 && local != null) {
                return new ConnectionException.Unreachable("cannot connect from " + SetupMessages.host(local) + ": it is not an address of"
                        + " this host (" + r.getMessage() + "); connect from one of its RDMA devices' addresses", r);
            }
            if (r instanceof VerbsException v && v.function().startsWith("rdma_resolve_addr")) {
                return new ConnectionException.Unreachable("no RDMA device of this host reaches " + to + " (" + r.getMessage()
                        + "): check the address, or connect from an RDMA device's address", r);
            }
            return new ConnectionException("connecting to " + to + " failed: " + r.getMessage(), r);
        }
        return e;
    }

    private static ConnectionException.Rejected rejected(CmException cm, String to) {
        byte[] data = cm.privateData();
        String reason = ConnectionDescriptor.reason(data);
        String message;
        if (cm.status() == IB_CM_REJ_INVALID_SERVICE_ID) {
            message = "nothing listens for rdma_cm connections at " + to + " (IB CM reject reason 8, invalid service ID): "
                    + "start the server, or check its address, port and transport (a server that sets up over TCP is not an rdma_cm listener)";
        } else if (reason != null) {
            message = to + " rejected the connection: " + reason;
        } else if (cm.status() == IB_CM_REJ_CONSUMER_DEFINED) {
            message = to + " rejected the connection without a reason (IB CM reject reason 28, by the server's application): see the server's log";
        } else {
            message = to + " rejected the connection (IB CM reject reason " + cm.status() + ")";
        }
        return new ConnectionException.Rejected(message, data, cm);
    }

    /** rdma_cm reports errors as negative errnos; these are the ones connecting meets. */
    private static String errno(int status) {
        return switch (-status) {
            case 110 -> "ETIMEDOUT: no answer";
            case 113 -> "EHOSTUNREACH: no route to the host";
            case 101 -> "ENETUNREACH: no route to the network";
            case 111 -> "ECONNREFUSED";
            case 19 -> "ENODEV: no RDMA device for the address";
            case 99 -> "EADDRNOTAVAIL: the local address is not this host's";
            default -> status < 0 ? "errno " + -status : "status " + status;
        };
    }

    /** IB CM reject reason 8: rdma_cm's answer when nothing listens on the port. */
    private static final int IB_CM_REJ_INVALID_SERVICE_ID = 8;
    /** IB CM reject reason 28: an rdma_reject by the peer's application. */
    private static final int IB_CM_REJ_CONSUMER_DEFINED = 28;

    /**
     * An rdma_cm connection's teardown: rdma_disconnect, and the id destroyed on the event thread
     * after the QP; an id that sent a DREQ lingers for its retransmission ({@link CmEvents#destroyOnceDisconnected}).
     */
    static final class CmTeardown implements Teardown {
        private final CmEvents events;
        private final CmId id;
        /** rdma_disconnect succeeded: a DREQ went (or the DREP to the peer's). */
        private volatile boolean disconnected;

        CmTeardown(CmEvents events, CmId id) {
            this.events = events;
            this.id = id;
        }

        @Override
        public void disconnect(QueuePair qp) {
            try {
                id.disconnect();
                disconnected = true;
            } catch (RuntimeException notConnected) {
                // not connected (yet): the plain transition flushes just the same
                if (!qp.isClosed()) qp.modifyToError();
            }
        }

        @Override
        public void release() {
            if (disconnected) events.destroyOnceDisconnected(id);
            else events.destroy(id);
        }
    }
}
