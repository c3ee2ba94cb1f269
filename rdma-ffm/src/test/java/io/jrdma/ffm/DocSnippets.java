package io.jrdma.ffm;

import java.net.InetAddress;
import java.util.EnumSet;

/**
 * The code blocks of docs/ that use rdma-ffm alone, between the README markers, compiled with the
 * tests and never run (they need a peer that exchanges addresses out of band): if the API they show
 * changes, the build fails here, and ReadmeSnippetTest fails if a page and these lines differ.
 */
final class DocSnippets {
    private DocSnippets() {
    }

    /** docs/ffm.md, "rdma-ffm in one screen": the peer's address, buffer and rkey come from an exchange it leaves out. */
    static void rdmaFfmInOneScreen(QueuePairAddress peer, long remoteAddress, int remoteRkey) throws Exception {
        // README: rdma-ffm in one screen
        try (Context ctx = RdmaDevices.open("rxe0");
             ProtectionDomain pd = ctx.allocateProtectionDomain();
             CompletionQueue cq = ctx.createCompletionQueue(64);
             MemoryRegion mr = pd.allocateRegistered(4096, Access.LOCAL_WRITE);
             QueuePair qp = pd.createQueuePair(QueuePairInit.rc(cq).sendQueue(32, 1).receiveQueue(32, 1))) {
            Gid gid = ctx.roceV2Gid(1, InetAddress.getByName("10.77.0.1"));
            QueuePairAddress me = new QueuePairAddress(qp.qpNumber(), 0x1234, 0, gid.raw());
            // ... exchange QueuePairAddress with the peer out of band, then:
            qp.modifyToInit(1, EnumSet.of(Access.REMOTE_WRITE, Access.REMOTE_READ));
            qp.modifyToRtr(RtrAttributes.of(peer, 1, gid.index()));
            qp.modifyToRts(RtsAttributes.of(me.psn()));
            SendWorkRequest wr = SendWorkRequest.allocate(1);          // allocated once, patched per post
            wr.reset().wrId(1).opcode(SendOpcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
              .sge(0, mr, 0, 64).rdma(remoteAddress, remoteRkey);
            qp.postSend(wr);
            WorkCompletions wcs = WorkCompletions.allocate(16);        // polled in place
            int n = cq.poll(wcs);
            if (n > 0 && !wcs.isSuccess(0)) throw wcs.error(0);        // e.g. IBV_WC_REM_ACCESS_ERR on QP 0x11, wr_id 1, ...
        }
        // README end
    }
}
