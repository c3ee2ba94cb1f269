package io.jrdma.ffm;

import java.time.Duration;

/**
 * The encoding of the RNR NAK timer field ({@code min_rnr_timer} of {@code ibv_qp_attr}; the
 * InfiniBand specification's table "Encoding for RNR NAK Timer Field"): five bits that stand for a
 * delay from 0.01 ms (code 1) to 491.52 ms (code 31), and code 0 for the longest, 655.36 ms. A QP
 * that receives a SEND (or WRITE with immediate) while no receive is posted answers with an RNR
 * NAK carrying its code; the sender waits at least that long before it retries. The codes are not
 * in the order of their delays at 0, so compare delays, never codes.
 */
public final class RnrNakTimer {
    private RnrNakTimer() {}

    /** The delay of each code in units of 10 µs; index 0 is the longest. */
    private static final int[] TENS_OF_MICROS = {
        65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024,
        1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
    };

    /** rdma_cm's code (the IB CM's RTR attributes): 655.36 ms. */
    public static final int RDMA_CM_DEFAULT = 0;

    /** perftest's code and {@link RtrAttributes#of}'s: 0.64 ms. */
    public static final int PERFTEST = 12;

    /**
     * The delay a code stands for.
     *
     * @param code 0 to 31
     * @return from 10 µs (code 1) to 655.36 ms (code 0)
     * @throws IllegalArgumentException for a code outside 0 to 31
     */
    public static Duration delay(int code) {
        if (code < 0 || code >= TENS_OF_MICROS.length) throw new IllegalArgumentException("RNR NAK timer codes are 0 to 31, not " + code);
        return Duration.ofNanos(TENS_OF_MICROS[code] * 10_000L);
    }

    /**
     * The code of the shortest delay that is at least {@code delay}: a peer is never told to
     * retry sooner than asked.
     *
     * @param delay positive, at most 655.36 ms
     * @return 1 to 31, or 0 for a delay above 491.52 ms
     * @throws IllegalArgumentException for a delay that is not positive or above 655.36 ms
     */
    public static int code(Duration delay) {
        if (delay.isNegative() || delay.isZero() || delay.compareTo(delay(RDMA_CM_DEFAULT)) > 0) {
            throw new IllegalArgumentException("the RNR NAK delay is from 10 us to 655.36 ms (its longest code), not " + delay);
        }
        long nanos = delay.toNanos();
        for (int code = 1; code < TENS_OF_MICROS.length; code++) {
            if (TENS_OF_MICROS[code] * 10_000L >= nanos) return code;
        }
        return RDMA_CM_DEFAULT;
    }
}
