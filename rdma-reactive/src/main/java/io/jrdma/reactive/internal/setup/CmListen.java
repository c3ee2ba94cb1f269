package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmException;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.VerbsException;
import io.jrdma.reactive.AcceptDecision;
import io.jrdma.reactive.ConnectRequest;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.loop.DeviceDomain;
import io.jrdma.reactive.internal.observe.ConnectionMeters.Rejection;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.net.InetSocketAddress;
import java.util.Arrays;
import java.util.Optional;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The passive side of rdma_cm on the resources' event thread: accepts or rejects (with the reason,
 * logged and sent to the peer) each connect request, creates the connection on a loop with
 * receives posted before accepting, hands it out on ESTABLISHED (or on a DISCONNECTED that came
 * first) and routes DISCONNECTED to it.
 *
 * <p>With a {@link io.jrdma.reactive.PeerAuthentication}, a request is checked in this order,
 * each step rejecting with its reason: the server still listens, the client has not given up, its
 * descriptor is jrdma's, the accept filter lets its address in, its proof passes. Only then is
 * anything created for it (QP, CQ, registered memory); the accept carries the server's descriptor
 * and proof, and QP and rkey reach the client only through it.
 */
final class CmListen extends Listener implements CmEvents.Handler {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.server");

    private final CmEvents events;
    private CmId listenId;
    private InetSocketAddress address;

    private CmListen(ResourcesCore resources, ServerSettings settings) {
        super(resources, settings);
        this.events = resources.cm();
    }

    /** Binds and listens on the event thread; emits the listener once it accepts connections. */
    static Mono<Listener> bind(ResourcesCore resources, ServerSettings settings) {
        Sinks.One<Listener> bound = Sinks.one();
        CmListen l = new CmListen(resources, settings);
        l.events.execute(() -> {
            try {
                l.listenId = l.events.create(l);
                l.listenId.setReuseAddress(true);
                l.listenId.bind(settings.bindAddress());
                l.listenId.listen(settings.backlog());
                l.address = l.listenId.localAddress();
                l.bound(Transport.RDMA_CM);
                resources.track(l);
                bound.tryEmitValue(l);
            } catch (RuntimeException e) {
                if (l.listenId != null) l.events.destroy(l.listenId);
                bound.tryEmitError(e instanceof VerbsException v ? cannotListen(settings.bindAddress(), v) : e);
            }
        });
        return bound.asMono();
    }

    private static ConnectionException cannotListen(InetSocketAddress at, VerbsException e) {
        String remedy = switch (e.errno()) {
            case 98 -> ": another server listens there; stop it, or pick another port";                  // EADDRINUSE
            case 99, 19 -> ": listen on an address of this host's RDMA devices, or on 0.0.0.0";         // EADDRNOTAVAIL, ENODEV
            default -> "";
        };
        return new ConnectionException("cannot listen on " + SetupMessages.address(at) + " (rdma_cm): " + e.getMessage() + remedy, e);
    }

    @Override
    public InetSocketAddress address() {
        return address;
    }

    @Override
    public void onEvent(CmEvent e) {
        if (e.type() == CmEventType.CONNECT_REQUEST) onConnectRequest(e);
        else if (LOG.isDebugEnabled()) LOG.debug("listener " + SetupMessages.address(address) + ": " + e.type());
    }

