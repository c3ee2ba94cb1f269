package io.jrdma.bench.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.PollingMode;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The rows BenchClient builds from lab/bench's matrix for a --layers list, without running any. */
class MatrixRowsTest {
    private static final Set<BenchTest> RSOCKET_TESTS = EnumSet.of(BenchTest.RPC_LAT, BenchTest.RPC_RATE, BenchTest.STREAM_BW, BenchTest.CHANNEL_BW);

    /** Every test at 64 B and 4 KiB, BUSY and EVENT (write_* BUSY only, as lab/bench makes it). */
    private static List<PerftestRun> matrix(List<PollingMode> pollings) {
        List<PerftestRun> m = new ArrayList<>();
        for (BenchTest t : BenchTest.values()) {
            for (int size : new int[] {64, 4096}) {
                for (PollingMode p : pollings) {
                    if (p == PollingMode.EVENT && t.label().startsWith("write_")) continue;
                    m.add(new PerftestRun(t, size, p, 100, t.rate ? 32 : 1, 64, t.apiOnly() ? "reference" : "ok", null, Double.NaN,
                            Double.NaN, "", Double.NaN, Double.NaN, t.perftest));
                }
            }
        }
        return m;
    }

    private static List<RowSpec> rows(List<PerftestRun> matrix, String... args) {
        List<String> all = new ArrayList<>(List.of("--matrix", "unused.tsv"));
        all.addAll(List.of(args));
        BenchClient.Options o = BenchClient.Options.parse(all.toArray(String[]::new));
        List<RowSpec> rows = new ArrayList<>();
        for (PerftestRun combo : matrix) rows.addAll(BenchClient.rows(o, combo, matrix));
        return rows;
    }

    @Test
    void rsocketRunsOnlyItsTests() {
        List<RowSpec> rows = rows(matrix(List.of(PollingMode.BUSY, PollingMode.EVENT)), "--layers", "rsocket");
        assertEquals(Set.of(Layer.RSOCKET), rows.stream().map(RowSpec::layer).collect(Collectors.toSet()));
        assertEquals(RSOCKET_TESTS, rows.stream().map(RowSpec::test).collect(Collectors.toSet()));
        // each of its tests at both sizes and both pollings, once (one credits entry, one stream buffer)
        assertEquals(RSOCKET_TESTS.size() * 2 * 2, rows.size());
    }

    @Test
    void rsocketTcpRunsOncePerTestAndSizeInTheEventCombination() {
        List<RowSpec> rows = rows(matrix(List.of(PollingMode.BUSY, PollingMode.EVENT)), "--layers", "rsocket_tcp", "--credits", "on off",
                "--stream-buffer", "4096 65536");
        assertEquals(RSOCKET_TESTS.size() * 2, rows.size());
        assertTrue(rows.stream().allMatch(r -> r.layer() == Layer.RSOCKET_TCP && r.polling() == PollingMode.EVENT && r.credits()));

        List<RowSpec> busyOnly = rows(matrix(List.of(PollingMode.BUSY)), "--layers", "rsocket_tcp");
        assertEquals(RSOCKET_TESTS.size() * 2, busyOnly.size());
        assertTrue(busyOnly.stream().allMatch(r -> r.polling() == PollingMode.BUSY));
    }

    @Test
    void rsocketTakesCreditsAndStreamBuffersAsTheReactiveLayer() {
        List<PerftestRun> m = matrix(List.of(PollingMode.EVENT)).stream().filter(r -> r.test() == BenchTest.STREAM_BW && r.size() == 64).toList();
        List<RowSpec> rows = rows(m, "--layers", "reactive,rsocket,rsocket_tcp", "--credits", "on off", "--stream-buffer", "4096 65536");
        assertEquals(4, rows.stream().filter(r -> r.layer() == Layer.REACTIVE).count());
        assertEquals(4, rows.stream().filter(r -> r.layer() == Layer.RSOCKET).count());
        assertEquals(1, rows.stream().filter(r -> r.layer() == Layer.RSOCKET_TCP).count());
    }

