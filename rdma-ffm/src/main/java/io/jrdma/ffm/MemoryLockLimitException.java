package io.jrdma.ffm;

/**
 * Memory registration failed because pinning the pages would exceed RLIMIT_MEMLOCK: the most
 * common first-day RDMA failure. The message carries the current limit and the usual fix.
 */
public final class MemoryLockLimitException extends VerbsException {
    /** RLIMIT_MEMLOCK soft limit at the time of the failure, -1 for unlimited. */
    private final long limitBytes;

    /**
     * A registration that pinning beyond RLIMIT_MEMLOCK refused.
     *
     * @param function       the C function that failed, e.g. {@code ibv_reg_mr}
     * @param errno          its errno (ENOMEM or EPERM)
     * @param requestedBytes the bytes the registration asked to pin
     * @param limitBytes     the RLIMIT_MEMLOCK soft limit in bytes, -1 for unlimited
     */
    public MemoryLockLimitException(String function, int errno, long requestedBytes, long limitBytes) {
        super(function, errno, "Registering " + requestedBytes + " bytes exceeds the locked-memory limit ("
                + (limitBytes < 0 ? "unlimited" : limitBytes + " bytes")
                + "): raise it with 'ulimit -l unlimited', LimitMEMLOCK=infinity (systemd) or"
                + " memlock in /etc/security/limits.conf");
        this.limitBytes = limitBytes;
    }

    /** {@return the RLIMIT_MEMLOCK soft limit in bytes at the time of the failure, or -1 for unlimited} */
    public long limitBytes() {
        return limitBytes;
    }
}
