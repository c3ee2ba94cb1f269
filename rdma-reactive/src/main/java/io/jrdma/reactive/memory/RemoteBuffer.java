package io.jrdma.reactive.memory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A peer's registered memory as RDMA READ/WRITE/atomics address it: virtual address, remote key
 * and length. A jrdma peer learns it from the connection descriptor; with any other peer, build it
 * from the three values the peer sent in its own format ({@code new RemoteBuffer(address, rkey, length)},
 * or {@link #fromBigEndian} for the common 16-byte layout).
 *
 * @param address the peer's virtual address of the first byte
 * @param rkey    the remote key of the peer's region
 * @param length  the bytes this side may address from {@code address}
 */
public record RemoteBuffer(long address, int rkey, long length) {
    /**
     * Bytes of the common network-order layout C programs put in rdma_cm private data or on a
     * socket (rping's, and the classic WRITE/READ samples'): {@code u64 address, u32 rkey, u32 length}.
     */
    public static final int BIG_ENDIAN_SIZE = 16;

    /** Checks that {@code length} is not negative ({@link IllegalArgumentException} otherwise). */
    public RemoteBuffer {
        if (length < 0) throw new IllegalArgumentException("negative length");
    }

    /**
     * The sub-range {@code [offset, offset + length)}; fails with {@link RemoteRangeException} when outside.
     *
     * @param offset the start, from this buffer's start
     * @param length the bytes
     * @return a buffer over that range, with the same rkey
     * @throws RemoteRangeException when the range is not within this buffer
     */
    public RemoteBuffer slice(long offset, long length) {
        checkRange(offset, length);
        return new RemoteBuffer(address + offset, rkey, length);
    }

    /**
     * Fails with {@link RemoteRangeException} unless {@code [offset, offset + length)} lies within this buffer.
     *
     * @param offset the start, from this buffer's start
     * @param length the bytes
     * @throws RemoteRangeException when the range is not within this buffer
     */
    public void checkRange(long offset, long length) {
        // offset + length could overflow to a negative sum that passes; this.length - length cannot
        if (offset < 0 || length < 0 || offset > this.length - length) {
            throw new RemoteRangeException(this, offset, length);
        }
    }

    /**
     * Reads {@code u64 address, u32 rkey, u32 length}, big-endian (network order), at {@code offset} of {@code data}.
     *
     * @param data   bytes from the peer, e.g. its private data
     * @param offset where the 16 bytes start
     * @return the buffer they describe
     * @throws IllegalArgumentException when fewer than {@link #BIG_ENDIAN_SIZE} bytes follow {@code offset}
     */
    public static RemoteBuffer fromBigEndian(byte[] data, int offset) {
        if (offset < 0 || data.length - offset < BIG_ENDIAN_SIZE) {
            throw new IllegalArgumentException("a remote buffer description needs " + BIG_ENDIAN_SIZE + " bytes at offset " + offset
                    + "; there are " + Math.max(0, data.length - offset));
        }
        ByteBuffer b = ByteBuffer.wrap(data, offset, BIG_ENDIAN_SIZE).order(ByteOrder.BIG_ENDIAN);
        return new RemoteBuffer(b.getLong(), b.getInt(), Integer.toUnsignedLong(b.getInt()));
    }

    /**
     * This buffer as {@code u64 address, u32 rkey, u32 length}, big-endian (network order): 16 bytes.
     *
     * @return a new array of {@link #BIG_ENDIAN_SIZE} bytes
     * @throws IllegalStateException when the length exceeds the layout's u32 (4 GiB or more)
     */
    public byte[] toBigEndian() {
        if (length > 0xFFFF_FFFFL) throw new IllegalStateException(length + " bytes do not fit the layout's u32 length");
        return ByteBuffer.allocate(BIG_ENDIAN_SIZE).order(ByteOrder.BIG_ENDIAN).putLong(address).putInt(rkey).putInt((int) length).array();
    }

    @Override
    public String toString() {
        return "RemoteBuffer[0x" + Long.toHexString(address) + ", rkey 0x" + Integer.toHexString(rkey) + ", " + length + " bytes]";
    }
}
