package io.jrdma.ffm;

/**
 * An {@code rdma_cm_event}, copied out and acknowledged. For {@link CmEventType#CONNECT_REQUEST}
 * {@link #id()} is a new CmId the listener owns: accept or reject it, then close it.
 *
 * @param status      0, a negative errno (e.g. -110 for UNREACHABLE), or the CM reject reason
 * @param privateData the peer's private data; on InfiniBand/RoCE a CONNECT_REQUEST reports the
 *                    whole 56-byte field, zero-padded, so protocols must carry their own length
 */
public record CmEvent(CmEventType type, int status, CmId id, CmId listenId, byte[] privateData,
                      int responderResources, int initiatorDepth, int remoteQpNumber) {
    public CmEvent {
        privateData = privateData.clone();
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    @Override
    public String toString() {
        return type + (status != 0 ? " (status " + status + ")" : "") + " on " + id;
    }
}
