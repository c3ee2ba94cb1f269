package io.jrdma.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** Error paths that need no RDMA device: the messages a user sees on a machine without one. */
class HostErrorPathTest {
    private static final boolean KERNEL_HAS_RDMA = Files.isDirectory(Path.of("/sys/class/infiniband_verbs"));

    @Test
    void listingDevicesOnAKernelWithoutRdmaSaysSoInsteadOfReturningNothing() {
        if (KERNEL_HAS_RDMA) {
            // an RDMA-capable kernel answers with a list (maybe empty), never the ENOSYS path
            RdmaDevices.list();
            return;
        }
        NoRdmaDeviceException e = assertThrows(NoRdmaDeviceException.class, RdmaDevices::list);
        assertTrue(e.getMessage().contains("this kernel has no RDMA support"), e.getMessage());
        assertTrue(e.getMessage().contains("ENOSYS"), e.getMessage());
        // what to install and load, in general terms: an application's exception names no tool of jrdma's repository
        assertTrue(e.getMessage().contains("rdma-core") && e.getMessage().contains("modprobe rdma_rxe"), e.getMessage());
        assertFalse(e.getMessage().matches("(?s).*\\blab\\b.*"), e.getMessage());
    }

    @Test
    void openingANamedDeviceThatDoesNotExistIsATypedError() {
        NoRdmaDeviceException e = assertThrows(NoRdmaDeviceException.class, () -> RdmaDevices.open("no-such-device0"));
        assertTrue(KERNEL_HAS_RDMA || e.getMessage().contains("no RDMA support"), e.getMessage());
    }

    @Test
    void rdmaCmWithoutAKernelCmDeviceIsATypedError() {
        if (Files.exists(Path.of("/dev/infiniband/rdma_cm"))) {
            EventChannel.create().close();
            return;
        }
        RdmaException e = assertThrows(NoRdmaDeviceException.class, EventChannel::create);
        assertTrue(e.getMessage().contains("rdma_create_event_channel"), e.getMessage());
        // what is missing, and what to do: the kernel's RDMA (rdma-core, SoftRoCE), or only the rdma_cm module
        assertTrue(KERNEL_HAS_RDMA ? e.getMessage().contains("modprobe rdma_ucm") : e.getMessage().contains("modprobe rdma_rxe"), e.getMessage());
        assertFalse(e.getMessage().matches("(?s).*\\blab\\b.*"), e.getMessage());
    }

    @Test
    void verbsErrorsNameTheFunctionTheErrnoAndItsText() {
        VerbsException e = new VerbsException("ibv_modify_qp(QP 0x11 to RTR)", 22);
        assertEquals("ibv_modify_qp(QP 0x11 to RTR): Invalid argument (EINVAL 22)", e.getMessage());
        assertEquals("EINVAL", e.errnoName());
        assertEquals(22, e.errno());
    }

    @Test
    void aFullSendQueueIsReportedAsQueueFull() {
        QueueFullException e = new QueueFullException("ibv_post_send(QP 0x11)", 12);
        assertTrue(e.getMessage().contains("Cannot allocate memory (ENOMEM 12)"), e.getMessage());
        assertTrue(e.getMessage().contains("work queue is full"), e.getMessage());
    }

    @Test
    void aMemlockFailureExplainsTheLimitAndTheFix() {
        MemoryLockLimitException e = new MemoryLockLimitException("ibv_reg_mr", 12, 1 << 20, 65536);
        assertTrue(e.getMessage().contains("1048576 bytes exceeds the locked-memory limit (65536 bytes)"), e.getMessage());
        assertTrue(e.getMessage().contains("ulimit -l"), e.getMessage());
        assertEquals(65536, e.limitBytes());
    }

    @Test
    void theMemlockLimitIsReadFromTheKernel() {
        long limit = ProtectionDomain.memlockLimit();
        assertTrue(limit == -1 || limit >= 0, "RLIMIT_MEMLOCK " + limit);
    }

    @Test
    void workCompletionErrorsCarryTheVerbsStatusNameWrIdOpcodeAndQp() {
        WorkCompletionException e = new WorkCompletionException(WcStatus.IBV_WC_REM_ACCESS_ERR, 42, WcOpcode.RDMA_WRITE, 0x11, 0);
        assertEquals("IBV_WC_REM_ACCESS_ERR (remote access error) on QP 0x11, wr_id 42, opcode RDMA_WRITE, vendor_err 0x0",
                e.getMessage());
        assertEquals(WcStatus.IBV_WC_WR_FLUSH_ERR, WcStatus.of(5));
    }

    @Test
    void aWorkCompletionErrorWithoutAPostedOpcodeSaysTheOpcodeIsUnknownInsteadOfNamingOne() {
        WorkCompletionException e = new WorkCompletionException(WcStatus.IBV_WC_WR_FLUSH_ERR, 42, null, 0x11, 0);
        assertEquals("IBV_WC_WR_FLUSH_ERR (Work Request Flushed Error) on QP 0x11, wr_id 42,"
                + " opcode unknown (not reported for failed completions), vendor_err 0x0", e.getMessage());
        assertNull(e.opcode());
    }
}
