package io.jrdma.ffm;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;

/**
 * A QP that rdma_cm created is destroyed only while no rdma_get_cm_event of its id's channel is
 * under way: librdmacm moves a client's QP to RTR and RTS inside that call when the connect
 * response arrives, so a connect that times out at that moment would otherwise free the QP under
 * librdmacm's ibv_modify_qp ({@link EventChannel#withoutReads}). The read is stood in for by holding
 * the channel's read lock, which a read holds for exactly its rdma_get_cm_event call.
 */
@Tag("device")
class CmQueuePairDestroyTest {
    private static final String IP_A = System.getenv().getOrDefault("RXE_IP_A", "10.77.0.1");

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void aQueuePairOfRdmaCmIsNotDestroyedDuringAReadOfItsIdsChannel() throws Exception {
        try (EventChannel channel = EventChannel.create(); CmId id = CmId.create(channel, PortSpace.TCP)) {
            id.bind(new InetSocketAddress(InetAddress.getByName(IP_A), 0));  // gives the id its device
            Context context = id.context();
            try (ProtectionDomain pd = context.allocateProtectionDomain(); CompletionQueue cq = context.createCompletionQueue(4)) {
                QueuePair qp = id.createQueuePair(pd, QueuePairInit.rc(cq));
                CompletableFuture<Void> destroyed;
                channel.reading.lock();  // a reader inside rdma_get_cm_event
                try {
                    destroyed = CompletableFuture.runAsync(qp::close, Thread::startVirtualThread);
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (!channel.reading.hasQueuedThreads() && !destroyed.isDone()) {
                        assertTrue(System.nanoTime() < deadline, "the destroy neither ran nor waited within 30 s");
                        Thread.sleep(1);
                    }
                    assertFalse(destroyed.isDone(), "the QP was destroyed while its id's channel was being read");
                } finally {
                    channel.reading.unlock();
                }
                destroyed.get(30, TimeUnit.SECONDS);  // and once the read is over, it is
                assertTrue(qp.isClosed());
            }
        }
    }
}
