package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static io.jrdma.reactive.device.LabPeers.subscribed;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.DisposableRdmaServer;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaOperationException.FlushedException;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.WorkCompletion;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/** Closing flushes outstanding work, fails what comes after, and frees resources in order. */
@Tag("device")
@Timeout(value = 90, threadMode = ThreadMode.SEPARATE_THREAD)
class CloseTest {

    @ParameterizedTest
    @EnumSource(Transport.class)
    void closingFlushesEveryPendingOperationWithATypedError(Transport transport) {
        try (LabPeers p = LabPeers.withOneServerReceive(transport, 2)) {
            ReceivedMessage occupying = p.occupyServerReceive();
            RdmaConnection client = p.client;
            List<Mono<WorkCompletion>> inFlight = List.of(subscribed(client.send("stalled 1")), subscribed(client.send("stalled 2")));
            Mono<WorkCompletion> waiting = subscribed(client.send("waits for a credit"));
            Mono<ReceivedMessage> receive = subscribed(client.receive());

            StepVerifier.create(client.disposeLater()).expectComplete().verify(TIMEOUT);

            for (Mono<WorkCompletion> send : inFlight) {
                StepVerifier.create(send).expectErrorSatisfies(e -> {
                    FlushedException flushed = assertInstanceOf(FlushedException.class, e);
                    assertEquals(WcStatus.IBV_WC_WR_FLUSH_ERR, flushed.status());
                    ConnectionException.Closed why = assertInstanceOf(ConnectionException.Closed.class, flushed.getCause());
                    assertTrue(why.getMessage().contains("closed locally"), why.getMessage());
                }).verify(TIMEOUT);
            }
            StepVerifier.create(waiting).expectError(ConnectionException.Closed.class).verify(TIMEOUT);
            StepVerifier.create(receive).expectError(ConnectionException.Closed.class).verify(TIMEOUT);
            StepVerifier.create(p.accepted.onDispose()).expectComplete().verify(TIMEOUT);
            occupying.release();
        }
    }

