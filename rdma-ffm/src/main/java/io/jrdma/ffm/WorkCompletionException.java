package io.jrdma.ffm;

/**
 * A work request completed with an error status. Carries what a C programmer would print:
 * the verbs status name, wr_id, opcode, QP number and vendor error.
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
                + ", opcode " + opcode + ", vendor_err 0x" + Integer.toHexString(vendorError)
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

    public WcOpcode opcode() {
        return opcode;
    }

    public int qpNumber() {
        return qpNumber;
    }

    public int vendorError() {
        return vendorError;
    }
}
