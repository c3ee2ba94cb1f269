package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The check that keeps a bogus descriptor from ever being posted (a failed READ kills the QP). */
class DescriptorRangeTest {
    private static final long BASE = 0x7f12_3456_0000L;
    private static final long LENGTH = 8 << 20;

    @Test
    void rangesInsideTheRegionPass() {
        assertTrue(ServerSession.inside(BASE, LENGTH, BASE, LENGTH));
        assertTrue(ServerSession.inside(BASE, LENGTH, BASE + LENGTH - 1, 1));
        assertTrue(ServerSession.inside(BASE, LENGTH, BASE + 100, 0));
    }

    @Test
    void rangesReachingOutsideFail() {
        assertFalse(ServerSession.inside(BASE, LENGTH, BASE - 1, 2));
        assertFalse(ServerSession.inside(BASE, LENGTH, BASE + LENGTH - 1, 2));
        assertFalse(ServerSession.inside(BASE, LENGTH, BASE + LENGTH + 1, 0));
        assertFalse(ServerSession.inside(BASE, LENGTH, BASE, LENGTH + 1));
        assertFalse(ServerSession.inside(BASE, LENGTH, BASE + (1L << 63), 1), "a negative signed offset");
        assertFalse(ServerSession.inside(BASE, LENGTH, -1L, 1));
        assertFalse(ServerSession.inside(BASE, LENGTH, BASE + 16, -1L), "a length above 2^63");
    }

    @Test
    void randomRangesAgreeWithExactArithmetic() {
        SplittableRandom r = new SplittableRandom(3);
        java.math.BigInteger base = java.math.BigInteger.valueOf(BASE);
        java.math.BigInteger end = base.add(java.math.BigInteger.valueOf(LENGTH));
        for (int i = 0; i < 1_000_000; i++) {
            long address = r.nextBoolean() ? r.nextLong() : BASE + r.nextLong(-LENGTH, 2 * LENGTH);
            long length = r.nextBoolean() ? r.nextLong() : r.nextLong(0, 2 * LENGTH);
            java.math.BigInteger a = new java.math.BigInteger(Long.toUnsignedString(address));
            java.math.BigInteger n = new java.math.BigInteger(Long.toUnsignedString(length));
            boolean exact = a.compareTo(base) >= 0 && a.add(n).compareTo(end) <= 0;
            if (exact != ServerSession.inside(BASE, LENGTH, address, length)) {
                throw new AssertionError("address 0x" + Long.toHexString(address) + " length " + Long.toUnsignedString(length));
            }
        }
    }
}
