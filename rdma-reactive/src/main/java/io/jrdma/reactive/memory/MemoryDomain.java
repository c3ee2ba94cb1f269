package io.jrdma.reactive.memory;

import io.jrdma.ffm.Access;

/**
 * The protection domain of one RDMA device within an {@link io.jrdma.reactive.RdmaResources}.
 * Every connection of that device uses it, so memory registered here once is usable on all of
 * them: a message received on one connection can be sent or written on another straight from
 * its buffer, and one region can be exposed to every client of a server.
 */
public interface MemoryDomain {
    /** {@return the device, e.g. {@code rxe0} or {@code mlx5_0}} */
    String deviceName();

    /**
     * Registers {@code count} buffers of {@code bufferSize} bytes with exactly the access listed
     * ({@code LOCAL_WRITE} is what a receive or READ target needs; remote access only for memory
     * peers may touch). Close the pool when done: it deregisters once every buffer is back.
     *
     * @param bufferSize bytes per buffer, from 1
     * @param count      buffers, from 1
     * @param first      an access flag, e.g. {@link Access#LOCAL_WRITE}
     * @param rest       more access flags
     * @return the pool; the caller owns it and closes it
     * @throws IllegalArgumentException when {@code bufferSize} or {@code count} is not positive
     */
    BufferPool createPool(int bufferSize, int count, Access first, Access... rest);

    /**
     * Registers one region of {@code bytes} (which may exceed 2 GiB) with exactly the access
     * listed; {@link RegisteredBuffer#release()} deregisters it once no work request uses it.
     *
     * @param bytes the region's size, from 1
     * @param first an access flag, e.g. {@link Access#REMOTE_READ}
     * @param rest  more access flags
     * @return the region as one buffer, which the caller holds until it releases it
     */
    RegisteredBuffer register(long bytes, Access first, Access... rest);

    /**
     * {@return whether {@code buffer} is registered in this domain: then every connection of the
     * domain may send, write or read from it (the same protection domain); any other connection
     * refuses it}
     *
     * @param buffer a buffer registered anywhere
     */
    boolean contains(RegisteredBuffer buffer);

    /** {@return the bytes this library registered in the domain and has not deregistered yet (pools, regions, receive queues)} */
    long registeredBytes();
}
