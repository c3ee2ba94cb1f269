package io.jrdma.kotlin

import java.util.concurrent.atomic.AtomicReference
import java.util.function.Consumer
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.reactor.asCoroutineContext
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertSame
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import org.reactivestreams.Subscriber
import org.reactivestreams.Subscription
import reactor.core.publisher.Mono
import reactor.core.publisher.MonoSink
import reactor.core.publisher.Operators
import reactor.util.context.Context

/** The bridge for resource-owning values never loses one to a cancellation, whichever side of it the value arrives. */
class AwaitOwnedTest {
    private class Resource {
        var released = 0
    }

    @Test
    fun `a value arrives and is returned, not released`() = runTest {
        val r = Resource()
        assertSame(r, Mono.just(r).awaitOwned { it.released++ })
        assertEquals(0, r.released)
    }

    @Test
    fun `a value emitted after the coroutine was cancelled is released (Reactor discards it)`() = runTest {
        val sink = AtomicReference<MonoSink<Resource>>()
        val waiting = async(start = CoroutineStart.UNDISPATCHED) {
            Mono.create<Resource> { sink.set(it) }.awaitOwned { it.released++ }
        }
        waiting.cancelAndJoin()
        val late = Resource()
        sink.get().success(late)
        assertEquals(1, late.released)
    }

    @Test
    fun `a value an upstream delivers despite the cancel is released (the coroutine drops it)`() = runTest {
        // a publisher that ignores cancel(), as one whose emission was already under way behaves
        val subscriber = AtomicReference<Subscriber<in Resource>>()
        val stubborn = Mono.from<Resource> { s ->
            subscriber.set(s)
            s.onSubscribe(object : Subscription {
                override fun request(n: Long) {}
                override fun cancel() {}
            })
        }
        val waiting = async(start = CoroutineStart.UNDISPATCHED) { stubborn.awaitOwned { it.released++ } }
        waiting.cancelAndJoin()
        val late = Resource()
        subscriber.get().onNext(late)
        subscriber.get().onComplete()
        assertEquals(1, late.released)
    }

    @Test
    fun `with a Reactor context in the coroutine context, the Mono sees it and a late value is still released`() = runTest {
        val sink = AtomicReference<MonoSink<Resource>>()
        val tenant = AtomicReference<String>()
        val waiting = async(Context.of("tenant", "a").asCoroutineContext(), start = CoroutineStart.UNDISPATCHED) {
            Mono.create<Resource> { tenant.set(it.contextView().get("tenant")); sink.set(it) }.awaitOwned { it.released++ }
        }
        waiting.cancelAndJoin()
        val late = Resource()
        sink.get().success(late)
        assertEquals("a", tenant.get())
        assertEquals(1, late.released)
    }

    @Test
    fun `a discard hook already in the Reactor context still sees a late value, after the release`() = runTest {
        val sink = AtomicReference<MonoSink<Resource>>()
        val seen = mutableListOf<String>()
        val theirs = Operators.enableOnDiscard(Context.empty(), Consumer<Any> { seen += "theirs ${(it as Resource).released}" })
        val waiting = async(theirs.asCoroutineContext(), start = CoroutineStart.UNDISPATCHED) {
            Mono.create<Resource> { sink.set(it) }.awaitOwned { it.released++; seen += "released" }
        }
        waiting.cancelAndJoin()
        sink.get().success(Resource())
        assertEquals(listOf("released", "theirs 1"), seen)
    }

    @Test
    fun `an empty Mono is an error, not a null`() = runTest {
        assertThrows<NoSuchElementException> { Mono.empty<Resource>().awaitOwned { it.released++ } }
    }
}
