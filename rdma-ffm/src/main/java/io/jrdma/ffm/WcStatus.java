package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDataPath.*;

/** {@code enum ibv_wc_status}, named as in verbs.h so logs match C programs'. */
public enum WcStatus {
    /** The work request completed. */
    IBV_WC_SUCCESS,
    /** Local length error: a received message did not fit the receive's buffers, or a send was too long. */
    IBV_WC_LOC_LEN_ERR,
    /** Local QP operation error: the QP could not execute the WR, e.g. inline data above its limit. */
    IBV_WC_LOC_QP_OP_ERR,
    /** Local EE context operation error (RD only). */
    IBV_WC_LOC_EEC_OP_ERR,
    /** Local protection error: an SGE's lkey does not cover its range, or its region belongs to another PD. */
    IBV_WC_LOC_PROT_ERR,
    /** Flushed: the QP was in (or went to) ERR before the WR was processed, after an error or a disconnect. */
    IBV_WC_WR_FLUSH_ERR,
    /** Memory window bind error. */
    IBV_WC_MW_BIND_ERR,
    /** Bad response: the responder answered with an unexpected transport opcode. */
    IBV_WC_BAD_RESP_ERR,
    /** Local access error: a local buffer refused the data of an incoming RDMA WRITE with immediate. */
    IBV_WC_LOC_ACCESS_ERR,
    /** Remote invalid request: the peer found the request invalid, e.g. a message longer than its receive. */
    IBV_WC_REM_INV_REQ_ERR,
    /** Remote access error: the rkey, range or access rights of an RDMA READ, WRITE or atomic were wrong at the peer. */
    IBV_WC_REM_ACCESS_ERR,
    /** Remote operation error: the peer could not complete the operation, e.g. its receive failed. */
    IBV_WC_REM_OP_ERR,
    /** Transport retries exceeded: the peer did not acknowledge (gone, or unreachable) within timeout × retries. */
    IBV_WC_RETRY_EXC_ERR,
    /** RNR retries exceeded: the peer had no receive posted through every RNR retry. */
    IBV_WC_RNR_RETRY_EXC_ERR,
    /** Local RDD violation (RD only). */
    IBV_WC_LOC_RDD_VIOL_ERR,
    /** Remote invalid RD request (RD only). */
    IBV_WC_REM_INV_RD_REQ_ERR,
    /** Remote aborted: the peer aborted the operation. */
    IBV_WC_REM_ABORT_ERR,
    /** Invalid EE context number (RD only). */
    IBV_WC_INV_EECN_ERR,
    /** Invalid EE context state (RD only). */
    IBV_WC_INV_EEC_STATE_ERR,
    /** Fatal error of the device or its driver. */
    IBV_WC_FATAL_ERR,
    /** Response timeout. */
    IBV_WC_RESP_TIMEOUT_ERR,
    /** An error no other status describes. */
    IBV_WC_GENERAL_ERR,
    /** Tag matching error (tag-matching SRQs). */
    IBV_WC_TM_ERR,
    /** Tag matching rendezvous incomplete (tag-matching SRQs). */
    IBV_WC_TM_RNDV_INCOMPLETE;

    private static final WcStatus[] BY_VALUE = values();

    static {
        // The enum's ordinals are the C values; the constants in VerbsDataPath are proven against verbs.h.
        if (IBV_WC_REM_ACCESS_ERR.ordinal() != io.jrdma.ffm.abi.VerbsDataPath.IBV_WC_REM_ACCESS_ERR
                || IBV_WC_TM_RNDV_INCOMPLETE.ordinal() != io.jrdma.ffm.abi.VerbsDataPath.IBV_WC_TM_RNDV_INCOMPLETE) {
            throw new AssertionError("WcStatus out of step with verbs.h");
        }
    }

    /**
     * The constant of an {@code ibv_wc_status} value.
     *
     * @param value as {@code ibv_wc.status} holds it
     * @return the constant
     * @throws IllegalArgumentException for a value verbs.h does not define
     */
    public static WcStatus of(int value) {
        if (value < 0 || value >= BY_VALUE.length) throw new IllegalArgumentException("unknown ibv_wc_status " + value);
        return BY_VALUE[value];
    }

    /** {@return the {@code ibv_wc_status} value} */
    public int value() {
        return ordinal();
    }

    /** {@return whether this is {@link #IBV_WC_SUCCESS}} */
    public boolean isSuccess() {
        return this == IBV_WC_SUCCESS;
    }

    /** {@return libibverbs' description ({@code ibv_wc_status_str}), e.g. "remote access error"} */
    public String description() {
        return WorkCompletions.statusString(ordinal());
    }
}
