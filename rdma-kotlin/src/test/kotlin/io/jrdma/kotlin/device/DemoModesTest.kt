package io.jrdma.kotlin.device

import io.jrdma.kotlin.awaitAcquire
import io.jrdma.kotlin.awaitCompareAndSwap
import io.jrdma.kotlin.awaitFetchAndAdd
import io.jrdma.kotlin.awaitRead
import io.jrdma.kotlin.awaitReceive
import io.jrdma.kotlin.awaitSend
import io.jrdma.kotlin.awaitSendGather
import io.jrdma.kotlin.awaitSendWithImmediate
import io.jrdma.kotlin.awaitWrite
import io.jrdma.kotlin.awaitWriteWithImmediate
import io.jrdma.kotlin.completionsFlow
import io.jrdma.kotlin.receivesFlow
import io.jrdma.kotlin.use
import io.jrdma.ffm.WcOpcode
import io.jrdma.reactive.memory.RemoteRangeException
import io.jrdma.reactive.memory.ScatterGatherElement
import io.jrdma.reactive.Transport
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.flow.flowOf
import kotlinx.coroutines.flow.map
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.junit.jupiter.params.ParameterizedTest
import org.junit.jupiter.params.provider.EnumSource

/**
 * The suspend API doing what each demo mode of the `rdma` command does, between the lab's two hosts.
 *
 * runTest: its timeout is real time, and these tests wait only on real completions (no delay, no
 * withTimeout, whose virtual time would fire at once while a NIC is working).
 */
@Tag("device")
class DemoModesTest {
    private val timeout = 60.seconds

    @ParameterizedTest
    @EnumSource(Transport::class)
    fun `send mode - each line arrives and is acknowledged`(transport: Transport) = runTest(timeout = timeout) {
        withLabPair(transport) { p ->
            val server = launch {
                p.accepted.receivesFlow().take(2).collect { m ->
                    m.use { p.accepted.awaitSend("ack ${it.text()}") }
                }
            }
            for (line in listOf("hello", "second line")) {
                p.client.awaitSend(line)
                assertEquals("ack $line", p.client.awaitReceive().use { it.text() })
            }
            server.join()
        }
    }

    @Test
    fun `write mode - the immediate tells the server how many bytes landed in its memory`() = runTest(timeout = timeout) {
        withLabPair { p ->
            val line = "written straight into server memory".toByteArray()
            p.client.awaitWriteWithImmediate(line, immediate = line.size)
            p.accepted.awaitReceive().use { m ->
                assertTrue(m.hasImmediate())
                assertEquals(line.size, m.immediate())
                assertEquals(String(line), p.accepted.exposedBuffer().string(0, m.immediate()))
            }
        }
    }

