package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDataPath.*;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.VerbsCalls;
import io.jrdma.ffm.abi.VerbsDataPath;
import java.lang.foreign.Arena;
import java.lang.foreign.MemoryLayout.PathElement;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import org.jspecify.annotations.Nullable;

/**
 * A pre-allocated array of {@code struct ibv_wc} that {@link CompletionQueue#poll} fills in
 * place; read entry {@code i} with the accessors. Polling allocates nothing.
 * Not thread-safe: one poller owns it.
 *
 * <p>The 32-bit fields every consumer reads (wr_id, status, opcode, vendor_err, byte_len,
 * imm_data, qp_num, src_qp, wc_flags) are read from a heap copy that the poll makes of the
 * entries it filled, in one bulk copy: a field is then an array read, where a segment accessor
 * costs a chain of checks that C1 (the lab's JIT) does not inline. The UD-only 8- and 16-bit
 * fields are read from the native array.
 */
public final class WorkCompletions {
    private static final long WC_SIZE = VerbsDataPath.ibv_wc.byteSize();
    /** An entry's 32-bit words. */
    private static final int WORDS = (int) (WC_SIZE / Integer.BYTES);
    private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    private static final int WR_ID = word("wr_id");
    private static final int STATUS = word("status");
    private static final int OPCODE = word("opcode");
    private static final int VENDOR_ERR = word("vendor_err");
    private static final int BYTE_LEN = word("byte_len");
    private static final int IMM_DATA = word("imm_data");
    private static final int QP_NUM = word("qp_num");
    private static final int SRC_QP = word("src_qp");
    private static final int WC_FLAGS = word("wc_flags");

    private final MemorySegment array;
    private final int capacity;
    /** The entries the last poll filled, as 32-bit words in host order. */
    private final int[] words;

    private WorkCompletions(MemorySegment array, int capacity) {
        this.array = array;
        this.capacity = capacity;
        this.words = new int[capacity * WORDS];
    }

    private static int word(String field) {
        long offset = VerbsDataPath.ibv_wc.byteOffset(PathElement.groupElement(field));
        if (offset % Integer.BYTES != 0) throw new AssertionError("ibv_wc." + field + " is not 32-bit aligned");
        return (int) (offset / Integer.BYTES);
    }

    /**
     * Entries 0 to {@code n - 1} were filled: their words are copied to the heap, where the
     * accessors read them. {@link CompletionQueue#poll} calls it; a caller that fills
     * {@link #segment()} itself (its own {@code ibv_poll_cq} downcall, or a benchmark) calls it
     * once per batch before reading.
     *
     * @param n the entries filled, from 0 to {@link #capacity()}
     */
    public void filled(int n) {
        if (n > 0) MemorySegment.copy(array, ValueLayout.JAVA_INT, 0, words, 0, n * WORDS);
    }

    private int word(int i, int field) {
        return words[i * WORDS + field];
    }

    /**
     * An array in memory the garbage collector frees once it is unreachable.
     *
     * @param capacity the entries, from 1
     * @return the array
     * @throws IllegalArgumentException when {@code capacity} is below 1
     */
    public static WorkCompletions allocate(int capacity) {
        return allocate(Arena.ofAuto(), capacity);
    }

    /**
     * An array in {@code arena}.
     *
     * @param arena    where the array lives; it must stay open while the array is polled into
     * @param capacity the entries, from 1
     * @return the array
     * @throws IllegalArgumentException when {@code capacity} is below 1
     */
    public static WorkCompletions allocate(Arena arena, int capacity) {
        if (capacity < 1) throw new IllegalArgumentException("capacity must be positive");
        return new WorkCompletions(arena.allocate(VerbsDataPath.ibv_wc, capacity), capacity);
    }

    /** {@return the number of entries: the most one poll can fill} */
    public int capacity() {
        return capacity;
    }

    /**
     * {@return the native {@code struct ibv_wc} array itself, as the other verbs objects expose
     * their handles} The accessors read the copy {@link #filled(int)} makes, not this memory.
     */
    public MemorySegment segment() {
        return array;
    }

    private static long at(int i) {
        return i * WC_SIZE;
    }

    /**
     * {@return the wr_id the completed work request was posted with}
     *
     * @param i the entry, below the count the last poll returned
     */
    public long wrId(int i) {
        long first = Integer.toUnsignedLong(word(i, WR_ID));
        long second = Integer.toUnsignedLong(word(i, WR_ID + 1));
        return LITTLE_ENDIAN ? second << 32 | first : first << 32 | second;
    }

    /**
     * {@return the raw {@code ibv_wc_status}}
     *
     * @param i the entry, below the count the last poll returned
     */
    public int statusValue(int i) {
        return word(i, STATUS);
    }

