package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

/** The checksums through the per-thread scratch equal CRC32C of the same bytes, on both sides of its size. */
class FramesChecksumTest {
    private static int reference(byte[] bytes, int from, int to) {
        CRC32C c = new CRC32C();
        c.update(bytes, from, to - from);
        return (int) c.getValue();
    }

    @Test
    void payloadChecksumsMatchCrc32cAtEverySizeAroundTheScratch() {
        byte[] bytes = new byte[3 * Frames.SCRATCH + 7];
        new Random(42).nextBytes(bytes);
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment nativeCopy = arena.allocate(bytes.length);
            MemorySegment.copy(bytes, 0, nativeCopy, ValueLayout.JAVA_BYTE, 0, bytes.length);
            for (int length : new int[] {0, 1, 5, Frames.SCRATCH - 1, Frames.SCRATCH, Frames.SCRATCH + 1, 2 * Frames.SCRATCH + 3}) {
                int expected = reference(bytes, 3, 3 + length);
                assertEquals(expected, Frames.crc32c(nativeCopy, 3, length), "native, " + length + " bytes");
                assertEquals(expected, Frames.crc32c(MemorySegment.ofArray(bytes), 3, length), "heap, " + length + " bytes");
                assertEquals(expected, Frames.crc32c(Arrays.copyOfRange(bytes, 3, 3 + length)), "array, " + length + " bytes");
            }
        }
    }

    @Test
    void aHeaderChecksumCountsItsCrcFieldAsZeroAndDoesNotCarryStateBetweenCalls() {
        byte[] header = new byte[Frames.REQUEST_HEADER + 16];
        new Random(7).nextBytes(header);
        byte[] zeroed = header.clone();
        int at = 8;
        int crcOffset = 12;
        Arrays.fill(zeroed, at + crcOffset, at + crcOffset + 4, (byte) 0);
        int expected = reference(zeroed, at, at + Frames.REQUEST_HEADER);
        MemorySegment s = MemorySegment.ofArray(header);
        assertEquals(expected, Frames.headerCrc(s, at, Frames.REQUEST_HEADER, crcOffset));
        Frames.crc32c(new byte[] {1, 2, 3});  // the thread's CRC32C holds another value now
        assertEquals(expected, Frames.headerCrc(s, at, Frames.REQUEST_HEADER, crcOffset));
        assertEquals(reference(zeroed, at, at + Frames.RESPONSE_HEADER), Frames.headerCrc(s, at, Frames.RESPONSE_HEADER, crcOffset));
    }
}
