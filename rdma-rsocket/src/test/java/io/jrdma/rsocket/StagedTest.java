package io.jrdma.rsocket;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Staged's rules, one test each, and the Reactor gap it closes shown failing with {@code Mono.just}. */
class StagedTest {
    /** A subscriber that requests one at a time and cancels once it holds {@code keep} values. */
    private static final class TakeAndCancel extends BaseSubscriber<String> {
        final List<String> received = new CopyOnWriteArrayList<>();
        private final int keep;

        TakeAndCancel(int keep) {
            this.keep = keep;
        }

        @Override
        protected void hookOnSubscribe(Subscription s) {
            request(1);
        }

        @Override
        protected void hookOnNext(String v) {
            received.add(v);
            if (received.size() == keep) cancel();
            else request(1);
        }
    }

    /**
     * A concatMap over values each owning a reference, the subscriber cancelling after the second:
     * the values released are those it never received, and none it did.
     */
    private static List<String> releasedAfterCancel(BiFunction<String, Consumer<String>, Mono<String>> inner) {
        List<String> released = new CopyOnWriteArrayList<>();
        TakeAndCancel subscriber = new TakeAndCancel(2);
        Flux.just("a", "b", "c")
                .concatMap(v -> inner.apply(v, released::add), 0)
                .doOnDiscard(String.class, released::add)
                .subscribe(subscriber);
        assertEquals(List.of("a", "b"), subscriber.received);
        return released;
    }

    @Test
    void reactorsScalarShortcutReleasesAValueItAlreadyEmitted_theGap() {
        // if this fails, Reactor fixed reactor-core#4352 and Staged may go
        assertEquals(List.of("b"), releasedAfterCancel((v, release) -> Mono.just(v)),
                "Mono.just in concatMap: the cancel after 'b' was delivered discards 'b'");
    }

    @Test
    void aValueEmittedIsNeverReleased() {
        assertEquals(List.of(), releasedAfterCancel(Staged::new));
    }

    @Test
    void aCancelBeforeTheRequestReleasesTheValueOnceAndNothingIsEmitted() {
        AtomicInteger released = new AtomicInteger();
        List<String> received = new CopyOnWriteArrayList<>();
        AtomicReference<Subscription> subscription = new AtomicReference<>();
        new Staged<>("a", v -> released.incrementAndGet()).subscribe(new BaseSubscriber<String>() {
            @Override
            protected void hookOnSubscribe(Subscription s) {
                subscription.set(s);  // no request
            }

            @Override
            protected void hookOnNext(String v) {
                received.add(v);
            }
        });
        subscription.get().cancel();
        subscription.get().cancel();
        subscription.get().request(1);
        assertEquals(1, released.get());
        assertEquals(List.of(), received);
    }

    @Test
    void aRequestRacingACancelEitherEmitsOrReleasesNeverBoth() throws Exception {
        int rounds = 5_000;
        AtomicInteger emitted = new AtomicInteger(), released = new AtomicInteger();
        CyclicBarrier start = new CyclicBarrier(2);
        for (int i = 0; i < rounds; i++) {
            AtomicReference<Subscription> subscription = new AtomicReference<>();
            new Staged<>("v", v -> released.incrementAndGet()).subscribe(new BaseSubscriber<String>() {
                @Override
                protected void hookOnSubscribe(Subscription s) {
                    subscription.set(s);
                }

                @Override
                protected void hookOnNext(String v) {
                    emitted.incrementAndGet();
                }
            });
            Thread canceller = Thread.ofPlatform().start(() -> {
                await(start);
                subscription.get().cancel();
            });
            await(start);
            subscription.get().request(1);
            assertTrue(canceller.join(Duration.ofSeconds(10)), "the canceller ended");
            assertEquals(i + 1, emitted.get() + released.get(), "round " + i + ": exactly one of emit and release");
        }
        assertEquals(rounds, emitted.get() + released.get());
    }

    @Test
    void aSecondSubscriberFails() {
        Staged<String> staged = new Staged<>("a", v -> { });
        assertEquals("a", staged.block());
        AtomicReference<Throwable> error = new AtomicReference<>();
        staged.subscribe(v -> { }, error::set);
        assertInstanceOf(IllegalStateException.class, error.get());
        assertTrue(error.get().getMessage().contains("once"));
    }

    private static void await(CyclicBarrier barrier) {
        try {
            barrier.await(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
