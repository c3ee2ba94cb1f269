package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The rules of {@link ConnectionHandler}, which runs {@code RdmaServer.handle} and
 * {@code RdmaClient.handle} functions, without a device: the connection is any
 * {@link RdmaDisposable}, its loop the calling thread. The device tests
 * ({@code ClientHandleTest}, {@code LifecycleTest}) show the same over rxe.
 */
class ConnectionHandlerTest {
    private static final String LOGGER = "io.jrdma.reactive.test.handler";
    private static final Executor ON_THIS_THREAD = Runnable::run;

    private final Logger log = Loggers.getLogger(LOGGER);
    private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
    private final Handler capture = new Handler() {
        @Override
        public void publish(LogRecord r) {
            logged.add(r);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    private final java.util.logging.Logger jul = java.util.logging.Logger.getLogger(LOGGER);  // Reactor's fallback in the tests' JVMs

    {
        jul.addHandler(capture);
        jul.setUseParentHandlers(false);  // the failures are the test's own: no stack traces on the console
    }

    @AfterEach
    void stopCapturing() {
        jul.removeHandler(capture);
        jul.setUseParentHandlers(true);
    }

    /** A connection without a device: disposed at once, and closed as soon as it is disposed. */
    private static final class Connection extends AbstractRdmaDisposable {
        @Override
        protected Mono<Void> disposal() {
            return Mono.empty();
        }

        @Override
        public String toString() {
            return "a test connection";
        }
    }

    private void handOff(Function<Connection, Publisher<Void>> handler, Connection c, Disposable.Composite running) {
        ConnectionHandler.handOff(handler, c, ON_THIS_THREAD, log, "the test", running);
    }

    @Test
    void theConnectionIsDisposedWhenTheHandlersPublisherCompletes() {
        Connection c = new Connection();
        Sinks.Empty<Void> work = Sinks.empty();
        handOff(x -> work.asMono(), c, null);
        assertFalse(c.isDisposed(), "running");
        work.tryEmitEmpty();
        assertTrue(c.isDisposed());
        assertEquals(List.of(), logged);
    }

    @Test
    void aFailingPublisherDisposesTheConnectionAndIsLoggedOnce() {
        Connection c = new Connection();
        Sinks.Empty<Void> work = Sinks.empty();
        handOff(x -> work.asMono(), c, null);
        IllegalStateException bug = new IllegalStateException("a handler bug");
        work.tryEmitError(bug);
        assertTrue(c.isDisposed());
        assertEquals(1, logged.size(), "logged once");
        assertEquals(Level.WARNING, logged.getFirst().getLevel());
        assertSame(bug, logged.getFirst().getThrown());
        assertEquals("the handler of the test failed on a test connection; closing it", logged.getFirst().getMessage());
    }

    @Test
    void aHandlerThatThrowsOrReturnsNullDisposesTheConnectionAndIsLoggedOnce() {
        Connection threw = new Connection();
        handOff(x -> {
            throw new IllegalArgumentException("thrown before any publisher");
        }, threw, null);
        assertTrue(threw.isDisposed());
        Connection nothing = new Connection();
        handOff(x -> null, nothing, null);
        assertTrue(nothing.isDisposed());
        assertEquals(2, logged.size(), "one line each: " + logged.stream().map(LogRecord::getThrown).toList());
        assertEquals(IllegalArgumentException.class, logged.get(0).getThrown().getClass());
        assertEquals(NullPointerException.class, logged.get(1).getThrown().getClass());
    }

    @Test
    void disposingTheConnectionCancelsTheHandlersPublisher() {
        Connection c = new Connection();
        AtomicInteger cancelled = new AtomicInteger();
        handOff(x -> Mono.<Void>never().doOnCancel(cancelled::incrementAndGet), c, null);
        assertEquals(0, cancelled.get());
        c.dispose();
        assertEquals(1, cancelled.get());
        assertEquals(List.of(), logged, "a cancellation is no failure");
    }

    @Test
    void aConnectionClosedBeforeItsHandlerRanCancelsItAtOnce() {
        Connection c = new Connection();
        c.dispose();  // the peer went as the connection reached its loop
        AtomicInteger cancelled = new AtomicInteger();
        handOff(x -> Mono.<Void>never().doOnCancel(cancelled::incrementAndGet), c, null);
        assertEquals(1, cancelled.get());
    }

    @Test
    void aServersGroupHoldsTheRunningHandlersAndDisposingItCancelsThem() {
        Disposable.Composite running = Disposables.composite();
        Connection ends = new Connection();
        Sinks.Empty<Void> work = Sinks.empty();
        handOff(x -> work.asMono(), ends, running);
        Connection stays = new Connection();
        AtomicInteger cancelled = new AtomicInteger();
        handOff(x -> Mono.<Void>never().doOnCancel(cancelled::incrementAndGet), stays, running);
        assertEquals(2, running.size());
        work.tryEmitEmpty();
        assertEquals(1, running.size(), "an ended handler leaves the group");

        running.dispose();  // the server is disposed
        assertEquals(1, cancelled.get());
        assertTrue(stays.isDisposed());

        Connection late = new Connection();  // accepted as the server was disposed
        AtomicInteger lateCancelled = new AtomicInteger();
        handOff(x -> Mono.<Void>never().doOnCancel(lateCancelled::incrementAndGet), late, running);
        assertEquals(1, lateCancelled.get());
        assertTrue(late.isDisposed());
    }
}
