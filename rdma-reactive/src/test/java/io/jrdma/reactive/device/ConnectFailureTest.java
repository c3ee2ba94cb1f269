package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmException;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.test.StepVerifier;

/** Connection attempts that fail, and the typed error each one gives on rxe. */
@Tag("device")
@Timeout(value = 90, threadMode = ThreadMode.SEPARATE_THREAD)
class ConnectFailureTest {
    /** IB CM reject reason 8 (invalid service ID): rdma_cm's answer when nothing listens on the port. */
    private static final int IB_CM_REJ_INVALID_SERVICE_ID = 8;
    /** IB CM reject reason 28 (consumer defined): an rdma_reject by the server application. */
    private static final int IB_CM_REJ_CONSUMER_DEFINED = 28;

    private static RdmaClient client(Transport transport, int port) {
        return RdmaClient.create().host(LabPeers.SERVER_IP).port(port).localAddress(LabPeers.CLIENT_IP).transport(transport);
    }

    /** A TCP port nothing listens on; rdma_cm has a port space of its own where nothing listens either. */
    private static int unusedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(LabPeers.SERVER_IP))) {
            return s.getLocalPort();
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void connectingToAPortWithoutAListenerIsRejected(Transport transport) throws IOException {
        StepVerifier.create(client(transport, unusedPort()).connect())
                .expectErrorSatisfies(e -> {
                    ConnectionException.Rejected r = assertInstanceOf(ConnectionException.Rejected.class, e);
                    if (transport == Transport.RDMA_CM) {
                        CmException cm = assertInstanceOf(CmException.class, r.getCause());
                        assertEquals(CmEventType.REJECTED, cm.event());
                        assertEquals(IB_CM_REJ_INVALID_SERVICE_ID, cm.status(), cm.getMessage());
                        assertTrue(r.getMessage().contains("no listener"), r.getMessage());
                    } else {
                        assertInstanceOf(ConnectException.class, r.getCause());
                        assertTrue(r.getMessage().contains("nothing listens"), r.getMessage());
                        assertEquals(0, r.reason().length);
                    }
                })
                .verify(TIMEOUT);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aServerThatRefusesAClientRejectsItWithAReasonAndKeepsAccepting(Transport transport) {
        AtomicInteger attempts = new AtomicInteger();
        DisposableRdmaServer server = RdmaServer.create().host(LabPeers.SERVER_IP).port(0).transport(transport)
                .accept(peer -> attempts.incrementAndGet() > 1)  // refuses the first attempt only
                .bind().block(TIMEOUT);
        try {
            RdmaClient client = client(transport, server.address().getPort());
            StepVerifier.create(client.connect())
                    .expectErrorSatisfies(e -> {
                        ConnectionException.Rejected r = assertInstanceOf(ConnectionException.Rejected.class, e);
                        byte[] reason = "rejected by server".getBytes(UTF_8);
                        byte[] got = r.reason();
                        assertTrue(got.length >= reason.length, r.getMessage());
                        assertArrayEquals(reason, Arrays.copyOf(got, reason.length), r.getMessage());
                        // IB CM REJ private data is a fixed 148-byte field: rdma_cm pads the reason with zeros
                        for (int i = reason.length; i < got.length; i++) assertEquals(0, got[i]);
                        if (transport == Transport.RDMA_CM) {
                            assertEquals(IB_CM_REJ_CONSUMER_DEFINED, assertInstanceOf(CmException.class, r.getCause()).status());
                        }
                    })
                    .verify(TIMEOUT);
            assertEquals(1, attempts.get());

            var both = client.connect().zipWith(server.connections().next()).block(TIMEOUT);
            assertEquals(2, attempts.get());
            StepVerifier.create(both.getT1().send("admitted")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            StepVerifier.create(both.getT2().receive().map(m -> {
                String text = m.text();
                m.release();
                return text;
            })).expectNext("admitted").expectComplete().verify(TIMEOUT);
            both.getT1().close().block(TIMEOUT);
            both.getT2().close().block(TIMEOUT);
        } finally {
            server.dispose();
        }
    }
}
