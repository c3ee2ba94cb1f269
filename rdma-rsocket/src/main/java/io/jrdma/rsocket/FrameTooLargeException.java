package io.jrdma.rsocket;

import org.jspecify.annotations.Nullable;

/**
 * An outbound frame longer than its connection carries: above {@link RdmaDuplexConnection#maxFrameLength()}
 * (the buffer size where the peer takes no large messages), or refused by the peer because it is
 * above the peer's {@code maxMessageSize} (the cause is then jrdma's
 * {@link io.jrdma.reactive.MessageTooLargeException}). The connection closes with it: RSocket's
 * streams on it fail with {@code ClosedChannelException}, whose cause it is where the transport
 * raises one. Frames above the transport's {@code maxFrameLength()} never get here: RSocket refuses
 * their payloads itself, unless told to fragment them ({@code RSocketConnector.fragment(mtu)} and
 * {@code RSocketServer.fragment(mtu)}).
 */
public final class FrameTooLargeException extends IllegalArgumentException {
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message the frame's length, the limit and the connection
     * @param cause   the peer's refusal, or null when this side refused the frame
     */
    public FrameTooLargeException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
