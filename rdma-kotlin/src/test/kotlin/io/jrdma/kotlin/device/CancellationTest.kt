package io.jrdma.kotlin.device

import io.jrdma.kotlin.awaitAcquire
import io.jrdma.kotlin.awaitReceive
import io.jrdma.kotlin.awaitSend
import io.jrdma.kotlin.awaitWrite
import io.jrdma.kotlin.completionsFlow
import io.jrdma.kotlin.use
import io.jrdma.reactive.WorkCompletion
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.buffer
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeoutOrNull
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test

/**
 * Cancelling a coroutine cancels its RDMA operation with the reactive layer's memory guarantee:
 * a posted work request keeps its buffer until its completion is polled, whatever the coroutine did.
 *
 * To make "until its completion" observable, a collector of completionsFlow().buffer(0) takes one
 * completion and then holds it: with no demand left, the poller takes nothing more from the CQ,
 * so the cancelled write's completion waits in the CQ for as long as the test wants.
 */
@Tag("device")
class CancellationTest {
    @Test
    fun `a cancelled write keeps its buffer until the completion is polled`() = runTest(timeout = 90.seconds) {
        withLabPair(configure = { it.queueDepth(2, 4).buffers(4096, 4) }) { p ->
            val c = p.client
            val pool = c.buffers()
            val holding = CompletableDeferred<Unit>()
            val gate = CompletableDeferred<Unit>()
            val polled = AtomicInteger()
            val poller = launch(start = CoroutineStart.UNDISPATCHED) {
                c.completionsFlow().buffer(0).collect { _: WorkCompletion ->
                    polled.incrementAndGet()
                    holding.complete(Unit)
                    gate.await()
                }
            }
            c.awaitSend("first")                 // its completion is the one the collector holds
            p.accepted.awaitReceive().use { assertEquals("first", it.text()) }
            holding.await()

            val zeroCopy = pool.awaitAcquire()
            zeroCopy.put(0, ByteArray(4096) { 7 })
            assertEquals(1, zeroCopy.refCount())
            val write = launch { c.awaitWrite(zeroCopy, 0, 4096) }
            val copied = launch { c.awaitWrite(ByteArray(4096) { 9 }, targetOffset = 4096) }
            eventually("both writes posted") { c.availableSendCredits() == 0 }
            // a third write finds no credit: it waits in the queue, not on the NIC
            val neverPosted = launch { c.awaitWrite(ByteArray(16), targetOffset = 8192) }
            eventually("third write waiting for a credit") { c.postsWaitingForCredit() == 1 }

            write.cancelAndJoin()
            copied.cancelAndJoin()
            neverPosted.cancelAndJoin()
            assertTrue(write.isCancelled && copied.isCancelled && neverPosted.isCancelled)
            // the coroutines are gone, the NIC's work requests are not: both buffers stay taken
            assertEquals(2, zeroCopy.refCount(), "the test's reference and the posted WRITE's")
            assertTrue(pool.available() <= pool.capacity() - 2, "zeroCopy and the copy of the posted write are still taken")

            gate.complete(Unit)                  // demand again: the poller takes the two completions
            // a completion is taken (its buffers back) as it is emitted, and the collector counts it a moment later
            eventually("completions polled, buffers back") {
                zeroCopy.refCount() == 1 && pool.available() == pool.capacity() - 1 && polled.get() >= 3
            }
            zeroCopy.release()
            assertEquals(pool.capacity(), pool.available())
            assertEquals(3, polled.get(), "the send and the two posted writes; the cancelled waiting write was never posted")
            assertEquals(2, c.availableSendCredits())
            poller.cancel()

            // the data of the cancelled zero-copy write did land: cancelling stops waiting, not the NIC
            assertEquals(7, p.accepted.exposedBuffer().segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 4095))
        }
    }

    @Test
    fun `a cancelled receive leaves the message for the next receiver`() = runTest(timeout = 60.seconds) {
        withLabPair { p ->
            val waiting = launch(start = CoroutineStart.UNDISPATCHED) { p.accepted.awaitReceive().release() }
            waiting.cancelAndJoin()
            p.client.awaitSend("after cancel")
            assertEquals("after cancel", p.accepted.awaitReceive().use { it.text() })
        }
    }

    /** Polls [condition] in real time (under runTest, delay and withTimeout are virtual and would not wait). */
    private suspend fun eventually(what: String, condition: () -> Boolean) {
        val met = withContext(Dispatchers.Default) {
            withTimeoutOrNull(20.seconds) { while (!condition()) delay(5) }
        }
        if (met == null) throw AssertionError("not true within 20 s: $what")
    }
}
