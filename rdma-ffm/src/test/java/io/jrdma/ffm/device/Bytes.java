package io.jrdma.ffm.device;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/** Test payloads in registered memory. */
final class Bytes {
    private Bytes() {}

    /** {@code length} bytes that differ from their neighbours and from zero-filled memory. */
    static byte[] pattern(int length, int seed) {
        byte[] b = new byte[length];
        for (int i = 0; i < length; i++) b[i] = (byte) (1 + (i * 31 + seed) % 251);
        return b;
    }

    static void put(MemorySegment memory, long offset, byte[] bytes) {
        MemorySegment.copy(bytes, 0, memory, ValueLayout.JAVA_BYTE, offset, bytes.length);
    }

    static byte[] get(MemorySegment memory, long offset, int length) {
        return memory.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE);
    }

    static byte at(MemorySegment memory, long offset) {
        return memory.get(ValueLayout.JAVA_BYTE, offset);
    }

    /** A 64-bit word in host order, as the device reads and writes atomics targets. */
    static long word(MemorySegment memory, long offset) {
        return memory.get(ValueLayout.JAVA_LONG, offset);
    }

    static void word(MemorySegment memory, long offset, long value) {
        memory.set(ValueLayout.JAVA_LONG, offset, value);
    }
}
