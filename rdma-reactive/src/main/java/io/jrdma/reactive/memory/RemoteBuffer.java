package io.jrdma.reactive.memory;

import io.jrdma.reactive.RemoteRangeException;

import java.nio.ByteBuffer;

/**
 * A peer's registered memory as RDMA READ/WRITE/atomics address it: virtual address, remote key
 * and length. This is what a peer hands out (in rdma_cm private data or the TCP exchange); a C
 * peer would put the same three values on the wire.
 */
public record RemoteBuffer(long address, int rkey, long length) {
    public static final int WIRE_SIZE = 8 + 4 + 8;

    public RemoteBuffer {
        if (length < 0) throw new IllegalArgumentException("negative length");
    }

    /** The sub-range {@code [offset, offset + length)}; fails with {@link RemoteRangeException} when outside. */
    public RemoteBuffer slice(long offset, long length) {
        checkRange(offset, length);
        return new RemoteBuffer(address + offset, rkey, length);
    }

    /** Fails with {@link RemoteRangeException} unless {@code [offset, offset + length)} lies within this buffer. */
    public void checkRange(long offset, long length) {
        // offset + length could overflow to a negative sum that passes; this.length - length cannot
        if (offset < 0 || length < 0 || offset > this.length - length) {
            throw new RemoteRangeException(this, offset, length);
        }
    }

    public void writeTo(ByteBuffer out) {
        out.putLong(address).putInt(rkey).putLong(length);
    }

    public static RemoteBuffer readFrom(ByteBuffer in) {
        return new RemoteBuffer(in.getLong(), in.getInt(), in.getLong());
    }

    @Override
    public String toString() {
        return "RemoteBuffer[0x" + Long.toHexString(address) + ", rkey 0x" + Integer.toHexString(rkey) + ", " + length + " bytes]";
    }
}