    /**
     * Each posted receive flushes once when the connection closes, and is not posted again: a
     * buffer re-posted to a QP in ERR flushes straight back, and re-posting it again kept the
     * connection draining (and its loop busy) until the drain deadline.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void closingFlushesEachPostedReceiveExactlyOnce(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport, RdmaServer.create(), RdmaClient.create().queueDepth(4, 8))) {
            RdmaConnection client = p.client;
            int posted = 8 + io.jrdma.reactive.internal.core.Credits.RECEIVES_RESERVED;  // its window, and four kept for grants and rendezvous replies
            assertEquals(posted, client.receivesPosted());
            List<WorkCompletion> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
            client.completions().subscribe(seen::add);
            StepVerifier.create(client.disposeLater()).expectComplete().verify(TIMEOUT);
            List<WorkCompletion> flushedReceives = seen.stream()
                    .filter(wc -> wc.opcode() == io.jrdma.ffm.WcOpcode.RECV && wc.status() == WcStatus.IBV_WC_WR_FLUSH_ERR).toList();
            assertEquals(posted, flushedReceives.size(), "one flush per posted receive: " + flushedReceives);
            assertEquals(posted, flushedReceives.stream().map(WorkCompletion::wrId).distinct().count());
            assertEquals(0, client.receivesPosted());
        }
    }

    /**
     * A peer may SEND and disconnect at once (C peers do): its messages completed before the
     * disconnect, so a receiver, even one that comes after the close, gets each of them before
     * receives() completes (an orderly end); the exposed region their notifications point into stays
     * until they are released.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void messagesThatArrivedBeforeThePeerClosedStayReadable(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport)) {
            for (String m : List.of("one", "two", "three")) StepVerifier.create(p.client.send(m)).expectNextCount(1).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.client.writeWithImmediate("four".getBytes(UTF_8), p.client.remoteBuffer(), 0, 4))
                    .expectNextCount(1).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.client.disposeLater()).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.accepted.onDispose()).expectComplete().verify(TIMEOUT);

            // the notification points into the exposed region: it stays registered while the message is held
            StepVerifier.create(p.accepted.receives().map(m -> {
                        String text = m.hasImmediate() ? p.accepted.exposedBuffer().string(0, m.immediate()) : m.text();
                        m.release();
                        return text;
                    }))
                    .expectNext("one", "two", "three", "four")
                    .expectComplete()  // the peer closed: an orderly end
                    .verify(TIMEOUT);
            StepVerifier.create(p.accepted.receive())
                    .expectErrorSatisfies(e -> assertTrue(assertInstanceOf(ConnectionException.Closed.class, e).isOrderly(), e::toString))
                    .verify(TIMEOUT);
            StepVerifier.create(p.accepted.disposeLater()).expectComplete().verify(TIMEOUT);
        }
    }

    @Test
    void everyOperationAfterCloseFailsWithClosed() {
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM)) {
            RdmaConnection client = p.client;
            RemoteBuffer remote = client.remoteBuffer();
            RegisteredBuffer own = client.buffers().tryAcquire();
            StepVerifier.create(client.disposeLater()).expectComplete().verify(TIMEOUT);
            assertTrue(client.isDisposed());

            List<Mono<?>> operations = List.of(client.send("late"), client.send(own, 0, 4), client.sendWithImmediate(own, 0, 4, 1),
                    client.write("late".getBytes(UTF_8), remote, 0), client.write(own, 0, 4, remote, 0),
                    client.writeWithImmediate("late".getBytes(UTF_8), remote, 0, 1), client.read(remote, 0, 4),
                    client.read(remote, 0, 4, own, 0), client.fetchAndAdd(remote, 0, 1), client.compareAndSwap(remote, 0, 0, 1),
                    client.receive());
            for (Mono<?> operation : operations) {
                StepVerifier.create(operation).expectError(ConnectionException.Closed.class).verify(TIMEOUT);
            }
            StepVerifier.create(client.completions()).expectComplete().verify(TIMEOUT);
            assertEquals(1, own.refCount(), "failed posts took no reference");
            own.release();
        }
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void closeFreesMemoryOnlyOnceTheApplicationsBuffersAreBackAndDisposingTheResourcesEndsTheirThreads(Transport transport) {
        RdmaResources clientResources = RdmaResources.create("closing-client", 1);
        RdmaClient client = RdmaClient.create().runOn(clientResources);
        try (LabPeers p = LabPeers.connect(transport, RdmaServer.create(), client)) {
            RdmaConnection c = p.client;
            RegisteredBuffer held = c.buffers().tryAcquire();
            p.accepted.send("kept").block(TIMEOUT);
            ReceivedMessage kept = c.receive().block(TIMEOUT);
            assertEquals(1, clientResources.openConnections());

            StepVerifier.create(c.disposeLater()).expectComplete().verify(TIMEOUT);
            assertEquals(0, clientResources.openConnections());
            assertFalse(c.buffers().isReleased(), "a buffer the application holds keeps its region registered");
            assertEquals("kept", kept.text(), "a received message stays readable until released");
            assertThrows(ConnectionException.Closed.class, c.buffers()::tryAcquire, "the connection's pool closed with it");
            StepVerifier.create(c.buffers().acquire()).expectError(ConnectionException.Closed.class).verify(TIMEOUT);
            assertEquals("held", held.put(0, "held".getBytes(UTF_8)).string(0, 4), "a buffer out when its pool closed stays usable");

            held.release();
            assertTrue(c.buffers().isReleased(), "the last buffer back deregisters the region");
            kept.release();
            assertEquals(0, kept.buffer().refCount(), "the closed connection frees a released receive buffer");
            assertEquals(0, c.domain().registeredBytes(), "nothing of the connection stays registered in the device's domain");
            long loop = c.loopThreadId();
            assertTrue(ManagementFactory.getThreadMXBean().getThreadInfo(loop) != null, "the loop serves other connections: it stays");
        } finally {
            clientResources.disposeNow();
        }
        LabPeers.await(() -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().startsWith("closing-client-")), "every thread of the disposed resources ends");
    }

    @ParameterizedTest
    @EnumSource(Transport.class)
    void disposingTheServerClosesTheConnectionsItAccepted(Transport transport) {
        try (LabPeers p = LabPeers.connect(transport)) {
            p.client.send("held by the server application").block(TIMEOUT);
            ReceivedMessage held = p.accepted.receive().block(TIMEOUT);

            p.server.disposeNow();
            assertTrue(p.accepted.isDisposed());
            StepVerifier.create(p.accepted.onDispose()).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.client.onDispose()).expectComplete().verify(TIMEOUT);
            held.release();  // the accepted connection's last buffer: its teardown finishes now
            assertEquals(0, held.buffer().refCount());
        }
    }

    @Test
    void aCompletionsSubscriberWithholdingDemandStillCompletesWhenTheConnectionCloses() {
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM)) {
            RdmaConnection client = p.client;
            RemoteBuffer remote = client.remoteBuffer();
            List<Mono<WorkCompletion>> writes = new ArrayList<>();
            StepVerifier.create(client.completions(), 0)
                    .expectSubscription()
                    .then(() -> {
                        for (int i = 0; i < 3; i++) writes.add(subscribed(client.write(new byte[] {(byte) i}, remote, i)));
                    })
                    .expectNoEvent(Duration.ofMillis(300))
                    .then(() -> client.dispose())
                    .expectComplete()
                    .verify(TIMEOUT);
            // the writes did execute: closing took their completions from the CQ without emitting them
            for (Mono<WorkCompletion> write : writes) {
                StepVerifier.create(write).assertNext(wc -> assertEquals(WcStatus.IBV_WC_SUCCESS, wc.status()))
                        .expectComplete().verify(TIMEOUT);
            }
        }
    }

    /**
     * With no receive posted and nothing in flight, the poller has nothing to wait for once the
     * connection is closing; it used to destroy the QP while the closing thread was still in
     * ibv_modify_qp(ERR), a use after free that killed the JVM (SIGSEGV in libibverbs).
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void closingWithNothingPostedWaitsForItsOwnDisconnectBeforeDestroyingTheQp(Transport transport) {
        for (int round = 0; round < 8; round++) {
            try (LabPeers p = LabPeers.withOneServerReceive(transport, 2)) {
                ReceivedMessage occupying = p.occupyServerReceive();  // the server has no receive posted now
                StepVerifier.create(p.accepted.disposeLater()).expectComplete().verify(TIMEOUT);
                occupying.release();
                StepVerifier.create(p.client.onDispose()).expectComplete().verify(TIMEOUT);
            }
        }
    }

    /**
     * dispose() must not block a thread that forbids it: on {@code parallel} it used to call
     * block() and throw IllegalStateException. There it starts the closing and returns; the
     * connections still close, concurrently.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void disposingOnANonBlockingThreadClosesEverythingWithoutBlockingIt(Transport transport) {
        RdmaResources clientResources = RdmaResources.create("parallel-dispose");
        try (LabPeers p = LabPeers.connect(transport, RdmaServer.create(), RdmaClient.create().runOn(clientResources))) {
            RdmaConnection second = RdmaClient.create().runOn(clientResources).host(LabPeers.SERVER_IP)
                    .port(p.server.address().getPort()).localAddress(LabPeers.CLIENT_IP).transport(transport).connect().block(TIMEOUT);
            assertEquals(2, clientResources.openConnections());

            StepVerifier.create(Mono.fromRunnable(clientResources::dispose).subscribeOn(Schedulers.parallel()))
                    .expectComplete().verify(TIMEOUT);
            StepVerifier.create(Mono.when(p.client.onDispose(), second.onDispose())).expectComplete().verify(TIMEOUT);
            assertEquals(0, clientResources.openConnections());
            assertTrue(clientResources.isDisposed());

            StepVerifier.create(Mono.fromRunnable(p.server::dispose).subscribeOn(Schedulers.parallel()))
                    .expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.server.onDispose()).expectComplete().verify(TIMEOUT);
            assertTrue(p.accepted.isDisposed());
        } finally {
            clientResources.disposeNow();
        }
    }

    /**
     * disposeLater() completes only once the listening endpoint is freed: the same port can be
     * bound again at once. Listening costs no thread of its own: the resources' threads are their
     * loops and one setup thread, before, during and after.
     */
    @ParameterizedTest
    @EnumSource(Transport.class)
    void disposeLaterCompletesOnceTheListenerIsGoneAndItsPortFree(Transport transport) {
        RdmaResources serverResources = RdmaResources.create("relisten", 1);
        java.util.function.LongSupplier threads = () -> Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("relisten-")).count();
        try {
            RdmaServer config = RdmaServer.create().runOn(serverResources).host(LabPeers.SERVER_IP).transport(transport);
            DisposableRdmaServer first = config.port(0).bind().block(TIMEOUT);
            int port = first.address().getPort();
            assertEquals(2, threads.getAsLong(), "one loop and one setup thread; none for the listener");
            StepVerifier.create(first.connections()).then(first::disposeLater).expectComplete().verify(TIMEOUT);
            StepVerifier.create(first.disposeLater()).expectComplete().verify(TIMEOUT);
            assertTrue(first.isDisposed());
            assertEquals(2, threads.getAsLong());

            DisposableRdmaServer again = config.port(port).bind().block(TIMEOUT);
            try {
                RdmaConnection c = RdmaClient.create().host(LabPeers.SERVER_IP).port(port).localAddress(LabPeers.CLIENT_IP)
                        .transport(transport).connect().block(TIMEOUT);
                StepVerifier.create(c.disposeLater()).expectComplete().verify(TIMEOUT);
            } finally {
                StepVerifier.create(again.disposeLater()).expectComplete().verify(TIMEOUT);
            }
        } finally {
            serverResources.disposeNow();
        }
    }
}
