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

    static int crc32c(MemorySegment segment, long offset, long length) {
        CRC32C crc = new CRC32C();
        if (length > 0) crc.update(segment.asSlice(offset, length).asByteBuffer());
        return (int) crc.getValue();
    }

    static int crc32c(byte[] bytes) {
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        return (int) crc.getValue();
    }

    /** CRC32C of a header whose checksum field (4 bytes at {@code crcOffset}) counts as zero. */
    static int headerCrc(MemorySegment header, long offset, int size, int crcOffset) {
        CRC32C crc = new CRC32C();
        crc.update(header.asSlice(offset, crcOffset).asByteBuffer());
        crc.update(new byte[4]);
        crc.update(header.asSlice(offset + crcOffset + 4, size - crcOffset - 4).asByteBuffer());
        return (int) crc.getValue();
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
