package io.jrdma.ffm;

import static io.jrdma.ffm.abi.Verbs.*;

import java.util.Set;

/** {@code enum ibv_access_flags}: what local and remote peers may do with a memory region or QP. */
public enum Access {
    LOCAL_WRITE(IBV_ACCESS_LOCAL_WRITE),
    REMOTE_WRITE(IBV_ACCESS_REMOTE_WRITE),
    REMOTE_READ(IBV_ACCESS_REMOTE_READ),
    REMOTE_ATOMIC(IBV_ACCESS_REMOTE_ATOMIC);

    final int flag;

    Access(int flag) {
        this.flag = flag;
    }

    /**
     * The verbs mask. Remote write and atomic access imply local write: the verbs spec requires
     * it and ibv_reg_mr fails with a bare EINVAL otherwise.
     */
    public static int mask(Set<Access> access) {
        int m = 0;
        for (Access a : access) m |= a.flag;
        if ((m & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) != 0) m |= IBV_ACCESS_LOCAL_WRITE;
        return m;
    }
}
