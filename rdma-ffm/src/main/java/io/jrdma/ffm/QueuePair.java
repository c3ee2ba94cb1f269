package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsCalls.*;
import static io.jrdma.ffm.abi.VerbsDataPath.*;
import static io.jrdma.ffm.abi.VerbsDevice.*;
import static io.jrdma.ffm.abi.VerbsQueuePair.*;

import io.jrdma.ffm.abi.CmCalls;
import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.VerbsDataPath;
import io.jrdma.ffm.abi.VerbsDevice;
import io.jrdma.ffm.abi.VerbsQueuePair;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * {@code struct ibv_qp}. Posting goes through {@code ibv_context.ops.post_send/post_recv}
 * (static inline in verbs.h); the pointers are read once here and reused bad_wr slots mean a
 * post allocates nothing. Sends and receives each have their own slot, so one thread may post
 * sends while another posts receives; posts of one kind must come from one thread at a time.
 */
public final class QueuePair extends NativeResource {
    private static final int ENOMEM = 12;

    private final ProtectionDomain pd;
    private final MemorySegment qp;
    private final QpType type;
    private final int qpNumber;
    private final QueuePairCapabilities capabilities;
    private final MemorySegment postSend;
    private final MemorySegment postRecv;
    private final @Nullable CmId cmOwner;
    /**
     * Automatic, not shared: a downcall holds a shared arena's session for its duration (an atomic
     * acquire and release around every call that passes its memory, 50-140 ns under the lab's
     * emulation), an automatic one's costs nothing, and its few bytes go with this object.
     */
    private final Arena scratchArena = Arena.ofAuto();
    /** ibv_post_send's and ibv_post_recv's bad_wr out-parameters: separate, since the two post paths run on different threads. */
    private final MemorySegment badSendWr = scratchArena.allocate(ValueLayout.ADDRESS);
    private final MemorySegment badRecvWr = scratchArena.allocate(ValueLayout.ADDRESS);
    /**
     * A provider stores bad_wr only when a post fails, so it is NULL until a failure and cleared
     * by the next post after one, not before every post: an address store through FFM costs more
     * than an int's, and is on every post's path (each side of a ping-pong). Written by whoever
     * posts, like the scratch words themselves (one poster at a time per queue).
     */
    private boolean badSendWrSet, badRecvWrSet;

    QueuePair(ProtectionDomain pd, QueuePairInit init, MemorySegment qp, MemorySegment grantedInit, @Nullable CmId cmOwner) {
        super(pd, init.sendCq(), init.recvCq() == init.sendCq() ? null : init.recvCq(), init.srq(), cmOwner);
        this.pd = pd;
        this.qp = qp.reinterpret(VerbsQueuePair.ibv_qp.byteSize());
        this.type = QpType.of((int) ibv_qp_qp_type.get(this.qp));
        this.qpNumber = (int) ibv_qp_qp_num.get(this.qp);
        this.capabilities = new QueuePairCapabilities(
                (int) ibv_qp_init_attr_cap_max_send_wr.get(grantedInit),
                (int) ibv_qp_init_attr_cap_max_recv_wr.get(grantedInit),
                (int) ibv_qp_init_attr_cap_max_send_sge.get(grantedInit),
                (int) ibv_qp_init_attr_cap_max_recv_sge.get(grantedInit),
                (int) ibv_qp_init_attr_cap_max_inline_data.get(grantedInit));
        MemorySegment ctx = ((MemorySegment) ibv_qp_context.get(this.qp)).reinterpret(VerbsDevice.ibv_context.byteSize());
        this.postSend = (MemorySegment) ibv_context_ops_post_send.get(ctx);
        this.postRecv = (MemorySegment) ibv_context_ops_post_recv.get(ctx);
        this.cmOwner = cmOwner;
    }

    /** {@return the {@code struct ibv_qp *}; this object owns it} */
    public MemorySegment handle() {
        return qp;
    }

    /** {@return the QP number (24 bits): what the peer sets as its destination QP} */
    public int qpNumber() {
        return qpNumber;
    }

    /** {@return the transport type} */
    public QpType type() {
        return type;
    }

    /** {@return the protection domain the QP was created in: only its memory regions can be used in WRs} */
    public ProtectionDomain protectionDomain() {
        return pd;
    }

    /** {@return the queue sizes the provider granted, which may exceed what was asked for} */
    public QueuePairCapabilities capabilities() {
        return capabilities;
    }

    /**
     * The current state, queried from the kernel (a peer's error can move it to ERR).
     *
     * @return the state
     * @throws IllegalStateException when the QP is closed
     * @throws VerbsException when ibv_query_qp fails
     */
    public QpState state() {
        return QpState.of(query(IBV_QP_STATE, ibv_qp_attr_qp_state));
    }

