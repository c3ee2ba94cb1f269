package io.jrdma.reactive;

import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;

/**
 * A completion as the reactive layer hands it out: an immutable copy of one {@code ibv_wc}.
 *
 * @param wrId         the work request's id
 * @param status       the completion status
 * @param opcode       what completed; for a failed completion, what was posted (verbs leaves it undefined)
 * @param byteLength   the bytes transferred: for a receive, the length of the message
 * @param hasImmediate whether the completion carries immediate data
 * @param immediate    the immediate value (host order) when {@link #hasImmediate()}
 * @param qpNumber     the local QP the work request belonged to
 * @param vendorError  the device's own error code ({@code ibv_wc.vendor_err}) of a failed
 *     completion, which its vendor documents beyond the status; 0 for a successful one, whose
 *     {@code vendor_err} means nothing
 */
public record WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLength, boolean hasImmediate,
                             int immediate, int qpNumber, int vendorError) {
    /** {@return whether the status is IBV_WC_SUCCESS} */
    public boolean isSuccess() {
        return status == WcStatus.IBV_WC_SUCCESS;
    }
}
