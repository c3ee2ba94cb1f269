package io.jrdma.ffm;

/**
 * What an RC QP needs to go RTR → RTS.
 *
 * @param timeout     local ACK timeout code: 4.096 µs × 2^timeout (14 ≈ 67 ms)
 * @param retryCount  transport retries before IBV_WC_RETRY_EXC_ERR (max 7)
 * @param rnrRetry    receiver-not-ready retries (7 = forever)
 * @param maxRdAtomic RDMA READs/atomics this QP may have outstanding
 */
public record RtsAttributes(int sqPsn, int timeout, int retryCount, int rnrRetry, int maxRdAtomic) {
    public static RtsAttributes of(int sqPsn) {
        return new RtsAttributes(sqPsn, 14, 7, 7, 16);
    }

    public RtsAttributes rnrRetry(int n) {
        return new RtsAttributes(sqPsn, timeout, retryCount, n, maxRdAtomic);
    }

    public RtsAttributes retry(int timeoutCode, int count) {
        return new RtsAttributes(sqPsn, timeoutCode, count, rnrRetry, maxRdAtomic);
    }

    public RtsAttributes maxRdAtomic(int n) {
        return new RtsAttributes(sqPsn, timeout, retryCount, rnrRetry, n);
    }
}
