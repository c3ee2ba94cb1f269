package io.jrdma.bench.lab;

import io.jrdma.bench.lab.Ends.ClientEnd;
import io.jrdma.bench.lab.Ends.ServerEnd;
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
import io.jrdma.ffm.QpAttributes;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.ffm.QueuePairInit;
import io.jrdma.ffm.RdmaDevices;
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
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Map;
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
 */
final class FfmEnds {
    private static final int PORT = 1;
    private static final long RECEIVE = 1L << 62;
    private static final Duration EVENT_WAIT = Duration.ofMillis(100);
    private static final VarHandle BYTE = ValueLayout.JAVA_BYTE.varHandle();

    private FfmEnds() {}

    /** The verbs objects of one end, closed newest first. */
    private static class Verbs implements AutoCloseable {
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

        Verbs(RowSpec spec) {
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

        /** Posts one send WR from slot {@code slot} (to the same slot of the peer's memory for WRITE and READ). */
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
                    if ((spins & 0x3ff) == 0) Ends.checkDeadline(deadline, done, ops);
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
    }

    static String encode(QueuePairAddress a) {
        return a.qpNumber() + ":" + a.psn() + ":" + a.lid() + ":" + HexFormat.of().formatHex(a.gid());
    }

    static QueuePairAddress decode(String s) {
        String[] f = s.split(":");
        return new QueuePairAddress(Integer.parseInt(f[0]), Integer.parseInt(f[1]), Integer.parseInt(f[2]), HexFormat.of().parseHex(f[3]));
    }

    // ---- client ------------------------------------------------------------------------------

