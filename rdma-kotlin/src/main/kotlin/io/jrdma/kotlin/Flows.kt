package io.jrdma.kotlin

import io.jrdma.reactive.ConnectionException
import io.jrdma.reactive.RdmaConnection
import io.jrdma.reactive.memory.ReceivedMessage
import io.jrdma.reactive.memory.ScatterGatherElement
import io.jrdma.reactive.WorkCompletion
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.reactive.asFlow
import kotlinx.coroutines.reactive.asPublisher
import kotlinx.coroutines.reactive.awaitFirstOrNull

/**
 * [RdmaConnection.receives] as a Flow: one [awaitReceive] per element and none ahead of demand. A
 * prefetching bridge (`receives().asFlow()`) would park messages in a channel buffer, where a
 * cancelled collector would leave them unreleased, each one a receive credit the peer never gets
 * back. Every message must be released ([ReceivedMessage.use]).
 *
 * Completes when the connection closes in an orderly way (the peer disconnected, or it was
 * closed locally); fails with the cause when it closed because of an error.
 */
public fun RdmaConnection.receivesFlow(): Flow<ReceivedMessage> = flow {
    while (true) {
        val message = try {
            awaitReceive()
        } catch (closed: ConnectionException.Closed) {
            if (closed.isOrderly) return@flow
            throw closed
        }
        emit(message)
    }
}

/**
 * [RdmaConnection.completions] as a Flow. Demand reaches the poller: the default buffer requests
 * 64 completions ahead; `completionsFlow().buffer(0)` requests one at a time, so a slow collector
 * leaves completions in the CQ and posters wait for credits. One collector at a time.
 */
public fun RdmaConnection.completionsFlow(): Flow<WorkCompletion> = completions().asFlow()

/**
 * SENDs every message of [messages], in order, each as one SEND, and returns once the last one
 * completed: [RdmaConnection.sendByteArray] with the peer's demand in it. The collector of
 * [messages] suspends in `emit` while the peer has no receive posted for the next message (its
 * receiver credits), so a consumer on the other host that stops releasing suspends the producer
 * here; nothing is buffered in between. Cancelling the caller cancels the collection; SENDs
 * already posted complete on their own.
 */
public suspend fun RdmaConnection.awaitSendByteArray(messages: Flow<ByteArray>) {
    sendByteArray(messages.asPublisher()).awaitFirstOrNull()
}

/**
 * [awaitSendByteArray] of slices of registered memory, without copying: each element's buffer
 * reference passes to the stream and is released once its SEND completed ([RdmaConnection.send]).
 */
public suspend fun RdmaConnection.awaitSend(messages: Flow<ScatterGatherElement>) {
    send(messages.asPublisher()).awaitFirstOrNull()
}

/**
 * [awaitSend] of gather lists: each list's slices go as one SEND, in order, without copying
 * ([RdmaConnection.sendGather]); a list of several slices must fit the peer's receive buffers.
 */
public suspend fun RdmaConnection.awaitSendGather(messages: Flow<List<ScatterGatherElement>>) {
    sendGather(messages.asPublisher()).awaitFirstOrNull()
}

// ------------------------------------------------------------------------------ the names before the rule

@Deprecated(RENAMED, ReplaceWith("awaitSendByteArray(messages)", "io.jrdma.kotlin.awaitSendByteArray"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.sendByteArrayAwait(messages: Flow<ByteArray>): Unit = awaitSendByteArray(messages)

@Deprecated(RENAMED, ReplaceWith("awaitSend(messages)", "io.jrdma.kotlin.awaitSend"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.sendAwait(messages: Flow<ScatterGatherElement>): Unit = awaitSend(messages)
