package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.QueuePair;
import io.jrdma.ffm.SendFlags;
import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.SendWorkRequest;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.MemoryInternals;
import io.jrdma.reactive.internal.loop.DeviceDomain;
import io.jrdma.reactive.internal.observe.Observer;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.foreign.Arena;
import org.jspecify.annotations.Nullable;

/**
 * The send side of a connection's QP: the send queue's {@link SendQueue.Poster}, which writes one
 * operation as one work request, or several as one chain, into reusable work requests and posts
 * them with {@code ibv_post_send}; and the observer's view of sends (what was posted in each slot,
 * and when). Only the send queue's single drainer posts; the loop reports completions.
 *
 * <p>wr_id of a send: bits 32-61 the connection's tag, bits 0-31 the send slot.
 */
final class SendPoster implements SendQueue.Poster {
    /** The most work requests one ibv_post_send takes: rxe rings its doorbell (a system call) once per post. */
    private static final int MAX_CHAIN = 16;
    /**
     * The most payload bytes one ibv_post_send carries past its first work request. A chain saves a
     * doorbell per work request, which counts for small messages only; rxe runs the requester of a
     * user QP inside ibv_post_send for up to 1,024 packets (RXE_MAX_ITERATIONS) and hands the rest to
     * a tasklet: softirq work that, once a run passes 2 ms, goes to ksoftirqd, and there competes with
     * the spinning loops for a CPU. 16 SENDs of 64 KiB are 1,024 packets at the path MTU of 1,024 of
     * an Ethernet rxe; 256 KiB is 256 such packets, and 1,024 at the smallest MTU (256).
     */
    private static final long MAX_CHAIN_BYTES = 256 << 10;

    private final MemoryInternals memory = MemoryInternals.get();
    private final QueuePair qp;
    private final long tag;
    private final DeviceDomain domain;
    private final Object owner;  // named in errors
    private final int maxInline;
    /** Work requests for one post: one, or a chain. Only the send queue's single drainer touches them. */
    private final SendWorkRequest[] chain;
    private final int[] chainSlots;
    private final SendOpcode[] chainOpcodes;  // for the observer, told once the chain is posted
    private final long[] chainLengths;
    private final Observer observer;          // Observer.NONE unless metrics or wiretap
    /**
     * Per send slot, only for an observer that wants them; postedBytes is null exactly when the
     * observer is {@link Observer#NONE}, and the hot paths test it before calling the observer:
     * C1 (the lab's only compiler) does not remove a call to an empty default method of an
     * interface with several implementations, as C2 does.
     */
    private final long @Nullable [] postedAt, postedBytes;
    /** The work requests of receiver-credit control messages, one per control slot, written once; the loop's. */
    private final SendWorkRequest[] control;
    /** Per rendezvous slot of the peer: the READ of its large message, and the DONE answering it ({@link Rendezvous}); the loop's. */
    private final SendWorkRequest[] reads, dones;

    /** {@code wrMemory} holds the work requests: freed once the connection and its WRs are unreachable. */
    SendPoster(QueuePair qp, long tag, DeviceDomain domain, ConnectionConfig config, Observer observer, Arena wrMemory, Object owner) {
        this.qp = qp;
        this.tag = tag;
        this.domain = domain;
        this.owner = owner;
        this.maxInline = Math.min(config.maxInlineData(), qp.capabilities().maxInlineData());
        int chainLength = Math.min(config.sendQueueDepth(), MAX_CHAIN);
        this.chain = new SendWorkRequest[chainLength];
        for (int k = 0; k < chainLength; k++) chain[k] = SendWorkRequest.allocate(wrMemory, config.maxScatterGather());
        this.chainSlots = new int[chainLength];
        this.chainOpcodes = new SendOpcode[chainLength];
        this.chainLengths = new long[chainLength];
        this.observer = observer;
        this.postedAt = observer.timed() ? new long[config.sendQueueDepth()] : null;
        this.postedBytes = observer == Observer.NONE ? null : new long[config.sendQueueDepth()];
        this.control = new SendWorkRequest[Credits.RESERVED];
        for (int i = 0; i < control.length; i++) {
            control[i] = SendWorkRequest.allocate(wrMemory, 1).wrId(tag | config.sendQueueDepth() + i).opcode(SendOpcode.SEND_WITH_IMM)
                    .noSge().flags(SendFlags.SIGNALED);
        }
        this.reads = new SendWorkRequest[Rendezvous.SLOTS];
        this.dones = new SendWorkRequest[Rendezvous.SLOTS];
        for (int i = 0; i < Rendezvous.SLOTS; i++) {
            reads[i] = SendWorkRequest.allocate(wrMemory, 1).wrId(tag | config.sendQueueDepth() + Rendezvous.readSlot(i))
                    .opcode(SendOpcode.RDMA_READ).flags(SendFlags.SIGNALED);
            dones[i] = SendWorkRequest.allocate(wrMemory, 1).wrId(tag | config.sendQueueDepth() + Rendezvous.doneSlot(i))
                    .opcode(SendOpcode.SEND_WITH_IMM).noSge().flags(SendFlags.SIGNALED);
        }
    }

    /**
     * Posts a receiver-credit control message: a zero-length SEND_WITH_IMM with {@code immediate},
     * as send slot {@code sendQueueDepth + index} (beyond the send queue's). Loop thread.
     */
    void postControl(int index, int immediate) {
        SendWorkRequest wr = control[index];
        wr.immediate(immediate).next(null);
        qp.postSend(wr);
    }

