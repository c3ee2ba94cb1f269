package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.MessageTooLargeException;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.ScatterGatherElement;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Messages larger than the receive buffers between two jrdma sides (docs/credit-protocol.md,
 * "Large messages"), against rxe: the receiver reads each by RDMA READ and delivers every message
 * once, in order, as one {@link ReceivedMessage}; one over its {@code maxMessageSize} fails alone;
 * a rendezvous whose source is gone closes the connection with a typed error and leaves nothing
 * registered behind.
 */
@Tag("device")
@Timeout(value = 240, threadMode = ThreadMode.SEPARATE_THREAD)
class LargeMessageTest {
    private static final int MESSAGES = Integer.getInteger("jrdma.large.messages", 200);
    private static final int MAX = 256 << 10;

    /** Message {@code i} of {@code size} bytes: its number, its size, then bytes derived from both. */
    static byte[] message(int i, int size) {
        ByteBuffer b = ByteBuffer.allocate(Math.max(8, size));
        b.putInt(i).putInt(size);
        while (b.hasRemaining()) b.put((byte) (i * 31 + b.position() * 7));
        return b.array();
    }

    /** Sizes from 1 byte to 256 KiB: half of them fit a 4 KiB receive buffer, half go by rendezvous. */
    static int size(Random random) {
        return random.nextBoolean() ? 1 + random.nextInt(4096) : 4097 + random.nextInt(MAX - 4096);
    }

    static long checksum(byte[] bytes) {
        CRC32C c = new CRC32C();
        c.update(bytes);
        return c.getValue();
    }

    /** Receives {@code count} messages, checks each is the next one, and returns the sum of their checksums. */
    static Mono<Long> consume(RdmaConnection c, int count) {
        AtomicInteger next = new AtomicInteger();
        AtomicLong sum = new AtomicLong();
        return c.receives().take(count).doOnNext(m -> {
            try {
                byte[] bytes = m.bytes();
                int number = bytes.length >= 8 ? ByteBuffer.wrap(bytes).getInt() : -1;
                if (number != next.getAndIncrement()) throw new AssertionError("message " + number + " where " + (next.get() - 1) + " belongs");
                sum.addAndGet(checksum(bytes));
            } finally {
                m.release();
            }
        }).then(Mono.fromSupplier(sum::get));
    }

    private static void streamRandomSizes(LabPeers p, long seed) {
        Random random = new Random(seed);
        int[] sizes = new int[MESSAGES];
        for (int i = 0; i < sizes.length; i++) sizes[i] = Math.max(8, size(random));
        AtomicLong sent = new AtomicLong();
        long rnrBefore = ReceiverCreditsTest.rnrNaks();
        Mono<Void> producer = p.client.sendByteArray(Flux.range(0, MESSAGES).map(i -> {
            byte[] m = message(i, sizes[i]);
            sent.addAndGet(checksum(m));
            return m;
        }));
        try {
            StepVerifier.create(Mono.zip(producer.thenReturn(true), consume(p.accepted, MESSAGES)))
                    .assertNext(t -> assertEquals(sent.get(), t.getT2(), "every message once, in order, checksummed"))
                    .expectComplete().verify(Duration.ofMinutes(3));
        } catch (AssertionError e) {
            throw diagnosed(e, p.client, p.accepted, rnrBefore);
        }
        assertEquals(0, ReceiverCreditsTest.rnrNaks() - rnrBefore, "no RNR NAK on either device");
    }

    private static Map<String, Long> countersBefore = Map.of();

    @BeforeEach
    void countersNow() {
        countersBefore = LabNetwork.rxeCounters();
    }

