package io.jrdma.ffm.device;

import static io.jrdma.ffm.device.LabEnv.PORT;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.Access;
import io.jrdma.ffm.CmId;
import io.jrdma.ffm.CompletionChannel;
import io.jrdma.ffm.CompletionQueue;
import io.jrdma.ffm.Context;
import io.jrdma.ffm.EventChannel;
import io.jrdma.ffm.MemoryRegion;
import io.jrdma.ffm.PortSpace;
import io.jrdma.ffm.ProtectionDomain;
import io.jrdma.ffm.QpState;
import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.QueuePairInit;
import io.jrdma.ffm.RdmaDevices;
import io.jrdma.ffm.ReceiveWorkRequest;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.SendWorkRequest;
import io.jrdma.ffm.SharedReceiveQueue;
import java.lang.foreign.ValueLayout;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;

/** Close order, double close and use after close, on real verbs objects. */
@Tag("device")
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
class ResourceLifecycleTest {

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void closingAProtectionDomainWithAnOpenRegionThrowsAndReleasesNothing() {
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_A)) {
            ProtectionDomain pd = ctx.allocateProtectionDomain();
            MemoryRegion mr = pd.allocateRegistered(4096, Access.LOCAL_WRITE);

            IllegalStateException e = assertThrows(IllegalStateException.class, pd::close);
            assertTrue(e.getMessage().contains("close the 1 resource(s) created from ProtectionDomain"), e.getMessage());
            assertFalse(pd.isClosed(), "the PD stays open");
            assertFalse(mr.isClosed(), "the region stays registered");

            // both are still alive natively: the PD takes new objects, the region's memory is mapped
            mr.segment().set(ValueLayout.JAVA_LONG, 0, 0x0123456789abcdefL);
            assertEquals(0x0123456789abcdefL, mr.segment().get(ValueLayout.JAVA_LONG, 0));
            try (CompletionQueue cq = ctx.createCompletionQueue(4);
                 MemoryRegion second = pd.allocateRegistered(4096, Access.LOCAL_WRITE);
                 QueuePair qp = pd.createQueuePair(QueuePairInit.rc(cq))) {
                assertEquals(QpState.RESET, qp.state());
                assertTrue(second.lkey() != mr.lkey());
            }

            // closing the context under the PD is refused the same way
            assertThrows(IllegalStateException.class, ctx::close);
            assertFalse(ctx.isClosed());

            mr.close();
            pd.close();
            assertTrue(pd.isClosed());
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void creatingFromAClosedQueueIsRefusedBeforeTheKernelCanReuseItsHandle() {
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_A); ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            CompletionQueue closedCq = ctx.createCompletionQueue(4);
            closedCq.close();
            CompletionChannel closedChannel = ctx.createCompletionChannel();
            closedChannel.close();
            // a live CQ that would likely receive the closed one's kernel handle number
            try (CompletionQueue live = ctx.createCompletionQueue(4)) {
                assertThrows(IllegalStateException.class, () -> pd.createQueuePair(QueuePairInit.rc(closedCq)));
                assertThrows(IllegalStateException.class, () -> ctx.createCompletionQueue(4, closedChannel, 0));
                // nothing native was created behind the refusal: the live CQ has no QP attached
                assertDoesNotThrow(live::close);
            }
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void closingAnyResourceTwiceIsANoOp() {
        Context ctx = RdmaDevices.open(LabEnv.DEV_A);
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        CompletionChannel channel = ctx.createCompletionChannel();
        CompletionQueue cq = ctx.createCompletionQueue(8, channel, 0);
        SharedReceiveQueue srq = pd.createSharedReceiveQueue(8, 1, 0);
        MemoryRegion mr = pd.allocateRegistered(4096, Access.LOCAL_WRITE);
        QueuePair qp = pd.createQueuePair(QueuePairInit.rc(cq).sharedReceiveQueue(srq));
        EventChannel events = EventChannel.create();
        CmId id = CmId.create(events, PortSpace.TCP);

        // reverse order of creation; each close is followed by a second one that must do nothing
        for (AutoCloseable r : List.<AutoCloseable>of(id, events, qp, mr, srq, cq, channel, pd, ctx)) {
            assertDoesNotThrow(r::close, "first close of " + r);
            assertDoesNotThrow(r::close, "second close of " + r);
        }
        assertTrue(ctx.isClosed() && pd.isClosed() && cq.isClosed() && channel.isClosed() && srq.isClosed()
                && mr.isClosed() && qp.isClosed() && events.isClosed() && id.isClosed());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void usingAClosedQueuePairThrowsIllegalStateException() {
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_A);
             ProtectionDomain pd = ctx.allocateProtectionDomain();
             CompletionQueue cq = ctx.createCompletionQueue(8);
             MemoryRegion mr = pd.allocateRegistered(4096, Access.LOCAL_WRITE)) {
            QueuePair qp = pd.createQueuePair(QueuePairInit.rc(cq));
            qp.modifyToInit(PORT, RxePair.ALL_ACCESS);
            assertEquals(QpState.INIT, qp.state());
            qp.close();
            assertTrue(qp.isClosed());

            SendWorkRequest send = SendWorkRequest.allocate(1).wrId(1).opcode(SendOpcode.SEND).sge(0, mr, 0, 8);
            ReceiveWorkRequest recv = ReceiveWorkRequest.allocate(1).wrId(2).sge(0, mr, 0, 8);
            assertClosed(qp, () -> qp.postSend(send));
            assertClosed(qp, () -> qp.postReceive(recv));
            assertClosed(qp, qp::state);
            assertClosed(qp, qp::modifyToError);
            assertClosed(qp, () -> qp.modifyToInit(PORT, RxePair.ALL_ACCESS));
        }
    }

    private static void assertClosed(QueuePair qp, Executable use) {
        IllegalStateException e = assertThrows(IllegalStateException.class, use);
        assertTrue(e.getMessage().contains(qp.toString()) && e.getMessage().contains("closed"), e.getMessage());
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void aCompletionQueueInUseByAQueuePairCannotBeClosedUntilTheQueuePairIs() {
        try (Context ctx = RdmaDevices.open(LabEnv.DEV_A); ProtectionDomain pd = ctx.allocateProtectionDomain()) {
            CompletionQueue cq = ctx.createCompletionQueue(8);
            QueuePair qp = pd.createQueuePair(QueuePairInit.rc(cq));
            assertThrows(IllegalStateException.class, cq::close);
            assertFalse(cq.isClosed());
            assertEquals(QpState.RESET, qp.state(), "the QP is untouched");
            qp.close();
            cq.close();
            assertTrue(cq.isClosed());
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void aClosedProtectionDomainOrContextCreatesNothing() {
        Context ctx = RdmaDevices.open(LabEnv.DEV_A);
        CompletionQueue cq = ctx.createCompletionQueue(4);
        ProtectionDomain pd = ctx.allocateProtectionDomain();
        pd.close();
        assertThrows(IllegalStateException.class, () -> pd.allocateRegistered(4096, Access.LOCAL_WRITE));
        assertThrows(IllegalStateException.class, () -> pd.createQueuePair(QueuePairInit.rc(cq)));
        assertThrows(IllegalStateException.class, () -> pd.createSharedReceiveQueue(4, 1, 0));
        cq.close();
        ctx.close();
        assertThrows(IllegalStateException.class, ctx::allocateProtectionDomain);
        assertThrows(IllegalStateException.class, ctx::queryDevice);
        assertThrows(IllegalStateException.class, () -> ctx.queryPort(PORT));
    }
}
