package io.jrdma.ffm;

/**
 * What an RC QP needs to go RTR → RTS.
 *
 * @param sqPsn       the first PSN to send with, 24 bits: the peer's {@code rq_psn}
 * @param timeout     local ACK timeout code: 4.096 µs × 2^timeout (14 ≈ 67 ms)
 * @param retryCount  transport retries before IBV_WC_RETRY_EXC_ERR (max 7)
 * @param rnrRetry    receiver-not-ready retries (7 = forever)
 * @param maxRdAtomic RDMA READs/atomics this QP may have outstanding
 */
public record RtsAttributes(int sqPsn, int timeout, int retryCount, int rnrRetry, int maxRdAtomic) {
    /**
     * Defaults: ACK timeout code 14 (≈ 67 ms), 7 retries, RNR retry forever, 16 READs/atomics outstanding.
     *
     * @param sqPsn the first PSN to send with, 24 bits
     * @return the attributes
     */
    public static RtsAttributes of(int sqPsn) {
        return new RtsAttributes(sqPsn, 14, 7, 7, 16);
    }

    /**
     * These attributes with another RNR retry count.
     *
     * @param n 0 to 7; 7 retries forever
     * @return a new value
     */
    public RtsAttributes rnrRetry(int n) {
        return new RtsAttributes(sqPsn, timeout, retryCount, n, maxRdAtomic);
    }

    /**
     * These attributes with another ACK timeout and transport retry count.
     *
     * @param timeoutCode 4.096 µs × 2^timeoutCode per try
     * @param count       retries before IBV_WC_RETRY_EXC_ERR, at most 7
     * @return a new value
     */
    public RtsAttributes retry(int timeoutCode, int count) {
        return new RtsAttributes(sqPsn, timeoutCode, count, rnrRetry, maxRdAtomic);
    }

    /**
     * These attributes with another initiator READ depth.
     *
     * @param n RDMA READs/atomics this QP may have outstanding
     * @return a new value
     */
    public RtsAttributes maxRdAtomic(int n) {
        return new RtsAttributes(sqPsn, timeout, retryCount, rnrRetry, n);
    }
}
