package io.jrdma.bench.lab;

import io.jrdma.bench.lab.Ends.ClientEnd;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.PortSpace;
import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.ffm.RdmaDevices;
import io.jrdma.ffm.SendOpcode;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/** The client end of an rdma-ffm row: connects by rdma_cm or, for {@code tcp} rows, by hand, then runs the test. */
final class FfmClient extends FfmEnd implements ClientEnd {
    /** write_lat: the value of the last byte of the next ping, shared with the server's count. */
    private byte sequence;

    private FfmClient(RowSpec spec) {
        super(spec);
    }

    static ClientEnd connect(RowSpec spec, Map<String, String> ready, ControlChannel control) throws Exception {
        FfmClient c = new FfmClient(spec);
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
            post(SendOpcode.RDMA_WRITE, i, 1, 0, true);
            boolean completed = false;
            for (int spins = 0; lastByteOf(0) != expected || !completed; spins++) {
                if (!completed) {
                    int n = cq.poll(wcs);
                    for (int k = 0; k < n; k++) check(k);
                    completed = n > 0;
                }
                if ((spins & 0x3ff) == 0) Ends.spinCheck(deadline, i, ops);
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
