package io.jrdma.ffm;

import static io.jrdma.ffm.abi.Verbs.*;

/** {@code enum ibv_wc_status}, named as in verbs.h so logs match C programs'. */
public enum WcStatus {
    IBV_WC_SUCCESS, IBV_WC_LOC_LEN_ERR, IBV_WC_LOC_QP_OP_ERR, IBV_WC_LOC_EEC_OP_ERR, IBV_WC_LOC_PROT_ERR,
    IBV_WC_WR_FLUSH_ERR, IBV_WC_MW_BIND_ERR, IBV_WC_BAD_RESP_ERR, IBV_WC_LOC_ACCESS_ERR, IBV_WC_REM_INV_REQ_ERR,
    IBV_WC_REM_ACCESS_ERR, IBV_WC_REM_OP_ERR, IBV_WC_RETRY_EXC_ERR, IBV_WC_RNR_RETRY_EXC_ERR,
    IBV_WC_LOC_RDD_VIOL_ERR, IBV_WC_REM_INV_RD_REQ_ERR, IBV_WC_REM_ABORT_ERR, IBV_WC_INV_EECN_ERR,
    IBV_WC_INV_EEC_STATE_ERR, IBV_WC_FATAL_ERR, IBV_WC_RESP_TIMEOUT_ERR, IBV_WC_GENERAL_ERR, IBV_WC_TM_ERR,
    IBV_WC_TM_RNDV_INCOMPLETE;

    private static final WcStatus[] BY_VALUE = values();

    static {
        // The enum's ordinals are the C values; the constants in Verbs are proven against verbs.h.
        if (IBV_WC_REM_ACCESS_ERR.ordinal() != io.jrdma.ffm.abi.Verbs.IBV_WC_REM_ACCESS_ERR
                || IBV_WC_TM_RNDV_INCOMPLETE.ordinal() != io.jrdma.ffm.abi.Verbs.IBV_WC_TM_RNDV_INCOMPLETE) {
            throw new AssertionError("WcStatus out of step with verbs.h");
        }
    }

    public static WcStatus of(int value) {
        if (value < 0 || value >= BY_VALUE.length) throw new IllegalArgumentException("unknown ibv_wc_status " + value);
        return BY_VALUE[value];
    }

    public int value() {
        return ordinal();
    }

    public boolean isSuccess() {
        return this == IBV_WC_SUCCESS;
    }

    /** libibverbs' description, e.g. "remote access error". */
    public String description() {
        return WorkCompletions.statusString(ordinal());
    }
}
