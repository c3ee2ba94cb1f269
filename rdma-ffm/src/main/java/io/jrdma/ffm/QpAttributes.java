package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDataPath.*;
import static io.jrdma.ffm.abi.VerbsQueuePair.*;

import io.jrdma.ffm.abi.VerbsQueuePair;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Set;

/**
 * {@code struct ibv_qp_attr} plus its attribute mask, for {@link QueuePair#modify}: each setter
 * sets the field and the mask bit that tells the kernel to apply it.
 */
public final class QpAttributes {
    private int mask;
    private QpState state;
    private Mtu pathMtu;
    private int qkey, rqPsn, sqPsn, destQpNum, accessFlags, pkeyIndex, port;
    private int timeout, retryCount, rnrRetry, maxRdAtomic, maxDestRdAtomic, minRnrTimer;
    private byte[] dgid;
    private int sgidIndex, hopLimit, trafficClass, flowLabel, dlid, serviceLevel, ahPort;
    private boolean global;

    /** No attribute selected yet: each setter adds its field to what {@link QueuePair#modify} applies. */
    public QpAttributes() {
    }

    /**
     * The state to move to ({@code qp_state}).
     *
     * @param s the target state
     * @return this
     */
    public QpAttributes state(QpState s) { state = s; mask |= IBV_QP_STATE; return this; }
    /**
     * The path MTU ({@code path_mtu}, INIT → RTR of connected QPs): at most the active MTU of both ports.
     *
     * @param m the MTU
     * @return this
     */
    public QpAttributes pathMtu(Mtu m) { pathMtu = m; mask |= IBV_QP_PATH_MTU; return this; }
    /**
     * The Q_Key of a UD QP ({@code qkey}): it accepts only datagrams that carry the same one.
     *
     * @param v the Q_Key
     * @return this
     */
    public QpAttributes qkey(int v) { qkey = v; mask |= IBV_QP_QKEY; return this; }
    /**
     * The first PSN expected from the peer ({@code rq_psn}, INIT → RTR): the peer's {@code sq_psn}.
     *
     * @param v the PSN, 24 bits
     * @return this
     */
    public QpAttributes rqPsn(int v) { rqPsn = v; mask |= IBV_QP_RQ_PSN; return this; }
    /**
     * The first PSN this QP sends with ({@code sq_psn}, RTR → RTS): the peer's {@code rq_psn}.
     *
     * @param v the PSN, 24 bits
     * @return this
     */
    public QpAttributes sqPsn(int v) { sqPsn = v; mask |= IBV_QP_SQ_PSN; return this; }
    /**
     * The peer's QP number ({@code dest_qp_num}, INIT → RTR of connected QPs).
     *
     * @param v the peer's QP number
     * @return this
     */
    public QpAttributes destQpNumber(int v) { destQpNum = v; mask |= IBV_QP_DEST_QPN; return this; }
    /**
     * What peers may do through this QP ({@code qp_access_flags}): remote write, read, atomics.
     *
     * @param a the access flags (see {@link Access#mask})
     * @return this
     */
    public QpAttributes access(Set<Access> a) { accessFlags = Access.mask(a); mask |= IBV_QP_ACCESS_FLAGS; return this; }
    /**
     * The P_Key table index ({@code pkey_index}, RESET → INIT), usually 0.
     *
     * @param v the index
     * @return this
     */
    public QpAttributes pkeyIndex(int v) { pkeyIndex = v; mask |= IBV_QP_PKEY_INDEX; return this; }
    /**
     * The physical port ({@code port_num}, RESET → INIT).
     *
     * @param v the port number, from 1
     * @return this
     */
    public QpAttributes port(int v) { port = v; mask |= IBV_QP_PORT; return this; }
    /**
     * Local ACK timeout: 4.096 µs × 2^v.
     *
     * @param v the timeout code, 1 to 31 (14 ≈ 67 ms); 0 waits forever
     * @return this
     */
    public QpAttributes timeout(int v) { timeout = v; mask |= IBV_QP_TIMEOUT; return this; }
    /**
     * Transport retries after an ACK timeout before a WR fails with IBV_WC_RETRY_EXC_ERR ({@code retry_cnt}, RTR → RTS).
     *
     * @param v 0 to 7
     * @return this
     */
    public QpAttributes retryCount(int v) { retryCount = v; mask |= IBV_QP_RETRY_CNT; return this; }
    /**
     * RNR retries; 7 means retry forever.
     *
     * @param v 0 to 7: how often to resend when the peer had no receive posted
     * @return this
     */
    public QpAttributes rnrRetry(int v) { rnrRetry = v; mask |= IBV_QP_RNR_RETRY; return this; }
    /**
     * RDMA READs/atomics this QP may have outstanding as initiator ({@code max_rd_atomic}, RTR → RTS).
     *
     * @param v at most the device's max_qp_init_rd_atom
     * @return this
     */
    public QpAttributes maxReadAtomic(int v) { maxRdAtomic = v; mask |= IBV_QP_MAX_QP_RD_ATOMIC; return this; }
    /**
     * RDMA READs/atomics the peer may have outstanding at this QP ({@code max_dest_rd_atomic}, INIT → RTR).
     *
     * @param v at most the device's max_qp_rd_atom
     * @return this
     */
    public QpAttributes maxDestReadAtomic(int v) { maxDestRdAtomic = v; mask |= IBV_QP_MAX_DEST_RD_ATOMIC; return this; }
    /**
     * The RNR NAK delay a peer is told to wait when its send found no receive posted ({@code min_rnr_timer}, INIT → RTR;
     * an RC QP may change it again in RTR → RTS and RTS → RTS).
     *
     * @param v the delay code, e.g. 12 = 0.64 ms
     * @return this
     */
    public QpAttributes minRnrTimer(int v) { minRnrTimer = v; mask |= IBV_QP_MIN_RNR_TIMER; return this; }