    /** {@code e} with both sides' credits and large messages as they stand, and the RNR NAKs since {@code rnrBefore}. */
    static AssertionError diagnosed(AssertionError e, RdmaConnection client, RdmaConnection server, long rnrBefore) {
        Map<String, Long> moved = LabNetwork.rxeCountersMoved(countersBefore);
        return new AssertionError(String.format("%s;%n client: %s, send slots %d, waiting %d;%n server: %s, posted %d;%n RNR NAKs %d,"
                        + " rxe counters moved: %s",
                e.getMessage(), io.jrdma.reactive.internal.core.FaultInjection.core(client).creditState(), client.availableSendCredits(),
                client.postsWaitingForCredit(), io.jrdma.reactive.internal.core.FaultInjection.core(server).creditState(),
                server.receivesPosted(), ReceiverCreditsTest.rnrNaks() - rnrBefore, moved), e);
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void randomSizesUpTo256KiBArriveOnceInOrderAsOneMessageEach(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport, RdmaServer.create().queueDepth(16, 8), RdmaClient.create().queueDepth(16, 8))) {
            assertEquals(4096, p.client.config().bufferSize(), "4 KiB receive buffers: every larger message is a rendezvous");
            streamRandomSizes(p, 24);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void randomSizesIntoASharedReceiveQueueArriveOnceInOrder(Transport transport) {
        RdmaResources resources = RdmaResources.create("large-srq-" + transport, 1);
        DisposableRdmaServer server = RdmaServer.create().runOn(resources).host(SERVER_IP).port(0).transport(transport)
                .queueDepth(16, 8).sharedReceiveQueue(32, 64).bind().block(TIMEOUT);
        Mono<RdmaConnection> accepted = server.connections().next().cache();
        accepted.subscribe();
        RdmaConnection client = RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP)
                .transport(transport).queueDepth(16, 8).connect().block(TIMEOUT);
        RdmaConnection a = accepted.block(TIMEOUT);
        try {
            assertTrue(a.sharesReceiveQueue());
            AtomicLong sent = new AtomicLong();
            Random random = new Random(7);
            Mono<Void> producer = client.sendByteArray(Flux.range(0, MESSAGES).map(i -> {
                byte[] m = message(i, Math.max(8, size(random)));
                sent.addAndGet(checksum(m));
                return m;
            }));
            long rnrBefore = ReceiverCreditsTest.rnrNaks();
            try {
                StepVerifier.create(Mono.zip(producer.thenReturn(true), consume(a, MESSAGES)))
                        .assertNext(t -> assertEquals(sent.get(), t.getT2(), "every message once, in order, checksummed"))
                        .expectComplete().verify(Duration.ofMinutes(3));
            } catch (AssertionError e) {
                throw diagnosed(e, client, a, rnrBefore);
            }
        } finally {
            client.disposeNow(TIMEOUT);
            a.disposeNow(TIMEOUT);
            server.disposeNow();
            resources.disposeNow();
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aRegisteredSourceTheServerMayReadIsReadWhereItIsAndReleasedOnceRead(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport, RdmaServer.create().queueDepth(16, 8), RdmaClient.create().queueDepth(16, 8))) {
            BufferPool pool = p.client.domain().createPool(MAX, 4, Access.LOCAL_WRITE, Access.REMOTE_READ);
            try {
                int count = 40;
                Random random = new Random(11);
                AtomicLong sent = new AtomicLong();
                Flux<ScatterGatherElement> elements = Flux.range(0, count).concatMap(i -> pool.acquire().map(b -> {
                    byte[] m = message(i, Math.max(8, size(random)));
                    sent.addAndGet(checksum(m));
                    return ScatterGatherElement.of(b.put(0, m), 0, m.length);
                }), 0);
                long rnrBefore = ReceiverCreditsTest.rnrNaks();
                try {
                    StepVerifier.create(Mono.zip(p.client.send(elements).thenReturn(true), consume(p.accepted, count)))
                            .assertNext(t -> assertEquals(sent.get(), t.getT2(), "every message once, in order, checksummed"))
                            .expectComplete().verify(Duration.ofMinutes(2));
                } catch (AssertionError e) {
                    throw diagnosed(e, p.client, p.accepted, rnrBefore);
                }
                LabPeers.await(() -> pool.available() == pool.capacity(), "every source back in its pool once read");
            } finally {
                pool.close();
            }
        }
    }

