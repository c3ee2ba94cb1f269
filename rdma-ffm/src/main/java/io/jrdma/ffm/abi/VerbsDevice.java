package io.jrdma.ffm.abi;

import static io.jrdma.ffm.abi.Layouts.*;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.MemoryLayout.unionLayout;

import java.lang.foreign.StructLayout;
import java.lang.foreign.UnionLayout;
import java.lang.invoke.VarHandle;

/**
 * Layouts and constants of {@code <infiniband/verbs.h>} for devices, contexts, ports, GIDs and
 * asynchronous events (rdma-core 44 ABI, LP64).
 *
 * <p>Names follow the header: {@code ibv_wc} is {@code struct ibv_wc}, {@code ibv_wc_wr_id} the
 * VarHandle for its {@code wr_id}. Proven against the installed header by LayoutProbeTest.
 */
public final class VerbsDevice {
    private VerbsDevice() {}

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
}
