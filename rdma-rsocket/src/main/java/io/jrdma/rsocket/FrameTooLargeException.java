package io.jrdma.rsocket;

/**
 * An outbound frame longer than the transport's {@code maxFrameLength()}, which is what one RDMA
 * message of the connection carries (its {@code buffers(size, count)} size). RSocket fragments
 * payloads to fit when told to ({@code RSocketConnector.fragment(mtu)} and
 * {@code RSocketServer.fragment(mtu)} with {@code mtu <= maxFrameLength()}). The connection closes
 * with it.
 */
public final class FrameTooLargeException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message the frame's length, the limit and the connection
     */
    public FrameTooLargeException(String message) {
        super(message);
    }
}
