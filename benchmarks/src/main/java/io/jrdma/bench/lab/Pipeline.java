package io.jrdma.bench.lab;

import io.jrdma.reactive.memory.ReceivedMessage;
import io.netty.util.ReferenceCounted;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Mono;

/**
 * Keeps {@code depth} operations of the reactive API in flight until {@code ops} have completed:
 * what {@code Flux.range(0, ops).flatMap(i -> op(i), depth)} does, with one small subscriber per
 * operation and nothing else (no boxed index, no inner queue), so that a row's allocation per
 * operation is the library's plus that one subscriber. A completion starts the next operation on
 * the thread that signalled it (the connection's loop), through a drain loop, so an operation
 * that completes while it is subscribed cannot recurse.
 */
final class Pipeline {
    /** Starts operation {@code index}; its Mono's end (a value, or completion) ends the operation. */
    interface Operation {
        Mono<?> start(int index, Pipeline pipeline);
    }

    private final Operation operation;
    private final int ops;
    private final Latencies latencies;
    private final AtomicInteger issued = new AtomicInteger();
    private final AtomicInteger completed = new AtomicInteger();
    private final AtomicInteger toStart = new AtomicInteger();
    private final AtomicInteger wip = new AtomicInteger();
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile Throwable failure;
    private volatile long finishedAt;

    private Pipeline(Operation operation, int ops, Latencies latencies) {
        this.operation = operation;
        this.ops = ops;
        this.latencies = latencies;
    }

    /**
     * Runs {@code ops} operations, {@code depth} at a time; with {@code latencies}, records each
     * one's time from its start to its end (then depth should be 1).
     *
     * @return nanoseconds from the first start to the last end
     */
    static long run(Operation operation, int ops, int depth, Latencies latencies, long deadline) throws Exception {
        Pipeline p = new Pipeline(operation, ops, latencies);
        long t0 = System.nanoTime();
        // started here directly, not through the drain loop: a caller that took the drain would keep it
        // while completions keep coming, and post every operation of the row from its own thread
        for (int i = 0; i < Math.min(depth, ops); i++) p.startOne();
        boolean finished = p.done.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (p.failure != null) throw new IllegalStateException("operation failed after " + p.completed.get() + " of " + ops, p.failure);
        if (!finished) {
            throw new TimeoutException("the row's time limit passed after " + p.completed.get() + " of " + ops + " operations");
        }
        return p.finishedAt - t0;
    }

    /** Subscribes to an operation's side Mono (the SEND of a ping-pong) whose end nobody waits for; its failure fails the run. */
    void fire(Mono<?> side) {
        side.subscribe(new Side());
    }

    private void schedule() {
        toStart.incrementAndGet();
        if (wip.getAndIncrement() != 0) return;
        int missed = 1;
        do {
            while (toStart.get() > 0) {
                toStart.decrementAndGet();
                startOne();
            }
            missed = wip.addAndGet(-missed);
        } while (missed != 0);
    }

    private void startOne() {
        int index = issued.getAndIncrement();
        if (index >= ops || failure != null) return;
        long start = System.nanoTime();
        Mono<?> mono;
        try {
            mono = operation.start(index, this);
        } catch (Throwable t) {
            fail(t);
            return;
        }
        mono.subscribe(new End(start));
    }

    private void fail(Throwable t) {
        if (failure == null) failure = t;
        done.countDown();
    }

    /** The end of one operation. */
    private final class End implements CoreSubscriber<Object> {
        private final long start;

        End(long start) {
            this.start = start;
        }

        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Object value) {
            if (value instanceof ReceivedMessage m) {
                m.release();
            } else if (value instanceof ReferenceCounted r) {
                r.release();  // an RSocket Payload
            }
        }

        @Override
        public void onError(Throwable t) {
            fail(t);
        }

        @Override
        public void onComplete() {
            if (latencies != null) latencies.record(System.nanoTime() - start);
            if (completed.incrementAndGet() == ops) {
                finishedAt = System.nanoTime();
                done.countDown();
            } else {
                schedule();
            }
        }
    }

    /** A side operation: only its failure matters. */
    private final class Side implements CoreSubscriber<Object> {
        @Override
        public void onSubscribe(Subscription s) {
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(Object value) {
        }

        @Override
        public void onError(Throwable t) {
            fail(t);
        }

        @Override
        public void onComplete() {
        }
    }
}
