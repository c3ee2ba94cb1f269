package io.jrdma.bench.jmh;

import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.internal.core.CompletionStream;
import io.jrdma.reactive.internal.core.SendQueue;
import io.jrdma.reactive.internal.core.SendQueueAccess;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * One reactive operation through the device-free half of a connection, per invocation: what
 * {@code RdmaConnection.write} builds, subscribed by a reused subscriber, queued for a credit and
 * posted (the poster only counts), then its completion reported by slot (as the loop does after
 * decoding it) and its {@code Mono} signalled. Through {@link SendQueueAccess}, the
 * queue's seam for code outside its package. Run with {@code -prof gc}: {@code gc.alloc.rate.norm} is the
 * bytes one operation allocates.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class SendQueueBench {
    private static final int DEPTH = 128;
    private final Arena arena = Arena.ofShared();
    private final BufferPool pool = MemoryInternals.get().pool(arena.allocate(4096, 64), 0x11, 0x22, 4096, 1, () -> { });
    private final RemoteBuffer remote = new RemoteBuffer(0x7f00_0000_0000L, 0x33, 1 << 20);
    private final Scheduler timer = Schedulers.newSingle("bench-timer");
    private RegisteredBuffer buffer;
    private SendQueue queue;
    private int lastSlot;
    private final Done subscriber = new Done();
    private final WorkCompletion success = new WorkCompletion(0, WcStatus.IBV_WC_SUCCESS, WcOpcode.RDMA_WRITE, 64, false, 0, 0x11, 0);

    /** Counts terminal signals; requests one value per subscription. */
    static final class Done implements CoreSubscriber<WorkCompletion> {
        long values, completions, errors;

        @Override
        public void onSubscribe(Subscription s) {
            s.request(1);
        }

        @Override
        public void onNext(WorkCompletion wc) {
            values++;
        }

        @Override
        public void onError(Throwable t) {
            errors++;
        }

        @Override
        public void onComplete() {
            completions++;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        buffer = pool.tryAcquire();
        queue = SendQueueAccess.unbound(DEPTH, 4, slot -> lastSlot = slot, timer, Duration.ofSeconds(30), "bench");
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (subscriber.errors != 0) throw new IllegalStateException(subscriber.errors + " operations failed");
        buffer.release();
        timer.dispose();
    }

    /** What RdmaConnection.write returns: the operation, its own Mono. */
    private Mono<WorkCompletion> write() {
        return queue.operation(SendOpcode.RDMA_WRITE, buffer, 0, 64).remote(remote, 0);
    }

    @Benchmark
    public long submitPostComplete() {
        write().subscribe(subscriber);
        SendQueueAccess.complete(queue, lastSlot, success);
        return subscriber.completions;
    }

    /** The same through the loop's seam: the completion goes through the connection's CompletionStream, nobody subscribed to completions(). */
    @Benchmark
    public long submitPostCompleteThroughCompletionStream(StreamState s) {
        write().subscribe(subscriber);
        s.stream.offer(new WorkCompletion(lastSlot, WcStatus.IBV_WC_SUCCESS, WcOpcode.RDMA_WRITE, 64, false, 0, 0x11, 0));
        return subscriber.completions;
    }

    @State(Scope.Thread)
    public static class StreamState {
        CompletionStream stream;

        @Setup(Level.Trial)
        public void setUp(SendQueueBench bench) {
            stream = new CompletionStream(Runnable::run, wc -> SendQueueAccess.complete(bench.queue, (int) wc.wrId(), wc));
        }
    }
}
