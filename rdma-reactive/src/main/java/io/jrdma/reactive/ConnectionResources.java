package io.jrdma.reactive;

import io.jrdma.ffm.CmId;
import io.jrdma.ffm.CompletionChannel;
import io.jrdma.ffm.CompletionQueue;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.ffm.QpType;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.QueuePairInit;
import io.jrdma.ffm.Access;
import java.net.Socket;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiFunction;

/**
 * Every native object of one connection, created in order and closed in reverse. Registered
 * memory is deregistered only after the last buffer came back, and the protection domain only
 * after that.
 */
final class ConnectionResources {
    final Context context;
    private final boolean ownsContext;
    final ProtectionDomain pd;
    final CompletionChannel channel;
    final CompletionQueue cq;
    final QueuePair qp;
    final BufferPool sendPool;
    final BufferPool receivePool;
    final BufferPool exposed;
    final RegisteredBuffer exposedBuffer;
    final int maxInline;

    // set by the connector that owns the setup path
    CmId cmId;
    /** Stops whatever reads the connection's own event channel, then closes the id and channel. */
    Runnable closeCm;
    Socket socket;

    private final AtomicBoolean closed = new AtomicBoolean();

    private ConnectionResources(Context context, boolean ownsContext, ConnectionConfig config,
                                BiFunction<ProtectionDomain, QueuePairInit, QueuePair> createQp, List<AutoCloseable> created) {
        this.context = context;
        this.ownsContext = ownsContext;
        this.pd = track(created, context.allocateProtectionDomain());
        this.channel = track(created, context.createCompletionChannel());
        int cqe = config.sendQueueDepth() + config.receiveQueueDepth();
        this.cq = track(created, context.createCompletionQueue(cqe, channel, 0));
        QueuePairInit init = QueuePairInit.of(QpType.RC, cq, cq)
                .sendQueue(config.sendQueueDepth(), config.maxScatterGather())
                .receiveQueue(config.receiveQueueDepth(), 1)
                .maxInlineData(config.maxInlineData());
        this.qp = track(created, createQp.apply(pd, init));
        this.maxInline = Math.min(config.maxInlineData(), qp.capabilities().maxInlineData());
        this.sendPool = track(created, BufferPool.create(pd, config.bufferSize(), config.bufferCount(), EnumSet.of(Access.LOCAL_WRITE)));
        this.receivePool = track(created, BufferPool.create(pd, config.bufferSize(), config.receiveQueueDepth(), EnumSet.of(Access.LOCAL_WRITE)));
        if (config.exposedBufferSize() > 0) {
            EnumSet<Access> access = EnumSet.of(Access.LOCAL_WRITE);
            access.addAll(config.exposedAccess());
            this.exposed = track(created, BufferPool.create(pd, Math.toIntExact(config.exposedBufferSize()), 1, access));
            this.exposedBuffer = exposed.tryAcquire();
        } else {
            this.exposed = null;
            this.exposedBuffer = null;
        }
    }

    private static <T extends AutoCloseable> T track(List<AutoCloseable> created, T resource) {
        created.add(resource);
        return resource;
    }

    /** Creates everything or, on failure, closes what was created and rethrows. */
    static ConnectionResources create(Context context, boolean ownsContext, ConnectionConfig config,
                                      BiFunction<ProtectionDomain, QueuePairInit, QueuePair> createQp) {
        List<AutoCloseable> created = new ArrayList<>();
        try {
            return new ConnectionResources(context, ownsContext, config, createQp, created);
        } catch (RuntimeException e) {
            for (int i = created.size() - 1; i >= 0; i--) {
                try {
                    created.get(i).close();
                } catch (Exception suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            if (ownsContext) context.close();
            throw e;
        }
    }

    RemoteBuffer exposedDescriptor() {
        return exposedBuffer == null ? new RemoteBuffer(0, 0, 0) : exposedBuffer.toRemote(0, exposedBuffer.capacity());
    }

    /** Moves the QP to ERR so every posted WR flushes: via rdma_cm when connected through it. */
    void disconnect() {
        if (cmId != null) {
            try {
                cmId.disconnect();
                return;
            } catch (RuntimeException e) {
                // not connected (yet): fall through to the plain transition
            }
        }
        if (!qp.isClosed()) qp.modifyToError();
        if (socket != null) {
            try {
                socket.close();
            } catch (java.io.IOException ignored) {
                // closing a socket whose peer is gone may fail; nothing is left to release
            }
        }
    }

    void destroyQueuePair() {
        qp.close();
    }

    /** Closes in reverse order of creation; memory and PD wait for the last outstanding buffer. */
    void close() {
        if (!closed.compareAndSet(false, true)) return;
        qp.close();
        if (exposedBuffer != null) exposedBuffer.release();
        List<BufferPool> pools = exposed == null ? List.of(sendPool, receivePool) : List.of(sendPool, receivePool, exposed);
        pools.forEach(BufferPool::close);
        Runnable rest = () -> {
            quietly(pd::close);
            quietly(cq::close);
            quietly(channel::close);
            if (closeCm != null) quietly(closeCm);
            else if (cmId != null) quietly(cmId::close);
            if (ownsContext) quietly(context::close);
        };
        AfterAll.of(pools, rest);
    }

    private static void quietly(Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            System.getLogger("io.jrdma.reactive").log(System.Logger.Level.WARNING, "closing RDMA resource failed", e);
        }
    }

    /** Runs an action after every pool has released its memory region. */
    private static final class AfterAll {
        static void of(List<BufferPool> pools, Runnable action) {
            java.util.concurrent.atomic.AtomicInteger left = new java.util.concurrent.atomic.AtomicInteger(pools.size());
            for (BufferPool p : pools) p.whenReleased(() -> {
                if (left.decrementAndGet() == 0) action.run();
            });
        }
    }
}
