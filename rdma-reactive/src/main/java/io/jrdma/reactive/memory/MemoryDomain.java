package io.jrdma.reactive.memory;

import io.jrdma.ffm.Access;

/**
 * The protection domain of one RDMA device within an {@link io.jrdma.reactive.RdmaResources}.
 * Every connection of that device uses it, so memory registered here once is usable on all of
 * them: a message received on one connection can be sent or written on another straight from
 * its buffer, and one region can be exposed to every client of a server.
 */
public interface MemoryDomain {
    /** The device, e.g. {@code rxe0} or {@code mlx5_0}. */
    String deviceName();

    /**
     * Registers {@code count} buffers of {@code bufferSize} bytes with exactly the access listed
     * ({@code LOCAL_WRITE} is what a receive or READ target needs; remote access only for memory
     * peers may touch). Close the pool when done: it deregisters once every buffer is back.
     */
    BufferPool createPool(int bufferSize, int count, Access first, Access... rest);

    /**
     * Registers one region of {@code bytes} (which may exceed 2 GiB) with exactly the access
     * listed; {@link RegisteredBuffer#release()} deregisters it once no work request uses it.
     */
    RegisteredBuffer register(long bytes, Access first, Access... rest);

    /** Bytes this library registered in the domain and has not deregistered yet (pools, regions, receive queues). */
    long registeredBytes();
}
