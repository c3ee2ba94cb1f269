package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDataPath.*;

import io.jrdma.ffm.abi.VerbsDataPath;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/** A reusable {@code struct ibv_recv_wr} with its SGE list, patched in place. Not thread-safe. */
public final class ReceiveWorkRequest {
    private static final long SGE_SIZE = VerbsDataPath.ibv_sge.byteSize();

    private final MemorySegment wr;
    private final MemorySegment sges;
    private final int maxSge;

    private ReceiveWorkRequest(Arena arena, int maxSge) {
        if (maxSge < 1) throw new IllegalArgumentException("a WR needs at least one SGE slot");
        this.maxSge = maxSge;
        this.wr = arena.allocate(VerbsDataPath.ibv_recv_wr);
        this.sges = arena.allocate(VerbsDataPath.ibv_sge, maxSge);
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
    public static ReceiveWorkRequest allocate(Arena arena, int maxSge) {
        return new ReceiveWorkRequest(arena, maxSge);
    }

    /**
     * A WR in memory the garbage collector frees once the WR is unreachable.
     *
     * @param maxSge SGE slots, from 1
     * @return the WR, reset
     * @throws IllegalArgumentException when {@code maxSge} is below 1
     */
    public static ReceiveWorkRequest allocate(int maxSge) {
        return new ReceiveWorkRequest(Arena.ofAuto(), maxSge);
    }

    MemorySegment segment() {
        return wr;
    }

    /**
     * Clears every field and points sg_list at this WR's SGE array: no SGE, no chain.
     *
     * @return this
     */
    public ReceiveWorkRequest reset() {
        wr.fill((byte) 0);
        ibv_recv_wr_sg_list.set(wr, sges);
        ibv_recv_wr_num_sge.set(wr, 0);
        return this;
    }

    /**
     * The wr_id the receive's completion reports.
     *
     * @param id any value, typically what finds the buffer again
     * @return this
     */
    public ReceiveWorkRequest wrId(long id) {
        ibv_recv_wr_wr_id.set(wr, id);
        return this;
    }

    /**
     * Sets SGE {@code index} and makes the list {@code index + 1} long: set the SGEs in order.
     *
     * @param index   the SGE, from 0, below the WR's SGE slots
     * @param address where the received bytes go
     * @param length  how many bytes fit there
     * @param lkey    the local key of the registered memory at {@code address}
     * @return this
     * @throws IndexOutOfBoundsException when {@code index} is not a slot of this WR
     */
    public ReceiveWorkRequest sge(int index, long address, int length, int lkey) {
        if (index < 0 || index >= maxSge) throw new IndexOutOfBoundsException("SGE " + index + " of " + maxSge);
        long at = index * SGE_SIZE;
        ibv_sge_addr.set(sges, at, address);
        ibv_sge_length.set(sges, at, length);
        ibv_sge_lkey.set(sges, at, lkey);
        ibv_recv_wr_num_sge.set(wr, index + 1);
        return this;
    }

    /**
     * SGE over {@code length} bytes at {@code offset} in a registered region, bounds-checked.
     *
     * @param index  the SGE, from 0, below the WR's SGE slots
     * @param mr     the region (with {@link Access#LOCAL_WRITE}, or the receive fails)
     * @param offset where in the region the bytes go
     * @param length how many bytes fit there
     * @return this
     * @throws IndexOutOfBoundsException when the range is outside the region or {@code index} is not a slot
     */
    public ReceiveWorkRequest sge(int index, MemoryRegion mr, long offset, int length) {
        if (offset < 0 || length < 0 || offset + length > mr.length()) {
            throw new IndexOutOfBoundsException("[" + offset + ", " + (offset + length) + ") outside " + mr);
        }
        return sge(index, mr.address() + offset, length, mr.lkey());
    }

    /**
     * A receive with no buffer: enough for WRITE_WITH_IMM notifications and empty sends.
     *
     * @return this
     */
    public ReceiveWorkRequest noSge() {
        ibv_recv_wr_num_sge.set(wr, 0);
        return this;
    }

    /**
     * Chains {@code next} after this WR (one post submits both), or ends the chain with null.
     *
     * @param next the following WR, or null
     * @return this
     */
    public ReceiveWorkRequest next(@Nullable ReceiveWorkRequest next) {
        ibv_recv_wr_next.set(wr, next == null ? MemorySegment.NULL : next.wr);
        return this;
    }
}
