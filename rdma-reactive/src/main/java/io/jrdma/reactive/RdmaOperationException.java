package io.jrdma.reactive;

import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.ffm.WorkCompletionException;
import org.jspecify.annotations.Nullable;

/**
 * A posted operation completed with an error status. Subclasses name the common ones; all carry
 * the verbs status, wr_id, opcode, QP number and the device's vendor error ({@link #vendorError()},
 * also in the message).
 */
public class RdmaOperationException extends WorkCompletionException {
    RdmaOperationException(WorkCompletion wc, @Nullable String detail) {
        super(wc.status(), wc.wrId(), wc.opcode(), wc.qpNumber(), wc.vendorError(), detail);
    }

    /**
     * The typed exception for a failed completion; {@code posted} names what was posted (a failed completion's opcode is undefined).
     *
     * @param wc     the completion
     * @param posted the opcode posted under its wr_id, or null when unknown
     * @return a {@link RemoteAccessException}, {@link RetryExceededException}, {@link ReceiverNotReadyException}
     *         or {@link FlushedException} for those statuses, else an RdmaOperationException; not thrown
     */
    public static RdmaOperationException of(WorkCompletion wc, @Nullable WcOpcode posted) {
        WorkCompletion named = wc.opcode() == WcOpcode.UNKNOWN || wc.status() != WcStatus.IBV_WC_SUCCESS && posted != null
                ? new WorkCompletion(wc.wrId(), wc.status(), posted, wc.byteLength(), wc.hasImmediate(), wc.immediate(), wc.qpNumber(),
                        wc.vendorError())
                : wc;
        return switch (wc.status()) {
            case IBV_WC_REM_ACCESS_ERR -> new RemoteAccessException(named);
            case IBV_WC_RETRY_EXC_ERR -> new RetryExceededException(named);
            case IBV_WC_RNR_RETRY_EXC_ERR -> new ReceiverNotReadyException(named);
            case IBV_WC_WR_FLUSH_ERR -> new FlushedException(named);
            default -> new RdmaOperationException(named, null);
        };
    }

    /** The peer's NIC refused the access: wrong rkey, range outside its region, or missing permission. */
    public static final class RemoteAccessException extends RdmaOperationException {
        RemoteAccessException(WorkCompletion wc) {
            super(wc, "the remote refused the access (wrong rkey, out-of-range address or missing permission); the QP is now in error");
        }
    }

    /** No ACK from the peer within timeout × retry count: the peer is gone or the path is broken. */
    public static final class RetryExceededException extends RdmaOperationException {
        RetryExceededException(WorkCompletion wc) {
            super(wc, "the peer did not acknowledge (gone, or the path is broken)");
        }
    }

    /** The peer had no receive posted for every retry. */
    public static final class ReceiverNotReadyException extends RdmaOperationException {
        ReceiverNotReadyException(WorkCompletion wc) {
            super(wc, "the peer had no receive buffer posted");
        }
    }

    /** The QP went to error (connection closed or failed) before this request executed. */
    public static final class FlushedException extends RdmaOperationException {
        FlushedException(WorkCompletion wc) {
            super(wc, "flushed: the connection closed or failed before the request executed");
        }
    }
}
