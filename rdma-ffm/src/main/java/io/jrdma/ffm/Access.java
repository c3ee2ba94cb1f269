package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDataPath.*;

import java.util.Set;

/** {@code enum ibv_access_flags}: what local and remote peers may do with a memory region or QP. */
public enum Access {
    /**
     * The device may write the memory: receives land in it, and so do RDMA READ responses and
     * atomic results. Reading it locally (sends, WRITE sources) needs no flag.
     */
    LOCAL_WRITE(IBV_ACCESS_LOCAL_WRITE),
    /** A peer may RDMA WRITE into the memory with its rkey; implies {@link #LOCAL_WRITE}. */
    REMOTE_WRITE(IBV_ACCESS_REMOTE_WRITE),
    /** A peer may RDMA READ the memory with its rkey. */
    REMOTE_READ(IBV_ACCESS_REMOTE_READ),
    /** A peer may run atomics (compare-and-swap, fetch-and-add) on it; implies {@link #LOCAL_WRITE}. */
    REMOTE_ATOMIC(IBV_ACCESS_REMOTE_ATOMIC);

    final int flag;

    Access(int flag) {
        this.flag = flag;
    }

    /**
     * The verbs mask. Remote write and atomic access imply local write: the verbs spec requires
     * it and ibv_reg_mr fails with a bare EINVAL otherwise.
     *
     * @param access the flags; empty means local read access only
     * @return the {@code ibv_access_flags} bits, as {@code ibv_reg_mr} and {@code qp_access_flags} take them
     */
    public static int mask(Set<Access> access) {
        int m = 0;
        for (Access a : access) m |= a.flag;
        if ((m & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) != 0) m |= IBV_ACCESS_LOCAL_WRITE;
        return m;
    }
}
