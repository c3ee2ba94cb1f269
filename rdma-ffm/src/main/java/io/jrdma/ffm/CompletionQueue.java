package io.jrdma.ffm;

import static io.jrdma.ffm.abi.Verbs.*;
import static io.jrdma.ffm.abi.VerbsCalls.*;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.Verbs;
import java.lang.foreign.MemorySegment;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code struct ibv_cq}. {@link #poll} and {@link #requestNotification} are the static-inline
 * verbs, called through the function pointers in {@code ibv_context.ops} that are read once here.
 */
public final class CompletionQueue extends NativeResource {
    /** Completion events are acknowledged in batches: ibv_ack_cq_events takes a mutex. */
    private static final int ACK_BATCH = 32;

    private final Context context;
    private final CompletionChannel channel;
    private final MemorySegment cq;
    private final MemorySegment pollCq;
    private final MemorySegment reqNotifyCq;
    private final AtomicInteger unackedEvents = new AtomicInteger();
    /** What CompletionChannel.awaitEvent returns for this CQ, made once so a wait allocates nothing. */
    private final Optional<CompletionQueue> asOptional = Optional.of(this);

    CompletionQueue(Context context, CompletionChannel channel, MemorySegment cq) {
        super(context, channel);
        this.context = context;
        this.channel = channel;
        this.cq = cq.reinterpret(Verbs.ibv_cq.byteSize());
        MemorySegment ctx = ((MemorySegment) ibv_cq_context.get(this.cq)).reinterpret(Verbs.ibv_context.byteSize());
        this.pollCq = (MemorySegment) ibv_context_ops_poll_cq.get(ctx);
        this.reqNotifyCq = (MemorySegment) ibv_context_ops_req_notify_cq.get(ctx);
        if (channel != null) channel.attach(this);
    }

    public MemorySegment handle() {
        return cq;
    }

    public Context context() {
        return context;
    }

    /** The number of entries the provider actually allocated (at least what was asked for). */
    public int capacity() {
        return (int) ibv_cq_cqe.get(cq);
    }

    /** Polls up to {@code wcs.capacity()} completions into {@code wcs}; returns how many. */
    public int poll(WorkCompletions wcs) {
        return poll(wcs, wcs.capacity());
    }

    /** Polls at most {@code max} completions: demand-bounded pollers never take more than asked. */
    public int poll(WorkCompletions wcs, int max) {
        if (max > wcs.capacity()) throw new IllegalArgumentException("max " + max + " exceeds capacity " + wcs.capacity());
        checkOpen();
        try {
            int n = (int) ops_poll_cq.invokeExact(pollCq, cq, max, wcs.segment());
            if (n < 0) throw new VerbsException("ibv_poll_cq", -n);
            return n;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Arms the CQ: the next completion (or next solicited one) raises an event on the channel. */
    public void requestNotification(boolean solicitedOnly) {
        checkOpen();
        if (channel == null) throw new IllegalStateException(this + " has no completion channel to notify");
        try {
            int rc = (int) ops_req_notify_cq.invokeExact(reqNotifyCq, cq, solicitedOnly ? 1 : 0);
            if (rc != 0) throw new VerbsException("ibv_req_notify_cq", Math.abs(rc));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /** Resizes the CQ; returns the new capacity. */
    public int resize(int minEntries) {
        checkOpen();
        try {
            int rc = (int) ibv_resize_cq.invokeExact(cq, minEntries);
            if (rc != 0) throw new VerbsException("ibv_resize_cq(" + minEntries + ")", Math.abs(rc));
            return capacity();
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    Optional<CompletionQueue> asOptional() {
        return asOptional;
    }

    void eventReceived() {
        if (unackedEvents.incrementAndGet() >= ACK_BATCH) ackEvents();
    }

    private void ackEvents() {
        int n = unackedEvents.getAndSet(0);
        if (n == 0) return;
        try {
            ibv_ack_cq_events.invokeExact(cq, n);
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    @Override
    void release() {
        ackEvents();  // ibv_destroy_cq waits for every event to be acknowledged
        try {
            int rc = (int) ibv_destroy_cq.invokeExact(cq);
            if (rc != 0) throw new VerbsException("ibv_destroy_cq", Math.abs(rc));
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
        if (channel != null) channel.detach(this);
    }

    @Override
    String kind() {
        return "CompletionQueue(" + context.deviceName() + ")";
    }
}
