package io.jrdma.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.abi.VerbsDataPath;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Test;

/**
 * The accessors read the heap copy a poll makes of the entries it filled: every field must read
 * what the struct's own layout (the reference, as a provider writes it) holds, in every entry,
 * with wr_id's high half, imm_data's network order and unsigned 32-bit values intact. Host only:
 * the entries are written through {@link VerbsDataPath}' field handles, as ibv_poll_cq would.
 */
class WorkCompletionsTest {
    private static final int ENTRIES = 3;

    @Test
    void everyFieldOfEveryFilledEntryReadsWhatTheStructHolds() {
        try (Arena arena = Arena.ofConfined()) {
            WorkCompletions wcs = WorkCompletions.allocate(arena, ENTRIES);
            for (int i = 0; i < ENTRIES; i++) write(wcs.segment(), i);
            wcs.filled(ENTRIES);
            for (int i = 0; i < ENTRIES; i++) {
                assertEquals(0x8123_4567_0000_0000L | 0x89ab_cd00L | i, wcs.wrId(i), "wr_id of entry " + i);
                assertEquals(i == 1 ? WcStatus.IBV_WC_REM_ACCESS_ERR.value() : 0, wcs.statusValue(i), "status of entry " + i);
                assertEquals(i == 1, !wcs.isSuccess(i));
                assertEquals(WcOpcode.RECV_RDMA_WITH_IMM.value(), wcs.opcodeValue(i));
                assertEquals(0xf000_0000 | i, wcs.vendorError(i));
                assertEquals(4096 + i, wcs.byteLength(i));
                assertEquals(0x0102_0300 | i, wcs.immediateData(i), "imm_data, host order, of entry " + i);
                assertEquals(0x00ab_cd00 | i, wcs.qpNumber(i));
                assertEquals(0x00fe_dc00 | i, wcs.sourceQp(i));
                assertEquals(i == 2 ? 0 : VerbsDataPath.IBV_WC_WITH_IMM, wcs.wcFlags(i));
                assertEquals(i != 2, wcs.hasImmediate(i));
                assertEquals(0xfff0 | i, wcs.pkeyIndex(i));
                assertEquals(0x8000 | i, wcs.sourceLid(i));
                assertEquals(0x80 | i, wcs.serviceLevel(i));
            }
        }
    }

    @Test
    void aLaterPollOverwritesWhatAnEarlierOneFilled() {
        try (Arena arena = Arena.ofConfined()) {
            WorkCompletions wcs = WorkCompletions.allocate(arena, ENTRIES);
            for (int i = 0; i < ENTRIES; i++) write(wcs.segment(), i);
            wcs.filled(ENTRIES);
            VerbsDataPath.ibv_wc_wr_id.set(wcs.segment(), 0L, 42L);
            VerbsDataPath.ibv_wc_wc_flags.set(wcs.segment(), 0L, 0);
            wcs.filled(1);
            assertEquals(42L, wcs.wrId(0));
            assertFalse(wcs.hasImmediate(0));
            assertTrue(wcs.hasImmediate(1), "entry 1 is as the earlier poll left it");
        }
    }

    private static void write(MemorySegment array, int i) {
        long at = i * VerbsDataPath.ibv_wc.byteSize();
        VerbsDataPath.ibv_wc_wr_id.set(array, at, 0x8123_4567_0000_0000L | 0x89ab_cd00L | i);
        VerbsDataPath.ibv_wc_status.set(array, at, i == 1 ? WcStatus.IBV_WC_REM_ACCESS_ERR.value() : 0);
        VerbsDataPath.ibv_wc_opcode.set(array, at, WcOpcode.RECV_RDMA_WITH_IMM.value());
        VerbsDataPath.ibv_wc_vendor_err.set(array, at, 0xf000_0000 | i);
        VerbsDataPath.ibv_wc_byte_len.set(array, at, 4096 + i);
        VerbsDataPath.ibv_wc_imm_data.set(array, at, 0x0102_0300 | i);
        VerbsDataPath.ibv_wc_qp_num.set(array, at, 0x00ab_cd00 | i);
        VerbsDataPath.ibv_wc_src_qp.set(array, at, 0x00fe_dc00 | i);
        VerbsDataPath.ibv_wc_wc_flags.set(array, at, i == 2 ? 0 : VerbsDataPath.IBV_WC_WITH_IMM);
        VerbsDataPath.ibv_wc_pkey_index.set(array, at, (short) (0xfff0 | i));
        VerbsDataPath.ibv_wc_slid.set(array, at, (short) (0x8000 | i));
        VerbsDataPath.ibv_wc_sl.set(array, at, (byte) (0x80 | i));
    }
}
