package io.jrdma.kotlin

import io.jrdma.reactive.memory.BufferPool
import io.jrdma.reactive.RdmaConnection
import io.jrdma.reactive.memory.ReceivedMessage
import io.jrdma.reactive.memory.RegisteredBuffer
import io.jrdma.reactive.memory.RemoteBuffer
import io.jrdma.reactive.memory.ScatterGatherElement
import io.jrdma.reactive.WorkCompletion

// Names in io.jrdma.kotlin, one rule, kotlinx.coroutines' and Spring's (docs/kotlin.md says why):
// - `awaitXxx()` subscribes to the Mono of the reactive `xxx()` and suspends until its value (or
//   its completion): awaitSend, awaitReceive, awaitAcquire, awaitOnDispose (onDispose()),
//   awaitCall, as kotlinx's `awaitSingle()` and Spring's `awaitBody()`/`awaitExchange()`. A bare
//   `send()` cannot be had: a member returning Mono shadows an extension of the same name.
//   `disposeLater()` is Reactor Netty's Mono of dispose, so its suspend form is `awaitDispose()`;
//   `RpcClient.connect(this)` is `awaitRpcConnect()`, since `awaitConnect()` is the client's own connect.
// - `xxxFlow()` is the Flow of the reactive `xxx()` (a Flux), as Spring's `bodyToFlow()`:
//   receivesFlow, completionsFlow, connectionsFlow.
// - a Java method taking a Publisher-returning handler gets a suspend twin with Spring's `co`
//   prefix (its `coRouter`), the plain name being the member's: `RpcServer.coRegister`, `RdmaClient.coHandle`.
// - `use { }` runs a block, then disposes (any RdmaDisposable, Lifecycle.kt) or releases its receiver, also on failure or cancellation.
// The names before this rule (`sendAwait`, ..., `registerSuspend`) stay as deprecated delegates at
// the end of each file, for the IDE's replacement.
//
// Each function here posts through the reactive layer and suspends until the work completion.
// Cancelling the coroutine cancels the Mono: an operation still waiting for a send credit is never
// posted, and a posted one keeps its buffer until its completion arrives, exactly as in rdma-reactive.

/** SENDs a copy of [bytes] into the peer's next posted receive. */
public suspend fun RdmaConnection.awaitSend(bytes: ByteArray): WorkCompletion = send(bytes).awaitCompletion()

/** SENDs [text] as UTF-8. */
public suspend fun RdmaConnection.awaitSend(text: String): WorkCompletion = send(text).awaitCompletion()

/** SENDs `[offset, offset + length)` of [buffer] without copying. */
public suspend fun RdmaConnection.awaitSend(
    buffer: RegisteredBuffer, offset: Long = 0, length: Int = Math.toIntExact(buffer.capacity() - offset),
): WorkCompletion = send(buffer, offset, length).awaitCompletion()

/** SEND_WITH_IMM of `[offset, offset + length)` of [buffer]; the receiver sees [immediate] too. */
public suspend fun RdmaConnection.awaitSendWithImmediate(
    buffer: RegisteredBuffer, offset: Long, length: Int, immediate: Int,
): WorkCompletion = sendWithImmediate(buffer, offset, length, immediate).awaitCompletion()