    /**
     * Bytes outside registered memory (a direct {@code ByteBuffer}, as Netty's are) copied once into
     * {@link RdmaConnection#largeMessageBuffer}: the source is reused as soon as the copy returned,
     * the peer reads the copy where it is, and once a size class was used nothing more is
     * registered, on either side, however many messages follow.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void largeMessageBuffersAreRegisteredOncePerSizeClassAndReused(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport, RdmaServer.create().queueDepth(16, 8), RdmaClient.create().queueDepth(16, 8))) {
            assertThrows(IllegalArgumentException.class, () -> p.client.largeMessageBuffer(0));
            sendThroughLargeMessageBuffers(p, 4);  // registers the size class on both sides
            long clientRegistered = p.client.domain().registeredBytes(), serverRegistered = p.accepted.domain().registeredBytes();
            sendThroughLargeMessageBuffers(p, 60);
            assertEquals(clientRegistered, p.client.domain().registeredBytes(), "nothing more registered by the sender");
            assertEquals(serverRegistered, p.accepted.domain().registeredBytes(), "nothing more registered by the receiver");
        }
    }

    private static void sendThroughLargeMessageBuffers(LabPeers p, int count) {
        int size = 100_000;  // one size class (128 KiB), above the 4 KiB receive buffers
        ByteBuffer source = ByteBuffer.allocateDirect(size);
        AtomicLong sent = new AtomicLong();
        Flux<ScatterGatherElement> elements = Flux.range(0, count).concatMap(i -> p.client.largeMessageBuffer(size).map(b -> {
            byte[] m = message(i, size);
            sent.addAndGet(checksum(m));
            source.clear().put(m).flip();
            b.segment().asSlice(0, size).asByteBuffer().put(source);  // the one copy: the source is free from here
            return ScatterGatherElement.of(b, 0, size);
        }), 0);
        long rnrBefore = ReceiverCreditsTest.rnrNaks();
        try {
            StepVerifier.create(Mono.zip(p.client.send(elements).thenReturn(true), consume(p.accepted, count)))
                    .assertNext(t -> assertEquals(sent.get(), t.getT2(), "every message once, in order, checksummed"))
                    .expectComplete().verify(Duration.ofMinutes(2));
        } catch (AssertionError e) {
            throw diagnosed(e, p.client, p.accepted, rnrBefore);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aMessageOverTheReceiversMaxMessageSizeFailsAloneAndTheConnectionGoesOn(Transport transport) {
        RdmaServer server = RdmaServer.create().queueDepth(16, 8).maxMessageSize(64 << 10);
        try (LabPeers p = LabPeers.connect(transport, server, RdmaClient.create().queueDepth(16, 8))) {
            StepVerifier.create(p.client.sendByteArray(Flux.just(message(0, 100_000))))
                    .expectErrorSatisfies(e -> {
                        MessageTooLargeException tooLarge = assertInstanceOf(MessageTooLargeException.class, e, LabPeers.describe(e));
                        assertEquals(100_000, tooLarge.length());
                    })
                    .verify(TIMEOUT);
            byte[] small = message(0, 100), large = message(1, 60_000);
            StepVerifier.create(Mono.zip(p.client.sendByteArray(Flux.just(small, large)).thenReturn(true), consume(p.accepted, 2)))
                    .assertNext(t -> assertEquals(checksum(small) + checksum(large), t.getT2(), "the connection went on"))
                    .expectComplete().verify(TIMEOUT);
            assertTrue(!p.client.isDisposed() && !p.accepted.isDisposed());
        }
    }

    /** A rendezvous whose source was deregistered before the READ: the READ fails, the connection closes with its error, nothing stays registered. */
    @Test
    void aReadOfASourceAlreadyReleasedClosesTheConnectionWithATypedErrorAndLeaksNothing() {
        Map<String, String> before = DeviceResources.held();
        RdmaResources resources = RdmaResources.create("large-released", 1);
        DisposableRdmaServer server = RdmaServer.create().runOn(resources).host(SERVER_IP).port(0).queueDepth(8, 4).bind().block(TIMEOUT);
        Mono<RdmaConnection> accepted = server.connections().next().cache();
        accepted.subscribe();
        try (RawVerbsPeer raw = RawVerbsPeer.connect(CLIENT_IP, server.address(), true, true, 64 << 10)) {
            RdmaConnection a = accepted.block(TIMEOUT);
            long address = raw.region().address();
            int rkey = raw.region().rkey();
            raw.deregister();  // released before the peer reads it
            assertEquals(WcStatus.IBV_WC_SUCCESS, raw.sendRendezvous(0, address, rkey, 60_000));
            AtomicReference<Throwable> error = new AtomicReference<>();
            StepVerifier.create(a.receives()).expectErrorSatisfies(error::set).verify(TIMEOUT);
            ConnectionException.Closed closed = assertInstanceOf(ConnectionException.Closed.class, error.get(), LabPeers.describe(error.get()));
            RdmaOperationException read = findCause(closed, RdmaOperationException.class);
            assertNotNull(read, "the READ's error is the cause: " + LabPeers.describe(closed));
            a.onDispose().block(TIMEOUT);
        } finally {
            server.disposeNow();
            resources.disposeNow();
        }
        DeviceResources.awaitNoneNewSince(before, TIMEOUT);
    }