    /**
     * The local ACK timeout the QP was programmed with (by hand, or by rdma_cm from the path),
     * queried from the kernel: the NIC retransmits after 4.096 µs × 2^n without an ACK.
     *
     * @return n, 0 to 31 (0: wait for ever)
     * @throws IllegalStateException when the QP is closed
     * @throws VerbsException when ibv_query_qp fails
     */
    public int ackTimeout() {
        return query(IBV_QP_TIMEOUT, ibv_qp_attr_timeout);
    }

    /**
     * The transport retries after an ACK timeout ({@code retry_cnt}), queried from the kernel.
     *
     * @return 0 to 7
     * @throws IllegalStateException when the QP is closed
     * @throws VerbsException when ibv_query_qp fails
     */
    public int retryCount() {
        return query(IBV_QP_RETRY_CNT, ibv_qp_attr_retry_cnt);
    }

    /**
     * The RNR NAK delay this QP asks a peer to wait when the peer's SEND found no receive posted
     * here ({@code min_rnr_timer}), queried from the kernel.
     *
     * @return the delay code, 0 to 31 (12 = 0.64 ms; 0 = 655.36 ms, the longest)
     * @throws IllegalStateException when the QP is closed
     * @throws VerbsException when ibv_query_qp fails
     */
    public int minRnrTimer() {
        return query(IBV_QP_MIN_RNR_TIMER, ibv_qp_attr_min_rnr_timer);
    }

