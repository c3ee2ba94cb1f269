package io.jrdma.bench.alloc

import io.jrdma.kotlin.awaitSend
import io.jrdma.kotlin.awaitWrite
import io.jrdma.kotlin.receivesFlow
import io.jrdma.reactive.RdmaConnection
import io.jrdma.reactive.WorkCompletion
import io.jrdma.reactive.memory.RegisteredBuffer
import io.jrdma.reactive.memory.RemoteBuffer
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CoroutineDispatcher
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.Job
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext

/**
 * The Kotlin rows of [AllocBench]: [inFlight] coroutines, each calling `awaitWrite` (`awaitSend`) in
 * turn until [ops] are done. They run in [Dispatchers.Unconfined], as the lab bench's Kotlin layer
 * does: each resumes on the loop thread that completed its operation, so a row counts the suspend
 * API, not a dispatcher's queue and thread hop (runBlocking's own event loop would add both);
 * `kotlin-write-default` runs them in [Dispatchers.Default] instead ([awaitWriteOnDefault]).
 */
object KotlinOps {
    @JvmStatic
    fun awaitWrite(connection: RdmaConnection, source: RegisteredBuffer, remote: RemoteBuffer, size: Int, ops: Int, inFlight: Int) =
        window(ops, inFlight, Dispatchers.Unconfined) { i -> connection.awaitWrite(source, 0, size, remote, (i % 64).toLong() * size) }

    /**
     * [awaitWrite] with the coroutines in [Dispatchers.Default], as a service would run them: each
     * resumes on a worker, so its next write is posted off the loop thread (at once, when a send slot
     * is free); the row includes the dispatcher's own objects.
     */
    @JvmStatic
    fun awaitWriteOnDefault(connection: RdmaConnection, source: RegisteredBuffer, remote: RemoteBuffer, size: Int, ops: Int, inFlight: Int) =
        window(ops, inFlight, Dispatchers.Default) { i -> connection.awaitWrite(source, 0, size, remote, (i % 64).toLong() * size) }

    @JvmStatic
    fun awaitSend(connection: RdmaConnection, source: RegisteredBuffer, size: Int, ops: Int, inFlight: Int) =
        window(ops, inFlight, Dispatchers.Unconfined) { connection.awaitSend(source, 0, size) }

    /** The server's side of `kotlin-send`: `receivesFlow()` releasing every message, until the returned job is cancelled. */
    @JvmStatic
    fun releaseReceives(connection: RdmaConnection): Job =
        CoroutineScope(Dispatchers.Unconfined).launch(start = CoroutineStart.UNDISPATCHED) {
            connection.receivesFlow().collect { it.release() }
        }

    /** Inline, so [op] runs in each coroutine's frame: a suspend lambda would add its own objects per operation. */
    private inline fun window(ops: Int, inFlight: Int, dispatcher: CoroutineDispatcher, crossinline op: suspend (Int) -> WorkCompletion) {
        val next = AtomicInteger()
        runBlocking {
            withContext(dispatcher) {
                repeat(inFlight) {
                    launch {
                        while (true) {
                            val i = next.getAndIncrement()
                            if (i >= ops) break
                            op(i)
                        }
                    }
                }
            }
        }
    }
}