    /**
     * {@return the status}
     *
     * @param i the entry, below the count the last poll returned
     */
    public WcStatus status(int i) {
        return WcStatus.of(statusValue(i));
    }

    /**
     * {@return whether the work request succeeded}
     *
     * @param i the entry, below the count the last poll returned
     */
    public boolean isSuccess(int i) {
        return statusValue(i) == IBV_WC_SUCCESS;
    }

    /**
     * {@return the raw {@code ibv_wc_opcode}; defined only for successful entries}
     *
     * @param i the entry, below the count the last poll returned
     */
    public int opcodeValue(int i) {
        return word(i, OPCODE);
    }

    /**
     * {@return what completed; defined only for successful entries (see {@link #error(int)})}
     *
     * @param i the entry, below the count the last poll returned
     */
    public WcOpcode opcode(int i) {
        return WcOpcode.of(opcodeValue(i));
    }

    /**
     * {@return the provider's vendor_err of a failed entry}
     *
     * @param i the entry, below the count the last poll returned
     */
    public int vendorError(int i) {
        return word(i, VENDOR_ERR);
    }

    /**
     * {@return the bytes transferred: for a receive, the length of the message that arrived}
     *
     * @param i the entry, below the count the last poll returned
     */
    public int byteLength(int i) {
        return word(i, BYTE_LEN);
    }

    /**
     * {@return whether the entry carries immediate data (IBV_WC_WITH_IMM)}
     *
     * @param i the entry, below the count the last poll returned
     */
    public boolean hasImmediate(int i) {
        return (wcFlags(i) & IBV_WC_WITH_IMM) != 0;
    }

    /**
     * The immediate value in host order (the wire carries it big-endian, as C's ntohl sees it).
     *
     * @param i the entry, below the count the last poll returned
     * @return the immediate; meaningful only when {@link #hasImmediate(int)}
     */
    public int immediateData(int i) {
        int raw = word(i, IMM_DATA);  // big-endian on the wire and in the struct (__be32)
        return LITTLE_ENDIAN ? Integer.reverseBytes(raw) : raw;
    }

    /**
     * {@return the number of the local QP the work request belonged to: which QP, on a CQ or SRQ that several share}
     *
     * @param i the entry, below the count the last poll returned
     */
    public int qpNumber(int i) {
        return word(i, QP_NUM);
    }

    /**
     * {@return the remote QP a UD receive came from}
     *
     * @param i the entry, below the count the last poll returned
     */
    public int sourceQp(int i) {
        return word(i, SRC_QP);
    }

    /**
     * {@return the {@code ibv_wc_flags} bits, e.g. IBV_WC_WITH_IMM}
     *
     * @param i the entry, below the count the last poll returned
     */
    public int wcFlags(int i) {
        return word(i, WC_FLAGS);
    }

    /**
     * {@return the P_Key index of a UD receive}
     *
     * @param i the entry, below the count the last poll returned
     */
    public int pkeyIndex(int i) {
        return Short.toUnsignedInt((short) ibv_wc_pkey_index.get(array, at(i)));
    }

    /**
     * {@return the source LID of a UD receive (InfiniBand)}
     *
     * @param i the entry, below the count the last poll returned
     */
    public int sourceLid(int i) {
        return Short.toUnsignedInt((short) ibv_wc_slid.get(array, at(i)));
    }

    /**
     * {@return the service level of a UD receive}
     *
     * @param i the entry, below the count the last poll returned
     */
    public int serviceLevel(int i) {
        return Byte.toUnsignedInt((byte) ibv_wc_sl.get(array, at(i)));
    }

    /**
     * {@return the destination LID path bits of a UD receive}
     *
     * @param i the entry, below the count the last poll returned
     */
    public int dlidPathBits(int i) {
        return Byte.toUnsignedInt((byte) ibv_wc_dlid_path_bits.get(array, at(i)));
    }

    /**
     * The typed error of a failed entry, its opcode unknown: ibv_poll_cq(3) defines only wr_id,
     * status, qp_num and vendor_err for a completion that failed, and rxe leaves 0
     * (IBV_WC_SEND) in {@code ibv_wc.opcode} of every error and flush, whatever was posted.
     *
     * @param i the entry, below the count the last poll returned
     * @return the exception, not thrown
     */
    public WorkCompletionException error(int i) {
        return error(i, null);
    }

    /**
     * The typed error of a failed entry, carrying the opcode the caller posted under its wr_id
     * (the completion itself does not report one), or null if it is not known.
     *
     * @param i            the entry, below the count the last poll returned
     * @param postedOpcode the opcode posted under the entry's wr_id, or null
     * @return the exception, not thrown
     */
    public WorkCompletionException error(int i, @Nullable WcOpcode postedOpcode) {
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
