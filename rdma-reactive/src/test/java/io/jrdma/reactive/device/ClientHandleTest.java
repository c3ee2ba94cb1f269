package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.ReceivedMessage;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * {@code RdmaClient.handle}, Reactor Netty's {@code TcpClient.handle}: the connection that
 * {@code connect()} emits runs the function on its loop and is disposed when the function's
 * publisher ends, a failure logged once; disposing the connection, or the peer closing it,
 * cancels the publisher. The same rules on the host: {@code ConnectionHandlerTest}.
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class ClientHandleTest {

    private static LabPeers connect(Transport transport, Function<RdmaConnection, Publisher<Void>> handler) {
        return LabPeers.connect(transport, RdmaServer.create(), RdmaClient.create().handle(handler));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aHandlerThatCompletesDisposesItsConnectionAndTheServerSeesItGo(Transport transport) {
        AtomicLong handlerThread = new AtomicLong();
        try (LabPeers p = connect(transport, c -> {
            handlerThread.set(Thread.currentThread().threadId());
            return c.receive().doOnNext(ReceivedMessage::release).then(c.send("goodbye")).then();  // answers once, then is done
        })) {
            Mono<List<String>> heard = LabPeers.subscribed(p.accepted.receives().map(ClientHandleTest::text).collectList());
            StepVerifier.create(p.accepted.send("hello")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            // receives() completed: the client's handler completed, and its connection was disposed
            StepVerifier.create(heard).expectNext(List.of("goodbye")).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.client.onDispose()).expectComplete().verify(TIMEOUT);
            assertEquals(p.client.loopThreadId(), handlerThread.get(), "the handler runs on the connection's loop");
        }
    }

    @Test
    void aFailingHandlerDisposesItsConnectionAndIsLoggedOnce() {
        IllegalStateException bug = new IllegalStateException("a client handler bug");
        try (UserLines log = new UserLines("io.jrdma.reactive.client");
             LabPeers p = connect(Transport.RDMA_CM, c -> c.receive().doOnNext(ReceivedMessage::release).then(Mono.error(bug)))) {
            StepVerifier.create(p.accepted.send("fail now")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.client.onDispose()).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.accepted.onDispose()).expectComplete().verify(TIMEOUT);  // the server saw it go
            List<LogRecord> failures = log.records().stream().filter(r -> r.getThrown() != null).toList();
            assertEquals(1, failures.size(), "logged once: " + failures.stream().map(LogRecord::getMessage).toList());
            assertSame(bug, failures.getFirst().getThrown());
            assertEquals(Level.WARNING, failures.getFirst().getLevel());
            assertTrue(failures.getFirst().getMessage().contains("failed on " + p.client), failures.getFirst().getMessage());
        }
    }

    @Test
    void disposingTheConnectionCancelsItsHandler() {
        AtomicInteger cancelled = new AtomicInteger();
        try (LabPeers p = connect(Transport.RDMA_CM, c -> Mono.<Void>never().doOnCancel(cancelled::incrementAndGet))) {
            StepVerifier.create(p.client.send("still handled")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            assertEquals(0, cancelled.get());
            p.client.dispose();
            StepVerifier.create(p.client.onDispose()).expectComplete().verify(TIMEOUT);
            LabPeers.await(() -> cancelled.get() == 1, "the handler's publisher cancelled");
            StepVerifier.create(p.accepted.onDispose()).expectComplete().verify(TIMEOUT);
            assertEquals(1, cancelled.get());
        }
    }

    @Test
    void thePeerClosingTheConnectionCancelsItsHandlerToo() {
        AtomicInteger cancelled = new AtomicInteger();
        try (LabPeers p = connect(Transport.RDMA_CM, c -> Mono.<Void>never().doOnCancel(cancelled::incrementAndGet))) {
            p.accepted.dispose();
            StepVerifier.create(p.client.onDispose()).expectComplete().verify(TIMEOUT);
            LabPeers.await(() -> cancelled.get() == 1, "the handler's publisher cancelled");
        }
    }

    /** docs/reactive.md's client handle() example is the part between the README markers, against an echo server. */
    @Test
    void connectNowYieldsTheHandledConnectionAndTheDocsExampleRuns() {
        DisposableRdmaServer echo = RdmaServer.create().host("10.77.0.2").port(7477)
                .handle(c -> c.receives().concatMap(m -> c.send(m.buffer(), 0, m.length()).doFinally(s -> m.release())).then())
                .bindNow();
        try {
            // README: client handle
            RdmaConnection conn = RdmaClient.create().host("10.77.0.2").port(7477).localAddress("10.77.0.1")
                    .handle(c -> c.send("ping")                                       // on the connection's loop
                            .then(c.receive())                                        // the echo
                            .doOnNext(ReceivedMessage::release)
                            .then())                                                  // when it ends, the connection is disposed
                    .connectNow();
            conn.onDispose().block();                                                 // the handler's work is done
            // README end
            assertTrue(conn.isDisposed());
        } finally {
            echo.disposeNow();
        }
    }

    private static String text(ReceivedMessage m) {
        try (m) {
            return m.text();
        }
    }
}
