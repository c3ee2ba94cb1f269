package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.Gid;
import io.jrdma.ffm.Mtu;
import io.jrdma.ffm.PortAttributes;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.ffm.RdmaException;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.OutOfBandExchange;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.core.Teardown;
import io.jrdma.reactive.internal.loop.DeviceDomain;
import java.net.InetSocketAddress;
import java.security.SecureRandom;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * Setup with an exchange the application performs itself ({@link OutOfBandExchange}): the QP is
 * created and brought to INIT with its receives posted, the application swaps addresses with the
 * peer, and the QP is driven to RTR and RTS with the peer's. The verbs steps run on the
 * resources' TCP setup thread, which has no socket to serve here; the exchange runs wherever the
 * application's {@code Mono} runs.
 */
final class OutOfBandSetup {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.tcp");

    private static final SecureRandom RANDOM = new SecureRandom();

    private final ResourcesCore resources;
    private final Executor thread;
    private final ConnectionConfig config;
    private final InetSocketAddress local;
    private final OutOfBandExchange exchange;
    private final SetupCallback callback;
    private ConnectionCore core;
    private Gid gid;
    private Mtu mtu;
    private int psn;
    private boolean done;
    private Disposable inProgress;

    private OutOfBandSetup(ResourcesCore resources, ConnectionConfig config, InetSocketAddress local, OutOfBandExchange exchange,
                           SetupCallback callback) {
        this.resources = resources;
        this.thread = resources.tcp();
        this.config = config;
        this.local = local;
        this.exchange = exchange;
        this.callback = callback;
    }

    static Runnable start(ResourcesCore resources, ConnectionConfig config, InetSocketAddress local, OutOfBandExchange exchange,
                          SetupCallback callback) {
        OutOfBandSetup s = new OutOfBandSetup(resources, config, local, exchange, callback);
        if (!SetupTasks.offer(s.thread, s::begin)) s.fail(SetupTasks.refused(resources));
        return () -> SetupTasks.offer(s.thread, () -> s.fail(new CancellationException("the out-of-band setup was cancelled")));
    }

    private void begin() {
        try {
            DeviceDomain domain;
            if (config.device() != null) {
                domain = resources.domains().named(config.device());
            } else if (local != null) {
                domain = resources.domains().owning(local.getAddress(), config.port());
            } else {
                throw new IllegalArgumentException("an out-of-band connection needs device(name, port) or localAddress(ip) to pick its device");
            }
            gid = config.gidIndex() >= 0
                    ? domain.context().queryGid(config.port(), config.gidIndex()).orElseThrow(() -> new RdmaException("GID index "
                            + config.gidIndex() + " of " + domain.deviceName() + " port " + config.port() + " is empty"))
                    : domain.context().roceV2Gid(config.port(), local.getAddress());
            PortAttributes port = domain.context().queryPort(config.port());
            mtu = Mtu.of(port.activeMtu());
            core = ConnectionCore.builder(domain, resources.chooseLoop(), config, "out-of-band " + domain.deviceName() + ":" + config.port())
                    .teardown(new Teardown() {
                        @Override
                        public void disconnect(QueuePair qp) {
                            if (!qp.isClosed()) qp.modifyToError();
                        }

                        @Override
                        public void release() {
                            // the application owns the channel it exchanged over
                        }
                    })
                    .create();
            resources.track(core);
            core.setUp(qp -> qp.modifyToInit(config.port(), config.qpAccess(false)));
            core.postReceives();
            psn = RANDOM.nextInt(1 << 24);
            OutOfBandExchange.Local mine = new OutOfBandExchange.Local(core.qpNumber(), psn, port.lid(), gid.raw(), mtu,
                    Optional.ofNullable(core.exposed()));
            // a Mono signals onNext then onComplete: only its emptiness is a failure
            inProgress = Mono.defer(() -> exchange.exchange(mine))
                    .switchIfEmpty(Mono.error(() -> new ConnectionException.Protocol("the out-of-band exchange completed without the peer's address")))
                    .timeout(config.connectTimeout())
                    .subscribe(peer -> SetupTasks.offer(thread, () -> connect(peer)), e -> SetupTasks.offer(thread, () -> fail(e)));
        } catch (RuntimeException e) {
            fail(e);
        }
    }

    private void connect(OutOfBandExchange.Peer peer) {
        if (done) return;
        try {
            core.setUp(qp -> {
                qp.modifyToRtr(Parameters.rtr(config, new QueuePairAddress(peer.qpNumber(), peer.psn(), peer.lid(), peer.gid()), gid.index(), mtu));
                qp.modifyToRts(Parameters.rts(config, psn));
            });
            if (LOG.isDebugEnabled()) LOG.debug(core + ": INIT -> RTR -> RTS towards QP 0x" + Integer.toHexString(peer.qpNumber())
                    + " (PSN " + peer.psn() + ", path MTU " + mtu + ")");
            inProgress = Mono.defer(() -> exchange.ready(peer)).timeout(config.connectTimeout())
                    .subscribe(v -> { }, e -> SetupTasks.offer(thread, () -> fail(e)), () -> SetupTasks.offer(thread, () -> established(peer)));
        } catch (RuntimeException e) {
            fail(e);
        }
    }

    private void established(OutOfBandExchange.Peer peer) {
        if (done) return;
        done = true;
        core.established(peer.exposed().orElse(null), new byte[0]);
        callback.established(core);
    }

    private void fail(Throwable t) {
        if (done) return;
        done = true;
        if (inProgress != null) inProgress.dispose();
        if (core != null) core.abort(t);
        Throwable reported = t instanceof TimeoutException
                ? new ConnectionException.Timeout("the out-of-band exchange did not finish within the connect timeout of "
                        + SetupMessages.duration(config.connectTimeout()))
                : t instanceof RdmaException e ? new ConnectionException("out-of-band setup failed: " + e.getMessage(), e) : t;
        callback.failed(reported);
    }
}
