package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmException;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.PortSpace;
import io.jrdma.reactive.internal.setup.ConnectionDescriptor;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
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

    /**
     * A client from host A; its connect timeout is the test's own (the default 10 s is short for
     * the first connect of a JVM under the lab's emulation: it opens the device on both ends).
     */
    private static RdmaClient client(Transport transport, int port) {
        return RdmaClient.create().host(LabPeers.SERVER_IP).port(port).localAddress(LabPeers.CLIENT_IP).transport(transport)
                .connectTimeout(TIMEOUT);
    }

    /** A TCP port nothing listens on; rdma_cm has a port space of its own where nothing listens either. */
    private static int unusedPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(LabPeers.SERVER_IP))) {
            return s.getLocalPort();
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void connectingToAPortWithoutAListenerIsRejectedSayingWhatToCheck(Transport transport) throws IOException {
        int port = unusedPort();
        String at = LabPeers.SERVER_IP + ":" + port;
        StepVerifier.create(client(transport, port).connect())
                .expectErrorSatisfies(e -> {
                    ConnectionException.Rejected r = assertInstanceOf(ConnectionException.Rejected.class, e);
                    if (transport == Transport.RDMA_CM) {
                        CmException cm = assertInstanceOf(CmException.class, r.getCause());
                        assertEquals(CmEventType.REJECTED, cm.event());
                        assertEquals(IB_CM_REJ_INVALID_SERVICE_ID, cm.status(), cm.getMessage());
                        assertEquals("nothing listens for rdma_cm connections at " + at + " (IB CM reject reason 8, invalid service ID):"
                                + " start the server, or check its address, port and transport (a server that sets up over TCP is not"
                                + " an rdma_cm listener)", UserLines.assertReadable(r.getMessage()));
                    } else {
                        assertInstanceOf(ConnectException.class, r.getCause());
                        assertEquals("nothing listens for TCP connection setup at " + at + " (Connection refused): start the server,"
                                + " or check its address, port and transport (a server that sets up over rdma_cm does not listen on TCP)",
                                UserLines.assertReadable(r.getMessage()));
                        assertEquals(0, r.reason().length);
                    }
                })
                .verify(TIMEOUT.multipliedBy(2));
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aServerThatRefusesAClientRejectsItWithAReasonAndKeepsAccepting(Transport transport) {
        AtomicInteger attempts = new AtomicInteger();
        UserLines log = new UserLines("io.jrdma.reactive.server");
        DisposableRdmaServer server = RdmaServer.create().host(LabPeers.SERVER_IP).port(0).transport(transport)
                .accept(peer -> attempts.incrementAndGet() > 1)  // refuses the first attempt only
                .bind().block(TIMEOUT);
        try {
            RdmaClient client = client(transport, server.address().getPort());
            StepVerifier.create(client.connect())
                    .expectErrorSatisfies(e -> {
                        ConnectionException.Rejected r = assertInstanceOf(ConnectionException.Rejected.class, e);
                        String why = "the server does not accept connections from " + LabPeers.CLIENT_IP;
                        assertEquals(LabPeers.SERVER_IP + ":" + server.address().getPort() + " rejected the connection: " + why,
                                UserLines.assertReadable(r.getMessage()));
                        byte[] reason = why.getBytes(UTF_8);
                        byte[] got = r.reason();
                        assertTrue(got.length >= reason.length, r.getMessage());
                        assertArrayEquals(reason, Arrays.copyOf(got, reason.length), r.getMessage());
                        // IB CM REJ private data is a fixed 148-byte field: rdma_cm pads the reason with zeros
                        for (int i = reason.length; i < got.length; i++) assertEquals(0, got[i]);
                        if (transport == Transport.RDMA_CM) {
                            assertEquals(IB_CM_REJ_CONSUMER_DEFINED, assertInstanceOf(CmException.class, r.getCause()).status());
                        }
                    })
                    .verify(TIMEOUT.multipliedBy(2));
            assertEquals(1, attempts.get());
            assertTrue(log.await("the server does not accept connections from " + LabPeers.CLIENT_IP)
                    .startsWith("rejected a " + (transport == Transport.TCP ? "TCP " : "") + "connection from " + LabPeers.CLIENT_IP + ":"));

            var both = client.connect().zipWith(server.connections().next()).block(TIMEOUT);
            assertEquals(2, attempts.get());
            StepVerifier.create(both.getT1().send("admitted")).expectNextCount(1).expectComplete().verify(TIMEOUT.multipliedBy(2));
            StepVerifier.create(both.getT2().receive().map(m -> {
                String text = m.text();
                m.release();
                return text;
            })).expectNext("admitted").expectComplete().verify(TIMEOUT.multipliedBy(2));
            both.getT1().disposeNow(TIMEOUT);
            both.getT2().disposeNow(TIMEOUT);
        } finally {
            server.disposeNow();
            log.close();
        }
    }

    /**
     * rdma_cm private data that is not a jrdma descriptor: what a C client sends (nothing, padded
     * with zeros), something else entirely, a descriptor cut short, one of a later version. Each
     * is rejected with the reason, which the client reads and the server logs as one line; then a
     * jrdma client is served as if nothing happened.
     */
    @Test
    void malformedConnectPrivateDataIsRejectedWithAReasonAndTheListenerKeepsServing() {
        byte[] descriptor = new ConnectionDescriptor(16, 4096, new RemoteBuffer(0, 0, 0)).encode();
        byte[] later = descriptor.clone();
        later[4] = 2;
        Map<String, byte[]> sent = new LinkedHashMap<>();
        sent.put("no jrdma connection descriptor (it starts 0x00000000, not JRDM)", new byte[0]);
        sent.put("no jrdma connection descriptor (it starts 0x47455420, not JRDM)", "GET / HTTP/1.1\r\n".getBytes(UTF_8));
        sent.put("a jrdma connection descriptor with receive depth 0 and buffer size 0 (cut short?)", Arrays.copyOf(descriptor, 6));
        sent.put("jrdma protocol version 2; this side speaks version 1", later);
        try (UserLines log = new UserLines("io.jrdma.reactive.server")) {
            DisposableRdmaServer server = RdmaServer.create().host(LabPeers.SERVER_IP).port(0).bind().block(TIMEOUT);
            try {
                String at = LabPeers.SERVER_IP + ":" + server.address().getPort();
                for (var c : sent.entrySet()) {
                    StepVerifier.create(client(Transport.RDMA_CM, server.address().getPort()).rawPrivateData(c.getValue()).connect())
                            .expectErrorSatisfies(e -> assertEquals(at + " rejected the connection: not a jrdma client: " + c.getKey()
                                    + " in its connect request", UserLines.assertReadable(
                                            assertInstanceOf(ConnectionException.Rejected.class, e).getMessage())))
                            .verify(TIMEOUT.multipliedBy(2));
                    assertTrue(log.await(c.getKey()).startsWith("rejected a connection from " + LabPeers.CLIENT_IP + ":"), log.lines()::toString);
                }
                assertServes(server, Transport.RDMA_CM);
            } finally {
                server.disposeNow();
            }
        }
    }

    /**
     * Bytes from something that is not a jrdma client on the TCP setup port: an HTTP request gets
     * a reject saying so, one that stops half-way and one that sends nothing are closed, and none
     * of them costs the server a QP; then a jrdma client is served.
     */
    @Test
    void garbageOnTheTcpSetupPortIsRejectedWithAReasonAndTheListenerKeepsServing() throws IOException {
        try (UserLines log = new UserLines("io.jrdma.reactive.server")) {
            DisposableRdmaServer server = RdmaServer.create().host(LabPeers.SERVER_IP).port(0).transport(Transport.TCP).bind().block(TIMEOUT);
            try {
                int port = server.address().getPort();
                byte[] answer = exchange(port, "GET / HTTP/1.1\r\nHost: rxe-b\r\nUser-Agent: curl/7.88\r\nAccept: */*\r\n\r\n".getBytes(UTF_8));
                ByteBuffer reject = ByteBuffer.wrap(answer);
                assertEquals(0x4A52454A, reject.getInt(), "a reject (JREJ), not a hello: " + HexFormat.of().formatHex(answer));
                byte[] reason = new byte[Byte.toUnsignedInt(reject.get())];
                reject.get(reason);
                assertFalse(reject.hasRemaining(), "the reject, then the server closes");
                String expected = "not a jrdma client: what it sent is no jrdma hello (it starts \"GET / HT\")";
                assertEquals(expected, new String(reason, UTF_8));
                assertTrue(log.await(expected).startsWith("rejected a TCP connection from " + LabPeers.CLIENT_IP + ":"), log.lines()::toString);

                assertEquals(0, exchange(port, new byte[10]).length, "half a hello, then EOF: closed without a word");
                log.await("the client closed the connection during TCP setup after 10 bytes of its hello");
                assertEquals(0, exchange(port, new byte[0]).length, "a port probe");
                assertServes(server, Transport.TCP);
            } finally {
                server.disposeNow();
            }
        }
    }

    /** A TCP client that connects and says nothing owns nothing on the server: it goes when the server goes, not minutes later. */
    @Test
    void aTcpClientThatSaysNothingIsClosedWhenTheServerIsDisposed() throws IOException {
        // a long connect timeout: it is not the client's timer that ends it
        DisposableRdmaServer server = RdmaServer.create().host(LabPeers.SERVER_IP).port(0).transport(Transport.TCP)
                .connectTimeout(Duration.ofMinutes(5)).bind().block(TIMEOUT);
        try (Socket idle = new Socket()) {
            idle.bind(new InetSocketAddress(LabPeers.CLIENT_IP, 0));
            idle.connect(new InetSocketAddress(LabPeers.SERVER_IP, server.address().getPort()), (int) TIMEOUT.toMillis());
            idle.setSoTimeout((int) TIMEOUT.toMillis());
            server.disposeNow(TIMEOUT);
            // closed either way: EOF once the server accepted the socket, a reset (RST) when the
            // disposal closed the listener with the connection still in its accept backlog
            try {
                assertEquals(-1, idle.getInputStream().read(), "closed by the server's disposal");
            } catch (SocketException reset) {
                assertEquals("Connection reset", reset.getMessage(), "closed by the server's disposal");
            }
        } finally {
            server.disposeNow();
        }
    }

    /** A jrdma client meeting a TCP service that is not jrdma (here one that greets like SSH) is told so, in one line. */
    @Test
    void aTcpClientMeetingAServiceThatIsNotJrdmaSaysSo() throws Exception {
        try (ServerSocket ssh = new ServerSocket(0, 1, InetAddress.getByName(LabPeers.SERVER_IP))) {
            Thread greeter = Thread.ofPlatform().daemon().start(() -> {
                try (Socket s = ssh.accept()) {
                    s.getOutputStream().write("SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\nxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx".getBytes(UTF_8));
                    s.getInputStream().read(new byte[100]);
                } catch (IOException ignored) {
                    // the client went
                }
            });
            StepVerifier.create(client(Transport.TCP, ssh.getLocalPort()).connect())
                    .expectErrorSatisfies(e -> assertEquals(LabPeers.SERVER_IP + ":" + ssh.getLocalPort() + " is not a jrdma server that sets up"
                                    + " over TCP: what it sent is no jrdma hello (it starts \"SSH-2.0-\")",
                            UserLines.assertReadable(assertInstanceOf(ConnectionException.Protocol.class, e).getMessage())))
                    .verify(TIMEOUT.multipliedBy(2));
            greeter.join(TIMEOUT.toMillis());
        }
    }

    /** A peer that never answers: the timeout names the user's connect timeout and what it waited for, on both paths. */
    @Test
    void aServerThatNeverAnswersTimesOutNamingTheConnectTimeout() throws Exception {
        Duration connectTimeout = Duration.ofMillis(2500);
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getByName(LabPeers.SERVER_IP))) {
            StepVerifier.create(client(Transport.TCP, silent.getLocalPort()).connectTimeout(connectTimeout).connect())
                    // the step named is the one reached in 2.5 s: the hello, unless the QP's creation (or the TCP connection's
                    // event) was still pending on a loaded lab
                    .expectErrorSatisfies(e -> assertTrue(java.util.List.of("the server's hello (0 of 58 bytes came)",
                                    "its queue pair to be created (the TCP connection was up)", "the TCP connection").contains(
                                    UserLines.assertReadable(assertInstanceOf(ConnectionException.Timeout.class, e).getMessage()).replace(
                                            "connecting to " + LabPeers.SERVER_IP + ":" + silent.getLocalPort() + " over TCP did not finish"
                                            + " within the connect timeout of 2.5 s: it waited for ", "")), e.getMessage()))
                    .verify(TIMEOUT.multipliedBy(2));
        }
        // an rdma_cm listener whose application never takes its connect requests: the kernel does not answer for it
        try (EventChannel channel = EventChannel.create(); CmId listener = CmId.create(channel, PortSpace.TCP)) {
            listener.bind(new InetSocketAddress(LabPeers.SERVER_IP, 0));
            listener.listen(1);
            int port = listener.localAddress().getPort();
            StepVerifier.create(client(Transport.RDMA_CM, port).connectTimeout(connectTimeout).connect())
                    .expectErrorSatisfies(e -> assertEquals("connecting to " + LabPeers.SERVER_IP + ":" + port + " over rdma_cm did not"
                                    + " finish within the connect timeout of 2.5 s: it waited for the server's reply to the connect request",
                            UserLines.assertReadable(assertInstanceOf(ConnectionException.Timeout.class, e).getMessage())))
                    .verify(TIMEOUT.multipliedBy(2));
        }
    }

    /** A jrdma client connects to {@code server} and a SEND arrives: it still serves. */
    private static void assertServes(DisposableRdmaServer server, Transport transport) {
        var both = client(transport, server.address().getPort()).connect().zipWith(server.connections().next())
                .block(TIMEOUT.multipliedBy(2));
        try {
            both.getT1().send("still serving").block(TIMEOUT);
            try (var m = both.getT2().receive().block(TIMEOUT)) {
                assertEquals("still serving", m.text());
            }
        } finally {
            both.getT1().disposeNow(TIMEOUT);
            both.getT2().disposeNow(TIMEOUT);
        }
    }

    /** Connects to the TCP port from the client's address, sends {@code bytes}, and returns all the server sends until it closes. */
    private static byte[] exchange(int port, byte[] bytes) throws IOException {
        try (Socket s = new Socket()) {
            s.bind(new InetSocketAddress(LabPeers.CLIENT_IP, 0));
            s.connect(new InetSocketAddress(LabPeers.SERVER_IP, port), (int) TIMEOUT.toMillis());
            s.setSoTimeout((int) TIMEOUT.toMillis());
            s.getOutputStream().write(bytes);
            s.shutdownOutput();  // what the peer sent, then EOF
            return s.getInputStream().readAllBytes();
        }
    }
}
