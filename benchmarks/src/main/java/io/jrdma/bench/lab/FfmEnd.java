package io.jrdma.bench.lab;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.CompletionChannel;
import io.jrdma.ffm.CompletionQueue;
import io.jrdma.ffm.ConnectionParameters;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.Gid;
import io.jrdma.ffm.MemoryRegion;
import io.jrdma.ffm.Mtu;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.ffm.QpAttributes;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.ffm.QueuePairInit;
import io.jrdma.ffm.ReceiveWorkRequest;
import io.jrdma.ffm.RtrAttributes;
import io.jrdma.ffm.RtsAttributes;
import io.jrdma.ffm.SendFlags;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.SendWorkRequest;
import io.jrdma.ffm.WorkCompletions;
import io.jrdma.reactive.PollingMode;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;

/**
 * The rdma-ffm layer: verbs objects driven the way perftest drives libibverbs, so that a row
 * shows what Java and FFM cost by themselves. Work requests and the completion array are
 * allocated once per connection and patched in place; the loops allocate nothing.
 *
 * <p>Like perftest: the bandwidth loops keep {@code depth} work requests posted and signal every
 * {@code cqMod}-th (and the last), since an RC send queue completes in order; write_lat is a
 * ping-pong of RDMA WRITEs in which each side spins on the last byte of the area the peer writes
 * (no completion tells the target of a WRITE); send_lat a ping-pong of SENDs; read_lat one READ
 * at a time. The server end of write_bw, read_bw and read_lat only holds its memory.
 *
 * <p>This class holds the verbs objects of one end, closed newest first; {@link FfmClient} and
 * {@link FfmServer} drive them.
 */
abstract class FfmEnd implements AutoCloseable {
    static final long RECEIVE = 1L << 62;
    private static final int PORT = 1;
    private static final Duration EVENT_WAIT = Duration.ofMillis(100);
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();

    final RowSpec spec;
    final Deque<AutoCloseable> owned = new ArrayDeque<>();
    final SendWorkRequest send = SendWorkRequest.allocate(1);
    final ReceiveWorkRequest recv = ReceiveWorkRequest.allocate(1);
    final WorkCompletions wcs = WorkCompletions.allocate(32);
    final int stride;
    ProtectionDomain pd;
    CompletionChannel channel;
    CompletionQueue cq;
    MemoryRegion mr;
    QueuePair qp;
    CmId id;
    long remoteAddress;
    int remoteKey;
    volatile boolean stopping;

    FfmEnd(RowSpec spec) {
        this.spec = spec;
        this.stride = (int) (spec.regionBytes() / spec.slots());
    }

    <T extends AutoCloseable> T own(T resource) {
        owned.push(resource);
        return resource;
    }

