package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.QueueFullException;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaOperationException.FlushedException;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.core.FaultInjection;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * The faults rxe never produces, injected where the library learns of real ones
 * ({@link FaultInjection}): a post the provider refuses (ENOMEM), IBV_EVENT_QP_FATAL, a CQ error
 * (what an overrun raises), IBV_EVENT_DEVICE_FATAL and rdma_cm's DEVICE_REMOVAL. Each ends the
 * operations it concerns with a typed error that names the fault, closes what can no longer work,
 * and frees it: the devices hold nothing made during it afterwards.
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class InjectedFaultTest {
    private RdmaResources resources;
    /** The devices' objects by number: what an earlier class in this JVM left to be freed may go meanwhile. */
    private Map<String, String> before;

    /**
     * librdmacm opens a verbs context (and a protection domain) per device on its first use in a
     * process and keeps them until the process ends. Counted before that, the first test of a JVM
     * (this class run alone) saw them as not given back; one connection made and closed first puts
     * them in every test's baseline.
     */
    @BeforeAll
    static void librdmacmOpenedItsDevices() {
        RdmaResources warm = RdmaResources.create("injected-warm-up", 1);
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM, RdmaServer.create().runOn(warm), RdmaClient.create().runOn(warm))) {
            StepVerifier.create(p.client.send("warm")).expectNextCount(1).expectComplete().verify(TIMEOUT);
        } finally {
            warm.disposeLater().block(TIMEOUT);
        }
    }

    @BeforeEach
    void oneLoop() {
        before = DeviceResources.held();
        resources = RdmaResources.create("injected", 1);
    }

    @AfterEach
    void everythingFreed() {
        resources.disposeLater().block(TIMEOUT);
        DeviceResources.awaitNoneNewSince(before, TIMEOUT);
    }

    private LabPeers pair(Transport transport) {
        // one receive on the server: SENDs beyond it stay in flight (RNR, retried for ever) until a fault ends them
        return LabPeers.connect(transport, RdmaServer.create().runOn(resources).queueDepth(4, 1).receiverCredits(false),
                RdmaClient.create().runOn(resources).queueDepth(8, 4).receiverCredits(false));
    }

    /** SENDs the server cannot receive yet: in flight until the connection goes. */
    private static List<Mono<WorkCompletion>> sendsInFlight(LabPeers p, ReceivedMessage[] occupied) {
        occupied[0] = p.occupyServerReceive();
        List<Mono<WorkCompletion>> sends = List.of(LabPeers.subscribed(p.client.send("one")), LabPeers.subscribed(p.client.send("two")));
        LabPeers.await(() -> p.client.availableSendCredits() == p.client.config().sendQueueDepth() - 2, "two SENDs in flight");
        return sends;
    }

    private static void assertFlushedBecause(List<Mono<WorkCompletion>> sends, String why) {
        for (Mono<WorkCompletion> s : sends) {
            StepVerifier.create(s).expectErrorSatisfies(e -> {
                FlushedException f = assertInstanceOf(FlushedException.class, e, () -> LabPeers.describe(e));
                assertTrue(f.getMessage().contains(why), f.getMessage());
                assertInstanceOf(ConnectionException.Closed.class, f.getCause());
            }).verify(TIMEOUT);
        }
    }

    private static void assertClosedBy(RdmaConnection c, String why) {
        StepVerifier.create(c.receives()).expectErrorSatisfies(e -> {
            ConnectionException.Closed closed = assertInstanceOf(ConnectionException.Closed.class, e);
            assertFalse(closed.isOrderly(), "a fault, not a close: " + closed.getMessage());
            assertTrue(closed.getMessage().contains(why), closed.getMessage());
        }).verify(TIMEOUT);
        StepVerifier.create(c.onDispose()).expectComplete().verify(TIMEOUT);
    }

    @Test
    void aPostTheProviderRefusesFailsThatOperationTypedAndGivesBackItsCreditAndBuffer() {
        try (LabPeers p = pair(Transport.RDMA_CM)) {
            RegisteredBuffer b = p.client.buffers().tryAcquire().put(0, "refused".getBytes(java.nio.charset.StandardCharsets.UTF_8));
            FaultInjection.failNextPost(p.client, new QueueFullException("ibv_post_send(QP 0x" + Integer.toHexString(p.client.qpNumber())
                    + ", bad wr_id 0)", 12));
            StepVerifier.create(p.client.send(b, 0, 7)).expectErrorSatisfies(e -> {
                QueueFullException q = assertInstanceOf(QueueFullException.class, e);
                assertEquals("ENOMEM", q.errnoName());
                assertTrue(q.getMessage().contains("the work queue is full"), q.getMessage());
            }).verify(TIMEOUT);
            assertEquals(1, b.refCount(), "the refused post gave its reference back");
            assertEquals(p.client.config().sendQueueDepth(), p.client.availableSendCredits(), "and its credit");
            assertFalse(p.client.isDisposed(), "one refused post fails that operation, not the connection");
            StepVerifier.create(p.client.send(b, 0, 7)).expectNextCount(1).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.accepted.receive().map(m -> {
                try (m) {
                    return m.text();
                }
            })).expectNext("refused").expectComplete().verify(TIMEOUT);
            b.release();
        }
    }

    @Test
    void aFatalQpEventClosesTheConnectionAndFlushesItsOperationsNamingTheEvent() {
        try (LabPeers p = pair(Transport.RDMA_CM)) {
            ReceivedMessage[] occupied = new ReceivedMessage[1];
            List<Mono<WorkCompletion>> sends = sendsInFlight(p, occupied);
            FaultInjection.qpFatal(p.client);
            assertFlushedBecause(sends, "the device reported local work queue catastrophic error");
            assertClosedBy(p.client, "local work queue catastrophic error");
            occupied[0].release();
        }
    }

    @Test
    void aCqErrorClosesEveryConnectionOnThatCqAndNewOnesGetAFreshOne() {
        try (LabPeers a = pair(Transport.RDMA_CM); LabPeers b = pair(Transport.TCP)) {
            ReceivedMessage[] occupied = new ReceivedMessage[1];
            List<Mono<WorkCompletion>> sends = sendsInFlight(a, occupied);
            FaultInjection.cqError(a.client);  // both clients' completions come to the one loop's rxe0 CQ
            assertFlushedBecause(sends, "CQ error on its completion queue");
            for (RdmaConnection c : List.of(a.client, b.client)) assertClosedBy(c, "CQ error on its completion queue");
            occupied[0].release();
            try (LabPeers fresh = pair(Transport.RDMA_CM)) {
                StepVerifier.create(fresh.client.send("on a fresh CQ")).expectNextCount(1).expectComplete().verify(TIMEOUT);
                fresh.accepted.receive().block(TIMEOUT).release();
            }
        }
    }

    @Test
    void aFatalDeviceEventClosesEveryConnectionOfTheDeviceOnBothTransports() {
        try (LabPeers cm = pair(Transport.RDMA_CM); LabPeers tcp = pair(Transport.TCP)) {
            FaultInjection.deviceFatal(tcp.client);
            for (RdmaConnection c : List.of(cm.client, tcp.client)) assertClosedBy(c, "the device reported local catastrophic error");
            // the servers' ends are on the other device: they close because their peers went
            for (RdmaConnection c : List.of(cm.accepted, tcp.accepted)) StepVerifier.create(c.onDispose()).expectComplete().verify(TIMEOUT);
        }
    }

    @Test
    void aServerConnectionOnASharedReceiveQueueClosesWhenItsQpReportsTheLastWqeReached() {
        // a QP on an SRQ that a peer's bad request moved to ERR flushes nothing: this event is the only sign (rxe 6.1 raises none)
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM, RdmaServer.create().runOn(resources).sharedReceiveQueue(16),
                RdmaClient.create().runOn(resources))) {
            assertTrue(p.accepted.sharesReceiveQueue());
            FaultInjection.lastWqeReached(p.accepted);
            assertClosedBy(p.accepted, "the QP entered the error state without a failed request of this side");
            StepVerifier.create(p.client.onDispose()).expectComplete().verify(TIMEOUT);  // and its peer learns it
        }
    }

    @Test
    void rdmaCmsDeviceRemovalClosesTheConnectionSayingSo() {
        try (LabPeers p = pair(Transport.RDMA_CM)) {
            ReceivedMessage[] occupied = new ReceivedMessage[1];
            List<Mono<WorkCompletion>> sends = sendsInFlight(p, occupied);
            FaultInjection.cmDeviceRemoval(p.client, resources);
            assertFlushedBecause(sends, "the RDMA device was removed");
            assertClosedBy(p.client, "the RDMA device was removed");
            occupied[0].release();
        }
    }
}
