package io.jrdma.rpc;

import io.jrdma.ffm.RdmaException;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * Why a call failed. The subclass says whether the function ran ({@link #executed()}), which is
 * what decides whether retrying is safe without an idempotency key.
 */
public class RpcException extends RdmaException {
    private static final long serialVersionUID = 1L;

    /** The function called, or null. */
    private final @Nullable String function;

    RpcException(@Nullable String function, String message, @Nullable Throwable cause) {
        super(function == null ? message : function + ": " + message, cause);
        this.function = function;
    }

    /** {@return the function called, or null for failures not tied to one call} */
    public @Nullable String function() {
        return function;
    }

    /** {@return true if the function ran, or may have run, for this call} */
    public boolean executed() {
        return false;
    }

    /** The server has no function of that name. */
    public static final class UnknownFunction extends RpcException {
        private static final long serialVersionUID = 1L;

        /**
         * A call to a function the server does not have.
         *
         * @param function the name called
         */
        public UnknownFunction(String function) {
            super(function, "no such function on the server", null);
        }
    }

    /** The function ran and failed; {@link #remoteMessage()} is what it threw (class and message). */
    public static final class HandlerFailed extends RpcException {
        private static final long serialVersionUID = 1L;

        /** What the handler threw. */
        private final String remoteMessage;

        /**
         * A handler that failed.
         *
         * @param function      the function called
         * @param remoteMessage what it threw (class and message), as the server sent it
         */
        public HandlerFailed(String function, String remoteMessage) {
            super(function, "the handler failed: " + remoteMessage, null);
            this.remoteMessage = remoteMessage;
        }

        /** {@return what the handler threw (class and message), as the server sent it} */
        public String remoteMessage() {
            return remoteMessage;
        }

        @Override
        public boolean executed() {
            return true;
        }
    }

    /** The server found the request malformed; nothing ran. */
    public static final class BadRequest extends RpcException {
        private static final long serialVersionUID = 1L;

        /**
         * A request the server found malformed.
         *
         * @param function the function called
         * @param reason   what the server found wrong
         */
        public BadRequest(String function, String reason) {
            super(function, "bad request: " + reason, null);
        }
    }

    /** The server had no capacity (handlers or staging memory) and pushed back; nothing ran, a retry is safe. */
    public static final class Overloaded extends RpcException {
        private static final long serialVersionUID = 1L;

        /**
         * A call the server pushed back.
         *
         * @param function the function called
         * @param reason   what the server ran out of
         */
        public Overloaded(String function, String reason) {
            super(function, "server overloaded: " + reason, null);
        }
    }

    /** The function ran but its result is larger than the response window; raise {@link CallOptions#responseCapacity}. */
    public static final class ResponseTooLarge extends RpcException {
        private static final long serialVersionUID = 1L;

        /** The response frame's size, header included. */
        private final long requiredBytes;

        /**
         * A result larger than the response window.
         *
         * @param function      the function called
         * @param requiredBytes the response frame's size, header included
         * @param windowBytes   the window the call had
         */
        public ResponseTooLarge(String function, long requiredBytes, int windowBytes) {
            super(function, "the response needs " + requiredBytes + " bytes, the response window has " + windowBytes
                    + " (set CallOptions.responseCapacity; with an idempotency key the client fetches it without re-executing)", null);
            this.requiredBytes = requiredBytes;
        }

        /** {@return the response frame's size, header included: the capacity to ask for} */
        public long requiredBytes() {
            return requiredBytes;
        }

        @Override
        public boolean executed() {
            return true;
        }
    }

    /** A keyed retry of a call that already executed, whose result the server did not keep. */
    public static final class AlreadyExecuted extends RpcException {
        private static final long serialVersionUID = 1L;

        /**
         * A keyed retry whose result is gone.
         *
         * @param function the function called
         */
        public AlreadyExecuted(String function) {
            super(function, "already executed under this idempotency key; the server did not retain the result", null);
        }

        @Override
        public boolean executed() {
            return true;
        }
    }

    /**
     * No response within the call's timeout (on every attempt). The function may still run or
     * have run: only an idempotency key makes a retry safe.
     */
    public static final class Timeout extends RpcException {
        private static final long serialVersionUID = 1L;

        /** Attempts made. */
        private final int attempts;

        /**
         * A call without a response.
         *
         * @param function the function called
         * @param timeout  the timeout of each attempt
         * @param attempts the attempts made, from 1
         */
        public Timeout(String function, Duration timeout, int attempts) {
            super(function, "no response within " + timeout.toMillis() + " ms" + (attempts > 1 ? " (" + attempts + " attempts)" : ""), null);
            this.attempts = attempts;
        }

        /** {@return the attempts made, each of which timed out} */
        public int attempts() {
            return attempts;
        }

        @Override
        public boolean executed() {
            return true;  // unknown: assume it may have
        }
    }

    /** The payload cannot be sent: larger than the server accepts, or large and the client exposes no buffer. */
    public static final class PayloadTooLarge extends RpcException {
        private static final long serialVersionUID = 1L;

        /**
         * A payload that cannot be sent.
         *
         * @param function the function called
         * @param reason   the sizes, and what would allow it
         */
        public PayloadTooLarge(String function, String reason) {
            super(function, reason, null);
        }
    }

    /** The connection closed with the call outstanding; whether the function ran is unknown. */
    public static final class ConnectionLost extends RpcException {
        private static final long serialVersionUID = 1L;

        /**
         * A call whose connection closed.
         *
         * @param function the function called
         * @param cause    why the connection closed, or null
         */
        public ConnectionLost(String function, @Nullable Throwable cause) {
            super(function, "the connection closed before the response arrived" + (cause == null ? "" : ": " + cause.getMessage()), cause);
        }

        @Override
        public boolean executed() {
            return true;
        }
    }

    /** The peer broke the RPC protocol (a malformed hello or response). */
    public static final class Protocol extends RpcException {
        private static final long serialVersionUID = 1L;

        /**
         * A peer that broke the protocol.
         *
         * @param message what was wrong with what it sent
         */
        public Protocol(String message) {
            super(null, message, null);
        }
    }
}
