package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsCalls.*;
import static io.jrdma.ffm.abi.VerbsDevice.*;
import static io.jrdma.ffm.abi.VerbsQueuePair.*;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.VerbsDevice;
import io.jrdma.ffm.abi.VerbsQueuePair;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** {@code struct ibv_srq}: one pool of receive buffers shared by many QPs. */
public final class SharedReceiveQueue extends NativeResource {
    private final MemorySegment srq;
    private final MemorySegment postSrqRecv;
    private final int maxWr;
    private final int maxSge;
    /**
     * Automatic, not shared: a downcall holds a shared arena's session for its duration (an atomic
     * acquire and release around every call that passes its memory, 50-140 ns under the lab's
     * emulation), an automatic one's costs nothing, and its few bytes go with this object.
     */
    private final Arena scratchArena = Arena.ofAuto();
    private final MemorySegment badWr = scratchArena.allocate(ValueLayout.ADDRESS);

    SharedReceiveQueue(ProtectionDomain pd, MemorySegment srq, int maxWr, int maxSge) {
        super(pd);
        this.srq = srq.reinterpret(VerbsQueuePair.ibv_srq.byteSize());
        this.maxWr = maxWr;
        this.maxSge = maxSge;
        MemorySegment ctx = ((MemorySegment) ibv_srq_context.get(this.srq)).reinterpret(VerbsDevice.ibv_context.byteSize());
        this.postSrqRecv = (MemorySegment) ibv_context_ops_post_srq_recv.get(ctx);
    }

    /** {@return the {@code struct ibv_srq *} (what {@link AsyncEvent#elementAddress()} names for SRQ events); this object owns it} */
    public MemorySegment handle() {
        return srq;
    }

    /** {@return the receive WRs the provider granted (at least what was asked for)} */
    public int maxWr() {
        return maxWr;
    }

    /**
     * Posts a receive WR (chain) that any QP attached to the SRQ may consume. Posts must come from
     * one thread at a time.
     *
     * @param wr the first WR of the chain; read during the call only
     * @throws QueueFullException when the SRQ is full
     * @throws VerbsException when the provider refuses the WR; the message names the bad wr_id
     * @throws IllegalStateException when the SRQ is closed
     */
    public void postReceive(ReceiveWorkRequest wr) {
        checkOpen();
        int rc;
        badWr.set(ValueLayout.ADDRESS, 0, MemorySegment.NULL);
        try {
            rc = (int) ops_post_srq_recv.invokeExact(postSrqRecv, srq, wr.segment(), badWr);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        if (rc != 0) throw QueuePair.postError("ibv_post_srq_recv", kind(), badWr, rc);
    }

    /**
     * Arms the limit event: when fewer than {@code limit} WRs remain posted, the context raises
     * IBV_EVENT_SRQ_LIMIT_REACHED once.
     *
     * @param limit the number of posted WRs below which the event fires; 0 disarms
     * @throws VerbsException when ibv_modify_srq fails, e.g. a limit above the granted WRs
     */
    public void armLimit(int limit) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(VerbsQueuePair.ibv_srq_attr);
            ibv_srq_attr_srq_limit.set(attr, limit);
            int rc = (int) ibv_modify_srq.invokeExact(srq, attr, IBV_SRQ_LIMIT);
            if (rc != 0) throw new VerbsException("ibv_modify_srq(limit " + limit + ")", Math.abs(rc));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * The current limit (0 when disarmed, e.g. after the limit event fired).
     *
     * @return the armed limit, or 0
     * @throws VerbsException when ibv_query_srq fails
     */
    public int limit() {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(VerbsQueuePair.ibv_srq_attr);
            int rc = (int) ibv_query_srq.invokeExact(srq, attr);
            if (rc != 0) throw new VerbsException("ibv_query_srq", Math.abs(rc));
            return (int) ibv_srq_attr_srq_limit.get(attr);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    void release() {
        try {
            int rc = (int) ibv_destroy_srq.invokeExact(srq);
            if (rc != 0) throw new VerbsException("ibv_destroy_srq", Math.abs(rc));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    String kind() {
        return "SharedReceiveQueue(" + maxWr + "x" + maxSge + ")";
    }
}
