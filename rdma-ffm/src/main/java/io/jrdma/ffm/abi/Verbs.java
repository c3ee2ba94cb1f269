package io.jrdma.ffm.abi;

import static io.jrdma.ffm.abi.Layouts.*;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.MemoryLayout.unionLayout;

import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.lang.invoke.VarHandle;

/**
 * Layouts and constants of {@code <infiniband/verbs.h>} (rdma-core 44 ABI, LP64).
 *
 * <p>Names follow the header: {@code ibv_wc} is {@code struct ibv_wc}, {@code ibv_wc_wr_id} the
 * VarHandle for its {@code wr_id}. Proven against the installed header by LayoutProbeTest.
 */
public final class Verbs {
    private Verbs() {}

    // ---------------------------------------------------------------- constants
    public static final int IBV_NODE_CA = 1;
    public static final int IBV_TRANSPORT_IB = 0;

    public static final int IBV_PORT_DOWN = 1;
    public static final int IBV_PORT_INIT = 2;
    public static final int IBV_PORT_ARMED = 3;
    public static final int IBV_PORT_ACTIVE = 4;
    public static final int IBV_LINK_LAYER_INFINIBAND = 1;
    public static final int IBV_LINK_LAYER_ETHERNET = 2;

    public static final int IBV_MTU_256 = 1;
    public static final int IBV_MTU_512 = 2;
    public static final int IBV_MTU_1024 = 3;
    public static final int IBV_MTU_2048 = 4;
    public static final int IBV_MTU_4096 = 5;

    public static final int IBV_GID_TYPE_IB = 0;
    public static final int IBV_GID_TYPE_ROCE_V1 = 1;
    public static final int IBV_GID_TYPE_ROCE_V2 = 2;

    public static final int IBV_ACCESS_LOCAL_WRITE = 1;
    public static final int IBV_ACCESS_REMOTE_WRITE = 1 << 1;
    public static final int IBV_ACCESS_REMOTE_READ = 1 << 2;
    public static final int IBV_ACCESS_REMOTE_ATOMIC = 1 << 3;

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

    public static final int IBV_WR_RDMA_WRITE = 0;
    public static final int IBV_WR_RDMA_WRITE_WITH_IMM = 1;
    public static final int IBV_WR_SEND = 2;
    public static final int IBV_WR_SEND_WITH_IMM = 3;
    public static final int IBV_WR_RDMA_READ = 4;
    public static final int IBV_WR_ATOMIC_CMP_AND_SWP = 5;
    public static final int IBV_WR_ATOMIC_FETCH_AND_ADD = 6;

    public static final int IBV_SEND_FENCE = 1;
    public static final int IBV_SEND_SIGNALED = 1 << 1;
    public static final int IBV_SEND_SOLICITED = 1 << 2;
    public static final int IBV_SEND_INLINE = 1 << 3;

    public static final int IBV_WC_SUCCESS = 0;
    public static final int IBV_WC_LOC_LEN_ERR = 1;
    public static final int IBV_WC_LOC_QP_OP_ERR = 2;
    public static final int IBV_WC_LOC_EEC_OP_ERR = 3;
    public static final int IBV_WC_LOC_PROT_ERR = 4;
    public static final int IBV_WC_WR_FLUSH_ERR = 5;
    public static final int IBV_WC_MW_BIND_ERR = 6;
    public static final int IBV_WC_BAD_RESP_ERR = 7;
    public static final int IBV_WC_LOC_ACCESS_ERR = 8;
    public static final int IBV_WC_REM_INV_REQ_ERR = 9;
    public static final int IBV_WC_REM_ACCESS_ERR = 10;
    public static final int IBV_WC_REM_OP_ERR = 11;
    public static final int IBV_WC_RETRY_EXC_ERR = 12;
    public static final int IBV_WC_RNR_RETRY_EXC_ERR = 13;
    public static final int IBV_WC_LOC_RDD_VIOL_ERR = 14;
    public static final int IBV_WC_REM_INV_RD_REQ_ERR = 15;
    public static final int IBV_WC_REM_ABORT_ERR = 16;
    public static final int IBV_WC_INV_EECN_ERR = 17;
    public static final int IBV_WC_INV_EEC_STATE_ERR = 18;
    public static final int IBV_WC_FATAL_ERR = 19;
    public static final int IBV_WC_RESP_TIMEOUT_ERR = 20;
    public static final int IBV_WC_GENERAL_ERR = 21;
    public static final int IBV_WC_TM_ERR = 22;
    public static final int IBV_WC_TM_RNDV_INCOMPLETE = 23;

