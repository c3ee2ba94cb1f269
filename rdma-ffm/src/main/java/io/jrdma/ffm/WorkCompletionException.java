package io.jrdma.ffm;

import org.jspecify.annotations.Nullable;

/**
 * A work request completed with an error status. Carries what a C programmer would print:
 * the verbs status name, wr_id, QP number and vendor error, and the opcode when the caller knows
 * what it posted: a failed completion does not report one (ibv_poll_cq(3)).
 */
public class WorkCompletionException extends RdmaException {
    /** The completion's status. */
    private final WcStatus status;
    /** The wr_id of the failed work request. */
    private final long wrId;
    /** The posted opcode, or null. */
    private final @Nullable WcOpcode opcode;
    /** The local QP the work request was posted on. */
    private final int qpNumber;
    /** The provider's vendor_err. */
    private final int vendorError;

    /**
     * A failed completion.
     *
     * @param status      the completion's status
     * @param wrId        the wr_id of the failed work request
     * @param opcode      the opcode the caller posted, or null when unknown
     * @param qpNumber    the local QP the work request was posted on
     * @param vendorError the completion's vendor_err
     */
    public WorkCompletionException(WcStatus status, long wrId, @Nullable WcOpcode opcode, int qpNumber, int vendorError) {
        this(status, wrId, opcode, qpNumber, vendorError, null);
    }

    /**
     * A failed completion, with what the caller knows about it.
     *
     * @param status      the completion's status
     * @param wrId        the wr_id of the failed work request
     * @param opcode      the opcode the caller posted, or null when unknown
     * @param qpNumber    the local QP the work request was posted on
     * @param vendorError the completion's vendor_err
     * @param detail      appended to the message (e.g. the remote range a WRITE targeted), or null
     */
    public WorkCompletionException(WcStatus status, long wrId, @Nullable WcOpcode opcode, int qpNumber, int vendorError,
                                   @Nullable String detail) {
        this(status + " (" + status.description() + ") on QP 0x" + Integer.toHexString(qpNumber) + ", wr_id " + wrId
                + (opcode == null ? ", opcode unknown (not reported for failed completions)" : ", opcode " + opcode)
                + ", vendor_err 0x" + Integer.toHexString(vendorError)
                + (detail == null ? "" : ": " + detail), status, wrId, opcode, qpNumber, vendorError);
    }

    /**
     * A failed completion whose message a higher layer words itself, in terms of what happened
     * (the peer left, say) rather than the verbs status; the status, wr_id, opcode, QP number and
     * vendor error stay readable here for code and logs.
     *
     * @param message     the whole message
     * @param status      the completion's status
     * @param wrId        the wr_id of the failed work request
     * @param opcode      the opcode the caller posted, or null when unknown
     * @param qpNumber    the local QP the work request was posted on
     * @param vendorError the completion's vendor_err
     */
    protected WorkCompletionException(String message, WcStatus status, long wrId, @Nullable WcOpcode opcode, int qpNumber, int vendorError) {
        super(message);
        this.status = status;
        this.wrId = wrId;
        this.opcode = opcode;
        this.qpNumber = qpNumber;
        this.vendorError = vendorError;
    }

    /** {@return the completion's status} */
    public WcStatus status() {
        return status;
    }

    /** {@return the wr_id of the failed work request} */
    public long wrId() {
        return wrId;
    }

    /** {@return the posted opcode, or null when the code that raised this did not know it} */
    public @Nullable WcOpcode opcode() {
        return opcode;
    }

    /** {@return the number of the local QP the work request was posted on} */
    public int qpNumber() {
        return qpNumber;
    }

    /** {@return the device's own error code ({@code ibv_wc.vendor_err}), which its vendor documents beyond the status; 0 when it gives none} */
    public int vendorError() {
        return vendorError;
    }
}
