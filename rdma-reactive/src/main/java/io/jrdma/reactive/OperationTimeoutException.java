package io.jrdma.reactive;

import io.jrdma.ffm.RdmaException;
import io.jrdma.ffm.SendOpcode;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * An operation did not complete within the connection's operation timeout. If it was still
 * waiting for a send credit it was never posted; if it was posted, the work request stays with
 * the NIC and keeps its buffers and its credit until its completion (or flush) arrives.
 */
public final class OperationTimeoutException extends RdmaException {
    /** The operation's opcode, or null. */
    private final @Nullable SendOpcode opcode;
    /** Whether the work request reached the send queue. */
    private final boolean posted;

    private OperationTimeoutException(String message, @Nullable SendOpcode opcode, boolean posted) {
        super(message);
        this.opcode = opcode;
        this.posted = posted;
    }

    /**
     * An operation that did not complete in time.
     *
     * @param opcode     what was posted, or was to be
     * @param posted     whether the work request reached the send queue
     * @param timeout    the operation timeout that expired
     * @param connection the connection, for the message
     * @return the exception, not thrown
     */
    public static OperationTimeoutException of(SendOpcode opcode, boolean posted, Duration timeout, String connection) {
        return of(opcode, posted, false, timeout, connection);
    }

    /**
     * An operation that did not complete in time.
     *
     * @param opcode         what was posted, or was to be
     * @param posted         whether the work request reached the send queue
     * @param awaitingCredit it was not posted because the peer had granted no receiver credit for it
     * @param timeout        the operation timeout that expired
     * @param connection     the connection, for the message
     * @return the exception, not thrown
     */
    public static OperationTimeoutException of(SendOpcode opcode, boolean posted, boolean awaitingCredit, Duration timeout,
                                               String connection) {
        if (!posted && awaitingCredit) {
            return new OperationTimeoutException(opcode + " on " + connection + " did not complete within " + timeout.toMillis()
                    + " ms: never posted: the peer granted no receive for it (its application holds the messages it received)",
                    opcode, false);
        }
        return new OperationTimeoutException(opcode + " on " + connection + " did not complete within " + timeout.toMillis() + " ms: "
                + (posted ? "posted, but no completion came (the peer stopped responding or posting receives);"
                        + " its buffers stay held until the completion or flush arrives"
                        : "never posted: no send credit came free (too many operations in flight)"), opcode, posted);
    }

    /**
     * An operation that waited in vain for a buffer of the connection's copy pool; nothing was posted.
     *
     * @param timeout    the operation timeout that expired
     * @param connection the connection, for the message
     * @return the exception, not thrown; its {@link #opcode()} is null
     */
    public static OperationTimeoutException noPooledBuffer(Duration timeout, String connection) {
        return new OperationTimeoutException("no pooled buffer of " + connection + " came free within " + timeout.toMillis()
                + " ms: every one is held by an operation in flight or by the application", null, false);
    }

    /**
     * A one-sided wait ({@link RdmaConnection#wordChange}) whose word did not change in time; nothing was posted.
     *
     * @param word       which word, and the value it kept
     * @param timeout    the operation timeout that expired
     * @param connection the connection, for the message
     * @return the exception, not thrown; its {@link #opcode()} is null
     */
    public static OperationTimeoutException noChange(String word, Duration timeout, String connection) {
        return new OperationTimeoutException(word + " on " + connection + " did not change within " + timeout.toMillis()
                + " ms: the peer wrote nothing else there", null, false);
    }

    /**
     * {@return the operation's opcode, or null if it timed out waiting for a pooled buffer before it
     * had one, or waiting for a word to change}
     */
    public @Nullable SendOpcode opcode() {
        return opcode;
    }

    /** {@return true when the work request reached the send queue (it may still execute); false when it never did} */
    public boolean wasPosted() {
        return posted;
    }
}
