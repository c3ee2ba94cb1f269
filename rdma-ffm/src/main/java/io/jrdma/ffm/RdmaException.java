package io.jrdma.ffm;

import org.jspecify.annotations.Nullable;

/** Root of every error the binding raises. Unchecked: reactive and coroutine callers compose them. */
public class RdmaException extends RuntimeException {
    /**
     * An error without a cause.
     *
     * @param message what failed
     */
    public RdmaException(String message) {
        super(message);
    }

    /**
     * An error with a cause.
     *
     * @param message what failed
     * @param cause   the underlying failure, or null
     */
    public RdmaException(String message, @Nullable Throwable cause) {
        super(message, cause);
    }
}
