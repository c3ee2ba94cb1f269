package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.internal.core.Credits;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.ScatterGatherElement;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * Receiver credits between two jrdma sides (docs/credit-protocol.md), against rxe: a consumer that
 * falls behind, or stops, slows the producer on the other host through {@code send(Publisher)},
 * and no SEND ever meets an empty receive queue: rxe's RNR counters do not move.
 */
@Tag("device")
@Timeout(value = 240, threadMode = ThreadMode.SEPARATE_THREAD)
class ReceiverCreditsTest {
    private static final int WINDOW = 8;
    /** CI-sized; lab/streams runs them longer (-Djrdma.streams.messages, -Djrdma.streams.pauseSeconds). */
    private static final int MESSAGES = Integer.getInteger("jrdma.streams.messages", 3_000);
    private static final int PAUSE_SECONDS = Integer.getInteger("jrdma.streams.pauseSeconds", 6);
    /** One message in this many of the slow consumer's stream is larger than the 4 KiB receive buffers (up to 256 KiB): a rendezvous. */
    private static final int LARGE_EVERY = Integer.getInteger("jrdma.streams.largeEvery", 8);

    /** The size of the slow consumer's message {@code i}: 1 byte to almost 4 KiB, and every {@link #LARGE_EVERY}th 4 KiB + 1 to 256 KiB. */
    static int streamSize(int i) {
        return i % LARGE_EVERY == LARGE_EVERY - 1 ? 4097 + (int) ((i * 104_729L) % ((256 << 10) - 4096)) : 1 + (i * 7919) % 4000;
    }

    /** rxe's count of RNR NAKs each device sent plus those it received, both devices: any RNR anywhere moves it. */
    static long rnrNaks() {
        long sum = 0;
        for (String device : List.of("rxe0", "rxe1")) {
            for (String counter : List.of("send_rnr_err", "rcvd_rnr_err")) {
                Path p = Path.of("/sys/class/infiniband", device, "ports/1/hw_counters", counter);
                try {
                    sum += Long.parseLong(Files.readString(p).trim());
                } catch (IOException e) {
                    throw new AssertionError("cannot read " + p + ": this test needs rxe's hardware counters", e);
                }
            }
        }
        return sum;
    }

    /** Message {@code i}: 8 bytes of its number, then bytes derived from it, up to {@code size}. */
    static byte[] message(int i, int size) {
        ByteBuffer b = ByteBuffer.allocate(Math.max(8, size));
        b.putInt(i).putInt(size);
        while (b.hasRemaining()) b.put((byte) (i * 31 + b.position()));
        return b.array();
    }

