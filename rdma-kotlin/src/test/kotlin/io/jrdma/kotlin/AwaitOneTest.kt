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
}
