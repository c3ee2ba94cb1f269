package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.ffm.QpType;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.QueuePairInit;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.internal.loop.CqLease;
import io.jrdma.reactive.internal.loop.DeviceDomain;
import io.jrdma.reactive.internal.loop.Loop;
import io.jrdma.reactive.internal.loop.SharedReceiver;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.net.InetSocketAddress;
import java.util.function.BiFunction;
import org.jspecify.annotations.Nullable;

/** What a setup path knows before the QP exists; {@link #create()} makes the {@link ConnectionCore}. */
public final class ConnectionBuilder {
    final DeviceDomain domain;
    final Loop loop;
    final ConnectionConfig config;
    final String description;
    private BiFunction<ProtectionDomain, QueuePairInit, QueuePair> qpFactory = ProtectionDomain::createQueuePair;
    Teardown teardown;
    SharedReceiver srq;
    SharedCredits sharedCredits;
    boolean speaksCredits;
    private RegisteredBuffer sharedExposed;
    Endpoints endpoints = Endpoints.UNKNOWN;

    ConnectionBuilder(DeviceDomain domain, Loop loop, ConnectionConfig config, String description) {
        this.domain = domain;
        this.loop = loop;
        this.config = config;
        this.description = description;
    }

    /** How the QP is created (rdma_cm creates it on its id); default: ibv_create_qp in the domain's PD. */
    public ConnectionBuilder queuePairFactory(BiFunction<ProtectionDomain, QueuePairInit, QueuePair> factory) {
        this.qpFactory = factory;
        return this;
    }

    public ConnectionBuilder teardown(Teardown teardown) {
        this.teardown = teardown;
        return this;
    }

    /** Receives come from this SRQ instead of a receive queue of the connection's own; {@code credits} hands its buffers out as receiver credits. */
    public ConnectionBuilder sharedReceiveQueue(SharedReceiver srq, SharedCredits credits) {
        this.srq = srq;
        this.sharedCredits = credits;
        return this;
    }

    /**
     * The setup path speaks jrdma's protocol (a connection descriptor each way): this side offers
     * receiver credits (docs/credit-protocol.md), which go on if the peer's descriptor offers them
     * too ({@link ConnectionCore#peerDescribed}), and takes large messages by rendezvous. The QP
     * gets {@link Credits#RECEIVES_RESERVED} more receive entries and {@link Rendezvous#CONTROL_SENDS}
     * more send entries, for control messages and rendezvous READs.
     */
    public ConnectionBuilder speaksCredits() {
        this.speaksCredits = true;
        return this;
    }

    /** The two ends' IP addresses, as the setup path knows them (none for an out-of-band exchange). */
    public ConnectionBuilder addresses(@Nullable InetSocketAddress local, @Nullable InetSocketAddress remote) {
        this.endpoints = new Endpoints(local, remote);
        return this;
    }

    /** A region exposed to every connection of a server, instead of one of the connection's own. */
    public ConnectionBuilder sharedExposed(RegisteredBuffer region) {
        this.sharedExposed = region;
        return this;
    }

    /**
     * Reserves CQ entries on the loop, creates the QP, the receive pool (no SRQ) and the exposed
     * region (unless shared), and registers the connection with the loop; on failure, undoes what
     * it created and rethrows. The receives are not posted yet: see {@link ConnectionCore#postReceives()}.
     */
    public ConnectionCore create() {
        if (teardown == null) throw new IllegalStateException("a connection needs a teardown");
        int control = speaksCredits ? Credits.RECEIVES_RESERVED : 0;
        int controlSends = speaksCredits ? Rendezvous.CONTROL_SENDS : 0;
        int receiveDepth = config.receiveQueueDepth() + control;
        int entries = config.sendQueueDepth() + controlSends + (srq == null ? receiveDepth : 0);
        CqLease lease = loop.reserve(domain, entries, srq);
        List<Runnable> undo = new ArrayList<>();
        undo.add(lease::release);
        try {
            QueuePairInit init = QueuePairInit.of(QpType.RC, lease.completionQueue(), lease.completionQueue())
                    .sendQueue(config.sendQueueDepth() + controlSends, config.maxScatterGather())
                    .receiveQueue(receiveDepth, 1)
                    .maxInlineData(config.maxInlineData());
            if (srq != null) init = init.sharedReceiveQueue(srq.queue());
            QueuePair qp = qpFactory.apply(domain.pd(), init);
            undo.add(qp::close);
            BufferPool receivePool = null;
            if (srq == null) {
                // least privilege (DeviceDomain.pool): receives land here, nothing remote ever does
                receivePool = domain.pool(config.bufferSize(), receiveDepth, EnumSet.of(Access.LOCAL_WRITE));
                undo.add(receivePool::close);
            }
            RegisteredBuffer exposed;
            if (sharedExposed != null) {
                exposed = sharedExposed.retain();
            } else if (config.exposedBufferSize() > 0) {
                // exactly the remote access the application listed (none for an RPC server's staging)
                Set<Access> access = EnumSet.of(Access.LOCAL_WRITE);
                access.addAll(config.exposedAccess());
                exposed = domain.region(config.exposedBufferSize(), access);
            } else {
                exposed = null;
            }
            if (exposed != null) undo.add(exposed::release);
            ConnectionCore core = new ConnectionCore(this, lease, qp, receivePool, exposed);
            loop.register(lease, core.qpNumber(), core);
            domain.watch(qp.handle().address(), core, core::onAsyncEvent);
            return core;
        } catch (RuntimeException e) {
            for (int i = undo.size() - 1; i >= 0; i--) {
                try {
                    undo.get(i).run();
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw e;
        }
    }
}
