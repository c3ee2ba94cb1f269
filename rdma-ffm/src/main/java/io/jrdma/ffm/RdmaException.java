package io.jrdma.ffm;

/** Root of every error the binding raises. Unchecked: reactive and coroutine callers compose them. */
public class RdmaException extends RuntimeException {
    public RdmaException(String message) {
        super(message);
    }

    public RdmaException(String message, Throwable cause) {
        super(message, cause);
    }
}
