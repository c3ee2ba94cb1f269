package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaOperationException.RemoteAccessException;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.lang.foreign.ValueLayout;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Peers that do not play by the rules, driven with raw verbs ({@link RawVerbsPeer}): a client that
 * addresses a jrdma server's memory with a guessed rkey, beyond what was advertised, or after the
 * server closed it, and a client that aims at the server's send and receive buffers, which are
 * never registered for remote access; and a server that deregisters its memory under a stream of
 * READs before it disconnects, as a process that exits does.
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class HostilePeerTest {
    private static final int EXPOSED = 1 << 16;

    /** A jrdma server exposing 64 KiB per connection (read, write), its connections queued as they come. */
    private record Server(DisposableRdmaServer server, BlockingQueue<RdmaConnection> accepted) implements AutoCloseable {
        static Server bind() {
            return bind(false);
        }

        static Server bind(boolean srq) {
            BlockingQueue<RdmaConnection> accepted = new LinkedBlockingQueue<>();
            RdmaServer config = RdmaServer.create().host(SERVER_IP).port(0).exposeBuffer(EXPOSED, Access.REMOTE_READ, Access.REMOTE_WRITE);
            DisposableRdmaServer s = (srq ? config.sharedReceiveQueue(64) : config).bind().block(TIMEOUT);
            s.connections().subscribe(accepted::add);
            return new Server(s, accepted);
        }

        InetSocketAddress address() {
            return new InetSocketAddress(SERVER_IP, server.address().getPort());
        }

        RdmaConnection next() throws InterruptedException {
            RdmaConnection c = accepted.poll(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            if (c == null) throw new AssertionError("no connection accepted within " + TIMEOUT);
            return c;
        }

        RdmaConnection jrdmaClient() {
            return RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP).connect().block(TIMEOUT);
        }

        @Override
        public void close() {
            server.disposeNow();
        }
    }

    private static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) b[i] = (byte) (seed + i * 31);
        return b;
    }

    private static byte[] contents(RegisteredBuffer b) {
        return b.segment().asSlice(0, b.capacity()).toArray(ValueLayout.JAVA_BYTE);
    }

    /** A well-behaved client of the same server still writes and reads its own region. */
    private static void assertServed(RdmaConnection good, String what) {
        byte[] text = ("still served after " + what).getBytes(UTF_8);
        StepVerifier.create(good.write(text, good.remoteBuffer(), 128).then(good.read(good.remoteBuffer(), 128, text.length)))
                .expectNextMatches(b -> Arrays.equals(b, text)).expectComplete().verify(TIMEOUT);
    }

    @Test
    void aRawVerbsClientWithAGuessedRkeyAnUnadvertisedRangeOrAClosedRegionGetsRemoteAccessErrorsAndTheServerIsUnaffected()
            throws Exception {
        try (Server server = Server.bind()) {
            RdmaConnection good = server.jrdmaClient();
            RdmaConnection goodAccepted = server.next();
            goodAccepted.exposedBuffer().put(0, pattern(EXPOSED, 1));
            assertServed(good, "nothing");

            record Attempt(String what, SendOpcode opcode, long offset, int rkeyFlip, int length) {}
            for (Attempt a : new Attempt[] {
                    new Attempt("a WRITE with a guessed rkey", SendOpcode.RDMA_WRITE, 0, 0x5a, 64),
                    new Attempt("a READ with a guessed rkey", SendOpcode.RDMA_READ, 0, 0x01, 64),
                    new Attempt("a WRITE straddling the advertised end", SendOpcode.RDMA_WRITE, EXPOSED - 8, 0, 64),
                    new Attempt("a WRITE a page past the advertised end", SendOpcode.RDMA_WRITE, EXPOSED + 4096, 0, 64),
                    new Attempt("a READ before the advertised start", SendOpcode.RDMA_READ, -4096, 0, 64)}) {
                try (RawVerbsPeer hostile = RawVerbsPeer.connect(CLIENT_IP, server.address())) {
                    RdmaConnection victim = server.next();
                    // the refused request closes the victim's connection, and its destroy frees the region unless held
                    // (before: read after the destroy now and then, "buffer used after it was returned to its pool")
                    RegisteredBuffer victimRegion = victim.exposedBuffer();
                    assertTrue(victimRegion.tryRetain(), "the victim's region, held for the check after its connection fails");
                    victimRegion.put(0, pattern(EXPOSED, 7));
                    byte[] goodRegion = contents(goodAccepted.exposedBuffer());
                    RemoteBuffer advertised = hostile.peerExposed();
                    assertEquals(EXPOSED, advertised.length(), "the region the server advertised");

                    WcStatus status = hostile.post(a.opcode, advertised.address() + a.offset, advertised.rkey() ^ a.rkeyFlip, a.length);
                    assertEquals(WcStatus.IBV_WC_REM_ACCESS_ERR, status, a.what);
                    try {
                        assertArrayEquals(pattern(EXPOSED, 7), contents(victimRegion), a.what + ": not a byte of the region changed");
                    } finally {
                        victimRegion.release();
                    }
                    assertArrayEquals(goodRegion, contents(goodAccepted.exposedBuffer()), a.what + ": nor of another client's region");
                    // the server's end of the hostile connection fails (the responder's QP went to ERR), nothing else does
                    StepVerifier.create(victim.receives()).expectErrorSatisfies(e -> {
                        ConnectionException.Closed c = assertInstanceOf(ConnectionException.Closed.class, e);
                        assertFalse(c.isOrderly(), a.what);
                        assertTrue(c.getMessage().contains("refused a request from the peer"), c.getMessage());
                    }).verify(TIMEOUT);
                    StepVerifier.create(victim.onDispose()).expectComplete().verify(TIMEOUT);
                    assertFalse(good.isDisposed() || goodAccepted.isDisposed(), a.what);
                    assertServed(good, a.what);
                }
            }

            // a region the server closed: learned on one connection, used on the next once the first is gone
            RemoteBuffer closedRegion;
            try (RawVerbsPeer first = RawVerbsPeer.connect(CLIENT_IP, server.address())) {
                RdmaConnection firstAccepted = server.next();
                closedRegion = first.peerExposed();
                assertEquals(WcStatus.IBV_WC_SUCCESS, first.post(SendOpcode.RDMA_WRITE, closedRegion.address(), closedRegion.rkey(), 64),
                        "the advertised region is writable while its connection lives");
                firstAccepted.disposeNow(TIMEOUT);  // the server closes it: the region is deregistered and freed
            }
            try (RawVerbsPeer second = RawVerbsPeer.connect(CLIENT_IP, server.address())) {
                RdmaConnection secondAccepted = server.next();
                RegisteredBuffer secondRegion = secondAccepted.exposedBuffer();
                assertTrue(secondRegion.tryRetain(), "the new connection's region, held: the refused WRITE closes its connection");
                secondRegion.put(0, pattern(EXPOSED, 9));
                assertEquals(WcStatus.IBV_WC_REM_ACCESS_ERR, second.post(SendOpcode.RDMA_WRITE, closedRegion.address(), closedRegion.rkey(), 64),
                        "a WRITE into a region the server closed");
                try {
                    assertArrayEquals(pattern(EXPOSED, 9), contents(secondRegion), "the new connection's region (perhaps at the same address) is untouched");
                } finally {
                    secondRegion.release();
                }
                assertServed(good, "a WRITE into a closed region");
            }
            good.disposeNow(TIMEOUT);
        }
    }

    @ParameterizedTest(name = "shared receive queue: {0}")
    @ValueSource(booleans = {false, true})
    void aPeerCannotReadOrWriteTheSendAndReceiveBuffersWhoseAddressAndKeysItLearned(boolean srq) throws Exception {
        try (Server server = Server.bind(srq);
             RawVerbsPeer hostile = RawVerbsPeer.connect(CLIENT_IP, server.address())) {
            RdmaConnection hostileAccepted = server.next();
            RdmaConnection good = server.jrdmaClient();
            RdmaConnection goodAccepted = server.next();
            // the server's receive buffer (a message it holds) and a send buffer of its copy pool, learned in-process
            good.send("a message the server holds").block(TIMEOUT);
            ReceivedMessage held = goodAccepted.receive().block(TIMEOUT);
            RegisteredBuffer receiveBuffer = held.buffer();
            assertEquals(srq, goodAccepted.sharesReceiveQueue());
            RegisteredBuffer sendBuffer = goodAccepted.buffers().tryAcquire();
            sendBuffer.put(0, pattern(64, 3));
            byte[] receiveBefore = receiveBuffer.bytes(0, 64);

            // the raw client's QP is in the server's protection domain: only the registrations' access protects these buffers
            for (RegisteredBuffer b : new RegisteredBuffer[] {receiveBuffer, sendBuffer}) {
                for (int key : new int[] {b.rkey(), b.lkey()}) {
                    for (SendOpcode op : new SendOpcode[] {SendOpcode.RDMA_READ, SendOpcode.RDMA_WRITE}) {
                        RdmaConnection attacked;
                        try (RawVerbsPeer attacker = RawVerbsPeer.connect(CLIENT_IP, server.address())) {
                            attacked = server.next();
                            assertEquals(WcStatus.IBV_WC_REM_ACCESS_ERR, attacker.post(op, b.address(), key, 64),
                                    op + " of " + b + " with key 0x" + Integer.toHexString(key));
                            // with its own receive queue the attacked end sees its receives flush and closes; on an SRQ
                            // nothing flushes, and rxe 6.1 raises no LAST_WQE_REACHED: it closes when the attacker goes
                            if (!srq) StepVerifier.create(attacked.onDispose()).expectComplete().verify(TIMEOUT);
                        }
                        StepVerifier.create(attacked.onDispose()).expectComplete().verify(TIMEOUT);
                    }
                }
            }
            assertArrayEquals(receiveBefore, receiveBuffer.bytes(0, 64), "the receive buffer is as received");
            assertArrayEquals(pattern(64, 3), sendBuffer.bytes(0, 64), "the send buffer is as written");
            assertEquals("a message the server holds", held.text());
            held.release();
            sendBuffer.release();
            assertFalse(hostileAccepted.isDisposed(), "the first raw connection was not touched by the others' failures");
            assertServed(good, "the attacks on its buffers");
            good.disposeNow(TIMEOUT);
        }
    }

    @Test
    void aReadIntoMemoryThePeerDeregisteredAsItWentAwayNamesBothTheStatusAndTheDeparture() throws Exception {
        CompletableFuture<Integer> port = new CompletableFuture<>();
        CompletableFuture<RawVerbsPeer> accepted = RawVerbsPeer.serveOne(SERVER_IP, EXPOSED, port);
        RdmaConnection client = RdmaClient.create().host(SERVER_IP).port(port.get(20, TimeUnit.SECONDS)).localAddress(CLIENT_IP)
                .connect().block(TIMEOUT);
        try (RawVerbsPeer dying = accepted.get(20, TimeUnit.SECONDS)) {
            Mono<WorkCompletion> firstError = client.completions().filter(wc -> !wc.isSuccess()).next().cache();
            firstError.subscribe(wc -> { }, e -> { });
            Mono<Throwable> ended = readStream(client);
            // what the kernel does for a process that exits: its memory goes first, then its connection (here once
            // this side has taken the READ's error, so the departure surely comes after it)
            dying.deregister();
            WorkCompletion refused = firstError.block(TIMEOUT);
            assertEquals(WcStatus.IBV_WC_REM_ACCESS_ERR, refused.status());
            dying.disconnect();
            Throwable e = ended.block(TIMEOUT);
            RemoteAccessException r = assertInstanceOf(RemoteAccessException.class, e, () -> LabPeers.describe(e));
            assertEquals(WcOpcode.RDMA_READ, r.opcode());
            assertTrue(r.getMessage().contains("the peer disconnected"), r.getMessage());
            ConnectionException.Closed departure = assertInstanceOf(ConnectionException.Closed.class, r.getCause());
            assertTrue(departure.getMessage().endsWith("the peer disconnected"), departure.getMessage());
            System.out.println("a READ into memory deregistered by a departing peer: " + r.getMessage());
            // the error closed the connection: not an orderly end
            StepVerifier.create(client.receives()).expectError(ConnectionException.Closed.class).verify(TIMEOUT);
        }
    }

    @Test
    void aReadIntoMemoryThePeerDeregisteredWhileItStaysConnectedSaysSoAndClosesTheConnection() throws Exception {
        CompletableFuture<Integer> port = new CompletableFuture<>();
        CompletableFuture<RawVerbsPeer> accepted = RawVerbsPeer.serveOne(SERVER_IP, EXPOSED, port);
        RdmaConnection client = RdmaClient.create().host(SERVER_IP).port(port.get(20, TimeUnit.SECONDS)).localAddress(CLIENT_IP)
                .connect().block(TIMEOUT);
        try (RawVerbsPeer peer = accepted.get(20, TimeUnit.SECONDS)) {
            Mono<Throwable> ended = readStream(client);
            peer.deregister();
            Throwable e = ended.block(TIMEOUT);
            RemoteAccessException r = assertInstanceOf(RemoteAccessException.class, e, () -> LabPeers.describe(e));
            assertTrue(r.getMessage().contains("a region the peer deregistered"), r.getMessage());
            assertFalse(r.getMessage().contains("meanwhile"), "nothing else happened: " + r.getMessage());
            StepVerifier.create(client.onDispose()).expectComplete().verify(TIMEOUT);
        }
    }

    /** READs of the peer's region, 8 in flight, until one fails: that failure. */
    private static Mono<Throwable> readStream(RdmaConnection c) {
        RemoteBuffer remote = c.remoteBuffer();
        Mono<Throwable> ended = Flux.range(0, Integer.MAX_VALUE)
                .flatMap(i -> c.read(remote, (long) (i % 64) * 1024, 1024), 8)
                .then(Mono.<Throwable>error(new AssertionError("the READs completed")))
                .onErrorResume(Mono::just)
                .cache();
        ended.subscribe();
        LabPeers.await(() -> c.availableSendCredits() < c.config().sendQueueDepth(), "READs in flight");
        RawVerbsPeer.sleep(200);
        return ended;
    }
}
