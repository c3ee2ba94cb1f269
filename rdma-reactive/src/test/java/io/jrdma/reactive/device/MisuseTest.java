package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.ffm.RdmaDevices;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.memory.ReceivedMessage;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import io.jrdma.reactive.memory.ScatterGatherElement;
import java.util.EnumSet;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * What a careless application does, and what it gets: a clear typed error at once, never a late
 * device error that closes the connection, never a crash or a hang.
 */
@Tag("device")
@Timeout(value = 90, threadMode = ThreadMode.SEPARATE_THREAD)
class MisuseTest {

    /** Every kind of operation that names a local buffer. */
    private static List<Function<RegisteredBuffer, Mono<?>>> operations(RdmaConnection c) {
        RemoteBuffer remote = c.remoteBuffer();
        return List.of(b -> c.send(b, 0, 8), b -> c.sendWithImmediate(b, 0, 8, 1), b -> c.write(b, 0, 8, remote, 0),
                b -> c.writeWithImmediate(b, 0, 8, remote, 0, 1), b -> c.read(remote, 0, 8, b, 0),
                b -> {  // the bad one second in a gather list
                    RegisteredBuffer own = c.buffers().tryAcquire();
                    return c.send(List.of(ScatterGatherElement.of(own, 0, 4), ScatterGatherElement.of(b, 0, 4))).doFinally(s -> own.release());
                });
    }

    @Test
    void aBufferOfAnotherProtectionDomainIsRefusedBeforeItIsPostedAndTheConnectionStaysUsable() {
        RdmaResources other = RdmaResources.create("other-domain");
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM);
             Context context = RdmaDevices.open(p.client.domain().deviceName());
             ProtectionDomain ownPd = context.allocateProtectionDomain()) {
            // the same device, another RdmaResources: another protection domain; and one made by hand with rdma-ffm
            BufferPool otherResources = other.domain(p.client.domain().deviceName()).createPool(64, 8, Access.LOCAL_WRITE);
            BufferPool byHand = BufferPool.create(ownPd, 64, 8, EnumSet.of(Access.LOCAL_WRITE));
            for (BufferPool foreign : List.of(otherResources, byHand)) {
                for (Function<RegisteredBuffer, Mono<?>> operation : operations(p.client)) {
                    RegisteredBuffer b = foreign.tryAcquire();
                    int credits = p.client.availableSendCredits();
                    StepVerifier.create(operation.apply(b)).expectErrorSatisfies(e -> {
                        assertInstanceOf(IllegalArgumentException.class, e);
                        assertTrue(e.getMessage().contains("another protection domain"), e.getMessage());
                    }).verify(TIMEOUT);
                    assertEquals(credits, p.client.availableSendCredits(), "nothing was posted");
                    assertEquals(1, b.refCount(), "the refused operation took no reference");
                    b.release();
                }
                foreign.close();
            }
            assertFalse(p.client.isDisposed(), "a refused buffer is the caller's error, not the connection's");
            StepVerifier.create(p.client.send("still usable")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            StepVerifier.create(p.accepted.receive().map(m -> {
                try (m) {
                    return m.text();
                }
            })).expectNext("still usable").expectComplete().verify(TIMEOUT);
            LabPeers.await(byHand::isReleased, "the hand-made pool deregistered before its PD is freed");
        } finally {
            other.disposeLater().block(TIMEOUT);
        }
    }

    @Test
    void aBufferUsedAfterItWentBackIsRefusedAndTheConnectionStaysUsable() {
        try (LabPeers p = LabPeers.connect(Transport.RDMA_CM)) {
            for (Function<RegisteredBuffer, Mono<?>> operation : operations(p.client)) {
                RegisteredBuffer b = p.client.buffers().tryAcquire();
                b.release();
                StepVerifier.create(operation.apply(b)).expectErrorSatisfies(e -> {
                    assertInstanceOf(IllegalStateException.class, e);
                    assertTrue(e.getMessage().contains("returned to its pool"), e.getMessage());
                }).verify(TIMEOUT);
            }
            assertFalse(p.client.isDisposed());
            assertEquals(p.client.config().sendQueueDepth(), p.client.availableSendCredits());
            StepVerifier.create(p.client.send("still usable")).expectNextCount(1).expectComplete().verify(TIMEOUT);
            p.accepted.receive().block(TIMEOUT).release();
        }
    }

    @Test
    void closingTwiceReleasingTwiceAndDisposingTwiceAreHarmlessOrTyped() {
        LabPeers p = LabPeers.connect(Transport.RDMA_CM);
        RegisteredBuffer b = p.client.buffers().tryAcquire();
        b.release();
        IllegalStateException twice = assertThrows(IllegalStateException.class, b::release, "a second release of a pool buffer");
        assertTrue(twice.getMessage().contains("released more often than acquired"), twice.getMessage());

        p.client.send("held").block(TIMEOUT);
        ReceivedMessage m = p.accepted.receive().block(TIMEOUT);
        m.release();
        m.release();  // documented as idempotent: the receive buffer went back once
        // its window and the two receives it keeps for credit grants
        assertEquals(p.accepted.config().receiveQueueDepth() + io.jrdma.reactive.internal.core.Credits.RECEIVES_RESERVED, p.accepted.receivesPosted());

        Mono<Void> first = p.client.disposeLater();
        StepVerifier.create(Mono.when(first, p.client.disposeLater())).expectComplete().verify(TIMEOUT);
        StepVerifier.create(p.client.disposeLater()).expectComplete().verify(TIMEOUT);  // after it is closed too
        p.client.dispose();
        p.client.disposeNow(TIMEOUT);
        StepVerifier.create(p.client.buffers().acquire()).expectError(ConnectionException.Closed.class).verify(TIMEOUT);
        p.accepted.disposeNow(TIMEOUT);
        p.accepted.disposeNow(TIMEOUT);
        p.server.disposeNow();
        p.server.disposeNow();
        assertTrue(p.server.isDisposed());
    }
}
