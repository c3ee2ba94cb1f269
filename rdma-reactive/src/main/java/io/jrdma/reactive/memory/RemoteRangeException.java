package io.jrdma.reactive.memory;

import io.jrdma.ffm.RdmaException;

/** A READ/WRITE/atomic addressed bytes outside the peer's advertised buffer; nothing was posted. */
public final class RemoteRangeException extends RdmaException {
    /**
     * A range outside {@code buffer}.
     *
     * @param buffer the peer's buffer
     * @param offset the start of the range, from the buffer's start
     * @param length the range's length in bytes
     */
    public RemoteRangeException(RemoteBuffer buffer, long offset, long length) {
        super("range [" + offset + ", " + (offset + length) + ") is outside the remote buffer of " + buffer.length()
                + " bytes (" + buffer + ")");
    }
}
