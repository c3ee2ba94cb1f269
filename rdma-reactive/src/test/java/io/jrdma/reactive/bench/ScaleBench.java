package io.jrdma.reactive.bench;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.IntStream;
import java.util.function.BiFunction;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One server and N clients in one JVM, the way a server with many peers lives: how long N
 * concurrent rdma_cm connects take, what N connections cost in threads, memory and idle CPU, the
 * aggregate WRITE and SEND rate with a fixed number in flight per connection, and how long closing
 * them all takes. One run measures one N and appends one CSV row; {@code lab/bench-scale} runs it
 * once per N (a fresh JVM each, so RSS is not inherited) beside {@code ib_write_bw -q N} and
 * prints the table.
 *
 * <pre>
 * ScaleBench --connections N --csv FILE [--seconds 5] [--warmup 3] [--in-flight 16] [--receive-depth 16*in-flight] [--size 64]
 *            [--polling ADAPTIVE] [--transport RDMA_CM] [--idle-seconds 3] [--ib-write-bw CLIENT_LOG]
 *            [--loops L] [--srq DEPTH] [--ack-timeout MS] [--connect-timeout S] [--accel tcg]
 * </pre>
 *
 * {@code --loops} sizes the {@link RdmaResources} both ends share (default: one loop per
 * available processor); {@code --srq DEPTH} makes the server receive through one shared receive
 * queue of that depth instead of {@code --receive-depth} receives per connection.
 *
 * Only the fluent public API is used, so the bench ports to a changed core unchanged in intent.
 * Failures (connects that time out, operations that fail, closes that do not finish) are counted
 * and written to the row's notes; a phase that cannot finish within its limit is reported, not
 * waited for.
 */
public final class ScaleBench {
    private static final String SERVER_IP = System.getenv().getOrDefault("RXE_IP_B", "10.77.0.2");
    private static final String CLIENT_IP = System.getenv().getOrDefault("RXE_IP_A", "10.77.0.1");
    private static final int SLOTS = 64;
    /** Generous: by hand, 256 connects took 13.6 s and closing them 55 s; the bench must report such times, not die of them. */
    private static final Duration CONNECT_WAIT = Duration.ofSeconds(300);
    private static final Duration CLOSE_WAIT = Duration.ofSeconds(300);
    private static final Duration SETUP_WAIT = Duration.ofSeconds(60);
    /** Past the measured interval an operation still has its own 30 s operationTimeout; this is the bench's backstop. */
    private static final Duration TRAFFIC_GRACE = Duration.ofSeconds(90);

    static final List<String> CSV_COLUMNS = List.of("accel", "polling", "loops", "srq", "transport", "size", "in_flight", "receive_depth", "n",
            "connected", "connect_failed", "connect_s", "server_accepted", "threads", "peak_threads", "open_fds", "fd_limit", "rss_mib",
            "reg_kib", "vmpin_kib", "write_ops_s", "write_spread", "write_rnr_naks", "write_retransmits", "send_ops_s", "send_spread", "send_rnr_naks",
            "send_retransmits", "ib_write_bw_msg_s", "ratio", "jit_settle_s", "idle_cpu_ms_s", "idle_cpu_by_thread", "close_s", "close_unfinished",
            "server_dispose_s", "rss_after_mib", "reg_after_kib", "vmpin_after_kib", "threads_after", "open_fds_after", "ack_timeout_ms", "notes");

    private final int n;
    private final double seconds;
    private final double warmup;
    private final int inFlight;
    private final int receiveDepth;
    private final int size;
    private final PollingMode polling;
    private final Transport transport;
    private final double idleSeconds;
    private final int loops;
    private final int srq;
    private final Map<String, Object> row = new LinkedHashMap<>();
    /** Appended from poller threads too (a close that fails). */
    private final List<String> notes = Collections.synchronizedList(new ArrayList<>());
    /** Both ends' ACK timeout ({@code --ack-timeout MS}), or null for the setup path's (rdma_cm's ~2.1 s on rxe). */
    private Duration ackTimeout;
    /** Each client's connect timeout ({@code --connect-timeout S}), or null for the library's 10 s. */
    private Duration connectTimeout;

