package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static java.nio.charset.StandardCharsets.US_ASCII;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.AcceptDecision;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.OutOfBandExchange;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.interop.CPeer;
import io.jrdma.interop.CPeerProcess;
import io.jrdma.interop.CPeerResult;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The reactive API against C programs that know nothing of jrdma, both directions: the seeds of
 * the interop issue ({@code rdma-ffm/src/test/c}, each file documents its wire protocol) and
 * rdma-core's rdmacm-utils. jrdma clients run on rxe0 (10.77.0.1), servers on rxe1 (10.77.0.2),
 * the C peer on the other device.
 */
@Tag("device")
@Timeout(value = 150, threadMode = ThreadMode.SEPARATE_THREAD)
class CInteropTest {
    /** The C peers' own limit for each wait: shorter than ours, so a peer that waits in vain says what for. */
    private static final String PEER_TIMEOUT = "20";
    private static final Duration WAIT = Duration.ofSeconds(45);
    private static final AtomicInteger PORTS = new AtomicInteger(21_000 + (int) (ProcessHandle.current().pid() % 1000) * 10);
    private static final Pattern REFUSED = Pattern.compile("Connection refused|RDMA_CM_EVENT_REJECTED");

    private static RdmaClient raw(int port) {
        return RdmaClient.create().host(SERVER_IP).port(port).localAddress(CLIENT_IP).rawPrivateData(new byte[0]);
    }

    /** A server that advertises its connection's exposed region as {u64 addr, u32 rkey, u32 length}, big-endian, like the C samples. */
    private static RdmaServer advertising() {
        return RdmaServer.create().host(SERVER_IP).port(0).exposeBuffer(4096, Access.REMOTE_READ, Access.REMOTE_WRITE)
                .acceptRaw(request -> {
                    RegisteredBuffer region = request.exposed().orElseThrow();
                    return AcceptDecision.accept(region.toRemote(0, region.capacity()).toBigEndian());
                });
    }

    private static void check(CPeerResult result, String regex) {
        assertTrue(Pattern.compile(regex, Pattern.MULTILINE).matcher(result.output()).find(),
                "no line matching \"" + regex + "\" in:\n" + result.output());
    }

    @Test
    void aReactiveClientWritesAndReadsBackTheMemoryACServerAdvertises() {
        try (CPeerProcess server = CPeer.compile("cm_rw_server").start("-t", PEER_TIMEOUT, SERVER_IP, "0")) {
            int port = server.awaitListeningPort(WAIT);
            RdmaConnection c = raw(port).connect().block(WAIT);
            byte[] advertised = c.peerPrivateData();
            assertEquals(196, advertised.length, "rdma_cm reports the whole accept field on RoCE: 16 bytes, then zeros");
            assertTrue(c.findRemoteBuffer().isEmpty(), "a C peer: jrdma does not know what it exposes");
            RemoteBuffer remote = RemoteBuffer.fromBigEndian(advertised, 0);
            byte[] text = "written by rdma-reactive".getBytes(US_ASCII);
            byte[] back = c.write(text, remote, 0).then(c.read(remote, 0, text.length)).block(WAIT);
            assertArrayEquals(text, back);
            c.disposeNow(WAIT);
            CPeerResult done = server.awaitExit(WAIT).requireSuccess();
            check(done, "memory holds " + text.length + " bytes: written by rdma-reactive$");
        }
    }

    @Test
    void aCClientWritesAndReadsBackTheMemoryAReactiveServerAdvertises() {
        DisposableRdmaServer server = advertising().bind().block(WAIT);
        // the connection ends when the C client disconnects, and its region with it: keep the region to look at afterwards
        Mono<RdmaConnection> accepted = server.connections().next().doOnNext(c -> c.exposedBuffer().retain()).cache();
        accepted.subscribe();
        try {
            CPeerResult client = CPeer.compile("cm_rw_client").run(WAIT, "-t", PEER_TIMEOUT, "-b", CLIENT_IP, SERVER_IP,
                    String.valueOf(server.address().getPort()), "written by C").requireSuccess();
            check(client, "SUCCESS");
            RdmaConnection c = accepted.block(WAIT);
            assertEquals(56, c.peerPrivateData().length, "a connect request's field: the client sent none, rdma_cm padded it");
            c.onDispose().block(WAIT);  // the C client disconnected
            try (RegisteredBuffer region = c.exposedBuffer()) {  // closing it gives our reference back
                assertEquals("written by C", region.string(0, 12));
            }
        } finally {
            server.disposeNow();
        }
    }

