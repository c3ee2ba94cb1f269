package io.jrdma.ffm;

/**
 * Memory registration failed because pinning the pages would exceed RLIMIT_MEMLOCK: the most
 * common first-day RDMA failure. The message carries the current limit and the usual fix.
 */
public final class MemoryLockLimitException extends VerbsException {
    private final long limitBytes;

    public MemoryLockLimitException(String function, int errno, long requestedBytes, long limitBytes) {
        super(function, errno, "Registering " + requestedBytes + " bytes exceeds the locked-memory limit ("
                + (limitBytes < 0 ? "unlimited" : limitBytes + " bytes")
                + "): raise it with 'ulimit -l unlimited', LimitMEMLOCK=infinity (systemd) or"
                + " memlock in /etc/security/limits.conf");
        this.limitBytes = limitBytes;
    }

    /** RLIMIT_MEMLOCK soft limit at the time of the failure, or -1 for unlimited. */
    public long limitBytes() {
        return limitBytes;
    }
}
