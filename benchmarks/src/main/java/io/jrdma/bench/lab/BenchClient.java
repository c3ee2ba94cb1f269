package io.jrdma.bench.lab;

import io.jrdma.bench.lab.Ends.ClientEnd;
import io.jrdma.reactive.PollingMode;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The client JVM of {@code lab/bench}: runs every row of the session's matrix on rxe0 against the
 * bench server on rxe1, each after perftest ran the same combination in the same lab session,
 * and writes the CSV and the table. A row that fails is reported as failed and the next row
 * runs; every wait has a limit.
 */
final class BenchClient {
    /** perftest's default local ACK timeout (-u): 4.096 us x 2^14, about 67 ms. */
    static final int PERFTEST_ACK_TIMEOUT = 14;

    private final Options options;
    private ControlChannel control;
    private boolean serverGone;

    /**
     * The command line: where things are and what the matrix does not say.
     *
     * @param control     the bench server's control socket: {@code PORT} on the loopback, or {@code HOST:PORT}
     * @param matrix      matrix.tsv: the combinations, with perftest's results
     * @param out         where the CSV and the table go
     * @param accel       the lab's accelerator, or a real host's label: the CSV's first column
     * @param setting     where it ran, for the table's first line (default "lab accel ACCEL")
     * @param layers      the layers to run (default ffm, reactive, kotlin; rsocket and rsocket_tcp only when named)
     * @param transport   jrdma's setup path: rdma_cm or tcp
     * @param perftestSetup perftest's setup path: tcp (its socket exchange) or rdma_cm (-R)
     * @param inline      inline size
     * @param readDepth   READs outstanding
     * @param cqMod       rdma-ffm's signalling interval
     * @param warmup      seconds of warm-up per row
     * @param rowLimit    how long one row may take, warm-up included
     * @param jitQuiet    how much longer than the warm-up a row may wait for the JIT threads to go quiet
     * @param credits     receiver credits of the reactive and Kotlin rows, in order: each combination runs on
     *                    those layers once per entry ("on off off on": an A/B/B/A of the credit path); rdma-ffm
     *                    has none and runs once
     * @param streamBuffers the receive buffer sizes of the stream rows, each stream combination once per entry (a
     *                    larger message goes by rendezvous); the first, the library's default, picks the perftest row
     * @param rpcSchedulers the RPC server's handler schedulers of the rpc_lat and rpc_rate rows of the reactive and
     *                    Kotlin layers, each once per entry, in order ({@link RowSpec#SCHEDULERS}); other rows run once
     */
    record Options(InetSocketAddress control, Path matrix, Path out, String accel, String setting, List<Layer> layers, String transport, String perftestSetup, int inline,
                   int readDepth, int cqMod, double warmup, Duration rowLimit, Duration jitQuiet, List<Boolean> credits,
                   List<Integer> streamBuffers, List<String> rpcSchedulers) {
        static Options parse(String[] args) {
            InetSocketAddress control = LabBench.control("18600");
            String setting = null;
            Path matrix = null;
            Path out = Path.of("target/lab-bench");
            String accel = System.getenv().getOrDefault("JRDMA_LAB_ACCEL", "unknown");
            List<Layer> layers = Layer.DEFAULT;
            String transport = "rdma_cm";
            String perftestSetup = "tcp";
            int inline = 64;
            int readDepth = 16;
            int cqMod = 100;
            double warmup = 2;
            Duration rowLimit = Duration.ofSeconds(300);
            Duration jitQuiet = Duration.ofSeconds(20);
            List<Boolean> credits = List.of(true);
            List<Integer> streamBuffers = List.of(4096);
            List<String> rpcSchedulers = List.of("elastic");
            for (int i = 0; i < args.length; i += 2) {
                String value = i + 1 < args.length ? args[i + 1] : "";
                switch (args[i]) {
                    case "--control" -> control = LabBench.control(value);
                    case "--setting" -> setting = value;
                    case "--matrix" -> matrix = Path.of(value);
                    case "--out" -> out = Path.of(value);
                    case "--accel" -> accel = value;
                    case "--layers" -> layers = words(value).stream().map(Layer::of).toList();
                    case "--transport" -> transport = value;
                    case "--perftest-setup" -> perftestSetup = value;
                    case "--inline" -> inline = Integer.parseInt(value);
                    case "--read-depth" -> readDepth = Integer.parseInt(value);
                    case "--cq-mod" -> cqMod = Integer.parseInt(value);
                    case "--warmup" -> warmup = Double.parseDouble(value);
                    case "--row-limit" -> rowLimit = Duration.ofSeconds(Long.parseLong(value));
                    case "--jit-quiet" -> jitQuiet = Duration.ofMillis((long) (Double.parseDouble(value) * 1000));
                    case "--credits" -> credits = words(value).stream().map(Options::onOff).toList();
                    case "--stream-buffer" -> streamBuffers = words(value).stream().map(Integer::valueOf).toList();
                    case "--rpc-schedulers" -> rpcSchedulers = words(value).stream().map(Options::scheduler).toList();
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (matrix == null) throw new IllegalArgumentException("--matrix is required");
            if (setting == null) setting = "lab accel " + accel;
            return new Options(control, matrix, out, accel, setting, layers, transport, perftestSetup, inline, readDepth, cqMod, warmup, rowLimit, jitQuiet,
                    credits, streamBuffers, rpcSchedulers);
        }

        private static String scheduler(String word) {
            if (!RowSpec.SCHEDULERS.contains(word)) throw new IllegalArgumentException("--rpc-schedulers takes " + RowSpec.SCHEDULERS + ", not " + word);
            return word;
        }

        private static boolean onOff(String word) {
            return switch (word) {
                case "on" -> true;
                case "off" -> false;
                default -> throw new IllegalArgumentException("--credits takes on and off, not " + word);
            };
        }

        /**
         * The ACK timeout of jrdma's QPs: the one perftest's QPs have. Over its TCP exchange perftest
         * programs 14 (about 67 ms, its -u default) and so does jrdma's TCP path, but rdma_cm derives
         * about 2.1 s (2^19) from the RoCE path, and perftest -R keeps that. In the lab the timeout sets
         * the rate of large READs: rxe's responder sends a 1 MiB READ's 1,024 response packets in one
         * burst, the veth drops what passes its 1,000-packet receive backlog (rxe's send_err, one
         * completer_retry_err per READ at the requester), and only the requester's ACK timer resumes
         * the READ: read_bw at 1 MiB ran 11 READs/s with 67 ms, 0.45/s with 2.1 s (perftest -R too).
         */
        int ackTimeout() {
            return perftestSetup.equals("tcp") ? PERFTEST_ACK_TIMEOUT : -1;
        }

        private static List<String> words(String s) {
            return List.of(s.trim().split("[,\\s]+"));
        }
    }

    private BenchClient(Options options) {
        this.options = options;
    }

    static int run(String[] args) throws IOException {
        Options o = Options.parse(args);
        List<PerftestRun> matrix = PerftestRun.read(o.matrix());
        if (!ProcessCost.available()) log("no /proc/self/task/*/schedstat or no per-thread allocation counters: the CPU and allocation columns are wrong");
        Report report = new Report(o);
        BenchClient client = new BenchClient(o);
        long t0 = System.nanoTime();
        client.reconnect(Duration.ofSeconds(180));
        int failed = 0;
        for (PerftestRun combo : matrix) {
            PerftestRun perftest = combo.status().equals("reference") ? reference(matrix, combo) : combo;
            for (RowSpec spec : rows(o, combo, matrix)) {
                long r0 = System.nanoTime();
                RowResult result = combo.status().equals("skipped")
                        ? RowResult.skipped(spec, "lab/bench skipped its combination")
                        : spec.layer().rsocket() && spec.size() > RSocketEnds.MAX_PAYLOAD
                        ? RowResult.skipped(spec, "RSocket's frames end at 16 MiB - 1 (the rsocket rows do not fragment)")
                        : client.row(spec);
                if (!result.ok() && !result.skipped()) failed++;
                String line = report.add(result, perftest);
                log(String.format(Locale.ROOT, "%s (%.0f s)", line, (System.nanoTime() - r0) / 1e9));
            }
        }
        client.quit();
        report.finish((System.nanoTime() - t0) / 1e9);
        log(failed == 0 ? "every row ran" : failed + " row(s) failed");
        return failed == 0 ? 0 : 3;
    }

    /**
     * The rows of one combination of the matrix, in the order they run: each stream buffer (stream rows), each layer
     * that has the test ({@link Layer#supports}), each credits entry. rdma-ffm has no credits to switch off and runs
     * once; so does rsocket_tcp, which has neither credits nor receive buffers nor a polling mode: it runs once per
     * test and size, in the combination polled by EVENT (TCP's sockets sleep in epoll as EVENT's pollers sleep on
     * their completion channel), or in the first of its combinations where the matrix has no EVENT one.
     */
    static List<RowSpec> rows(Options o, PerftestRun combo, List<PerftestRun> matrix) {
        List<RowSpec> rows = new ArrayList<>();
        List<Integer> buffers = combo.test().stream() ? o.streamBuffers() : List.of(Math.max(combo.size(), 64));
        for (int b = 0; b < buffers.size(); b++) for (Layer layer : o.layers()) {
            if (!layer.supports(combo.test())) continue;
            boolean once = layer == Layer.FFM || layer == Layer.RSOCKET_TCP;
            if (layer == Layer.RSOCKET_TCP && (b > 0 || combo != tcpCombination(matrix, combo))) continue;
            // the handler scheduler matters where an RpcServer runs the echo on it: rpc_lat, rpc_rate, reactive and Kotlin
            boolean schedules = combo.test().rpc() && !combo.test().handlerOnPoller() && (layer == Layer.REACTIVE || layer == Layer.KOTLIN);
            List<String> schedulers = schedules ? o.rpcSchedulers() : List.of("elastic");
            for (int k = 0; k < o.credits().size(); k++) for (String scheduler : schedulers) {
                if (once && k > 0) break;
                boolean credits = once || o.credits().get(k);
                rows.add(new RowSpec(combo.test(), combo.size(), layer, combo.polling(), combo.iterations(), combo.depth(),
                        combo.rxDepth(), o.transport(), o.inline(), o.readDepth(), o.cqMod(), o.warmup(), o.ackTimeout(),
                        buffers.get(b), credits, scheduler));
            }
        }
        return rows;
    }

    /** The combination of {@code row}'s test and size that rsocket_tcp runs in: the EVENT one, else the first. */
    private static PerftestRun tcpCombination(List<PerftestRun> matrix, PerftestRun row) {
        PerftestRun first = null;
        for (PerftestRun r : matrix) {
            if (r.test() != row.test() || r.size() != row.size()) continue;
            if (r.polling() == PollingMode.EVENT) return r;
            if (first == null) first = r;
        }
        return first;
    }

    /**
     * The RPC rows stand beside ib_send_lat of the same size and polling, the stream rows beside ib_send_bw's, or
     * ib_read_bw's where lab/bench picked it (a message above the library's receive buffer goes by rendezvous);
     * channel_bw beside the same, or the perftest run of stream_bw's row where the matrix has no send_bw or read_bw.
     */
    static PerftestRun reference(List<PerftestRun> matrix, PerftestRun row) {
        BenchTest test = row.program().equals(BenchTest.READ_BW.perftest) ? BenchTest.READ_BW : row.test().reference();
        for (PerftestRun r : matrix) {
            if (r.test() == test && r.size() == row.size() && r.polling() == row.polling()) return r;
        }
        if (row.test() == BenchTest.CHANNEL_BW) {  // lab/bench ran no send_bw or read_bw of the size: stream_bw's run
            for (PerftestRun r : matrix) {
                if (r.test() == BenchTest.STREAM_BW && r.size() == row.size() && r.polling() == row.polling()) {
                    return r.status().equals("reference") ? reference(matrix, r) : r;
                }
            }
        }
        return null;
    }

    private RowResult row(RowSpec spec) {
        if (serverGone) return RowResult.failed(spec, "the bench server is gone");
        long deadline = System.nanoTime() + options.rowLimit().toNanos();
        ClientEnd end = null;
        try {
            ControlChannel.Line ready = control.call("row", spec.toMap(), Ends.setup(spec));
            end = Ends.connect(spec, ready.args(), control);
            int chunk = Math.max(1, Math.min(spec.iterations(), Math.max(5, spec.iterations() / 10)));
            Latencies latencies = new Latencies(Math.max(spec.iterations(), chunk));
            warmUp(spec, end, chunk, latencies, deadline);

            control.call("begin", Ends.SETUP);
            if (Threads.ON) log("begin " + spec.describe() + ": " + Threads.loops());
            Threads.Sample threads = Threads.ON ? Threads.sample() : null;
            RxeCounters counters = RxeCounters.sample();
            ProcessCost.Sample window = ProcessCost.open();
            long nanos = end.run(spec.iterations(), latencies, deadline);
            ProcessCost.Cost client = ProcessCost.close(window);
            RxeCounters after = RxeCounters.sample();
            if (Threads.ON) log("threads " + spec.describe() + ": " + Threads.since(threads) + " rxe: " + after.movedSince(counters));
            if (Threads.ON) log("end " + spec.describe() + ": " + Threads.loops());
            long rnrNaks = after.rnrNaksSince(counters);
            String moved = after.movedSince(counters);
            ProcessCost.Cost server = ProcessCost.Cost.fromMap(control.call("end", Ends.SETUP).args());

            Latencies.Summary latency = spec.test().rate ? null : latencies.summary(spec.test().halfRoundTrip ? 2 : 1);
            end.close();
            end = null;
            control.call("close", Ends.SETUP);
            if (Threads.ON) log("closed " + spec.describe() + ": " + Threads.loops());
            return new RowResult(spec, null, spec.iterations(), nanos, latency, client, server, rnrNaks, moved);
        } catch (Exception | Error e) {
            String why = ControlChannel.describe(e);
            if (end != null) {
                try {
                    end.close();
                } catch (RuntimeException closing) {
                    why += "; closing: " + ControlChannel.describe(closing);
                }
            }
            // the server closes its end when the control connection breaks: start afresh
            try {
                control.close();
            } catch (IOException ignored) {
                // closing anyway
            }
            reconnect(Ends.SETUP.multipliedBy(3));
            return RowResult.failed(spec, why);
        }
    }

    /**
     * Runs chunks of the row's operations for at least the warm-up time, and on until the JIT
     * compiler threads of both JVMs took less than 2 % of a chunk's time (at most
     * {@code jitQuiet} more): under TCG a C1 compile takes long, and a window that pays for one
     * measures the compiler.
     */
    private void warmUp(RowSpec spec, ClientEnd end, int chunk, Latencies latencies, long deadline) throws Exception {
        long start = System.nanoTime();
        long warm = start + (long) (spec.warmup() * 1e9);
        long giveUp = warm + options.jitQuiet().toNanos();
        while (true) {
            long jit0 = ProcessCost.compilerNanos() + serverCompilerNanos();
            long t0 = System.nanoTime();
            end.run(chunk, latencies, deadline);
            latencies.reset();
            long t1 = System.nanoTime();
            long jit = ProcessCost.compilerNanos() + serverCompilerNanos() - jit0;
            if (t1 - warm >= 0 && (jit < (t1 - t0) / 50 || t1 - giveUp >= 0)) break;
        }
    }

    private long serverCompilerNanos() throws IOException {
        return control.call("jit", Ends.SETUP).getLong("ns");
    }

    private void reconnect(Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        Exception last = null;
        while (System.nanoTime() - deadline < 0) {
            try {
                Socket socket = new Socket();
                socket.connect(options.control(), Math.toIntExact(Ends.SETUP.toMillis()));
                control = new ControlChannel(socket);
                control.call("ping", limit);
                return;
            } catch (IOException e) {
                last = e;
                try {
                    Thread.sleep(1000);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        serverGone = true;
        log("cannot reach the bench server at " + options.control() + " within " + limit.toSeconds() + " s: "
                + (last == null ? "" : ControlChannel.describe(last)));
    }

    private void quit() {
        if (serverGone) return;
        try {
            control.call("quit", Ends.SETUP);
            control.close();
        } catch (IOException | RuntimeException e) {
            log("the bench server did not take quit: " + ControlChannel.describe(e));
        }
    }

    static void log(String message) {
        System.out.println(LocalTime.now().truncatedTo(ChronoUnit.SECONDS) + " lab/bench: " + message);
    }
}
