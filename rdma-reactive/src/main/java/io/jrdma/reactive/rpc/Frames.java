package io.jrdma.reactive.rpc;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/** Wire constants and helpers shared by the request and response frames (docs/rpc-protocol.md). */
final class Frames {
    private Frames() {}

    static final int VERSION = 1;
    static final int REQUEST_MAGIC = 0x4A525051;   // "JRPQ"
    static final int RESPONSE_MAGIC = 0x4A525052;  // "JRPR"
    static final int REQUEST_HEADER = 80;
    static final int RESPONSE_HEADER = 32;
    /** Function id 0 is the protocol's own hello; no user function can have it. */
    static final int HELLO_FUNCTION = 0;
    /** Staging slices are cache-line aligned, like the engine's pooled buffers. */
    static final int ALIGNMENT = 64;

    static final ValueLayout.OfInt BE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfLong BE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    static final ValueLayout.OfShort BE_SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /**
     * Bytes checksummed through a per-thread copy. Slicing the frame into a {@code ByteBuffer}
     * for {@link CRC32C} cost two segments, two buffers and a {@code CRC32C} per header, about a
     * quarter of what a small call allocated (JFR in the lab); headers and small payloads are
     * copied into this scratch instead. Small, so that a thread-local per virtual thread costs little.
     */
    static final int SCRATCH = 256;

    /** A thread's checksum state, reset before each use. */
    private static final class Checksum {
        final CRC32C crc = new CRC32C();
        final byte[] scratch = new byte[SCRATCH];

        CRC32C reset() {
            crc.reset();
            return crc;
        }

        /** Adds {@code length} bytes of {@code segment} at {@code offset}. */
        void update(MemorySegment segment, long offset, long length) {
            if (length <= SCRATCH) {
                MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, scratch, 0, (int) length);
                crc.update(scratch, 0, (int) length);
            } else {
                crc.update(segment.asSlice(offset, length).asByteBuffer());
            }
        }
    }

    private static final ThreadLocal<Checksum> CHECKSUM = ThreadLocal.withInitial(Checksum::new);

    static int crc32c(MemorySegment segment, long offset, long length) {
        Checksum c = CHECKSUM.get();
        c.reset();
        if (length > 0) c.update(segment, offset, length);
        return (int) c.crc.getValue();
    }

    static int crc32c(byte[] bytes) {
        CRC32C crc = CHECKSUM.get().reset();
        crc.update(bytes);
        return (int) crc.getValue();
    }

    /** CRC32C of a header whose checksum field (4 bytes at {@code crcOffset}) counts as zero. */
    static int headerCrc(MemorySegment header, long offset, int size, int crcOffset) {
        Checksum c = CHECKSUM.get();
        CRC32C crc = c.reset();
        c.update(header, offset, crcOffset);
        crc.update(0);
        crc.update(0);
        crc.update(0);
        crc.update(0);
        c.update(header, offset + crcOffset + 4, size - crcOffset - 4);
        return (int) crc.getValue();
    }

    /**
     * A copy of {@code length} bytes at {@code offset}: {@code asSlice(..).toArray(JAVA_BYTE)}
     * allocates a slice and a heap segment around the array besides the array.
     */
    static byte[] copyOut(MemorySegment segment, long offset, long length) {
        byte[] bytes = new byte[Math.toIntExact(length)];
        MemorySegment.copy(segment, ValueLayout.JAVA_BYTE, offset, bytes, 0, bytes.length);
        return bytes;
    }

    static long u32(int v) {
        return Integer.toUnsignedLong(v);
    }

    /**
     * A function's wire id: CRC32C of its UTF-8 name. A C peer computes it with the same
     * polynomial; the server refuses to register two names with one id, and the id 0.
     */
    static int functionId(String name) {
        byte[] utf8 = checkName(name).getBytes(StandardCharsets.UTF_8);
        return crc32c(utf8);
    }

    static String checkName(String name) {
        if (name == null || name.isEmpty()) throw new IllegalArgumentException("a function needs a non-empty name");
        if (name.getBytes(StandardCharsets.UTF_8).length > 255) throw new IllegalArgumentException("function names are at most 255 UTF-8 bytes: " + name);
        if (name.charAt(0) == '$') throw new IllegalArgumentException("names starting with '$' are reserved for the protocol: " + name);
        return name;
    }

    static long align(long n) {
        return (n + ALIGNMENT - 1) & -ALIGNMENT;
    }

    /** UTF-8 of {@code text}, cut at a character boundary to at most {@code max} bytes. */
    static byte[] utf8(String text, int max) {
        byte[] b = (text == null ? "" : text).getBytes(StandardCharsets.UTF_8);
        if (b.length <= max) return b;
        int end = Math.max(0, max);
        while (end > 0 && (b[end] & 0xC0) == 0x80) end--;  // don't split a multi-byte sequence
        return java.util.Arrays.copyOf(b, end);
    }
}