    static long checksum(byte[] bytes) {
        CRC32C c = new CRC32C();
        c.update(bytes);
        return c.getValue();
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aConsumerThatTakesOneAtATimeGetsEveryMessageInOrderAndNoSendMeetsAnEmptyQueue(Transport transport) {
        int count = MESSAGES;
        try (LabPeers p = LabPeers.connect(transport, RdmaServer.create().queueDepth(16, WINDOW), RdmaClient.create().queueDepth(32, WINDOW))) {
            assertEquals(WINDOW, p.client.peerCredits(), "the server granted its window");
            assertEquals(WINDOW + Credits.RECEIVES_RESERVED, p.accepted.receivesPosted(), "and posted four more, for grants and large-message DONEs");
            long rnrBefore = rnrNaks();
            AtomicInteger maxHeld = new AtomicInteger();
            AtomicInteger held = new AtomicInteger();
            AtomicLong sent = new AtomicLong(), received = new AtomicLong();
            Mono<Void> producer = p.client.sendByteArray(Flux.range(0, count).map(i -> {
                byte[] m = message(i, streamSize(i));
                sent.addAndGet(checksum(m));
                return m;
            }));
            Mono<Long> consumer = p.accepted.receives().limitRate(1).concatMap(m -> {
                maxHeld.accumulateAndGet(held.incrementAndGet(), Math::max);
                byte[] bytes = m.bytes();
                int number = ByteBuffer.wrap(bytes).getInt();
                received.addAndGet(checksum(bytes));
                // a slow consumer: every hundredth message waits a little before it lets go
                Mono<Integer> next = number % 100 == 0 ? Mono.delay(Duration.ofMillis(20)).thenReturn(number) : Mono.just(number);
                return next.doFinally(s -> {
                    held.decrementAndGet();
                    m.release();
                });
            }, 0).take(count).index().filter(t -> t.getT1().intValue() == t.getT2()).count();
            StepVerifier.create(Mono.zip(producer.thenReturn(true), consumer))
                    .assertNext(t -> assertEquals(count, t.getT2(), "every message arrived in its place"))
                    .expectComplete().verify(Duration.ofSeconds(60).plusMillis(count * 40L));
            assertEquals(sent.get(), received.get(), "every message once, checksummed");
            assertTrue(maxHeld.get() <= WINDOW, "the consumer never held more than the window: " + maxHeld.get());
            assertEquals(0, rnrNaks() - rnrBefore, "no RNR NAK on either device");
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void aConsumerThatStopsStopsTheProducerWithoutAnyOperationTimingOut(Transport transport) {
        Duration operationTimeout = Duration.ofSeconds(2);
        RdmaServer server = RdmaServer.create().queueDepth(16, WINDOW);
        RdmaClient client = RdmaClient.create().queueDepth(32, WINDOW).operationTimeout(operationTimeout);
        try (LabPeers p = LabPeers.connect(transport, server, client)) {
            long rnrBefore = rnrNaks();
            AtomicLong requested = new AtomicLong();
            List<Object> outcome = new ArrayList<>();
            p.client.sendByteArray(Flux.range(0, 100).doOnRequest(requested::addAndGet).map(i -> message(i, 64)))
                    .subscribe(v -> { }, outcome::add, () -> outcome.add("done"));
            LabPeers.await(() -> p.client.peerCredits() == 0 && p.client.availableSendCredits() == 32, "the window sent and completed");
            long asked = requested.get();
            // concatMap (sendByteArray's copy step) asks for one element ahead of the stream's demand
            assertTrue(asked == WINDOW || asked == WINDOW + 1, "requested " + asked + " for a window of " + WINDOW);
            // the consumer takes nothing for longer than three operation timeouts: the producer is asked for nothing more
            Mono.delay(Duration.ofSeconds(Math.max(PAUSE_SECONDS, 3 * operationTimeout.toSeconds()))).block();
            assertEquals(asked, requested.get(), "no element requested beyond the peer's receives");
            assertEquals(List.of(), outcome, "and nothing failed: no operation waited for a credit");
            assertEquals(0, p.client.peerCredits());

            List<ReceivedMessage> all = p.accepted.receives().take(100).doOnNext(ReceivedMessage::release).collectList().block(TIMEOUT);
            assertEquals(100, all.size());
            LabPeers.await(() -> outcome.equals(List.of("done")), "the stream completes");
            assertEquals(0, rnrNaks() - rnrBefore, "no RNR NAK on either device");
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void sixtyFourClientsStreamIntoASharedReceiveQueueSmallerThanTheirWindowsWithoutRnrOrLoss(Transport transport) {
        // the queue's maximum: each connection keeps 4 receives in reserve (grants, large-message DONEs) and needs 1 to start
        int clients = 64, each = 40, window = 8, depth = 64, max = 6 * depth;
        RdmaResources resources = RdmaResources.create("credits-srq-" + transport, 1);
        RdmaResources clientResources = RdmaResources.create("credits-srq-clients-" + transport, 1);
        DisposableRdmaServer server = RdmaServer.create().runOn(resources).host(SERVER_IP).port(0).transport(transport)
                .queueDepth(8, window).buffers(256, 4).sharedReceiveQueue(depth, max)
                // the server's connect timeout too: its timer counts from each accept, and its 64 setups take turns on one
                // thread; near 10 s on the emulated CPU (CI runs of 10.1 to 11.8 s)
                .connectTimeout(Duration.ofSeconds(60)).bind().block(TIMEOUT);
        AtomicLong received = new AtomicLong();
        List<RdmaConnection> accepted = java.util.Collections.synchronizedList(new ArrayList<>());
        server.connections().subscribe(c -> {
            accepted.add(c);
            c.receives().limitRate(2).subscribe(m -> {
                received.incrementAndGet();
                m.release();
            }, e -> { });
        });
        List<RdmaConnection> connected = new ArrayList<>();
        try {
            long rnrBefore = rnrNaks();
            // the clients on resources of their own, and a connect timeout for 64 at once on an emulated CPU: this is no connect test
            RdmaClient client = RdmaClient.create().runOn(clientResources).host(SERVER_IP).port(server.address().getPort())
                    .localAddress(CLIENT_IP).transport(transport).queueDepth(each, 4).buffers(256, 8).connectTimeout(Duration.ofSeconds(60));
            connected.addAll(Flux.range(0, clients).flatMap(i -> client.connect(), clients).collectList().block(Duration.ofMinutes(2)));
            AtomicInteger[] sent = new AtomicInteger[clients];
            for (int i = 0; i < clients; i++) sent[i] = new AtomicInteger();
            try {
                Flux.range(0, clients).flatMap(k -> connected.get(k)
                                .sendByteArray(Flux.range(0, each).map(i -> message(i, 200)).doOnNext(b -> sent[k].incrementAndGet())), clients)
                        .then().block(Duration.ofMinutes(2));
            } catch (IllegalStateException e) {  // block's timeout: which stream stalled, and where its credits stand
                StringBuilder dump = new StringBuilder("the streams did not finish; received " + received.get() + " of " + clients * each);
                for (int k = 0; k < clients; k++) {
                    if (sent[k].get() < each) dump.append("\n client ").append(k).append(": sent ").append(sent[k]).append(", ").append(creditState(connected.get(k)));
                }
                synchronized (accepted) {
                    for (RdmaConnection c : accepted) dump.append("\n server side: ").append(creditState(c));
                }
                throw new AssertionError(dump.toString(), e);
            }
            LabPeers.await(() -> received.get() == (long) clients * each, "every message received: " + received.get());
            assertTrue(server.sharedReceiveQueues().getFirst().buffers() <= max, "within the queue's maximum");
            assertEquals(0, rnrNaks() - rnrBefore, "no RNR NAK although " + clients + " x " + window + " > " + max);
        } finally {
            Flux.fromIterable(connected).flatMap(RdmaConnection::close).then().block(TIMEOUT);
            server.disposeNow();
            clientResources.disposeNow();
            resources.disposeNow();
        }
    }

    @org.junit.jupiter.api.Test
    void aRawVerbsPeerThatSendsBeyondItsCreditsGetsAProtocolErrorAndTheServerServesOthers() {
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0).queueDepth(4, 2).bind().block(TIMEOUT);
        Mono<RdmaConnection> rawSide = server.connections().next().cache();
        rawSide.subscribe();
        try (RawVerbsPeer raw = RawVerbsPeer.connect(CLIENT_IP, server.address(), true)) {
            RdmaConnection accepted = rawSide.block(TIMEOUT);
            for (int i = 0; i < 3; i++) {  // granted 2: the third lands in a receive kept for grants
                assertEquals(io.jrdma.ffm.WcStatus.IBV_WC_SUCCESS, raw.post(io.jrdma.ffm.SendOpcode.SEND, 0, 0, 8), "SEND " + i);
            }
            StepVerifier.create(accepted.receives().doOnNext(ReceivedMessage::release).then()).expectErrorSatisfies(e -> {
                Throwable cause = e;
                while (cause != null && !(cause instanceof io.jrdma.reactive.ConnectionException.Protocol)) cause = cause.getCause();
                assertTrue(cause != null, "a protocol error closed it: " + e);
                assertTrue(cause.getMessage().contains("without a credit"), cause.getMessage());
            }).verify(TIMEOUT);

            RdmaConnection good = RdmaClient.create().host(SERVER_IP).port(server.address().getPort()).localAddress(CLIENT_IP)
                    .connect().block(TIMEOUT);
            StepVerifier.create(good.send("still served")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            good.disposeNow(TIMEOUT);
        } finally {
            server.disposeNow();
        }
    }

    private static String creditState(RdmaConnection c) {
        try {
            var core = io.jrdma.reactive.internal.core.FaultInjection.core(c);
            var f = core.getClass().getDeclaredField("credits");
            f.setAccessible(true);
            Object link = f.get(core);
            return String.valueOf(link);
        } catch (ReflectiveOperationException e) {
            return e.toString();
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void zeroCopyStreamsReleaseEveryBufferAfterItsSend(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport, RdmaServer.create().queueDepth(16, WINDOW), RdmaClient.create())) {
            Mono<Void> producer = p.client.send(Flux.range(0, 200)
                    .concatMap(i -> p.client.buffers().acquire().map(b -> ScatterGatherElement.of(b.put(0, message(i, 100)), 0, 100))));
            long rnrBefore = rnrNaks();
            AtomicInteger got = new AtomicInteger();
            Mono<Long> consumer = p.accepted.receives().take(200).doOnNext(m -> {
                got.incrementAndGet();
                m.release();
            }).count();
            try {
                StepVerifier.create(Mono.zip(producer.thenReturn(true), consumer)).assertNext(t -> assertEquals(200, t.getT2()))
                        .expectComplete().verify(TIMEOUT);
            } catch (AssertionError e) {
                System.err.println("DIAG client " + creditState(p.client) + " server " + creditState(p.accepted) + " rnr " + (rnrNaks() - rnrBefore));
                throw new AssertionError(String.format("%s; received %d, client: credits %d, waiting %d, send slots %d, posted %d;"
                        + " server: credits %d, waiting %d, send slots %d, posted %d", e.getMessage(), got.get(), p.client.peerCredits(),
                        p.client.postsWaitingForCredit(), p.client.availableSendCredits(), p.client.receivesPosted(),
                        p.accepted.peerCredits(), p.accepted.postsWaitingForCredit(), p.accepted.availableSendCredits(),
                        p.accepted.receivesPosted()), e);
            }
            LabPeers.await(() -> p.client.buffers().available() == p.client.buffers().capacity(), "every pooled buffer back");
        }
    }
}
