package io.jrdma.bench.lab;

import io.jrdma.bench.lab.Ends.ServerEnd;
import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.PortSpace;
import io.jrdma.ffm.QueuePairAddress;
import io.jrdma.ffm.RdmaDevices;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.reactive.PollingMode;
import java.net.InetSocketAddress;
import java.util.Map;
import java.util.concurrent.TimeoutException;

/** The server end of an rdma-ffm row: accepts, then answers the client as the test needs (or only holds its memory). */
final class FfmServer extends FfmEnd implements ServerEnd {
    private EventChannel events;
    private CmId listener;
    private Context context;
    private QueuePairAddress self;
    private Thread part;
    private volatile Throwable partFailure;

    FfmServer(RowSpec spec) {
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
            for (int spins = 1; lastByteOf(0) != expected; spins++) {
                int n = cq.poll(wcs);
                for (int k = 0; k < n; k++) check(k);
                if (stopping) return;
                if ((spins & 0x3ff) == 0) {
                    try {
                        Ends.spinCheck(Long.MAX_VALUE, 0, 0);
                    } catch (TimeoutException impossible) {
                        throw new IllegalStateException(impossible);
                    }
                }
            }
            setLastByteOf(1, expected);
            post(SendOpcode.RDMA_WRITE, sent++, 1, 0, true);
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
