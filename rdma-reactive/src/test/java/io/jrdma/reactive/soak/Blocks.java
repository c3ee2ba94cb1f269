package io.jrdma.reactive.soak;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * The load's payloads: {@code size} bytes holding the sending connection's number (u32), a
 * sequence number (u64), random bytes, and the CRC32C of everything before it (u32), all
 * big-endian. A receiver that checks the checksum, the connection and the next expected sequence
 * number sees any corruption, loss, duplicate or reordering.
 */
final class Blocks {
    static final int MIN_SIZE = 16;

    private Blocks() {
    }

    /** Writes block {@code seq} of {@code connection} into {@code target} at {@code offset}. */
    static void fill(MemorySegment target, long offset, int size, int connection, long seq, SplittableRandom random) {
        byte[] b = new byte[size];
        ByteBuffer bb = ByteBuffer.wrap(b).putInt(connection).putLong(seq);
        while (bb.position() < size - 4) bb.put((byte) random.nextInt());
        CRC32C crc = new CRC32C();
        crc.update(b, 0, size - 4);
        bb.putInt((int) crc.getValue());
        MemorySegment.copy(b, 0, target, ValueLayout.JAVA_BYTE, offset, size);
    }

    /** A checked block: its connection and sequence number. */
    record Header(int connection, long seq) {
    }

    /** The header of {@code b}, or null when its checksum does not match (corrupt). */
    static Header check(byte[] b) {
        if (b.length < MIN_SIZE) return null;
        CRC32C crc = new CRC32C();
        crc.update(b, 0, b.length - 4);
        ByteBuffer bb = ByteBuffer.wrap(b);
        if (bb.getInt(b.length - 4) != (int) crc.getValue()) return null;
        return new Header(bb.getInt(0), bb.getLong(4));
    }
}
