package io.jrdma.reactive;

import io.jrdma.ffm.RdmaException;
import org.jspecify.annotations.Nullable;

/** Connection-level failures, on the connect {@code Mono} or on pending operations. */
public class ConnectionException extends RdmaException {
    /**
     * A failure without a cause.
     *
     * @param message what failed
     */
    public ConnectionException(String message) {
        super(message);
    }

    /**
     * A failure with a cause.
     *
     * @param message what failed
     * @param cause   the underlying failure (a {@link io.jrdma.ffm.CmException}, say), or null
     */
    public ConnectionException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }

    /** The server rejected the connection, or nothing listens at the address. */
    public static final class Rejected extends ConnectionException {
        /** The reject's private data. */
        private final byte[] reason;

        /**
         * A rejected connection.
         *
         * @param message what was rejected and why
         * @param reason  the private data of the reject; copied
         * @param cause   the underlying failure, or null
         */
        public Rejected(String message, byte[] reason, @Nullable Throwable cause) {
            super(message, cause);
            this.reason = reason.clone();
        }

        /** {@return a copy of the private data the server put into its reject (empty if none)} */
        public byte[] reason() {
            return reason.clone();
        }
    }

    /**
     * The peer did not prove its identity ({@link PeerAuthentication}): a server whose proof is
     * missing or wrong, seen by the client, or a client's proof the server's authentication refused
     * (the client then gets {@link Rejected}, with the reason this carried).
     */
    public static final class Authentication extends ConnectionException {
        /**
         * A failed authentication.
         *
         * @param message why the peer failed, a short sentence without secrets in it
         */
        public Authentication(String message) {
            super(message);
        }
    }

    /** No route or no answer: address/route resolution failed or the peer is unreachable. */
    public static final class Unreachable extends ConnectionException {
        /**
         * An unreachable peer.
         *
         * @param message where, and which step failed
         * @param cause   the underlying failure, or null
         */
        public Unreachable(String message, @Nullable Throwable cause) {
            super(message, cause);
        }
    }

    /** Setup did not finish within the connect timeout. */
    public static final class Timeout extends ConnectionException {
        /**
         * A setup that timed out.
         *
         * @param message which setup, and the timeout
         */
        public Timeout(String message) {
            super(message);
        }
    }

    /**
     * The connection is closed (locally, by the peer, or because of an error); operations can no
     * longer be posted. {@link #isOrderly()} tells an ending from a failure. Also what a closed
     * {@link io.jrdma.reactive.memory.BufferPool} fails with (a connection's pools close with it).
     */
    public static final class Closed extends ConnectionException {
        /** Whether one side closed the connection, rather than an error. */
        private final boolean orderly;

        /**
         * An orderly closure: one side closed the connection.
         *
         * @param message what is closed
         */
        public Closed(String message) {
            this(message, true);
        }

        /**
         * A closure that {@code orderly} says was one side's close, or else a failure.
         *
         * @param message what is closed
         * @param orderly true for a close by either side, false for a failure
         */
        public Closed(String message, boolean orderly) {
            super(message);
            this.orderly = orderly;
        }

        /**
         * A connection closed by a failure: not orderly.
         *
         * @param message what is closed
         * @param cause   what closed it, or null
         */
        public Closed(String message, @Nullable Throwable cause) {
            super(message, cause);
            this.orderly = false;
        }

        /**
         * True when the connection ended because one side closed it ({@code close()},
         * {@code dispose()}, the peer's disconnect); false when an error
         * closed it (a failed work request, a fatal device event, a failed setup:
         * {@link #getCause()} or the message says which). {@code receives()} completes on an
         * orderly closure and fails on any other.
         *
         * @return whether one side closed the connection, rather than an error
         */
        public boolean isOrderly() {
            return orderly;
        }
    }

    /** The peer does not speak this protocol (bad magic/version in its connection descriptor). */
    public static final class Protocol extends ConnectionException {
        /**
         * A peer that broke the protocol.
         *
         * @param message what was wrong with what it sent
         */
        public Protocol(String message) {
            super(message);
        }
    }
}