    private void onConnectRequest(CmEvent e) {
        CmId id = e.id();
        InetSocketAddress peer = id.remoteAddress();
        if (isClosing()) {
            reject(id, peer, Rejection.SHUTTING_DOWN, "the server is shutting down", "");
            return;
        }
        // A request waits in the event channel while those before it are served; under a burst its
        // client may give up first (connect timeout, killed), and its CM's reject moves the kernel's
        // side of the request on. Accepting it then fails at rdma_create_qp with EINVAL, after the
        // connection's CQ and registered memory were made for nobody: drop it before any of that.
        if (clientGaveUp(id, peer)) return;
        ConnectionDescriptor theirs = null;
        if (settings.rawAccept() == null) {
            try {
                theirs = ConnectionDescriptor.decode(e.privateData());
            } catch (ConnectionException.Protocol p) {
                reject(id, peer, Rejection.MALFORMED, "not a jrdma client: " + p.getMessage() + " in its connect request",
                        "; a client that is not jrdma needs a server with acceptRaw");
                return;
            }
        }
        if (!settings.acceptFilter().test(peer)) {
            reject(id, peer, Rejection.FILTERED, "the server does not accept connections from " + SetupMessages.host(peer), "");
            return;
        }
        InetSocketAddress here = id.localAddress();  // the address the client reached, not a wildcard listener's
        if (here == null) here = address;
        SetupAuthentication proven = null;
        if (settings.authentication() != null) {
            try {
                byte[] data = e.privateData();
                int n = settings.authentication().clientProofBytes();
                byte[] setup = SetupAuthentication.cmSetup(e.remoteQpNumber(), Arrays.copyOf(data, ConnectionDescriptor.SIZE));
                proven = SetupAuthentication.server(settings.authentication(), Transport.RDMA_CM, here, peer, setup, SetupAuthentication.CM_DESCRIPTOR_AT,
                        data.length >= ConnectionDescriptor.SIZE + n ? Arrays.copyOfRange(data, ConnectionDescriptor.SIZE, ConnectionDescriptor.SIZE + n) : null);
            } catch (ConnectionException.Authentication refused) {
                reject(id, peer, Rejection.AUTHENTICATION, refused.getMessage(), "");
                return;
            }
        }
        ConnectionCore core;
        try {
            DeviceDomain domain = resources.domains().of(id.context());
            InetSocketAddress at = here;
            core = accept(domain, "rdma_cm " + SetupMessages.address(here) + " <- " + SetupMessages.address(peer), b -> {
                b.queuePairFactory(id::createQueuePair).teardown(new CmConnect.CmTeardown(events, id)).addresses(at, peer);
                if (settings.rawAccept() == null && settings.config().receiverCredits()) b.speaksCredits();  // raw private data: a C peer, which grants no credits
                return b;
            });
        } catch (RuntimeException ex) {
            if (clientGaveUp(id, peer)) return;  // it gave up after the check above: why rdma_create_qp failed
            logRefused(peer, ex);
            rejected(isClosing() ? Rejection.SHUTTING_DOWN : Rejection.RESOURCES);
            reject(id, SetupMessages.forPeer(ex, SetupMessages.CM_REJECT_BYTES));
            return;
        }
        events.handle(id, new Accepted(core, theirs == null ? null : theirs.exposed(), e.privateData()));
        try {
            byte[] mine;
            if (settings.rawAccept() == null) {
                core.peerDescribed(theirs.credits(), theirs.receiveDepth(), theirs.large(), theirs.receiveBufferSize());  // before the QP can receive: RTS comes with the accept
                mine = ConnectionDescriptor.of(settings.config(), core).encode();
                if (proven != null) {
                    mine = SetupAuthentication.flagged(mine, 0);
                    mine = CmConnect.concat(mine, proven.serverProof(mine));  // 32 + at most 164: rdma_cm's 196 bytes
                }
            } else {
                AcceptDecision decision = decide(peer, e.privateData(), core);
                if (decision instanceof AcceptDecision.Reject r) {
                    LOG.info("rejected a connection from " + SetupMessages.address(peer) + " on " + SetupMessages.address(address)
                            + ": " + r.reason());
                    rejected(Rejection.APPLICATION);
                    byte[] reason = r.bytes();
                    id.reject(Arrays.copyOf(reason, Math.min(reason.length, CmId.MAX_PRIVATE_DATA_REJECT)));
                    core.abort(new ConnectionException.Rejected("rejected by the server: " + r.reason(), reason, null));
                    return;
                }
                mine = ((AcceptDecision.Accept) decision).privateData();
            }
            core.postReceives();  // before accepting: the client may send the moment it is established
            byte[] accepted = mine;
            core.setUp(qp -> {  // rdma_accept moves the QP to RTR and RTS itself
                Parameters.ackTimeout(settings.config(), id);
                id.accept(Parameters.cm(settings.config(), accepted));
                // a peer with receiver credits never meets an empty shared queue: 655 ms only for the others
                Parameters.minRnrTimer(settings.config(), settings.srqDepth() > 0 && core.peerCredits() < 0, qp, core.description());
            });
        } catch (RuntimeException ex) {
            if (gaveUp(id)) {
                LOG.info(droppedLine(peer));
                core.abort(new ConnectionException("the client gave up before its connection was accepted"));
                return;
            }
            // not accepted (the accept is the last step): the client learns why instead of a bare reject
            logRefused(peer, ex);
            rejected(Rejection.RESOURCES);
            try {
                id.reject(SetupMessages.rejectBytes(SetupMessages.forPeer(ex, SetupMessages.CM_REJECT_BYTES), SetupMessages.CM_REJECT_BYTES));
            } catch (RuntimeException notAnyMore) {
                if (LOG.isDebugEnabled()) LOG.debug("rejecting " + SetupMessages.address(peer) + " failed: " + notAnyMore.getMessage());
            }
            core.abort(ex);
        }
    }

    /** Drops (destroys, unanswered: nobody would read a reject) a request whose client gave up; true if it did. */
    private boolean clientGaveUp(CmId id, InetSocketAddress peer) {
        if (!gaveUp(id)) return false;
        LOG.info(droppedLine(peer));
        id.close();
        return true;
    }

