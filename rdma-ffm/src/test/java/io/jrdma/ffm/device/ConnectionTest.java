package io.jrdma.ffm.device;

import static io.jrdma.ffm.device.LabEnv.PORT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.CmEvent;
import io.jrdma.ffm.CmEventType;
import io.jrdma.ffm.Gid;
import io.jrdma.ffm.QpAttributes;
import io.jrdma.ffm.QpState;
import io.jrdma.ffm.QpType;
import io.jrdma.ffm.WcStatus;
import io.jrdma.ffm.device.Completions.Completion;
import io.jrdma.ffm.device.RxePair.Connection;
import io.jrdma.ffm.device.RxePair.Options;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;

/** An RC QP pair between rxe0 and rxe1, connected by hand and through rdma_cm. */
@Tag("device")
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
class ConnectionTest {

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void manualInitRtrRtsWithExchangedAddressesBringsBothQpsToRts() {
        try (RxePair pair = RxePair.connect(Connection.MANUAL)) {
            assertEquals(QpState.RTS, pair.a.qp.state());
            assertEquals(QpState.RTS, pair.b.qp.state());
            assertEquals(QpType.RC, pair.a.qp.type());
            assertEquals(LabEnv.DEV_A, pair.a.context.deviceName());
            assertEquals(LabEnv.DEV_B, pair.b.context.deviceName());

            // what each side sent out of band survives the wire form and names the right QP and GID
            assertEquals(pair.a.qp.qpNumber(), pair.a.address.qpNumber());
            assertEquals(pair.b.qp.qpNumber(), pair.b.address.qpNumber());
            assertArrayEquals(Gid.ofAddress(LabEnv.IP_A), pair.a.address.gid());
            assertArrayEquals(Gid.ofAddress(LabEnv.IP_B), pair.b.address.gid());
            assertEquals(LabEnv.GID_INDEX_A, pair.a.gid.index());
            assertEquals(LabEnv.GID_INDEX_B, pair.b.gid.index());
            assertEquals(0, pair.a.address.lid(), "RoCE ports have no LID");
            assertTrue(pair.a.address.psn() >= 0 && pair.a.address.psn() < 1 << 24);

            // the granted capabilities are at least what QueuePairInit.rc asked for
            assertTrue(pair.a.qp.capabilities().maxSendWr() >= 16, pair.a.qp.capabilities().toString());
            assertTrue(pair.a.qp.capabilities().maxRecvWr() >= 16, pair.a.qp.capabilities().toString());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void rdmaCmConnectionDeliversConnectPrivateDataInTheConnectRequest() {
        byte[] hello = "jrdma hello from rxe0".getBytes(StandardCharsets.US_ASCII);
        try (RxePair pair = RxePair.connect(Connection.RDMA_CM, Options.defaults().withConnectPrivateData(hello))) {
            CmEvent request = pair.connectRequest;
            assertNotNull(request);
            assertEquals(CmEventType.CONNECT_REQUEST, request.type());
            assertEquals(0, request.status());
            assertSame(pair.b.id, request.id(), "the request's id is the one the server accepted on");
            assertEquals(pair.a.qp.qpNumber(), request.remoteQpNumber(), "the request names the client's QP");

            byte[] got = request.privateData();
            assertTrue(got.length >= hello.length, "private data " + got.length + " bytes");
            assertArrayEquals(hello, Arrays.copyOf(got, hello.length), "private data prefix");
            // RoCE (IB CM REQ) carries a fixed 56-byte private data field: the rest is zero padding
            assertEquals(56, got.length, "IB CM REQ private data is reported whole");
            for (int i = hello.length; i < got.length; i++) assertEquals(0, got[i], "padding byte " + i);

            assertEquals(QpState.RTS, pair.a.qp.state());
            assertEquals(QpState.RTS, pair.b.qp.state());
            assertEquals(LabEnv.DEV_A, pair.a.context.deviceName(), "the client resolved to rxe0 from 10.77.0.1");
            assertEquals(LabEnv.DEV_B, pair.b.context.deviceName(), "the server's request arrived on rxe1");
            assertEquals(PORT, pair.a.id.portNumber());
            assertEquals(PORT, pair.b.id.portNumber());

            InetSocketAddress clientLocal = pair.a.id.localAddress();
            InetSocketAddress clientRemote = pair.a.id.remoteAddress();
            assertEquals(LabEnv.IP_A, clientLocal.getAddress());
            assertEquals(LabEnv.IP_B, clientRemote.getAddress());
            assertEquals(LabEnv.IP_A, pair.b.id.remoteAddress().getAddress());
            assertEquals(clientRemote.getPort(), pair.b.id.localAddress().getPort());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void rdmaCmProgramsTheLongestRnrDelayWhichRtsToRtsShortens() {
        try (RxePair manual = RxePair.connect(Connection.MANUAL)) {
            assertEquals(12, manual.a.qp.minRnrTimer(), "RtrAttributes' default, 0.64 ms");
            assertEquals(12, manual.b.qp.minRnrTimer());
        }
        try (RxePair pair = RxePair.connect(Connection.RDMA_CM)) {
            // the IB CM's RTR attributes: 0 = 655.36 ms before a SEND that met no receive is retried
            assertEquals(0, pair.a.qp.minRnrTimer(), "rdma_cm's min_rnr_timer, client");
            assertEquals(0, pair.b.qp.minRnrTimer(), "rdma_cm's min_rnr_timer, server");
            pair.a.qp.modify(new QpAttributes().minRnrTimer(12));
            pair.b.qp.modify(new QpAttributes().minRnrTimer(12));
            assertEquals(12, pair.a.qp.minRnrTimer());
            assertEquals(12, pair.b.qp.minRnrTimer());
            assertEquals(QpState.RTS, pair.a.qp.state());
            assertEquals(QpState.RTS, pair.b.qp.state());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void rdmaCmDisconnectReachesBothSidesAndFlushesThePostedReceive() {
        try (RxePair pair = RxePair.connect(Connection.RDMA_CM)) {
            pair.b.postReceive(77, 0, 64);
            pair.a.id.disconnect();
            // the server thread is done: this thread may read both channels now. The passive side
            // sees DISCONNECTED on the DREQ; the active side only once the passive side answers
            // with its own rdma_disconnect (the DREP), as every rdma_cm peer must.
            assertEquals(CmEventType.DISCONNECTED,
                    pair.b.id.channel().await(pair.b.id, CmEventType.DISCONNECTED, RxePair.CM_WAIT).type());
            // rdma_cm leaves the passive QP alone until that side disconnects too
            assertEquals(QpState.RTS, pair.b.qp.state(), "B's QP on DISCONNECTED, before its own rdma_disconnect");
            pair.b.id.disconnect();
            assertEquals(CmEventType.DISCONNECTED,
                    pair.a.id.channel().await(pair.a.id, CmEventType.DISCONNECTED, RxePair.CM_WAIT).type());

            assertEquals(QpState.ERR, QpStates.await(pair.a.qp, QpState.ERR, RxePair.CM_WAIT), "the disconnecting side");
            assertEquals(QpState.ERR, QpStates.await(pair.b.qp, QpState.ERR, RxePair.CM_WAIT), "the disconnected side");
            Completion flushed = Completions.await(pair.b.cq, 1).getFirst();
            assertEquals(77, flushed.wrId());
            assertEquals(WcStatus.IBV_WC_WR_FLUSH_ERR, flushed.status(), flushed.toString());
        }
    }
}