    public static final int IBV_WC_SEND = 0;
    public static final int IBV_WC_RDMA_WRITE = 1;
    public static final int IBV_WC_RDMA_READ = 2;
    public static final int IBV_WC_COMP_SWAP = 3;
    public static final int IBV_WC_FETCH_ADD = 4;
    public static final int IBV_WC_BIND_MW = 5;
    public static final int IBV_WC_LOCAL_INV = 6;
    public static final int IBV_WC_RECV = 1 << 7;
    public static final int IBV_WC_RECV_RDMA_WITH_IMM = (1 << 7) + 1;
    public static final int IBV_WC_WITH_IMM = 1 << 1;

    public static final int IBV_ATOMIC_NONE = 0;
    public static final int IBV_ATOMIC_HCA = 1;
    public static final int IBV_ATOMIC_GLOB = 2;

    public static final int IBV_EVENT_CQ_ERR = 0;
    public static final int IBV_EVENT_QP_FATAL = 1;
    public static final int IBV_EVENT_QP_REQ_ERR = 2;
    public static final int IBV_EVENT_QP_ACCESS_ERR = 3;
    public static final int IBV_EVENT_COMM_EST = 4;
    public static final int IBV_EVENT_SQ_DRAINED = 5;
    public static final int IBV_EVENT_DEVICE_FATAL = 8;
    public static final int IBV_EVENT_PORT_ACTIVE = 9;
    public static final int IBV_EVENT_PORT_ERR = 10;
    public static final int IBV_EVENT_LID_CHANGE = 11;
    public static final int IBV_EVENT_PKEY_CHANGE = 12;
    public static final int IBV_EVENT_SM_CHANGE = 13;
    public static final int IBV_EVENT_SRQ_ERR = 14;
    public static final int IBV_EVENT_SRQ_LIMIT_REACHED = 15;
    public static final int IBV_EVENT_QP_LAST_WQE_REACHED = 16;
    public static final int IBV_EVENT_CLIENT_REREGISTER = 17;
    public static final int IBV_EVENT_GID_CHANGE = 18;

    public static final int IBV_SRQ_MAX_WR = 1;
    public static final int IBV_SRQ_LIMIT = 1 << 1;

    // ---------------------------------------------------------------- layouts
    public static final UnionLayout ibv_gid = unionLayout(
            chars(16).withName("raw"),
            structLayout(BE64.withName("subnet_prefix"), BE64.withName("interface_id")).withName("global"))
            .withName("union ibv_gid");

    public static final StructLayout ibv_gid_entry = structLayout(
            member(ibv_gid, "gid"),
            U32.withName("gid_index"),
            U32.withName("port_num"),
            U32.withName("gid_type"),
            U32.withName("ndev_ifindex"))
            .withName("struct ibv_gid_entry");

    public static final StructLayout ibv_device = structLayout(
            pad(16),                       // _ops: private to libibverbs
            INT.withName("node_type"),
            INT.withName("transport_type"),
            chars(64).withName("name"),
            chars(64).withName("dev_name"),
            chars(256).withName("dev_path"),
            chars(256).withName("ibdev_path"))
            .withName("struct ibv_device");

    /** Only the ops that are static inline in verbs.h and so must be called through the table. */
    public static final StructLayout ibv_context_ops = structLayout(
            pad(88),
            POINTER.withName("poll_cq"),
            POINTER.withName("req_notify_cq"),
            pad(56),
            POINTER.withName("post_srq_recv"),
            pad(32),
            POINTER.withName("post_send"),
            POINTER.withName("post_recv"),
            pad(40))
            .withName("struct ibv_context_ops");

