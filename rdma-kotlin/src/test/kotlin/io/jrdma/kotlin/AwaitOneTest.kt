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
import io.jrdma.reactive.WorkRequestSubscription
import reactor.core.CoreSubscriber
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

    @Test
    fun `a work request posted within subscribe is not cancelled with the coroutine, which still resumes at once`() = runTest {
        val request = FakeWorkRequest(withdrawable = false)
        val waiting = async(start = CoroutineStart.UNDISPATCHED) { request.awaitCompletion() }
        waiting.cancelAndJoin()
        assertTrue(waiting.isCancelled)
        assertEquals(0, request.cancels.get(), "a posted work request runs to its completion: no cancel handler was installed")
        request.complete()  // its completion, later, goes nowhere
        assertEquals(1, request.requests.get())
    }

    @Test
    fun `a work request still waiting to be posted is withdrawn when the coroutine is cancelled`() = runTest {
        val request = FakeWorkRequest(withdrawable = true)
        val waiting = async(start = CoroutineStart.UNDISPATCHED) { request.awaitCompletion() }
        waiting.cancelAndJoin()
        assertTrue(waiting.isCancelled)
        assertEquals(1, request.cancels.get())
    }

    @Test
    fun `a coroutine cancelled before a late onSubscribe cancels the subscription that comes`() = runTest {
        val late = LateMono()
        val waiting = async(start = CoroutineStart.UNDISPATCHED) { late.awaitCompletion() }
        waiting.cancelAndJoin()
        val request = FakeWorkRequest(withdrawable = true)
        late.subscriber!!.onSubscribe(request)
        assertEquals(1, request.cancels.get())
        assertEquals(0, request.requests.get(), "nothing requested for a cancelled coroutine")
    }

    /** A work request's Mono as jrdma's posts behave: onSubscribe within subscribe, then posted (or not) before subscribe returns. */
    private class FakeWorkRequest(private val withdrawable: Boolean) : Mono<WorkCompletion>(), WorkRequestSubscription {
        val cancels = AtomicInteger()
        val requests = AtomicInteger()
        private var actual: CoreSubscriber<in WorkCompletion>? = null

        override fun subscribe(actual: CoreSubscriber<in WorkCompletion>) {
            this.actual = actual
            actual.onSubscribe(this)
        }

        override fun isWithdrawable() = withdrawable && cancels.get() == 0
        override fun request(n: Long) { requests.incrementAndGet() }
        override fun cancel() { cancels.incrementAndGet() }

        fun complete() {
            actual!!.onNext(WorkCompletion(1, WcStatus.IBV_WC_SUCCESS, WcOpcode.RDMA_WRITE, 8, false, 0, 0x11, 0))
            actual!!.onComplete()
        }
    }

    /** A Mono that calls onSubscribe later (as one subscribed on another thread would). */
    private class LateMono : Mono<WorkCompletion>() {
        var subscriber: CoreSubscriber<in WorkCompletion>? = null
        override fun subscribe(actual: CoreSubscriber<in WorkCompletion>) { subscriber = actual }
    }
}