    private ScaleBench(int n, double seconds, double warmup, int inFlight, int receiveDepth, int size, PollingMode polling,
                       Transport transport, double idleSeconds, int loops, int srq) {
        this.n = n;
        this.seconds = seconds;
        this.warmup = warmup;
        this.inFlight = inFlight;
        this.receiveDepth = receiveDepth;
        this.size = size;
        this.polling = polling;
        this.transport = transport;
        this.idleSeconds = idleSeconds;
        this.loops = loops;
        this.srq = srq;
    }

    public static void main(String[] args) throws IOException {
        int n = 1, inFlight = 16, receiveDepth = 0, size = 64, loops = 0, srq = 0;
        double seconds = 5, warmup = 3, idleSeconds = 3;
        PollingMode polling = PollingMode.ADAPTIVE;
        Transport transport = Transport.RDMA_CM;
        Path csv = null, ibWriteBw = null;
        Duration ackTimeout = null, connectTimeout = null;
        String accel = System.getenv().getOrDefault("JRDMA_LAB_ACCEL", "unknown");
        for (int i = 0; i < args.length; i += 2) {
            String value = i + 1 < args.length ? args[i + 1] : "";
            switch (args[i]) {
                case "--connections" -> n = Integer.parseInt(value);
                case "--seconds" -> seconds = Double.parseDouble(value);
                case "--warmup" -> warmup = Double.parseDouble(value);
                case "--in-flight" -> inFlight = Integer.parseInt(value);
                case "--receive-depth" -> receiveDepth = Integer.parseInt(value);
                case "--size" -> size = Integer.parseInt(value);
                case "--polling" -> polling = PollingMode.valueOf(value.toUpperCase(Locale.ROOT));
                case "--transport" -> transport = Transport.valueOf(value.toUpperCase(Locale.ROOT).replace('-', '_'));
                case "--idle-seconds" -> idleSeconds = Double.parseDouble(value);
                case "--csv" -> csv = Path.of(value);
                case "--ib-write-bw" -> ibWriteBw = value.isEmpty() ? null : Path.of(value);
                case "--accel" -> accel = value;
                case "--loops" -> loops = Integer.parseInt(value);
                case "--srq" -> srq = Integer.parseInt(value);
                case "--ack-timeout" -> ackTimeout = value.isEmpty() ? null : Duration.ofMillis(Long.parseLong(value));
                case "--connect-timeout" -> connectTimeout = value.isEmpty() ? null : Duration.ofSeconds(Long.parseLong(value));
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        ScaleBench bench = new ScaleBench(n, seconds, warmup, inFlight, receiveDepth > 0 ? receiveDepth : 16 * inFlight, size, polling,
                transport, idleSeconds, loops, srq);
        bench.row.put("accel", accel);
        bench.ackTimeout = ackTimeout;
        bench.connectTimeout = connectTimeout;
        if (ibWriteBw != null) {
            try {
                bench.row.put("ib_write_bw_msg_s", Math.round(ibWriteBwMessageRate(ibWriteBw)));
            } catch (IOException | RuntimeException e) {
                bench.notes.add("ib_write_bw log unreadable: " + e.getMessage());
            }
        }
        int status = 0;
        try {
            bench.run();
        } catch (Throwable t) {
            // the row is still written: a half-measured N is a result, a missing row hides it
            bench.notes.add("aborted: " + t);
            System.out.println("ScaleBench N=" + n + ": aborted: " + t);
            t.printStackTrace(System.out);
            status = 1;
        }
        if (csv != null) bench.appendCsv(csv);
        System.exit(status);
    }

    private void run() {
        row.put("polling", polling);
        row.put("transport", transport == Transport.RDMA_CM ? "rdma_cm" : "tcp");
        row.put("size", size);
        row.put("in_flight", inFlight);
        row.put("receive_depth", receiveDepth);
        row.put("n", n);

        // 16× in flight receives on the server by default: a receive is re-posted only after the
        // server's poller took its completion and the message was released, while the client's SEND
        // completes on rxe's ACK alone, so the client runs ahead by whatever the server's poller
        // lags. Each RNR NAK stalls a connection for the RNR timer (rdma_cm leaves min_rnr_timer 0,
        // 655 ms): with 2× in flight, N=1 made 123 SENDs/s and N=64 met 109 RNR NAKs in 3 s. RNR NAKs
        // that remain are counted.
        // both ends share one set of loops: the cost of N connections is the cost of N on the same loops
        RdmaResources resources = loops > 0 ? RdmaResources.create("jrdma", loops) : RdmaResources.shared();
        row.put("loops", resources.loops());
        row.put("srq", srq > 0 ? Integer.toString(srq) : "");
        RdmaServer serverSpec = RdmaServer.create().host(SERVER_IP).port(0).transport(transport).runOn(resources)
                .queueDepth(inFlight, receiveDepth).buffers(size, inFlight).pollingMode(polling)
                .exposeBuffer((long) size * SLOTS, Access.REMOTE_WRITE);
        if (srq > 0) serverSpec = serverSpec.sharedReceiveQueue(srq);
        if (ackTimeout != null) serverSpec = serverSpec.ackTimeout(ackTimeout);
        row.put("ack_timeout_ms", ackTimeout == null ? "" : Long.toString(ackTimeout.toMillis()));
        DisposableRdmaServer server = serverSpec.bind().block(SETUP_WAIT);
        Queue<RdmaConnection> accepted = new ConcurrentLinkedQueue<>();
        LongAdder received = new LongAdder();
        server.connections().subscribe(c -> {
            accepted.add(c);
            c.receives().subscribe(m -> {
                m.release();
                received.increment();
            }, e -> { });  // ends with Closed when the connection goes: that is the end of the run, not a failure
        });
        // clients receive nothing: their receive queue is the small one
        RdmaClient client = RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP)
                .transport(transport).runOn(resources).queueDepth(inFlight, inFlight).buffers(size, inFlight).pollingMode(polling);
        if (ackTimeout != null) client = client.ackTimeout(ackTimeout);
        if (connectTimeout != null) client = client.connectTimeout(connectTimeout);

        // one connection first, opened and closed: the first connect of a JVM also loads classes
        // and opens the device, which is not what N connects cost
        RdmaConnection first = client.connect().block(SETUP_WAIT);
        long firstAccepted = System.nanoTime() + SETUP_WAIT.toNanos();
        while (accepted.isEmpty() && System.nanoTime() < firstAccepted) sleep(0.01);
        Mono.when(first.close(), Mono.when(accepted.stream().map(RdmaConnection::onDispose).toList())).block(SETUP_WAIT);
        accepted.clear();

        List<RdmaConnection> clients = connectAll(client);
        long acceptDeadline = System.nanoTime() + SETUP_WAIT.toNanos();
        while (accepted.size() < clients.size() && System.nanoTime() < acceptDeadline) sleep(0.01);
        row.put("server_accepted", accepted.size());
        if (accepted.size() != clients.size()) {
            notes.add("server accepted " + accepted.size() + " connections, clients hold " + clients.size());
        }

        long idleFrom = System.nanoTime();
        if (!clients.isEmpty()) {
            Map<RdmaConnection, RegisteredBuffer> sources = new LinkedHashMap<>();
            for (RdmaConnection c : clients) sources.put(c, c.buffers().tryAcquire());
            BiFunction<RdmaConnection, Integer, Mono<?>> write = (c, i) ->
                    c.write(sources.get(c), 0, size, c.remoteBuffer(), (long) (i % SLOTS) * size);
            BiFunction<RdmaConnection, Integer, Mono<?>> send = (c, i) -> c.send(sources.get(c), 0, size);
            // the JIT (C1 in the lab) is still compiling through the first second of traffic
            stream("warm-up WRITE", clients, write, warmup);
            stream("warm-up SEND", clients, send, warmup);
            Map<String, Long> c0 = ProcessProbe.Rdma.counters();
            Rates writes = stream("WRITE", clients, write, seconds);
            row.put("write_ops_s", Math.round(writes.total()));
            row.put("write_spread", writes.spread());
            Map<String, Long> c1 = ProcessProbe.Rdma.counters();
            Rates sends = stream("SEND", clients, send, seconds);
            row.put("send_ops_s", Math.round(sends.total()));
            row.put("send_spread", sends.spread());
            Map<String, Long> c2 = ProcessProbe.Rdma.counters();
            // idle means idle once every operation-timeout sweep the traffic armed has fired (one per
            // connection with operations posted, due an operation timeout after it posted)
            idleFrom = System.nanoTime() + clients.getFirst().config().operationTimeout().plusSeconds(1).toNanos();
            // rxe's device-wide counters: nothing but this JVM uses the lab's devices while it runs
            row.put("write_rnr_naks", ProcessProbe.Rdma.delta(c0, c1, "rcvd_rnr_err"));
            row.put("write_retransmits", ProcessProbe.Rdma.delta(c0, c1, "completer_retry_err"));
            row.put("send_rnr_naks", ProcessProbe.Rdma.delta(c1, c2, "rcvd_rnr_err"));
            row.put("send_retransmits", ProcessProbe.Rdma.delta(c1, c2, "completer_retry_err"));
            sources.values().forEach(RegisteredBuffer::release);  // else its pool, and its registration, outlive close
            Object ib = row.get("ib_write_bw_msg_s");
            if (ib instanceof Long ibRate && ibRate > 0) {
                row.put("ratio", String.format(Locale.ROOT, "%.2f", ((Long) row.get("write_ops_s")) / (double) ibRate));
            }
        }

        // idle: every connection up, nothing posted, pollers back to sleep after the last burst
        sleep(1);
        ProcessProbe.Memory connected = ProcessProbe.Memory.sample();
        row.put("threads", connected.threads());
        row.put("peak_threads", ManagementFactory.getThreadMXBean().getPeakThreadCount());
        row.put("open_fds", connected.openFds());
        row.put("fd_limit", ProcessProbe.openFileLimit());
        row.put("rss_mib", mib(connected.rssBytes()));
        row.put("vmpin_kib", kib(connected.pinnedBytes()));
        row.put("reg_kib", kib(connected.registeredBytes()));
        ProcessProbe.threadCpuNanos();  // loads what the measurement runs, before it counts
        long settling = System.nanoTime();
        if (!ProcessProbe.awaitJitQuiet(Duration.ofSeconds(30))) notes.add("the JIT was still compiling 30 s after the traffic: idle CPU includes it");
        row.put("jit_settle_s", seconds(settling));
        if (idleFrom - System.nanoTime() > 0) sleep((idleFrom - System.nanoTime()) / 1e9);
        ProcessProbe.IdleCpu idle = ProcessProbe.idleCpu(idleSeconds);
        if (idle.note() != null) notes.add(idle.note());
        row.put("idle_cpu_by_thread", idle.byThread());
        double idleMsPerSecond = idle.msPerSecond();
        row.put("idle_cpu_ms_s", String.format(Locale.ROOT, "%.1f", idleMsPerSecond));
        System.out.printf(Locale.ROOT, "ScaleBench N=%d: %d threads, %d fds (limit %s), RSS %s MiB, registered %s KiB (VmPin %s KiB), idle CPU %.1f ms/s (ms/s by thread: %s)%n",
                n, connected.threads(), connected.openFds(), row.get("fd_limit"), row.get("rss_mib"), row.get("reg_kib"), row.get("vmpin_kib"),
                idleMsPerSecond, row.get("idle_cpu_by_thread"));

        closeAll(clients, List.copyOf(accepted));
        long d0 = System.nanoTime();
        try {
            server.disposeLater().block(SETUP_WAIT);
            row.put("server_dispose_s", seconds(d0));
        } catch (RuntimeException e) {
            notes.add("server dispose did not finish: " + e.getMessage());
        }
        sleep(1);
        ProcessProbe.Memory after = ProcessProbe.Memory.sample();
        row.put("rss_after_mib", mib(after.rssBytes()));
        row.put("reg_after_kib", kib(after.registeredBytes()));
        row.put("vmpin_after_kib", kib(after.pinnedBytes()));
        row.put("threads_after", after.threads());
        row.put("open_fds_after", after.openFds());
        System.out.printf(Locale.ROOT, "ScaleBench N=%d: after close %d threads, %d fds, RSS %s MiB, registered %s KiB (VmPin %s KiB); server received %d messages%n",
                n, after.threads(), after.openFds(), row.get("rss_after_mib"), row.get("reg_after_kib"), row.get("vmpin_after_kib"), received.sum());
    }

    /** All N connects subscribed at once; returns those that were established, counting the rest by cause. */
    private List<RdmaConnection> connectAll(RdmaClient client) {
        Queue<RdmaConnection> connected = new ConcurrentLinkedQueue<>();
        Map<String, AtomicInteger> failures = new ConcurrentHashMap<>();
        Map<String, String> firstMessage = new ConcurrentHashMap<>();
        AtomicLong lastSuccess = new AtomicLong();
        long t0 = System.nanoTime();
        Mono<Void> all = Flux.range(0, n)
                .flatMap(i -> client.connect()
                        .doOnNext(c -> {
                            connected.add(c);
                            lastSuccess.set(System.nanoTime());
                        })
                        .onErrorResume(e -> {
                            String cause = e.getClass().getName().replaceFirst("^.*\\.", "");
                            failures.computeIfAbsent(cause, k -> new AtomicInteger()).incrementAndGet();
                            firstMessage.putIfAbsent(cause, String.valueOf(e.getMessage()));
                            return Mono.empty();
                        }), n)
                .then();
        int pending = 0;
        try {
            all.block(CONNECT_WAIT);
        } catch (IllegalStateException timeout) {
            // block() cancelled the rest: a connect finishing later is closed by the client, not leaked
            pending = n - connected.size() - failures.values().stream().mapToInt(AtomicInteger::get).sum();
            notes.add(pending + " connects still pending after " + CONNECT_WAIT.toSeconds() + " s (cancelled)");
        }
        double settled = seconds(t0);
        int failed = failures.values().stream().mapToInt(AtomicInteger::get).sum() + pending;
        row.put("connected", connected.size());
        row.put("connect_failed", failed);
        row.put("connect_s", settled);
        failures.forEach((cause, count) -> notes.add("connect: " + count + " x " + cause + " (" + firstMessage.get(cause) + ")"));
        System.out.printf(Locale.ROOT, "ScaleBench N=%d %s %s: %d of %d connected, all settled after %.2f s (last success at %.2f s)%s%n",
                n, transport, polling, connected.size(), n, settled,
                connected.isEmpty() ? 0 : (lastSuccess.get() - t0) / 1e9, failed == 0 ? "" : ", " + failed + " failed");
        return List.copyOf(connected);
    }

    /**
     * The rates of a stream: all completions per second, and each connection's (issue 29's
     * fairness: the slowest, the median and the fastest connection, and the slowest over the median).
     */
    record Rates(double total, double[] perConnection) {
        Rates {
            perConnection = perConnection.clone();
            Arrays.sort(perConnection);
        }

        /** {@code min/median/max ops/s (min/median)} of the connections, or "-" without any. */
        String spread() {
            if (perConnection.length == 0) return "-";
            double min = perConnection[0], median = perConnection[perConnection.length / 2], max = perConnection[perConnection.length - 1];
            return String.format(Locale.ROOT, "%.0f/%.0f/%.0f (%.2f)", min, median, max, median == 0 ? 0 : min / median);
        }
    }

    /**
     * Every connection keeps {@code inFlight} operations posted for {@code duration} seconds
     * (flatMap replaces each completion with the next post); the rate is all completions over the
     * time until the last connection drained, each connection's its own completions over that time.
     */
    private Rates stream(String what, List<RdmaConnection> clients, BiFunction<RdmaConnection, Integer, Mono<?>> op, double duration) {
        LongAdder completed = new LongAdder();
        AtomicLongArray perConnection = new AtomicLongArray(clients.size());
        Map<String, AtomicInteger> errors = new ConcurrentHashMap<>();
        Map<String, String> firstMessage = new ConcurrentHashMap<>();
        long t0 = System.nanoTime();
        long deadline = t0 + (long) (duration * 1e9);
        List<Mono<Void>> streams = IntStream.range(0, clients.size()).mapToObj(k -> Flux.range(0, Integer.MAX_VALUE)
                .takeWhile(i -> System.nanoTime() < deadline)
                .flatMap(i -> op.apply(clients.get(k), i), inFlight)
                .doOnNext(wc -> {
                    completed.increment();
                    perConnection.incrementAndGet(k);
                })
                .then()
                .onErrorResume(e -> {
                    String cause = e.getClass().getName().replaceFirst("^.*\\.", "");
                    errors.computeIfAbsent(cause, x -> new AtomicInteger()).incrementAndGet();
                    firstMessage.putIfAbsent(cause, String.valueOf(e.getMessage()));
                    return Mono.empty();
                })).toList();
        try {
            Mono.when(streams).block(Duration.ofMillis((long) (duration * 1000)).plus(TRAFFIC_GRACE));
        } catch (IllegalStateException timeout) {
            notes.add(what + ": connections still busy " + TRAFFIC_GRACE.toSeconds() + " s after the interval (cancelled)");
        }
        double elapsed = seconds(t0);
        double rate = completed.sum() / elapsed;
        errors.forEach((cause, count) -> notes.add(what + ": " + count + " connections stopped on " + cause + " (" + firstMessage.get(cause) + ")"));
        double[] rates = new double[clients.size()];
        for (int k = 0; k < rates.length; k++) rates[k] = perConnection.get(k) / elapsed;
        Rates result = new Rates(rate, rates);
        System.out.printf(Locale.ROOT, "ScaleBench N=%d: %s %d completions in %.2f s = %.0f ops/s, per connection min/median/max %s%s%n", n, what,
                completed.sum(), elapsed, rate, result.spread(),
                errors.isEmpty() ? "" : ", " + errors.values().stream().mapToInt(AtomicInteger::get).sum() + " connections failed");
        return result;
    }

    /** Closes every client at once; done when both ends of every connection are closed. */
    private void closeAll(List<RdmaConnection> clients, List<RdmaConnection> accepted) {
        AtomicInteger unfinished = new AtomicInteger(clients.size() + accepted.size());
        List<Mono<Void>> closes = new ArrayList<>();
        long t0 = System.nanoTime();
        for (RdmaConnection c : clients) closes.add(finished(c.close(), unfinished));
        // the server's end closes on the peer's DISCONNECTED: part of what "closing N" costs
        for (RdmaConnection c : accepted) closes.add(finished(c.onDispose(), unfinished));
        try {
            Mono.when(closes).block(CLOSE_WAIT);
        } catch (IllegalStateException timeout) {
            notes.add(unfinished.get() + " connection ends not closed after " + CLOSE_WAIT.toSeconds() + " s");
        }
        double elapsed = seconds(t0);
        row.put("close_s", elapsed);
        row.put("close_unfinished", unfinished.get());
        System.out.printf(Locale.ROOT, "ScaleBench N=%d: closed %d client and %d server connection ends in %.2f s%s%n",
                n, clients.size(), accepted.size(), elapsed, unfinished.get() == 0 ? "" : ", " + unfinished.get() + " unfinished");
    }

    private Mono<Void> finished(Mono<Void> close, AtomicInteger unfinished) {
        return close.onErrorResume(e -> {
            notes.add("close failed: " + e);
            return Mono.empty();
        }).doOnSuccess(v -> unfinished.decrementAndGet());
    }

    private void appendCsv(Path csv) throws IOException {
        row.put("notes", String.join("; ", List.copyOf(notes)).replace(',', ' ').replace('\n', ' '));
        Files.createDirectories(csv.toAbsolutePath().getParent());
        StringBuilder line = new StringBuilder();
        if (!Files.exists(csv)) line.append(String.join(",", CSV_COLUMNS)).append('\n');
        List<String> values = new ArrayList<>();
        for (String column : CSV_COLUMNS) {
            Object v = row.get(column);
            values.add(v == null ? "" : v instanceof Double d ? String.format(Locale.ROOT, "%.2f", d) : v.toString());
        }
        line.append(String.join(",", values)).append('\n');
        Files.writeString(csv, line, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
    }

    /**
     * ib_write_bw's message rate from its client log (with --report_gbits): the line after
     * "#bytes #iterations BW peak[Gb/sec] BW average[Gb/sec] MsgRate[Mpps]".
     */
    static double ibWriteBwMessageRate(Path clientLog) throws IOException {
        List<String> lines = Files.readAllLines(clientLog);
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (!lines.get(i).contains("#bytes")) continue;
            String[] f = lines.get(i + 1).trim().split("\\s+");
            if (f.length < 5) break;
            return Double.parseDouble(f[4]) * 1e6;
        }
        throw new IllegalArgumentException(clientLog + " has no ib_write_bw result line");
    }

    private static String mib(long bytes) {
        return bytes < 0 ? "" : String.format(Locale.ROOT, "%.1f", bytes / 1048576.0);
    }

    private static String kib(long bytes) {
        return bytes < 0 ? "" : Long.toString((bytes + 1023) / 1024);
    }

    private static double seconds(long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    private static void sleep(double seconds) {
        ProcessProbe.sleep(seconds);
    }
}
