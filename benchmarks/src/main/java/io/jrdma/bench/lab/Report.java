package io.jrdma.bench.lab;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The session's CSV (one line per row, written as the row ends, so a crash keeps what ran) and
 * its table (written at the end, with a legend that says what every number is).
 */
final class Report {
    static final String HEADER = "accel,test,size,layer,polling,transport,iterations,depth,status,"
            + "jrdma_rate,jrdma_mb_s,jrdma_typical_us,jrdma_avg_us,jrdma_p99_us,jrdma_p999_us,"
            + "perftest_rate,perftest_mb_s,perftest_typical_us,perftest_avg_us,perftest_p99_us,perftest_p999_us,ratio,"
            + "client_cpu_us_op,server_cpu_us_op,client_jit_us_op,server_jit_us_op,perftest_client_cpu_us_op,perftest_server_cpu_us_op,"
            + "cpu_ratio_client,cpu_ratio_server,client_alloc_b_op,server_alloc_b_op,window_s,rnr_naks,perftest,note,credits,"
            + "stream_buffer";

    private final BenchClient.Options options;
    private final PrintWriter csv;
    private final List<String[]> table = new ArrayList<>();
    private final java.util.Set<String> skipped = new java.util.LinkedHashSet<>();
    private final String started = ZonedDateTime.now(ZoneOffset.UTC).format(DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm 'UTC'"));

    Report(BenchClient.Options options) throws IOException {
        this.options = options;
        Files.createDirectories(options.out());
        csv = new PrintWriter(Files.newBufferedWriter(options.out().resolve("results.csv"), StandardCharsets.UTF_8));
        csv.println(HEADER);
        csv.flush();
    }

    /** Records a row; returns its one-line summary for the log. */
    String add(RowResult r, PerftestRun perftest) {
        RowSpec s = r.spec();
        BenchTest test = s.test();
        PerftestRun.Result p = null;
        String perftestNote = perftest == null ? "none" : perftest.describe() + (perftest.ran() ? "" : ": " + perftest.status());
        if (perftest != null && perftest.ran()) {
            try {
                p = perftest.result();
            } catch (IOException | RuntimeException e) {
                perftestNote += ": " + ControlChannel.describe(e);
            }
        }
        // rpc_lat: a call's round trip beside ib_send_lat's round trip (perftest reports half of it)
        Latencies.Summary pl = p == null ? null : test.rpc() && !test.rate ? doubled(p.latency()) : p.latency();
        double jrdmaValue = !r.ok() ? Double.NaN : test.rate ? r.rate() : r.latency().typical();
        // perftest prints 0.00 when its clock calibration fails ("Correlation coefficient r^2 < 0.9"): no figure, not a zero
        double perftestValue = p == null ? Double.NaN : test.rate ? (p.rate() > 0 ? p.rate() : Double.NaN) : pl.typical();
        double ratio = test.rpc() && test.rate ? Double.NaN : jrdmaValue / perftestValue;
        double clientCpu = r.ok() ? r.perOp(r.client().cpuNanos()) : Double.NaN;
        double serverCpu = r.ok() ? r.perOp(r.server().cpuNanos()) : Double.NaN;
        double perftestClientCpu = perftest == null || test.rpc() ? Double.NaN : perftest.clientCpuPerOp();
        double perftestServerCpu = perftest == null || test.rpc() ? Double.NaN : perftest.serverCpuPerOp();
        Latencies.Summary jl = r.ok() ? r.latency() : null;

        List<String> f = new ArrayList<>();
        f.add(options.accel());
        f.add(test.label());
        f.add(Integer.toString(s.size()));
        f.add(s.layer().label() + s.schedulerLabel());
        f.add(s.polling().name());
        f.add(s.transport());
        f.add(Integer.toString(s.iterations()));
        f.add(Integer.toString(s.depth()));
        f.add(r.ok() ? "ok" : r.skipped() ? "skipped" : "failed");
        f.add(num(test.rate && r.ok() ? r.rate() : Double.NaN, 1));
        f.add(num(test.rate && r.ok() && !test.rpc() ? r.megabytesPerSecond() : Double.NaN, 3));
        addLatency(f, jl);
        f.add(num(test.rate && p != null ? p.rate() : Double.NaN, 1));
        f.add(num(test.rate && p != null && !test.rpc() ? p.megabytesPerSecond() : Double.NaN, 3));
        addLatency(f, test.rate ? null : pl);
        f.add(num(ratio, 3));
        f.add(num(clientCpu, 2));
        f.add(num(serverCpu, 2));
        f.add(num(r.ok() ? r.perOp(r.client().jitNanos()) : Double.NaN, 2));
        f.add(num(r.ok() ? r.perOp(r.server().jitNanos()) : Double.NaN, 2));
        f.add(num(perftestClientCpu, 2));
        f.add(num(perftestServerCpu, 2));
        double cpuRatioClient = ratio(clientCpu, perftestClientCpu);
        // the server of a one-sided test idles on both sides: a quotient of two noises says nothing
        double cpuRatioServer = test.passiveServer() ? Double.NaN : ratio(serverCpu, perftestServerCpu);
        f.add(num(cpuRatioClient, 3));
        f.add(num(cpuRatioServer, 3));
        f.add(num(r.ok() ? r.perOpBytes(r.client().allocatedBytes()) : Double.NaN, 1));
        f.add(num(r.ok() ? r.perOpBytes(r.server().allocatedBytes()) : Double.NaN, 1));
        f.add(num(r.ok() ? r.seconds() : Double.NaN, 3));
        f.add(r.ok() && r.rnrNaks() >= 0 ? Long.toString(r.rnrNaks()) : "");
        f.add(perftestNote);
        f.add(r.ok() ? "" : r.failure());
        // the reactive and Kotlin rows' receiver credits; rdma-ffm has none
        f.add(s.layer() == Layer.FFM || s.layer() == Layer.RSOCKET_TCP ? "" : s.credits() ? "on" : "off");
        f.add(test.stream() && s.layer() != Layer.RSOCKET_TCP ? Integer.toString(s.buffer()) : "");
        csv.println(String.join(",", f.stream().map(Report::csvField).toList()));
        csv.flush();

        String jrdma = r.skipped() ? "-" : !r.ok() ? "FAILED" : test.rate ? rate(r.rate(), test) : us(jl.typical());
        String base = p == null ? "-" : test.rate ? rate(p.rate(), test) : us(pl.typical());
        String detail = !r.ok() ? "" : test.rpc() && test.rate ? "" : test.rate ? mb(r.megabytesPerSecond()) : spread(jl);
        String baseDetail = p == null || test.rpc() && test.rate ? "" : test.rate ? mb(p.megabytesPerSecond()) : spread(pl);
        String layer = s.layer().label() + (s.credits() ? "" : " -credits") + (rendezvous(s) ? " rndv" : "") + s.schedulerLabel();
        // rsocket_tcp has no polling mode: it runs once, in the EVENT combination where there is one
        String polling = s.layer() == Layer.RSOCKET_TCP ? "(" + s.polling().name() + ")" : s.polling().name();
        if (r.skipped()) base = "-";
        table.add(new String[] {test.label(), size(s.size()), polling, layer, jrdma, base,
                Double.isNaN(ratio) ? "-" : String.format(Locale.ROOT, "%.2f", ratio), detail, baseDetail,
                pair(clientCpu, serverCpu, 1), pair(perftestClientCpu, perftestServerCpu, 1),
                pair(cpuRatioClient, cpuRatioServer, 2),
                r.ok() ? pair(r.perOpBytes(r.client().allocatedBytes()), r.perOpBytes(r.server().allocatedBytes()), 0) : "-",
                r.ok() && r.rnrNaks() >= 0 ? Long.toString(r.rnrNaks()) : "-"});
        if (r.skipped()) skipped.add(test.label() + " " + size(s.size()) + ": " + r.failure().substring("skipped: ".length()));
        return String.join(" | ", List.of(test.label(), size(s.size()), polling, layer, jrdma, "perftest " + base,
                "ratio " + (Double.isNaN(ratio) ? "-" : String.format(Locale.ROOT, "%.2f", ratio))))
                + (r.ok() && !r.counters().isEmpty() ? " | rxe: " + r.counters() : "")
                + (r.ok() ? "" : ": " + r.failure());
    }

    /** A stream row whose messages are above its receive buffers: each goes by rendezvous (the receiver READs it). */
    private static boolean rendezvous(RowSpec s) {
        return s.test().stream() && s.layer() != Layer.RSOCKET_TCP && s.size() > s.buffer();
    }

    /** a / b, or NaN where b is no figure or zero (perftest's idle server). */
    private static double ratio(double a, double b) {
        return b > 0 ? a / b : Double.NaN;
    }

    private static Latencies.Summary doubled(Latencies.Summary l) {
        return new Latencies.Summary(2 * l.typical(), 2 * l.average(), 2 * l.p99(), 2 * l.p999());
    }

    private static void addLatency(List<String> f, Latencies.Summary l) {
        f.add(num(l == null ? Double.NaN : l.typical(), 2));
        f.add(num(l == null ? Double.NaN : l.average(), 2));
        f.add(num(l == null ? Double.NaN : l.p99(), 2));
        f.add(num(l == null ? Double.NaN : l.p999(), 2));
    }

    /** The guest kernel's clocksource: System.nanoTime() costs ten times as much on the emulated HPET as on the TSC (lab/README.md). */
    private static String clockSource() {
        try {
            return Files.readString(Path.of("/sys/devices/system/clocksource/clocksource0/current_clocksource")).strip();
        } catch (IOException e) {
            return "unknown";
        }
    }

    void finish(double seconds) throws IOException {
        csv.close();
        String[] head = {"test", "size", "polling", "layer", "jrdma", "perftest", "ratio", "jrdma avg/p99/p99.9 us", "perftest avg/p99/p99.9 us",
            "CPU us/op c/s", "perftest CPU c/s", "CPU ratio c/s", "alloc B/op c/s", "rnr"};
        int[] width = new int[head.length];
        for (int i = 0; i < head.length; i++) width[i] = head[i].length();
        for (String[] row : table) for (int i = 0; i < row.length; i++) width[i] = Math.max(width[i], row[i].length());
        StringBuilder t = new StringBuilder();
        t.append(String.format(Locale.ROOT, "%nbin/bench, %s, %s (clock %s), jrdma connects over %s, perftest over %s, %s, %.0f s for the JVM rows%n",
                started, options.setting(), clockSource(), options.transport(), options.perftestSetup().equals("tcp") ? "its TCP exchange" : "rdma_cm (-R)",
                options.ackTimeout() < 0 ? "ACK timeouts the setup paths'" : "ACK timeout 2^" + options.ackTimeout() + " x 4.096 us on both",
                seconds));
        line(t, head, width, true);
        StringBuilder rule = new StringBuilder("|");
        for (int i = 0; i < width.length; i++) rule.append(i < 4 ? ":" : "-").append("-".repeat(width[i])).append(i < 4 ? "-|" : ":|");
        t.append(rule).append('\n');
        for (String[] row : table) line(t, row, width, false);
        for (String why : skipped) t.append("skipped: ").append(why).append('\n');
        t.append(legend());
        Files.writeString(options.out().resolve("table.txt"), t.toString());
        System.out.print(t);
    }

    private static void line(StringBuilder t, String[] cells, int[] width, boolean header) {
        t.append('|');
        for (int i = 0; i < cells.length; i++) {
            String cell = cells[i];
            String pad = " ".repeat(width[i] - cell.length());
            t.append(' ').append(i < 4 || header ? cell + pad : pad + cell).append(" |");
        }
        t.append('\n');
    }

    private String legend() {
        return """
                jrdma, perftest: messages/s (bandwidth tests), calls/s (rpc_rate), or the typical (median) latency in us: half the round trip
                  for write_lat and send_lat as perftest reports it, the whole READ for read_lat, a call's whole round trip for rpc_lat beside
                  ib_send_lat's round trip (twice its half). rpc_rate's perftest column is ib_send_lat's exchanges/s, for scale, no ratio.
                  The reactive and kotlin RPC rows keep the library's 4 KiB buffers; a call that does not fit them (above 3,968 B)
                  gets buffers of its size + 128 B at both ends, so it stays one SEND each way.
                  stream_bw: messages/s of one send(Publisher) (kotlin: awaitSend(Flow)) of all the row's messages, slices of the
                  exposed buffer from a generator that allocates nothing per message, the demand bound to the receiver's credits
                  (send slots alone with -credits), the receiver consuming receives() (kotlin: receivesFlow()) and releasing each;
                  beside ib_send_bw of the same size, depth and polling (send_bw's perftest run). Its receive buffers are
                  --stream-buffer bytes (4 KiB, the library's default), not the message size: a larger message ("rndv") goes by
                  rendezvous, a descriptor SEND and the receiver's RDMA READ of the registered source, beside ib_read_bw of the same
                  size, depth and polling (with the first --stream-buffer; a later one may make the same size eager).
                  rsocket, rsocket_tcp (lab/bench --layers ... rsocket rsocket_tcp): RSocket (rsocket-java 1.1.5) at both ends,
                  PayloadDecoder.ZERO_COPY, every payload released; rsocket over jrdma (rdma-rsocket's transports, the reactive
                  layer's settings, receive buffers of the row's size (stream rows: --stream-buffer) plus 64 B of frame
                  header), rsocket_tcp over rsocket-transport-netty's TCP between the same two IPs, through the lab's veth.
                  rpc_lat, rpc_rate: request-response of an echo responder (rpc_lat one at a time, the round trip; rpc_rate the
                  row's depth in flight). stream_bw: one request-stream of all the row's messages, slices of one buffer at the
                  responder, the client's REQUEST_N keeping at most the row's depth outstanding (half of it requested again as
                  half arrives). channel_bw (rsocket layers only): one request-channel of the row's messages, echoed by the
                  responder, messages/s of the echoes at the client (each message crosses twice), beside ib_send_bw as
                  stream_bw. rsocket_tcp has no polling mode: it runs once per test and size, in the EVENT combination
                  where there is one, its polling shown in parentheses; its CPU includes the kernel's TCP (system time).
                ratio: jrdma / perftest, both in this lab session with the same size, iterations, depths and polling (BUSY = perftest's
                  default busy polling, EVENT = perftest -e; write_* have no -e in perftest 4.5, so BUSY only). Above 1 is better for rates,
                  below 1 is better for latencies.
                layers: ffm = rdma-ffm's verbs objects in a loop like perftest's (preallocated work requests, every cq-mod-th signalled);
                  reactive = rdma-reactive's Monos, depth in flight, one subscriber per operation; kotlin = rdma-kotlin's suspend functions,
                  a coroutine per operation in flight (Dispatchers.Unconfined). "-credits": the row with receiverCredits(false) at
                  both ends (lab/bench --credits), so a message is posted without waiting for a grant and no grant is sent; the
                  others have the library's default, credits on (docs/credit-protocol.md). write_lat: ffm and perftest spin on memory, reactive and
                  kotlin answer WRITE_WITH_IMM with WRITE_WITH_IMM (a receiver learns of a WRITE only from its RECV completion).
                  write_lat_poll: reactive and kotlin answer a WRITE with a WRITE, each end waiting for the last byte of the
                  other's with a one-sided wait (byteChange / awaitByteChange: the loop reads the byte), beside ib_write_lat.
                posting: perftest (default, no --post_list) and ffm post one work request per ibv_post_send; reactive and kotlin
                  chain what a poll batch's completions make possible into one ibv_post_send (rdma-reactive's chained posts).
                CPU us/op c/s: user + system CPU of the client / server process per operation. jrdma: every thread of each JVM (JIT
                  compiler threads included, their share is in the CSV) over the measured window, from /proc/self/task/*/schedstat.
                  perftest: each process's schedstat from the client's result header (printed right before its measured loop) to
                  its result line, both read as perftest prints them, less what a 5-iteration run of the same program and polling
                  spends in that window (mostly perftest's ~0.2 s clock calibration before it prints; 0.0 when the difference is
                  below that run's noise, as for the idle server of a one-sided test). CPU ratio: jrdma / perftest (none for the
                  idle server of write_bw, read_bw, read_lat). Under tcg the calibration of a BUSY ping-pong shares the vCPUs
                  with a spinning peer and varies by a second: perftest's CPU of BUSY latency rows there is unreliable.
                perftest connects over its TCP exchange unless --perftest-setup rdma_cm: with -R its server busy-polls an RDMA
                  side channel through the whole test, also where it has nothing to do (write_bw, read_bw, read_lat), and takes the
                  CPU rxe needs in the emulated lab. The setup path leaves the data path alike (RC QP, path MTU, depths, inline)
                  but for the QPs' ACK timeout: perftest's TCP exchange programs 2^14 x 4.096 us (67 ms), rdma_cm about 2.1 s on
                  RoCE. jrdma's QPs get perftest's, whichever path they take. It matters to READs of 1 MiB: the lab's veth drops
                  what passes its 1,000-packet receive backlog (net.core.netdev_max_backlog), rxe's responder sends a READ's 1,024
                  response packets in one burst, and the requester's ACK timer resumes each such READ (67 ms: ~11 READs/s).
                BUSY under single-threaded tcg: jrdma's BUSY loop spins with Thread.onSpinWait (x86 PAUSE), on which QEMU's TCG hands
                  the host thread to the other vCPU; perftest and the ffm rows spin without it and keep the vCPU for a whole time
                  slice, so their ping-pongs take milliseconds. BUSY latency rows under tcg compare the emulator's scheduling;
                  tcg-mt runs the vCPUs in parallel.
                alloc B/op c/s: bytes allocated by all threads of the client / server JVM over the window per operation
                  (com.sun.management.ThreadMXBean#getTotalThreadAllocatedBytes).
                rnr, rxe counters: rnr (rnr_naks in the CSV) is rcvd_rnr_err of both rxe devices over the window, SENDs that found no receive
                  posted and waited the receiver's min_rnr_timer (0.64 ms; 655 ms for reactive and kotlin over rdma_cm) before a retry; the log line
                  names every hw_counter that moved (completer_retry_err: a resend after the 67 ms ACK timeout, a packet the veth
                  dropped). perftest's runs log theirs too.
                """ + "CSV: " + relative(options.out().resolve("results.csv")) + "\n";
    }

    /** A path as the reader finds it in the checkout (the lab mounts the checkout elsewhere than the host has it). */
    private static Path relative(Path p) {
        Path here = Path.of("").toAbsolutePath();
        Path abs = p.toAbsolutePath();
        return abs.startsWith(here) ? here.relativize(abs) : abs;
    }

    private static String rate(double perSecond, BenchTest test) {
        return String.format(Locale.ROOT, "%,.0f/s", perSecond);
    }

    private static String us(double micros) {
        return String.format(Locale.ROOT, micros < 100 ? "%.1f us" : "%,.0f us", micros);
    }

    private static String mb(double megabytes) {
        return String.format(Locale.ROOT, megabytes < 10 ? "%.2f MB/s" : "%,.1f MB/s", megabytes);
    }

    private static String spread(Latencies.Summary l) {
        return l == null ? "" : String.format(Locale.ROOT, "%s / %s / %s", brief(l.average()), brief(l.p99()), brief(l.p999()));
    }

    private static String brief(double micros) {
        return String.format(Locale.ROOT, micros < 100 ? "%.1f" : "%,.0f", micros);
    }

    private static String pair(double a, double b, int decimals) {
        return (Double.isNaN(a) ? "-" : String.format(Locale.ROOT, "%,." + decimals + "f", a)) + " / "
                + (Double.isNaN(b) ? "-" : String.format(Locale.ROOT, "%,." + decimals + "f", b));
    }

    static String size(int bytes) {
        if (bytes >= 1 << 20 && bytes % (1 << 20) == 0) return (bytes >> 20) + " MiB";
        if (bytes >= 1024 && bytes % 1024 == 0) return (bytes >> 10) + " KiB";
        return bytes + " B";
    }

    private static String num(double v, int decimals) {
        return Double.isNaN(v) || Double.isInfinite(v) ? "" : String.format(Locale.ROOT, "%." + decimals + "f", v);
    }

    private static String csvField(String v) {
        return v.contains(",") || v.contains("\"") ? "\"" + v.replace("\"", "\"\"") + "\"" : v;
    }
}
