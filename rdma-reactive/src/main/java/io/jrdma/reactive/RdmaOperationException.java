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

    /** With a message in the terms of what happened; the verbs details stay on the accessors. */
    RdmaOperationException(String sentence, WorkCompletion wc) {
        super(sentence, wc.status(), wc.wrId(), wc.opcode(), wc.qpNumber(), wc.vendorError());
    }

    /** {@code RDMA_READ} as a sentence names it: "the RDMA READ". */
    static String operation(@Nullable WcOpcode opcode) {
        if (opcode == null) return "a work request";
        return switch (opcode) {
            case SEND -> "the SEND";
            case RDMA_WRITE -> "the RDMA WRITE";
            case RDMA_READ -> "the RDMA READ";
            case COMP_SWAP -> "the compare-and-swap";
            case FETCH_ADD -> "the fetch-and-add";
            case RECV, RECV_RDMA_WITH_IMM -> "a posted receive";
            default -> "a work request";
        };
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
        return of(wc, posted, null);
    }

    /**
     * The typed exception for a failed completion taken while the connection was closing because
     * of {@code closing} (the peer went away, a local close, an earlier error): that reason becomes
     * the cause and is part of the message, since a flushed request, or a remote error from a peer
     * that is going away, is explained by it rather than by the request.
     *
     * @param wc      the completion
     * @param posted  the opcode posted under its wr_id, or null when unknown
     * @param closing why the connection was closing when the completion was taken, or null if it was not
     * @return as {@link #of(WorkCompletion, WcOpcode)}, with {@code closing} as its cause; not thrown
     */
    public static RdmaOperationException of(WorkCompletion wc, @Nullable WcOpcode posted, @Nullable Throwable closing) {
        WorkCompletion named = wc.opcode() == WcOpcode.UNKNOWN || wc.status() != WcStatus.IBV_WC_SUCCESS && posted != null
                ? new WorkCompletion(wc.wrId(), wc.status(), posted, wc.byteLength(), wc.hasImmediate(), wc.immediate(), wc.qpNumber(),
                        wc.vendorError())
                : wc;
        String why = closing == null ? null : closing.getMessage();
        RdmaOperationException e = switch (wc.status()) {
            case IBV_WC_REM_ACCESS_ERR -> new RemoteAccessException(named, why);
            case IBV_WC_RETRY_EXC_ERR -> new RetryExceededException(named, why);
            case IBV_WC_RNR_RETRY_EXC_ERR -> new ReceiverNotReadyException(named, why);
            case IBV_WC_WR_FLUSH_ERR -> new FlushedException(named, why);
            // SoftRoCE's answer to a packet it cannot transmit, the lab's link-down test found
            case IBV_WC_LOC_QP_OP_ERR -> new RdmaOperationException(named, detail("the device could not execute the request (SoftRoCE"
                    + " reports this when it cannot transmit: is the network link down?)", why));
            default -> new RdmaOperationException(named, why == null ? null : "meanwhile: " + why);
        };
        if (closing != null) e.initCause(closing);
        return e;
    }

    /** The detail, and what happened to the connection meanwhile (null: nothing). */
    private static String detail(String detail, @Nullable String meanwhile) {
        return meanwhile == null ? detail : detail + "; meanwhile: " + meanwhile;
    }

    /**
     * The peer's NIC refused the access: a wrong rkey, a range outside its region, missing
     * permission, or a region the peer deregistered (closed, or freed as its process exited).
     */
    public static final class RemoteAccessException extends RdmaOperationException {
        RemoteAccessException(WorkCompletion wc, @Nullable String meanwhile) {
            super(wc, detail("the remote refused the access (a wrong rkey, a range outside its region, missing permission, or a region"
                    + " the peer deregistered: closed, or freed as its process exited); the QP is now in error", meanwhile));
        }
    }

    /** No ACK from the peer within timeout × retry count: the peer is gone or the path is broken. */
    public static final class RetryExceededException extends RdmaOperationException {
        RetryExceededException(WorkCompletion wc, @Nullable String meanwhile) {
            super(wc, detail("the peer did not acknowledge within the retries (it is gone, or the path to it is broken)", meanwhile));
        }
    }

    /** The peer had no receive posted for every retry. */
    public static final class ReceiverNotReadyException extends RdmaOperationException {
        ReceiverNotReadyException(WorkCompletion wc, @Nullable String meanwhile) {
            super(wc, detail("the peer had no receive buffer posted", meanwhile));
        }
    }

    /**
     * The QP went to error (connection closed or failed) before this request executed; the cause,
     * when known, is why. Then the message is one sentence in those terms, which request did not
     * run and who or what closed the connection ("the RDMA READ did not run: the connection closed
     * first: rdma_cm 10.77.0.1:40000 -> 10.77.0.2:7471: the peer disconnected"): a request flushed
     * because the peer left is news of the peer, not of verbs. {@link #status()}, {@link #wrId()},
     * {@link #qpNumber()} and {@link #vendorError()} still say what the completion said.
     */
    public static final class FlushedException extends RdmaOperationException {
        FlushedException(WorkCompletion wc, @Nullable String why) {
            super(why == null ? flushedWithoutCause(wc) : operation(wc.opcode()) + " did not run: the connection closed first: " + why, wc);
        }

        private static String flushedWithoutCause(WorkCompletion wc) {
            return new WorkCompletionException(wc.status(), wc.wrId(), wc.opcode(), wc.qpNumber(), wc.vendorError(),
                    "flushed: the connection closed or failed before the request executed").getMessage();
        }
    }
}
