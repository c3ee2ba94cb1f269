package io.jrdma.kotlin

import io.jrdma.reactive.RdmaClient
import io.jrdma.reactive.RdmaServer
import io.jrdma.reactive.memory.ScatterGatherElement
import kotlinx.coroutines.flow.emptyFlow

/**
 * Code written against the names before kotlinx's and Spring's rule, compiled with the tests and
 * never run: it must go on compiling (with deprecation warnings, suppressed here) until the old
 * names are removed, call shapes, defaults and named arguments included.
 */
@Suppress("DEPRECATION", "unused", "UNUSED_VARIABLE")
internal suspend fun oldNamesStillCompile(gather: List<ScatterGatherElement>) {
    val server = RdmaServer.create().bindAwait()
    val accepted = server.acceptAwait()
    val c = RdmaClient.create().connectAwait()
    c.sendAwait("text")
    c.sendAwait(byteArrayOf(1))
    c.sendAwait(c.buffers().acquireAwait())
    c.sendAwait(gather)
    c.sendAwait(emptyFlow<ScatterGatherElement>())
    c.sendByteArrayAwait(emptyFlow())
    c.sendWithImmediateAwait(gather, immediate = 1)
    c.writeAwait(byteArrayOf(1), targetOffset = 8)
    c.writeWithImmediateAwait("data".toByteArray(), immediate = 4)
    val bytes = c.readAwait(sourceOffset = 0, length = 4)
    c.readAwait(gather)
    val swapped = c.compareAndSwapAwait(offset = 0, expected = 0, swap = 1)
    val previous = c.fetchAndAddAwait(offset = 64, add = 1)
    accepted.receiveAwait().release()
    c.onCloseAwait()
    c.closeAwait()
    server.disposeAwait()

    val rpcServer = RdmaServer.create().rpc().registerSuspend("echo") { it.bytes() }.bindAwait()
    val rpc = RdmaClient.create().rpcConnectAwait()
    rpc.callAwait("echo", "text")
    rpc.callAwait("echo", byteArrayOf(1))
    rpc.closeAwait()
    rpcServer.disposeAwait()
}
