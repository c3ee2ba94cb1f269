package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * The lifecycle contract ({@link RdmaDisposable}) as {@link AbstractRdmaDisposable} writes it once
 * for servers and resources: no device needed, the disposal is a {@code Mono} the test controls.
 */
class RdmaDisposableTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    /** A disposable whose disposal ends when the test says, counting how often it was started. */
    private static class Held extends AbstractRdmaDisposable {
        final AtomicInteger started = new AtomicInteger();
        final Mono<Void> end;

        Held(Mono<Void> end) {
            this.end = end;
        }

        @Override
        protected Mono<Void> disposal() {
            started.incrementAndGet();
            return end;
        }

        @Override
        public String toString() {
            return "Held";
        }
    }

    @Test
    void disposeReturnsAtOnceAndOnDisposeCompletesWhenTheDisposalEnds() {
        Sinks.Empty<Void> end = Sinks.empty();
        Held h = new Held(end.asMono());
        assertFalse(h.isDisposed());

        h.dispose();  // the disposal never ends by itself: a blocking dispose() would hang here
        assertTrue(h.isDisposed());
        assertEquals(1, h.started.get());
        StepVerifier.create(h.onDispose()).expectSubscription().expectNoEvent(Duration.ofMillis(50)).thenCancel().verify(WAIT);

        h.dispose();
        h.disposeLater();
        assertEquals(1, h.started.get(), "the disposal runs once");
        end.tryEmitEmpty();
        StepVerifier.create(h.onDispose()).verifyComplete();
        h.disposeNow(Duration.ZERO);  // over already: returns
    }

    @Test
    void onVirtualTimeTheDisposalTakesItsTimeAndDisposeNeverWaitsForIt() {
        StepVerifier.withVirtualTime(() -> {
                    Held h = new Held(Mono.delay(Duration.ofSeconds(30)).then());
                    h.dispose();
                    return h.onDispose();
                })
                .expectSubscription()
                .expectNoEvent(Duration.ofSeconds(29))
                .thenAwait(Duration.ofSeconds(1))
                .verifyComplete();
    }

    @Test
    void disposeNowTimesOutWithATypedErrorAndTheDisposalGoesOn() {
        Sinks.Empty<Void> end = Sinks.empty();
        Held h = new Held(end.asMono());

        DisposeTimeoutException e = assertThrows(DisposeTimeoutException.class, () -> h.disposeNow(Duration.ofMillis(50)));
        assertEquals(Duration.ofMillis(50), e.timeout());
        assertEquals("Held", e.disposing());
        assertTrue(h.isDisposed());

        end.tryEmitEmpty();
        h.disposeNow(WAIT);
        assertEquals(1, h.started.get());
    }

    @Test
    void disposeNowOnAThreadThatMustNotBlockThrowsButStartsTheDisposal() {
        Held h = new Held(Mono.never());
        Scheduler nonBlocking = Schedulers.newParallel("non-blocking", 1);
        try {
            Throwable thrown = Mono.fromRunnable(h::disposeNow).subscribeOn(nonBlocking)
                    .then(Mono.<Throwable>empty()).onErrorResume(Mono::just).block(WAIT);
            assertTrue(thrown instanceof IllegalStateException && !(thrown instanceof DisposeTimeoutException), String.valueOf(thrown));
            assertTrue(h.isDisposed());
            assertEquals(1, h.started.get());
        } finally {
            nonBlocking.dispose();
        }
    }

    @Test
    void aFailedDisposalFailsOnDisposeAndDisposeNow() {
        IllegalArgumentException failure = new IllegalArgumentException("freeing failed");
        Held h = new Held(Mono.error(failure));
        h.dispose();
        StepVerifier.create(h.onDispose()).verifyErrorMatches(failure::equals);
        assertSame(failure, assertThrows(IllegalArgumentException.class, () -> h.disposeNow(WAIT)));
    }

    @Test
    void aDisposalThatThrowsFailsOnDisposeRatherThanTheCaller() {
        Held h = new Held(Mono.empty()) {
            @Override
            protected Mono<Void> disposal() {
                throw new IllegalStateException("cannot start");
            }
        };
        h.dispose();
        StepVerifier.create(h.onDispose()).verifyErrorMessage("cannot start");
    }

    @Test
    void onDisposeOfADisposableDisposesItAtTheEnd() {
        Sinks.Empty<Void> end = Sinks.empty();
        Held h = new Held(end.asMono());
        AtomicBoolean released = new AtomicBoolean();
        assertSame(h, h.onDispose(() -> released.set(true)));
        h.dispose();
        assertFalse(released.get());
        end.tryEmitEmpty();
        assertTrue(released.get());
    }
}
