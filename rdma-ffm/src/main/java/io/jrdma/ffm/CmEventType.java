package io.jrdma.ffm;

import static io.jrdma.ffm.abi.RdmaCma.*;

/** {@code enum rdma_cm_event_type}; the ordinals are the C values (proven via the constants). */
public enum CmEventType {
    /** {@link CmId#resolveAddress} succeeded: the id is bound to a local device. */
    ADDR_RESOLVED,
    /** Address resolution failed; the status is a negative errno. */
    ADDR_ERROR,
    /** {@link CmId#resolveRoute} succeeded: the id may connect. */
    ROUTE_RESOLVED,
    /** Route resolution failed; the status is a negative errno. */
    ROUTE_ERROR,
    /** A peer connects to a listening id: the event carries a new id to accept or reject. */
    CONNECT_REQUEST,
    /** A connect on an id without a QP was answered: such ids get this instead of ESTABLISHED. */
    CONNECT_RESPONSE,
    /** Establishing the connection failed; the status is a negative errno. */
    CONNECT_ERROR,
    /** The peer did not respond to the connect (or, on the passive side, to the accept). */
    UNREACHABLE,
    /** The peer rejected the connection; the status is the CM reject reason, private data the peer's reason. */
    REJECTED,
    /** The connection is up: both QPs can send. */
    ESTABLISHED,
    /** Either side disconnected: the QP is in ERR and its outstanding WRs flush. */
    DISCONNECTED,
    /** The id's RDMA device was removed: close the id (and what was created on its device). */
    DEVICE_REMOVAL,
    /** A multicast join completed (UD ids). */
    MULTICAST_JOIN,
    /** A multicast join failed or the group went away (UD ids). */
    MULTICAST_ERROR,
    /** The address the id is bound to moved to another device or port, e.g. a bonding failover. */
    ADDR_CHANGE,
    /** The QP of a disconnected connection left the timewait state: its number may be reused. */
    TIMEWAIT_EXIT;

    static {
        if (REJECTED.ordinal() != RDMA_CM_EVENT_REJECTED || TIMEWAIT_EXIT.ordinal() != RDMA_CM_EVENT_TIMEWAIT_EXIT
                || ESTABLISHED.ordinal() != RDMA_CM_EVENT_ESTABLISHED) {
            throw new AssertionError("CmEventType out of step with rdma_cma.h");
        }
    }

    static CmEventType of(int v) {
        CmEventType[] all = values();
        if (v < 0 || v >= all.length) throw new IllegalArgumentException("unknown rdma_cm_event_type " + v);
        return all[v];
    }

    /**
     * Events that end a connection attempt.
     *
     * @return true for ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED and DEVICE_REMOVAL
     */
    public boolean isFailure() {
        return switch (this) {
            case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED, DEVICE_REMOVAL -> true;
            default -> false;
        };
    }
}
