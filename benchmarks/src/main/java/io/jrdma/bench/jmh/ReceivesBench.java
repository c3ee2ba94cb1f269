package io.jrdma.bench.jmh;

import io.jrdma.reactive.internal.core.Inbox;
import io.jrdma.reactive.internal.core.Receives;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;

/**
 * One received message through a connection's {@code receives()}, per invocation: the loop hands
 * it to the waiting subscription ({@code Inbox.deliver}), which emits it and registers the next
 * receive, as a latency server's loop does per message. {@code receives} is {@link Receives};
 * {@code operatorChain} the {@code Flux.defer(receive).repeat().onErrorComplete()} it replaced.
 * Run with {@code -prof gc} ({@code gc.alloc.rate.norm}: bytes per message) and
 * {@code -jvmArgs -XX:TieredStopAtLevel=1} to imitate the lab's C1.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class ReceivesBench {
    private final Inbox<Integer> viaReceives = new Inbox<>(m -> { });
    private final Inbox<Integer> viaOperators = new Inbox<>(m -> { });
    private final Integer message = 1;
    private long received;

    @Setup
    public void subscribe() {
        new Receives<>(viaReceives, e -> true, null).subscribe(new Count());
        Flux.defer(viaOperators::receive).repeat().onErrorComplete(e -> true).subscribe(new Count());
    }

    private final class Count extends BaseSubscriber<Integer> {
        @Override
        protected void hookOnNext(Integer m) {
            received += m;
        }
    }

    @Benchmark
    public long receives() {
        viaReceives.deliver(message);
        return received;
    }

    @Benchmark
    public long operatorChain() {
        viaOperators.deliver(message);
        return received;
    }
}
