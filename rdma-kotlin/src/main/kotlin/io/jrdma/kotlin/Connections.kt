package io.jrdma.kotlin

import io.jrdma.reactive.ConnectionException
import io.jrdma.reactive.DisposableRdmaServer
import io.jrdma.reactive.RdmaClient
import io.jrdma.reactive.RdmaConnection
import io.jrdma.reactive.RdmaServer
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.reactor.awaitSingleOrNull
import reactor.core.scheduler.Schedulers

/**
 * Connects (see [RdmaClient.connect]) and returns the established connection. Cancelling the
 * coroutine cancels the setup; a connection that gets established anyway is closed, not leaked.
 */
public suspend fun RdmaClient.awaitConnect(): RdmaConnection =
    connect().awaitOwned { it.close().subscribe() }

/** Starts listening (see [RdmaServer.bind]); returns once the server accepts connections. */
public suspend fun RdmaServer.awaitBind(): DisposableRdmaServer =
    bind().awaitOwned { server -> Schedulers.boundedElastic().schedule(server::dispose) }

/**
 * The next accepted connection (see [DisposableRdmaServer.accept]): any number of coroutines may
 * accept from one server, each connection goes to one of them, and a connection that arrives as
 * the caller is cancelled is left to the next taker or closed, never leaked. Throws
 * [ConnectionException.Closed] once the server is disposed and no accepted connection is left.
 */
public suspend fun DisposableRdmaServer.awaitAccept(): RdmaConnection =
    accept().awaitOwned { it.dispose() }

/** [DisposableRdmaServer.connections] as a Flow: one [awaitAccept] per element; completes when the server is disposed. */
public fun DisposableRdmaServer.connectionsFlow(): Flow<RdmaConnection> = flow {
    while (true) {
        val connection = try {
            awaitAccept()
        } catch (disposed: ConnectionException.Closed) {
            return@flow
        }
        emit(connection)
    }
}

/**
 * Closes (see [RdmaConnection.close]): flushes every outstanding work request and returns once
 * all native resources are freed. The reactive layer bounds the wait by its drain deadline. Unlike
 * kotlinx's `ProducerScope.awaitClose`, which only waits, this closes: it is `close()` awaited;
 * waiting for a close by either side is [awaitOnClose].
 */
public suspend fun RdmaConnection.awaitClose() {
    close().awaitSingleOrNull()
}

/** Suspends until the connection is closed (see [RdmaConnection.onClose]): by the peer, by a failure or by [awaitClose]. */
public suspend fun RdmaConnection.awaitOnClose() {
    onClose().awaitSingleOrNull()
}

/** Runs [block] with this connection and closes it afterwards, also when [block] fails or is cancelled. */
public suspend inline fun <R> RdmaConnection.use(block: (RdmaConnection) -> R): R = useThen(block) { awaitClose() }

/** Runs [block] with this server and disposes it afterwards, also when [block] fails or is cancelled. */
public suspend inline fun <R> DisposableRdmaServer.use(block: (DisposableRdmaServer) -> R): R = useThen(block) { awaitDispose() }

/** Stops listening and suspends until every connection the server accepted is closed; blocks no thread. */
public suspend fun DisposableRdmaServer.awaitDispose() {
    disposeLater().awaitSingleOrNull()
}

// ------------------------------------------------------------------------------ the names before the rule

@Deprecated(RENAMED, ReplaceWith("awaitConnect()", "io.jrdma.kotlin.awaitConnect"), DeprecationLevel.WARNING)
public suspend fun RdmaClient.connectAwait(): RdmaConnection = awaitConnect()

@Deprecated(RENAMED, ReplaceWith("awaitBind()", "io.jrdma.kotlin.awaitBind"), DeprecationLevel.WARNING)
public suspend fun RdmaServer.bindAwait(): DisposableRdmaServer = awaitBind()

@Deprecated(RENAMED, ReplaceWith("awaitAccept()", "io.jrdma.kotlin.awaitAccept"), DeprecationLevel.WARNING)
public suspend fun DisposableRdmaServer.acceptAwait(): RdmaConnection = awaitAccept()

@Deprecated(RENAMED, ReplaceWith("awaitClose()", "io.jrdma.kotlin.awaitClose"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.closeAwait(): Unit = awaitClose()

@Deprecated(RENAMED, ReplaceWith("awaitOnClose()", "io.jrdma.kotlin.awaitOnClose"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.onCloseAwait(): Unit = awaitOnClose()

@Deprecated(RENAMED, ReplaceWith("awaitDispose()", "io.jrdma.kotlin.awaitDispose"), DeprecationLevel.WARNING)
public suspend fun DisposableRdmaServer.disposeAwait(): Unit = awaitDispose()
