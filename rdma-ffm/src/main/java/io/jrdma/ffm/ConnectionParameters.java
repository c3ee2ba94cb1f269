package io.jrdma.ffm;

import static io.jrdma.ffm.abi.RdmaCma.*;

import io.jrdma.ffm.abi.RdmaCma;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * {@code struct rdma_conn_param} for connect and accept.
 *
 * @param responderResources RDMA READs/atomics the peer may have outstanding at us
 * @param initiatorDepth     RDMA READs/atomics we may have outstanding at the peer
 * @param rnrRetryCount      7 = retry forever when the receiver has no RECV posted
 */
public record ConnectionParameters(byte[] privateData, int responderResources, int initiatorDepth, int retryCount,
                                   int rnrRetryCount) {
    public ConnectionParameters {
        privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    public static ConnectionParameters defaults() {
        return new ConnectionParameters(new byte[0], 16, 16, 7, 7);
    }

    public ConnectionParameters withPrivateData(byte[] data) {
        return new ConnectionParameters(data, responderResources, initiatorDepth, retryCount, rnrRetryCount);
    }

    public ConnectionParameters withReadDepth(int responder, int initiator) {
        return new ConnectionParameters(privateData, responder, initiator, retryCount, rnrRetryCount);
    }

    @Override
    public byte[] privateData() {
        return privateData.clone();
    }

    MemorySegment write(Arena arena, int maxPrivateData) {
        if (privateData.length > maxPrivateData) {
            throw new IllegalArgumentException(privateData.length + " bytes of private data exceed the CM limit of " + maxPrivateData);
        }
        MemorySegment p = arena.allocate(RdmaCma.rdma_conn_param);
        if (privateData.length > 0) {
            MemorySegment data = arena.allocate(privateData.length);
            MemorySegment.copy(MemorySegment.ofArray(privateData), 0, data, 0, privateData.length);
            rdma_conn_param_private_data.set(p, data);
        } else {
            rdma_conn_param_private_data.set(p, MemorySegment.NULL);
        }
        rdma_conn_param_private_data_len.set(p, (byte) privateData.length);
        rdma_conn_param_responder_resources.set(p, (byte) responderResources);
        rdma_conn_param_initiator_depth.set(p, (byte) initiatorDepth);
        rdma_conn_param_flow_control.set(p, (byte) 1);
        rdma_conn_param_retry_count.set(p, (byte) retryCount);
        rdma_conn_param_rnr_retry_count.set(p, (byte) rnrRetryCount);
        rdma_conn_param_srq.set(p, (byte) 0);
        rdma_conn_param_qp_num.set(p, 0);
        return p;
    }
}
