package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsCalls.ibv_dereg_mr;
import static io.jrdma.ffm.abi.VerbsDataPath.*;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.VerbsDataPath;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * {@code struct ibv_mr}: memory the device may access. The local key goes into SGEs; the
 * remote key and address are what a peer needs to READ/WRITE it ({@link #address()},
 * {@link #rkey()}).
 */
public final class MemoryRegion extends NativeResource {
    private final ProtectionDomain pd;
    private final MemorySegment mr;
    private final MemorySegment memory;
    private final @Nullable Arena ownedMemory;
    private final long address;
    private final long length;
    private final int lkey;
    private final int rkey;

    MemoryRegion(ProtectionDomain pd, MemorySegment mr, MemorySegment memory, @Nullable Arena ownedMemory) {
        super(pd);
        this.pd = pd;
        this.mr = mr.reinterpret(VerbsDataPath.ibv_mr.byteSize());
        this.memory = memory;
        this.ownedMemory = ownedMemory;
        this.address = ((MemorySegment) ibv_mr_addr.get(this.mr)).address();
        this.length = (long) ibv_mr_length.get(this.mr);
        this.lkey = (int) ibv_mr_lkey.get(this.mr);
        this.rkey = (int) ibv_mr_rkey.get(this.mr);
    }

    /**
     * The registered memory.
     *
     * @return the segment: the caller's when it was passed to {@link ProtectionDomain#register}, the
     *         region's (freed on close) when it came from {@link ProtectionDomain#allocateRegistered}
     */
    public MemorySegment segment() {
        return memory;
    }

    /** {@return the start address of the region: what a peer RDMA READs or WRITEs at, with {@link #rkey()}} */
    public long address() {
        return address;
    }

    /** {@return the registered length in bytes} */
    public long length() {
        return length;
    }

    /** {@return the local key: SGEs of work requests that use this memory carry it} */
    public int lkey() {
        return lkey;
    }

    /**
     * {@return the remote key a peer needs to READ, WRITE or run atomics on the region; it works
     * only for the remote {@link Access} the region was registered with}
     */
    public int rkey() {
        return rkey;
    }

    /** {@return the protection domain the region belongs to: only its QPs can use the region} */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    @Override
    void release() {
        try {
            int rc = (int) ibv_dereg_mr.invokeExact(mr);
            if (rc != 0) throw new VerbsException("ibv_dereg_mr", Math.abs(rc));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        if (ownedMemory != null) ownedMemory.close();
    }

    @Override
    String kind() {
        return "MemoryRegion(" + length() + " bytes at 0x" + Long.toHexString(address) + ", rkey 0x" + Integer.toHexString(rkey) + ")";
    }
}
