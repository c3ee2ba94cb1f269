package io.jrdma.ffm;

import static io.jrdma.ffm.abi.Verbs.*;

import io.jrdma.ffm.abi.Verbs;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/** A reusable {@code struct ibv_recv_wr} with its SGE list, patched in place. Not thread-safe. */
public final class ReceiveWorkRequest {
    private static final long SGE_SIZE = Verbs.ibv_sge.byteSize();

    private final MemorySegment wr;
    private final MemorySegment sges;
    private final int maxSge;

    private ReceiveWorkRequest(Arena arena, int maxSge) {
        if (maxSge < 1) throw new IllegalArgumentException("a WR needs at least one SGE slot");
        this.maxSge = maxSge;
        this.wr = arena.allocate(Verbs.ibv_recv_wr);
        this.sges = arena.allocate(Verbs.ibv_sge, maxSge);
        reset();
    }

    public static ReceiveWorkRequest allocate(Arena arena, int maxSge) {
        return new ReceiveWorkRequest(arena, maxSge);
    }

    public static ReceiveWorkRequest allocate(int maxSge) {
        return new ReceiveWorkRequest(Arena.ofAuto(), maxSge);
    }

    MemorySegment segment() {
        return wr;
    }

    public ReceiveWorkRequest reset() {
        wr.fill((byte) 0);
        ibv_recv_wr_sg_list.set(wr, sges);
        ibv_recv_wr_num_sge.set(wr, 0);
        return this;
    }

    public ReceiveWorkRequest wrId(long id) {
        ibv_recv_wr_wr_id.set(wr, id);
        return this;
    }

    public ReceiveWorkRequest sge(int index, long address, int length, int lkey) {
        if (index < 0 || index >= maxSge) throw new IndexOutOfBoundsException("SGE " + index + " of " + maxSge);
        long at = index * SGE_SIZE;
        ibv_sge_addr.set(sges, at, address);
        ibv_sge_length.set(sges, at, length);
        ibv_sge_lkey.set(sges, at, lkey);
        ibv_recv_wr_num_sge.set(wr, index + 1);
        return this;
    }

    public ReceiveWorkRequest sge(int index, MemoryRegion mr, long offset, int length) {
        if (offset < 0 || length < 0 || offset + length > mr.length()) {
            throw new IndexOutOfBoundsException("[" + offset + ", " + (offset + length) + ") outside " + mr);
        }
        return sge(index, mr.address() + offset, length, mr.lkey());
    }

    /** A receive with no buffer: enough for WRITE_WITH_IMM notifications and empty sends. */
    public ReceiveWorkRequest noSge() {
        ibv_recv_wr_num_sge.set(wr, 0);
        return this;
    }

    public ReceiveWorkRequest next(ReceiveWorkRequest next) {
        ibv_recv_wr_next.set(wr, next == null ? MemorySegment.NULL : next.wr);
        return this;
    }
}
