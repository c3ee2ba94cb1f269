package io.jrdma.ffm;

import static io.jrdma.ffm.abi.Verbs.*;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.Verbs;
import io.jrdma.ffm.abi.VerbsCalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A pre-allocated array of {@code struct ibv_wc} that {@link CompletionQueue#poll} fills in
 * place; read entry {@code i} with the accessors. Polling allocates nothing.
 * Not thread-safe: one poller owns it.
 */
public final class WorkCompletions {
    private static final long WC_SIZE = Verbs.ibv_wc.byteSize();
    private final MemorySegment array;
    private final int capacity;

    private WorkCompletions(MemorySegment array, int capacity) {
        this.array = array;
        this.capacity = capacity;
    }

    public static WorkCompletions allocate(int capacity) {
        return allocate(Arena.ofAuto(), capacity);
    }

    public static WorkCompletions allocate(Arena arena, int capacity) {
        if (capacity < 1) throw new IllegalArgumentException("capacity must be positive");
        return new WorkCompletions(arena.allocate(Verbs.ibv_wc, capacity), capacity);
    }

    public int capacity() {
        return capacity;
    }

    MemorySegment segment() {
        return array;
    }

    private static long at(int i) {
        return i * WC_SIZE;
    }

    public long wrId(int i) {
        return (long) ibv_wc_wr_id.get(array, at(i));
    }

    public int statusValue(int i) {
        return (int) ibv_wc_status.get(array, at(i));
    }

    public WcStatus status(int i) {
        return WcStatus.of(statusValue(i));
    }

    public boolean isSuccess(int i) {
        return statusValue(i) == IBV_WC_SUCCESS;
    }

    public int opcodeValue(int i) {
        return (int) ibv_wc_opcode.get(array, at(i));
    }

    public WcOpcode opcode(int i) {
        return WcOpcode.of(opcodeValue(i));
    }

    public int vendorError(int i) {
        return (int) ibv_wc_vendor_err.get(array, at(i));
    }

    public int byteLength(int i) {
        return (int) ibv_wc_byte_len.get(array, at(i));
    }

    public boolean hasImmediate(int i) {
        return (wcFlags(i) & IBV_WC_WITH_IMM) != 0;
    }

    /** The immediate value in host order (the wire carries it big-endian, as C's ntohl sees it). */
    public int immediateData(int i) {
        return (int) ibv_wc_imm_data.get(array, at(i));
    }

    public int qpNumber(int i) {
        return (int) ibv_wc_qp_num.get(array, at(i));
    }

    public int sourceQp(int i) {
        return (int) ibv_wc_src_qp.get(array, at(i));
    }

    public int wcFlags(int i) {
        return (int) ibv_wc_wc_flags.get(array, at(i));
    }

    public int pkeyIndex(int i) {
        return Short.toUnsignedInt((short) ibv_wc_pkey_index.get(array, at(i)));
    }

    public int sourceLid(int i) {
        return Short.toUnsignedInt((short) ibv_wc_slid.get(array, at(i)));
    }

    public int serviceLevel(int i) {
        return Byte.toUnsignedInt((byte) ibv_wc_sl.get(array, at(i)));
    }

    public int dlidPathBits(int i) {
        return Byte.toUnsignedInt((byte) ibv_wc_dlid_path_bits.get(array, at(i)));
    }

    /**
     * The typed error of a failed entry, its opcode unknown: ibv_poll_cq(3) defines only wr_id,
     * status, qp_num and vendor_err for a completion that failed, and rxe leaves 0
     * (IBV_WC_SEND) in {@code ibv_wc.opcode} of every error and flush, whatever was posted.
     */
    public WorkCompletionException error(int i) {
        return error(i, null);
    }

    /**
     * The typed error of a failed entry, carrying the opcode the caller posted under its wr_id
     * (the completion itself does not report one), or null if it is not known.
     */
    public WorkCompletionException error(int i, WcOpcode postedOpcode) {
        return new WorkCompletionException(status(i), wrId(i), postedOpcode, qpNumber(i), vendorError(i));
    }

    static String statusString(int status) {
        try {
            return ((MemorySegment) VerbsCalls.ibv_wc_status_str.invokeExact(status)).reinterpret(128).getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }
}
