package io.jrdma.reactive.memory;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A slice of registered memory from a {@link BufferPool}. Reference counted: the caller holds one
 * reference, and every work request that uses the buffer holds another until its completion
 * (success, error or flush) arrives, so cancelling an operation or releasing early never hands
 * memory back to the pool while the NIC may still read or write it.
 *
 * <p>A buffer is registered in the protection domain of one device of an
 * {@link io.jrdma.reactive.RdmaResources}: it can be used by every connection of that device
 * (a received message can be sent on another connection without a copy).
 *
 * <p>A buffer that went back to its pool (its last reference released) must not be used:
 * {@link #segment()} and the reads and writes through it, {@link #retain()} and an extra
 * {@link #release()} throw {@link IllegalStateException}, and an operation posted with it fails
 * with one. That is a programming error, whether or not the pool is closed; closing the pool does
 * not end the use of the buffers out at the time (see {@link BufferPool}). {@link #tryRetain()}
 * asks without throwing.
 */
public final class RegisteredBuffer implements AutoCloseable {
    private final BufferPool pool;
    private final int index;
    private final MemorySegment segment;
    private final int lkey;
    private final int rkey;
    private final AtomicInteger refCnt = new AtomicInteger();

    RegisteredBuffer(BufferPool pool, int index, MemorySegment segment, int lkey, int rkey) {
        this.pool = pool;
        this.index = index;
        this.segment = segment;
        this.lkey = lkey;
        this.rkey = rkey;
    }

    /**
     * The whole buffer; valid until the last release.
     *
     * @return the buffer's native memory, {@link #capacity()} bytes; do not use it after the last release
     * @throws IllegalStateException if the buffer went back to its pool
     */
    public MemorySegment segment() {
        checkLive();
        return segment;
    }

    /** {@return the bytes in the buffer: a pool's buffer size, or a whole registered region (which may exceed 2 GiB)} */
    public long capacity() {
        return segment.byteSize();
    }

    /** {@return the virtual address of the buffer's first byte, as work requests and peers address it} */
    public long address() {
        return segment.address();
    }

    /** {@return the local key of the buffer's registration, which work requests on this side name} */
    public int lkey() {
        return lkey;
    }

    /**
     * The key a peer needs to READ, WRITE or run atomics on this buffer: only meaningful if the
     * pool was registered with remote access. Send it with {@link #address()} (see
     * {@link #toRemote} and {@link RemoteBuffer#toBigEndian()}) in whatever format your peer expects.
     *
     * @return the remote key of the buffer's registration
     */
    public int rkey() {
        return rkey;
    }

    /** {@return the pool this buffer belongs to} */
    public BufferPool pool() {
        return pool;
    }

    /**
     * Describes {@code [offset, offset + length)} of this buffer for a peer (needs remote access on the pool).
     *
     * @param offset the start, from this buffer's start
     * @param length the bytes
     * @return the range as a peer addresses it: address, rkey and length
     * @throws RemoteRangeException when the range is not within this buffer
     */
    public RemoteBuffer toRemote(long offset, long length) {
        return new RemoteBuffer(address(), rkey, capacity()).slice(offset, length);
    }

    /**
     * Copies {@code bytes} into the buffer at {@code offset}.
     *
     * @param offset where the bytes go
     * @param bytes  what to copy
     * @return this buffer
     * @throws IndexOutOfBoundsException when the bytes do not fit from {@code offset}
     * @throws IllegalStateException if the buffer went back to its pool
     */
    public RegisteredBuffer put(long offset, byte[] bytes) {
        MemorySegment.copy(bytes, 0, segment(), ValueLayout.JAVA_BYTE, offset, bytes.length);
        return this;
    }

    /**
     * Copies {@code length} bytes from {@code offset} out of the buffer.
     *
     * @param offset where the bytes start
     * @param length the bytes
     * @return a new array
     * @throws IndexOutOfBoundsException when the range is not within the buffer
     * @throws IllegalStateException if the buffer went back to its pool
     */
    public byte[] bytes(long offset, int length) {
        return segment().asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE);
    }

    /**
     * Decodes {@code length} bytes from {@code offset} as UTF-8 (malformed input replaced).
     *
     * @param offset where the bytes start
     * @param length the bytes
     * @return the text
     * @throws IndexOutOfBoundsException when the range is not within the buffer
     * @throws IllegalStateException if the buffer went back to its pool
     */
    public String string(long offset, int length) {
        return new String(bytes(offset, length), StandardCharsets.UTF_8);
    }

    /** {@return the references held now: the owner's and in-flight WRs'; 0 once back in its pool} */
    public int refCount() {
        return refCnt.get();
    }

    /**
     * Adds a reference (an in-flight WR, or a second owner) to a buffer the caller holds.
     *
     * @return this buffer; each retain needs its own {@link #release()}
     * @throws IllegalStateException if the buffer went back to its pool: a use after release
     */
    public RegisteredBuffer retain() {
        if (!tryRetain()) throw new IllegalStateException("buffer already returned to its pool");
        return this;
    }

    /**
     * Adds a reference unless the buffer already went back to its pool, and tells which. For memory
     * that its owner may free meanwhile and that is never handed out again, such as a
     * connection's exposed region ({@link io.jrdma.reactive.RdmaConnection#exposedBuffer()}) while
     * the connection closes: a pool's buffer that went back may already be someone else's.
     *
     * @return true if a reference was added, which the caller releases; false if the buffer went back
     */
    public boolean tryRetain() {
        int r;
        do {
            r = refCnt.get();
            if (r <= 0) return false;
        } while (!refCnt.compareAndSet(r, r + 1));
        return true;
    }

    /** Drops a reference; the last one returns the buffer to its pool. */
    public void release() {
        int r = refCnt.decrementAndGet();
        if (r == 0) pool.recycle(this);
        else if (r < 0) {
            refCnt.incrementAndGet();
            throw new IllegalStateException("buffer released more often than acquired");
        }
    }

    /** {@link #release()}: for try-with-resources and Kotlin's {@code use}. */
    @Override
    public void close() {
        release();
    }

    /** This buffer's number in its pool (a receive buffer's is its receive slot). */
    int index() {
        return index;
    }

    void acquired() {
        refCnt.set(1);
    }

    void returned() {
        refCnt.set(0);
    }

    private void checkLive() {
        if (refCnt.get() <= 0) throw new IllegalStateException("buffer used after it was returned to its pool");
    }

    @Override
    public String toString() {
        return "RegisteredBuffer[" + capacity() + " bytes at 0x" + Long.toHexString(address()) + ", lkey 0x"
                + Integer.toHexString(lkey) + "]";
    }
}