    @Test
    void aReactiveClientNotifiesACServerWithWritesWithImmediate() {
        List<String> messages = List.of("first", "second one", "");
        try (CPeerProcess server = CPeer.compile("cm_imm_server").start("-t", PEER_TIMEOUT, "-n", "3", SERVER_IP, "0")) {
            int port = server.awaitListeningPort(WAIT);
            RdmaConnection c = raw(port).connect().block(WAIT);
            RemoteBuffer remote = RemoteBuffer.fromBigEndian(c.peerPrivateData(), 0);
            long offset = 0;
            for (int k = 1; k <= messages.size(); k++) {
                byte[] m = messages.get(k - 1).getBytes(US_ASCII);
                c.writeWithImmediate(m, remote, offset, k).block(WAIT);  // the immediate in host order; the wire has it in network order
                offset += m.length;
            }
            c.disposeNow(WAIT);
            CPeerResult done = server.awaitExit(WAIT).requireSuccess();
            check(done, "message 1: imm_data 0x00000001 \\(1\\), byte_len 5, memory \\[0, 5\\) holds: first$");
            check(done, "message 2: imm_data 0x00000002 \\(2\\), byte_len 10, memory \\[5, 15\\) holds: second one$");
            check(done, "message 3: imm_data 0x00000003 \\(3\\), byte_len 0");
        }
    }

    @Test
    void aCClientNotifiesAReactiveServerWithWritesWithImmediate() {
        DisposableRdmaServer server = advertising().bind().block(WAIT);
        Mono<RdmaConnection> accepted = server.connections().next().cache();
        accepted.subscribe();
        try {
            CPeerResult client = CPeer.compile("cm_imm_client").run(WAIT, "-t", PEER_TIMEOUT, "-b", CLIENT_IP, SERVER_IP,
                    String.valueOf(server.address().getPort()), "alpha", "beta", "gamma").requireSuccess();
            check(client, "message 3: WRITE_WITH_IMM of 5 bytes at offset 9, imm_data 3: gamma");
            RdmaConnection c = accepted.block(WAIT);
            // the client wrote and disconnected: its notifications, and the memory they point into, wait for us
            List<ReceivedMessage> notes = c.receives().take(3).collectList().block(WAIT);
            assertEquals(List.of(5, 4, 5), notes.stream().map(ReceivedMessage::length).toList(), "byte_len is each write's length");
            assertEquals("alphabetagamma", c.exposedBuffer().string(0, 14));
            for (int k = 1; k <= 3; k++) {
                ReceivedMessage m = notes.get(k - 1);
                assertTrue(m.hasImmediate());
                assertEquals(k, m.immediate(), "the immediate in host order");
                m.release();
            }
        } finally {
            server.disposeNow();
        }
    }

    /** rdmacm-utils' rdma_server: one 16-byte SEND each way, no private data. */
    @Test
    void aReactiveClientExchangesSixteenByteMessagesWithRdmaServer() {
        String port = String.valueOf(PORTS.getAndIncrement());
        try (CPeerProcess server = CPeer.installed("rdma_server").start("-s", SERVER_IP, "-p", port)) {
            RdmaConnection c = Flux.range(0, 40).concatMap(i -> raw(Integer.parseInt(port)).connect()
                            .onErrorResume(e -> Mono.delay(Duration.ofMillis(250)).then(Mono.empty())))  // it listens a moment after it starts
                    .next().block(WAIT);
            byte[] sixteen = "sixteen bytes!!!".getBytes(US_ASCII);
            ReceivedMessage reply = c.send(sixteen).then(c.receive()).block(WAIT);
            assertEquals(16, reply.length());
            assertArrayEquals(new byte[16], reply.bytes(), "rdma_server's reply: its own 16 zero bytes");
            reply.release();
            c.onDispose().block(WAIT);  // rdma_server disconnects after its reply
            check(server.awaitExit(WAIT).requireSuccess(), "^rdma_server: end 0$");
        }
    }

    /** rdmacm-utils' rdma_client against a reactive server: one 16-byte SEND each way. */
    @Test
    void rdmaClientExchangesSixteenByteMessagesWithAReactiveServer() {
        int port = PORTS.getAndIncrement();
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(port).acceptRaw(r -> AcceptDecision.accept(new byte[0]))
                .bind().block(WAIT);
        server.connections().flatMap(c -> c.receive().flatMap(m -> c.send(m.buffer(), 0, 16).doFinally(s -> m.release())))
                .subscribe(wc -> { }, e -> { });
        try {
            CPeerResult client = CPeer.installed("rdma_client").run(WAIT, "-s", SERVER_IP, "-p", String.valueOf(port)).requireSuccess();
            check(client, "^rdma_client: end 0$");
        } finally {
            server.disposeNow();
        }
    }

