package io.jrdma.reactive;

import io.jrdma.ffm.RdmaException;

/** Connection-level failures, on the connect {@code Mono} or on pending operations. */
public class ConnectionException extends RdmaException {
    public ConnectionException(String message) {
        super(message);
    }

    public ConnectionException(String message, Throwable cause) {
        super(message, cause);
    }

    /** The server rejected the connection, or nothing listens at the address. */
    public static final class Rejected extends ConnectionException {
        private final byte[] reason;

        public Rejected(String message, byte[] reason, Throwable cause) {
            super(message, cause);
            this.reason = reason.clone();
        }

        /** The private data the server put into its reject (empty if none). */
        public byte[] reason() {
            return reason.clone();
        }
    }

    /** No route or no answer: address/route resolution failed or the peer is unreachable. */
    public static final class Unreachable extends ConnectionException {
        public Unreachable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** Setup did not finish within the connect timeout. */
    public static final class Timeout extends ConnectionException {
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
        private final boolean orderly;

        /** An orderly closure: one side closed the connection. */
        public Closed(String message) {
            this(message, true);
        }

        /** A closure that {@code orderly} says was one side's close, or else a failure. */
        public Closed(String message, boolean orderly) {
            super(message);
            this.orderly = orderly;
        }

        /** A closure caused by {@code cause}: not orderly. */
        public Closed(String message, Throwable cause) {
            super(message, cause);
            this.orderly = false;
        }

        /**
         * True when the connection ended because one side closed it ({@code close()},
         * {@code dispose()}, the peer's disconnect or its process exiting); false when an error
         * closed it (a failed work request, a fatal device event, a failed setup:
         * {@link #getCause()} or the message says which). {@code receives()} completes on an
         * orderly closure and fails on any other.
         */
        public boolean isOrderly() {
            return orderly;
        }
    }

    /** The peer does not speak this protocol (bad magic/version in its connection descriptor). */
    public static final class Protocol extends ConnectionException {
        public Protocol(String message) {
            super(message);
        }
    }
}