    public static final StructLayout ibv_context = structLayout(
            POINTER.withName("device"),
            member(ibv_context_ops, "ops"),
            INT.withName("cmd_fd"),
            INT.withName("async_fd"),
            INT.withName("num_comp_vectors"),
            pad(4),
            opaque(40, "mutex"),
            POINTER.withName("abi_compat"))
            .withName("struct ibv_context");

    /**
     * The extended context that rdma-core places *before* {@code struct ibv_context} (it grows
     * downwards). The real {@code ibv_query_port} is the inline that calls {@code query_port}
     * here; the exported symbol of that name fills the shorter compat struct.
     */
    public static final StructLayout verbs_context = structLayout(
            POINTER.withName("query_port"),
            pad(304),
            SIZE_T.withName("sz"),
            member(ibv_context, "context"))
            .withName("struct verbs_context");

    public static final StructLayout ibv_pd = structLayout(
            POINTER.withName("context"),
            U32.withName("handle"),
            pad(4))
            .withName("struct ibv_pd");

    public static final StructLayout ibv_comp_channel = structLayout(
            POINTER.withName("context"),
            INT.withName("fd"),
            INT.withName("refcnt"))
            .withName("struct ibv_comp_channel");

    public static final StructLayout ibv_cq = structLayout(
            POINTER.withName("context"),
            POINTER.withName("channel"),
            POINTER.withName("cq_context"),
            U32.withName("handle"),
            INT.withName("cqe"),
            opaque(40, "mutex"),
            opaque(48, "cond"),
            U32.withName("comp_events_completed"),
            U32.withName("async_events_completed"))
            .withName("struct ibv_cq");

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

    public static final StructLayout ibv_mr = structLayout(
            POINTER.withName("context"),
            POINTER.withName("pd"),
            POINTER.withName("addr"),
            SIZE_T.withName("length"),
            U32.withName("handle"),
            U32.withName("lkey"),
            U32.withName("rkey"),
            pad(4))
            .withName("struct ibv_mr");

    public static final StructLayout ibv_sge = structLayout(
            U64.withName("addr"),
            U32.withName("length"),
            U32.withName("lkey"))
            .withName("struct ibv_sge");

    public static final StructLayout ibv_send_wr = structLayout(
            U64.withName("wr_id"),
            POINTER.withName("next"),
            POINTER.withName("sg_list"),
            INT.withName("num_sge"),
            INT.withName("opcode"),
            U32.withName("send_flags"),
            BE32.withName("imm_data"),     // anonymous union with invalidate_rkey
            unionLayout(
                    structLayout(U64.withName("remote_addr"), U32.withName("rkey"), pad(4)).withName("rdma"),
                    structLayout(U64.withName("remote_addr"), U64.withName("compare_add"),
                            U64.withName("swap"), U32.withName("rkey"), pad(4)).withName("atomic"),
                    structLayout(POINTER.withName("ah"), U32.withName("remote_qpn"),
                            U32.withName("remote_qkey")).withName("ud"))
                    .withName("wr"),
            pad(8),                        // qp_type (XRC)
            pad(48))                       // bind_mw / tso
            .withName("struct ibv_send_wr");

    public static final StructLayout ibv_recv_wr = structLayout(
            U64.withName("wr_id"),
            POINTER.withName("next"),
            POINTER.withName("sg_list"),
            INT.withName("num_sge"),
            pad(4))
            .withName("struct ibv_recv_wr");

    public static final StructLayout ibv_wc = structLayout(
            U64.withName("wr_id"),
            INT.withName("status"),
            INT.withName("opcode"),
            U32.withName("vendor_err"),
            U32.withName("byte_len"),
            BE32.withName("imm_data"),     // anonymous union with invalidated_rkey
            U32.withName("qp_num"),
            U32.withName("src_qp"),
            U32.withName("wc_flags"),
            U16.withName("pkey_index"),
            U16.withName("slid"),
            U8.withName("sl"),
            U8.withName("dlid_path_bits"),
            pad(2))
            .withName("struct ibv_wc");

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

