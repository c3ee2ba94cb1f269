package io.jrdma.rsocket.device;

import static io.jrdma.rsocket.device.RSocketLab.CLIENT_IP;
import static io.jrdma.rsocket.device.RSocketLab.SERVER_IP;
import static io.jrdma.rsocket.device.RSocketLab.SETUP_TIMEOUT;
import static io.jrdma.rsocket.device.RSocketLab.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.rsocket.RdmaClientTransport;
import io.jrdma.rsocket.RdmaServerTransport;
import io.rsocket.DuplexConnection;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;

/**
 * {@code RdmaServerTransport.start(acceptor)} as rsocket-transport-netty's TCP server runs it:
 * the acceptor's work for a connection ends with the connection. RSocket completes that work when
 * the session ends, which for a resumable session is later than its first connection; the server
 * cancels it when the connection closes ({@code RdmaServer.handle}'s rule), so a connection a
 * session resumed from does not stay among the server's handlers until the session ends.
 */
@Tag("device")
@Timeout(300)
class ServerTransportTest {

    @ParameterizedTest
    @EnumSource(Transport.class)
    void theAcceptorsWorkIsCancelledWhenItsConnectionCloses(Transport transport) throws InterruptedException {
        Sinks.One<DuplexConnection> accepted = Sinks.one();
        CountDownLatch cancelled = new CountDownLatch(1);
        AtomicInteger completed = new AtomicInteger();
        // a session that outlives this connection: its Mono does not complete when the connection closes
        RdmaServerTransport.BoundServer server = RdmaServerTransport.create(RdmaServer.create().host(SERVER_IP).port(0)
                        .transport(transport).pollingMode(PollingMode.EVENT))
                .start(c -> {
                    accepted.tryEmitValue(c);
                    return Mono.<Void>never().doOnCancel(cancelled::countDown).doOnSuccess(v -> completed.incrementAndGet());
                })
                .block(SETUP_TIMEOUT);
        try {
            DuplexConnection client = RdmaClientTransport.create(RdmaClient.create().localAddress(CLIENT_IP).transport(transport)
                    .pollingMode(PollingMode.EVENT), SERVER_IP, server.address().getPort()).connect().block(SETUP_TIMEOUT);
            DuplexConnection serverSide = accepted.asMono().block(TIMEOUT);
            assertTrue(cancelled.getCount() == 1, "the acceptor's work runs while its connection is open");

            client.dispose();
            StepVerifier.create(serverSide.onClose()).expectComplete().verify(TIMEOUT);
            assertTrue(cancelled.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS),
                    "the acceptor's work was cancelled when its connection closed");
            assertEquals(0, completed.get(), "cancelled, not completed");
        } finally {
            server.dispose();
        }
    }
}