    void setUp(Context context) {
        pd = own(context.allocateProtectionDomain());
        int entries = sendQueueSize() + spec.rxDepth() + 8;
        if (spec.polling() == PollingMode.EVENT) {
            channel = own(context.createCompletionChannel());
            cq = own(context.createCompletionQueue(entries, channel, 0));
        } else {
            cq = own(context.createCompletionQueue(entries));
        }
        mr = own(pd.allocateRegistered(spec.regionBytes(), EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ)));
    }

    int sendQueueSize() {
        return Math.max(spec.depth(), 16) + 1;
    }

    QueuePairInit init() {
        return QueuePairInit.rc(cq).sendQueue(sendQueueSize(), 1).receiveQueue(spec.rxDepth(), 1).maxInlineData(spec.inline())
                .signalAll(false);
    }

    ConnectionParameters parameters() {
        return ConnectionParameters.defaults().withReadDepth(spec.readDepth(), spec.readDepth());
    }

    boolean receives() {
        return spec.test() == BenchTest.SEND_BW || spec.test() == BenchTest.SEND_LAT;
    }

    void postReceives() {
        if (!receives()) return;
        for (int i = 0; i < spec.rxDepth(); i++) postReceive(i % spec.slots());
    }

    void postReceive(int slot) {
        recv.wrId(RECEIVE | slot).sge(0, mr.address() + (long) slot * stride, Math.max(spec.size(), 1), mr.lkey());
        qp.postReceive(recv);
    }

    /** Posts one send WR from slot {@code slot} (to slot {@code remoteSlot} of the peer's memory for WRITE and READ). */
    void post(SendOpcode opcode, long wrId, int slot, long remoteSlot, boolean signaled) {
        int flags = signaled ? SendFlags.SIGNALED : 0;
        if (opcode != SendOpcode.RDMA_READ && spec.size() <= spec.inline()) flags |= SendFlags.INLINE;
        send.wrId(wrId).opcode(opcode).flags(flags).sge(0, mr.address() + (long) slot * stride, spec.size(), mr.lkey());
        if (opcode != SendOpcode.SEND) send.rdma(remoteAddress + remoteSlot * stride, remoteKey);
        qp.postSend(send);
    }

    /**
     * Waits for completions into {@link #wcs} as the row's polling mode says: BUSY spins on the
     * CQ, EVENT arms it and sleeps on the completion channel. Returns how many arrived; 0 only
     * when {@link #stopping}.
     */
    int awaitCompletions(long deadline, long done, long ops) throws TimeoutException {
        int n = cq.poll(wcs);
        if (n > 0) return n;
        if (spec.polling() != PollingMode.EVENT) {
            for (int spins = 0; ; spins++) {
                n = cq.poll(wcs);
                if (n > 0 || stopping) return n;
                if ((spins & 0x3ff) == 0) Ends.spinCheck(deadline, done, ops);
            }
        }
        while (true) {
            cq.requestNotification(false);
            // a completion that arrived before the arm raised no event: poll once more
            n = cq.poll(wcs);
            if (n > 0 || stopping) return n;
            channel.awaitEvent(EVENT_WAIT);
            n = cq.poll(wcs);
            if (n > 0 || stopping) return n;
            Ends.checkDeadline(deadline, done, ops);
        }
    }

    void check(int i) {
        if (!wcs.isSuccess(i)) throw wcs.error(i);
    }

    byte lastByteOf(int slot) {
        return (byte) BYTE.getVolatile(mr.segment(), (long) slot * stride + spec.size() - 1);
    }

    void setLastByteOf(int slot, byte value) {
        mr.segment().set(ValueLayout.JAVA_BYTE, (long) slot * stride + spec.size() - 1, value);
    }

    String memory() {
        return mr.address() + ":" + mr.rkey();
    }

    void peerMemory(String addressColonKey) {
        String[] f = addressColonKey.split(":");
        remoteAddress = Long.parseLong(f[0]);
        remoteKey = Integer.parseInt(f[1]);
    }

    QueuePairAddress initManually(Context context, String ip) throws Exception {
        qp = own(pd.createQueuePair(init()));
        qp.modifyToInit(PORT, EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ));
        Gid gid = context.roceV2Gid(PORT, InetAddress.getByName(ip));
        return new QueuePairAddress(qp.qpNumber(), ThreadLocalRandom.current().nextInt(1 << 24),
                context.queryPort(PORT).lid(), gid.raw());
    }

    /**
     * perftest's RNR NAK delay, 0.64 ms (what the manual path programs at RTR): rdma_cm moves the
     * QP to RTS with 0, 655 ms, which rdma-reactive's rdma_cm connections keep.
     */
    void shortRnrDelay() {
        qp.modify(new QpAttributes().minRnrTimer(12));
    }

    void connectManually(Context context, String ip, QueuePairAddress self, QueuePairAddress peer) throws Exception {
        Gid gid = context.roceV2Gid(PORT, InetAddress.getByName(ip));
        Mtu mtu = Mtu.of(context.queryPort(PORT).activeMtu());
        qp.modifyToRtr(RtrAttributes.of(peer, PORT, gid.index()).mtu(mtu).maxDestRdAtomic(spec.readDepth()));
        RtsAttributes rts = RtsAttributes.of(self.psn()).maxRdAtomic(spec.readDepth());
        qp.modifyToRts(spec.ackTimeout() < 0 ? rts : rts.retry(spec.ackTimeout(), rts.retryCount()));
    }

    @Override
    public void close() {
        stopping = true;
        if (id != null && qp != null) {
            try {
                id.disconnect();
            } catch (RuntimeException ignored) {
                // the peer went first
            }
        }
        RuntimeException failure = null;
        for (AutoCloseable r; (r = owned.poll()) != null; ) {
            try {
                r.close();
            } catch (Exception e) {
                if (failure == null) failure = new IllegalStateException("closing the rdma-ffm end failed");
                failure.addSuppressed(e);
            }
        }
        if (failure != null) throw failure;
    }

    static String encode(QueuePairAddress a) {
        return a.qpNumber() + ":" + a.psn() + ":" + a.lid() + ":" + HexFormat.of().formatHex(a.gid());
    }

    static QueuePairAddress decode(String s) {
        String[] f = s.split(":");
        return new QueuePairAddress(Integer.parseInt(f[0]), Integer.parseInt(f[1]), Integer.parseInt(f[2]), HexFormat.of().parseHex(f[3]));
    }
}