    /** One attribute of ibv_query_qp, as an unsigned int. */
    private int query(int mask, VarHandle field) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(VerbsQueuePair.ibv_qp_attr);
            MemorySegment init = arena.allocate(VerbsQueuePair.ibv_qp_init_attr);
            int rc = (int) ibv_query_qp.invokeExact(qp, attr, mask, init);
            if (rc != 0) throw new VerbsException("ibv_query_qp", Math.abs(rc));
            Object v = field.get(attr);
            return v instanceof Byte b ? Byte.toUnsignedInt(b) : (int) v;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * {@code ibv_modify_qp} with exactly the attributes that were set.
     *
     * @param attributes the attributes; only the ones set are applied
     * @throws IllegalStateException when the QP is closed
     * @throws VerbsException when the kernel refuses, e.g. EINVAL for an attribute the transition
     *                        lacks or does not allow
     */
    public void modify(QpAttributes attributes) {
        checkOpen();
        try (Arena arena = Arena.ofConfined()) {
            int rc = (int) ibv_modify_qp.invokeExact(qp, attributes.write(arena), attributes.mask());
            if (rc != 0) {
                String target = attributes.targetState() == null ? "" : " to " + attributes.targetState();
                throw new VerbsException("ibv_modify_qp(QP 0x" + Integer.toHexString(qpNumber) + target + ", mask 0x"
                        + Integer.toHexString(attributes.mask()) + ")", Math.abs(rc));
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * RESET → INIT: bind to a port and say what the remote may do here.
     *
     * @param port         the local port, from 1
     * @param remoteAccess what peers may do through this QP; ignored for UD, which gets the Q_Key {@link #UD_QKEY}
     * @throws VerbsException when the kernel refuses the transition
     */
    public void modifyToInit(int port, Set<Access> remoteAccess) {
        QpAttributes a = new QpAttributes().state(QpState.INIT).pkeyIndex(0).port(port);
        if (type == QpType.UD) a.qkey(UD_QKEY);
        else a.access(remoteAccess);
        modify(a);
    }

    /**
     * INIT → RTR for a connected QP, from the peer's exchanged address. A peer GID of all zeros
     * means a LID-routed InfiniBand path; any other GID a global (GRH) route, as RoCE needs.
     *
     * @param r the peer's address and the receive-side settings
     * @throws VerbsException when the kernel refuses the transition
     */
    public void modifyToRtr(RtrAttributes r) {
        QpAttributes a = new QpAttributes().state(QpState.RTR).pathMtu(r.mtu())
                .destQpNumber(r.remote().qpNumber()).rqPsn(r.remote().psn());
        if (isZero(r.remote().gid())) a.localAddress(r.remote().lid(), r.serviceLevel(), r.port());
        else a.globalAddress(r.remote().gid(), r.sgidIndex(), r.hopLimit(), r.trafficClass(), r.serviceLevel(), r.port())
                .destLid(r.remote().lid());
        if (type == QpType.RC) a.maxDestReadAtomic(r.maxDestRdAtomic()).minRnrTimer(r.minRnrTimer());
        modify(a);
    }

    /**
     * RTR → RTS: the send side starts at {@code sqPsn}, which the peer used as its rq_psn.
     *
     * @param r the send PSN, and for RC the ACK timeout, retry counts and READ depth
     * @throws VerbsException when the kernel refuses the transition
     */
    public void modifyToRts(RtsAttributes r) {
        QpAttributes a = new QpAttributes().state(QpState.RTS).sqPsn(r.sqPsn());
        if (type == QpType.RC) a.timeout(r.timeout()).retryCount(r.retryCount()).rnrRetry(r.rnrRetry()).maxReadAtomic(r.maxRdAtomic());
        modify(a);
    }

    /**
     * Moves to ERR: every outstanding WR completes with IBV_WC_WR_FLUSH_ERR.
     *
     * @throws VerbsException when the kernel refuses the transition
     */
    public void modifyToError() {
        modify(new QpAttributes().state(QpState.ERR));
    }

    /**
     * Moves to RESET, from which the QP can go through INIT, RTR and RTS again. Work requests
     * still queued are dropped without completions: move to ERR and drain the CQ first to see them.
     *
     * @throws VerbsException when the kernel refuses the transition
     */
    public void modifyToReset() {
        modify(new QpAttributes().state(QpState.RESET));
    }

    /** The qkey UD QPs of this binding use. */
    public static final int UD_QKEY = 0x11111111;

    private static boolean isZero(byte[] b) {
        for (byte x : b) if (x != 0) return false;
        return true;
    }

    /**
     * Posts a send-queue WR (chain). A full send queue is {@code ENOMEM} from the provider and is
     * reported as {@link QueueFullException}.
     *
     * @param wr the first WR of the chain; read during the call only, so it may be patched again once this returns
     * @throws QueueFullException when the send queue is full
     * @throws VerbsException when the provider refuses the WR; the message names the bad wr_id
     * @throws IllegalStateException when the QP is closed
     */
    public void postSend(SendWorkRequest wr) {
        checkOpen();
        int rc;
        if (badSendWrSet) {
            badSendWr.set(ValueLayout.ADDRESS, 0, MemorySegment.NULL);
            badSendWrSet = false;
        }
        try {
            rc = (int) ops_post_send.invokeExact(postSend, qp, wr.segment(), badSendWr);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        if (rc != 0) {
            badSendWrSet = true;
            throw postError("ibv_post_send", kind(), badSendWr, rc);
        }
    }

    /**
     * After a {@link #postSend} of a chain that threw: the wr_id of the first WR that was not
     * posted (ibv_post_send's {@code bad_wr}); the WRs before it were posted and will complete.
     * Ask on the thread that posted, before its next post.
     *
     * @return that wr_id, or -1 when the provider named none (then treat the whole chain as not posted)
     */
    public long failedSendWrId() {
        MemorySegment bad = badSendWr.get(ValueLayout.ADDRESS, 0);
        if (bad.equals(MemorySegment.NULL)) return -1;
        return (long) ibv_send_wr_wr_id.get(bad.reinterpret(VerbsDataPath.ibv_send_wr.byteSize()));
    }

    /**
     * Posts a receive WR (chain). Not for QPs attached to an SRQ.
     *
     * @param wr the first WR of the chain; read during the call only, so it may be patched again once this returns
     * @throws QueueFullException when the receive queue is full
     * @throws VerbsException when the provider refuses the WR; the message names the bad wr_id
     * @throws IllegalStateException when the QP is closed
     */
    public void postReceive(ReceiveWorkRequest wr) {
        checkOpen();
        int rc;
        if (badRecvWrSet) {
            badRecvWr.set(ValueLayout.ADDRESS, 0, MemorySegment.NULL);
            badRecvWrSet = false;
        }
        try {
            rc = (int) ops_post_recv.invokeExact(postRecv, qp, wr.segment(), badRecvWr);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        if (rc != 0) {
            badRecvWrSet = true;
            throw postError("ibv_post_recv", kind(), badRecvWr, rc);
        }
    }

    static RdmaException postError(String function, String target, MemorySegment badWr, int rc) {
        MemorySegment bad = badWr.get(ValueLayout.ADDRESS, 0);
        // wr_id is the first member of both ibv_send_wr and ibv_recv_wr
        String badId = bad.equals(MemorySegment.NULL) ? "?"
                : Long.toString((long) ibv_recv_wr_wr_id.get(bad.reinterpret(VerbsDataPath.ibv_recv_wr.byteSize())));
        String what = function + "(" + target + ", bad wr_id " + badId + ")";
        return Math.abs(rc) == ENOMEM ? new QueueFullException(what, Math.abs(rc)) : new VerbsException(what, Math.abs(rc));
    }

    @Override
    void release() {
        try {
            if (cmOwner != null) {
                // not while librdmacm may change this QP inside rdma_get_cm_event on another thread
                cmOwner.channel().withoutReads(() -> {
                    try {
                        CmCalls.rdma_destroy_qp.invokeExact(cmOwner.handle());
                    } catch (Throwable t) {
                        throw Native.rethrow(t);
                    }
                });
            } else {
                int rc = (int) ibv_destroy_qp.invokeExact(qp);
                if (rc != 0) throw new VerbsException("ibv_destroy_qp(QP 0x" + Integer.toHexString(qpNumber) + ")", Math.abs(rc));
            }
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    String kind() {
        return "QueuePair(" + type + " 0x" + Integer.toHexString(qpNumber) + ")";
    }
}
