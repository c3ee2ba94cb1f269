package io.jrdma.reactive;

import io.jrdma.ffm.RdmaException;

/**
 * A message larger than the peer accepts ({@link ConnectionConfig#maxMessageSize()} on its side):
 * the peer refused it and read none of it. It fails that message's send alone; the connection
 * goes on.
 */
public final class MessageTooLargeException extends RdmaException {
    /** The refused message's size in bytes. */
    private final long length;

    /**
     * A refused message.
     *
     * @param message what was refused, and by whom
     * @param length  the message's size in bytes
     */
    public MessageTooLargeException(String message, long length) {
        super(message);
        this.length = length;
    }

    /** {@return the size of the refused message in bytes} */
    public long length() {
        return length;
    }
}
