package io.jrdma.reactive.rpc.bench;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.rpc.CallOptions;
import io.jrdma.reactive.rpc.DisposableRpcServer;
import io.jrdma.reactive.rpc.RpcClient;
import io.jrdma.reactive.rpc.RpcServer;
import io.jrdma.reactive.rpc.TestFunctions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The RPC benchmark of {@code lab/bench-rpc}: round trip of a small call (sequential) and calls/s
 * with N calls in flight, server on rxe1, client on rxe0. Event-driven polling by default: under
 * single-threaded TCG busy pollers take turns of milliseconds. Prints one table, with the
 * ib_send_lat rows of the same lab session ({@code -Dbench.baseline=FILE}, lines of
 * "label TAB typical-us TAB p99-us TAB note") on top, and two rows that locate the cost: the
 * reactive layer's own SEND ping-pong, and RPC with the handler run in place on the poller
 * instead of on bounded-elastic.
 *
 * <p>Properties: bench.calls (sequential calls measured, 1000), bench.warmup (300),
 * bench.seconds (per throughput level, 10), bench.payload (bytes of the small call, 2, like
 * ib_send_lat's default), bench.concurrency (levels, "1,8,32,64"), bench.large (bytes of the
 * large call, 1 MiB; 0 skips it), bench.polling (EVENT, ADAPTIVE or BUSY).
 */
public final class RpcBench {
    private static final String SERVER_IP = System.getenv().getOrDefault("RXE_IP_B", "10.77.0.2");
    private static final String CLIENT_IP = System.getenv().getOrDefault("RXE_IP_A", "10.77.0.1");
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private static final int CALLS = Integer.getInteger("bench.calls", 1000);
    private static final int WARMUP = Integer.getInteger("bench.warmup", 300);
    private static final long SECONDS = Long.getLong("bench.seconds", 10);
    private static final int PAYLOAD = Integer.getInteger("bench.payload", 2);
    private static final int LARGE = Integer.getInteger("bench.large", 1 << 20);
    private static final PollingMode POLLING = PollingMode.valueOf(System.getProperty("bench.polling", "EVENT"));
    private static final int[] LEVELS = Arrays.stream(System.getProperty("bench.concurrency", "1,8,32,64").split(","))
            .mapToInt(Integer::parseInt).toArray();

    private RpcBench() {}

    private record Row(String what, String median, String p99, String rate, String note) {}

    private static final List<Row> ROWS = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        String baseline = System.getProperty("bench.baseline");
        if (baseline != null && Files.exists(Path.of(baseline))) {
            for (String line : Files.readAllLines(Path.of(baseline))) {
                String[] f = line.split("\t");
                if (f.length >= 3) ROWS.add(new Row(f[0], f[1], f[2], rate(Double.parseDouble(f[1])), f.length > 3 ? f[3] : ""));
            }
        }
        byte[] small = new byte[PAYLOAD];
        String mode = POLLING.name();

        pingPong(small, mode);

        long staging = 4L * Math.max(LARGE, 1 << 20);
        DisposableRpcServer server = rpcServer(staging, null);
        RpcClient client = rpcClient(server, staging);
        try {
            latency("RPC echo, " + PAYLOAD + " B, handler on bounded-elastic (" + mode + ")", () -> client.call("echo", small));
            for (int level : LEVELS) throughput("RPC echo, " + PAYLOAD + " B, " + level + " in flight (" + mode + ")", client, small, level);
            if (LARGE > 0) large(client);
        } finally {
            client.close().block(TIMEOUT);
            server.dispose();
        }

