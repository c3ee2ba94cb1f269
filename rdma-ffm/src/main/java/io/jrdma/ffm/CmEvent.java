package io.jrdma.ffm;

import org.jspecify.annotations.Nullable;

/**
 * An {@code rdma_cm_event}, copied out and acknowledged. For {@link CmEventType#CONNECT_REQUEST}
 * {@link #id()} is a new CmId the listener owns: accept or reject it, then close it.
 *
 * @param type               what happened
 * @param status             0, a negative errno (e.g. -110 for UNREACHABLE), or the CM reject reason
 * @param id                 the id the event is for: for CONNECT_REQUEST the new id; null only from
 *                           {@link EventChannel#next} for an id the channel does not know
 * @param listenId           for CONNECT_REQUEST, the listening id the request came to; else null
 * @param privateData        the peer's private data; on InfiniBand/RoCE a CONNECT_REQUEST reports the
 *                           whole 56-byte field, zero-padded, so protocols must carry their own length
 * @param responderResources from the event's connection parameters: on a CONNECT_REQUEST, the RDMA
 *                           READs/atomics the peer can have outstanding at us
 * @param initiatorDepth     from the event's connection parameters: on a CONNECT_REQUEST, the RDMA
 *                           READs/atomics the peer will accept outstanding from us
 * @param remoteQpNumber     the peer's QP number, where the event reports one (CONNECT_REQUEST,
 *                           CONNECT_RESPONSE); else 0
 */
public record CmEvent(CmEventType type, int status, @Nullable CmId id, @Nullable CmId listenId, byte[] privateData,
                      int responderResources, int initiatorDepth, int remoteQpNumber) {
    /** Copies {@code privateData}, so the event never shares the array. */
    public CmEvent {
        privateData = privateData.clone();
    }

    /** {@return a copy of the peer's private data, empty when there was none} */
    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public String toString() {
        return type + (status != 0 ? " (status " + status + ")" : "") + " on " + id;
    }
}
