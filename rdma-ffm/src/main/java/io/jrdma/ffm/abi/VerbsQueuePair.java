package io.jrdma.ffm.abi;

import static io.jrdma.ffm.abi.Layouts.*;
import static io.jrdma.ffm.abi.VerbsDevice.ibv_gid;
import static java.lang.foreign.MemoryLayout.structLayout;

import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * Layouts and constants of {@code <infiniband/verbs.h>} for queue pairs, their attributes and address
 * vectors, and shared receive queues (rdma-core 44 ABI, LP64).
 *
 * <p>Names follow the header: {@code ibv_wc} is {@code struct ibv_wc}, {@code ibv_wc_wr_id} the
 * VarHandle for its {@code wr_id}. Proven against the installed header by LayoutProbeTest.
 */
public final class VerbsQueuePair {
    private VerbsQueuePair() {}

    // ---------------------------------------------------------------- constants
    public static final int IBV_QPT_RC = 2;
    public static final int IBV_QPT_UC = 3;
    public static final int IBV_QPT_UD = 4;

    public static final int IBV_QPS_RESET = 0;
    public static final int IBV_QPS_INIT = 1;
    public static final int IBV_QPS_RTR = 2;
    public static final int IBV_QPS_RTS = 3;
    public static final int IBV_QPS_SQD = 4;
    public static final int IBV_QPS_SQE = 5;
    public static final int IBV_QPS_ERR = 6;

    public static final int IBV_QP_STATE = 1;
    public static final int IBV_QP_CUR_STATE = 1 << 1;
    public static final int IBV_QP_ACCESS_FLAGS = 1 << 3;
    public static final int IBV_QP_PKEY_INDEX = 1 << 4;
    public static final int IBV_QP_PORT = 1 << 5;
    public static final int IBV_QP_QKEY = 1 << 6;
    public static final int IBV_QP_AV = 1 << 7;
    public static final int IBV_QP_PATH_MTU = 1 << 8;
    public static final int IBV_QP_TIMEOUT = 1 << 9;
    public static final int IBV_QP_RETRY_CNT = 1 << 10;
    public static final int IBV_QP_RNR_RETRY = 1 << 11;
    public static final int IBV_QP_RQ_PSN = 1 << 12;
    public static final int IBV_QP_MAX_QP_RD_ATOMIC = 1 << 13;
    public static final int IBV_QP_MIN_RNR_TIMER = 1 << 15;
    public static final int IBV_QP_SQ_PSN = 1 << 16;
    public static final int IBV_QP_MAX_DEST_RD_ATOMIC = 1 << 17;
    public static final int IBV_QP_CAP = 1 << 19;
    public static final int IBV_QP_DEST_QPN = 1 << 20;

    public static final int IBV_SRQ_MAX_WR = 1;
    public static final int IBV_SRQ_LIMIT = 1 << 1;

    // ---------------------------------------------------------------- layouts
    public static final StructLayout ibv_qp = structLayout(
            POINTER.withName("context"),
            POINTER.withName("qp_context"),
            POINTER.withName("pd"),
            POINTER.withName("send_cq"),
            POINTER.withName("recv_cq"),
            POINTER.withName("srq"),
            U32.withName("handle"),
            U32.withName("qp_num"),
            INT.withName("state"),
            INT.withName("qp_type"),
            opaque(40, "mutex"),
            opaque(48, "cond"),
            U32.withName("events_completed"),
            pad(4))
            .withName("struct ibv_qp");

    public static final StructLayout ibv_srq = structLayout(
            POINTER.withName("context"),
            POINTER.withName("srq_context"),
            POINTER.withName("pd"),
            U32.withName("handle"),
            pad(4),
            opaque(40, "mutex"),
            opaque(48, "cond"),
            U32.withName("events_completed"),
            pad(4))
            .withName("struct ibv_srq");

    public static final StructLayout ibv_qp_cap = structLayout(
            U32.withName("max_send_wr"),
            U32.withName("max_recv_wr"),
            U32.withName("max_send_sge"),
            U32.withName("max_recv_sge"),
            U32.withName("max_inline_data"))
            .withName("struct ibv_qp_cap");

    public static final StructLayout ibv_qp_init_attr = structLayout(
            POINTER.withName("qp_context"),
            POINTER.withName("send_cq"),
            POINTER.withName("recv_cq"),
            POINTER.withName("srq"),
            member(ibv_qp_cap, "cap"),
            INT.withName("qp_type"),
            INT.withName("sq_sig_all"),
            pad(4))
            .withName("struct ibv_qp_init_attr");

