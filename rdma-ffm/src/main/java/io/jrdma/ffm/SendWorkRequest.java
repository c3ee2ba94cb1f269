package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDataPath.*;

import io.jrdma.ffm.abi.VerbsDataPath;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * A reusable {@code struct ibv_send_wr} with its scatter-gather list, allocated once and patched
 * in place before each post (no allocation per operation). Not thread-safe.
 *
 * <p>A setter stores into native memory only what differs from what this object last stored
 * there (it keeps a copy of its fields on the heap): a post that repeats most of the previous
 * one (the same buffer, opcode, flags and target) costs a few Java comparisons, not a dozen
 * stores through FFM field handles (16-18 ns each under the lab's C1-only emulation, where the
 * eleven stores of an RDMA WRITE cost more than the rest of the encoding). The provider only
 * reads the WR, so the copy stays exact; the union members (rdma, atomic, ud) overlap, and a
 * store into one makes the copy of the others unknown.
 *
 * <pre>{@code
 * wr.reset().wrId(7).opcode(SendOpcode.RDMA_WRITE).flags(SendFlags.SIGNALED)
 *   .sge(0, mr, 0, 64).rdma(remoteAddress, rkey);
 * qp.postSend(wr);
 * }</pre>
 */
public final class SendWorkRequest {
    private static final long SGE_SIZE = VerbsDataPath.ibv_sge.byteSize();

    private final MemorySegment wr;
    private final MemorySegment sges;
    private final int maxSge;

    // what native memory holds, as last stored through this object (fresh memory is zeroed)
    private long id;
    private int opcodeValue;
    private int sendFlags;
    private int numSge;
    private int immediate;
    private @Nullable SendWorkRequest next;
    /** Whether {@link #remoteAddress} and {@link #rkey} are what wr.rdma holds (an atomic or UD store overlaps them). */
    private boolean rdmaKnown = true;
    private long remoteAddress;
    private int rkey;
    private final long[] sgeAddress;
    private final int[] sgeLength;
    private final int[] sgeLkey;

    private SendWorkRequest(Arena arena, int maxSge) {
        if (maxSge < 1) throw new IllegalArgumentException("a WR needs at least one SGE slot");
        this.maxSge = maxSge;
        this.wr = arena.allocate(VerbsDataPath.ibv_send_wr);
        this.sges = arena.allocate(VerbsDataPath.ibv_sge, maxSge);
        this.sgeAddress = new long[maxSge];
        this.sgeLength = new int[maxSge];
        this.sgeLkey = new int[maxSge];
        reset();
    }

    /**
     * A WR with room for {@code maxSge} SGEs, in {@code arena}.
     *
     * @param arena  where the WR lives; it must stay open while the WR is used
     * @param maxSge SGE slots, from 1
     * @return the WR, reset
     * @throws IllegalArgumentException when {@code maxSge} is below 1
     */
    public static SendWorkRequest allocate(Arena arena, int maxSge) {
        return new SendWorkRequest(arena, maxSge);
    }

    /**
     * A WR in memory the garbage collector frees once the WR is unreachable.
     *
     * @param maxSge SGE slots, from 1
     * @return the WR, reset
     * @throws IllegalArgumentException when {@code maxSge} is below 1
     */
    public static SendWorkRequest allocate(int maxSge) {
        return new SendWorkRequest(Arena.ofAuto(), maxSge);
    }

    MemorySegment segment() {
        return wr;
    }

    /**
     * Clears every field and points sg_list at this WR's SGE array: no SGE, no flags, no chain.
     *
     * @return this
     */
    public SendWorkRequest reset() {
        wr.fill((byte) 0);
        ibv_send_wr_sg_list.set(wr, sges);
        id = 0;
        opcodeValue = 0;
        sendFlags = 0;
        numSge = 0;
        immediate = 0;
        next = null;
        rdmaKnown = true;
        remoteAddress = 0;
        rkey = 0;
        return this;  // the SGE array is not cleared: its copy stays as it was
    }

    /**
     * The wr_id the WR's completion reports.
     *
     * @param id any value, typically what finds the operation again
     * @return this
     */
    public SendWorkRequest wrId(long id) {
        if (id != this.id) {
            ibv_send_wr_wr_id.set(wr, id);
            this.id = id;
        }
        return this;
    }

    /** {@return the wr_id set} */
    public long wrId() {
        return (long) ibv_send_wr_wr_id.get(wr);
    }

    /**
     * What the WR does.
     *
     * @param opcode the operation
     * @return this
     */
    public SendWorkRequest opcode(SendOpcode opcode) {
        if (opcode.value != opcodeValue) {
            ibv_send_wr_opcode.set(wr, opcode.value);
            opcodeValue = opcode.value;
        }
        return this;
    }

    /**
     * {@link SendFlags} or-ed together.
     *
     * @param sendFlags the flags; 0 for none
     * @return this
     */
    public SendWorkRequest flags(int sendFlags) {
        if (sendFlags != this.sendFlags) {
            ibv_send_wr_send_flags.set(wr, sendFlags);
            this.sendFlags = sendFlags;
        }
        return this;
    }

