package io.jrdma.kotlin

import io.jrdma.reactive.memory.BufferPool
import io.jrdma.reactive.RdmaConnection
import io.jrdma.reactive.memory.ReceivedMessage
import io.jrdma.reactive.memory.RegisteredBuffer
import io.jrdma.reactive.memory.RemoteBuffer
import io.jrdma.reactive.memory.ScatterGatherElement
import io.jrdma.reactive.WorkCompletion

// Names in io.jrdma.kotlin, one rule in the style of kotlinx-coroutines-reactor:
// - `xxxAwait()` suspends on the Mono of the reactive `xxx()` and returns its value: sendAwait,
//   receiveAwait, acquireAwait, closeAwait, onCloseAwait (onClose()), callAwait. The suffix is
//   needed: a member returning Mono shadows an extension of the same name. `disposeLater()` is
//   Reactor Netty's Mono of dispose, so its suspend form is `disposeAwait()`; `RpcClient.connect(this)`
//   is `rpcConnectAwait()`, since `connectAwait()` is the client's own connect.
// - `xxxFlow()` is the Flow of the reactive `xxx()` (a Flux): receivesFlow, completionsFlow, connectionsFlow.
// - `use { }` runs a block, then closes, disposes or releases its receiver, also on failure or cancellation.
//
// Each function here posts through the reactive layer and suspends until the work completion.
// Cancelling the coroutine cancels the Mono: an operation still waiting for a send credit is never
// posted, and a posted one keeps its buffer until its completion arrives, exactly as in rdma-reactive.

/** SENDs a copy of [bytes] into the peer's next posted receive. */
public suspend fun RdmaConnection.sendAwait(bytes: ByteArray): WorkCompletion = send(bytes).awaitCompletion()

/** SENDs [text] as UTF-8. */
public suspend fun RdmaConnection.sendAwait(text: String): WorkCompletion = send(text).awaitCompletion()

/** SENDs `[offset, offset + length)` of [buffer] without copying. */
public suspend fun RdmaConnection.sendAwait(
    buffer: RegisteredBuffer, offset: Long = 0, length: Int = Math.toIntExact(buffer.capacity() - offset),
): WorkCompletion = send(buffer, offset, length).awaitCompletion()

/** SEND_WITH_IMM of `[offset, offset + length)` of [buffer]; the receiver sees [immediate] too. */
public suspend fun RdmaConnection.sendWithImmediateAwait(
    buffer: RegisteredBuffer, offset: Long, length: Int, immediate: Int,
): WorkCompletion = sendWithImmediate(buffer, offset, length, immediate).awaitCompletion()

