package io.jrdma.kotlin

import io.jrdma.reactive.ConnectionException
import io.jrdma.reactive.DisposableRdmaServer
import io.jrdma.reactive.RdmaClient
import io.jrdma.reactive.RdmaConnection
import io.jrdma.reactive.RdmaServer
import java.util.Collections
import java.util.WeakHashMap
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.channels.Channel
import kotlinx.coroutines.channels.ClosedReceiveChannelException
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.receiveAsFlow
import kotlinx.coroutines.reactor.awaitSingleOrNull
import kotlinx.coroutines.withContext
import reactor.core.scheduler.Schedulers

/**
 * Connects (see [RdmaClient.connect]) and returns the established connection. Cancelling the
 * coroutine cancels the setup; a connection that gets established anyway is closed, not leaked.
 */
public suspend fun RdmaClient.connectAwait(): RdmaConnection =
    connect().awaitOwned { it.close().subscribe() }

/** Starts listening (see [RdmaServer.bind]); returns once the server accepts connections. */
public suspend fun RdmaServer.bindAwait(): DisposableRdmaServer =
    bind().awaitOwned { server -> Schedulers.boundedElastic().schedule(server::dispose) }

/**
 * The next accepted connection. Every call (and [connectionsFlow]) shares one subscription to
 * [DisposableRdmaServer.connections], so a server can accept any number of clients this way (do
 * not subscribe to `connections()` yourself as well: it takes one subscriber). Throws
 * [ConnectionException.Closed] once the server is disposed and no accepted connection is left.
 */
public suspend fun DisposableRdmaServer.accept(): RdmaConnection =
    try {
        acceptor().receive()
    } catch (e: ClosedReceiveChannelException) {
        throw ConnectionException.Closed("the server at ${address()} is disposed: it accepts no more connections")
    }

/** Accepted connections as they arrive; completes when the server is disposed. Shares [accept]'s subscription. */
public fun DisposableRdmaServer.connectionsFlow(): Flow<RdmaConnection> = acceptor().receiveAsFlow()

/**
 * Closes (see [RdmaConnection.close]): flushes every outstanding work request and returns once
 * all native resources are freed. The reactive layer bounds the wait by its drain deadline.
 */
public suspend fun RdmaConnection.closeAwait() {
    close().awaitSingleOrNull()
}

/** Suspends until the connection is closed: by the peer, by a failure or by [closeAwait]. */
public suspend fun RdmaConnection.awaitClosed() {
    onClose().awaitSingleOrNull()
}

/** Runs [block] with this connection and closes it afterwards, also when [block] fails or is cancelled. */
public suspend inline fun <R> RdmaConnection.use(block: (RdmaConnection) -> R): R {
    try {
        return block(this)
    } finally {
        withContext(NonCancellable) { closeAwait() }
    }
}

/** Runs [block] with this server and disposes it afterwards, also when [block] fails or is cancelled. */
public suspend inline fun <R> DisposableRdmaServer.use(block: (DisposableRdmaServer) -> R): R {
    try {
        return block(this)
    } finally {
        withContext(NonCancellable) { disposeAwait() }
    }
}

/** Stops listening and suspends until every connection the server accepted is closed; blocks no thread. */
public suspend fun DisposableRdmaServer.disposeAwait() {
    disposeLater().awaitSingleOrNull()
}

// connections() is a unicast Flux: one subscriber for the server's whole life, and a cancelled
// subscriber (such as connections().next()) makes the server close every later connection on
// arrival. So each server gets one channel, subscribed once, that every accept() reads from.
// Weak keys: the entry goes with the server; the channel holds no reference back to it.
private val acceptors = Collections.synchronizedMap(WeakHashMap<DisposableRdmaServer, Channel<RdmaConnection>>())

private fun DisposableRdmaServer.acceptor(): Channel<RdmaConnection> =
    acceptors.getOrPut(this) {
        // a connection that a cancelled accept() took, or that arrives after the channel closed, is closed, never leaked
        val channel = Channel<RdmaConnection>(Channel.UNLIMITED) { it.close().subscribe() }
        connections().subscribe(
            { c -> if (channel.trySend(c).isFailure) c.close().subscribe() },
            { error -> channel.close(error) },
            { channel.close() })
        channel
    }
