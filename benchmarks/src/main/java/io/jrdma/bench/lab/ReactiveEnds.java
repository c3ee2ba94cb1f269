package io.jrdma.bench.lab;

import io.jrdma.bench.lab.Ends.ClientEnd;
import io.jrdma.bench.lab.Ends.ServerEnd;
import io.jrdma.ffm.Access;
import io.jrdma.reactive.ConnectionSpec;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.OperationTimeoutException;
import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import io.jrdma.rpc.CallOptions;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.RpcClient;
import io.jrdma.rpc.RpcHandler;
import io.jrdma.rpc.RpcRequest;
import io.jrdma.rpc.RpcServer;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.Map;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * The reactive layer: rdma-reactive's public API at both ends. The client keeps the row's depth
 * of operation {@code Mono}s in flight ({@link Pipeline}); zero-copy forms throughout, from and
 * into the connection's exposed buffer, slot by slot. A ping-pong is a SEND (or, for write_lat, a
 * WRITE_WITH_IMM, whose RECV completion is the only notice a reactive receiver gets) answered in
 * kind by the server from the buffer the message arrived in (or its exposed memory); write_lat_poll
 * is a WRITE each way, each end waiting for the last byte of the other's with {@code byteChange}
 * (one-sided waits, no receive), as ib_write_lat spins on it; read_lat
 * is one READ at a time; the RPC rows call an echo function registered on an RpcServer; stream_bw
 * is one {@code send(Publisher)} of the row's messages, slices of the exposed buffer slot by slot.
 */
final class ReactiveEnds {
    static final String ECHO = "echo";
    /** rdma-rpc's request header (80 B), rounded up to its 64-byte alignment. */
    static final int RPC_HEADROOM = 128;

    private ReactiveEnds() {}

    /**
     * The row's settings on a client or server builder. The RPC rows keep the library's buffers
     * and depths (the RPC layer sizes its frames and credits from them; larger buffers only for a
     * call that does not fit them) and set only what they share with the other rows.
     */
    static <T extends ConnectionSpec<T>> T configure(T spec, RowSpec row, boolean eventPolling) {
        T common = spec.transport(row.tcp() ? Transport.TCP : Transport.RDMA_CM)
                .pollingMode(eventPolling ? PollingMode.EVENT : row.polling())
                .maxInlineData(row.inline())
                .receiverCredits(row.credits())
                // a session's first connect meets JVMs whose JIT is still busy: with C2 under tcg, the library's 10 s
                // were not enough for the first row (lab, 2026-11-27), and a bench measures calls, not set-up
                .connectTimeout(Ends.SETUP);
        if (row.ackTimeout() >= 0) common = common.ackTimeout(Duration.ofNanos(4096L << row.ackTimeout()));
        if (row.test().rpc()) {
            // a call whose request (80 B of header) or answer (32 B) does not fit the library's 4 KiB buffers needs an
            // exposed buffer for the server to READ (rdma-rpc's remote requests), which these rows have not: such a
            // call failed with PayloadTooLarge. Buffers it fits in keep it one SEND each way, as the small calls
            return row.size() + RPC_HEADROOM > 4096 ? common.buffers(row.size() + RPC_HEADROOM, 64) : common;
        }
        return common.queueDepth(Math.max(row.depth(), 16), Math.max(row.rxDepth(), 16))
                .buffers(row.buffer(), Math.max(row.depth(), 16))
                .connectionParameters(row.readDepth(), row.readDepth(), 7, 7)
                .exposeBuffer(row.regionBytes(), Access.REMOTE_WRITE, Access.REMOTE_READ);
    }

    /**
     * Diagnostics, off by default (JRDMA_BENCH_JAVA_OPTS): {@code -Djrdma.bench.clientEvent=true} or
     * {@code -Djrdma.bench.serverEvent=true} make that end poll in EVENT mode whatever the row says,
     * to see which end's polling a row's result depends on.
     */
    private static final boolean CLIENT_EVENT = Boolean.getBoolean("jrdma.bench.clientEvent");
    private static final boolean SERVER_EVENT = Boolean.getBoolean("jrdma.bench.serverEvent");

    static RdmaClient client(RowSpec row, Map<String, String> ready) {
        return configure(RdmaClient.create().host(Ends.SERVER_IP).port(Integer.parseInt(ready.get("port"))).localAddress(Ends.CLIENT_IP),
                row, CLIENT_EVENT);
    }

    static RdmaServer server(RowSpec row) {
        // perftest's server of a one-sided test polls nothing; ours sleeps on its completion channel
        return configure(RdmaServer.create().host(Ends.SERVER_IP).port(0), row, row.test().passiveServer() || SERVER_EVENT);
    }

    static byte[] payload(RowSpec row) {
        return new byte[row.size()];
    }

