package io.jrdma.kotlin

import io.jrdma.reactive.ConnectionException
import io.jrdma.reactive.DisposableRdmaServer
import io.jrdma.reactive.RdmaClient
import io.jrdma.reactive.RdmaConnection
import io.jrdma.reactive.RdmaServer
import kotlinx.coroutines.CancellationException
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.launch
import kotlinx.coroutines.reactor.mono
import kotlinx.coroutines.withContext
import reactor.util.Loggers

/**
 * Connects (see [RdmaClient.connect]) and returns the established connection. Cancelling the
 * coroutine cancels the setup; a connection that gets established anyway is closed, not leaked.
 */
public suspend fun RdmaClient.awaitConnect(): RdmaConnection =
    connect().awaitOwned { it.dispose() }

/**
 * [RdmaClient.handle] for a suspend function, with Spring's `co` prefix for the suspend twin of a
 * handler-taking method (the member's name being taken): every connection this client makes runs
 * [handler] in a coroutine of its own, once [awaitConnect] (or `connect()`) has returned it. The rules are the Java
 * function's:
 * - [handler] starts on the connection's loop thread and, after a suspension, goes on on the thread
 *   that resumed it (`Dispatchers.Unconfined`, as [coRegister]): do not block there;
 *   `withContext(Dispatchers.IO)` for blocking work.
 * - When [handler] returns (with the coroutines it launched in its scope) or fails, the connection is
 *   disposed; a failure is logged once, to `io.jrdma.reactive.client`.
 * - Disposing the connection, or the peer closing it, cancels [handler] once the connection is closed.
 *
 * ```kotlin
 * val conn = RdmaClient.create().host("10.77.0.2").localAddress("10.77.0.1")
 *     .coHandle { c -> c.awaitSend("hello"); c.awaitReceive().use { println(it.text()) } }
 *     .awaitConnect()
 * conn.awaitOnDispose()  // the handler returned, and its connection was disposed
 * ```
 */
public fun RdmaClient.coHandle(handler: suspend CoroutineScope.(RdmaConnection) -> Unit): RdmaClient =
    handle { c -> mono<Void>(Dispatchers.Unconfined) { handler(c); null } }

/** Starts listening (see [RdmaServer.bind]); returns once the server accepts connections. */
public suspend fun RdmaServer.awaitBind(): DisposableRdmaServer =
    bind().awaitOwned { it.dispose() }

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
 * Serves every connection this server accepts with [handler], each in a coroutine of its own, a
 * child of the caller's: [RdmaServer.handle] for suspend functions, structured. The rules:
 * - [handler] runs once per accepted connection, in the caller's context (started on the accepting
 *   thread, until its first suspension), and ends with the coroutines it launched in its scope;
 *   then its connection is closed, as [use] closes it, whether [handler] returned, failed or was cancelled.
 * - A handler's failure (an exception other than a cancellation) closes its connection only: it is
 *   logged (to `io.jrdma.reactive.server`, as a failed [RdmaServer.handle]) and the server and the
 *   other connections go on.
 * - Cancelling the caller disposes the server: accepting stops, every handler is cancelled and its
 *   connection closed; [handle] rethrows the cancellation once the server is disposed.
 * - Disposing the server elsewhere ([dispose][DisposableRdmaServer.dispose], its [io.jrdma.reactive.RdmaResources]) stops
 *   the accepting and closes the connections; [handle] returns once every handler has ended.
 *   However it ends, the server is disposed when [handle] returns.
 *
 * A server whose connections go to a Java [RdmaServer.handle] function has none to give here:
 * [handle] then fails with [IllegalStateException].
 */
public suspend fun DisposableRdmaServer.handle(handler: suspend CoroutineScope.(RdmaConnection) -> Unit) {
    try {
        coroutineScope {
            while (true) {
                val connection = try {
                    awaitAccept()
                } catch (disposed: ConnectionException.Closed) {
                    break
                }
                // undispatched: started even if the caller is cancelled as the connection arrives, so it gets closed
                launch(start = CoroutineStart.UNDISPATCHED) { serve(connection, handler) }
            }
        }
    } finally {
        withContext(NonCancellable) { awaitDispose() }
    }
}

private suspend fun DisposableRdmaServer.serve(connection: RdmaConnection, handler: suspend CoroutineScope.(RdmaConnection) -> Unit) {
    try {
        connection.use { c -> coroutineScope { handler(c) } }
    } catch (cancelled: CancellationException) {
        throw cancelled
    } catch (failure: Exception) {
        SERVER_LOG.warn("the handler of $this failed on $connection; closed it", failure)
    }
}

private val SERVER_LOG = Loggers.getLogger("io.jrdma.reactive.server")

// ------------------------------------------------------------------------------ the names before the rule

@Deprecated(RENAMED, ReplaceWith("awaitConnect()", "io.jrdma.kotlin.awaitConnect"), DeprecationLevel.WARNING)
public suspend fun RdmaClient.connectAwait(): RdmaConnection = awaitConnect()

@Deprecated(RENAMED, ReplaceWith("awaitBind()", "io.jrdma.kotlin.awaitBind"), DeprecationLevel.WARNING)
public suspend fun RdmaServer.bindAwait(): DisposableRdmaServer = awaitBind()

@Deprecated(RENAMED, ReplaceWith("awaitAccept()", "io.jrdma.kotlin.awaitAccept"), DeprecationLevel.WARNING)
public suspend fun DisposableRdmaServer.acceptAwait(): RdmaConnection = awaitAccept()

@Deprecated(ONE_LIFECYCLE, ReplaceWith("awaitDispose()", "io.jrdma.kotlin.awaitDispose"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.awaitClose(): Unit = awaitDispose()

@Deprecated(ONE_LIFECYCLE, ReplaceWith("awaitOnDispose()", "io.jrdma.kotlin.awaitOnDispose"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.awaitOnClose(): Unit = awaitOnDispose()

@Deprecated(RENAMED, ReplaceWith("awaitDispose()", "io.jrdma.kotlin.awaitDispose"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.closeAwait(): Unit = awaitDispose()

@Deprecated(RENAMED, ReplaceWith("awaitOnDispose()", "io.jrdma.kotlin.awaitOnDispose"), DeprecationLevel.WARNING)
public suspend fun RdmaConnection.onCloseAwait(): Unit = awaitOnDispose()
