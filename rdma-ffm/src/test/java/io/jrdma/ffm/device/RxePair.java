package io.jrdma.ffm.device;

import static io.jrdma.ffm.device.LabEnv.PORT;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.CompletionChannel;
import io.jrdma.ffm.CompletionQueue;
import io.jrdma.ffm.ConnectionParameters;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.Gid;
import io.jrdma.ffm.MemoryRegion;
import io.jrdma.ffm.Mtu;
import io.jrdma.ffm.PortSpace;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.ffm.QueuePairInit;
import io.jrdma.ffm.RdmaDevices;
import io.jrdma.ffm.ReceiveWorkRequest;
import io.jrdma.ffm.RtrAttributes;
import io.jrdma.ffm.RtsAttributes;
import io.jrdma.ffm.SendWorkRequest;
import io.jrdma.ffm.SharedReceiveQueue;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Deque;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Two connected RC queue pairs, A on rxe0 (10.77.0.1) and B on rxe1 (10.77.0.2), each with its
 * own PD, CQ and a registered buffer; connected either by hand (INIT → RTR → RTS with exchanged
 * {@link QueuePairAddress}es) or through rdma_cm (B listens, A connects). Everything is closed
 * in reverse order of creation by {@link #close()}.
 */
final class RxePair implements AutoCloseable {
    /** How the two QPs get connected. */
    enum Connection { MANUAL, RDMA_CM }

    static final Set<Access> ALL_ACCESS = EnumSet.allOf(Access.class);
    static final int BUFFER_BYTES = 8192;
    static final Duration CM_WAIT = Duration.ofSeconds(10);

    private static final AtomicInteger NEXT_CM_PORT = new AtomicInteger(20000 + (int) (ProcessHandle.current().pid() % 5000));

    /** Per-test variations of the fixture. */
    record Options(boolean sharedReceiveQueueOnB, boolean completionChannelOnB, Set<Access> accessA, Set<Access> accessB,
                   byte[] connectPrivateData) {
        static Options defaults() {
            return new Options(false, false, ALL_ACCESS, ALL_ACCESS, new byte[0]);
        }

        Options withSharedReceiveQueueOnB() {
            return new Options(true, completionChannelOnB, accessA, accessB, connectPrivateData);
        }

        Options withCompletionChannelOnB() {
            return new Options(sharedReceiveQueueOnB, true, accessA, accessB, connectPrivateData);
        }

        Options withAccessB(Set<Access> access) {
            return new Options(sharedReceiveQueueOnB, completionChannelOnB, accessA, access, connectPrivateData);
        }

        Options withConnectPrivateData(byte[] data) {
            return new Options(sharedReceiveQueueOnB, completionChannelOnB, accessA, accessB, data);
        }
    }

    /** One end of the connection. */
    static final class Side {
        final String name;
        Context context;
        ProtectionDomain pd;
        CompletionChannel channel;
        CompletionQueue cq;
        SharedReceiveQueue srq;
        MemoryRegion mr;
        QueuePair qp;
        CmId id;
        /** The RoCE v2 GID of the side's address (manual connection only). */
        Gid gid;
        /** What the peer learnt about this side out of band (manual connection only). */
        QueuePairAddress address;
        final SendWorkRequest send = SendWorkRequest.allocate(1);
        final ReceiveWorkRequest recv = ReceiveWorkRequest.allocate(1);

        Side(String name) {
            this.name = name;
        }

        MemorySegment memory() {
            return mr.segment();
        }

        /** Posts a one-SGE receive over {@code [offset, offset + length)} of the side's buffer. */
        void postReceive(long wrId, long offset, int length) {
            recv.reset().wrId(wrId).sge(0, mr, offset, length);
            if (srq != null) srq.postReceive(recv);
            else qp.postReceive(recv);
        }

        @Override
        public String toString() {
            return name;
        }
    }

    final Connection connection;
    final Side a = new Side("A");
    final Side b = new Side("B");
    /** The CONNECT_REQUEST the listener saw (rdma_cm only). */
    volatile CmEvent connectRequest;
    private final Deque<AutoCloseable> resources = new ConcurrentLinkedDeque<>();

    private RxePair(Connection connection) {
        this.connection = connection;
    }

    static RxePair connect(Connection connection) {
        return connect(connection, Options.defaults());
    }

    static RxePair connect(Connection connection, Options options) {
        RxePair pair = new RxePair(connection);
        try {
            switch (connection) {
                case MANUAL -> pair.connectManually(options);
                case RDMA_CM -> pair.connectWithRdmaCm(options);
            }
            return pair;
        } catch (Throwable t) {
            try {
                pair.close();
            } catch (RuntimeException e) {
                t.addSuppressed(e);
            }
            throw t;
        }
    }

    /** Registers a resource for {@link #close()} (LIFO); returns it. */
    <T extends AutoCloseable> T own(T resource) {
        resources.addLast(resource);
        return resource;
    }

    static int nextCmPort() {
        return NEXT_CM_PORT.getAndIncrement();
    }

    static int randomPsn() {
        return ThreadLocalRandom.current().nextInt(1 << 24);
    }

    // ---- manual: INIT -> RTR -> RTS with exchanged addresses ---------------------------------------

    private void connectManually(Options o) {
        a.context = own(RdmaDevices.open(LabEnv.DEV_A));
        b.context = own(RdmaDevices.open(LabEnv.DEV_B));
        setUp(a, o.accessA(), false, false);
        setUp(b, o.accessB(), o.sharedReceiveQueueOnB(), o.completionChannelOnB());
        a.qp = own(a.pd.createQueuePair(init(a)));
        b.qp = own(b.pd.createQueuePair(init(b)));

        a.gid = a.context.roceV2Gid(PORT, LabEnv.IP_A);
        b.gid = b.context.roceV2Gid(PORT, LabEnv.IP_B);
        a.qp.modifyToInit(PORT, ALL_ACCESS);
        b.qp.modifyToInit(PORT, ALL_ACCESS);

        QueuePairAddress addressA = new QueuePairAddress(a.qp.qpNumber(), randomPsn(), a.context.queryPort(PORT).lid(), a.gid.raw());
        QueuePairAddress addressB = new QueuePairAddress(b.qp.qpNumber(), randomPsn(), b.context.queryPort(PORT).lid(), b.gid.raw());
        // exchanged out of band in their wire form, as two processes would
        a.address = overTheWire(addressA);
        b.address = overTheWire(addressB);

        a.qp.modifyToRtr(RtrAttributes.of(b.address, PORT, a.gid.index()).mtu(Mtu.MTU_1024));
        b.qp.modifyToRtr(RtrAttributes.of(a.address, PORT, b.gid.index()).mtu(Mtu.MTU_1024));
        a.qp.modifyToRts(RtsAttributes.of(addressA.psn()));
        b.qp.modifyToRts(RtsAttributes.of(addressB.psn()));
    }

    private static QueuePairAddress overTheWire(QueuePairAddress address) {
        ByteBuffer wire = ByteBuffer.allocate(QueuePairAddress.WIRE_SIZE);
        address.writeTo(wire);
        return QueuePairAddress.readFrom(wire.flip());
    }

    // ---- rdma_cm: B listens on 10.77.0.2, A connects from 10.77.0.1 --------------------------------

    private void connectWithRdmaCm(Options o) {
        int port = nextCmPort();
        EventChannel serverChannel = own(EventChannel.create());
        CmId listener = own(CmId.create(serverChannel, PortSpace.TCP));
        listener.setReuseAddress(true);
        listener.bind(new InetSocketAddress(LabEnv.IP_B, port));
        listener.listen(4);

        // both ends live in this JVM: the passive side runs on its own thread with its own channel
        CompletableFuture<CmEvent> server = new CompletableFuture<>();
        Thread serverThread = Thread.ofPlatform().daemon().name("rdma-cm-server-" + port).start(() -> {
            try {
                CmEvent request = serverChannel.await(listener, CmEventType.CONNECT_REQUEST, CM_WAIT);
                b.id = own(request.id());
                b.context = b.id.context();
                setUp(b, o.accessB(), o.sharedReceiveQueueOnB(), o.completionChannelOnB());
                b.qp = own(b.id.createQueuePair(b.pd, init(b)));
                b.id.accept(ConnectionParameters.defaults());
                serverChannel.await(b.id, CmEventType.ESTABLISHED, CM_WAIT);
                server.complete(request);
            } catch (Throwable t) {
                server.completeExceptionally(t);
            }
        });

        try {
            EventChannel clientChannel = own(EventChannel.create());
            a.id = own(CmId.create(clientChannel, PortSpace.TCP));
            a.id.resolveAddress(new InetSocketAddress(LabEnv.IP_A, 0), new InetSocketAddress(LabEnv.IP_B, port), CM_WAIT);
            clientChannel.await(a.id, CmEventType.ADDR_RESOLVED, CM_WAIT);
            a.id.resolveRoute(CM_WAIT);
            clientChannel.await(a.id, CmEventType.ROUTE_RESOLVED, CM_WAIT);
            a.context = a.id.context();
            setUp(a, o.accessA(), false, false);
            a.qp = own(a.id.createQueuePair(a.pd, init(a)));
            a.id.connect(ConnectionParameters.defaults().withPrivateData(o.connectPrivateData()));
            clientChannel.await(a.id, CmEventType.ESTABLISHED, CM_WAIT);
            connectRequest = server.get(CM_WAIT.toMillis() * 2, TimeUnit.MILLISECONDS);
        } catch (Throwable t) {
            Throwable failure = t instanceof ExecutionException && t.getCause() != null ? t.getCause() : t;
            // the server thread adds resources: let it finish (its waits are bounded) before closing
            try {
                serverThread.join(CM_WAIT.multipliedBy(3));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (server.isCompletedExceptionally() && server.exceptionNow() != failure) failure.addSuppressed(server.exceptionNow());
            if (failure instanceof RuntimeException r) throw r;
            if (failure instanceof Error e) throw e;
            throw new IllegalStateException(failure instanceof TimeoutException
                    ? "the rdma_cm server side did not finish in time" : "connecting through rdma_cm failed", failure);
        }
    }

    // ---- common --------------------------------------------------------------------------------

    private void setUp(Side side, Set<Access> access, boolean srq, boolean channel) {
        side.pd = own(side.context.allocateProtectionDomain());
        if (channel) {
            side.channel = own(side.context.createCompletionChannel());
            side.cq = own(side.context.createCompletionQueue(64, side.channel, 0));
        } else {
            side.cq = own(side.context.createCompletionQueue(64));
        }
        side.mr = own(side.pd.allocateRegistered(BUFFER_BYTES, access));
        if (srq) side.srq = own(side.pd.createSharedReceiveQueue(16, 1, 0));
    }

    private static QueuePairInit init(Side side) {
        QueuePairInit init = QueuePairInit.rc(side.cq);
        return side.srq == null ? init : init.sharedReceiveQueue(side.srq);
    }

    /** Closes everything, newest first; failures are collected, not stopping the rest. */
    @Override
    public void close() {
        RuntimeException failure = null;
        for (AutoCloseable r; (r = resources.pollLast()) != null; ) {
            try {
                r.close();
            } catch (Exception e) {
                if (failure == null) failure = new IllegalStateException("closing the " + connection + " pair failed");
                failure.addSuppressed(e);
            }
        }
        if (failure != null) throw failure;
    }

    @Override
    public String toString() {
        return connection + " " + LabEnv.describe();
    }
}
