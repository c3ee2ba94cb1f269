package io.jrdma.kotlin

import java.util.function.Consumer
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlinx.coroutines.CancellableContinuation
import kotlinx.coroutines.reactor.ReactorContext
import kotlinx.coroutines.suspendCancellableCoroutine
import org.reactivestreams.Subscription
import reactor.core.CoreSubscriber
import io.jrdma.reactive.WorkCompletion
import io.jrdma.reactive.WorkRequestSubscription
import io.jrdma.reactive.memory.ReceivedMessage
import io.jrdma.reactive.memory.RegisteredBuffer
import reactor.core.publisher.Mono
import reactor.core.publisher.Operators
import reactor.util.context.Context

/**
 * `awaitSingle()` for values that own native resources: a connection, a registered buffer, a
 * received message (which holds a posted receive). kotlinx's `awaitSingle` drops a value that
 * arrives while the coroutine is being cancelled (kotlinx.coroutines#2607): harmless for a
 * completion, a leak for these. Here such a value goes to [Owned.release] instead, whether Reactor
 * drops it (the subscription was cancelled before the emission: its discard hook) or the coroutine
 * does (cancelled after it).
 */
@PublishedApi
internal suspend fun <T : Any> Mono<T>.awaitOwned(owned: Owned<T>): T =
    suspendCancellableCoroutine { cont -> subscribe(OwnedAwaiter(cont, owned)) }

internal suspend inline fun <reified T : Any> Mono<T>.awaitOwned(noinline release: (T) -> Unit): T =
    awaitOwned(Owned(T::class.java, release))

/**
 * [awaitOwned] for received messages, not generic for the reason [awaitCompletion] gives: generic,
 * [awaitReceive] compiled to a continuation object of its own per call, and a new intercepted
 * continuation for it (whose constructor folds the coroutine context), on the path of every message.
 */
@PublishedApi
internal suspend fun Mono<ReceivedMessage>.awaitReceived(): ReceivedMessage =
    suspendCancellableCoroutine { cont -> subscribe(OwnedAwaiter(cont, RECEIVED)) }

/** [awaitOwned] for pooled buffers, not generic: see [awaitReceived]. */
@PublishedApi
internal suspend fun Mono<RegisteredBuffer>.awaitAcquired(): RegisteredBuffer =
    suspendCancellableCoroutine { cont -> subscribe(OwnedAwaiter(cont, ACQUIRED)) }

private val RECEIVED = Owned(ReceivedMessage::class.java, ReceivedMessage::release)
private val ACQUIRED = Owned(RegisteredBuffer::class.java, RegisteredBuffer::release)

/**
 * How a value of [type] is released when nobody takes it, and the Reactor context that says so
 * (`doOnDiscard`'s hook), made once: the hot receives ([awaitReceive], [awaitAcquire]) keep one
 * [Owned] each, so a receive allocates no operator, context or lambda of its own.
 */
@PublishedApi
internal class Owned<T : Any>(private val type: Class<T>, val release: (T) -> Unit) {
    private val emptyContext = Operators.enableOnDiscard(Context.empty(), Consumer<Any> { releaseIfOwned(it) })

    fun context(coroutine: CoroutineContext): Context =
        coroutine[ReactorContext]?.context?.let { discardContext(it) } ?: emptyContext

    /**
     * [base] with the hook, through Reactor's public API: `doOnDiscard`, which the Javadoc of
     * `Operators.enableOnDiscard` prefers, would cost an operator per subscription; and
     * `enableOnDiscard` replaces a hook already in [base], so ours hands every element on to that
     * one ([Operators.onDiscard] reads it), as `doOnDiscard` chains them.
     */
    private fun discardContext(base: Context): Context =
        Operators.enableOnDiscard(base, Consumer<Any> { releaseIfOwned(it); Operators.onDiscard(it, base) })

    private fun releaseIfOwned(discarded: Any) {
        if (type.isInstance(discarded)) release(type.cast(discarded))
    }
}

/**
 * [awaitOwned]'s one object: the subscriber, the coroutine's cancellation handler and the handler
 * of a value that arrives as the coroutine is cancelled.
 */
private class OwnedAwaiter<T : Any>(private val cont: CancellableContinuation<T>, private val owned: Owned<T>) :
    CoreSubscriber<T>, (Throwable?) -> Unit, (Throwable, T, CoroutineContext) -> Unit {
    private var subscription: Subscription? = null
    private var seen = false

    override fun currentContext(): Context = owned.context(cont.context)

    override fun onSubscribe(s: Subscription) {
        subscription = s
        cont.invokeOnCancellation(this)
        s.request(Long.MAX_VALUE)
    }

    /** The coroutine was cancelled while it waited. */
    override fun invoke(cause: Throwable?) {
        subscription?.cancel()
    }

    /** The value arrived as the coroutine was cancelled: nobody will take it. */
    override fun invoke(cause: Throwable, value: T, context: CoroutineContext) {
        owned.release(value)
    }

    // A Mono emits at most once, and an upstream may still emit after cancel(): resuming
    // here, not in onComplete, is what hands a late value to release().
    override fun onNext(value: T) {
        seen = true
        // typed, or the overload taking a (Throwable) -> Unit would get this object's cancellation handler
        val releaseIfCancelled: (Throwable, T, CoroutineContext) -> Unit = this
        cont.resume(value, releaseIfCancelled)
    }

    override fun onError(error: Throwable) {
        cont.resumeWithException(error)
    }

    override fun onComplete() {
        if (!seen) cont.resumeWithException(NoSuchElementException("the Mono completed without a value"))
    }
}

