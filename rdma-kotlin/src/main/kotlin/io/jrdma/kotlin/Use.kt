package io.jrdma.kotlin

import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.withContext

/** Every suspending `use { }`: runs [block] with this, then [close] as [closeAfter] says. */
@PublishedApi
internal suspend inline fun <T, R> T.useThen(block: (T) -> R, noinline close: suspend () -> Unit): R {
    var failure: Throwable? = null
    try {
        return block(this)
    } catch (e: Throwable) {
        failure = e
        throw e
    } finally {
        closeAfter(failure, close)
    }
}

/**
 * The end of every suspending `use { }`: runs [close] even in a cancelled coroutine, and, like
 * `kotlin.io.use`, keeps the block's own [failure] as what the caller sees, with a failing close
 * added as suppressed; without one, a failing close is thrown.
 */
@PublishedApi
internal suspend fun closeAfter(failure: Throwable?, close: suspend () -> Unit) {
    try {
        withContext(NonCancellable) { close() }
    } catch (closeFailure: Throwable) {
        if (failure == null) throw closeFailure
        if (closeFailure !== failure) failure.addSuppressed(closeFailure)
    }
}