    private static boolean gaveUp(CmId id) {
        try {
            return !id.isConnectionAlive();
        } catch (RuntimeException e) {
            return false;  // unknown: the accept goes ahead and reports what fails
        }
    }

    private String droppedLine(InetSocketAddress peer) {
        return "dropped a connect request from " + SetupMessages.address(peer) + " on " + SetupMessages.address(address)
                + ": its client gave up (timed out, closed or was killed) before the server got to it";
    }

    /** The application's answer; a function that throws rejects, saying so. */
    private AcceptDecision decide(InetSocketAddress peer, byte[] privateData, ConnectionCore core) {
        try {
            AcceptDecision d = settings.rawAccept().apply(new ConnectRequest(peer, privateData, Optional.ofNullable(core.exposed())));
            return d == null ? AcceptDecision.reject("the server's accept function returned nothing") : d;
        } catch (RuntimeException e) {
            // the application's own code: its stack trace is what its developer needs
            LOG.warn("the accept function failed for " + SetupMessages.address(peer) + " on " + SetupMessages.address(address), e);
            return AcceptDecision.reject("the server's accept function failed: " + SetupMessages.text(e));
        }
    }

    /** One line in the server's log: who was turned away and why, with the remedy the failure names; a stack trace only for a bug. */
    private void logRefused(InetSocketAddress peer, RuntimeException ex) {
        String line = "could not accept a connection from " + SetupMessages.address(peer) + " on " + SetupMessages.address(address)
                + ", rejected it: " + SetupMessages.text(ex);
        if (SetupMessages.expected(ex)) LOG.warn(line);
        else LOG.warn(line, ex);
    }

    /** Turns a request away for a reason of the peer's making, logged at INFO (with {@code serverHint} for the operator). */
    private void reject(CmId id, InetSocketAddress peer, Rejection why, String reason, String serverHint) {
        rejected(why);
        LOG.info("rejected a connection from " + SetupMessages.address(peer) + " on " + SetupMessages.address(address)
                + ": " + reason + serverHint);
        reject(id, reason);
    }

    /** Rejects with {@code reason} and destroys the id (nobody handles it: here, on the event thread). */
    private void reject(CmId id, String reason) {
        try {
            id.reject(SetupMessages.rejectBytes(reason, SetupMessages.CM_REJECT_BYTES));
        } catch (RuntimeException e) {
            if (LOG.isDebugEnabled()) LOG.debug("rejecting a connect request failed: " + e.getMessage());
        } finally {
            id.close();
        }
    }

    /** An accepted id's events: ESTABLISHED hands the connection out, DISCONNECTED too if it came first; the rest close it. */
    private final class Accepted implements CmEvents.Handler {
        private final ConnectionCore core;
        private final RemoteBuffer peerExposed;
        private final byte[] privateData;
        private boolean established;

        Accepted(ConnectionCore core, RemoteBuffer peerExposed, byte[] privateData) {
            this.core = core;
            this.peerExposed = peerExposed;
            this.privateData = privateData;
        }

        @Override
        public void onEvent(CmEvent e) {
            switch (e.type()) {
                case ESTABLISHED -> establish();
                case DISCONNECTED -> {
                    // The peer's RTU makes ESTABLISHED here. When it is lost (a MAD goes once, and
                    // again only when our REP's retransmission reaches the peer) or handled after
                    // the peer's DREQ, the IB CM reports the DREQ alone and drops the late RTU. The
                    // connection was up all the same (our QP is RTS since accept, the peer's SENDs
                    // and WRITEs arrived), so it is handed out and then closed as the peer left it,
                    // like one whose RTU came first; not handing it out lost what a client sent.
                    establish();
                    core.peerClosed("the peer disconnected");
                }
                case DEVICE_REMOVAL -> core.peerLost("the RDMA device was removed");
                case CONNECT_ERROR, UNREACHABLE, REJECTED -> core.abort(new ConnectionException("accepting failed: " + CmException.of(e, "ESTABLISHED").getMessage()));
                default -> { }
            }
        }

        private void establish() {
            if (established) return;
            established = true;
            core.established(peerExposed, privateData);
            handOut(core);
        }
    }

    @Override
    Mono<Void> stopListening() {
        Sinks.Empty<Void> stopped = Sinks.empty();
        // refused: the thread destroyed the id as it stopped
        if (!SetupTasks.offer(events, () -> {
            if (listenId != null) events.destroy(listenId);
            stopped.tryEmitEmpty();
        })) stopped.tryEmitEmpty();
        return stopped.asMono();
    }
}
