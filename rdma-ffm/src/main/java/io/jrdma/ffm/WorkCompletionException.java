package io.jrdma.ffm;

/**
 * A work request completed with an error status. Carries what a C programmer would print:
 * the verbs status name, wr_id, QP number and vendor error, and the opcode when the caller knows
 * what it posted: a failed completion does not report one (ibv_poll_cq(3)).
 */
public class WorkCompletionException extends RdmaException {
    private final WcStatus status;
    private final long wrId;
    private final WcOpcode opcode;
    private final int qpNumber;
    private final int vendorError;

    public WorkCompletionException(WcStatus status, long wrId, WcOpcode opcode, int qpNumber, int vendorError) {
        this(status, wrId, opcode, qpNumber, vendorError, null);
    }

    public WorkCompletionException(WcStatus status, long wrId, WcOpcode opcode, int qpNumber, int vendorError, String detail) {
        super(status + " (" + status.description() + ") on QP 0x" + Integer.toHexString(qpNumber) + ", wr_id " + wrId
                + (opcode == null ? ", opcode unknown (not reported for failed completions)" : ", opcode " + opcode)
                + ", vendor_err 0x" + Integer.toHexString(vendorError)
                + (detail == null ? "" : ": " + detail));
        this.status = status;
        this.wrId = wrId;
        this.opcode = opcode;
        this.qpNumber = qpNumber;
        this.vendorError = vendorError;
    }

    public WcStatus status() {
        return status;
    }

    public long wrId() {
        return wrId;
    }

    /** The posted opcode, or null when the code that raised this did not know it. */
    public WcOpcode opcode() {
        return opcode;
    }

    public int qpNumber() {
        return qpNumber;
    }

    /** The device's own error code ({@code ibv_wc.vendor_err}), which its vendor documents beyond the status. */
    public int vendorError() {
        return vendorError;
    }
}