    /** Posts a READ of {@code length} bytes of the large message in the peer's rendezvous slot {@code slot} to {@code offset} of {@code into}. Loop thread. */
    void postRead(int slot, RegisteredBuffer into, int offset, int length, long remoteAddress, int rkey) {
        SendWorkRequest wr = reads[slot];
        wr.sge(0, into.address() + offset, length, into.lkey()).rdma(remoteAddress, rkey).next(null);
        qp.postSend(wr);
    }

    /** Posts the DONE of the peer's rendezvous slot: a zero-length SEND_WITH_IMM with {@code immediate}. Loop thread. */
    void postDone(int slot, int immediate) {
        SendWorkRequest wr = dones[slot];
        wr.immediate(immediate).next(null);
        qp.postSend(wr);
    }

    @Override
    public @Nullable RuntimeException refuses(RegisteredBuffer b) {
        if (memory.protectionDomain(b.pool()) == domain.pd()) return null;
        // a device that checks refuses it late, with IBV_WC_LOC_PROT_ERR, which closes the connection; rxe 6.1 does not even check
        return new IllegalArgumentException(b + " is registered in another protection domain than " + owner + " (that of "
                + domain.deviceName() + " in its RdmaResources): use buffers of this connection's domain() or buffers(), or"
                + " of another connection on the same device and RdmaResources");
    }

    @Override
    public void post(Op op, int slot) {
        encode(chain[0], op, slot);
        qp.postSend(chain[0]);
        if (postedBytes != null) observer.posted(op.opcode, slot, op.length);
    }

    @Override
    public int maxChain() {
        return chain.length;
    }

    @Override
    public long maxChainBytes() {
        return MAX_CHAIN_BYTES;
    }

    @Override
    public void chain(Op op, int slot, int index) {
        encode(chain[index], op, slot);
        if (index > 0) chain[index - 1].next(chain[index]);
        chainSlots[index] = slot;
        chainOpcodes[index] = op.opcode;
        chainLengths[index] = op.length;
    }

    @Override
    public int postChain(int count, RuntimeException[] failure) {
        int postedUpTo = count;
        try {
            qp.postSend(chain[0]);
        } catch (IllegalStateException closedQp) {  // refused before the call: nothing was posted
            failure[0] = closedQp;
            postedUpTo = 0;
        } catch (RuntimeException e) {
            failure[0] = e;
            postedUpTo = 0;
            long bad = qp.failedSendWrId();  // ibv_post_send's bad_wr: the WRs before it were posted
            for (int k = 0; k < count; k++) {
                if (bad == (tag | chainSlots[k])) postedUpTo = k;
            }
        }
        if (postedBytes != null) for (int k = 0; k < postedUpTo; k++) observer.posted(chainOpcodes[k], chainSlots[k], chainLengths[k]);
        return postedUpTo;
    }

    /**
     * {@code op} as work request {@code slot} in {@code wr}, whose chain ends here. The WR is not
     * reset: every field the provider reads for {@code op}'s opcode is written (wr_id, next, the
     * SGEs and their count, opcode, flags, the immediate of a *_WITH_IMM, the remote address of
     * an RDMA or atomic opcode), and what an earlier operation left in the others (an immediate, a
     * remote address) is ignored by an opcode that does not use it. sg_list points at the WR's
     * own SGE array from its allocation on. A reset is a 128-byte fill through FFM on every post:
     * 0.2 us under the lab's emulation, on each side of a ping-pong's critical path.
     */
    private void encode(SendWorkRequest wr, Op op, int slot) {
        wr.wrId(tag | slot).opcode(op.opcode).next(null);
        if (op.sges == null) {
            RegisteredBuffer b = op.buffer;
            wr.sge(0, b.address() + op.bufferOffset, op.bufferLength, b.lkey());
        } else {
            if (op.sges.length == 0) wr.noSge();
            for (int i = 0; i < op.sges.length; i++) {
                var s = op.sges[i];
                wr.sge(i, s.buffer().address() + s.offset(), s.length(), s.buffer().lkey());
            }
        }
        int flags = SendFlags.SIGNALED;
        if (op.length <= maxInline && op.opcode != SendOpcode.RDMA_READ && !op.isAtomic()) flags |= SendFlags.INLINE;
        wr.flags(flags);
        if (op.hasImmediate) wr.immediate(op.immediate);
        if (op.isAtomic()) {
            wr.atomic(op.remote.address() + op.remoteOffset, op.remote.rkey(), op.compareAdd, op.swap);
        } else if (op.remote != null) {
            wr.rdma(op.remote.address() + op.remoteOffset, op.remote.rkey());
        }
        if (postedBytes != null) {  // before the post: its completion may be taken before postSend returns
            postedBytes[slot] = op.length;
            if (postedAt != null) postedAt[slot] = System.nanoTime();
        }
    }

    /** Whether the observer is told of completions (not {@link Observer#NONE}): tested before calling it on the hot path. */
    boolean observed() {
        return postedBytes != null;
    }

    /** Tells the observer of send completion {@code wc}, with what its slot posted and how long ago. */
    void completed(WorkCompletion wc) {
        if (postedBytes == null) return;
        int slot = (int) wc.wrId();
        observer.completed(wc.opcode(), wc.status(), wc.wrId(), postedBytes[slot], postedAt != null ? System.nanoTime() - postedAt[slot] : -1);
    }
}
