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

    /** The connection is closed (locally or by the peer); operations can no longer be posted. */
    public static final class Closed extends ConnectionException {
        public Closed(String message) {
            super(message);
        }

        public Closed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** The peer does not speak this protocol (bad magic/version in its connection descriptor). */
    public static final class Protocol extends ConnectionException {
        public Protocol(String message) {
            super(message);
        }
    }
}
