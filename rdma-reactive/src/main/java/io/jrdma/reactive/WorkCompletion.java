package io.jrdma.reactive;

import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;

/**
 * A completion as the reactive layer hands it out: an immutable copy of one {@code ibv_wc}.
 *
 * @param immediate the immediate value (host order) when {@link #hasImmediate()}
 */
public record WorkCompletion(long wrId, WcStatus status, WcOpcode opcode, int byteLength, boolean hasImmediate,
                             int immediate, int qpNumber) {
    public boolean isSuccess() {
        return status == WcStatus.IBV_WC_SUCCESS;
    }
}
