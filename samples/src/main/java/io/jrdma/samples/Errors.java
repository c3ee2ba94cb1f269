package io.jrdma.samples;

import io.jrdma.ffm.MemoryLockLimitException;
import io.jrdma.ffm.RdmaException;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.OperationTimeoutException;
import reactor.core.Exceptions;

/**
 * How the CLI words a failure: one line with the cause and, where there is one, what to change,
 * in the command's own terms (its options, not the API's settings); never a stack trace or a
 * Java class name. {@code RDMA_DEBUG=1} adds the stack trace for a bug report.
 */
final class Errors {
    /** Set in the environment, the command also prints stack traces (and logs them). */
    static final boolean DEBUG = "1".equals(System.getenv("RDMA_DEBUG"));

    private Errors() {}

    /** {@link #describe(Throwable, Integer, Integer)} without the options' values. */
    static String describe(Throwable t) {
        return describe(t, null, null);
    }

    /** Whether {@code t} failed because the peer closed the connection (disconnected: it stopped, or its process ended). */
    static boolean peerClosed(Throwable t) {
        for (Throwable c = Exceptions.unwrap(t); c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof ConnectionException.Closed closed) return closed.isOrderly();
        }
        return false;
    }

    private static boolean causedBy(Throwable e, Class<? extends Throwable> type) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (type.isInstance(t)) return true;
        }
        return false;
    }

    /**
     * @param timeoutSeconds the run's --timeout, or null when the command has none
     * @param size           the run's --size, or null
     */
    static String describe(Throwable t, Integer timeoutSeconds, Integer size) {
        Throwable e = Exceptions.unwrap(t);
        String timeout = timeoutSeconds == null ? "its timeout" : "--timeout " + timeoutSeconds + " s";
        String message = e.getMessage() == null ? "" : e.getMessage().replaceAll("\\s*\\R\\s*", " ");
        if (e instanceof IllegalStateException && message.startsWith("Timeout on blocking read")) {
            return "no answer within " + timeout + ": the other side stopped responding (gone, or its link is down); raise --timeout if it is only slow";
        }
        if (e instanceof ConnectionException.Timeout) {
            return message + (timeoutSeconds == null ? "" : " (--timeout " + timeoutSeconds + ")");
        }
        if (e instanceof OperationTimeoutException o) {
            return (o.opcode() == null ? "an operation" : "an RDMA " + o.opcode()) + " did not complete within " + timeout
                    + (o.wasPosted() ? ": the other side stopped responding (gone, or its link is down)"
                            : ": too many operations in flight");
        }
        if (size != null && causedBy(e, MemoryLockLimitException.class)) {
            // a failed connect wraps it: the option that asked for the memory is named either way
            // its receives, the four more it keeps for the peer's grants and large-message replies (docs/credit-protocol.md), its send buffers
            return message + " (each connection registers " + (2 * ModeOptions.BUFFERS + 4) + " x --size " + size + " bytes)";
        }
        if (e instanceof ConnectionException.Closed) return "the connection ended: " + message;
        if (e instanceof RdmaException || e instanceof IllegalArgumentException) return message;
        return "unexpected error: " + (message.isEmpty() ? e.getClass().getSimpleName() : message)
                + (DEBUG ? "" : " (RDMA_DEBUG=1 prints the stack trace)");
    }
}
