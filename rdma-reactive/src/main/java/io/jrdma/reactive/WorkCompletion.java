package io.jrdma.reactive;

import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;

/**
 * A completion as the reactive layer hands it out: an immutable copy of one {@code ibv_wc}.
 *
 * @param immediate the immediate value (host order) when {@link #hasImmediate()}
 * @param vendorError the device's own error code ({@code ibv_wc.vendor_err}) of a failed
 *     completion, which its vendor documents beyond the status; 0 for a successful one, whose
 *     {@code vendor_err} means nothing
 */
public record WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLength, boolean hasImmediate,
                             int immediate, int qpNumber, int vendorError) {
    public boolean isSuccess() {
        return status == WcStatus.IBV_WC_SUCCESS;
    }
}
