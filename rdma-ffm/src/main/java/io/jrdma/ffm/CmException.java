package io.jrdma.ffm;

import org.jspecify.annotations.Nullable;

/**
 * rdma_cm delivered a failure event (rejected, unreachable, address or route error, ...) or an
 * event other than the one awaited.
 */
public class CmException extends RdmaException {
    /** The event that ended the wait. */
    private final CmEventType event;
    /** The event's status. */
    private final int status;
    /** Private data that came with the event; empty when none. */
    private final byte[] privateData;

    /**
     * A failure event, or an event other than the one awaited.
     *
     * @param message     what failed and what was awaited
     * @param event       the event that arrived
     * @param status      the event's status: a negative errno, or for REJECTED the CM reject reason
     * @param privateData private data that came with the event, or null for none; copied
     */
    public CmException(String message, CmEventType event, int status, byte @Nullable [] privateData) {
        super(message);
        this.event = event;
        this.status = status;
        this.privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    /** {@return the event that arrived: a failure, or not the awaited one} */
    public CmEventType event() {
        return event;
    }

    /** {@return the event's status: a negative errno, or for REJECTED the InfiniBand CM reject reason} */
    public int status() {
        return status;
    }

    /**
     * {@return a copy of the private data that came with the event, e.g. the reason a server put
     * into its reject; empty when none}
     */
    public byte[] privateData() {
        return privateData.clone();
    }

    /**
     * The typed failure an unexpected event {@code e} means to someone awaiting {@code awaited}.
     *
     * @param e       the event that arrived instead
     * @param awaited what the caller waited for, for the message (e.g. {@code "ESTABLISHED"})
     * @return the exception, with a message that explains the event (reject reason, errno text)
     */
    public static CmException of(CmEvent e, String awaited) {
        String why = switch (e.type()) {
            case REJECTED -> e.status() == 8
                    ? "connection rejected: no listener at the destination (IB CM reason 8, invalid service ID)"
                    : "connection rejected by the peer (IB CM reason " + e.status() + ")";
            case UNREACHABLE -> "peer unreachable (" + statusText(e.status()) + ")";
            case ADDR_ERROR -> "address resolution failed (" + statusText(e.status()) + ")";
            case ROUTE_ERROR -> "route resolution failed (" + statusText(e.status()) + ")";
            case CONNECT_ERROR -> "connection error (" + statusText(e.status()) + ")";
            case DEVICE_REMOVAL -> "the RDMA device was removed";
            default -> "unexpected " + e.type() + " (status " + e.status() + ")";
        };
        return new CmException(why + " while waiting for " + awaited, e.type(), e.status(), e.privateData());
    }

    private static String statusText(int status) {
        return status < 0 ? Errno.describe(-status) : "status " + status;
    }
}
