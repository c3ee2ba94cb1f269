package io.jrdma.ffm.abi;

import static io.jrdma.ffm.abi.Layouts.*;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.MemoryLayout.unionLayout;

import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/** Layouts and constants of {@code <rdma/rdma_cma.h>} (rdma-core 44 ABI, LP64). */
public final class RdmaCma {
    private RdmaCma() {}

    public static final int RDMA_PS_TCP = 0x0106;
    public static final int RDMA_PS_UDP = 0x0111;

    public static final int RDMA_CM_EVENT_ADDR_RESOLVED = 0;
    public static final int RDMA_CM_EVENT_ADDR_ERROR = 1;
    public static final int RDMA_CM_EVENT_ROUTE_RESOLVED = 2;
    public static final int RDMA_CM_EVENT_ROUTE_ERROR = 3;
    public static final int RDMA_CM_EVENT_CONNECT_REQUEST = 4;
    public static final int RDMA_CM_EVENT_CONNECT_RESPONSE = 5;
    public static final int RDMA_CM_EVENT_CONNECT_ERROR = 6;
    public static final int RDMA_CM_EVENT_UNREACHABLE = 7;
    public static final int RDMA_CM_EVENT_REJECTED = 8;
    public static final int RDMA_CM_EVENT_ESTABLISHED = 9;
    public static final int RDMA_CM_EVENT_DISCONNECTED = 10;
    public static final int RDMA_CM_EVENT_DEVICE_REMOVAL = 11;
    public static final int RDMA_CM_EVENT_MULTICAST_JOIN = 12;
    public static final int RDMA_CM_EVENT_MULTICAST_ERROR = 13;
    public static final int RDMA_CM_EVENT_ADDR_CHANGE = 14;
    public static final int RDMA_CM_EVENT_TIMEWAIT_EXIT = 15;

    public static final int RDMA_OPTION_ID = 0;
    public static final int RDMA_OPTION_ID_TOS = 0;
    public static final int RDMA_OPTION_ID_REUSEADDR = 1;
    public static final int RDMA_OPTION_ID_ACK_TIMEOUT = 3;

    public static final StructLayout rdma_event_channel = structLayout(
            INT.withName("fd"))
            .withName("struct rdma_event_channel");

    public static final StructLayout rdma_addr = structLayout(
            opaque(128, "src_storage"),    // anonymous union of sockaddr variants
            opaque(128, "dst_storage"),
            pad(40))                       // union { struct rdma_ib_addr ibaddr } addr
            .withName("struct rdma_addr");

    public static final StructLayout rdma_route = structLayout(
            member(rdma_addr, "addr"),
            POINTER.withName("path_rec"),
            INT.withName("num_paths"),
            pad(4))
            .withName("struct rdma_route");

    public static final StructLayout rdma_cm_id = structLayout(
            POINTER.withName("verbs"),
            POINTER.withName("channel"),
            POINTER.withName("context"),
            POINTER.withName("qp"),
            member(rdma_route, "route"),
            INT.withName("ps"),
            U8.withName("port_num"),
            pad(3),
            POINTER.withName("event"),
            POINTER.withName("send_cq_channel"),
            POINTER.withName("send_cq"),
            POINTER.withName("recv_cq_channel"),
            POINTER.withName("recv_cq"),
            POINTER.withName("srq"),
            POINTER.withName("pd"),
            INT.withName("qp_type"),
            pad(4))
            .withName("struct rdma_cm_id");

    public static final StructLayout rdma_conn_param = structLayout(
            POINTER.withName("private_data"),
            U8.withName("private_data_len"),
            U8.withName("responder_resources"),
            U8.withName("initiator_depth"),
            U8.withName("flow_control"),
            U8.withName("retry_count"),
            U8.withName("rnr_retry_count"),
            U8.withName("srq"),
            pad(1),
            U32.withName("qp_num"),
            pad(4))
            .withName("struct rdma_conn_param");

    public static final StructLayout rdma_ud_param = structLayout(
            POINTER.withName("private_data"),
            U8.withName("private_data_len"),
            pad(7),
            member(VerbsQueuePair.ibv_ah_attr, "ah_attr"),
            U32.withName("qp_num"),
            U32.withName("qkey"))
            .withName("struct rdma_ud_param");

    public static final StructLayout rdma_cm_event = structLayout(
            POINTER.withName("id"),
            POINTER.withName("listen_id"),
            INT.withName("event"),
            INT.withName("status"),
            unionLayout(
                    member(rdma_conn_param, "conn"),
                    member(rdma_ud_param, "ud"))
                    .withName("param"))
            .withName("struct rdma_cm_event");

    public static final VarHandle rdma_event_channel_fd = field(rdma_event_channel, "fd");

    public static final VarHandle rdma_cm_id_verbs = field(rdma_cm_id, "verbs");
    public static final VarHandle rdma_cm_id_qp = field(rdma_cm_id, "qp");
    public static final VarHandle rdma_cm_id_port_num = field(rdma_cm_id, "port_num");
    public static final VarHandle rdma_cm_id_pd = field(rdma_cm_id, "pd");
    public static final long rdma_cm_id_route_addr_src_storage = offset(rdma_cm_id, "route.addr.src_storage");
    public static final long rdma_cm_id_route_addr_dst_storage = offset(rdma_cm_id, "route.addr.dst_storage");

    public static final VarHandle rdma_conn_param_private_data = field(rdma_conn_param, "private_data");
    public static final VarHandle rdma_conn_param_private_data_len = field(rdma_conn_param, "private_data_len");
    public static final VarHandle rdma_conn_param_responder_resources = field(rdma_conn_param, "responder_resources");
    public static final VarHandle rdma_conn_param_initiator_depth = field(rdma_conn_param, "initiator_depth");
    public static final VarHandle rdma_conn_param_flow_control = field(rdma_conn_param, "flow_control");
    public static final VarHandle rdma_conn_param_retry_count = field(rdma_conn_param, "retry_count");
    public static final VarHandle rdma_conn_param_rnr_retry_count = field(rdma_conn_param, "rnr_retry_count");
    public static final VarHandle rdma_conn_param_srq = field(rdma_conn_param, "srq");
    public static final VarHandle rdma_conn_param_qp_num = field(rdma_conn_param, "qp_num");

    public static final VarHandle rdma_cm_event_id = field(rdma_cm_event, "id");
    public static final VarHandle rdma_cm_event_listen_id = field(rdma_cm_event, "listen_id");
    public static final VarHandle rdma_cm_event_event = field(rdma_cm_event, "event");
    public static final VarHandle rdma_cm_event_status = field(rdma_cm_event, "status");
    public static final VarHandle rdma_cm_event_param_conn_private_data = field(rdma_cm_event, "param.conn.private_data");
    public static final VarHandle rdma_cm_event_param_conn_private_data_len = field(rdma_cm_event, "param.conn.private_data_len");
    public static final VarHandle rdma_cm_event_param_conn_responder_resources = field(rdma_cm_event, "param.conn.responder_resources");
    public static final VarHandle rdma_cm_event_param_conn_initiator_depth = field(rdma_cm_event, "param.conn.initiator_depth");
    public static final VarHandle rdma_cm_event_param_conn_qp_num = field(rdma_cm_event, "param.conn.qp_num");
}
