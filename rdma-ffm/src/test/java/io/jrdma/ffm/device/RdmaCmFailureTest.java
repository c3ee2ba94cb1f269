package io.jrdma.ffm.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.CmException;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.CompletionQueue;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.ConnectionParameters;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.PortSpace;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.ffm.QueuePairInit;
import io.jrdma.ffm.VerbsException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;

/** rdma_cm connection attempts that fail, and what the client learns about why. */
@Tag("device")
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
class RdmaCmFailureTest {
    /** IB CM reject reasons (IBTA table 112) as rdma_cm reports them in the REJECTED status. */
    private static final int IB_CM_REJ_INVALID_SERVICE_ID = 8;
    private static final int IB_CM_REJ_CONSUMER_DEFINED = 28;
    private static final Duration WAIT = RxePair.CM_WAIT;

    /** Resolves address and route from A's address to B's {@code port}. */
    private static void resolve(EventChannel channel, CmId id, int port) {
        id.resolveAddress(new InetSocketAddress(LabEnv.IP_A, 0), new InetSocketAddress(LabEnv.IP_B, port), WAIT);
        channel.await(id, CmEventType.ADDR_RESOLVED, WAIT);
        id.resolveRoute(WAIT);
        channel.await(id, CmEventType.ROUTE_RESOLVED, WAIT);
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void connectingToAPortWithoutAListenerIsRejectedWithInvalidServiceId() {
        int port = RxePair.nextCmPort();  // nobody listens there
        try (EventChannel channel = EventChannel.create(); CmId id = CmId.create(channel, PortSpace.TCP)) {
            resolve(channel, id, port);
            id.connect(ConnectionParameters.defaults());

            long t0 = System.nanoTime();
            CmException e = assertThrows(CmException.class, () -> channel.await(id, CmEventType.ESTABLISHED, WAIT));
            long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
            assertEquals(CmEventType.REJECTED, e.event(), e.getMessage());
            assertEquals(IB_CM_REJ_INVALID_SERVICE_ID, e.status(), e.getMessage());
            assertTrue(e.getMessage().contains("no listener"), e.getMessage());
            assertTrue(elapsedMs < WAIT.toMillis(), "rejected after " + elapsedMs + " ms");
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void rejectionByTheServerCarriesItsPrivateDataToTheClient() throws Exception {
        byte[] hello = "let me in".getBytes(StandardCharsets.US_ASCII);
        byte[] reason = "jrdma: server busy, retry later".getBytes(StandardCharsets.US_ASCII);
        int port = RxePair.nextCmPort();
        try (EventChannel serverChannel = EventChannel.create();
             CmId listener = CmId.create(serverChannel, PortSpace.TCP);
             EventChannel clientChannel = EventChannel.create();
             CmId client = CmId.create(clientChannel, PortSpace.TCP)) {
            listener.setReuseAddress(true);
            listener.bind(new InetSocketAddress(LabEnv.IP_B, port));
            listener.listen(1);

            CompletableFuture<byte[]> server = new CompletableFuture<>();
            Thread serverThread = Thread.ofPlatform().daemon().name("rdma-cm-rejecting-server").start(() -> {
                try {
                    CmEvent request = serverChannel.await(listener, CmEventType.CONNECT_REQUEST, WAIT);
                    try (CmId requestId = request.id()) {
                        requestId.reject(reason);
                    }
                    server.complete(request.privateData());
                } catch (Throwable t) {
                    server.completeExceptionally(t);
                }
            });

            try {
                resolve(clientChannel, client, port);
                client.connect(ConnectionParameters.defaults().withPrivateData(hello));
                CmException e = assertThrows(CmException.class, () -> clientChannel.await(client, CmEventType.ESTABLISHED, WAIT));
                assertEquals(CmEventType.REJECTED, e.event(), e.getMessage());
                assertEquals(IB_CM_REJ_CONSUMER_DEFINED, e.status(), e.getMessage());
                byte[] got = e.privateData();
                assertTrue(got.length >= reason.length, "reject private data " + got.length + " bytes");
                assertArrayEquals(reason, Arrays.copyOf(got, reason.length), "the server's reason reaches the client");

                byte[] requestData = server.get(WAIT.toMillis() * 2, TimeUnit.MILLISECONDS);
                assertArrayEquals(hello, Arrays.copyOf(requestData, hello.length), "the client's data reached the server");
            } finally {
                serverThread.join(WAIT.multipliedBy(2));  // never close the server's channel under its reader
            }
        }
    }

    /**
     * Why a server under a burst logged {@code rdma_create_qp(...): Invalid argument (EINVAL 22)}:
     * a connect request its client gave up on (its id destroyed: its CM sends a REJ) waits in
     * the server's event channel; the kernel's IB CM has left the request's state, and creating
     * the QP asks it for the QP's INIT attributes. {@link CmId#isConnectionAlive()} tells so
     * before anything is created.
     */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void aConnectRequestWhoseClientGaveUpIsNoLongerAliveAndItsQpCannotBeCreated() throws Exception {
        int port = RxePair.nextCmPort();
        try (EventChannel serverChannel = EventChannel.create();
             CmId listener = CmId.create(serverChannel, PortSpace.TCP);
             EventChannel clientChannel = EventChannel.create()) {
            listener.setReuseAddress(true);
            listener.bind(new InetSocketAddress(LabEnv.IP_B, port));
            listener.listen(1);
            CmId client = CmId.create(clientChannel, PortSpace.TCP);
            try {
                resolve(clientChannel, client, port);
                client.connect(ConnectionParameters.defaults());
                CmEvent request = serverChannel.await(listener, CmEventType.CONNECT_REQUEST, WAIT);
                try (CmId requestId = request.id()) {
                    assertTrue(requestId.isConnectionAlive(), "a request whose client waits");
                    client.close();  // the client gives up: rdma_destroy_id in REQ_SENT sends a REJ
                    // the REJ crosses the wire: wait for the server's CM to have taken it, within a bound
                    long deadline = System.nanoTime() + WAIT.toNanos();
                    while (requestId.isConnectionAlive()) {
                        assertTrue(System.nanoTime() < deadline, "the request still alive " + WAIT.toSeconds() + " s after its client gave up");
                        Thread.sleep(10);
                    }
                    Context context = requestId.context();
                    try (ProtectionDomain pd = context.allocateProtectionDomain(); CompletionQueue cq = context.createCompletionQueue(16)) {
                        VerbsException e = assertThrows(VerbsException.class, () -> requestId.createQueuePair(pd, QueuePairInit.rc(cq)).close());
                        assertEquals(22, e.errno(), e.getMessage());  // EINVAL, as the server logged
                    }
                }
            } finally {
                client.close();  // a no-op once closed
            }
        }
    }
}