        handlersOn("parallel", Schedulers.parallel(), staging, small, mode);
        handlersOn("the poller", Schedulers.immediate(), staging, small, mode);
        print();
    }

    /** Where the time goes: the same call with the handler hop to another scheduler, or none. */
    private static void handlersOn(String where, reactor.core.scheduler.Scheduler scheduler, long staging, byte[] small, String mode) {
        DisposableRpcServer server = rpcServer(staging, scheduler);
        RpcClient client = rpcClient(server, staging);
        try {
            latency("RPC echo, " + PAYLOAD + " B, handler on " + where + " (" + mode + ")", () -> client.call("echo", small));
        } finally {
            client.close().block(TIMEOUT);
            server.dispose();
        }
    }

    private static DisposableRpcServer rpcServer(long staging, reactor.core.scheduler.Scheduler handlers) {
        RpcServer s = RpcServer.create(RdmaServer.create().host(SERVER_IP).port(0).pollingMode(POLLING))
                .registerAll(TestFunctions.functions()).stagingBuffer(staging);
        return (handlers == null ? s : s.handlerScheduler(handlers)).bind().block(TIMEOUT);
    }

    private static RpcClient rpcClient(DisposableRpcServer server, long staging) {
        RdmaClient rdma = RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP)
                .pollingMode(POLLING).exposeBuffer(staging + (1 << 20), Access.REMOTE_READ, Access.REMOTE_WRITE);
        return RpcClient.connect(rdma, CallOptions.defaults().timeout(TIMEOUT)).block(TIMEOUT);
    }

    /** The layer below: a SEND answered by a SEND, through RdmaConnection's Monos, no RPC. */
    private static void pingPong(byte[] small, String mode) {
        int exposed = Math.max(LARGE, 4096);
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0).pollingMode(POLLING)
                .exposeBuffer(exposed, Access.REMOTE_READ, Access.REMOTE_WRITE).bind().block(TIMEOUT);
        Mono<RdmaConnection> accepted = server.connections().next().cache();
        accepted.subscribe();
        RdmaConnection client = RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP)
                .pollingMode(POLLING).exposeBuffer(exposed, Access.REMOTE_READ).connect().block(TIMEOUT);
        RdmaConnection echo = accepted.block(TIMEOUT);
        echo.receives().subscribe(m -> {
            m.release();
            echo.send(small).subscribe();
        }, e -> { });
        try {
            latency("reactive SEND ping-pong, " + PAYLOAD + " B (" + mode + ")",
                    () -> client.send(small).then(client.receive()).doOnNext(m -> m.release()));
            if (LARGE > 0) {
                // what a large call's two transfers cost without RPC: the floor under the 1 MiB row
                io.jrdma.reactive.memory.RemoteBuffer remote = client.remoteBuffer();
                io.jrdma.reactive.memory.RegisteredBuffer local = client.exposedBuffer();
                timed("reactive RDMA READ, " + LARGE + " B", 20, () -> client.read(remote, 0, LARGE, local, 0));
                timed("reactive RDMA WRITE, " + LARGE + " B", 20, () -> client.write(local, 0, LARGE, remote, 0));
                int chunk = 64 * 1024;  // what the RPC server does: 64 KiB READs, 4 in flight
                timed("reactive RDMA READ, " + LARGE + " B as 64 KiB READs, 4 in flight", 20,
                        () -> Flux.range(0, LARGE / chunk).flatMap(i -> client.read(remote, (long) i * chunk, chunk, local, i * chunk), 4).then());
            }
        } finally {
            client.close().block(TIMEOUT);
            echo.close().block(TIMEOUT);
            server.dispose();
        }
    }

    private static void latency(String what, Supplier<Mono<?>> call) {
        for (int i = 0; i < WARMUP; i++) call.get().block(TIMEOUT);
        long[] rtt = new long[CALLS];
        for (int i = 0; i < CALLS; i++) {
            long t0 = System.nanoTime();
            call.get().block(TIMEOUT);
            rtt[i] = System.nanoTime() - t0;
        }
        Arrays.sort(rtt);
        ROWS.add(new Row(what, us(percentile(rtt, 50)), us(percentile(rtt, 99)), rate(percentile(rtt, 50) / 1e3),
                CALLS + " sequential round trips"));
    }

    private static void throughput(String what, RpcClient client, byte[] small, int level) throws InterruptedException {
        Duration window = Duration.ofSeconds(SECONDS);
        long t0 = System.nanoTime();
        long done = Flux.range(0, Integer.MAX_VALUE).flatMap(i -> client.call("echo", small), level).take(window)
                .count().block(window.plus(TIMEOUT));
        double elapsed = (System.nanoTime() - t0) / 1e9;
        ROWS.add(new Row(what, "", "", String.format(Locale.ROOT, "%.0f calls/s", done / elapsed),
                done + " calls in " + String.format(Locale.ROOT, "%.1f s", elapsed)));
        // calls cut off by the end of the window are answered late; let them drain first
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (client.stats().outstanding() > 0 && System.nanoTime() < deadline) Thread.sleep(10);
    }

    private static void timed(String what, int n, Supplier<Mono<?>> op) {
        op.get().block(TIMEOUT);
        long[] t = new long[n];
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            op.get().block(TIMEOUT);
            t[i] = System.nanoTime() - t0;
        }
        Arrays.sort(t);
        ROWS.add(new Row(what, us(percentile(t, 50)), us(percentile(t, 99)),
                String.format(Locale.ROOT, "%.1f MiB/s", LARGE / (double) (1 << 20) / (percentile(t, 50) / 1e9)), n + " sequential operations"));
    }

    private static void large(RpcClient client) {
        byte[] large = new byte[LARGE];
        client.call("echo", large).block(TIMEOUT);
        int n = 20;
        long[] t = new long[n];
        for (int i = 0; i < n; i++) {
            long t0 = System.nanoTime();
            client.call("echo", large).block(TIMEOUT);
            t[i] = System.nanoTime() - t0;
        }
        Arrays.sort(t);
        double mibPerSecond = 2.0 * LARGE / (1 << 20) / (percentile(t, 50) / 1e9);
        ROWS.add(new Row("RPC echo, " + LARGE + " B (READ + WRITE_WITH_IMM)", us(percentile(t, 50)), us(percentile(t, 99)),
                String.format(Locale.ROOT, "%.1f MiB/s", mibPerSecond), n + " sequential calls, both directions counted"));
    }

    private static long percentile(long[] sorted, int p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p / 100.0 * sorted.length) - 1)];
    }

    private static String us(long nanos) {
        return String.format(Locale.ROOT, "%.1f", nanos / 1e3);
    }

    /** One round trip at a time: the rate a median implies. */
    private static String rate(double medianMicros) {
        return String.format(Locale.ROOT, "%.0f /s at 1", 1e6 / medianMicros);
    }

    private static void print() {
        System.out.println();
        System.out.println("| measurement | median / typical (us) | p99 (us) | rate | note |");
        System.out.println("|---|---:|---:|---:|---|");
        for (Row r : ROWS) System.out.println("| " + r.what() + " | " + r.median() + " | " + r.p99() + " | " + r.rate() + " | " + r.note() + " |");
    }
}
