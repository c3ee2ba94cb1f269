package io.jrdma.kotlin

import io.jrdma.reactive.RdmaClient
import io.jrdma.reactive.RdmaServer
import io.jrdma.rpc.CallOptions
import io.jrdma.rpc.Codec
import io.jrdma.rpc.DisposableRpcServer
import io.jrdma.rpc.RpcClient
import io.jrdma.rpc.RpcHandler
import io.jrdma.rpc.RpcRequest
import io.jrdma.rpc.RpcServer
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.reactor.awaitSingleOrNull
import kotlinx.coroutines.reactor.mono

// The RPC layer of rdma-reactive, as suspend functions. Cancelling a call cancels its Mono: the
// call's credit and staging memory stay taken until the server's answer (or the connection's
// end) arrives, as in the reactive API.

/** Connects an RPC client over the RDMA connection this client configures. */
public suspend fun RdmaClient.rpcConnectAwait(): RpcClient = RpcClient.connect(this).awaitOwned { it.close().subscribe() }

/** Calls [function] with raw bytes; suspends until the response. */
public suspend fun RpcClient.callAwait(function: String, payload: ByteArray, options: CallOptions? = null): ByteArray =
    (if (options == null) call(function, payload) else call(function, payload, options)).awaitBytes()

/** Calls [function] with UTF-8 text. */
public suspend fun RpcClient.callAwait(function: String, text: String): String = call(function, text).awaitOne()

/** Calls [function] with a typed request and response. */
public suspend fun <I : Any, O : Any> RpcClient.callAwait(function: String, request: I, input: Codec<I>, output: Codec<O>): O =
    call(function, request, input, output).awaitOne()

/** Closes the client's connection (see [RpcClient.close]); outstanding calls fail with `RpcException.ConnectionLost`. */
public suspend fun RpcClient.closeAwait() {
    close().awaitSingleOrNull()
}

/** Runs [block] with this client and closes it afterwards, also when [block] fails or is cancelled. */
public suspend inline fun <R> RpcClient.use(block: (RpcClient) -> R): R = useThen(block) { closeAwait() }

/**
 * Registers a suspend function: its coroutine starts on the server's handler scheduler (by default
 * off the poller thread, so it may block there) and, after a suspension, goes on on the thread that
 * resumed it (`Dispatchers.Unconfined`); blocking work after a suspension belongs in
 * `withContext(Dispatchers.IO)`. `mono { }` without a dispatcher started it on `Dispatchers.Default`:
 * a second thread hand-off per call after the handler scheduler's.
 */
public fun RpcServer.registerSuspend(name: String, handler: suspend (RpcRequest) -> ByteArray): RpcServer =
    register(name, RpcHandler { request -> mono(Dispatchers.Unconfined) { handler(request) } })

/** Starts an RPC server; suspends until it listens. */
public suspend fun RpcServer.bindAwait(): DisposableRpcServer = bind().awaitOwned { it.disposeLater().subscribe() }

/** Stops listening and suspends until every connection is closed (see [DisposableRpcServer.disposeLater]); blocks no thread. */
public suspend fun DisposableRpcServer.disposeAwait() {
    disposeLater().awaitSingleOrNull()
}

/** Runs [block] with this server and disposes it afterwards, also when [block] fails or is cancelled. */
public suspend inline fun <R> DisposableRpcServer.use(block: (DisposableRpcServer) -> R): R = useThen(block) { disposeAwait() }

/** Builds an RPC server that accepts connections as this [RdmaServer] configures them ([RpcServer.create]). */
public fun RdmaServer.rpc(): RpcServer = RpcServer.create(this)