    public static final StructLayout ibv_port_attr = structLayout(
            INT.withName("state"),
            INT.withName("max_mtu"),
            INT.withName("active_mtu"),
            INT.withName("gid_tbl_len"),
            U32.withName("port_cap_flags"),
            U32.withName("max_msg_sz"),
            U32.withName("bad_pkey_cntr"),
            U32.withName("qkey_viol_cntr"),
            U16.withName("pkey_tbl_len"),
            U16.withName("lid"),
            U16.withName("sm_lid"),
            U8.withName("lmc"),
            U8.withName("max_vl_num"),
            U8.withName("sm_sl"),
            U8.withName("subnet_timeout"),
            U8.withName("init_type_reply"),
            U8.withName("active_width"),
            U8.withName("active_speed"),
            U8.withName("phys_state"),
            U8.withName("link_layer"),
            U8.withName("flags"),
            U16.withName("port_cap_flags2"),
            pad(2))
            .withName("struct ibv_port_attr");

    public static final StructLayout ibv_device_attr = structLayout(
            chars(64).withName("fw_ver"),
            BE64.withName("node_guid"),
            BE64.withName("sys_image_guid"),
            U64.withName("max_mr_size"),
            U64.withName("page_size_cap"),
            U32.withName("vendor_id"),
            U32.withName("vendor_part_id"),
            U32.withName("hw_ver"),
            INT.withName("max_qp"),
            INT.withName("max_qp_wr"),
            U32.withName("device_cap_flags"),
            INT.withName("max_sge"),
            INT.withName("max_sge_rd"),
            INT.withName("max_cq"),
            INT.withName("max_cqe"),
            INT.withName("max_mr"),
            INT.withName("max_pd"),
            INT.withName("max_qp_rd_atom"),
            pad(4),                        // max_ee_rd_atom
            INT.withName("max_res_rd_atom"),
            INT.withName("max_qp_init_rd_atom"),
            pad(4),                        // max_ee_init_rd_atom
            INT.withName("atomic_cap"),
            pad(12),                       // max_ee, max_rdd, max_mw
            pad(20),                       // raw qp and multicast limits
            INT.withName("max_ah"),
            pad(8),                        // max_fmr, max_map_per_fmr
            INT.withName("max_srq"),
            INT.withName("max_srq_wr"),
            INT.withName("max_srq_sge"),
            U16.withName("max_pkeys"),
            U8.withName("local_ca_ack_delay"),
            U8.withName("phys_port_cnt"),
            pad(4))
            .withName("struct ibv_device_attr");

    public static final StructLayout ibv_async_event = structLayout(
            unionLayout(
                    POINTER.withName("cq"),
                    POINTER.withName("qp"),
                    POINTER.withName("srq"),
                    INT.withName("port_num"))
                    .withName("element"),
            INT.withName("event_type"),
            pad(4))
            .withName("struct ibv_async_event");

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
    public static final VarHandle ibv_gid_entry_gid_index = field(ibv_gid_entry, "gid_index");
    public static final VarHandle ibv_gid_entry_gid_type = field(ibv_gid_entry, "gid_type");
    public static final VarHandle ibv_gid_entry_ndev_ifindex = field(ibv_gid_entry, "ndev_ifindex");
    public static final long ibv_gid_entry_gid = offset(ibv_gid_entry, "gid");

    public static final VarHandle ibv_device_node_type = field(ibv_device, "node_type");
    public static final VarHandle ibv_device_transport_type = field(ibv_device, "transport_type");
    public static final long ibv_device_name = offset(ibv_device, "name");
    public static final long ibv_device_ibdev_path = offset(ibv_device, "ibdev_path");

    public static final VarHandle ibv_context_ops_poll_cq = field(ibv_context, "ops.poll_cq");
    public static final VarHandle ibv_context_ops_req_notify_cq = field(ibv_context, "ops.req_notify_cq");
    public static final VarHandle ibv_context_ops_post_srq_recv = field(ibv_context, "ops.post_srq_recv");
    public static final VarHandle ibv_context_ops_post_send = field(ibv_context, "ops.post_send");
    public static final VarHandle ibv_context_ops_post_recv = field(ibv_context, "ops.post_recv");
    public static final VarHandle ibv_context_device = field(ibv_context, "device");
    public static final VarHandle ibv_context_async_fd = field(ibv_context, "async_fd");
    public static final VarHandle ibv_context_num_comp_vectors = field(ibv_context, "num_comp_vectors");
    public static final VarHandle ibv_context_abi_compat = field(ibv_context, "abi_compat");