/** RDMA WRITE of a copy of [bytes] into [target] at [targetOffset]. */
public suspend fun RdmaConnection.awaitWrite(
    bytes: ByteArray, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = write(bytes, target, targetOffset).awaitCompletion()

/** RDMA WRITE of `[sourceOffset, sourceOffset + length)` of [source] into [target] at [targetOffset], without copying. */
public suspend fun RdmaConnection.awaitWrite(
    source: RegisteredBuffer, sourceOffset: Long, length: Int, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = write(source, sourceOffset, length, target, targetOffset).awaitCompletion()

/** RDMA WRITE_WITH_IMM of a copy of [bytes]: the data lands in [target] and the peer's next receive completes with [immediate]. */
public suspend fun RdmaConnection.awaitWriteWithImmediate(
    bytes: ByteArray, immediate: Int, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = writeWithImmediate(bytes, target, targetOffset, immediate).awaitCompletion()

/** RDMA WRITE_WITH_IMM of `[sourceOffset, sourceOffset + length)` of [source], without copying. */
public suspend fun RdmaConnection.awaitWriteWithImmediate(
    source: RegisteredBuffer, sourceOffset: Long, length: Int, immediate: Int,
    target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = writeWithImmediate(source, sourceOffset, length, target, targetOffset, immediate).awaitCompletion()

/** RDMA READ of [length] bytes at [sourceOffset] of the peer's memory, returned as a copy. */
public suspend fun RdmaConnection.awaitRead(
    source: RemoteBuffer = remoteBuffer(), sourceOffset: Long = 0, length: Int,
): ByteArray = read(source, sourceOffset, length).awaitBytes()

/** RDMA READ of [length] bytes at [sourceOffset] of [source] into [destination] at [destinationOffset], without copying. */
public suspend fun RdmaConnection.awaitRead(
    source: RemoteBuffer, sourceOffset: Long, length: Int, destination: RegisteredBuffer, destinationOffset: Long = 0,
): WorkCompletion = read(source, sourceOffset, length, destination, destinationOffset).awaitCompletion()

/** SENDs the [gather] list's bytes, in order, as one message. */
public suspend fun RdmaConnection.awaitSend(gather: List<ScatterGatherElement>): WorkCompletion = send(gather).awaitCompletion()

/** RDMA WRITE of the [gather] list's bytes, in order, to one contiguous range of [target] from [targetOffset]. */
public suspend fun RdmaConnection.awaitWrite(
    gather: List<ScatterGatherElement>, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = write(gather, target, targetOffset).awaitCompletion()

/** SEND_WITH_IMM of the [gather] list's bytes, in order, as one message; the receiver sees [immediate] too. */
public suspend fun RdmaConnection.awaitSendWithImmediate(gather: List<ScatterGatherElement>, immediate: Int): WorkCompletion =
    sendWithImmediate(gather, immediate).awaitCompletion()

/** RDMA WRITE_WITH_IMM of the [gather] list's bytes, in order, to [target] from [targetOffset]; the peer's next receive completes with [immediate]. */
public suspend fun RdmaConnection.awaitWriteWithImmediate(
    gather: List<ScatterGatherElement>, immediate: Int, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = writeWithImmediate(gather, target, targetOffset, immediate).awaitCompletion()

/** RDMA READ of one contiguous range of [source] from [sourceOffset], scattered in order over [scatter]. */
public suspend fun RdmaConnection.awaitRead(
    scatter: List<ScatterGatherElement>, source: RemoteBuffer = remoteBuffer(), sourceOffset: Long = 0,
): WorkCompletion = read(source, sourceOffset, scatter).awaitCompletion()

/** Atomic compare-and-swap of the 8-byte word at [offset] of [target]; returns the word's previous value. */
public suspend fun RdmaConnection.awaitCompareAndSwap(
    target: RemoteBuffer = remoteBuffer(), offset: Long, expected: Long, swap: Long,
): Long = compareAndSwap(target, offset, expected, swap).awaitLong()

/** Atomic fetch-and-add on the 8-byte word at [offset] of [target]; returns the word's previous value. */
public suspend fun RdmaConnection.awaitFetchAndAdd(
    target: RemoteBuffer = remoteBuffer(), offset: Long, add: Long,
): Long = fetchAndAdd(target, offset, add).awaitLong()

/**
 * Suspends until the 8-byte word at [offset] of [buffer] differs from [current] and returns its new
 * value: a one-sided wait, read by the connection's loop, with no receive posted
 * ([RdmaConnection.wordChange] has the rules per polling mode). Fails after the operation timeout;
 * cancelling the coroutine ends the wait.
 */
public suspend fun RdmaConnection.awaitWordChange(buffer: RegisteredBuffer = exposedBuffer(), offset: Long, current: Long): Long =
    wordChange(buffer, offset, current).awaitLong()

/** As [awaitWordChange], for the byte at [offset] of [buffer] ([RdmaConnection.byteChange]): returns its new value. */
public suspend fun RdmaConnection.awaitByteChange(buffer: RegisteredBuffer = exposedBuffer(), offset: Long, current: Byte): Byte =
    byteChange(buffer, offset, current).awaitByte()

/**
 * The next received message (a SEND, or the notification of a WRITE_WITH_IMM). Release it (or
 * [use] it) to post its buffer again. A message that arrives while the coroutine is being
 * cancelled is released here, so the peer does not lose a receive credit.
 */
public suspend fun RdmaConnection.awaitReceive(): ReceivedMessage =
    receive().awaitReceived()

/** A buffer from the pool, waiting for one to come back when all are in use. Release it (or [use] it). */
public suspend fun BufferPool.awaitAcquire(): RegisteredBuffer =
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

// ------------------------------------------------------------------------------ the names before the rule

/** The message of every deprecated name: the rule its replacement follows. */
internal const val RENAMED = "renamed after kotlinx.coroutines' and Spring's rule, awaitXxx() on the Mono of xxx() (docs/kotlin.md)"

@Deprecated(RENAMED, ReplaceWith("awaitSend(bytes)", "io.jrdma.kotlin.awaitSend"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.sendAwait(bytes: ByteArray): WorkCompletion = awaitSend(bytes)

@Deprecated(RENAMED, ReplaceWith("awaitSend(text)", "io.jrdma.kotlin.awaitSend"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.sendAwait(text: String): WorkCompletion = awaitSend(text)

@Deprecated(RENAMED, ReplaceWith("awaitSend(buffer, offset, length)", "io.jrdma.kotlin.awaitSend"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.sendAwait(
    buffer: RegisteredBuffer, offset: Long = 0, length: Int = Math.toIntExact(buffer.capacity() - offset),
): WorkCompletion = awaitSend(buffer, offset, length)

@Deprecated(RENAMED, ReplaceWith("awaitSendWithImmediate(buffer, offset, length, immediate)", "io.jrdma.kotlin.awaitSendWithImmediate"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.sendWithImmediateAwait(buffer: RegisteredBuffer, offset: Long, length: Int, immediate: Int): WorkCompletion =
    awaitSendWithImmediate(buffer, offset, length, immediate)

@Deprecated(RENAMED, ReplaceWith("awaitWrite(bytes, target, targetOffset)", "io.jrdma.kotlin.awaitWrite"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.writeAwait(bytes: ByteArray, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0): WorkCompletion =
    awaitWrite(bytes, target, targetOffset)

@Deprecated(RENAMED, ReplaceWith("awaitWrite(source, sourceOffset, length, target, targetOffset)", "io.jrdma.kotlin.awaitWrite"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.writeAwait(
    source: RegisteredBuffer, sourceOffset: Long, length: Int, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = awaitWrite(source, sourceOffset, length, target, targetOffset)

@Deprecated(RENAMED, ReplaceWith("awaitWriteWithImmediate(bytes, immediate, target, targetOffset)", "io.jrdma.kotlin.awaitWriteWithImmediate"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.writeWithImmediateAwait(
    bytes: ByteArray, immediate: Int, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = awaitWriteWithImmediate(bytes, immediate, target, targetOffset)

@Deprecated(RENAMED, ReplaceWith("awaitWriteWithImmediate(source, sourceOffset, length, immediate, target, targetOffset)",
    "io.jrdma.kotlin.awaitWriteWithImmediate"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.writeWithImmediateAwait(
    source: RegisteredBuffer, sourceOffset: Long, length: Int, immediate: Int, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = awaitWriteWithImmediate(source, sourceOffset, length, immediate, target, targetOffset)

@Deprecated(RENAMED, ReplaceWith("awaitRead(source, sourceOffset, length)", "io.jrdma.kotlin.awaitRead"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.readAwait(source: RemoteBuffer = remoteBuffer(), sourceOffset: Long = 0, length: Int): ByteArray =
    awaitRead(source, sourceOffset, length)

@Deprecated(RENAMED, ReplaceWith("awaitRead(source, sourceOffset, length, destination, destinationOffset)", "io.jrdma.kotlin.awaitRead"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.readAwait(
    source: RemoteBuffer, sourceOffset: Long, length: Int, destination: RegisteredBuffer, destinationOffset: Long = 0,
): WorkCompletion = awaitRead(source, sourceOffset, length, destination, destinationOffset)

@Deprecated(RENAMED, ReplaceWith("awaitSend(gather)", "io.jrdma.kotlin.awaitSend"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.sendAwait(gather: List<ScatterGatherElement>): WorkCompletion = awaitSend(gather)

@Deprecated(RENAMED, ReplaceWith("awaitWrite(gather, target, targetOffset)", "io.jrdma.kotlin.awaitWrite"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.writeAwait(
    gather: List<ScatterGatherElement>, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = awaitWrite(gather, target, targetOffset)

@Deprecated(RENAMED, ReplaceWith("awaitSendWithImmediate(gather, immediate)", "io.jrdma.kotlin.awaitSendWithImmediate"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.sendWithImmediateAwait(gather: List<ScatterGatherElement>, immediate: Int): WorkCompletion =
    awaitSendWithImmediate(gather, immediate)

@Deprecated(RENAMED, ReplaceWith("awaitWriteWithImmediate(gather, immediate, target, targetOffset)", "io.jrdma.kotlin.awaitWriteWithImmediate"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.writeWithImmediateAwait(
    gather: List<ScatterGatherElement>, immediate: Int, target: RemoteBuffer = remoteBuffer(), targetOffset: Long = 0,
): WorkCompletion = awaitWriteWithImmediate(gather, immediate, target, targetOffset)

@Deprecated(RENAMED, ReplaceWith("awaitRead(scatter, source, sourceOffset)", "io.jrdma.kotlin.awaitRead"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.readAwait(
    scatter: List<ScatterGatherElement>, source: RemoteBuffer = remoteBuffer(), sourceOffset: Long = 0,
): WorkCompletion = awaitRead(scatter, source, sourceOffset)

@Deprecated(RENAMED, ReplaceWith("awaitCompareAndSwap(target, offset, expected, swap)", "io.jrdma.kotlin.awaitCompareAndSwap"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.compareAndSwapAwait(target: RemoteBuffer = remoteBuffer(), offset: Long, expected: Long, swap: Long): Long =
    awaitCompareAndSwap(target, offset, expected, swap)

@Deprecated(RENAMED, ReplaceWith("awaitFetchAndAdd(target, offset, add)", "io.jrdma.kotlin.awaitFetchAndAdd"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.fetchAndAddAwait(target: RemoteBuffer = remoteBuffer(), offset: Long, add: Long): Long =
    awaitFetchAndAdd(target, offset, add)

@Deprecated(RENAMED, ReplaceWith("awaitReceive()", "io.jrdma.kotlin.awaitReceive"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.receiveAwait(): ReceivedMessage = awaitReceive()

@Deprecated(RENAMED, ReplaceWith("awaitAcquire()", "io.jrdma.kotlin.awaitAcquire"), DeprecationLevel.WARNING)
public suspend fun BufferPool.acquireAwait(): RegisteredBuffer = awaitAcquire()
