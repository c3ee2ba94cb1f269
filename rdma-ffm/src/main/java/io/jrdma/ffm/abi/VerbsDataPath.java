package io.jrdma.ffm.abi;

import static io.jrdma.ffm.abi.Layouts.*;
import static java.lang.foreign.MemoryLayout.structLayout;
import static java.lang.foreign.MemoryLayout.unionLayout;

import java.lang.foreign.StructLayout;
import java.lang.invoke.VarHandle;

/**
 * Layouts and constants of {@code <infiniband/verbs.h>} for the data path: protection domains, memory
 * regions, work requests, work completions, completion queues and channels (rdma-core 44 ABI, LP64).
 *
 * <p>Names follow the header: {@code ibv_wc} is {@code struct ibv_wc}, {@code ibv_wc_wr_id} the
 * VarHandle for its {@code wr_id}. Proven against the installed header by LayoutProbeTest.
 */
public final class VerbsDataPath {
    private VerbsDataPath() {}

    // ---------------------------------------------------------------- constants
    public static final int IBV_ACCESS_LOCAL_WRITE = 1;
    public static final int IBV_ACCESS_REMOTE_WRITE = 1 << 1;
    public static final int IBV_ACCESS_REMOTE_READ = 1 << 2;
    public static final int IBV_ACCESS_REMOTE_ATOMIC = 1 << 3;

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

    // ---------------------------------------------------------------- layouts
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

    // ---------------------------------------------------------------- VarHandles
    public static final VarHandle ibv_comp_channel_fd = field(ibv_comp_channel, "fd");

    public static final VarHandle ibv_cq_context = field(ibv_cq, "context");
    public static final VarHandle ibv_cq_cqe = field(ibv_cq, "cqe");

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
}
