package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.RdmaOperationException.RemoteAccessException;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Signal;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * Reactor Netty's lifecycle vocabulary on connections and servers: an eager {@code dispose()},
 * {@code disposeNow()}, {@code onDispose()}; {@code receives()} that ends with the connection
 * (complete when orderly, the cause when not); a server's connections taken by any number of
 * takers ({@code accept()}, {@code connections()}) or handed to a per-connection function
 * ({@code handle}).
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class LifecycleTest {

    // ------------------------------------------------------------------------------ connections

    @Test
    void disposeClosesAtOnceWithoutASubscriptionAndRunsWhatWasAttached() {
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM)) {
            AtomicBoolean attached = new AtomicBoolean();
            p.client.onDispose(() -> attached.set(true));
            p.client.dispose();  // no subscription, no block: closing has begun
            assertTrue(p.client.isDisposed());
            StepVerifier.create(p.client.onDispose()).expectComplete().verify(TIMEOUT);
            assertTrue(attached.get(), "what onDispose(Disposable) attached is disposed with the connection");
            StepVerifier.create(p.accepted.onDispose()).expectComplete().verify(TIMEOUT);  // the peer learned of it

            AtomicBoolean late = new AtomicBoolean();
            p.client.onDispose(() -> late.set(true));
            assertTrue(late.get(), "attached to a closed connection: disposed at once");
            p.client.dispose();  // idempotent
        }
    }

    @Test
    void disposeNowWaitsUntilClosedAndRefusesToBlockALoopButStillCloses() {
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM)) {
            // signals come on the connection's loop, which serves other connections: it must not block
            StepVerifier.create(p.client.send("x").map(wc -> {
                        p.client.disposeNow();
                        return wc;
                    }))
                    .expectErrorSatisfies(e -> {
                        assertInstanceOf(IllegalStateException.class, e);
                        assertTrue(e.getMessage().contains("use dispose() and continue with onDispose()"), e.getMessage());
                    })
                    .verify(TIMEOUT);
            StepVerifier.create(p.client.onDispose()).expectComplete().verify(TIMEOUT);

            p.accepted.disposeNow();  // on the test thread: returns once everything is freed
            assertTrue(p.accepted.isDisposed());
            StepVerifier.create(p.accepted.onDispose()).expectComplete().verify(TIMEOUT);
        }
    }

    @Test
    void receivesFailsWithTheCauseWhenAnErrorClosedTheConnection() {
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM)) {
            RemoteBuffer remote = p.client.remoteBuffer();
            RemoteBuffer wrongKey = new RemoteBuffer(remote.address(), remote.rkey() ^ 0x5a, remote.length());
            StepVerifier.create(p.client.write("denied".getBytes(UTF_8), wrongKey, 0))
                    .expectError(RemoteAccessException.class).verify(TIMEOUT);
            Signal<Void> end = p.client.receives().then().materialize().block(TIMEOUT);
            assertNotNull(end, "receives() ended");
            if (end.isOnError()) {
                ConnectionException.Closed closed = assertInstanceOf(ConnectionException.Closed.class, end.getThrowable());
                assertFalse(closed.isOrderly(), "a remote access error is no orderly end");
                assertInstanceOf(RemoteAccessException.class, closed.getCause());
            } else {
                assertTrue(p.client.isDisposed(), "completed because the connection closed");
            }
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void receivesCompletesWhenEitherSideClosesInOrder(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport)) {
            StepVerifier.create(p.client.send("last words")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            p.client.disposeNow();
            StepVerifier.create(p.accepted.receives().map(m -> {
                        try (m) {
                            return m.text();
                        }
                    }))
                    .expectNext("last words")
                    .expectComplete()
                    .verify(TIMEOUT);
            StepVerifier.create(p.client.receives()).expectComplete().verify(TIMEOUT);  // closed here: also orderly
        }
    }

    // ------------------------------------------------------------------------------ servers: accept() and connections()

    @Test
    void eachAcceptedConnectionGoesToOneTakerAndACancelledTakerLosesNone() {
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0).bind().block(TIMEOUT);
        List<RdmaConnection> clients = new ArrayList<>();
        try {
            AtomicReference<RdmaConnection> tookAfterCancel = new AtomicReference<>();
            Disposable cancelled = server.accept().subscribe(tookAfterCancel::set);
            cancelled.dispose();

            // two takers at once, then two clients: one connection each
            Mono<RdmaConnection> first = LabPeers.subscribed(server.accept());
            Mono<RdmaConnection> second = LabPeers.subscribed(server.accept());
            clients.add(connect(server));
            clients.add(connect(server));
            RdmaConnection a = first.block(TIMEOUT);
            RdmaConnection b = second.block(TIMEOUT);
            assertNotSame(a, b);
            assertNull(tookAfterCancel.get(), "a cancelled accept() takes nothing");

            // connections(): a subscriber that takes one and leaves; the next connection waits for the next taker
            Mono<RdmaConnection> viaFlux = LabPeers.subscribed(server.connections().next());
            clients.add(connect(server));
            RdmaConnection c = viaFlux.block(TIMEOUT);
            clients.add(connect(server));
            RdmaConnection d = server.connections().next().block(TIMEOUT);
            for (RdmaConnection accepted : List.of(a, b, c, d)) assertFalse(accepted.isDisposed(), accepted::toString);

            // one more client nobody takes: disposing the server closes it, and every taker learns the server is gone
            RdmaConnection untaken = connect(server);
            clients.add(untaken);
            server.disposeNow();
            StepVerifier.create(untaken.onDispose()).expectComplete().verify(TIMEOUT);
            StepVerifier.create(server.accept()).expectError(ConnectionException.Closed.class).verify(TIMEOUT);
            StepVerifier.create(server.connections()).expectComplete().verify(TIMEOUT);
            for (RdmaConnection accepted : List.of(a, b, c, d)) {
                StepVerifier.create(accepted.onDispose()).expectComplete().verify(TIMEOUT);
            }
        } finally {
            server.disposeNow();
            clients.forEach(RdmaConnection::disposeNow);
        }
    }

    // ------------------------------------------------------------------------------ servers: handle()

    @ParameterizedTest
    @EnumSource(Transport.class)
    void handleServesEachConnectionOnItsLoopAndDisposesItWhenTheHandlerEnds(Transport transport) {
        List<Boolean> onALoop = new ArrayList<>();
        Function<RdmaConnection, Publisher<Void>> oneMessageThenDone = c -> {
            synchronized (onALoop) {
                onALoop.add(Schedulers.isInNonBlockingThread());
            }
            return c.receive().doOnNext(ReceivedMessage::release).then();
        };
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0).transport(transport)
                .handle(oneMessageThenDone).bind().block(TIMEOUT);
        try {
            StepVerifier.create(server.accept()).expectError(IllegalStateException.class).verify(TIMEOUT);
            for (int i = 0; i < 2; i++) {
                RdmaConnection client = connect(server, transport);
                StepVerifier.create(client.send("done")).expectNextCount(1).expectComplete().verify(TIMEOUT);
                // the handler completed: the server disposed its end, and this side learns of it
                StepVerifier.create(client.onDispose()).expectComplete().verify(TIMEOUT);
            }
            assertEquals(List.of(true, true), onALoop);
        } finally {
            server.disposeNow();
        }
    }

    @Test
    void aFailingHandlerClosesItsConnectionAndDisposingTheServerCancelsTheRunningOnes() {
        AtomicBoolean first = new AtomicBoolean(true);
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0)
                .handle(c -> {
                    if (first.getAndSet(false)) throw new IllegalArgumentException("a handler bug");
                    return Mono.never();
                })
                .bind().block(TIMEOUT);
        try {
            RdmaConnection failed = connect(server);
            StepVerifier.create(failed.onDispose()).expectComplete().verify(TIMEOUT);

            RdmaConnection served = connect(server);  // its handler never ends by itself
            StepVerifier.create(served.send("still served")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            assertFalse(served.isDisposed());
            server.disposeNow();
            StepVerifier.create(served.onDispose()).expectComplete().verify(TIMEOUT);
        } finally {
            server.disposeNow();
        }
    }

    private static RdmaConnection connect(DisposableRdmaServer server) {
        return connect(server, Transport.RDMA_CM);
    }

    private static RdmaConnection connect(DisposableRdmaServer server, Transport transport) {
        return RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP).transport(transport)
                .connect().block(TIMEOUT);
    }
}
