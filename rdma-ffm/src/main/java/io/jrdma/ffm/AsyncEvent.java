package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDevice.*;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.VerbsCalls;
import java.lang.foreign.MemorySegment;

/**
 * An {@code ibv_async_event}, copied out before acknowledgement.
 *
 * @param type          {@code enum ibv_event_type} value
 * @param name          libibverbs' name of the type, e.g. {@code "local work queue catastrophic error"}
 * @param elementAddress address of the CQ/QP/SRQ the event concerns (0 for port events)
 * @param portNumber    port of port events, else 0
 */
public record AsyncEvent(int type, String name, long elementAddress, int portNumber) {
    static AsyncEvent read(MemorySegment e) {
        int type = (int) ibv_async_event_event_type.get(e);
        boolean portEvent = type == IBV_EVENT_PORT_ACTIVE || type == IBV_EVENT_PORT_ERR
                || type == IBV_EVENT_LID_CHANGE || type == IBV_EVENT_PKEY_CHANGE || type == IBV_EVENT_SM_CHANGE
                || type == IBV_EVENT_CLIENT_REREGISTER || type == IBV_EVENT_GID_CHANGE
                || type == IBV_EVENT_DEVICE_FATAL;
        long element = portEvent ? 0 : switch (type) {
            case IBV_EVENT_CQ_ERR -> ((MemorySegment) ibv_async_event_element_cq.get(e)).address();
            case IBV_EVENT_SRQ_ERR, IBV_EVENT_SRQ_LIMIT_REACHED -> ((MemorySegment) ibv_async_event_element_srq.get(e)).address();
            default -> ((MemorySegment) ibv_async_event_element_qp.get(e)).address();
        };
        int port = portEvent && type != IBV_EVENT_DEVICE_FATAL ? (int) ibv_async_event_element_port_num.get(e) : 0;
        return new AsyncEvent(type, typeName(type), element, port);
    }

    static String typeName(int type) {
        try {
            return ((MemorySegment) VerbsCalls.ibv_event_type_str.invokeExact(type)).reinterpret(128).getString(0);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Whether this event names {@code qp} (a QP error or fatal event, path migration, last WQE reached, ...).
     *
     * @param qp a queue pair of the context the event came from
     * @return true when the event's element is that QP's handle
     */
    public boolean concerns(QueuePair qp) {
        return elementAddress == qp.handle().address();
    }

    /**
     * Whether this event names {@code srq} (limit reached, or an SRQ error).
     *
     * @param srq a shared receive queue of the context the event came from
     * @return true when the event's element is that SRQ's handle
     */
    public boolean concerns(SharedReceiveQueue srq) {
        return elementAddress == srq.handle().address();
    }

    /**
     * {@code IBV_EVENT_SRQ_LIMIT_REACHED}: fewer WRs than the armed limit are posted (the limit is disarmed).
     *
     * @return whether this event is the SRQ limit event
     */
    public boolean isSrqLimitReached() {
        return type == IBV_EVENT_SRQ_LIMIT_REACHED;
    }

    /**
     * {@code IBV_EVENT_QP_LAST_WQE_REACHED}: a QP attached to an SRQ entered the error state and
     * will take no more of the SRQ's receives (the one sign of it a receive-only QP gives).
     *
     * @return whether this event is the last-WQE-reached event
     */
    public boolean isLastWqeReached() {
        return type == IBV_EVENT_QP_LAST_WQE_REACHED;
    }

    /**
     * {@code IBV_EVENT_CQ_ERR}: the CQ it names overran or failed; no completion comes through it any more.
     *
     * @return whether this event is a CQ error
     */
    public boolean isCqError() {
        return type == IBV_EVENT_CQ_ERR;
    }

    /**
     * {@code IBV_EVENT_DEVICE_FATAL}: the device failed (or is being removed); nothing of its context works any more.
     *
     * @return whether this event is the device's fatal error
     */
    public boolean isDeviceFatal() {
        return type == IBV_EVENT_DEVICE_FATAL;
    }

    /**
     * An event after which the QP or CQ it names can no longer be used (fatal, access error, path failure).
     *
     * @return true for QP fatal, QP request and access errors, CQ and SRQ errors, and device fatal
     */
    public boolean isFatal() {
        return type == IBV_EVENT_QP_FATAL || type == IBV_EVENT_QP_REQ_ERR || type == IBV_EVENT_QP_ACCESS_ERR
                || type == IBV_EVENT_CQ_ERR || type == IBV_EVENT_SRQ_ERR || type == IBV_EVENT_DEVICE_FATAL;
    }
}
