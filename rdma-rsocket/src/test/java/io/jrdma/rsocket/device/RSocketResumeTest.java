package io.jrdma.rsocket.device;

import static io.jrdma.rsocket.device.RSocketLab.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.Transport;
import io.jrdma.rsocket.RdmaDuplexConnection;
import io.rsocket.DuplexConnection;
import io.rsocket.Payload;
import io.rsocket.core.RSocketConnector;
import io.rsocket.core.RSocketServer;
import io.rsocket.core.Resume;
import io.rsocket.plugins.DuplexConnectionInterceptor;
import io.rsocket.util.DefaultPayload;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.test.StepVerifier;
import reactor.util.retry.Retry;

/**
 * RSocket's resumption over both jrdma transports, as over TCP: the RDMA connection under an
 * open request-stream is closed (disposed on the client, through the public API, which
 * disconnects it: the server sees it closed too), RSocket's client connects again through
 * {@code RdmaClientTransport.connect()}, sends RESUME, the server answers RESUME_OK on the new
 * connection and both sides replay what the other had not received: the stream goes on where it
 * broke, every payload once and in order.
 */
@Tag("device")
@Timeout(300)
class RSocketResumeTest {
    static final int PAYLOADS = 2000;
    /** The payload after which the client breaks the connection: the stream is half way. */
    static final int BREAK_AFTER = 500;
    /**
     * Demand in batches of 32: the responder is never more than that ahead of the client, so what
     * the break loses stays within the server's resume store (100,000 bytes by default), and the
     * stream is certainly open when it breaks.
     */
    static final int DEMAND = 32;

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aRequestStreamResumesOnASecondConnectionAfterTheFirstBreaks(Transport transport) {
        AtomicInteger streams = new AtomicInteger();
        RSocketTransportTest.Responder responder = new RSocketTransportTest.Responder() {
            @Override
            public Flux<Payload> requestStream(Payload p) {
                streams.incrementAndGet();
                return super.requestStream(p);
            }
        };
        List<RdmaConnection> clientConnections = new CopyOnWriteArrayList<>();
        List<RdmaConnection> serverConnections = new CopyOnWriteArrayList<>();
        // what RSocket's client got from the transport: RdmaDuplexConnection, once per connect()
        List<DuplexConnection> clientSources = new CopyOnWriteArrayList<>();
        DuplexConnectionInterceptor sources = (type, c) -> {
            if (type == DuplexConnectionInterceptor.Type.SOURCE) clientSources.add(c);
            return c;
        };
        // the client reconnects every second for two minutes (rsocket's default backs off to 16 s, with jitter)
        // README: resume
        Resume serverResume = new Resume().sessionDuration(Duration.ofMinutes(2));
        Resume clientResume = new Resume().sessionDuration(Duration.ofMinutes(2)).retry(Retry.fixedDelay(120, Duration.ofSeconds(1)));
        UnaryOperator<RSocketServer> server = s -> s.resume(serverResume);
        UnaryOperator<RSocketConnector> connector = c -> c.resume(clientResume);
        // README end
        try (RSocketLab lab = RSocketLab.start(transport, responder, server, s -> s.doOnConnected(serverConnections::add),
                c -> connector.apply(c).interceptors(r -> r.forConnection(sources)), c -> c.doOnConnected(clientConnections::add))) {
            assertEquals(1, clientConnections.size(), "one connection before the break");
            RdmaConnection first = clientConnections.getFirst();
            Flux<String> stream = lab.client.requestStream(DefaultPayload.create(Integer.toString(PAYLOADS)))
                    .map(p -> {
                        String d = p.getDataUtf8();
                        p.release();
                        return d;
                    })
                    .doOnNext(d -> {
                        if (d.equals("payload " + BREAK_AFTER)) first.dispose();
                    })
                    .limitRate(DEMAND);
            List<String> expected = new ArrayList<>();
            for (int i = 0; i < PAYLOADS; i++) expected.add("payload " + i);
            // rxe took seconds to set up a connection in the lab: the resumed stream gets the setup timeout
            StepVerifier.create(stream.collectList()).expectNext(expected).expectComplete().verify(RSocketLab.SETUP_TIMEOUT.plus(TIMEOUT));

            assertTrue(first.isDisposed(), "the first connection was closed");
            assertEquals(2, clientConnections.size(), "the client connected a second time: " + clientConnections);
            assertFalse(clientConnections.get(1).isDisposed(), "the second connection carries the session");
            assertEquals(2, clientSources.size(), "RdmaClientTransport.connect() gave RSocket a second connection");
            assertTrue(clientSources.stream().allMatch(RdmaDuplexConnection.class::isInstance), "both RdmaDuplexConnections: " + clientSources);
            assertEquals(2, serverConnections.size(), "the server accepted the second connection: " + serverConnections);
            assertEquals(1, streams.get(), "the responder's stream went on; it was not requested again");
            // the session lives on over the second connection
            StepVerifier.create(lab.client.requestResponse(DefaultPayload.create("resumed")).map(Payload::getDataUtf8))
                    .expectNext("echo resumed").expectComplete().verify(TIMEOUT);
            assertFalse(lab.client.isDisposed(), "the requester outlived the first connection");
        }
    }
}
