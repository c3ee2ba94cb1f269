package io.jrdma.kotlin

import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.runTest
import kotlinx.coroutines.yield
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** How every suspending `use { }` ends: the close always runs, and the block's own failure is what the caller sees. */
class CloseAfterTest {
    private class Failure(message: String) : RuntimeException(message)

    /** A resource whose close is [close], used the way every `use { }` does ([useThen]). */
    private suspend inline fun <R> useWith(noinline close: suspend () -> Unit, block: () -> R): R = Unit.useThen({ block() }, close)

    @Test
    fun `a failing block keeps its exception and the failing close is added as suppressed`() = runTest {
        val thrown = assertThrows<Failure> {
            useWith({ throw Failure("close failed") }) { throw Failure("block failed") }
        }
        assertEquals("block failed", thrown.message)
        assertEquals(listOf("close failed"), thrown.suppressed.map { it.message })
    }

    @Test
    fun `without a block failure a failing close is thrown`() = runTest {
        val thrown = assertThrows<Failure> { useWith({ throw Failure("close failed") }) { "done" } }
        assertEquals("close failed", thrown.message)
    }

    @Test
    fun `a successful block returns its value after the close`() = runTest {
        var closed = 0
        assertEquals("value", useWith({ closed++ }) { "value" })
        assertEquals(1, closed)
    }

    @Test
    fun `a cancelled block still closes, and the close may suspend`() = runTest {
        var closed = false
        val job = launch(start = CoroutineStart.UNDISPATCHED) {
            useWith({
                yield()  // suspends in a cancelled coroutine: NonCancellable lets it
                closed = true
            }) { awaitCancellation() }
        }
        job.cancelAndJoin()
        assertTrue(closed)
    }

    @Test
    fun `a close that fails with the block's own exception is not added to itself`() = runTest {
        val same = Failure("same")
        val thrown = assertThrows<Failure> { useWith({ throw same }) { throw same } }
        assertSame(same, thrown)
        assertEquals(0, thrown.suppressed.size)
    }
}