    /**
     * Sets SGE {@code index} and makes the list {@code index + 1} long: set the SGEs in order.
     *
     * @param index   the SGE, from 0, below the WR's SGE slots
     * @param address the local bytes (sent or written), or where READ and atomic results go
     * @param length  how many bytes
     * @param lkey    the local key of the registered memory at {@code address}
     * @return this
     * @throws IndexOutOfBoundsException when {@code index} is not a slot of this WR
     */
    public SendWorkRequest sge(int index, long address, int length, int lkey) {
        if (index < 0 || index >= maxSge) throw new IndexOutOfBoundsException("SGE " + index + " of " + maxSge);
        long at = index * SGE_SIZE;
        if (address != sgeAddress[index]) {
            ibv_sge_addr.set(sges, at, address);
            sgeAddress[index] = address;
        }
        if (length != sgeLength[index]) {
            ibv_sge_length.set(sges, at, length);
            sgeLength[index] = length;
        }
        if (lkey != sgeLkey[index]) {
            ibv_sge_lkey.set(sges, at, lkey);
            sgeLkey[index] = lkey;
        }
        return numSge(index + 1);
    }

    private SendWorkRequest numSge(int count) {
        if (count != numSge) {
            ibv_send_wr_num_sge.set(wr, count);
            numSge = count;
        }
        return this;
    }

    /**
     * SGE over {@code length} bytes at {@code offset} in a registered region, bounds-checked.
     *
     * @param index  the SGE, from 0, below the WR's SGE slots
     * @param mr     the region
     * @param offset where in the region
     * @param length how many bytes
     * @return this
     * @throws IndexOutOfBoundsException when the range is outside the region or {@code index} is not a slot
     */
    public SendWorkRequest sge(int index, MemoryRegion mr, long offset, int length) {
        if (offset < 0 || length < 0 || offset + length > mr.length()) {
            throw new IndexOutOfBoundsException("[" + offset + ", " + (offset + length) + ") outside " + mr);
        }
        return sge(index, mr.address() + offset, length, mr.lkey());
    }

    /**
     * No SGE at all: a zero-byte SEND or WRITE_WITH_IMM that carries only the immediate.
     *
     * @return this
     */
    public SendWorkRequest noSge() {
        return numSge(0);
    }

    /**
     * Immediate data (host order; sent big-endian as C's htonl would).
     *
     * @param value the 32 bits, for SEND_WITH_IMM and RDMA_WRITE_WITH_IMM
     * @return this
     */
    public SendWorkRequest immediate(int value) {
        if (value != immediate) {
            ibv_send_wr_imm_data.set(wr, value);
            immediate = value;
        }
        return this;
    }

    /**
     * Remote target of RDMA WRITE / WRITE_WITH_IMM / READ.
     *
     * @param remoteAddress the peer's virtual address, inside a region it registered
     * @param rkey          that region's remote key
     * @return this
     */
    public SendWorkRequest rdma(long remoteAddress, int rkey) {
        if (!rdmaKnown || remoteAddress != this.remoteAddress) {
            ibv_send_wr_wr_rdma_remote_addr.set(wr, remoteAddress);
            this.remoteAddress = remoteAddress;
        }
        if (!rdmaKnown || rkey != this.rkey) {
            ibv_send_wr_wr_rdma_rkey.set(wr, rkey);
            this.rkey = rkey;
        }
        rdmaKnown = true;
        return this;
    }

    /**
     * Remote target and operands of an atomic: {@code compareAdd} is the compare value (CAS) or
     * the addend (FADD), {@code swap} the new value (CAS). The 8-byte target must be aligned.
     *
     * @param remoteAddress the peer's 8-byte aligned virtual address
     * @param rkey          the remote key of its region (registered with {@link Access#REMOTE_ATOMIC})
     * @param compareAdd    the compare value (CAS) or the addend (FADD)
     * @param swap          the value to swap in (CAS); ignored by FADD
     * @return this
     */
    public SendWorkRequest atomic(long remoteAddress, int rkey, long compareAdd, long swap) {
        ibv_send_wr_wr_atomic_remote_addr.set(wr, remoteAddress);
        ibv_send_wr_wr_atomic_rkey.set(wr, rkey);
        ibv_send_wr_wr_atomic_compare_add.set(wr, compareAdd);
        ibv_send_wr_wr_atomic_swap.set(wr, swap);
        rdmaKnown = false;  // remote_addr is shared, and compare_add covers wr.rdma.rkey
        return this;
    }

    /**
     * Destination of a UD send.
     *
     * @param addressHandle a {@code struct ibv_ah *} for the destination (this binding creates none)
     * @param remoteQpn     the destination UD QP
     * @param remoteQkey    its Q_Key
     * @return this
     */
    public SendWorkRequest ud(MemorySegment addressHandle, int remoteQpn, int remoteQkey) {
        ibv_send_wr_wr_ud_ah.set(wr, addressHandle);
        ibv_send_wr_wr_ud_remote_qpn.set(wr, remoteQpn);
        ibv_send_wr_wr_ud_remote_qkey.set(wr, remoteQkey);
        rdmaKnown = false;  // ah and remote_qpn cover wr.rdma
        return this;
    }

    /**
     * Chains {@code next} after this WR (one post submits both), or ends the chain with null.
     *
     * @param next the following WR, or null
     * @return this
     */
    public SendWorkRequest next(@Nullable SendWorkRequest next) {
        if (next != this.next) {
            ibv_send_wr_next.set(wr, next == null ? MemorySegment.NULL : next.wr);
            this.next = next;
        }
        return this;
    }
}
