package io.jrdma.kotlin

import kotlin.coroutines.resumeWithException
import kotlinx.coroutines.suspendCancellableCoroutine
import org.reactivestreams.Subscription
import reactor.core.CoreSubscriber
import reactor.core.publisher.Mono

/**
 * `awaitSingle()` for values that own native resources: a connection, a registered buffer, a
 * received message (which holds a posted receive). kotlinx's `awaitSingle` drops a value that
 * arrives while the coroutine is being cancelled (kotlinx.coroutines#2607): harmless for a
 * completion, a leak for these. Here such a value goes to [release] instead, whether Reactor
 * drops it (the subscription was cancelled before the emission: `onDiscard`) or the coroutine
 * does (cancelled after it).
 */
@PublishedApi
internal suspend fun <T : Any> Mono<T>.awaitOwned(type: Class<T>, release: (T) -> Unit): T =
    suspendCancellableCoroutine { cont ->
        doOnDiscard(type, release).subscribe(object : CoreSubscriber<T> {
            private var seen = false

            override fun onSubscribe(s: Subscription) {
                cont.invokeOnCancellation { s.cancel() }
                s.request(Long.MAX_VALUE)
            }

            // A Mono emits at most once, and an upstream may still emit after cancel(): resuming
            // here, not in onComplete, is what hands a late value to release().
            override fun onNext(value: T) {
                seen = true
                cont.resume(value) { _, unused, _ -> release(unused) }
            }

            override fun onError(error: Throwable) {
                cont.resumeWithException(error)
            }

            override fun onComplete() {
                if (!seen) cont.resumeWithException(NoSuchElementException("the Mono completed without a value"))
            }
        })
    }

internal suspend inline fun <reified T : Any> Mono<T>.awaitOwned(noinline release: (T) -> Unit): T =
    awaitOwned(T::class.java, release)
