package io.jrdma.reactive;

import java.util.Objects;

/**
 * One {@code struct ibv_sge} of a gather list (SEND, WRITE: the bytes go out in list order) or a
 * scatter list (READ: the bytes land in list order): {@code length} bytes of a registered buffer
 * from {@code offset}. An operation holds a reference to every listed buffer until its
 * completion.
 */
public record ScatterGatherElement(RegisteredBuffer buffer, int offset, int length) {
    public ScatterGatherElement {
        Objects.requireNonNull(buffer, "buffer");
        if (offset < 0 || length < 0 || (long) offset + length > buffer.capacity()) {
            throw new IndexOutOfBoundsException("[" + offset + ", " + ((long) offset + length) + ") outside the local buffer of "
                    + buffer.capacity() + " bytes");
        }
    }

    public static ScatterGatherElement of(RegisteredBuffer buffer, int offset, int length) {
        return new ScatterGatherElement(buffer, offset, length);
    }

    /** The whole buffer. */
    public static ScatterGatherElement of(RegisteredBuffer buffer) {
        return new ScatterGatherElement(buffer, 0, buffer.capacity());
    }
}
