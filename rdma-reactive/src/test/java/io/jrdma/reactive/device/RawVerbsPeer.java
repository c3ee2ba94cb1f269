package io.jrdma.reactive.device;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.CompletionQueue;
import io.jrdma.ffm.ConnectionParameters;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.MemoryRegion;
import io.jrdma.ffm.PortSpace;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.QueuePairInit;
import io.jrdma.ffm.ReceiveWorkRequest;
import io.jrdma.ffm.SendFlags;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.SendWorkRequest;
import io.jrdma.ffm.WcStatus;
import io.jrdma.ffm.WorkCompletions;
import io.jrdma.reactive.internal.setup.ConnectionDescriptor;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.EnumSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One end of an rdma_cm connection driven with raw verbs (rdma-ffm), not the reactive API: it puts
 * whatever address, rkey and length it likes on the wire, and it tears down in whatever order it
 * likes. Speaks just enough of jrdma's protocol to be accepted: the 32-byte connection descriptor.
 */
public final class RawVerbsPeer implements AutoCloseable {
    private static final Duration WAIT = Duration.ofSeconds(20);
    /**
     * What the descriptor advertises: a jrdma side always has receives (the descriptor's decoder
     * rejects a depth of 0 as one cut short), so this peer posts that many and never reads them.
     */
    private static final int RECEIVE_DEPTH = 1;
    private static final int RECEIVE_SIZE = 64;

    private final Deque<AutoCloseable> owned = new ArrayDeque<>();
    private EventChannel channel;
    private CmId id;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private MemoryRegion mr;
    private QueuePair qp;
    private final SendWorkRequest wr = SendWorkRequest.allocate(1);
    private final WorkCompletions wcs = WorkCompletions.allocate(4);
    private byte[] peerPrivateData = new byte[0];
    private long nextWrId = 1;

    private RawVerbsPeer() {}

    /** A client of a jrdma server at {@code server} (rdma_cm), exposing nothing; {@link #peerExposed()} is what the server exposes. */
    public static RawVerbsPeer connect(String local, InetSocketAddress server) {
        return connect(local, server, false);
    }

    /** As {@link #connect(String, InetSocketAddress)}; {@code claimCredits}: its descriptor says it speaks receiver credits (it keeps none). */
    public static RawVerbsPeer connect(String local, InetSocketAddress server, boolean claimCredits) {
        return connect(local, server, claimCredits, false, 4096);
    }

