package io.jrdma.ffm;

import java.time.Duration;

/** A bounded wait (completion event, CM event, async event) expired. */
public final class RdmaTimeoutException extends RdmaException {
    /**
     * A wait for {@code what} that expired.
     *
     * @param what    what was awaited, for the message
     * @param timeout how long the wait was
     */
    public RdmaTimeoutException(String what, Duration timeout) {
        super(what + " did not happen within " + timeout.toMillis() + " ms");
    }
}