    static RpcHandler echo() {
        return RpcHandler.of(RpcRequest::bytes);
    }

    // ---- client ------------------------------------------------------------------------------

    static ClientEnd connect(RowSpec row, Map<String, String> ready, ControlChannel control) throws Exception {
        if (row.test().rpc()) {
            RpcClient rpc = RpcClient.connect(client(row, ready), CallOptions.defaults()).block(Ends.SETUP);
            try {
                control.call("peer", Map.of(), Ends.SETUP);
            } catch (Exception e) {
                rpc.disposeNow(Ends.SETUP);
                throw e;
            }
            return new RpcEnd(row, rpc);
        }
        RdmaConnection conn = client(row, ready).connect().block(Ends.SETUP);
        try {
            control.call("peer", Map.of(), Ends.SETUP);
        } catch (Exception e) {
            conn.disposeNow();
            throw e;
        }
        return new Client(row, conn);
    }

    private static final class Client implements ClientEnd {
        private final RowSpec row;
        private final RdmaConnection conn;
        private final RegisteredBuffer local;
        private final RemoteBuffer remote;
        private final long stride;
        /** write_lat_poll: the last byte of the last ping, which the server's pong echoes; kept across runs. */
        private byte sequence;

        Client(RowSpec row, RdmaConnection conn) {
            this.row = row;
            this.conn = conn;
            this.local = conn.exposedBuffer();
            this.remote = conn.remoteBuffer();
            this.stride = row.regionBytes() / row.slots();
        }

        @Override
        public long run(int ops, Latencies latencies, long deadline) throws Exception {
            int size = row.size();
            int slots = row.slots();
            return switch (row.test()) {
                case WRITE_BW -> Pipeline.run((i, p) -> conn.write(local, i % slots * stride, size, remote, i % slots * stride),
                        ops, row.depth(), null, deadline);
                case READ_BW -> Pipeline.run((i, p) -> conn.read(remote, i % slots * stride, size, local, i % slots * stride),
                        ops, row.depth(), null, deadline);
                case SEND_BW -> Pipeline.run((i, p) -> conn.send(local, i % slots * stride, size), ops, row.depth(), null, deadline);
                case SEND_LAT -> Pipeline.run((i, p) -> {
                    p.fire(conn.send(local, stride, size));
                    return conn.receive();
                }, ops, 1, latencies, deadline);
                case WRITE_LAT -> Pipeline.run((i, p) -> {
                    p.fire(conn.writeWithImmediate(local, stride, size, remote, 0, i));
                    return conn.receive();
                }, ops, 1, latencies, deadline);
                case WRITE_LAT_POLL -> Pipeline.run((i, p) -> {
                    byte before = sequence;
                    byte ping = ++sequence;
                    local.segment().set(ValueLayout.JAVA_BYTE, stride + size - 1, ping);
                    p.fire(conn.write(local, stride, size, remote, 0));
                    return conn.byteChange(local, size - 1, before);  // the pong lands in slot 0
                }, ops, 1, latencies, deadline);
                case READ_LAT -> Pipeline.run((i, p) -> conn.read(remote, 0, size, local, 0), ops, 1, latencies, deadline);
                case STREAM_BW -> stream(ops, deadline);
                default -> throw new UnsupportedOperationException(row.test().label());
            };
        }

        /**
         * One stream of {@code ops} messages: the slots' elements in turn, each with a reference of its own for
         * the stream to release (the exposed buffer's), from a generator that allocates nothing per message.
         */
        private long stream(int ops, long deadline) {
            ScatterGatherElement[] slots = messages(row, local, stride);
            int[] next = {0};
            Flux<ScatterGatherElement> messages = Flux.generate(sink -> {
                int i = next[0]++;
                if (i >= ops) {
                    sink.complete();
                    return;
                }
                ScatterGatherElement m = slots[i % slots.length];
                m.buffer().retain();
                sink.next(m);
            });
            long t0 = System.nanoTime();
            conn.send(messages).block(Duration.ofNanos(Math.max(1, deadline - t0)));
            return System.nanoTime() - t0;
        }

        @Override
        public void close() {
            conn.disposeNow();
        }
    }

    /** The stream rows' messages: one element per slot of the exposed buffer, the row's size each. */
    static ScatterGatherElement[] messages(RowSpec row, RegisteredBuffer local, long stride) {
        ScatterGatherElement[] slots = new ScatterGatherElement[row.slots()];
        for (int i = 0; i < slots.length; i++) slots[i] = ScatterGatherElement.of(local, i * stride, row.size());
        return slots;
    }

    private static final class RpcEnd implements ClientEnd {
        private final RowSpec row;
        private final RpcClient rpc;
        private final byte[] payload;

