package io.jrdma.reactive;

import java.time.Duration;

/**
 * {@link RdmaDisposable#disposeNow(Duration)} waited its whole timeout and the disposal was not
 * over; it goes on, and {@link RdmaDisposable#onDispose()} still tells its end. An
 * {@link IllegalStateException}, as {@code disposeNow} threw before this type existed.
 */
public final class DisposeTimeoutException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    /** What was being disposed ({@code toString()} of it). */
    private final String disposing;
    /** How long the caller waited. */
    private final Duration timeout;

    /**
     * A disposal that outlasted the wait.
     *
     * @param disposing what was being disposed
     * @param timeout   how long the caller waited
     */
    public DisposeTimeoutException(Object disposing, Duration timeout) {
        super(disposing + " was not disposed within " + timeout.toMillis() + " ms; the disposal goes on");
        this.disposing = String.valueOf(disposing);
        this.timeout = timeout;
    }

    /** {@return what was being disposed, as its {@code toString()}} */
    public String disposing() {
        return disposing;
    }

    /** {@return how long the caller waited} */
    public Duration timeout() {
        return timeout;
    }
}
