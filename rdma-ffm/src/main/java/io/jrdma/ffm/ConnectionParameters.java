package io.jrdma.ffm;

import static io.jrdma.ffm.abi.RdmaCma.*;

import io.jrdma.ffm.abi.RdmaCma;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * {@code struct rdma_conn_param} for connect and accept.
 *
 * @param privateData        bytes the peer receives with its CONNECT_REQUEST (connect) or
 *                           ESTABLISHED (accept); empty for none
 * @param responderResources RDMA READs/atomics the peer may have outstanding at us
 * @param initiatorDepth     RDMA READs/atomics we may have outstanding at the peer
 * @param retryCount         transport retries after an ACK timeout before a WR fails with
 *                           IBV_WC_RETRY_EXC_ERR, 0 to 7
 * @param rnrRetryCount      7 = retry forever when the receiver has no RECV posted
 */
public record ConnectionParameters(byte @Nullable [] privateData, int responderResources, int initiatorDepth, int retryCount,
                                   int rnrRetryCount) {
    /** Copies {@code privateData}; null means none. */
    public ConnectionParameters {
        privateData = privateData == null ? new byte[0] : privateData.clone();
    }

    /**
     * No private data, 16 READs/atomics outstanding each way, 7 transport retries, RNR retry forever.
     *
     * @return the defaults
     */
    public static ConnectionParameters defaults() {
        return new ConnectionParameters(new byte[0], 16, 16, 7, 7);
    }

    /**
     * These parameters with other private data.
     *
     * @param data the bytes for the peer, or null for none; copied
     * @return a new value
     */
    public ConnectionParameters withPrivateData(byte @Nullable [] data) {
        return new ConnectionParameters(data, responderResources, initiatorDepth, retryCount, rnrRetryCount);
    }

    /**
     * These parameters with other RDMA READ/atomic depths.
     *
     * @param responder READs/atomics the peer may have outstanding at us (at most the device's max_qp_rd_atom)
     * @param initiator READs/atomics we may have outstanding at the peer (at most max_qp_init_rd_atom)
     * @return a new value
     */
    public ConnectionParameters withReadDepth(int responder, int initiator) {
        return new ConnectionParameters(privateData, responder, initiator, retryCount, rnrRetryCount);
    }

    /** {@return a copy of the private data} */
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