    /**
     * As {@link #connect(String, InetSocketAddress, boolean)}; {@code claimLarge}: its descriptor
     * also says it takes large messages (docs/credit-protocol.md), and its region of {@code bytes}
     * is registered for the peer to READ, a rendezvous source ({@link #sendRendezvous}).
     */
    public static RawVerbsPeer connect(String local, InetSocketAddress server, boolean claimCredits, boolean claimLarge, long bytes) {
        RawVerbsPeer p = new RawVerbsPeer();
        try {
            p.channel = p.own(EventChannel.create());
            p.id = p.own(CmId.create(p.channel, PortSpace.TCP));
            p.id.resolveAddress(new InetSocketAddress(local, 0), server, WAIT);
            p.channel.await(p.id, CmEventType.ADDR_RESOLVED, WAIT);
            p.id.resolveRoute(WAIT);
            p.channel.await(p.id, CmEventType.ROUTE_RESOLVED, WAIT);
            p.setUp(p.id, claimLarge ? EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ) : EnumSet.of(Access.LOCAL_WRITE), bytes);
            byte[] descriptor = new ConnectionDescriptor(RECEIVE_DEPTH, RECEIVE_SIZE, new RemoteBuffer(0, 0, 0), claimCredits,
                    claimCredits && claimLarge).encode();
            p.id.connect(ConnectionParameters.defaults().withPrivateData(descriptor));
            p.peerPrivateData = p.channel.await(p.id, CmEventType.ESTABLISHED, WAIT).privateData();
            return p;
        } catch (RuntimeException e) {
            p.close();
            throw e;
        }
    }

    /**
     * A server on {@code host} that accepts one jrdma client and exposes a region of {@code bytes}
     * with remote read and write: {@code ready} completes with the port, the returned future with
     * the peer once established.
     */
    static CompletableFuture<RawVerbsPeer> serveOne(String host, long bytes, CompletableFuture<Integer> ready) {
        RawVerbsPeer p = new RawVerbsPeer();
        CompletableFuture<RawVerbsPeer> established = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("raw-verbs-server").start(() -> {
            try {
                p.channel = p.own(EventChannel.create());
                CmId listener = p.own(CmId.create(p.channel, PortSpace.TCP));
                listener.bind(new InetSocketAddress(host, 0));
                listener.listen(1);
                ready.complete(listener.localAddress().getPort());
                CmEvent request = p.channel.await(listener, CmEventType.CONNECT_REQUEST, WAIT);
                p.id = p.own(request.id());
                p.setUp(p.id, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE), bytes);
                p.peerPrivateData = request.privateData();
                byte[] descriptor = new ConnectionDescriptor(RECEIVE_DEPTH, RECEIVE_SIZE, new RemoteBuffer(p.mr.address(), p.mr.rkey(), p.mr.length())).encode();
                p.id.accept(ConnectionParameters.defaults().withPrivateData(descriptor));
                p.channel.await(p.id, CmEventType.ESTABLISHED, WAIT);
                established.complete(p);
            } catch (Throwable t) {
                ready.completeExceptionally(t);
                established.completeExceptionally(t);
                p.close();
            }
        });
        return established;
    }

    private void setUp(CmId on, EnumSet<Access> access) {
        setUp(on, access, 4096);
    }

    private void setUp(CmId on, EnumSet<Access> access, long bytes) {
        pd = own(on.context().allocateProtectionDomain());
        cq = own(on.context().createCompletionQueue(16));
        mr = own(pd.allocateRegistered(bytes, access));
        MemoryRegion receives = own(pd.allocateRegistered((long) RECEIVE_DEPTH * RECEIVE_SIZE, EnumSet.of(Access.LOCAL_WRITE)));
        qp = own(on.createQueuePair(pd, QueuePairInit.rc(cq).sendQueue(8, 1).receiveQueue(8, 1)));
        ReceiveWorkRequest recv = ReceiveWorkRequest.allocate(1);
        for (int i = 0; i < RECEIVE_DEPTH; i++) {
            qp.postReceive(recv.reset().wrId(0).sge(0, receives, (long) i * RECEIVE_SIZE, RECEIVE_SIZE));
        }
    }

    /** The region the jrdma peer advertised in its connection descriptor. */
    public RemoteBuffer peerExposed() {
        return ConnectionDescriptor.decode(peerPrivateData).exposed();
    }

    /** This side's own region (a server's exposed one). */
    MemoryRegion region() {
        return mr;
    }

    /**
     * Posts one RDMA {@code opcode} of {@code length} bytes (from or into this side's region) at
     * any remote {@code address} and {@code rkey}, and waits for its completion.
     *
     * @return the completion's status
     */
    WcStatus post(SendOpcode opcode, long address, int rkey, int length) {
        long wrId = nextWrId++;
        wr.reset().wrId(wrId).opcode(opcode).flags(SendFlags.SIGNALED).sge(0, mr, 0, length).rdma(address, rkey);
        qp.postSend(wr);
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() - deadline < 0) {
            int n = cq.poll(wcs);
            for (int i = 0; i < n; i++) {
                if (wcs.wrId(i) == wrId) return wcs.status(i);
            }
            if (n == 0) Thread.onSpinWait();
        }
        throw new AssertionError("no completion for " + opcode + " within " + WAIT);
    }

    /**
     * Sends jrdma's rendezvous descriptor (docs/credit-protocol.md, "Large messages") of
     * {@code length} bytes at {@code address} with {@code rkey} in slot {@code slot}: a SEND_WITH_IMM
     * of 16 bytes from a region of its own, and waits for its completion.
     *
     * @return the completion's status
     */
    WcStatus sendRendezvous(int slot, long address, int rkey, int length) {
        try (MemoryRegion d = pd.allocateRegistered(16, EnumSet.of(Access.LOCAL_WRITE))) {
            java.nio.ByteBuffer b = d.segment().asByteBuffer().order(java.nio.ByteOrder.BIG_ENDIAN);
            b.putLong(address).putInt(rkey).putInt(length);
            long wrId = nextWrId++;
            wr.reset().wrId(wrId).opcode(SendOpcode.SEND_WITH_IMM).immediate(0xC000_0000 | slot).flags(SendFlags.SIGNALED).sge(0, d, 0, 16);
            qp.postSend(wr);
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (System.nanoTime() - deadline < 0) {
                int n = cq.poll(wcs);
                for (int i = 0; i < n; i++) {
                    if (wcs.wrId(i) == wrId) return wcs.status(i);
                }
                if (n == 0) Thread.onSpinWait();
            }
            throw new AssertionError("no completion for the rendezvous descriptor within " + WAIT);
        }
    }

    /** Deregisters this side's region while the connection stays up, as a process that exits does first. */
    void deregister() {
        owned.remove(mr);
        mr.close();
    }

    /** rdma_disconnect: the peer sees DISCONNECTED. */
    void disconnect() {
        id.disconnect();
    }

    private <T extends AutoCloseable> T own(T resource) {
        owned.push(resource);
        return resource;
    }

    /** Closes everything, newest first: the QP before its memory, the id last. */
    @Override
    public void close() {
        for (AutoCloseable r; (r = owned.poll()) != null; ) {
            try {
                r.close();
            } catch (Exception ignored) {
                // best effort: a test's own assertion says what went wrong
            }
        }
    }

    static void sleep(long ms) {
        try {
            TimeUnit.MILLISECONDS.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
