package io.jrdma.ffm.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.jrdma.ffm.QueueFullException;
import io.jrdma.ffm.SendFlags;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.SendWorkRequest;
import io.jrdma.ffm.device.RxePair.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;

/** A full send queue is a typed, recoverable error that names the WR it refused. */
@Tag("device")
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
class QueueFullTest {

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void postingPastTheSendQueueRingThrowsQueueFullNamingTheRefusedWr() {
        try (RxePair p = RxePair.connect(Connection.MANUAL)) {
            // B posts no receive: every SEND is RNR-NAKed and retried forever, so none leaves the queue
            int granted = p.a.qp.capabilities().maxSendWr();
            QueueFullException full = null;
            int posted = 0;
            for (; posted < 4 * granted + 4; posted++) {
                p.a.send.reset().wrId(1000 + posted).opcode(SendOpcode.SEND).flags(SendFlags.SIGNALED).sge(0, p.a.mr, 0, 8);
                try {
                    p.a.qp.postSend(p.a.send);
                } catch (QueueFullException e) {
                    full = e;
                    break;
                }
            }
            if (full == null) fail("the send queue never filled: " + posted + " posts accepted, " + granted + " granted");
            assertTrue(posted >= granted, "only " + posted + " of the " + granted + " granted WRs could be posted");
            // rxe reports max_send_wr as asked (16) but sizes its ring to the next power of two
            // above it and holds one less: 31 WRs fit, the 32nd is refused with ENOMEM
            assertEquals(Integer.highestOneBit(granted) * 2 - 1, posted, "rxe's send ring for " + granted + " granted WRs");
            assertEquals(12, full.errno(), full.getMessage());
            assertEquals("ENOMEM", full.errnoName());
            assertTrue(full.getMessage().contains("bad wr_id " + (1000 + posted)), full.getMessage());
            Completions.assertNoneWithin(p.a.cq, Duration.ofMillis(100));

            // one receive lets the first SEND through: its slot frees and the refused WR posts
            p.b.postReceive(1, 0, 64);
            assertEquals(1000, Completions.awaitSuccess(p.a.cq, 1).getFirst().wrId());
            p.a.qp.postSend(p.a.send);
        }
    }

    /** ibv_post_send's bad_wr for a chain: the WRs before it were posted, and failedSendWrId() names it. */
    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void aChainThatOverflowsTheRingIsPostedUpToTheRefusedWrWhichFailedSendWrIdNames() {
        try (RxePair p = RxePair.connect(Connection.MANUAL)) {
            int ring = Integer.highestOneBit(p.a.qp.capabilities().maxSendWr()) * 2 - 1;  // see above
            for (int i = 0; i < ring - 1; i++) {  // B posts no receive: these stay in the ring
                p.a.send.reset().wrId(2000 + i).opcode(SendOpcode.SEND).flags(SendFlags.SIGNALED).sge(0, p.a.mr, 0, 8);
                p.a.qp.postSend(p.a.send);
            }
            SendWorkRequest second = SendWorkRequest.allocate(1).wrId(9002).opcode(SendOpcode.SEND).flags(SendFlags.SIGNALED)
                    .sge(0, p.a.mr, 8, 8);
            p.a.send.reset().wrId(9001).opcode(SendOpcode.SEND).flags(SendFlags.SIGNALED).sge(0, p.a.mr, 0, 8).next(second);
            QueueFullException full = assertThrows(QueueFullException.class, () -> p.a.qp.postSend(p.a.send));
            assertEquals(9002, p.a.qp.failedSendWrId(), full.getMessage());

            // the first WR of the chain took the last slot: ring WRs complete once B receives, the last of them 9001
            List<Long> ids = new ArrayList<>();
            int receives = p.b.qp.capabilities().maxRecvWr();
            while (ids.size() < ring) {
                int n = Math.min(receives, ring - ids.size());
                for (int i = 0; i < n; i++) p.b.postReceive(i, 0, 64);
                Completions.awaitSuccess(p.a.cq, n).forEach(wc -> ids.add(wc.wrId()));
            }
            assertEquals(9001L, ids.getLast(), "the chained WR before the refused one was posted");
            assertTrue(!ids.contains(9002L));
        }
    }
}
