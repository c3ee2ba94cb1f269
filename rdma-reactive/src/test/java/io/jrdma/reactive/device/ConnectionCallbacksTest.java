package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Reactor Netty's connection callbacks, addresses and blocking entry points on clients and
 * servers: {@code doOnConnected}, {@code doOnDisconnected}, {@code localAddress()},
 * {@code remoteAddress()}, {@code connectNow()}, {@code bindNow()}.
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class ConnectionCallbacksTest {
    private static long count(List<String> events, String event) {
        return events.stream().filter(event::equals).count();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void doOnConnectedRunsBeforeTheApplicationHasTheConnectionAndDoOnDisconnectedOnceWhenItIsGone(Transport transport) {
        List<String> events = new CopyOnWriteArrayList<>();
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0).transport(transport)
                .doOnConnected(c -> events.add("server connected"))
                .doOnConnected(c -> events.add("server connected, second"))
                .doOnDisconnected(c -> events.add("server disconnected"))
                .bindNow();
        try {
            RdmaConnection client = RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP)
                    .transport(transport)
                    .doOnConnected(c -> events.add("client connected, closed " + c.isDisposed()))
                    .doOnDisconnected(c -> events.add("client disconnected"))
                    .connectNow();
            assertEquals(1, count(events, "client connected, closed false"), "before connectNow returned: " + events);
            RdmaConnection accepted = server.accept().block(TIMEOUT);
            int port = server.address().getPort();
            assertEquals(CLIENT_IP, client.localAddress().orElseThrow().getAddress().getHostAddress());
            assertEquals(new InetSocketAddress(SERVER_IP, port), client.remoteAddress().orElseThrow());
            assertEquals(new InetSocketAddress(SERVER_IP, port), accepted.localAddress().orElseThrow(), "the address the client reached");
            assertEquals(client.localAddress(), accepted.remoteAddress(), "each end sees the other");
            assertEquals(List.of("server connected", "server connected, second"),
                    events.stream().filter(e -> e.startsWith("server")).toList(), "in the order they were set, before accept()");
            StepVerifier.create(client.send("after the callbacks")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            StepVerifier.create(accepted.receive()).assertNext(m -> {
                assertEquals("after the callbacks", m.text());
                m.release();
            }).expectComplete().verify(TIMEOUT);

            client.disposeNow(TIMEOUT);
            LabPeers.await(() -> events.contains("client disconnected") && events.contains("server disconnected"),
                    "both sides' doOnDisconnected: " + events);
            accepted.disposeNow(TIMEOUT);
            client.disposeNow(TIMEOUT);
            assertEquals(1, count(events, "client disconnected"), "once: " + events);
            assertEquals(1, count(events, "server disconnected"), "once: " + events);
        } finally {
            server.disposeNow();
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aClientsDoOnConnectedThatThrowsFailsTheConnectAndTheConnectionIsClosed(Transport transport) {
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0).transport(transport).bindNow();
        try {
            RdmaClient base = RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP).transport(transport);
            AtomicInteger clientGone = new AtomicInteger();
            StepVerifier.create(base.doOnDisconnected(c -> clientGone.incrementAndGet())
                            .doOnConnected(c -> { throw new IllegalStateException("refused by the application"); }).connect())
                    .expectErrorMessage("refused by the application").verify(TIMEOUT);
            // closed, not leaked: fully closed, its doOnDisconnected ran once (the server's end may have gone during set-up)
            LabPeers.await(() -> clientGone.get() == 1, "the client's connection closed: " + clientGone);

            RdmaConnection good = base.connectNow();  // the server serves the next
            // past the refused client's server end, if set-up got that far (the peer closed it), to the good one's
            RdmaConnection accepted = server.accept()
                    .flatMap(c -> c.remoteAddress().equals(good.localAddress()) ? Mono.just(c) : c.disposeLater().then(Mono.<RdmaConnection>empty()))
                    .repeat().next().block(TIMEOUT);
            StepVerifier.create(good.send("still served")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            StepVerifier.create(accepted.receive()).assertNext(m -> {
                assertEquals("still served", m.text());
                m.release();
            }).expectComplete().verify(TIMEOUT);
            good.disposeNow(TIMEOUT);
            accepted.disposeNow(TIMEOUT);
            assertEquals(1, clientGone.get(), "once");
        } finally {
            server.disposeNow();
        }
    }

    @Test
    void aServersDoOnConnectedThatThrowsClosesThatConnectionAndTheServerServesTheNext() {
        AtomicInteger calls = new AtomicInteger();
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0)
                .doOnConnected(c -> {
                    if (calls.incrementAndGet() == 1) throw new IllegalStateException("the first is refused");
                }).bindNow();
        try {
            RdmaClient client = RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP);
            RdmaConnection first = client.connectNow();
            StepVerifier.create(first.onDispose()).expectComplete().verify(TIMEOUT);  // the server closed it
            RdmaConnection second = client.connectNow();
            RdmaConnection accepted = server.accept().block(TIMEOUT);
            StepVerifier.create(second.send("the second")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            StepVerifier.create(accepted.receive()).assertNext(m -> {
                assertEquals("the second", m.text());
                m.release();
            }).expectComplete().verify(TIMEOUT);
            second.disposeNow(TIMEOUT);
            first.disposeNow(TIMEOUT);
        } finally {
            server.disposeNow();
        }
    }

    @Test
    void bindNowOnAPortInUseFailsWithATypedError() {
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0).bindNow();
        try {
            ConnectionException e = assertThrows(ConnectionException.class,
                    () -> RdmaServer.create().host(SERVER_IP).port(server.address().getPort()).bindNow());
            assertTrue(e.getMessage().contains(String.valueOf(server.address().getPort())), e.getMessage());
        } finally {
            server.disposeNow();
        }
    }
}
