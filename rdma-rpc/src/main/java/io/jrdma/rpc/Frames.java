package io.jrdma.rpc;

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

    /** A thread's checksum state, reset before each use, and its header copy. */
    static final class Checksum {
        final CRC32C crc = new CRC32C();
        final byte[] scratch = new byte[SCRATCH];
        /**
         * A header on the heap: decoded from one bulk copy of the frame, encoded here and copied
         * out once. Reading or writing the frame field by field costs a segment access each, and
         * the lab's C1-only JIT inlines none of them (a tenth of the RPC layer's time per call).
         */
        final byte[] header = new byte[REQUEST_HEADER];

        /** CRC32C of {@code length} bytes of {@code bytes} at {@code offset}. */
        int crc32c(byte[] bytes, int offset, int length) {
            CRC32C c = reset();
            c.update(bytes, offset, length);
            return (int) c.getValue();
        }

        /** The header copy with {@code size} bytes of {@code frame} in it, read at once. */
        byte[] load(MemorySegment frame, int size) {
            MemorySegment.copy(frame, ValueLayout.JAVA_BYTE, 0, header, 0, size);
            return header;
        }

        CRC32C reset() {
            crc.reset();
            return crc;
        }

        /** CRC32C of {@code length} bytes of {@code segment} at {@code offset}. */
        int crc32c(MemorySegment segment, long offset, long length) {
            reset();
            if (length > 0) update(segment, offset, length);
            return (int) crc.getValue();
        }

        /** CRC32C of {@code bytes}. */
        int crc32c(byte[] bytes) {
            return crc32c(bytes, 0, bytes.length);
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

    /** {@return this thread's checksum state and header copy} */
    static Checksum scratch() {
        return CHECKSUM.get();
    }

    static int crc32c(MemorySegment segment, long offset, long length) {
        return CHECKSUM.get().crc32c(segment, offset, length);
    }

    static int crc32c(byte[] bytes) {
        return CHECKSUM.get().crc32c(bytes);
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

    // big-endian fields of a header copy: plain array code, which C1 compiles well

    static int getInt(byte[] b, int at) {
        return (b[at] & 0xFF) << 24 | (b[at + 1] & 0xFF) << 16 | (b[at + 2] & 0xFF) << 8 | (b[at + 3] & 0xFF);
    }

    static long getLong(byte[] b, int at) {
        return (long) getInt(b, at) << 32 | (getInt(b, at + 4) & 0xFFFF_FFFFL);
    }

    static int getUnsignedShort(byte[] b, int at) {
        return (b[at] & 0xFF) << 8 | (b[at + 1] & 0xFF);
    }

    static void putInt(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 24);
        b[at + 1] = (byte) (v >>> 16);
        b[at + 2] = (byte) (v >>> 8);
        b[at + 3] = (byte) v;
    }

    static void putLong(byte[] b, int at, long v) {
        putInt(b, at, (int) (v >>> 32));
        putInt(b, at + 4, (int) v);
    }

    static void putShort(byte[] b, int at, int v) {
        b[at] = (byte) (v >>> 8);
        b[at + 1] = (byte) v;
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