    private static PerftestRun run(BenchTest test, int size, String status, String program) {
        return new PerftestRun(test, size, PollingMode.EVENT, 100, 128, 512, status, null, Double.NaN, Double.NaN, "", Double.NaN, Double.NaN,
                program);
    }

    @Test
    void channelStandsBesideStreamsPerftestRunWhereTheMatrixHasNoSendBw() {
        PerftestRun stream = run(BenchTest.STREAM_BW, 65536, "ok", "ib_read_bw");
        PerftestRun channel = run(BenchTest.CHANNEL_BW, 65536, "reference", "ib_read_bw");
        assertEquals(stream, BenchClient.reference(List.of(stream, channel), channel));
        // stream_bw itself beside send_bw's run: channel_bw beside the same
        PerftestRun send = run(BenchTest.SEND_BW, 64, "ok", "ib_send_bw");
        PerftestRun stream64 = run(BenchTest.STREAM_BW, 64, "reference", "ib_send_bw");
        PerftestRun channel64 = run(BenchTest.CHANNEL_BW, 64, "reference", "ib_send_bw");
        assertEquals(send, BenchClient.reference(List.of(send, stream64, channel64), channel64));
        assertEquals(send, BenchClient.reference(List.of(stream64, channel64, send), channel64));
    }

    @Test
    void theDefaultLayersAreTheMatrixAsItWas() {
        List<PerftestRun> m = matrix(List.of(PollingMode.BUSY, PollingMode.EVENT));
        List<RowSpec> rows = rows(m);
        assertEquals(Set.of(Layer.FFM, Layer.REACTIVE, Layer.KOTLIN), rows.stream().map(RowSpec::layer).collect(Collectors.toSet()));
        assertTrue(rows.stream().noneMatch(r -> r.test() == BenchTest.CHANNEL_BW));
        long expected = m.stream().filter(r -> r.test() != BenchTest.CHANNEL_BW).mapToLong(r -> r.test().apiOnly() ? 2 : 3).sum();
        assertEquals(expected, rows.size());
    }

    /** --rpc-schedulers multiplies only the rows whose echo runs on an RpcServer's handler scheduler: rpc_lat and rpc_rate, reactive and Kotlin. */
    @Test
    void rpcSchedulersRunTheRpcRowsOncePerSchedulerAndNothingElse() {
        List<PerftestRun> m = matrix(List.of(PollingMode.BUSY, PollingMode.EVENT));
        List<RowSpec> plain = rows(m, "--layers", "ffm,reactive,kotlin,rsocket");
        List<RowSpec> rows = rows(m, "--layers", "ffm,reactive,kotlin,rsocket", "--rpc-schedulers", "pool elastic virtual");
        Set<BenchTest> scheduled = EnumSet.of(BenchTest.RPC_LAT, BenchTest.RPC_RATE);
        long multiplied = plain.stream().filter(r -> scheduled.contains(r.test()) && (r.layer() == Layer.REACTIVE || r.layer() == Layer.KOTLIN)).count();
        assertTrue(multiplied > 0);
        assertEquals(plain.size() + 2 * multiplied, rows.size());
        assertTrue(rows.stream().filter(r -> !r.scheduler().equals("elastic"))
                .allMatch(r -> scheduled.contains(r.test()) && (r.layer() == Layer.REACTIVE || r.layer() == Layer.KOTLIN)));
        assertEquals(List.of("pool", "elastic", "virtual"), rows.stream()
                .filter(r -> r.test() == BenchTest.RPC_LAT && r.layer() == Layer.REACTIVE && r.size() == 64 && r.polling() == PollingMode.EVENT)
                .map(RowSpec::scheduler).toList(), "in the order given, one after the other");
        RowSpec pool = rows.stream().filter(r -> r.scheduler().equals("pool")).findFirst().orElseThrow();
        assertEquals(pool, RowSpec.fromMap(pool.toMap()), "the server gets the scheduler over the control channel");
        assertTrue(pool.describe().endsWith(" @pool"), pool.describe());
    }
}
