package io.jrdma.ffm.device;

import static io.jrdma.ffm.device.Bytes.get;
import static io.jrdma.ffm.device.Bytes.pattern;
import static io.jrdma.ffm.device.Bytes.put;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.QpState;
import io.jrdma.ffm.SendFlags;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.ffm.WorkCompletionException;
import io.jrdma.ffm.device.Completions.Completion;
import io.jrdma.ffm.device.RxePair.Connection;
import io.jrdma.ffm.device.RxePair.Options;
import java.time.Duration;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Remote access violations: they are typed work-completion errors, never a crash, and they
 * leave the requester's QP in ERR where later work requests are flushed.
 */
@Tag("device")
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
class RemoteAccessErrorTest {
    private static final Duration STATE_WAIT = Duration.ofSeconds(5);

    /**
     * What rxe leaves in ibv_wc.opcode of every error completion, whatever the failed WR was: 0,
     * which is IBV_WC_SEND. ibv_poll_cq(3): "If the completion status is other than
     * IBV_WC_SUCCESS, only the following attributes are valid: wr_id, status, qp_num, and
     * vendor_err", so WorkCompletions.error(i) must not report it as the opcode.
     */
    private static final int RXE_ERROR_COMPLETION_OPCODE_VALUE = 0;

    @ParameterizedTest(name = "{0}")
    @EnumSource(Connection.class)
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void writeWithAWrongRkeyFailsWithRemoteAccessErrorThenTheQpIsInErrAndFlushesTheNextWr(Connection connection) {
        try (RxePair p = RxePair.connect(connection)) {
            int wrongRkey = p.b.mr.rkey() ^ 0xff;  // same MR index, wrong key byte
            put(p.a.memory(), 0, pattern(64, 6));

            p.a.send.reset().wrId(41).opcode(SendOpcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
                    .sge(0, p.a.mr, 0, 64).rdma(p.b.mr.address(), wrongRkey);
            p.a.qp.postSend(p.a.send);

            Completion failed = Completions.await(p.a.cq, 1).getFirst();
            WorkCompletionException error = failed.error();
            assertNotNull(error, "a write with a wrong rkey must fail: " + failed);
            assertEquals(WcStatus.IBV_WC_REM_ACCESS_ERR, error.status(), error.getMessage());
            assertEquals(41, error.wrId());
            assertEquals(RXE_ERROR_COMPLETION_OPCODE_VALUE, failed.opcodeValue(), "the raw ibv_wc.opcode of a failed RDMA_WRITE");
            assertNull(error.opcode(), "a failed completion reports no opcode: " + error.getMessage());
            assertTrue(error.getMessage().contains("opcode unknown"), error.getMessage());
            assertEquals(p.a.qp.qpNumber(), error.qpNumber());
            assertArrayEquals(new byte[64], get(p.b.memory(), 0, 64), "nothing was written");

            assertEquals(QpState.ERR, QpStates.await(p.a.qp, QpState.ERR, STATE_WAIT), "requester QP after the error");
            // rxe also moves the responder to ERR (IBTA responder class C error: NAK + error state)
            assertEquals(QpState.ERR, QpStates.await(p.b.qp, QpState.ERR, STATE_WAIT), "responder QP after sending the NAK");

            p.a.send.reset().wrId(42).opcode(SendOpcode.SEND).flags(SendFlags.SIGNALED).sge(0, p.a.mr, 0, 16);
            p.a.qp.postSend(p.a.send);
            Completion flushed = Completions.await(p.a.cq, 1).getFirst();
            assertNotNull(flushed.error(), "a WR posted to a QP in ERR must not succeed: " + flushed);
            assertEquals(WcStatus.IBV_WC_WR_FLUSH_ERR, flushed.error().status(), flushed.error().getMessage());
            assertEquals(42, flushed.error().wrId());
            assertEquals(p.a.qp.qpNumber(), flushed.error().qpNumber());
            assertNull(flushed.error().opcode(), "a flush reports no opcode: " + flushed.error().getMessage());
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Connection.class)
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void readBeyondTheRegisteredLengthFailsWithRemoteAccessError(Connection connection) {
        try (RxePair p = RxePair.connect(connection)) {
            long beyond = p.b.mr.length() + 64;  // the remote offset lies past the end of the region

            p.a.send.reset().wrId(51).opcode(SendOpcode.RDMA_READ).flags(SendFlags.SIGNALED)
                    .sge(0, p.a.mr, 0, 64).rdma(p.b.mr.address() + beyond, p.b.mr.rkey());
            p.a.qp.postSend(p.a.send);

            // the caller knows what it posted under wr_id 51: error(i, posted) names it
            WorkCompletionException error = Completions.awaitFailure(p.a.cq, WcOpcode.RDMA_READ);
            assertEquals(WcStatus.IBV_WC_REM_ACCESS_ERR, error.status(), error.getMessage());
            assertEquals(51, error.wrId());
            assertEquals(WcOpcode.RDMA_READ, error.opcode(), error.getMessage());
            assertTrue(error.getMessage().contains("opcode RDMA_READ"), error.getMessage());
            assertEquals(QpState.ERR, QpStates.await(p.a.qp, QpState.ERR, STATE_WAIT));
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void readThatRunsPastTheEndOfTheRegionFailsWithRemoteAccessError() {
        try (RxePair p = RxePair.connect(Connection.MANUAL)) {
            long start = p.b.mr.length() - 16;  // starts inside, ends 48 bytes past the end

            p.a.send.reset().wrId(52).opcode(SendOpcode.RDMA_READ).flags(SendFlags.SIGNALED)
                    .sge(0, p.a.mr, 0, 64).rdma(p.b.mr.address() + start, p.b.mr.rkey());
            p.a.qp.postSend(p.a.send);

            WorkCompletionException error = Completions.await(p.a.cq, 1).getFirst().error();
            assertNotNull(error, "a READ straddling the end of the region must fail");
            assertEquals(WcStatus.IBV_WC_REM_ACCESS_ERR, error.status(), error.getMessage());
            assertEquals(52, error.wrId());
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void regionRegisteredWithoutRemoteWriteCanBeReadButNotWritten() {
        Options readOnlyB = Options.defaults().withAccessB(EnumSet.of(Access.LOCAL_WRITE, Access.REMOTE_READ));
        try (RxePair p = RxePair.connect(Connection.MANUAL, readOnlyB)) {
            byte[] remote = pattern(128, 7);
            put(p.b.memory(), 0, remote);

            p.a.send.reset().wrId(61).opcode(SendOpcode.RDMA_READ).flags(SendFlags.SIGNALED)
                    .sge(0, p.a.mr, 0, 128).rdma(p.b.mr.address(), p.b.mr.rkey());
            p.a.qp.postSend(p.a.send);
            assertEquals(61, Completions.awaitSuccess(p.a.cq, 1).getFirst().wrId());
            assertArrayEquals(remote, get(p.a.memory(), 0, 128));

            put(p.a.memory(), 0, pattern(128, 8));
            p.a.send.reset().wrId(62).opcode(SendOpcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
                    .sge(0, p.a.mr, 0, 128).rdma(p.b.mr.address(), p.b.mr.rkey());
            p.a.qp.postSend(p.a.send);
            WorkCompletionException error = Completions.await(p.a.cq, 1).getFirst().error();
            assertNotNull(error, "a WRITE into a region without REMOTE_WRITE must fail");
            assertEquals(WcStatus.IBV_WC_REM_ACCESS_ERR, error.status(), error.getMessage());
            assertEquals(62, error.wrId());
            assertArrayEquals(remote, get(p.b.memory(), 0, 128), "the region is unchanged");
            assertNotEquals(QpState.RTS, QpStates.await(p.a.qp, QpState.ERR, STATE_WAIT));
        }
    }
}
