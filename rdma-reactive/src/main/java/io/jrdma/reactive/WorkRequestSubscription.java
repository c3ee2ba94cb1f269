package io.jrdma.reactive;

import org.reactivestreams.Subscription;

/**
 * The {@code Subscription} that the {@code Mono} of a work request (a post of {@link RdmaConnection}:
 * send, write, read, an atomic) gives its subscriber. Besides request and cancel it says whether a
 * cancel can still keep the work request off the wire. An adapter that turns the {@code Mono} into a
 * cancellable thing of its own (a coroutine, a future) needs to pass its cancellation on only while
 * it can, and may skip that bookkeeping once the work request is posted; jrdma's Kotlin API does.
 */
public interface WorkRequestSubscription extends Subscription {
    /**
     * Whether {@link #cancel()} would still withdraw the work request: true while it waits to be
     * posted (for a send-queue slot or, to a peer that grants them, a receiver credit, for as long as
     * its timeout lets it). False once it is posted (the NIC owns it and its buffers until its
     * completion, and a cancel only stops the signal), and once it terminated or was cancelled.
     *
     * @return whether cancelling now keeps the work request from being posted
     */
    boolean isWithdrawable();
}
