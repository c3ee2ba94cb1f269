package io.jrdma.kotlin.device

import io.jrdma.ffm.Access
import io.jrdma.interop.CPeer
import io.jrdma.interop.CPeerResult
import io.jrdma.kotlin.awaitAccept
import io.jrdma.kotlin.awaitBind
import io.jrdma.kotlin.awaitDispose
import io.jrdma.kotlin.awaitConnect
import io.jrdma.kotlin.awaitRead
import io.jrdma.kotlin.awaitReceive
import io.jrdma.kotlin.awaitWrite
import io.jrdma.kotlin.use
import io.jrdma.reactive.AcceptDecision
import io.jrdma.reactive.RdmaClient
import io.jrdma.reactive.RdmaServer
import io.jrdma.reactive.memory.RemoteBuffer
import java.time.Duration
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withContext
import org.junit.jupiter.api.Assertions.assertArrayEquals
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test

/**
 * The suspend API against the C peers of the `c-peers` module (their wire protocols are in
 * docs/c-interop.md): a coroutine client of a C server, and a coroutine server of a C client.
 * The peers are blocking processes, so they are started and awaited on Dispatchers.IO.
 */
@Tag("device")
class CInteropTest {
    private val wait: Duration = Duration.ofSeconds(45)
    private val peerTimeout = "20"

    private fun CPeerResult.requireLine(regex: String) =
        assertTrue(Regex(regex, RegexOption.MULTILINE).containsMatchIn(output()), "no line matching \"$regex\" in:\n${output()}")

    @Test
    fun aCoroutineWritesAndReadsBackWhatACServerAdvertises() = runTest(timeout = 120.seconds) {
        val server = withContext(Dispatchers.IO) {
            CPeer.compile("cm_rw_server").start("-t", peerTimeout, LabPair.SERVER_IP, "0")
        }
        server.use {
            val port = withContext(Dispatchers.IO) { server.awaitListeningPort(wait) }
            val c = RdmaClient.create().host(LabPair.SERVER_IP).port(port).localAddress(LabPair.CLIENT_IP)
                .rawPrivateData(ByteArray(0)).awaitConnect()
            val remote = RemoteBuffer.fromBigEndian(c.peerPrivateData(), 0)
            val text = "written by a coroutine".toByteArray(Charsets.US_ASCII)
            c.awaitWrite(text, remote, 0)
            assertArrayEquals(text, c.awaitRead(remote, 0, text.size))
            c.awaitDispose()
            val done = withContext(Dispatchers.IO) { server.awaitExit(wait).requireSuccess() }
            done.requireLine("memory holds ${text.size} bytes: written by a coroutine$")
        }
    }

    @Test
    fun aCClientNotifiesACoroutineServer() = runTest(timeout = 120.seconds) {
        val server = RdmaServer.create().host(LabPair.SERVER_IP).port(0).exposeBuffer(4096, Access.REMOTE_WRITE)
            .acceptRaw { request ->
                val region = request.exposed().orElseThrow()
                AcceptDecision.accept(region.toRemote(0, region.capacity()).toBigEndian())
            }
            .awaitBind()
        try {
            val accepted = async { server.awaitAccept() }
            val client = withContext(Dispatchers.IO) {
                CPeer.compile("cm_imm_client").run(
                    wait, "-t", peerTimeout, "-b", LabPair.CLIENT_IP, LabPair.SERVER_IP,
                    server.address().port.toString(), "alpha", "beta",
                ).requireSuccess()
            }
            client.requireLine("message 2: WRITE_WITH_IMM of 4 bytes at offset 5, imm_data 2: beta")
            val c = accepted.await()
            // the client wrote and disconnected: each notification, and the memory it points into, waits for us
            var offset = 0L
            for ((k, text) in listOf(1 to "alpha", 2 to "beta")) {
                c.awaitReceive().use { m ->
                    assertEquals(k, m.immediate(), "the immediate in host order")
                    assertEquals(text, c.exposedBuffer().string(offset, m.length()))
                    offset += m.length()
                }
            }
        } finally {
            server.awaitDispose()
        }
    }
}
