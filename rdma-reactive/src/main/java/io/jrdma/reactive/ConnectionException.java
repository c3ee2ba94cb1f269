package io.jrdma.reactive;

import io.jrdma.ffm.RdmaException;

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
    public ConnectionException(String message, Throwable cause) {
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
        public Rejected(String message, byte[] reason, Throwable cause) {
            super(message, cause);
            this.reason = reason.clone();
        }

        /** {@return a copy of the private data the server put into its reject (empty if none)} */
        public byte[] reason() {
            return reason.clone();
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
        public Unreachable(String message, Throwable cause) {
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

    /** The connection is closed (locally or by the peer); operations can no longer be posted. */
    public static final class Closed extends ConnectionException {
        /**
         * A closed connection.
         *
         * @param message what is closed
         */
        public Closed(String message) {
            super(message);
        }

        /**
         * A connection closed by a failure.
         *
         * @param message what is closed
         * @param cause   what closed it, or null
         */
        public Closed(String message, Throwable cause) {
            super(message, cause);
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