    /** rdmacm-utils' ucmatose: ten 100-byte SENDs from the server, then ten back. */
    @Test
    void aReactiveServerPassesUcmatosesTenMessagesEachWay() {
        int port = PORTS.getAndIncrement();
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(port).acceptRaw(r -> AcceptDecision.accept(new byte[0]))
                .bind().block(WAIT);
        Mono<List<Integer>> received = server.connections().next().flatMap(c -> Flux.range(0, 10)
                        .concatMap(i -> c.send(new byte[100]))
                        .thenMany(c.receives().take(10).map(m -> {
                            int n = m.length();
                            m.release();
                            return n;
                        })).collectList()
                        .flatMap(lengths -> c.disposeLater().thenReturn(lengths)))  // ucmatose's client exits on the server's disconnect
                .cache();
        received.subscribe(v -> { }, e -> { });
        try {
            CPeerResult client = CPeer.installed("ucmatose").run(WAIT, "-s", SERVER_IP, "-b", CLIENT_IP, "-p", String.valueOf(port))
                    .requireSuccess();
            check(client, "return status 0");
            assertEquals(List.of(100, 100, 100, 100, 100, 100, 100, 100, 100, 100), received.block(WAIT));
        } finally {
            server.disposeNow();
        }
    }

    /**
     * oob_tcp_peer swaps a 40-byte descriptor of its own over a plain TCP socket, then a ready
     * byte: the application speaks that protocol in its {@link OutOfBandExchange}, jrdma drives the
     * QP; then a SEND ping-pong, a WRITE and a READ back, and the peer's goodbye byte.
     */
    @Test
    void aReactiveClientConnectsToTheHandBuiltCPeerThroughTheApplicationsOwnExchange() throws IOException {
        try (CPeerProcess server = CPeer.compile("oob_tcp_peer").start("-t", PEER_TIMEOUT, "-d", "rxe1", "-g", "1", "server", SERVER_IP, "0");
             Socket socket = new Socket()) {
            int port = server.awaitListeningPort(WAIT);
            socket.connect(new InetSocketAddress(SERVER_IP, port), (int) WAIT.toMillis());
            socket.setSoTimeout((int) WAIT.toMillis());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            OutOfBandExchange exchange = new OutOfBandExchange() {
                @Override
                public Mono<Peer> exchange(Local local) {
                    return Mono.fromCallable(() -> {
                        RegisteredBuffer mine = local.exposed().orElseThrow();
                        ByteBuffer d = ByteBuffer.allocate(40).putInt(local.qpNumber()).putInt(local.psn()).put(local.gid())
                                .putLong(mine.address()).putInt(mine.rkey()).putInt((int) mine.capacity());
                        out.write(d.array());
                        byte[] theirs = new byte[40];
                        in.readFully(theirs);
                        ByteBuffer t = ByteBuffer.wrap(theirs);
                        byte[] gid = new byte[16];
                        t.get(8, gid);
                        return new Peer(t.getInt(0), t.getInt(4), 0, gid, Optional.of(RemoteBuffer.fromBigEndian(theirs, 24)));
                    }).subscribeOn(Schedulers.boundedElastic());  // blocking socket I/O, off the setup thread
                }

                @Override
                public Mono<Void> ready(Peer peer) {
                    return Mono.<Void>fromCallable(() -> {
                        out.write('R');
                        if (in.read() != 'R') throw new IOException("the peer did not confirm RTS");
                        return null;
                    }).subscribeOn(Schedulers.boundedElastic());
                }
            };
            RdmaConnection c = RdmaClient.create().device("rxe0", 1).gidIndex(1).connectionParameters(1, 1, 7, 7)
                    .exposeBuffer(4096, Access.REMOTE_READ, Access.REMOTE_WRITE).outOfBand(exchange).connect().block(WAIT);
            for (int k = 1; k <= 3; k++) {
                ReceivedMessage pong = c.send("ping " + k).then(c.receive()).block(WAIT);
                assertEquals("pong " + k, pong.text());
                pong.release();
            }
            RemoteBuffer remote = c.remoteBuffer();
            byte[] text = "through our own exchange".getBytes(US_ASCII);
            assertArrayEquals(text, c.write(text, remote, 0).then(c.read(remote, 0, text.length)).block(WAIT));
            out.write('D');
            assertEquals('D', in.read(), "the peer's goodbye");
            c.disposeNow(WAIT);
            CPeerResult done = server.awaitExit(WAIT).requireSuccess();
            check(done, "memory holds " + text.length + " bytes: through our own exchange$");
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }
}
