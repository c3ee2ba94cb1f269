package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.CLIENT_IP;
import static io.jrdma.reactive.device.LabPeers.SERVER_IP;
import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;
import reactor.test.subscriber.TestSubscriber;

/**
 * Connections sharing one loop and one protection domain: they do not hold each other up, and
 * memory registered once serves all of them.
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class LoopSharingTest {

    private static List<RdmaConnection> connectClients(RdmaClient client, int port, int n) {
        return Flux.range(0, n).flatMap(i -> client.host(SERVER_IP).port(port).localAddress(CLIENT_IP).connect())
                .collectList().block(TIMEOUT);
    }

    /**
     * Two connections on one loop (one loop in all). The first one's completions() subscriber
     * requests nothing, so its completions stay held and its writes cannot complete; the second
     * keeps completing writes meanwhile. Progress, not timing: the second's writes all finish
     * while the first's are still held.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aStalledCompletionsSubscriberDoesNotDelayTheOtherConnectionsOfItsLoop(Transport transport) {
        RdmaResources oneLoop = RdmaResources.create("one-loop", 1);
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0).transport(transport)
                .exposeSharedBuffer(1 << 16, Access.REMOTE_WRITE).bind().block(TIMEOUT);
        try {
            List<RdmaConnection> clients = connectClients(RdmaClient.create().runOn(oneLoop).transport(transport).queueDepth(8, 4),
                    server.address().getPort(), 2);
            RdmaConnection stalled = clients.get(0), busy = clients.get(1);
            assertEquals(stalled.loopThreadId(), busy.loopThreadId(), "both on the one loop");

            TestSubscriber<WorkCompletion> withoutDemand = TestSubscriber.builder().initialRequest(0).build();
            stalled.completions().subscribe(withoutDemand);
            RemoteBuffer target = stalled.remoteBuffer();
            List<Mono<WorkCompletion>> held = new ArrayList<>();
            for (int i = 0; i < 4; i++) held.add(LabPeers.subscribed(stalled.write(new byte[] {(byte) i}, target, i)));
            LabPeers.await(() -> stalled.availableSendCredits() == 4, "the stalled connection's four writes are posted");

            RemoteBuffer other = busy.remoteBuffer();
            StepVerifier.create(Flux.range(0, 200).concatMap(i -> busy.write(new byte[] {i.byteValue()}, other, 1000 + i % 64)).count())
                    .expectNext(200L).expectComplete().verify(TIMEOUT);

            assertEquals(List.of(), withoutDemand.getReceivedOnNext(), "nothing was requested, nothing emitted");
            assertEquals(4, stalled.availableSendCredits(), "the held completions keep their credits: 8 - 4 in use");
            for (Mono<WorkCompletion> w : held) {
                StepVerifier.create(w).expectSubscription().expectNoEvent(java.time.Duration.ofMillis(50)).thenCancel().verify(TIMEOUT);
            }
            withoutDemand.request(4);
            for (Mono<WorkCompletion> w : held) StepVerifier.create(w).expectNextCount(1).expectComplete().verify(TIMEOUT);
            LabPeers.await(() -> withoutDemand.getReceivedOnNext().size() == 4, "the four completions are emitted once requested");
            withoutDemand.cancel();
            for (RdmaConnection c : clients) c.disposeNow(TIMEOUT);
        } finally {
            server.disposeNow();
            oneLoop.disposeNow();
        }
    }

    /**
     * A message received on connection A goes out on connection B straight from its receive
     * buffer: both belong to the server's protection domain of rxe1, so no copy is needed.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void aMessageReceivedOnOneConnectionIsForwardedOnAnotherFromTheSameBuffer(Transport transport) {
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0).transport(transport).bind().block(TIMEOUT);
        Mono<List<RdmaConnection>> accepted = server.connections().take(2).collectList().cache();
        accepted.subscribe();
        try {
            List<RdmaConnection> clients = connectClients(RdmaClient.create().transport(transport), server.address().getPort(), 2);
            List<RdmaConnection> side = accepted.block(TIMEOUT);
            assertSame(side.get(0).domain(), side.get(1).domain(), "one protection domain per device for every connection of the resources");
            RdmaConnection sender = clients.get(0), receiver = clients.get(1);
            RdmaConnection in = peer(side, sender), out = in == side.get(0) ? side.get(1) : side.get(0);
            byte[] payload = "forwarded without a copy".getBytes(UTF_8);
            sender.send(payload).block(TIMEOUT);
            ReceivedMessage m = in.receive().block(TIMEOUT);
            RegisteredBuffer received = m.buffer();
            StepVerifier.create(out.send(received, 0, m.length()).then(receiver.receive()))
                    .assertNext(fwd -> {
                        assertArrayEquals(payload, fwd.bytes());
                        fwd.release();
                    }).expectComplete().verify(TIMEOUT);
            assertEquals(1, received.refCount(), "the SEND's reference is gone; the message's own is left");
            m.release();
            clients.forEach(c -> c.disposeNow(TIMEOUT));
        } finally {
            server.disposeNow();
        }
    }

    /** One region of the server, exposed to every client: two clients read it at once and see the same bytes. */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void twoClientsReadOneSharedServerRegionAtOnce(Transport transport) {
        DisposableRdmaServer server = RdmaServer.create().host(SERVER_IP).port(0).transport(transport)
                .exposeSharedBuffer(1 << 20, Access.REMOTE_READ).bind().block(TIMEOUT);
        Mono<List<RdmaConnection>> accepted = server.connections().take(2).collectList().cache();
        accepted.subscribe();
        try {
            List<RdmaConnection> clients = connectClients(RdmaClient.create().transport(transport), server.address().getPort(), 2);
            List<RdmaConnection> side = accepted.block(TIMEOUT);
            RegisteredBuffer shared = side.get(0).exposedBuffer();
            assertSame(shared, side.get(1).exposedBuffer(), "one region for every client, not one per connection");
            assertSame(shared, server.sharedBuffer(side.get(0).domain().deviceName()).orElseThrow());
            for (int i = 0; i < 512; i++) shared.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, i * 8L, 0x5eed0000L + i);
            assertEquals(clients.get(0).remoteBuffer(), clients.get(1).remoteBuffer(), "both were told the same address and rkey");

            List<byte[]> reads = Flux.fromIterable(clients)
                    .flatMap(c -> c.read(c.remoteBuffer(), 0, 4096))
                    .collectList().block(TIMEOUT);
            byte[] expected = shared.bytes(0, 4096);
            for (byte[] r : reads) assertArrayEquals(expected, r);
            assertTrue(reads.size() == 2);
            clients.forEach(c -> c.disposeNow(TIMEOUT));
        } finally {
            server.disposeNow();
        }
    }

    /** The accepted connection whose peer is {@code client}: the one that receives what the client sends. */
    private static RdmaConnection peer(List<RdmaConnection> accepted, RdmaConnection client) {
        client.send("who").block(TIMEOUT);
        return Mono.firstWithValue(accepted.stream().map(c -> c.receive().map(m -> {
            m.release();
            return c;
        })).toList()).block(TIMEOUT);
    }
}
