package io.jrdma.ffm.device;

import static io.jrdma.ffm.device.Bytes.at;
import static io.jrdma.ffm.device.Bytes.get;
import static io.jrdma.ffm.device.Bytes.pattern;
import static io.jrdma.ffm.device.Bytes.put;
import static io.jrdma.ffm.device.Bytes.word;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.SendFlags;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.device.Completions.Completion;
import io.jrdma.ffm.device.RxePair.Connection;
import io.jrdma.ffm.device.RxePair.Side;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;
import org.junit.jupiter.api.parallel.Isolated;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every RC operation between rxe0 (A, requester) and rxe1 (B, responder), over a manually
 * connected pair and over an rdma_cm one.
 */
@Tag("device")
@Isolated
@Execution(ExecutionMode.SAME_THREAD)
class OperationsTest {
    private static final Duration ONE_SIDED_QUIET = Duration.ofMillis(100);

    @ParameterizedTest(name = "{0}")
    @EnumSource(Connection.class)
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void sendArrivesInThePostedReceiveWithItsPayloadAndByteLength(Connection connection) {
        try (RxePair p = RxePair.connect(connection)) {
            byte[] payload = pattern(100, 1);
            p.b.postReceive(7, 0, 1024);
            put(p.a.memory(), 0, payload);

            p.a.send.reset().wrId(1).opcode(SendOpcode.SEND).flags(SendFlags.SIGNALED).sge(0, p.a.mr, 0, payload.length);
            p.a.qp.postSend(p.a.send);

            Completion sent = Completions.awaitSuccess(p.a.cq, 1).getFirst();
            assertEquals(1, sent.wrId());
            assertEquals(WcOpcode.SEND, sent.opcode());
            assertEquals(p.a.qp.qpNumber(), sent.qpNumber());
            Completion received = Completions.awaitSuccess(p.b.cq, 1).getFirst();
            assertEquals(7, received.wrId());
            assertEquals(WcOpcode.RECV, received.opcode());
            assertEquals(payload.length, received.byteLength());
            assertFalse(received.hasImmediate());
            assertEquals(p.b.qp.qpNumber(), received.qpNumber());
            assertArrayEquals(payload, get(p.b.memory(), 0, payload.length));
            assertEquals(0, at(p.b.memory(), payload.length), "nothing written past the message");
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Connection.class)
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void sendWithImmediateDeliversPayloadAndTheExactImmediate(Connection connection) {
        int immediate = 0x8BADF00D;
        try (RxePair p = RxePair.connect(connection)) {
            byte[] payload = pattern(32, 2);
            p.b.postReceive(8, 0, 1024);
            put(p.a.memory(), 0, payload);

            p.a.send.reset().wrId(2).opcode(SendOpcode.SEND_WITH_IMM).flags(SendFlags.SIGNALED)
                    .sge(0, p.a.mr, 0, payload.length).immediate(immediate);
            p.a.qp.postSend(p.a.send);

            assertEquals(WcOpcode.SEND, Completions.awaitSuccess(p.a.cq, 1).getFirst().opcode());
            Completion received = Completions.awaitSuccess(p.b.cq, 1).getFirst();
            assertEquals(8, received.wrId());
            assertEquals(WcOpcode.RECV, received.opcode());
            assertTrue(received.hasImmediate(), received.toString());
            assertEquals(immediate, received.immediate(), "0x" + Integer.toHexString(received.immediate()));
            assertEquals(payload.length, received.byteLength());
            assertArrayEquals(payload, get(p.b.memory(), 0, payload.length));
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Connection.class)
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void rdmaWritePutsTheBytesIntoRemoteMemoryWithoutAReceiverCompletion(Connection connection) {
        try (RxePair p = RxePair.connect(connection)) {
            byte[] payload = pattern(200, 3);
            long remoteOffset = 512;
            put(p.a.memory(), 0, payload);

            p.a.send.reset().wrId(3).opcode(SendOpcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
                    .sge(0, p.a.mr, 0, payload.length).rdma(p.b.mr.address() + remoteOffset, p.b.mr.rkey());
            p.a.qp.postSend(p.a.send);

            Completion written = Completions.awaitSuccess(p.a.cq, 1).getFirst();
            assertEquals(3, written.wrId());
            assertEquals(WcOpcode.RDMA_WRITE, written.opcode());
            assertArrayEquals(payload, get(p.b.memory(), remoteOffset, payload.length));
            assertEquals(0, at(p.b.memory(), remoteOffset - 1), "byte before the target untouched");
            assertEquals(0, at(p.b.memory(), remoteOffset + payload.length), "byte after the target untouched");
            Completions.assertNoneWithin(p.b.cq, ONE_SIDED_QUIET);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Connection.class)
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void writeWithImmediateCompletesAsRecvRdmaWithImmCarryingTheImmediate(Connection connection) {
        int immediate = 0xCAFEBABE;
        try (RxePair p = RxePair.connect(connection)) {
            byte[] payload = pattern(64, 4);
            long remoteOffset = 1024;
            p.b.recv.reset().wrId(9).noSge();  // the immediate needs a receive, the data does not
            p.b.qp.postReceive(p.b.recv);
            put(p.a.memory(), 0, payload);

            p.a.send.reset().wrId(4).opcode(SendOpcode.RDMA_WRITE_WITH_IMM).flags(SendFlags.SIGNALED)
                    .sge(0, p.a.mr, 0, payload.length).rdma(p.b.mr.address() + remoteOffset, p.b.mr.rkey())
                    .immediate(immediate);
            p.a.qp.postSend(p.a.send);

            assertEquals(WcOpcode.RDMA_WRITE, Completions.awaitSuccess(p.a.cq, 1).getFirst().opcode());
            Completion received = Completions.awaitSuccess(p.b.cq, 1).getFirst();
            assertEquals(9, received.wrId());
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, received.opcode());
            assertTrue(received.hasImmediate(), received.toString());
            assertEquals(0xCAFEBABE, received.immediate(), "0x" + Integer.toHexString(received.immediate()));
            assertEquals(payload.length, received.byteLength(), "byte_len of a WRITE_WITH_IMM is the written length");
            assertArrayEquals(payload, get(p.b.memory(), remoteOffset, payload.length));
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Connection.class)
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void rdmaReadFetchesAByteRangeFromTheMiddleOfRemoteMemory(Connection connection) {
        try (RxePair p = RxePair.connect(connection)) {
            byte[] remote = pattern(RxePair.BUFFER_BYTES, 5);
            put(p.b.memory(), 0, remote);
            long remoteOffset = 1000, localOffset = 2000;
            int length = 300;

            p.a.send.reset().wrId(5).opcode(SendOpcode.RDMA_READ).flags(SendFlags.SIGNALED)
                    .sge(0, p.a.mr, localOffset, length).rdma(p.b.mr.address() + remoteOffset, p.b.mr.rkey());
            p.a.qp.postSend(p.a.send);

            Completion read = Completions.awaitSuccess(p.a.cq, 1).getFirst();
            assertEquals(5, read.wrId());
            assertEquals(WcOpcode.RDMA_READ, read.opcode());
            assertEquals(length, read.byteLength());
            assertArrayEquals(get(p.b.memory(), remoteOffset, length), get(p.a.memory(), localOffset, length));
            assertEquals(0, at(p.a.memory(), localOffset - 1), "byte before the local target untouched");
            assertEquals(0, at(p.a.memory(), localOffset + length), "byte after the local target untouched");
            Completions.assertNoneWithin(p.b.cq, ONE_SIDED_QUIET);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Connection.class)
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void compareAndSwapReturnsTheOldValueAndSwapsOnlyWhenItMatches(Connection connection) {
        try (RxePair p = RxePair.connect(connection)) {
            assertTrue(p.a.context.queryDevice().supportsAtomics(), "rxe advertises atomics");
            long remoteOffset = 64, localOffset = 128;
            long initial = 0x1122334455667788L, swapped = 0x0102030405060708L;
            word(p.b.memory(), remoteOffset, initial);
            word(p.a.memory(), localOffset, -1L);

            compareAndSwap(p, 10, remoteOffset, localOffset, initial, swapped);
            Completion cas = Completions.awaitSuccess(p.a.cq, 1).getFirst();
            assertEquals(10, cas.wrId());
            assertEquals(WcOpcode.COMP_SWAP, cas.opcode());
            assertEquals(8, cas.byteLength());
            assertEquals(initial, word(p.a.memory(), localOffset), "the old value comes back");
            assertEquals(swapped, word(p.b.memory(), remoteOffset), "the remote word was swapped");

            // a compare value that does not match: the old value comes back, nothing is swapped
            compareAndSwap(p, 11, remoteOffset, localOffset, initial, 42L);
            assertEquals(11, Completions.awaitSuccess(p.a.cq, 1).getFirst().wrId());
            assertEquals(swapped, word(p.a.memory(), localOffset));
            assertEquals(swapped, word(p.b.memory(), remoteOffset), "no swap on a mismatch");
        }
    }

    private static void compareAndSwap(RxePair p, long wrId, long remoteOffset, long localOffset, long compare, long swap) {
        Side a = p.a;
        a.send.reset().wrId(wrId).opcode(SendOpcode.ATOMIC_CMP_AND_SWP).flags(SendFlags.SIGNALED)
                .sge(0, a.mr, localOffset, 8).atomic(p.b.mr.address() + remoteOffset, p.b.mr.rkey(), compare, swap);
        a.qp.postSend(a.send);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Connection.class)
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = ThreadMode.SEPARATE_THREAD)
    void fetchAndAddReturnsTheOldValueAndAddsToTheRemoteWord(Connection connection) {
        try (RxePair p = RxePair.connect(connection)) {
            long remoteOffset = 256, localOffset = 512;
            word(p.b.memory(), remoteOffset, 1000L);

            fetchAndAdd(p, 20, remoteOffset, localOffset, 42L);
            Completion add = Completions.awaitSuccess(p.a.cq, 1).getFirst();
            assertEquals(20, add.wrId());
            assertEquals(WcOpcode.FETCH_ADD, add.opcode());
            assertEquals(8, add.byteLength());
            assertEquals(1000L, word(p.a.memory(), localOffset));
            assertEquals(1042L, word(p.b.memory(), remoteOffset));

            // the addend is 64-bit and wraps like an unsigned add
            fetchAndAdd(p, 21, remoteOffset, localOffset, -1043L);
            assertEquals(21, Completions.awaitSuccess(p.a.cq, 1).getFirst().wrId());
            assertEquals(1042L, word(p.a.memory(), localOffset));
            assertEquals(-1L, word(p.b.memory(), remoteOffset));
        }
    }

    private static void fetchAndAdd(RxePair p, long wrId, long remoteOffset, long localOffset, long add) {
        Side a = p.a;
        a.send.reset().wrId(wrId).opcode(SendOpcode.ATOMIC_FETCH_AND_ADD).flags(SendFlags.SIGNALED)
                .sge(0, a.mr, localOffset, 8).atomic(p.b.mr.address() + remoteOffset, p.b.mr.rkey(), add, 0);
        a.qp.postSend(a.send);
    }
}
