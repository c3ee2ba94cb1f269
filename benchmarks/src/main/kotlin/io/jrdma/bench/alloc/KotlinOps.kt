package io.jrdma.bench.alloc

import io.jrdma.kotlin.writeAwait
import io.jrdma.reactive.RdmaConnection
import io.jrdma.reactive.memory.RegisteredBuffer
import io.jrdma.reactive.memory.RemoteBuffer
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking

/** The Kotlin rows of [AllocBench]: [inFlight] coroutines, each calling `writeAwait` in turn until [ops] are done. */
object KotlinOps {
    @JvmStatic
    fun writeAwait(connection: RdmaConnection, source: RegisteredBuffer, remote: RemoteBuffer, size: Int, ops: Int, inFlight: Int) {
        val next = AtomicInteger()
        runBlocking {
            repeat(inFlight) {
                launch {
                    while (true) {
                        val i = next.getAndIncrement()
                        if (i >= ops) break
                        connection.writeAwait(source, 0, size, remote, (i % 64).toLong() * size)
                    }
                }
            }
        }
    }
}
