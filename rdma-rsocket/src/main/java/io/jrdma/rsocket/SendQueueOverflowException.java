package io.jrdma.rsocket;

/**
 * More outbound frames waited for the peer's receiver credits than
 * {@link RdmaDuplexConnection#DEFAULT_MAX_QUEUED_BYTES} (or the transport's
 * {@code maxQueuedBytes}) allows: the peer consumed slower than this side produced, past the bound.
 * The connection closes with it, since a dropped frame would corrupt RSocket's streams.
 */
public final class SendQueueOverflowException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what overflowed, with the connection and the bound
     */
    public SendQueueOverflowException(String message) {
        super(message);
    }
}
