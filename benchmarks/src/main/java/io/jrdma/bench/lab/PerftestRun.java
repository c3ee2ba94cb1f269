package io.jrdma.bench.lab;

import io.jrdma.reactive.PollingMode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One combination of the matrix (test, size, polling) with its parameters and what perftest made
 * of it, as {@code lab/bench} ran it in the same lab session before the JVMs started: one line of
 * {@code matrix.tsv}, whose client log holds perftest's result line.
 *
 * <p>perftest's CPU is each process's over the client's measured loop, as the JVMs' is over
 * theirs: {@code lab/bench} reads {@code /proc/PID/schedstat} of both perftest processes when the
 * client prints its result header (right before its loop) and its result line. Between the loop
 * and the result line perftest spins about 0.2 s calibrating its clock (get_cpu_mhz): a
 * 5-iteration run of the same program and polling mode in the same session measures that overhead, which is
 * subtracted. {@code cpuFrom} says {@code at-exit} when a process had exited by the second read
 * and its total CPU at exit (getrusage) stood in for it. {@code program} is the perftest program it
 * ran: the test's own, but ib_read_bw for a stream row whose messages go by rendezvous.
 */
record PerftestRun(BenchTest test, int size, PollingMode polling, int iterations, int depth, int rxDepth, String status,
                   Path clientLog, double clientCpu, double serverCpu, String cpuFrom, double clientOverhead,
                   double serverOverhead, String program) {

    /** What perftest reported. rate: messages/s (bandwidth) or exchanges/s; latencies in µs as reported (half round trips for the ping-pongs). */
    record Result(double rate, double megabytesPerSecond, Latencies.Summary latency) {}

    static List<PerftestRun> read(Path matrix) throws IOException {
        List<PerftestRun> runs = new ArrayList<>();
        for (String line : Files.readAllLines(matrix)) {
            if (line.isBlank() || line.startsWith("#")) continue;
            String[] f = line.split("\t", -1);
            runs.add(new PerftestRun(BenchTest.of(f[0]), Integer.parseInt(f[1]), PollingMode.valueOf(f[2]), Integer.parseInt(f[3]),
                    Integer.parseInt(f[4]), Integer.parseInt(f[5]), f[6], f[7].isEmpty() ? null : Path.of(f[7]), number(f[8]),
                    number(f[9]), f[10], f.length > 11 ? number(f[11]) : Double.NaN, f.length > 12 ? number(f[12]) : Double.NaN,
                    f.length > 13 && !f[13].isEmpty() ? f[13] : BenchTest.of(f[0]).perftest));
        }
        return runs;
    }

    private static double number(String s) {
        return s.isEmpty() ? Double.NaN : Double.parseDouble(s);
    }

    boolean ran() {
        return status.equals("ok");
    }

    /** perftest's client CPU per operation in µs (its report overhead subtracted), or NaN. */
    double clientCpuPerOp() {
        return perOp(clientCpu, clientOverhead);
    }

    double serverCpuPerOp() {
        return perOp(serverCpu, serverOverhead);
    }

    private double perOp(double window, double overhead) {
        if (!ran() || Double.isNaN(window)) return Double.NaN;
        double loop = window - (Double.isNaN(overhead) ? 0 : overhead);
        // a process that does nothing in the loop (the server of a one-sided test) is within the overhead's noise
        return Math.max(0, loop) * 1e6 / iterations;
    }

    /**
     * Parses the client's result line. Bandwidth programs print {@code #bytes #iterations BW
     * peak[MB/sec] BW average[MB/sec] MsgRate[Mpps]}, latency programs {@code #bytes #iterations
     * t_min t_max t_typical t_avg t_stdev 99% 99.9%} (µs), then a line of numbers.
     */
    Result result() throws IOException {
        if (!ran() || clientLog == null) throw new IllegalStateException(program + " " + status);
        List<String> lines = Files.readAllLines(clientLog);
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (!lines.get(i).contains("#bytes")) continue;
            for (int j = i + 1; j < lines.size(); j++) {
                String[] f = lines.get(j).trim().split("\\s+");
                if (f.length < 5 || !f[0].matches("\\d+")) continue;
                if (program.endsWith("_bw")) {
                    double mpps = Double.parseDouble(f[4]);
                    return new Result(mpps * 1e6, mpps * size, null);
                }
                if (f.length < 9) break;
                Latencies.Summary lat = new Latencies.Summary(Double.parseDouble(f[4]), Double.parseDouble(f[5]),
                        Double.parseDouble(f[7]), Double.parseDouble(f[8]));
                double roundTrip = test.halfRoundTrip || test.rpc() ? 2 * lat.typical() : lat.typical();
                return new Result(1e6 / roundTrip, Double.NaN, lat);
            }
        }
        throw new IOException(clientLog + " has no " + program + " result line");
    }

    String describe() {
        return String.format(Locale.ROOT, "%s -s %d -n %d%s%s", program, size, iterations, polling == PollingMode.EVENT ? " -e" : "",
                "at-exit".equals(cpuFrom) ? " (CPU at exit)" : "");
    }
}