    /**
     * A global (GRH) address vector: required for RoCE, where the GID is the IP address.
     *
     * @param destGid      the peer's GID, 16 bytes; copied
     * @param sgidIndex    the local GID table index to send from
     * @param hopLimit     the IP hop limit (TTL)
     * @param trafficClass the IP traffic class (DSCP and ECN bits)
     * @param serviceLevel the service level
     * @param port         the local port, from 1
     * @return this
     * @throws IllegalArgumentException when {@code destGid} is not 16 bytes
     */
    public QpAttributes globalAddress(byte[] destGid, int sgidIndex, int hopLimit, int trafficClass, int serviceLevel, int port) {
        if (destGid.length != 16) throw new IllegalArgumentException("a GID has 16 bytes");
        this.dgid = destGid.clone();
        this.global = true;
        this.sgidIndex = sgidIndex;
        this.hopLimit = hopLimit;
        this.trafficClass = trafficClass;
        this.serviceLevel = serviceLevel;
        this.ahPort = port;
        mask |= IBV_QP_AV;
        return this;
    }

    /**
     * A LID-routed address vector (InfiniBand without GRH).
     *
     * @param dlid         the peer's LID
     * @param serviceLevel the service level
     * @param port         the local port, from 1
     * @return this
     */
    public QpAttributes localAddress(int dlid, int serviceLevel, int port) {
        this.dlid = dlid;
        this.global = false;
        this.serviceLevel = serviceLevel;
        this.ahPort = port;
        mask |= IBV_QP_AV;
        return this;
    }

    /**
     * The destination LID of the address vector set by {@link #globalAddress} (a GRH-routed
     * InfiniBand path); sets no mask bit of its own.
     *
     * @param lid the peer's LID
     * @return this
     */
    public QpAttributes destLid(int lid) {
        this.dlid = lid;
        return this;
    }

    int mask() {
        return mask;
    }

    QpState targetState() {
        return state;
    }

    MemorySegment write(Arena arena) {
        MemorySegment a = arena.allocate(VerbsQueuePair.ibv_qp_attr);
        if (state != null) ibv_qp_attr_qp_state.set(a, state.value);
        if (pathMtu != null) ibv_qp_attr_path_mtu.set(a, pathMtu.value);
        ibv_qp_attr_qkey.set(a, qkey);
        ibv_qp_attr_rq_psn.set(a, rqPsn);
        ibv_qp_attr_sq_psn.set(a, sqPsn);
        ibv_qp_attr_dest_qp_num.set(a, destQpNum);
        ibv_qp_attr_qp_access_flags.set(a, accessFlags);
        ibv_qp_attr_pkey_index.set(a, (short) pkeyIndex);
        ibv_qp_attr_port_num.set(a, (byte) port);
        ibv_qp_attr_timeout.set(a, (byte) timeout);
        ibv_qp_attr_retry_cnt.set(a, (byte) retryCount);
        ibv_qp_attr_rnr_retry.set(a, (byte) rnrRetry);
        ibv_qp_attr_max_rd_atomic.set(a, (byte) maxRdAtomic);
        ibv_qp_attr_max_dest_rd_atomic.set(a, (byte) maxDestRdAtomic);
        ibv_qp_attr_min_rnr_timer.set(a, (byte) minRnrTimer);
        if ((mask & IBV_QP_AV) != 0) {
            ibv_qp_attr_ah_attr_is_global.set(a, (byte) (global ? 1 : 0));
            ibv_qp_attr_ah_attr_dlid.set(a, (short) dlid);
            ibv_qp_attr_ah_attr_sl.set(a, (byte) serviceLevel);
            ibv_qp_attr_ah_attr_src_path_bits.set(a, (byte) 0);
            ibv_qp_attr_ah_attr_port_num.set(a, (byte) ahPort);
            if (global) {
                MemorySegment.copy(MemorySegment.ofArray(dgid), 0, a, ibv_qp_attr_ah_attr_grh_dgid, 16);
                ibv_qp_attr_ah_attr_grh_sgid_index.set(a, (byte) sgidIndex);
                ibv_qp_attr_ah_attr_grh_hop_limit.set(a, (byte) hopLimit);
                ibv_qp_attr_ah_attr_grh_traffic_class.set(a, (byte) trafficClass);
                ibv_qp_attr_ah_attr_grh_flow_label.set(a, flowLabel);
            }
        }
        return a;
    }
}
