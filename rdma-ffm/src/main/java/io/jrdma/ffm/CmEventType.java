package io.jrdma.ffm;

import static io.jrdma.ffm.abi.RdmaCma.*;

/** {@code enum rdma_cm_event_type}; the ordinals are the C values (proven via the constants). */
public enum CmEventType {
    ADDR_RESOLVED, ADDR_ERROR, ROUTE_RESOLVED, ROUTE_ERROR, CONNECT_REQUEST, CONNECT_RESPONSE, CONNECT_ERROR,
    UNREACHABLE, REJECTED, ESTABLISHED, DISCONNECTED, DEVICE_REMOVAL, MULTICAST_JOIN, MULTICAST_ERROR,
    ADDR_CHANGE, TIMEWAIT_EXIT;

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

    /** Events that end a connection attempt. */
    public boolean isFailure() {
        return switch (this) {
            case ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR, UNREACHABLE, REJECTED, DEVICE_REMOVAL -> true;
            default -> false;
        };
    }
}
