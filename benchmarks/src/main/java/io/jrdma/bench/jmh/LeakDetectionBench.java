package io.jrdma.bench.jmh;

import io.jrdma.reactive.LeakDetection;
import io.jrdma.reactive.LeakDetectionLevel;
import io.jrdma.reactive.internal.Leaks;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.ReceivedMessage;
import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * One received message handed to the application and released, per invocation, at each leak
 * detection level: what {@code RdmaConnection.receive()} adds to a delivery ({@code Leaks.site},
 * then a tracker for a tracked message) and its {@code release()} (closing the tracker), around
 * the message itself (a buffer from a pool, wrapped, released back). The difference to
 * {@code OFF} is what a level costs per tracked-type object; the stack here is JMH's, about 10
 * frames, where an application's under Reactor is several times deeper, so {@code EVERY} costs
 * more there. {@code decide} is the choice alone ({@code Leaks.site}: null, or a stack). Run with
 * {@code -prof gc}: {@code gc.alloc.rate.norm} is bytes per message.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class LeakDetectionBench {
    private static final MemoryInternals MEMORY = MemoryInternals.get();

    @Param({"OFF", "SAMPLED", "EVERY"})
    public LeakDetectionLevel level;

    /** At SAMPLED; {@code -p samplingInterval=2147483647} leaves the untracked path alone. */
    @Param("128")
    public int samplingInterval;

    private final Arena arena = Arena.ofShared();
    private final BufferPool pool = MEMORY.pool(arena.allocate(64, 64), 0x11, 0x22, 64, 1, () -> { });
    private final Runnable onRelease = () -> { };

    @Setup(Level.Trial)
    public void setLevel() {
        LeakDetection.setLevel(level);
        LeakDetection.setSamplingInterval(samplingInterval);
    }

    @TearDown(Level.Trial)
    public void close() {
        pool.close();
        arena.close();
    }

    @Benchmark
    public int receiveAndRelease() {
        ReceivedMessage m = MEMORY.message(pool.tryAcquire(), 8, false, 0, onRelease);
        Leaks.Site site = Leaks.site("RdmaConnection.receive()");
        if (site != null) MEMORY.track(m, site, "RdmaConnection[a bench]");
        int length = m.length();
        m.release();
        return length;
    }

    @Benchmark
    public Leaks.@Nullable Site decide() {
        return Leaks.site("RdmaConnection.receive()");
    }
}
