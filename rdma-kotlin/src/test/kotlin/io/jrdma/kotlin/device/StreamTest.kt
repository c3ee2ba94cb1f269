package io.jrdma.kotlin.device

import io.jrdma.kotlin.awaitReceive
import io.jrdma.kotlin.awaitSendByteArray
import io.jrdma.kotlin.use
import java.nio.ByteBuffer
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withContext
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test

/** A Flow sent across the wire: the collector suspends while the peer has no receive for the next message. */
@Tag("device")
class StreamTest {
    @Test
    fun `a flow is sent in order and its producer waits for the consumer on the other host`() = runTest(timeout = 120.seconds) {
        withContext(Dispatchers.Default) {
            withLabPair(configure = { it.queueDepth(32, 8) }) { p ->
                val window = p.accepted.config().receiveQueueDepth()
                val emitted = AtomicInteger()
                val producer = async {
                    p.client.awaitSendByteArray(flow {
                        for (i in 0 until 200) {
                            emit(ByteBuffer.allocate(8).putInt(i).putInt(i * 3).array())
                            emitted.incrementAndGet()
                        }
                    })
                }
                delay(1_000)  // nobody receives yet: the producer got as far as the peer's receives allow, and no further
                assertTrue(emitted.get() <= window + 1, "emitted ${emitted.get()} with a window of $window")
                for (i in 0 until 200) {
                    p.accepted.awaitReceive().use { m ->
                        val b = ByteBuffer.wrap(m.bytes())
                        assertEquals(i, b.getInt(), "in order")
                        assertEquals(i * 3, b.getInt())
                    }
                }
                producer.await()
                assertEquals(200, emitted.get())
            }
        }
    }

    @Test
    fun `messages larger than the receive buffers go through the same suspend functions, whole and in order`() = runTest(timeout = 180.seconds) {
        withContext(Dispatchers.Default) {
            withLabPair(configure = { it.queueDepth(16, 8) }) { p ->
                val buffer = p.accepted.config().bufferSize()
                val sizes = listOf(8, buffer + 1, 100, 64 shl 10, buffer, 256 shl 10, 9, 3 * buffer + 7)
                fun message(i: Int): ByteArray {
                    val b = ByteBuffer.allocate(sizes[i]).putInt(i).putInt(sizes[i])
                    while (b.hasRemaining()) b.put((i * 31 + b.position()).toByte())
                    return b.array()
                }
                val producer = async { p.client.awaitSendByteArray(flow { for (i in sizes.indices) emit(message(i)) }) }
                for (i in sizes.indices) {
                    p.accepted.awaitReceive().use { m ->
                        assertEquals(sizes[i], m.length(), "message $i as one message")
                        assertTrue(message(i).contentEquals(m.bytes()), "message $i whole, in order")
                    }
                }
                producer.await()
            }
        }
    }
}