    public static final VarHandle verbs_context_query_port = field(verbs_context, "query_port");
    public static final VarHandle verbs_context_sz = field(verbs_context, "sz");
    public static final long verbs_context_context = offset(verbs_context, "context");
    public static final long verbs_context_query_port_offset = offset(verbs_context, "query_port");

    public static final VarHandle ibv_comp_channel_fd = field(ibv_comp_channel, "fd");

    public static final VarHandle ibv_cq_context = field(ibv_cq, "context");
    public static final VarHandle ibv_cq_cqe = field(ibv_cq, "cqe");

    public static final VarHandle ibv_qp_context = field(ibv_qp, "context");
    public static final VarHandle ibv_qp_qp_num = field(ibv_qp, "qp_num");
    public static final VarHandle ibv_qp_state = field(ibv_qp, "state");
    public static final VarHandle ibv_qp_qp_type = field(ibv_qp, "qp_type");

    public static final VarHandle ibv_srq_context = field(ibv_srq, "context");

    public static final VarHandle ibv_mr_addr = field(ibv_mr, "addr");
    public static final VarHandle ibv_mr_length = field(ibv_mr, "length");
    public static final VarHandle ibv_mr_lkey = field(ibv_mr, "lkey");
    public static final VarHandle ibv_mr_rkey = field(ibv_mr, "rkey");

    public static final VarHandle ibv_sge_addr = elementField(ibv_sge, "addr");
    public static final VarHandle ibv_sge_length = elementField(ibv_sge, "length");
    public static final VarHandle ibv_sge_lkey = elementField(ibv_sge, "lkey");

    public static final VarHandle ibv_send_wr_wr_id = field(ibv_send_wr, "wr_id");
    public static final VarHandle ibv_send_wr_next = field(ibv_send_wr, "next");
    public static final VarHandle ibv_send_wr_sg_list = field(ibv_send_wr, "sg_list");
    public static final VarHandle ibv_send_wr_num_sge = field(ibv_send_wr, "num_sge");
    public static final VarHandle ibv_send_wr_opcode = field(ibv_send_wr, "opcode");
    public static final VarHandle ibv_send_wr_send_flags = field(ibv_send_wr, "send_flags");
    public static final VarHandle ibv_send_wr_imm_data = field(ibv_send_wr, "imm_data");
    public static final VarHandle ibv_send_wr_wr_rdma_remote_addr = field(ibv_send_wr, "wr.rdma.remote_addr");
    public static final VarHandle ibv_send_wr_wr_rdma_rkey = field(ibv_send_wr, "wr.rdma.rkey");
    public static final VarHandle ibv_send_wr_wr_atomic_remote_addr = field(ibv_send_wr, "wr.atomic.remote_addr");
    public static final VarHandle ibv_send_wr_wr_atomic_compare_add = field(ibv_send_wr, "wr.atomic.compare_add");
    public static final VarHandle ibv_send_wr_wr_atomic_swap = field(ibv_send_wr, "wr.atomic.swap");
    public static final VarHandle ibv_send_wr_wr_atomic_rkey = field(ibv_send_wr, "wr.atomic.rkey");
    public static final VarHandle ibv_send_wr_wr_ud_ah = field(ibv_send_wr, "wr.ud.ah");
    public static final VarHandle ibv_send_wr_wr_ud_remote_qpn = field(ibv_send_wr, "wr.ud.remote_qpn");
    public static final VarHandle ibv_send_wr_wr_ud_remote_qkey = field(ibv_send_wr, "wr.ud.remote_qkey");

    public static final VarHandle ibv_recv_wr_wr_id = field(ibv_recv_wr, "wr_id");
    public static final VarHandle ibv_recv_wr_next = field(ibv_recv_wr, "next");
    public static final VarHandle ibv_recv_wr_sg_list = field(ibv_recv_wr, "sg_list");
    public static final VarHandle ibv_recv_wr_num_sge = field(ibv_recv_wr, "num_sge");

