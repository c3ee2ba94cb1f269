package io.jrdma.kotlin

import io.jrdma.reactive.RdmaDisposable
import kotlinx.coroutines.reactor.awaitSingleOrNull

// One lifecycle, as rdma-reactive's RdmaDisposable: connections, servers, RPC clients and servers and
// RdmaResources all take these, so there is one `use { }` and one `awaitDispose()` for all of them.

/**
 * Disposes (see [RdmaDisposable.dispose]) and suspends until the disposal is over
 * ([RdmaDisposable.onDispose]): a connection flushed and freed, a server's connections closed and
 * its port free, resources' threads stopped. Blocks no thread.
 */
public suspend fun RdmaDisposable.awaitDispose() {
    disposeLater().awaitSingleOrNull()
}

/** Suspends until this is disposed, by whoever disposes it (the peer, a failure, [awaitDispose]); disposes nothing. */
public suspend fun RdmaDisposable.awaitOnDispose() {
    onDispose().awaitSingleOrNull()
}

/**
 * Runs [block] with this and disposes it afterwards ([awaitDispose]), also when [block] fails or is
 * cancelled: a failing disposal is added to the block's failure as suppressed. For what the caller
 * owns: never [io.jrdma.reactive.RdmaResources.shared].
 */
public suspend inline fun <T : RdmaDisposable, R> T.use(block: (T) -> R): R = useThen(block) { awaitDispose() }

// ------------------------------------------------------------------------------ the names before the rule

@Deprecated(RENAMED, ReplaceWith("awaitDispose()", "io.jrdma.kotlin.awaitDispose"), DeprecationLevel.WARNING)
public suspend fun RdmaDisposable.disposeAwait(): Unit = awaitDispose()

internal const val ONE_LIFECYCLE: String =
    "one lifecycle (RdmaDisposable): close() is dispose() and onClose() is onDispose() on every connection, server, client and resources"
