package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDataPath.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A setter skips the store when native memory already holds its value (the WR keeps a copy):
 * whatever sequence of setters ran, the struct and its SGEs must hold exactly what storing every
 * value would have left there, also where the wr union's members overlap (an atomic or UD target
 * after an RDMA one, and back) and across reset(). Host only: the reference is written through
 * {@link VerbsDataPath}' field handles, store by store.
 */
class SendWorkRequestTest {
    private static final int MAX_SGE = 3;
    private static final long SG_LIST = ibv_send_wr.byteOffset(PathElement.groupElement("sg_list"));

    @Test
    void anySequenceOfSettersLeavesWhatStoringEveryValueLeaves() {
        try (Arena arena = Arena.ofConfined()) {
            SendWorkRequest wr = SendWorkRequest.allocate(arena, MAX_SGE);
            SendWorkRequest other = SendWorkRequest.allocate(arena, 1);
            MemorySegment ref = arena.allocate(ibv_send_wr);
            MemorySegment refSges = arena.allocate(ibv_sge, MAX_SGE);
            Random random = new Random(42);
            for (int step = 0; step < 200_000; step++) {
                // few distinct values, so that most stores repeat what is there
                long v = random.nextInt(3);
                int k = random.nextInt(MAX_SGE);
                String what = switch (random.nextInt(11)) {
                    case 0 -> {
                        wr.wrId(v << 40 | v);
                        ibv_send_wr_wr_id.set(ref, v << 40 | v);
                        yield "wrId";
                    }
                    case 1 -> {
                        SendOpcode op = SendOpcode.values()[(int) v];
                        wr.opcode(op);
                        ibv_send_wr_opcode.set(ref, op.value);
                        yield "opcode";
                    }
                    case 2 -> {
                        wr.flags((int) v);
                        ibv_send_wr_send_flags.set(ref, (int) v);
                        yield "flags";
                    }
                    case 3 -> {
                        wr.sge(k, 0x1000 * v, (int) v, (int) v + 7);
                        long at = k * ibv_sge.byteSize();
                        ibv_sge_addr.set(refSges, at, 0x1000 * v);
                        ibv_sge_length.set(refSges, at, (int) v);
                        ibv_sge_lkey.set(refSges, at, (int) v + 7);
                        ibv_send_wr_num_sge.set(ref, k + 1);
                        yield "sge " + k;
                    }
                    case 4 -> {
                        wr.noSge();
                        ibv_send_wr_num_sge.set(ref, 0);
                        yield "noSge";
                    }
                    case 5 -> {
                        wr.immediate((int) v - 1);
                        ibv_send_wr_imm_data.set(ref, (int) v - 1);
                        yield "immediate";
                    }
                    case 6 -> {
                        wr.rdma(0x2000 * v, (int) v);
                        ibv_send_wr_wr_rdma_remote_addr.set(ref, 0x2000 * v);
                        ibv_send_wr_wr_rdma_rkey.set(ref, (int) v);
                        yield "rdma";
                    }
                    case 7 -> {
                        wr.atomic(0x2000 * v, (int) v, v == 0 ? 0 : -1L, v);
                        ibv_send_wr_wr_atomic_remote_addr.set(ref, 0x2000 * v);
                        ibv_send_wr_wr_atomic_rkey.set(ref, (int) v);
                        ibv_send_wr_wr_atomic_compare_add.set(ref, v == 0 ? 0 : -1L);
                        ibv_send_wr_wr_atomic_swap.set(ref, v);
                        yield "atomic";
                    }
                    case 8 -> {
                        MemorySegment ah = MemorySegment.ofAddress(0x3000 * v);
                        wr.ud(ah, (int) v, (int) v);
                        ibv_send_wr_wr_ud_ah.set(ref, ah);
                        ibv_send_wr_wr_ud_remote_qpn.set(ref, (int) v);
                        ibv_send_wr_wr_ud_remote_qkey.set(ref, (int) v);
                        yield "ud";
                    }
                    case 9 -> {
                        wr.next(v == 0 ? null : other);
                        ibv_send_wr_next.set(ref, v == 0 ? MemorySegment.NULL : other.segment());
                        yield "next";
                    }
                    default -> {
                        if (v != 0) yield "nothing";
                        wr.reset();
                        ref.fill((byte) 0);  // the SGEs are not cleared, in either
                        yield "reset";
                    }
                };
                assertSame(ref, refSges, wr, step + ": " + what);
            }
        }
    }

    @Test
    void aFreshWrAndAResetOneHoldZerosAndTheirOwnSgList() {
        try (Arena arena = Arena.ofConfined()) {
            SendWorkRequest wr = SendWorkRequest.allocate(arena, 1);
            MemorySegment sgList = (MemorySegment) ibv_send_wr_sg_list.get(wr.segment());
            wr.wrId(5).opcode(SendOpcode.RDMA_WRITE).flags(SendFlags.SIGNALED).rdma(9, 9).immediate(3).reset();
            for (long at = 0; at < ibv_send_wr.byteSize(); at++) {
                if (at >= SG_LIST && at < SG_LIST + 8) continue;
                assertEquals(0, wr.segment().get(ValueLayout.JAVA_BYTE, at), "byte " + at);
            }
            assertEquals(sgList.address(), ((MemorySegment) ibv_send_wr_sg_list.get(wr.segment())).address());
            // values equal to the zeros a reset left are not stored again, and need not be
            wr.wrId(0).opcode(SendOpcode.RDMA_WRITE).rdma(0, 0).wrId(7);
            assertEquals(7L, wr.wrId());
        }
    }

    private static void assertSame(MemorySegment ref, MemorySegment refSges, SendWorkRequest wr, String step) {
        MemorySegment actual = wr.segment();
        MemorySegment sges = ((MemorySegment) ibv_send_wr_sg_list.get(actual)).reinterpret(ibv_sge.byteSize() * MAX_SGE);
        byte[] expected = ref.toArray(ValueLayout.JAVA_BYTE);
        byte[] got = actual.toArray(ValueLayout.JAVA_BYTE);
        // sg_list points at each WR's own array
        for (int i = 0; i < 8; i++) got[(int) SG_LIST + i] = expected[(int) SG_LIST + i];
        if (!java.util.Arrays.equals(expected, got)) {
            assertEquals(HexFormat.of().formatHex(expected), HexFormat.of().formatHex(got), "the WR after step " + step);
        }
        assertArrayEquals(refSges.toArray(ValueLayout.JAVA_BYTE), sges.toArray(ValueLayout.JAVA_BYTE), "the SGEs after step " + step);
    }
}
