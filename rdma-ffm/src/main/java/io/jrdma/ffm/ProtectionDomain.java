package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsCalls.*;

import io.jrdma.ffm.abi.Libc;
import io.jrdma.ffm.abi.LibcCalls;
import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.VerbsDataPath;
import io.jrdma.ffm.abi.VerbsQueuePair;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.EnumSet;
import java.util.Set;

/** {@code struct ibv_pd}: the scope in which memory regions and queue pairs may meet. */
public final class ProtectionDomain extends NativeResource {
    /** Registered buffers are page-aligned: the NIC pins whole pages, and rxe copies per page. */
    public static final long PAGE_SIZE = 4096;

    private final Context context;
    private final MemorySegment pd;

    ProtectionDomain(Context context, MemorySegment pd) {
        super(context);
        this.context = context;
        this.pd = pd.reinterpret(VerbsDataPath.ibv_pd.byteSize());
    }

    /** {@return the device context the domain belongs to} */
    public Context context() {
        return context;
    }

    /** {@return the {@code struct ibv_pd *}; this object owns it} */
    public MemorySegment handle() {
        return pd;
    }

    /**
     * Registers caller-owned native memory. The caller keeps the memory alive (its arena open)
     * until the region is closed and no work request uses it.
     *
     * @param memory native memory, not empty
     * @param access what the device and peers may do with it
     * @return the region; the caller owns it and closes it before this domain
     * @throws IllegalArgumentException when the memory is on the heap or empty
     * @throws MemoryLockLimitException when pinning it would exceed RLIMIT_MEMLOCK
     * @throws VerbsException when ibv_reg_mr fails for another reason
     */
    public MemoryRegion register(MemorySegment memory, Set<Access> access) {
        return register(memory, access, null);
    }

    /**
     * Allocates page-aligned, zeroed native memory and registers it; closing the region frees it.
     *
     * @param bytes  the size, from 1
     * @param access what the device and peers may do with it
     * @return the region; the caller owns it and closes it before this domain
     * @throws MemoryLockLimitException when pinning it would exceed RLIMIT_MEMLOCK
     * @throws VerbsException when ibv_reg_mr fails for another reason
     */
    public MemoryRegion allocateRegistered(long bytes, Set<Access> access) {
        Arena arena = Arena.ofShared();
        try {
            return register(arena.allocate(bytes, PAGE_SIZE), access, arena);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /**
     * {@link #allocateRegistered(long, Set)} with the access flags spelled out.
     *
     * @param bytes the size, from 1
     * @param first an access flag
     * @param rest  more access flags
     * @return the region; the caller owns it and closes it before this domain
     */
    public MemoryRegion allocateRegistered(long bytes, Access first, Access... rest) {
        return allocateRegistered(bytes, EnumSet.of(first, rest));
    }

    private MemoryRegion register(MemorySegment memory, Set<Access> access, Arena owned) {
        checkOpen();
        if (!memory.isNative()) throw new IllegalArgumentException("only native memory can be registered (allocate it from an Arena)");
        if (memory.byteSize() == 0) throw new IllegalArgumentException("cannot register an empty segment");
        try {
            MemorySegment errno = Native.errnoBuffer();
            MemorySegment mr = (MemorySegment) ibv_reg_mr.invokeExact(errno, pd, memory, memory.byteSize(), Access.mask(access));
            if (mr.equals(MemorySegment.NULL)) {
                int e = Native.errno(errno);
                long limit = memlockLimit();
                if ((e == Libc.ENOMEM || e == Libc.EPERM) && limit >= 0) {
                    throw new MemoryLockLimitException("ibv_reg_mr", e, memory.byteSize(), limit);
                }
                throw new VerbsException("ibv_reg_mr(" + memory.byteSize() + " bytes, access " + access + ")", e);
            }
            return new MemoryRegion(this, mr, memory, owned);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** {@return this process's RLIMIT_MEMLOCK soft limit in bytes, -1 for unlimited} */
    public static long memlockLimit() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment rl = arena.allocate(Libc.rlimit);
            MemorySegment errno = Native.errnoBuffer();
            int rc = (int) LibcCalls.getrlimit.invokeExact(errno, Libc.RLIMIT_MEMLOCK, rl);
            if (rc != 0) throw new VerbsException("getrlimit(RLIMIT_MEMLOCK)", Native.errno(errno));
            return (long) Libc.rlimit_rlim_cur.get(rl);  // RLIM_INFINITY is ~0UL, i.e. -1
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Creates a QP with {@code ibv_create_qp}; it starts in RESET.
     *
     * @param init the QP's type, CQs (of this domain's context), optional SRQ and queue sizes
     * @return the QP; the caller owns it and closes it before its CQs, its SRQ and this domain
     * @throws IllegalStateException when this domain, a CQ or the SRQ is closed
     * @throws VerbsException when ibv_create_qp fails, e.g. EINVAL for sizes above the device's limits
     */
    public QueuePair createQueuePair(QueuePairInit init) {
        checkOpen();
        requireOpen(init.sendCq(), init.recvCq(), init.srq());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = init.write(arena);
            MemorySegment errno = Native.errnoBuffer();
            MemorySegment qp = (MemorySegment) ibv_create_qp.invokeExact(errno, pd, attr);
            if (qp.equals(MemorySegment.NULL)) throw new VerbsException("ibv_create_qp(" + init + ")", Native.errno(errno));
            return new QueuePair(this, init, qp, attr, null);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Creates a shared receive queue ({@code ibv_create_srq}).
     *
     * @param maxWr  receive WRs it must hold at least; {@link SharedReceiveQueue#maxWr()} says what was granted
     * @param maxSge SGEs per receive WR
     * @param limit  written to {@code srq_limit}, which ibv_create_srq ignores: arm the limit
     *               event with {@link SharedReceiveQueue#armLimit}
     * @return the SRQ; the caller owns it and closes it after the QPs attached to it, before this domain
     * @throws IllegalStateException when this domain is closed
     * @throws VerbsException when ibv_create_srq fails
     */
    public SharedReceiveQueue createSharedReceiveQueue(int maxWr, int maxSge, int limit) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(VerbsQueuePair.ibv_srq_init_attr);
            VerbsQueuePair.ibv_srq_init_attr_attr_max_wr.set(attr, maxWr);
            VerbsQueuePair.ibv_srq_init_attr_attr_max_sge.set(attr, maxSge);
            VerbsQueuePair.ibv_srq_init_attr_attr_srq_limit.set(attr, limit);
            MemorySegment errno = Native.errnoBuffer();
            MemorySegment srq = (MemorySegment) ibv_create_srq.invokeExact(errno, pd, attr);
            if (srq.equals(MemorySegment.NULL)) {
                throw new VerbsException("ibv_create_srq(max_wr " + maxWr + ", max_sge " + maxSge + ")", Native.errno(errno));
            }
            return new SharedReceiveQueue(this, srq, (int) VerbsQueuePair.ibv_srq_init_attr_attr_max_wr.get(attr), maxSge);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    void release() {
        try {
            int rc = (int) ibv_dealloc_pd.invokeExact(pd);
            if (rc != 0) throw new VerbsException("ibv_dealloc_pd", Math.abs(rc));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    String kind() {
        return "ProtectionDomain(" + context.deviceName() + ")";
    }
}
