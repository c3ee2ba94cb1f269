package io.jrdma.kotlin

import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.reactor.asCoroutineContext
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.withContext
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import io.jrdma.ffm.WcOpcode
import io.jrdma.ffm.WcStatus
import io.jrdma.reactive.WorkCompletion
import reactor.core.publisher.Mono
import reactor.util.context.Context

/** The operations' bridge behaves as kotlinx's awaitSingle: value, error, empty, cancellation, Reactor context. */
class AwaitOneTest {
    @Test
    fun `the value is returned`() = runTest {
        assertEquals("done", Mono.just("done").awaitOne())
    }

    @Test
    fun `an error is thrown`() = runTest {
        assertThrows<IllegalStateException> { Mono.error<String>(IllegalStateException("failed")).awaitOne() }
    }

    @Test
    fun `an empty Mono is an error, not a null`() = runTest {
        assertThrows<NoSuchElementException> { Mono.empty<String>().awaitOne() }
    }

    @Test
    fun `cancelling the coroutine cancels the subscription, and a later signal goes nowhere`() = runTest {
        val cancelled = AtomicInteger()
        val waiting = async(start = CoroutineStart.UNDISPATCHED) { Mono.never<String>().doOnCancel { cancelled.incrementAndGet() }.awaitOne() }
        waiting.cancelAndJoin()
        assertEquals(1, cancelled.get())
        assertTrue(waiting.isCancelled)
    }

    @Test
    fun `a Reactor context in the coroutine context reaches the Mono`() = runTest {
        val seen = withContext(Context.of("tenant", "a").asCoroutineContext()) {
            Mono.deferContextual { Mono.just(it.get<String>("tenant")) }.awaitOne()
        }
        assertEquals("a", seen)
    }

    @Test
    fun `the operations' form returns the completion and cancels like the generic one`() = runTest {
        val wc = WorkCompletion(7, WcStatus.IBV_WC_SUCCESS, WcOpcode.RDMA_WRITE, 64, false, 0, 0x11, 0)
        assertEquals(wc, Mono.just(wc).awaitCompletion())
        val cancelled = AtomicInteger()
        val waiting = async(start = CoroutineStart.UNDISPATCHED) { Mono.never<WorkCompletion>().doOnCancel { cancelled.incrementAndGet() }.awaitCompletion() }
        waiting.cancelAndJoin()
        assertEquals(1, cancelled.get())
    }
}