    static ClientEnd connect(RowSpec spec, Map<String, String> ready, ControlChannel control) throws Exception {
        Client c = new Client(spec);
        try {
            if (spec.tcp()) {
                Context context = c.own(RdmaDevices.open(Ends.CLIENT_DEVICE));
                c.setUp(context);
                QueuePairAddress self = c.initManually(context, Ends.CLIENT_IP);
                c.postReceives();
                ControlChannel.Line ok = control.call("peer", ControlChannel.map("memory", c.memory(), "qp", encode(self)), Ends.SETUP);
                c.connectManually(context, Ends.CLIENT_IP, self, decode(ready.get("qp")));
                c.peerMemory(ok.get("memory"));
            } else {
                EventChannel events = c.own(EventChannel.create());
                c.id = c.own(CmId.create(events, PortSpace.TCP));
                c.id.resolveAddress(new InetSocketAddress(Ends.CLIENT_IP, 0),
                        new InetSocketAddress(Ends.SERVER_IP, Integer.parseInt(ready.get("port"))), Ends.SETUP);
                events.await(c.id, CmEventType.ADDR_RESOLVED, Ends.SETUP);
                c.id.resolveRoute(Ends.SETUP);
                events.await(c.id, CmEventType.ROUTE_RESOLVED, Ends.SETUP);
                c.setUp(c.id.context());
                if (spec.ackTimeout() >= 0) c.id.setAckTimeout(spec.ackTimeout());
                c.qp = c.own(c.id.createQueuePair(c.pd, c.init()));
                c.postReceives();
                c.id.connect(c.parameters());
                events.await(c.id, CmEventType.ESTABLISHED, Ends.SETUP);
                c.shortRnrDelay();
                c.peerMemory(control.call("peer", ControlChannel.map("memory", c.memory()), Ends.SETUP).get("memory"));
            }
            return c;
        } catch (Exception | Error e) {
            try {
                c.close();
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    private static final class Client extends Verbs implements ClientEnd {
        /** write_lat: the value of the last byte of the next ping, shared with the server's count. */
        private byte sequence;

        Client(RowSpec spec) {
            super(spec);
        }

        @Override
        public long run(int ops, Latencies latencies, long deadline) throws Exception {
            return switch (spec.test()) {
                case WRITE_BW -> bandwidth(SendOpcode.RDMA_WRITE, ops, deadline);
                case READ_BW -> bandwidth(SendOpcode.RDMA_READ, ops, deadline);
                case SEND_BW -> bandwidth(SendOpcode.SEND, ops, deadline);
                case WRITE_LAT -> writePingPong(ops, latencies, deadline);
                case SEND_LAT -> sendPingPong(ops, latencies, deadline);
                case READ_LAT -> reads(ops, latencies, deadline);
                default -> throw new UnsupportedOperationException(spec.test().label() + " has no rdma-ffm form");
            };
        }

        private long bandwidth(SendOpcode opcode, int ops, long deadline) throws TimeoutException {
            int slots = spec.slots();
            int depth = spec.depth();
            int cqMod = Math.max(1, Math.min(spec.cqMod(), depth));
            long t0 = System.nanoTime();
            int posted = 0;
            int done = 0;
            while (done < ops) {
                while (posted < ops && posted - done < depth) {
                    int slot = posted % slots;
                    post(opcode, posted, slot, slot, (posted + 1) % cqMod == 0 || posted == ops - 1);
                    posted++;
                }
                int n = awaitCompletions(deadline, done, ops);
                for (int i = 0; i < n; i++) {
                    check(i);
                    // completions of one send queue arrive in order: a signalled WR completes all before it
                    done = (int) wcs.wrId(i) + 1;
                }
            }
            return System.nanoTime() - t0;
        }

        private long sendPingPong(int ops, Latencies latencies, long deadline) throws TimeoutException {
            int sendsOut = 0;
            long t0 = System.nanoTime();
            for (int i = 0; i < ops; i++) {
                long start = System.nanoTime();
                post(SendOpcode.SEND, i, 0, 0, true);
                sendsOut++;
                boolean answered = false;
                while (!answered || sendsOut > spec.depth()) {
                    int n = awaitCompletions(deadline, i, ops);
                    for (int k = 0; k < n; k++) {
                        check(k);
                        long wrId = wcs.wrId(k);
                        if ((wrId & RECEIVE) != 0) {
                            postReceive((int) (wrId & ~RECEIVE));
                            answered = true;
                        } else {
                            sendsOut--;
                        }
                    }
                }
                latencies.record(System.nanoTime() - start);
            }
            return System.nanoTime() - t0;
        }

        private long writePingPong(int ops, Latencies latencies, long deadline) throws TimeoutException {
            // slot 0: where the server writes its pong; slot 1: what this end writes as its ping
            long t0 = System.nanoTime();
            for (int i = 0; i < ops; i++) {
                byte expected = ++sequence;
                long start = System.nanoTime();
                setLastByteOf(1, expected);
                send.wrId(i).opcode(SendOpcode.RDMA_WRITE)
                        .flags(SendFlags.SIGNALED | (spec.size() <= spec.inline() ? SendFlags.INLINE : 0))
                        .sge(0, mr.address() + stride, spec.size(), mr.lkey()).rdma(remoteAddress, remoteKey);
                qp.postSend(send);
                boolean completed = false;
                for (int spins = 0; lastByteOf(0) != expected || !completed; spins++) {
                    if (!completed) {
                        int n = cq.poll(wcs);
                        for (int k = 0; k < n; k++) check(k);
                        completed = n > 0;
                    }
                    if ((spins & 0x3ff) == 0) Ends.checkDeadline(deadline, i, ops);
                }
                latencies.record(System.nanoTime() - start);
            }
            return System.nanoTime() - t0;
        }

        private long reads(int ops, Latencies latencies, long deadline) throws TimeoutException {
            long t0 = System.nanoTime();
            for (int i = 0; i < ops; i++) {
                long start = System.nanoTime();
                post(SendOpcode.RDMA_READ, i, 0, 0, true);
                int n = awaitCompletions(deadline, i, ops);
                for (int k = 0; k < n; k++) check(k);
                latencies.record(System.nanoTime() - start);
            }
            return System.nanoTime() - t0;
        }
    }

    // ---- server ------------------------------------------------------------------------------

    static final class Server extends Verbs implements ServerEnd {
        private EventChannel events;
        private CmId listener;
        private Context context;
        private QueuePairAddress self;
        private Thread part;
        private volatile Throwable partFailure;

        Server(RowSpec spec) {
            super(spec);
            if (spec.test() == BenchTest.WRITE_LAT && spec.polling() == PollingMode.EVENT) {
                throw new IllegalArgumentException("write_lat spins on memory: there is no EVENT form (perftest has none either)");
            }
        }

        @Override
        public Map<String, String> listen() throws Exception {
            if (spec.tcp()) {
                context = own(RdmaDevices.open(Ends.SERVER_DEVICE));
                setUp(context);
                self = initManually(context, Ends.SERVER_IP);
                postReceives();
                return ControlChannel.map("port", 0, "qp", encode(self));
            }
            events = own(EventChannel.create());
            listener = own(CmId.create(events, PortSpace.TCP));
            listener.bind(new InetSocketAddress(Ends.SERVER_IP, 0));
            listener.listen(1);
            return ControlChannel.map("port", listener.localAddress().getPort());
        }

        @Override
        public void accept(ControlChannel control) throws Exception {
            if (!spec.tcp()) {
                CmEvent request = events.await(listener, CmEventType.CONNECT_REQUEST, Ends.SETUP);
                id = own(request.id());
                setUp(id.context());
                if (spec.ackTimeout() >= 0) id.setAckTimeout(spec.ackTimeout());
                qp = own(id.createQueuePair(pd, init()));
                postReceives();
                id.accept(parameters());
                shortRnrDelay();
                events.await(id, CmEventType.ESTABLISHED, Ends.SETUP);
            }
            ControlChannel.Line peer = control.receive(Ends.SETUP);
            if (peer == null || !peer.verb().equals("peer")) throw new IllegalStateException("expected the client's peer line, got " + peer);
            peerMemory(peer.get("memory"));
            if (spec.tcp()) connectManually(context, Ends.SERVER_IP, self, decode(peer.get("qp")));
            Runnable body = switch (spec.test()) {
                case SEND_BW -> this::receive;
                case SEND_LAT -> this::echo;
                case WRITE_LAT -> this::pong;
                default -> null;
            };
            if (body != null) {
                part = Thread.ofPlatform().name("ffm-server-" + spec.test().label()).daemon().start(() -> {
                    try {
                        body.run();
                    } catch (Throwable t) {
                        if (!stopping) partFailure = t;
                    }
                });
            }
            control.ok(ControlChannel.map("memory", memory()));
        }

        /** send_bw: takes every receive and posts it again. */
        private void receive() {
            try {
                while (!stopping) {
                    int n = awaitCompletions(Long.MAX_VALUE, 0, 0);
                    for (int i = 0; i < n; i++) {
                        check(i);
                        postReceive((int) (wcs.wrId(i) & ~RECEIVE));
                    }
                }
            } catch (TimeoutException impossible) {
                throw new IllegalStateException(impossible);
            }
        }

        /** send_lat: answers every SEND with one of the same size. */
        private void echo() {
            try {
                long sent = 0;
                while (!stopping) {
                    int n = awaitCompletions(Long.MAX_VALUE, 0, 0);
                    for (int i = 0; i < n; i++) {
                        check(i);
                        long wrId = wcs.wrId(i);
                        if ((wrId & RECEIVE) == 0) continue;
                        int slot = (int) (wrId & ~RECEIVE);
                        postReceive(slot);
                        post(SendOpcode.SEND, sent++, slot, 0, true);
                    }
                }
            } catch (TimeoutException impossible) {
                throw new IllegalStateException(impossible);
            }
        }

        /** write_lat: waits for the ping's last byte in slot 0, writes the pong from slot 1. */
        private void pong() {
            byte expected = 0;
            long sent = 0;
            while (!stopping) {
                expected++;
                while (lastByteOf(0) != expected) {
                    int n = cq.poll(wcs);
                    for (int k = 0; k < n; k++) check(k);
                    if (stopping) return;
                }
                setLastByteOf(1, expected);
                send.wrId(sent++).opcode(SendOpcode.RDMA_WRITE)
                        .flags(SendFlags.SIGNALED | (spec.size() <= spec.inline() ? SendFlags.INLINE : 0))
                        .sge(0, mr.address() + stride, spec.size(), mr.lkey()).rdma(remoteAddress, remoteKey);
                qp.postSend(send);
            }
        }

        @Override
        public Throwable failure() {
            return partFailure;
        }

        @Override
        public void close() {
            stopping = true;
            if (part != null) {
                try {
                    part.join(Ends.SETUP.toMillis());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                if (part.isAlive()) throw new IllegalStateException("the rdma-ffm server's " + part.getName() + " did not stop");
            }
            super.close();
            if (partFailure != null) throw new IllegalStateException("the rdma-ffm server's part failed", partFailure);
        }
    }
}