    @Test
    fun `write-imm mode - the RECV completion carries imm_data and byte_len`() = runTest(timeout = timeout) {
        withLabPair { p ->
            // UNDISPATCHED: subscribed before the write, or the completion could pass unseen
            val seen = async(start = CoroutineStart.UNDISPATCHED) { p.accepted.completionsFlow().take(1).toList().single() }
            val data = "imm".toByteArray()
            p.client.awaitWriteWithImmediate(data, immediate = 0x0BADCAFE, targetOffset = 128)
            val wc = seen.await()
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, wc.opcode())
            assertEquals(0x0BADCAFE, wc.immediate())
            p.accepted.awaitReceive().use { m ->
                assertEquals(0x0BADCAFE, m.immediate())
                assertEquals(data.size, m.length(), "byte_len of the RECV_RDMA_WITH_IMM completion")
                assertEquals("imm", p.accepted.exposedBuffer().string(128, m.length()))
            }
        }
    }

    @Test
    fun `read mode - exactly the requested range comes back and out-of-range is refused before posting`() =
        runTest(timeout = timeout) {
            withLabPair { p ->
                val text = "The quick brown fox jumps over the lazy dog".toByteArray()
                p.accepted.exposedBuffer().put(0, text)
                val remote = p.client.remoteBuffer().slice(0, text.size.toLong())
                assertEquals("quick", String(p.client.awaitRead(remote, 4, 5)))
                assertThrows<RemoteRangeException> { p.client.awaitRead(remote, 40, 10) }
                // the refusal posted nothing, so the connection is still usable
                assertEquals("dog", String(p.client.awaitRead(remote, 40, 3)))
            }
        }

    @Test
    fun `verify mode - bytes written then read back into a second buffer are identical`() = runTest(timeout = timeout) {
        withLabPair { p ->
            val pool = p.client.buffers()
            val expected = "verify me".toByteArray()
            pool.awaitAcquire().use { written ->
                pool.awaitAcquire().use { readBack ->
                    written.put(0, expected)
                    p.client.awaitWrite(written, 0, expected.size, targetOffset = 64)
                    p.client.awaitRead(p.client.remoteBuffer(), 64, expected.size, readBack)
                    assertArrayEquals(expected, readBack.bytes(0, expected.size))
                }
            }
            assertEquals(pool.capacity(), pool.available(), "every buffer back in the pool")
        }
    }

    @Test
    fun `scatter-gather - a header and a body go out as one message, with or without an immediate, and read back into two buffers`() = runTest(timeout = timeout) {
        withLabPair { p ->
            val pool = p.client.buffers()
            pool.awaitAcquire().use { header ->
                pool.awaitAcquire().use { body ->
                    header.put(0, "HDR:".toByteArray())
                    body.put(0, "payload".toByteArray())
                    val gather = listOf(ScatterGatherElement.of(header, 0, 4), ScatterGatherElement.of(body, 0, 7))
                    p.client.awaitSend(gather)
                    p.accepted.awaitReceive().use { assertEquals("HDR:payload", it.text()) }
                    // a stream of gather lists: each element's references pass to the stream, hence the retains
                    p.client.awaitSendGather(flowOf(listOf(ScatterGatherElement.of(header.retain(), 0, 4), ScatterGatherElement.of(body.retain(), 0, 7))))
                    p.accepted.awaitReceive().use { assertEquals("HDR:payload", it.text()) }
                    p.client.awaitWrite(gather, targetOffset = 512)
                    p.client.awaitRead(listOf(ScatterGatherElement.of(body, 100, 4), ScatterGatherElement.of(header, 100, 7)), sourceOffset = 512)
                    assertEquals("HDR:", body.string(100, 4))
                    assertEquals("payload", header.string(100, 7))
                    // and with an immediate: one receive completion carries it
                    p.client.awaitSendWithImmediate(gather, immediate = 7)
                    p.accepted.awaitReceive().use {
                        assertEquals("HDR:payload", it.text())
                        assertEquals(7, it.immediate())
                    }
                    p.client.awaitWriteWithImmediate(gather, immediate = 11, targetOffset = 1024)
                    p.accepted.awaitReceive().use { assertEquals(11, it.immediate()) }
                    assertEquals("HDR:payload", p.accepted.exposedBuffer().string(1024, 11))
                }
            }
        }
    }

    @Test
    fun `atomics - fetch-and-add and compare-and-swap return the previous word`() = runTest(timeout = timeout) {
        withLabPair { p ->
            assertEquals(0L, p.client.awaitFetchAndAdd(offset = 256, add = 5))
            assertEquals(5L, p.client.awaitCompareAndSwap(offset = 256, expected = 5, swap = 42))
            assertEquals(42L, p.client.awaitFetchAndAdd(offset = 256, add = 0))
        }
    }

    @Test
    fun `echo - a flow of received messages answered message by message`() = runTest(timeout = timeout) {
        withLabPair { p ->
            val echo = launch {
                p.accepted.receivesFlow().collect { m -> m.use { p.accepted.awaitSend(it.bytes()) } }
            }
            val replies = async { p.client.receivesFlow().take(3).map { m -> m.use { it.text() } }.toList() }
            listOf("one", "two", "three").forEach { p.client.awaitSend(it) }
            assertEquals(listOf("one", "two", "three"), replies.await())
            echo.cancel()
        }
    }
}