/** RDMA WRITE of a copy of [bytes] into [target] at [targetOffset]. */
public suspend fun RdmaConnection.writeAwait(
    bytes: ByteArray, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = write(bytes, target, targetOffset).awaitCompletion()

/** RDMA WRITE of `[sourceOffset, sourceOffset + length)` of [source] into [target] at [targetOffset], without copying. */
public suspend fun RdmaConnection.writeAwait(
    source: RegisteredBuffer, sourceOffset: Long, length: Int, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = write(source, sourceOffset, length, target, targetOffset).awaitCompletion()

/** RDMA WRITE_WITH_IMM of a copy of [bytes]: the data lands in [target] and the peer's next receive completes with [immediate]. */
public suspend fun RdmaConnection.writeWithImmediateAwait(
    bytes: ByteArray, immediate: Int, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = writeWithImmediate(bytes, target, targetOffset, immediate).awaitCompletion()

/** RDMA WRITE_WITH_IMM of `[sourceOffset, sourceOffset + length)` of [source], without copying. */
public suspend fun RdmaConnection.writeWithImmediateAwait(
    source: RegisteredBuffer, sourceOffset: Long, length: Int, immediate: Int,
    target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = writeWithImmediate(source, sourceOffset, length, target, targetOffset, immediate).awaitCompletion()

/** RDMA READ of [length] bytes at [sourceOffset] of the peer's memory, returned as a copy. */
public suspend fun RdmaConnection.readAwait(
    source: RemoteBuffer = remoteBuffer(), sourceOffset: Long = 0, length: Int,
): ByteArray = read(source, sourceOffset, length).awaitBytes()

/** RDMA READ of [length] bytes at [sourceOffset] of [source] into [destination] at [destinationOffset], without copying. */
public suspend fun RdmaConnection.readAwait(
    source: RemoteBuffer, sourceOffset: Long, length: Int, destination: RegisteredBuffer, destinationOffset: Long = 0,
): WorkCompletion = read(source, sourceOffset, length, destination, destinationOffset).awaitCompletion()

/** SENDs the [gather] list's bytes, in order, as one message. */
public suspend fun RdmaConnection.sendAwait(gather: List<ScatterGatherElement>): WorkCompletion = send(gather).awaitCompletion()

/** RDMA WRITE of the [gather] list's bytes, in order, to one contiguous range of [target] from [targetOffset]. */
public suspend fun RdmaConnection.writeAwait(
    gather: List<ScatterGatherElement>, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = write(gather, target, targetOffset).awaitCompletion()

/** SEND_WITH_IMM of the [gather] list's bytes, in order, as one message; the receiver sees [immediate] too. */
public suspend fun RdmaConnection.sendWithImmediateAwait(gather: List<ScatterGatherElement>, immediate: Int): WorkCompletion =
    sendWithImmediate(gather, immediate).awaitCompletion()

/** RDMA WRITE_WITH_IMM of the [gather] list's bytes, in order, to [target] from [targetOffset]; the peer's next receive completes with [immediate]. */
public suspend fun RdmaConnection.writeWithImmediateAwait(
    gather: List<ScatterGatherElement>, immediate: Int, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = writeWithImmediate(gather, target, targetOffset, immediate).awaitCompletion()

/** RDMA READ of one contiguous range of [source] from [sourceOffset], scattered in order over [scatter]. */
public suspend fun RdmaConnection.readAwait(
    scatter: List<ScatterGatherElement>, source: RemoteBuffer = remoteBuffer(), sourceOffset: Long = 0,
): WorkCompletion = read(source, sourceOffset, scatter).awaitCompletion()

/** Atomic compare-and-swap of the 8-byte word at [offset] of [target]; returns the word's previous value. */
public suspend fun RdmaConnection.compareAndSwapAwait(
    target: RemoteBuffer = remoteBuffer(), offset: Long, expected: Long, swap: Long,
): Long = compareAndSwap(target, offset, expected, swap).awaitLong()

/** Atomic fetch-and-add on the 8-byte word at [offset] of [target]; returns the word's previous value. */
public suspend fun RdmaConnection.fetchAndAddAwait(
    target: RemoteBuffer = remoteBuffer(), offset: Long, add: Long,
): Long = fetchAndAdd(target, offset, add).awaitLong()

/**
 * The next received message (a SEND, or the notification of a WRITE_WITH_IMM). Release it (or
 * [use] it) to post its buffer again. A message that arrives while the coroutine is being
 * cancelled is released here, so the peer does not lose a receive credit.
 */
public suspend fun RdmaConnection.receiveAwait(): ReceivedMessage =
    receive().awaitReceived()

/** A buffer from the pool, waiting for one to come back when all are in use. Release it (or [use] it). */
public suspend fun BufferPool.acquireAwait(): RegisteredBuffer =
    acquire().awaitAcquired()

/** Runs [block] with this message and releases it afterwards (re-posting its receive buffer). */
public inline fun <R> ReceivedMessage.use(block: (ReceivedMessage) -> R): R {
    try {
        return block(this)
    } finally {
        release()
    }
}

/** Runs [block] with this buffer and drops the caller's reference afterwards (in-flight work requests keep their own). */
public inline fun <R> RegisteredBuffer.use(block: (RegisteredBuffer) -> R): R {
    try {
        return block(this)
    } finally {
        release()
    }
}
