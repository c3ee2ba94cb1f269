package io.jrdma.bench.jmh;

import io.jrdma.ffm.SendFlags;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.SendWorkRequest;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Patching the connection's one reusable {@code ibv_send_wr} for an RDMA WRITE, as the send
 * queue's poster does before {@code ibv_post_send}: must allocate nothing.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class WorkRequestEncodingBench {
    private final SendWorkRequest wr = SendWorkRequest.allocate(4);
    private long id;

    @Benchmark
    public SendWorkRequest rdmaWrite() {
        return wr.reset().wrId(++id).opcode(SendOpcode.RDMA_WRITE)
                .sge(0, 0x7f00_0000_1000L, 64, 0x1234)
                .flags(SendFlags.SIGNALED | SendFlags.INLINE)
                .rdma(0x7f00_0000_2000L + (id & 63) * 64, 0x5678);
    }

    @Benchmark
    public SendWorkRequest rdmaWriteWithoutReset() {
        return wr.wrId(++id).opcode(SendOpcode.RDMA_WRITE)
                .sge(0, 0x7f00_0000_1000L, 64, 0x1234)
                .flags(SendFlags.SIGNALED | SendFlags.INLINE)
                .rdma(0x7f00_0000_2000L + (id & 63) * 64, 0x5678);
    }
}