    public static final StructLayout ibv_global_route = structLayout(
            member(ibv_gid, "dgid"),
            U32.withName("flow_label"),
            U8.withName("sgid_index"),
            U8.withName("hop_limit"),
            U8.withName("traffic_class"),
            pad(1))
            .withName("struct ibv_global_route");

    public static final StructLayout ibv_ah_attr = structLayout(
            member(ibv_global_route, "grh"),
            U16.withName("dlid"),
            U8.withName("sl"),
            U8.withName("src_path_bits"),
            U8.withName("static_rate"),
            U8.withName("is_global"),
            U8.withName("port_num"),
            pad(1))
            .withName("struct ibv_ah_attr");

    public static final StructLayout ibv_qp_attr = structLayout(
            INT.withName("qp_state"),
            INT.withName("cur_qp_state"),
            INT.withName("path_mtu"),
            INT.withName("path_mig_state"),
            U32.withName("qkey"),
            U32.withName("rq_psn"),
            U32.withName("sq_psn"),
            U32.withName("dest_qp_num"),
            U32.withName("qp_access_flags"),
            member(ibv_qp_cap, "cap"),
            member(ibv_ah_attr, "ah_attr"),
            member(ibv_ah_attr, "alt_ah_attr"),
            U16.withName("pkey_index"),
            U16.withName("alt_pkey_index"),
            U8.withName("en_sqd_async_notify"),
            U8.withName("sq_draining"),
            U8.withName("max_rd_atomic"),
            U8.withName("max_dest_rd_atomic"),
            U8.withName("min_rnr_timer"),
            U8.withName("port_num"),
            U8.withName("timeout"),
            U8.withName("retry_cnt"),
            U8.withName("rnr_retry"),
            U8.withName("alt_port_num"),
            U8.withName("alt_timeout"),
            pad(1),
            U32.withName("rate_limit"),
            pad(4))
            .withName("struct ibv_qp_attr");

    public static final StructLayout ibv_srq_attr = structLayout(
            U32.withName("max_wr"),
            U32.withName("max_sge"),
            U32.withName("srq_limit"))
            .withName("struct ibv_srq_attr");

    public static final StructLayout ibv_srq_init_attr = structLayout(
            POINTER.withName("srq_context"),
            member(ibv_srq_attr, "attr"),
            pad(4))
            .withName("struct ibv_srq_init_attr");

    // ---------------------------------------------------------------- VarHandles
    public static final VarHandle ibv_qp_context = field(ibv_qp, "context");
    public static final VarHandle ibv_qp_qp_num = field(ibv_qp, "qp_num");
    public static final VarHandle ibv_qp_state = field(ibv_qp, "state");
    public static final VarHandle ibv_qp_qp_type = field(ibv_qp, "qp_type");

    public static final VarHandle ibv_srq_context = field(ibv_srq, "context");

    public static final VarHandle ibv_qp_init_attr_qp_context = field(ibv_qp_init_attr, "qp_context");
    public static final VarHandle ibv_qp_init_attr_send_cq = field(ibv_qp_init_attr, "send_cq");
    public static final VarHandle ibv_qp_init_attr_recv_cq = field(ibv_qp_init_attr, "recv_cq");
    public static final VarHandle ibv_qp_init_attr_srq = field(ibv_qp_init_attr, "srq");
    public static final VarHandle ibv_qp_init_attr_cap_max_send_wr = field(ibv_qp_init_attr, "cap.max_send_wr");
    public static final VarHandle ibv_qp_init_attr_cap_max_recv_wr = field(ibv_qp_init_attr, "cap.max_recv_wr");
    public static final VarHandle ibv_qp_init_attr_cap_max_send_sge = field(ibv_qp_init_attr, "cap.max_send_sge");
    public static final VarHandle ibv_qp_init_attr_cap_max_recv_sge = field(ibv_qp_init_attr, "cap.max_recv_sge");
    public static final VarHandle ibv_qp_init_attr_cap_max_inline_data = field(ibv_qp_init_attr, "cap.max_inline_data");
    public static final VarHandle ibv_qp_init_attr_qp_type = field(ibv_qp_init_attr, "qp_type");
    public static final VarHandle ibv_qp_init_attr_sq_sig_all = field(ibv_qp_init_attr, "sq_sig_all");

