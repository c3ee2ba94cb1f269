package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import org.junit.jupiter.api.Test;

/** How an error completion becomes the exception an operation's Mono fails with. */
class RdmaOperationExceptionTest {
    private static RdmaOperationException failed(WcStatus status, WcOpcode inTheWc, WcOpcode posted) {
        return RdmaOperationException.of(new WorkCompletion(7, status, inTheWc, 0, false, 0, 0x11, 0), posted);
    }

    @Test
    void theCommonErrorStatusesBecomeNamedExceptions() {
        assertSame(RdmaOperationException.RemoteAccessException.class,
                failed(WcStatus.IBV_WC_REM_ACCESS_ERR, WcOpcode.RDMA_WRITE, WcOpcode.RDMA_WRITE).getClass());
        assertSame(RdmaOperationException.RetryExceededException.class,
                failed(WcStatus.IBV_WC_RETRY_EXC_ERR, WcOpcode.SEND, WcOpcode.SEND).getClass());
        assertSame(RdmaOperationException.ReceiverNotReadyException.class,
                failed(WcStatus.IBV_WC_RNR_RETRY_EXC_ERR, WcOpcode.SEND, WcOpcode.SEND).getClass());
        assertSame(RdmaOperationException.FlushedException.class,
                failed(WcStatus.IBV_WC_WR_FLUSH_ERR, WcOpcode.RDMA_READ, WcOpcode.RDMA_READ).getClass());
        assertSame(RdmaOperationException.class, failed(WcStatus.IBV_WC_LOC_PROT_ERR, WcOpcode.SEND, WcOpcode.SEND).getClass(),
                "the other statuses keep the general type, with the status to tell them apart");
    }

    @Test
    void anErrorNamesThePostedOpcodeBecauseTheCompletionsOwnIsUndefined() {
        // verbs.h: on error only wr_id, status, qp_num and vendor_err are valid; rxe leaves opcode as it was
        RdmaOperationException e = failed(WcStatus.IBV_WC_REM_ACCESS_ERR, WcOpcode.RECV, WcOpcode.RDMA_READ);
        assertEquals(WcOpcode.RDMA_READ, e.opcode());
        assertEquals(WcStatus.IBV_WC_REM_ACCESS_ERR, e.status());
        assertEquals(7, e.wrId());
        assertEquals(0x11, e.qpNumber());
        assertTrue(e.getMessage().startsWith("IBV_WC_REM_ACCESS_ERR (remote access error) on QP 0x11, wr_id 7, opcode RDMA_READ"),
                e.getMessage());
        assertTrue(e.getMessage().contains("wrong rkey"), e.getMessage());
    }

    @Test
    void anErrorTakenWhileTheConnectionClosedNamesWhyInItsMessageAndCause() {
        ConnectionException.Closed gone = new ConnectionException.Closed("rdma_cm 10.77.0.1:0 -> 10.77.0.2:7471: the peer disconnected");
        WorkCompletion flush = new WorkCompletion(7, WcStatus.IBV_WC_WR_FLUSH_ERR, WcOpcode.SEND, 0, false, 0, 0x11, 0);
        RdmaOperationException flushed = RdmaOperationException.of(flush, WcOpcode.RDMA_READ, gone);
        assertSame(gone, flushed.getCause());
        // who left and what did not run, in one sentence; the verbs details on the accessors, not in it
        assertEquals("the RDMA READ did not run: the connection closed first: rdma_cm 10.77.0.1:0 -> 10.77.0.2:7471: the peer disconnected",
                flushed.getMessage());
        assertEquals(WcStatus.IBV_WC_WR_FLUSH_ERR, flushed.status());
        assertEquals(7, flushed.wrId());
        assertEquals(WcOpcode.RDMA_READ, flushed.opcode());
        assertEquals(0x11, flushed.qpNumber());
        assertEquals(0, flushed.vendorError());
        assertTrue(RdmaOperationException.of(flush, WcOpcode.SEND).getMessage().startsWith("IBV_WC_WR_FLUSH_ERR"),
                "without a known cause the completion is all there is to tell");
        WorkCompletion refused = new WorkCompletion(8, WcStatus.IBV_WC_REM_ACCESS_ERR, WcOpcode.SEND, 0, false, 0, 0x11, 0);
        RdmaOperationException remote = RdmaOperationException.of(refused, WcOpcode.RDMA_READ, gone);
        assertTrue(remote.getMessage().startsWith("IBV_WC_REM_ACCESS_ERR"), remote.getMessage());
        assertTrue(remote.getMessage().endsWith("; meanwhile: rdma_cm 10.77.0.1:0 -> 10.77.0.2:7471: the peer disconnected"),
                "both the verbs status and the peer's departure: " + remote.getMessage());
        assertTrue(RdmaOperationException.of(refused, WcOpcode.RDMA_READ, null).getMessage().contains("a region the peer deregistered"),
                "without a departure, the causes a remote access error can have");
        assertSame(null, RdmaOperationException.of(flush, WcOpcode.SEND).getCause());
    }

    @Test
    void aLocalQpOperationErrorAsksWhetherTheLinkIsDown() {
        // what SoftRoCE reports for a work request it cannot transmit (LinkFaultTest takes the link down)
        RdmaOperationException e = failed(WcStatus.IBV_WC_LOC_QP_OP_ERR, WcOpcode.SEND, WcOpcode.RDMA_WRITE);
        assertSame(RdmaOperationException.class, e.getClass());
        assertTrue(e.getMessage().startsWith("IBV_WC_LOC_QP_OP_ERR"), e.getMessage());
        assertTrue(e.getMessage().contains("is the network link down?"), e.getMessage());
        ConnectionException.Closed closing = new ConnectionException.Closed("QP 0x11 is closed");
        RdmaOperationException meanwhile = RdmaOperationException.of(
                new WorkCompletion(7, WcStatus.IBV_WC_LOC_QP_OP_ERR, WcOpcode.SEND, 0, false, 0, 0x11, 0), WcOpcode.RDMA_WRITE, closing);
        assertTrue(meanwhile.getMessage().contains("is the network link down?") && meanwhile.getMessage().endsWith("QP 0x11 is closed"),
                meanwhile.getMessage());
        assertSame(closing, meanwhile.getCause());
    }

    @Test
    void theDevicesVendorErrorIsCarriedIntoTheExceptionAndItsMessage() {
        // a device explains a status further with its own code (mlx5: the error CQE's syndrome)
        WorkCompletion wc = new WorkCompletion(7, WcStatus.IBV_WC_LOC_PROT_ERR, WcOpcode.SEND, 0, false, 0, 0x11, 0x88);
        RdmaOperationException e = RdmaOperationException.of(wc, WcOpcode.RDMA_WRITE);
        assertEquals(0x88, e.vendorError());
        assertTrue(e.getMessage().contains("vendor_err 0x88"), e.getMessage());
        RdmaOperationException.RemoteAccessException named = assertInstanceOf(RdmaOperationException.RemoteAccessException.class,
                RdmaOperationException.of(new WorkCompletion(8, WcStatus.IBV_WC_REM_ACCESS_ERR, WcOpcode.SEND, 0, false, 0, 0x11, 0x13),
                        WcOpcode.RDMA_READ));
        assertEquals(0x13, named.vendorError(), "the named subclasses carry it too, beside the posted opcode");
        assertEquals(WcOpcode.RDMA_READ, named.opcode());
    }
}