    /** A raw sender that goes away (QP, memory, id) while its message is being read: the receiver closes, delivers nothing torn, leaks nothing. */
    @Test
    void aSenderThatDiesMidReadLeavesTheReceiverClosedAndNothingRegistered() {
        Map<String, String> before = DeviceResources.held();
        RdmaResources resources = RdmaResources.create("large-dies", 1);
        DisposableRdmaServer server = RdmaServer.create().runOn(resources).host(SERVER_IP).port(0).queueDepth(8, 4)
                .maxMessageSize(32 << 20).bind().block(TIMEOUT);
        Mono<RdmaConnection> accepted = server.connections().next().cache();
        accepted.subscribe();
        int length = 16 << 20;
        try {
            RdmaConnection a;
            try (RawVerbsPeer raw = RawVerbsPeer.connect(CLIENT_IP, server.address(), true, true, length)) {
                a = accepted.block(TIMEOUT);
                assertEquals(WcStatus.IBV_WC_SUCCESS, raw.sendRendezvous(0, raw.region().address(), raw.region().rkey(), length));
            }  // gone: QP, memory and id, in the middle of a 16 MiB READ
            AtomicInteger whole = new AtomicInteger(), torn = new AtomicInteger();
            a.receives().doOnNext(m -> {
                (m.length() == length ? whole : torn).incrementAndGet();  // the READ may have finished first: then it is whole
                m.release();
            }).onErrorResume(e -> Mono.empty()).blockLast(Duration.ofSeconds(60));
            assertTrue(a.isDisposed(), "the receiver's connection closed");
            assertEquals(0, torn.get(), "nothing torn delivered");
            assertTrue(whole.get() <= 1, "at most the one message, whole");
        } finally {
            server.disposeNow();
            resources.disposeNow();
        }
        DeviceResources.awaitNoneNewSince(before, Duration.ofSeconds(40));
    }

    /** A jrdma sender closed while its large message is read: its send fails with the closure, both sides close, nothing stays registered. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aSenderClosedWhileItsMessageIsReadFailsItsSendAndLeavesNothingRegistered(Transport transport) {
        Map<String, String> before = DeviceResources.held();
        RdmaResources resources = RdmaResources.create("large-close-" + transport, 1);
        RdmaServer server = RdmaServer.create().runOn(resources).queueDepth(8, 4).maxMessageSize(32 << 20);
        RdmaClient client = RdmaClient.create().runOn(resources).queueDepth(8, 4);
        try (LabPeers p = LabPeers.connect(transport, server, client)) {
            Mono<Void> send = LabPeers.subscribed(p.client.sendByteArray(Flux.just(new byte[16 << 20])));
            AtomicInteger whole = new AtomicInteger();
            p.accepted.receives().subscribe(m -> {
                whole.incrementAndGet();
                m.release();
            }, e -> { });
            Mono.delay(Duration.ofMillis(50)).block();
            p.client.disposeNow(TIMEOUT);
            AtomicReference<Throwable> error = new AtomicReference<>();
            send.onErrorResume(e -> {
                error.set(e);
                return Mono.empty();
            }).block(TIMEOUT);
            if (error.get() != null) {
                assertInstanceOf(ConnectionException.Closed.class, error.get(), LabPeers.describe(error.get()));
            } else {
                assertEquals(1, whole.get(), "a send that completed was read whole");
            }
            p.accepted.onDispose().block(TIMEOUT);
        } finally {
            resources.disposeNow();
        }
        DeviceResources.awaitNoneNewSince(before, Duration.ofSeconds(40));
    }

    private static <T extends Throwable> T findCause(Throwable e, Class<T> type) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (type.isInstance(t)) return type.cast(t);
            if (t.getCause() == t) break;
        }
        return null;
    }
}