/**
 * `awaitSingle()` for the Monos of operations, at the cost of the coroutine's cancellable
 * continuation and one object: [MonoAwaiter] is the subscriber and the cancellation handler.
 * kotlinx's `awaitSingle` adds about ten objects per call (its own continuation state machine, a
 * subscriber, a cancellation lambda, a StrictSubscriber, a DispatchedContinuation, ...). It is
 * just as cancel-safe: cancelling the coroutine cancels the subscription, so an operation still
 * waiting for a send credit is never posted. A Reactor context in the coroutine's context reaches
 * the Mono, as with `awaitSingle`.
 */
@PublishedApi
internal suspend fun <T : Any> Mono<T>.awaitOne(): T =
    suspendCancellableCoroutine { cont -> MonoAwaiter(cont).await(this) }

/**
 * The subscriber and the cancellation handler of [awaitOne]. The rules:
 * - the handler is installed once the Mono's `subscribe` returned, not in `onSubscribe`: a work
 *   request is posted after its `onSubscribe`, within `subscribe` when a send slot is free (the
 *   common case), and only then can it say it can no longer be withdrawn;
 * - it is installed unless the subscription is a [WorkRequestSubscription] that is no longer
 *   [withdrawable][WorkRequestSubscription.isWithdrawable], or the coroutine was resumed already.
 *   Without it a cancelled coroutine still resumes at once (its continuation is cancellable), the
 *   work request runs to its completion, which then goes nowhere; what the handler would cost is
 *   kotlinx's wrapper of it and, at the resume, the completed state that keeps it: two objects of
 *   every operation posted at once;
 * - a coroutine cancelled before the handler is installed gets it run at once by kotlinx, so a
 *   work request still waiting is withdrawn either way;
 * - a Mono that calls `onSubscribe` later, on another thread, gets the handler (no subscription
 *   seen yet): cancelling then cancels whatever subscription came.
 */
private class MonoAwaiter<T : Any>(private val cont: CancellableContinuation<T>) : CoreSubscriber<T>, (Throwable?) -> Unit {
    @Volatile private var subscription: Subscription? = null
    private var seen = false

    fun await(mono: Mono<T>) {
        mono.subscribe(this)
        val s = subscription
        if (s is WorkRequestSubscription && !s.isWithdrawable()) return
        if (cont.isCompleted && !cont.isCancelled) return  // resumed within subscribe: nothing left to cancel
        cont.invokeOnCancellation(this)
    }

    override fun currentContext(): Context = cont.context[ReactorContext]?.context ?: Context.empty()

    override fun onSubscribe(s: Subscription) {
        subscription = s
        // cancelled before a late onSubscribe: the handler found no subscription to cancel
        if (cont.isCancelled) s.cancel() else s.request(Long.MAX_VALUE)
    }

    /** The coroutine was cancelled while it waited. */
    override fun invoke(cause: Throwable?) {
        subscription?.cancel()
    }

    override fun onNext(value: T) {
        seen = true
        cont.resume(value)
    }

    override fun onError(error: Throwable) {
        cont.resumeWithException(error)
    }

    override fun onComplete() {
        if (!seen) cont.resumeWithException(NoSuchElementException("the Mono completed without a value"))
    }
}

/**
 * [awaitOne] for the Monos of work requests, not generic on purpose: a call to a generic suspend
 * function returns `Any?` and its caller casts the result, and a cast after the call makes the
 * caller's body more than a tail call, so each `awaitXxx` compiled to a continuation object of its
 * own (and a new intercepted continuation for it) per call. Returning exactly [WorkCompletion], the
 * `awaitXxx` functions pass their caller's continuation straight through: per operation the Kotlin
 * API adds the cancellable continuation (kotlinx's `CancellableContinuationImpl`, with the
 * `ChildContinuation` it keeps) and one [MonoAwaiter]; a work request that has to wait to be posted
 * also the cancel handler and the completed state that keeps it.
 */
@PublishedApi
internal suspend fun Mono<WorkCompletion>.awaitCompletion(): WorkCompletion =
    suspendCancellableCoroutine { cont -> MonoAwaiter(cont).await(this) }

/** [awaitOne] for byte arrays (a READ's copy, an RPC's result), not generic: see [awaitCompletion]. */
@PublishedApi
internal suspend fun Mono<ByteArray>.awaitBytes(): ByteArray =
    suspendCancellableCoroutine { cont -> MonoAwaiter(cont).await(this) }

/** [awaitOne] for an atomic's previous value or a watched word's new value, not generic: see [awaitCompletion]. */
@PublishedApi
internal suspend fun Mono<Long>.awaitLong(): Long =
    suspendCancellableCoroutine { cont -> MonoAwaiter(cont).await(this) }

/** [awaitOne] for a one-sided wait's byte, not generic: see [awaitCompletion]. */
@PublishedApi
internal suspend fun Mono<Byte>.awaitByte(): Byte =
    suspendCancellableCoroutine { cont -> MonoAwaiter(cont).await(this) }
