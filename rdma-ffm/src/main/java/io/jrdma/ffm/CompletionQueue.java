package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsCalls.*;
import static io.jrdma.ffm.abi.VerbsDataPath.*;
import static io.jrdma.ffm.abi.VerbsDevice.*;

import io.jrdma.ffm.abi.Native;
import io.jrdma.ffm.abi.VerbsDataPath;
import io.jrdma.ffm.abi.VerbsDevice;
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
        this.cq = cq.reinterpret(VerbsDataPath.ibv_cq.byteSize());
        MemorySegment ctx = ((MemorySegment) ibv_cq_context.get(this.cq)).reinterpret(VerbsDevice.ibv_context.byteSize());
        this.pollCq = (MemorySegment) ibv_context_ops_poll_cq.get(ctx);
        this.reqNotifyCq = (MemorySegment) ibv_context_ops_req_notify_cq.get(ctx);
        if (channel != null) channel.attach(this);
    }

    /** {@return the {@code struct ibv_cq *}; this object owns it} */
    public MemorySegment handle() {
        return cq;
    }

    /** {@return the device context the CQ was created on} */
    public Context context() {
        return context;
    }

    /** {@return the number of entries the provider actually allocated (at least what was asked for)} */
    public int capacity() {
        return (int) ibv_cq_cqe.get(cq);
    }

    /**
     * Polls up to {@code wcs.capacity()} completions into {@code wcs}; returns how many.
     *
     * @param wcs where the completions go, from entry 0; its owner thread polls
     * @return how many entries were filled, 0 when the CQ is empty
     * @throws IllegalStateException when the CQ is closed
     * @throws VerbsException when ibv_poll_cq fails
     */
    public int poll(WorkCompletions wcs) {
        return poll(wcs, wcs.capacity());
    }

    /**
     * Polls at most {@code max} completions: demand-bounded pollers never take more than asked.
     *
     * @param wcs where the completions go, from entry 0
     * @param max the most to take, at most {@code wcs.capacity()}
     * @return how many entries were filled, 0 when the CQ is empty
     * @throws IllegalArgumentException when {@code max} exceeds the capacity of {@code wcs}
     * @throws IllegalStateException when the CQ is closed
     * @throws VerbsException when ibv_poll_cq fails
     */
    public int poll(WorkCompletions wcs, int max) {
        if (max > wcs.capacity()) throw new IllegalArgumentException("max " + max + " exceeds capacity " + wcs.capacity());
        checkOpen();
        try {
            int n = (int) ops_poll_cq.invokeExact(pollCq, cq, max, wcs.segment());
            if (n < 0) throw new VerbsException("ibv_poll_cq", -n);
            wcs.filled(n);
            return n;
        } catch (Throwable t) {
            throw Native.rethrow(t);
        }
    }

    /**
     * Arms the CQ: the next completion (or next solicited one) raises an event on the channel.
     * One event per arm: re-arm after each.
     *
     * @param solicitedOnly true to raise the event only for a solicited completion (a receive of a
     *                      {@link SendFlags#SOLICITED} send) or an error
     * @throws IllegalStateException when the CQ is closed or was created without a completion channel
     * @throws VerbsException when ibv_req_notify_cq fails
     */
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

    /**
     * Resizes the CQ; returns the new capacity.
     *
     * @param minEntries the entries it must hold at least; no fewer than the completions it holds now
     * @return the capacity the provider granted
     * @throws VerbsException when the provider cannot resize (some do not support it)
     */
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