    public static final VarHandle ibv_wc_wr_id = elementField(ibv_wc, "wr_id");
    public static final VarHandle ibv_wc_status = elementField(ibv_wc, "status");
    public static final VarHandle ibv_wc_opcode = elementField(ibv_wc, "opcode");
    public static final VarHandle ibv_wc_vendor_err = elementField(ibv_wc, "vendor_err");
    public static final VarHandle ibv_wc_byte_len = elementField(ibv_wc, "byte_len");
    public static final VarHandle ibv_wc_imm_data = elementField(ibv_wc, "imm_data");
    public static final VarHandle ibv_wc_qp_num = elementField(ibv_wc, "qp_num");
    public static final VarHandle ibv_wc_src_qp = elementField(ibv_wc, "src_qp");
    public static final VarHandle ibv_wc_wc_flags = elementField(ibv_wc, "wc_flags");
    public static final VarHandle ibv_wc_pkey_index = elementField(ibv_wc, "pkey_index");
    public static final VarHandle ibv_wc_slid = elementField(ibv_wc, "slid");
    public static final VarHandle ibv_wc_sl = elementField(ibv_wc, "sl");
    public static final VarHandle ibv_wc_dlid_path_bits = elementField(ibv_wc, "dlid_path_bits");

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

    public static final VarHandle ibv_port_attr_state = field(ibv_port_attr, "state");
    public static final VarHandle ibv_port_attr_max_mtu = field(ibv_port_attr, "max_mtu");
    public static final VarHandle ibv_port_attr_active_mtu = field(ibv_port_attr, "active_mtu");
    public static final VarHandle ibv_port_attr_gid_tbl_len = field(ibv_port_attr, "gid_tbl_len");
    public static final VarHandle ibv_port_attr_port_cap_flags = field(ibv_port_attr, "port_cap_flags");
    public static final VarHandle ibv_port_attr_max_msg_sz = field(ibv_port_attr, "max_msg_sz");
    public static final VarHandle ibv_port_attr_pkey_tbl_len = field(ibv_port_attr, "pkey_tbl_len");
    public static final VarHandle ibv_port_attr_lid = field(ibv_port_attr, "lid");
    public static final VarHandle ibv_port_attr_sm_lid = field(ibv_port_attr, "sm_lid");
    public static final VarHandle ibv_port_attr_lmc = field(ibv_port_attr, "lmc");
    public static final VarHandle ibv_port_attr_max_vl_num = field(ibv_port_attr, "max_vl_num");
    public static final VarHandle ibv_port_attr_sm_sl = field(ibv_port_attr, "sm_sl");
    public static final VarHandle ibv_port_attr_subnet_timeout = field(ibv_port_attr, "subnet_timeout");
    public static final VarHandle ibv_port_attr_init_type_reply = field(ibv_port_attr, "init_type_reply");
    public static final VarHandle ibv_port_attr_active_width = field(ibv_port_attr, "active_width");
    public static final VarHandle ibv_port_attr_active_speed = field(ibv_port_attr, "active_speed");
    public static final VarHandle ibv_port_attr_phys_state = field(ibv_port_attr, "phys_state");
    public static final VarHandle ibv_port_attr_link_layer = field(ibv_port_attr, "link_layer");
    public static final VarHandle ibv_port_attr_flags = field(ibv_port_attr, "flags");
    public static final VarHandle ibv_port_attr_port_cap_flags2 = field(ibv_port_attr, "port_cap_flags2");
    public static final VarHandle ibv_port_attr_bad_pkey_cntr = field(ibv_port_attr, "bad_pkey_cntr");
    public static final VarHandle ibv_port_attr_qkey_viol_cntr = field(ibv_port_attr, "qkey_viol_cntr");

