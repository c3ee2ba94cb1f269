package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.SharedReceiveQueueStats;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.ReceivedMessage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A server whose connections all receive into one shared receive queue: receive memory is the
 * SRQ's, not a pool per client; when the application holds messages and the SRQ runs low, the
 * device's limit event makes it grow, so the senders do not meet a storm of RNR NAKs.
 */
@Tag("device")
@Timeout(value = 300, threadMode = ThreadMode.SEPARATE_THREAD)
class SharedReceiveQueueTest {
    private static final int CLIENTS = 64;
    /** 64 connects at once on an emulated CPU, both sides' setups on one resources' threads: this is no connect test. */
    private static final Duration SETUP = Duration.ofSeconds(60);
    private static final int DEPTH = 32;
    private static final int MESSAGES_EACH = 2;
    private static final Duration LONG = Duration.ofMinutes(2);

    /** rxe's count of RNR NAKs its responder sent (receives that found the queue empty). */
    private static long rnrNaksSent(String device) {
        Path counter = Path.of("/sys/class/infiniband", device, "ports/1/hw_counters/send_rnr_err");
        try {
            return Long.parseLong(Files.readString(counter).trim());
        } catch (IOException e) {
            throw new AssertionError("cannot read " + counter + ": this test needs rxe's hardware counters", e);
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void sixtyFourClientsShareOneReceiveQueueThatGrowsOnItsLimitEvent(Transport transport) {
        RdmaResources resources = RdmaResources.create("srq-" + transport, 2);
        DisposableRdmaServer server = RdmaServer.create().runOn(resources).host(SERVER_IP).port(0).transport(transport)
                .queueDepth(4, MESSAGES_EACH).buffers(128, 4).sharedReceiveQueue(DEPTH, 8 * DEPTH)
                .receiverCredits(false)  // the queue's own growth under RNR; ReceiverCreditsTest has it with credits
                .connectTimeout(SETUP).bind().block(TIMEOUT);
        Mono<List<RdmaConnection>> accepted = server.connections().take(CLIENTS).collectList().cache();
        accepted.subscribe();
        List<RdmaConnection> clients = new ArrayList<>();
        try {
            RdmaClient client = RdmaClient.create().runOn(resources).host(SERVER_IP).port(server.address().getPort())
                    .localAddress(CLIENT_IP).transport(transport).queueDepth(MESSAGES_EACH, 1).buffers(128, MESSAGES_EACH)
                    .connectTimeout(SETUP);
            clients.addAll(Flux.range(0, CLIENTS).flatMap(i -> client.connect(), CLIENTS).collectList().block(LONG));
            List<RdmaConnection> serverSide = accepted.block(LONG);
            assertTrue(serverSide.stream().allMatch(RdmaConnection::sharesReceiveQueue));
            assertTrue(serverSide.stream().allMatch(c -> c.receivesPosted() == 0), "no connection posts receives of its own");
            SharedReceiveQueueStats before = server.sharedReceiveQueues().getFirst();
            assertEquals(DEPTH, before.buffers(), "receive memory is the SRQ's depth, whatever the number of clients");
            assertEquals(DEPTH, before.posted());
            long rnrBefore = rnrNaksSent(before.device());

            // the application holds every message until all have come: 128 messages for 32 posted buffers
            Map<RdmaConnection, List<ReceivedMessage>> held = new ConcurrentHashMap<>();
            Mono<Void> receiving = Flux.fromIterable(serverSide)
                    .flatMap(c -> c.receives().take(MESSAGES_EACH).doOnNext(m -> held.computeIfAbsent(c, k -> new ArrayList<>()).add(m)),
                            CLIENTS)
                    .then().cache();
            receiving.subscribe(v -> { }, e -> { });
            Flux.range(0, CLIENTS).flatMap(i -> Flux.range(0, MESSAGES_EACH)
                    .concatMap(seq -> clients.get(i).send(ByteBuffer.allocate(8).putInt(i).putInt(seq).array())), CLIENTS)
                    .then().block(LONG);
            receiving.block(LONG);

            SharedReceiveQueueStats grown = server.sharedReceiveQueues().getFirst();
            long rnr = rnrNaksSent(grown.device()) - rnrBefore;
            System.out.printf("SRQ over %s: %d buffers after %d limit events, %d posted, %d RNR NAKs for %d messages%n",
                    transport, grown.buffers(), grown.limitEvents(), grown.posted(), rnr, CLIENTS * MESSAGES_EACH);
            assertTrue(grown.limitEvents() >= 1, "the SRQ ran below its limit and the device said so");
            assertTrue(grown.buffers() > DEPTH, "the limit event added buffers: " + grown);
            assertEquals(CLIENTS * MESSAGES_EACH, held.values().stream().mapToInt(List::size).sum(), "every message arrived");
            for (Map.Entry<RdmaConnection, List<ReceivedMessage>> e : held.entrySet()) {
                List<ReceivedMessage> ms = e.getValue();
                int sender = ByteBuffer.wrap(ms.getFirst().bytes()).getInt(0);
                for (int seq = 0; seq < ms.size(); seq++) {
                    ByteBuffer b = ByteBuffer.wrap(ms.get(seq).bytes());
                    assertEquals(sender, b.getInt(0), "one sender per connection");
                    assertEquals(seq, b.getInt(4), "in order, none lost or repeated");
                }
            }
            assertTrue(rnr < CLIENTS * MESSAGES_EACH, "no RNR storm: " + rnr + " RNR NAKs for " + CLIENTS * MESSAGES_EACH + " messages");

            held.values().forEach(ms -> ms.forEach(ReceivedMessage::release));
            SharedReceiveQueueStats released = server.sharedReceiveQueues().getFirst();
            assertEquals(released.buffers(), released.posted(), "released messages' buffers are posted again");
            assertFalse(released.buffers() > released.maxBuffers());
            clients.forEach(c -> c.disposeNow(TIMEOUT));
        } finally {
            server.disposeNow();
            resources.disposeNow();
        }
    }
}
