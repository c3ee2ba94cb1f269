package io.jrdma.bench.jmh;

import io.jrdma.ffm.WorkCompletions;
import io.jrdma.ffm.abi.VerbsDataPath;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Reading a batch of {@code ibv_wc} entries as the loop does after {@code ibv_poll_cq}: the
 * benchmark fills the array the way a provider would (32 successful RDMA WRITE completions),
 * then every field the reactive layer reads is read, with the copy to the heap that a poll makes.
 * Must allocate nothing. Per completion.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class CompletionDecodingBench {
    static final int BATCH = 32;
    private final WorkCompletions wcs = WorkCompletions.allocate(Arena.ofAuto(), BATCH);

    @Setup
    public void fill() {
        MemorySegment array = wcs.segment();
        long size = VerbsDataPath.ibv_wc.byteSize();
        for (int i = 0; i < BATCH; i++) {
            long at = i * size;
            VerbsDataPath.ibv_wc_wr_id.set(array, at, (7L << 32) | i);
            VerbsDataPath.ibv_wc_status.set(array, at, 0);
            VerbsDataPath.ibv_wc_opcode.set(array, at, 1);  // IBV_WC_RDMA_WRITE
            VerbsDataPath.ibv_wc_byte_len.set(array, at, 64);
            VerbsDataPath.ibv_wc_qp_num.set(array, at, 0x11);
            VerbsDataPath.ibv_wc_wc_flags.set(array, at, 0);
        }
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public void decode(Blackhole bh) {
        wcs.filled(BATCH);  // what poll does once per batch
        for (int i = 0; i < BATCH; i++) {
            bh.consume(wcs.wrId(i));
            bh.consume(wcs.qpNumber(i));
            bh.consume(wcs.status(i));
            bh.consume(wcs.opcode(i));
            bh.consume(wcs.byteLength(i));
            bh.consume(wcs.hasImmediate(i));
            bh.consume(wcs.immediateData(i));
        }
    }
}
