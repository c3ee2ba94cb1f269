package io.jrdma.reactive.bench;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import reactor.core.publisher.Flux;

/**
 * Sustained RDMA WRITE throughput of the reactive path between rxe0 and rxe1, printed next to
 * ib_write_bw measured in the same lab session (only ratios within one session mean anything: the
 * lab is an emulated machine). Runs inside the lab; {@code lab/bench} starts it.
 *
 * <pre>
 * WriteBench [--ib-write-bw SIZE=CLIENT_LOG]... [--sizes 64,4096] [--queue-depth 128] [--seconds 5]
 *            [--rounds 3] [--polling ADAPTIVE] [--accel tcg]
 * </pre>
 *
 * Every size is warmed up first. Then each size runs {@code --rounds} times, each round
 * {@code Flux.range(..).flatMap(i -> write, queueDepth)} for about {@code --seconds}: zero-copy
 * writes from one registered buffer into a rotating slot of the server's exposed memory, with
 * queueDepth of them in flight (ib_write_bw's default tx depth is 128, hence the default). The
 * table shows the median round and the range, because an emulated lab on a shared host is noisy.
 */
public final class WriteBench {
    private static final String SERVER_IP = System.getenv().getOrDefault("RXE_IP_B", "10.77.0.2");
    private static final String CLIENT_IP = System.getenv().getOrDefault("RXE_IP_A", "10.77.0.1");
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final int SLOTS = 64;
    private static final int WARMUP_OPS = 20_000;

    record Perftest(double opsPerSecond, double megabytesPerSecond) {}

    private record Round(long ops, double seconds) {
        double opsPerSecond() {
            return ops / seconds;
        }
    }

    public static void main(String[] args) throws IOException {
        Map<Integer, Perftest> perftest = new LinkedHashMap<>();
        List<Integer> sizes = List.of(64, 4096);
        int queueDepth = 128;
        double seconds = 5;
        int rounds = 3;
        PollingMode polling = PollingMode.ADAPTIVE;
        String accel = System.getenv().getOrDefault("JRDMA_LAB_ACCEL", "unknown");
        for (int i = 0; i < args.length; i += 2) {
            String value = i + 1 < args.length ? args[i + 1] : "";
            switch (args[i]) {
                case "--ib-write-bw" -> {
                    String[] sizeAndLog = value.split("=", 2);
                    perftest.put(Integer.parseInt(sizeAndLog[0]), parseIbWriteBw(Path.of(sizeAndLog[1])));
                }
                case "--sizes" -> sizes = Arrays.stream(value.split(",")).map(Integer::parseInt).toList();
                case "--queue-depth" -> queueDepth = Integer.parseInt(value);
                case "--seconds" -> seconds = Double.parseDouble(value);
                case "--rounds" -> rounds = Integer.parseInt(value);
                case "--polling" -> polling = PollingMode.valueOf(value);
                case "--accel" -> accel = value;
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        int largest = sizes.stream().mapToInt(Integer::intValue).max().orElseThrow();

        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0)
                .exposeBuffer((long) largest * SLOTS, Access.REMOTE_WRITE).bind().block(TIMEOUT);
        RdmaConnection client = RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP)
                .queueDepth(queueDepth, 4).buffers(largest, queueDepth).pollingMode(polling).connect().block(TIMEOUT);
        Map<Integer, List<Round>> measured = new LinkedHashMap<>();
        try {
            RemoteBuffer remote = client.remoteBuffer();
            RegisteredBuffer source = client.buffers().tryAcquire();
            // every size warms up before any is measured: the JIT is still busy after the first one
            Map<Integer, Round> warm = new LinkedHashMap<>();
            for (int size : sizes) warm.put(size, run(client, source, remote, size, WARMUP_OPS, queueDepth));
            for (int size : sizes) {
                long ops = Math.max(WARMUP_OPS, (long) (warm.get(size).opsPerSecond() * seconds));
                List<Round> r = new ArrayList<>();
                for (int round = 0; round < rounds; round++) r.add(run(client, source, remote, size, ops, queueDepth));
                measured.put(size, r);
            }
            source.release();
        } finally {
            client.close().block(TIMEOUT);
            server.dispose();
        }
        printTable(measured, perftest, queueDepth, polling, accel);
    }

    private static Round run(RdmaConnection client, RegisteredBuffer source, RemoteBuffer remote, int size, long ops, int inFlight) {
        long t0 = System.nanoTime();
        Long done = Flux.range(0, Math.toIntExact(ops))
                .flatMap(i -> client.write(source, 0, size, remote, (long) (i % SLOTS) * size), inFlight)
                .count()
                .block(TIMEOUT.multipliedBy(10));
        double elapsed = (System.nanoTime() - t0) / 1e9;
        if (done == null || done != ops) throw new IllegalStateException("completed " + done + " of " + ops + " writes");
        return new Round(ops, elapsed);
    }

    /**
     * The result line of ib_write_bw's client with --report_gbits: "#bytes #iterations BW peak[Gb/sec]
     * BW average[Gb/sec] MsgRate[Mpps]", then one line of numbers.
     */
    static Perftest parseIbWriteBw(Path clientLog) throws IOException {
        List<String> lines = Files.readAllLines(clientLog);
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (!lines.get(i).contains("#bytes")) continue;
            String[] f = lines.get(i + 1).trim().split("\\s+");
            if (f.length < 5) break;
            double gbits = Double.parseDouble(f[3]);
            double mpps = Double.parseDouble(f[4]);
            return new Perftest(mpps * 1e6, gbits * 1e9 / 8 / 1e6);
        }
        throw new IllegalArgumentException(clientLog + " has no ib_write_bw result line");
    }

    private static void printTable(Map<Integer, List<Round>> measured, Map<Integer, Perftest> perftest, int queueDepth,
                                   PollingMode polling, String accel) {
        System.out.printf(Locale.ROOT, "%nreactive RDMA WRITE (rdma_cm, rxe0 -> rxe1, %d in flight, %s polling, zero-copy)"
                + " vs ib_write_bw (-R, same lab session); lab accel: %s%n", queueDepth, polling, accel);
        System.out.printf(Locale.ROOT, "%6s | %10s %9s %15s | %10s %9s | %6s%n",
                "size", "ops/s", "MB/s", "ops/s range", "ib ops/s", "ib MB/s", "ratio");
        measured.forEach((size, rounds) -> {
            double[] rates = rounds.stream().mapToDouble(Round::opsPerSecond).sorted().toArray();
            double median = rates[rates.length / 2];
            Perftest ib = perftest.get(size);
            System.out.printf(Locale.ROOT, "%6d | %10.0f %9.2f %15s | %10s %9s | %6s%n", size, median, median * size / 1e6,
                    String.format(Locale.ROOT, "%.0f-%.0f", rates[0], rates[rates.length - 1]),
                    ib == null ? "-" : String.format(Locale.ROOT, "%.0f", ib.opsPerSecond()),
                    ib == null ? "-" : String.format(Locale.ROOT, "%.2f", ib.megabytesPerSecond()),
                    ib == null ? "-" : String.format(Locale.ROOT, "%.2f", median / ib.opsPerSecond()));
        });
        System.out.println("(median of the rounds; MB = 10^6 bytes; ratio = reactive ops/s / ib_write_bw ops/s)");
    }
}
