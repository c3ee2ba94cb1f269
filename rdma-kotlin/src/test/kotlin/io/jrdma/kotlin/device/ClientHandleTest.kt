package io.jrdma.kotlin.device

import io.jrdma.kotlin.awaitOnDispose
import io.jrdma.kotlin.awaitReceive
import io.jrdma.kotlin.awaitSend
import io.jrdma.kotlin.coHandle
import io.jrdma.kotlin.use
import java.util.concurrent.CopyOnWriteArrayList
import java.util.logging.Handler
import java.util.logging.LogRecord
import java.util.logging.Logger
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test

/** `RdmaClient.coHandle { }`, the suspend twin of `RdmaClient.handle`: the block ends, the connection goes; the connection goes, the block is cancelled. */
@Tag("device")
class ClientHandleTest {
    @Test
    fun `a block that returns disposes its connection, and the server sees it go`() = runTest(timeout = 90.seconds) {
        val handlerThread = CompletableDeferred<Long>()
        withLabPair(configure = {
            it.coHandle { c ->
                handlerThread.complete(Thread.currentThread().threadId())
                val greeting = c.awaitReceive().use { m -> m.text() }
                c.awaitSend("goodbye, $greeting")
            }
        }) { p ->
            p.accepted.awaitSend("hello")
            assertEquals("goodbye, hello", p.accepted.awaitReceive().use { it.text() })
            p.client.awaitOnDispose()
            p.accepted.awaitOnDispose()  // the client disposed its end when its block returned
            assertEquals(p.client.loopThreadId(), handlerThread.await(), "started on the connection's loop")
        }
    }

    @Test
    fun `a failing block disposes its connection and is logged once`() = runTest(timeout = 90.seconds) {
        val bug = IllegalStateException("a suspend client handler bug")
        val logged = CopyOnWriteArrayList<LogRecord>()
        val capture = object : Handler() {
            override fun publish(record: LogRecord) {
                logged.add(record)
            }

            override fun flush() {}
            override fun close() {}
        }
        val log = Logger.getLogger("io.jrdma.reactive.client")  // Reactor's fallback in the tests' JVMs
        log.addHandler(capture)
        try {
            withLabPair(configure = {
                it.coHandle { c ->
                    c.awaitReceive().use { }
                    throw bug
                }
            }) { p ->
                p.accepted.awaitSend("fail now")
                p.client.awaitOnDispose()
                p.accepted.awaitOnDispose()
                val failures = logged.filter { it.thrown != null }
                assertEquals(1, failures.size, "logged once: ${failures.map { it.message }}")
                assertSame(bug, failures.single().thrown)
            }
        } finally {
            log.removeHandler(capture)
        }
    }

    @Test
    fun `disposing the connection cancels the block`() = runTest(timeout = 90.seconds) {
        val started = CompletableDeferred<Unit>()
        val cancelled = CompletableDeferred<Unit>()
        withLabPair(configure = {
            it.coHandle {
                started.complete(Unit)
                try {
                    awaitCancellation()
                } finally {
                    cancelled.complete(Unit)
                }
            }
        }) { p ->
            started.await()
            p.client.dispose()
            p.client.awaitOnDispose()
            cancelled.await()
            p.accepted.awaitOnDispose()
        }
    }
}