    public static final long ibv_device_attr_fw_ver = offset(ibv_device_attr, "fw_ver");
    public static final VarHandle ibv_device_attr_node_guid = field(ibv_device_attr, "node_guid");
    public static final VarHandle ibv_device_attr_sys_image_guid = field(ibv_device_attr, "sys_image_guid");
    public static final VarHandle ibv_device_attr_max_mr_size = field(ibv_device_attr, "max_mr_size");
    public static final VarHandle ibv_device_attr_page_size_cap = field(ibv_device_attr, "page_size_cap");
    public static final VarHandle ibv_device_attr_vendor_id = field(ibv_device_attr, "vendor_id");
    public static final VarHandle ibv_device_attr_vendor_part_id = field(ibv_device_attr, "vendor_part_id");
    public static final VarHandle ibv_device_attr_hw_ver = field(ibv_device_attr, "hw_ver");
    public static final VarHandle ibv_device_attr_max_qp = field(ibv_device_attr, "max_qp");
    public static final VarHandle ibv_device_attr_max_qp_wr = field(ibv_device_attr, "max_qp_wr");
    public static final VarHandle ibv_device_attr_device_cap_flags = field(ibv_device_attr, "device_cap_flags");
    public static final VarHandle ibv_device_attr_max_sge = field(ibv_device_attr, "max_sge");
    public static final VarHandle ibv_device_attr_max_sge_rd = field(ibv_device_attr, "max_sge_rd");
    public static final VarHandle ibv_device_attr_max_cq = field(ibv_device_attr, "max_cq");
    public static final VarHandle ibv_device_attr_max_cqe = field(ibv_device_attr, "max_cqe");
    public static final VarHandle ibv_device_attr_max_mr = field(ibv_device_attr, "max_mr");
    public static final VarHandle ibv_device_attr_max_pd = field(ibv_device_attr, "max_pd");
    public static final VarHandle ibv_device_attr_max_qp_rd_atom = field(ibv_device_attr, "max_qp_rd_atom");
    public static final VarHandle ibv_device_attr_max_res_rd_atom = field(ibv_device_attr, "max_res_rd_atom");
    public static final VarHandle ibv_device_attr_max_qp_init_rd_atom = field(ibv_device_attr, "max_qp_init_rd_atom");
    public static final VarHandle ibv_device_attr_atomic_cap = field(ibv_device_attr, "atomic_cap");
    public static final VarHandle ibv_device_attr_max_ah = field(ibv_device_attr, "max_ah");
    public static final VarHandle ibv_device_attr_max_srq = field(ibv_device_attr, "max_srq");
    public static final VarHandle ibv_device_attr_max_srq_wr = field(ibv_device_attr, "max_srq_wr");
    public static final VarHandle ibv_device_attr_max_srq_sge = field(ibv_device_attr, "max_srq_sge");
    public static final VarHandle ibv_device_attr_max_pkeys = field(ibv_device_attr, "max_pkeys");
    public static final VarHandle ibv_device_attr_local_ca_ack_delay = field(ibv_device_attr, "local_ca_ack_delay");
    public static final VarHandle ibv_device_attr_phys_port_cnt = field(ibv_device_attr, "phys_port_cnt");

    public static final VarHandle ibv_async_event_element_cq = field(ibv_async_event, "element.cq");
    public static final VarHandle ibv_async_event_element_qp = field(ibv_async_event, "element.qp");
    public static final VarHandle ibv_async_event_element_srq = field(ibv_async_event, "element.srq");
    public static final VarHandle ibv_async_event_element_port_num = field(ibv_async_event, "element.port_num");
    public static final VarHandle ibv_async_event_event_type = field(ibv_async_event, "event_type");

    public static final VarHandle ibv_srq_init_attr_srq_context = field(ibv_srq_init_attr, "srq_context");
    public static final VarHandle ibv_srq_init_attr_attr_max_wr = field(ibv_srq_init_attr, "attr.max_wr");
    public static final VarHandle ibv_srq_init_attr_attr_max_sge = field(ibv_srq_init_attr, "attr.max_sge");
    public static final VarHandle ibv_srq_init_attr_attr_srq_limit = field(ibv_srq_init_attr, "attr.srq_limit");
    public static final VarHandle ibv_srq_attr_max_wr = field(ibv_srq_attr, "max_wr");
    public static final VarHandle ibv_srq_attr_max_sge = field(ibv_srq_attr, "max_sge");
    public static final VarHandle ibv_srq_attr_srq_limit = field(ibv_srq_attr, "srq_limit");
}
