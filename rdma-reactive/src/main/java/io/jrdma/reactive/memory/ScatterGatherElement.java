package io.jrdma.reactive.memory;

import java.util.Objects;

/**
 * One {@code struct ibv_sge} of a gather list (SEND, WRITE: the bytes go out in list order) or a
 * scatter list (READ: the bytes land in list order): {@code length} bytes of a registered buffer
 * from {@code offset}. An operation holds a reference to every listed buffer until its
 * completion.
 *
 * @param buffer the registered buffer
 * @param offset where the bytes start in it
 * @param length the bytes
 */
public record ScatterGatherElement(RegisteredBuffer buffer, long offset, int length) {
    /** Checks the range against the buffer's capacity ({@link IndexOutOfBoundsException} when outside). */
    public ScatterGatherElement {
        Objects.requireNonNull(buffer, "buffer");
        if (offset < 0 || length < 0 || offset > buffer.capacity() - length) {
            throw new IndexOutOfBoundsException("[" + offset + ", " + (offset + length) + ") outside the local buffer of "
                    + buffer.capacity() + " bytes");
        }
    }

    /**
     * {@code length} bytes of {@code buffer} from {@code offset}.
     *
     * @param buffer the registered buffer
     * @param offset where the bytes start in it
     * @param length the bytes
     * @return the element
     * @throws IndexOutOfBoundsException when the range is not within the buffer
     */
    public static ScatterGatherElement of(RegisteredBuffer buffer, long offset, int length) {
        return new ScatterGatherElement(buffer, offset, length);
    }

    /**
     * The whole buffer (one SGE carries less than 2 GiB).
     *
     * @param buffer the registered buffer
     * @return an element over all of it
     * @throws IllegalArgumentException when the buffer holds 2 GiB or more
     */
    public static ScatterGatherElement of(RegisteredBuffer buffer) {
        if (buffer.capacity() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(buffer + " is too large for one scatter-gather element: give a range");
        }
        return new ScatterGatherElement(buffer, 0, (int) buffer.capacity());
    }
}