    public static final VarHandle ibv_qp_attr_qp_state = field(ibv_qp_attr, "qp_state");
    public static final VarHandle ibv_qp_attr_cur_qp_state = field(ibv_qp_attr, "cur_qp_state");
    public static final VarHandle ibv_qp_attr_path_mtu = field(ibv_qp_attr, "path_mtu");
    public static final VarHandle ibv_qp_attr_qkey = field(ibv_qp_attr, "qkey");
    public static final VarHandle ibv_qp_attr_rq_psn = field(ibv_qp_attr, "rq_psn");
    public static final VarHandle ibv_qp_attr_sq_psn = field(ibv_qp_attr, "sq_psn");
    public static final VarHandle ibv_qp_attr_dest_qp_num = field(ibv_qp_attr, "dest_qp_num");
    public static final VarHandle ibv_qp_attr_qp_access_flags = field(ibv_qp_attr, "qp_access_flags");
    public static final VarHandle ibv_qp_attr_cap_max_send_wr = field(ibv_qp_attr, "cap.max_send_wr");
    public static final VarHandle ibv_qp_attr_cap_max_recv_wr = field(ibv_qp_attr, "cap.max_recv_wr");
    public static final VarHandle ibv_qp_attr_cap_max_inline_data = field(ibv_qp_attr, "cap.max_inline_data");
    public static final long ibv_qp_attr_ah_attr_grh_dgid = offset(ibv_qp_attr, "ah_attr.grh.dgid");
    public static final VarHandle ibv_qp_attr_ah_attr_grh_flow_label = field(ibv_qp_attr, "ah_attr.grh.flow_label");
    public static final VarHandle ibv_qp_attr_ah_attr_grh_sgid_index = field(ibv_qp_attr, "ah_attr.grh.sgid_index");
    public static final VarHandle ibv_qp_attr_ah_attr_grh_hop_limit = field(ibv_qp_attr, "ah_attr.grh.hop_limit");
    public static final VarHandle ibv_qp_attr_ah_attr_grh_traffic_class = field(ibv_qp_attr, "ah_attr.grh.traffic_class");
    public static final VarHandle ibv_qp_attr_ah_attr_dlid = field(ibv_qp_attr, "ah_attr.dlid");
    public static final VarHandle ibv_qp_attr_ah_attr_sl = field(ibv_qp_attr, "ah_attr.sl");
    public static final VarHandle ibv_qp_attr_ah_attr_src_path_bits = field(ibv_qp_attr, "ah_attr.src_path_bits");
    public static final VarHandle ibv_qp_attr_ah_attr_is_global = field(ibv_qp_attr, "ah_attr.is_global");
    public static final VarHandle ibv_qp_attr_ah_attr_port_num = field(ibv_qp_attr, "ah_attr.port_num");
    public static final VarHandle ibv_qp_attr_pkey_index = field(ibv_qp_attr, "pkey_index");
    public static final VarHandle ibv_qp_attr_max_rd_atomic = field(ibv_qp_attr, "max_rd_atomic");
    public static final VarHandle ibv_qp_attr_max_dest_rd_atomic = field(ibv_qp_attr, "max_dest_rd_atomic");
    public static final VarHandle ibv_qp_attr_min_rnr_timer = field(ibv_qp_attr, "min_rnr_timer");
    public static final VarHandle ibv_qp_attr_port_num = field(ibv_qp_attr, "port_num");
    public static final VarHandle ibv_qp_attr_timeout = field(ibv_qp_attr, "timeout");
    public static final VarHandle ibv_qp_attr_retry_cnt = field(ibv_qp_attr, "retry_cnt");
    public static final VarHandle ibv_qp_attr_rnr_retry = field(ibv_qp_attr, "rnr_retry");

    public static final VarHandle ibv_srq_init_attr_srq_context = field(ibv_srq_init_attr, "srq_context");
    public static final VarHandle ibv_srq_init_attr_attr_max_wr = field(ibv_srq_init_attr, "attr.max_wr");
    public static final VarHandle ibv_srq_init_attr_attr_max_sge = field(ibv_srq_init_attr, "attr.max_sge");
    public static final VarHandle ibv_srq_init_attr_attr_srq_limit = field(ibv_srq_init_attr, "attr.srq_limit");
    public static final VarHandle ibv_srq_attr_max_wr = field(ibv_srq_attr, "max_wr");
    public static final VarHandle ibv_srq_attr_max_sge = field(ibv_srq_attr, "max_sge");
    public static final VarHandle ibv_srq_attr_srq_limit = field(ibv_srq_attr, "srq_limit");
}
