package io.jrdma.ffm.device;

import static io.jrdma.ffm.device.Bytes.get;
import static io.jrdma.ffm.device.Bytes.pattern;
import static io.jrdma.ffm.device.Bytes.put;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.SendFlags;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.device.Completions.Completion;
import io.jrdma.ffm.device.RxePair.Connection;
import io.jrdma.ffm.device.RxePair.Options;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** B's QP takes its receives from a shared receive queue instead of its own receive queue. */
@Tag("device")
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
class SharedReceiveQueueTest {

    @ParameterizedTest(name = "{0}")
    @EnumSource(Connection.class)
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void twoReceivesPostedOnTheSharedReceiveQueueReceiveTwoSendsInOrder(Connection connection) {
        try (RxePair p = RxePair.connect(connection, Options.defaults().withSharedReceiveQueueOnB())) {
            assertNotNull(p.b.srq);
            assertTrue(p.b.srq.maxWr() >= 16, "granted SRQ size " + p.b.srq.maxWr());
            p.b.postReceive(101, 0, 512);    // both go to the SRQ, not to B's QP
            p.b.postReceive(102, 512, 512);

            byte[] first = pattern(40, 9), second = pattern(70, 10);
            put(p.a.memory(), 0, first);
            put(p.a.memory(), 1024, second);
            p.a.send.reset().wrId(1).opcode(SendOpcode.SEND).flags(SendFlags.SIGNALED).sge(0, p.a.mr, 0, first.length);
            p.a.qp.postSend(p.a.send);
            p.a.send.reset().wrId(2).opcode(SendOpcode.SEND).flags(SendFlags.SIGNALED).sge(0, p.a.mr, 1024, second.length);
            p.a.qp.postSend(p.a.send);

            assertEquals(List.of(1L, 2L), Completions.awaitSuccess(p.a.cq, 2).stream().map(Completion::wrId).toList());
            List<Completion> received = Completions.awaitSuccess(p.b.cq, 2);
            assertEquals(List.of(101L, 102L), received.stream().map(Completion::wrId).toList(), "SRQ receives are consumed in order");
            for (Completion c : received) {
                assertEquals(WcOpcode.RECV, c.opcode());
                assertEquals(p.b.qp.qpNumber(), c.qpNumber(), "the completion names the QP the SRQ served");
            }
            assertEquals(first.length, received.get(0).byteLength());
            assertEquals(second.length, received.get(1).byteLength());
            assertArrayEquals(first, get(p.b.memory(), 0, first.length));
            assertArrayEquals(second, get(p.b.memory(), 512, second.length));
        }
    }
}