        RpcEnd(RowSpec row, RpcClient rpc) {
            this.row = row;
            this.rpc = rpc;
            this.payload = payload(row);
        }

        @Override
        public long run(int ops, Latencies latencies, long deadline) throws Exception {
            boolean sequential = row.test().rpc() && !row.test().rate;
            return Pipeline.run((i, p) -> rpc.call(ECHO, payload), ops, sequential ? 1 : row.depth(), sequential ? latencies : null,
                    deadline);
        }

        @Override
        public void close() {
            rpc.disposeNow(Ends.SETUP);
        }
    }

    // ---- server ------------------------------------------------------------------------------

    /** A virtual thread per handler call, for the rows of --rpc-schedulers virtual. */
    private static final Scheduler VIRTUAL = Schedulers.fromExecutorService(
            java.util.concurrent.Executors.newVirtualThreadPerTaskExecutor(), "bench-rpc-virtual");

    /**
     * The RPC server of a row: the poller thread for the _poller rows, else the row's handler scheduler
     * (jrdma's handler pool, Reactor's boundedElastic, the library's default, or a virtual thread per call).
     */
    static RpcServer rpcServer(RpcServer server, RowSpec row) {
        if (row.test().handlerOnPoller()) return server.handlerScheduler(Schedulers.immediate());
        return switch (row.scheduler()) {
            case "pool" -> server.handlerPool();
            case "virtual" -> server.handlerScheduler(VIRTUAL);
            default -> server;
        };
    }

    static final class Server implements ServerEnd {
        private final RowSpec row;
        private DisposableRdmaServer server;
        private DisposableRpcServer rpcServer;
        private RdmaConnection conn;
        private Disposable part;
        private volatile Throwable failure;

        Server(RowSpec row) {
            this.row = row;
        }

        @Override
        public Map<String, String> listen() {
            if (row.test().rpc()) {
                rpcServer = rpcServer(RpcServer.create(server(row)).register(ECHO, echo()), row).bind().block(Ends.SETUP);
                return ControlChannel.map("port", rpcServer.address().getPort());
            }
            server = server(row).bind().block(Ends.SETUP);
            return ControlChannel.map("port", server.address().getPort());
        }

        @Override
        public void accept(ControlChannel control) throws Exception {
            if (server != null) {
                conn = server.accept().block(Ends.SETUP);
                part = switch (row.test()) {
                    case SEND_BW, STREAM_BW -> conn.receives().subscribe(ReceivedMessage::release, this::failed);
                    case SEND_LAT -> conn.receives().subscribe(m -> {
                        conn.send(m.buffer(), 0, m.length()).subscribe(null, this::failed);
                        m.release();
                    }, this::failed);
                    case WRITE_LAT -> {
                        RegisteredBuffer local = conn.exposedBuffer();
                        RemoteBuffer remote = conn.remoteBuffer();
                        long stride = row.regionBytes() / row.slots();
                        yield conn.receives().subscribe(m -> {
                            conn.writeWithImmediate(local, stride, row.size(), remote, 0, m.immediate()).subscribe(null, this::failed);
                            m.release();
                        }, this::failed);
                    }
                    case WRITE_LAT_POLL -> {
                        pong(conn.exposedBuffer(), conn.remoteBuffer(), row.regionBytes() / row.slots(), (byte) 0);
                        yield null;
                    }
                    default -> null;
                };
            }
            ControlChannel.Line peer = control.receive(Ends.SETUP);
            if (peer == null || !peer.verb().equals("peer")) throw new IllegalStateException("expected the client's peer line, got " + peer);
            control.ok(Map.of());
        }

        /**
         * write_lat_poll: waits for the ping's last byte in slot 0 to change from {@code seen}, writes the pong (that
         * byte) from slot 1, and waits again; an idle client (between runs) only times a wait out.
         */
        private void pong(RegisteredBuffer local, RemoteBuffer remote, long stride, byte seen) {
            long last = row.size() - 1;
            conn.byteChange(local, last, seen).subscribe(ping -> {
                local.segment().set(ValueLayout.JAVA_BYTE, stride + last, ping);
                conn.write(local, stride, row.size(), remote, 0).subscribe(null, this::failed);
                pong(local, remote, stride, ping);
            }, e -> {
                if (e instanceof OperationTimeoutException) pong(local, remote, stride, seen);
                else if (!conn.isDisposed()) failed(e);
            });
        }

        private void failed(Throwable t) {
            if (failure == null) failure = t;
        }

        @Override
        public Throwable failure() {
            return failure;
        }

        @Override
        public void close() {
            if (part != null) part.dispose();
            if (conn != null) conn.disposeNow();
            if (server != null) server.disposeNow();
            if (rpcServer != null) rpcServer.disposeNow();
        }
    }
}
