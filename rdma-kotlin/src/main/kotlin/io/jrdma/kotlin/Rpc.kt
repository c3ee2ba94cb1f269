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
import kotlinx.coroutines.reactor.mono

// The RPC layer of rdma-reactive, as suspend functions. Cancelling a call cancels its Mono: the
// call's credit and staging memory stay taken until the server's answer (or the connection's
// end) arrives, as in the reactive API.

/** Connects an RPC client over the RDMA connection this client configures. */
public suspend fun RdmaClient.awaitRpcConnect(): RpcClient = RpcClient.connect(this).awaitOwned { it.dispose() }

/** Calls [function] with raw bytes; suspends until the response. */
public suspend fun RpcClient.awaitCall(function: String, payload: ByteArray, options: CallOptions? = null): ByteArray =
    (if (options == null) call(function, payload) else call(function, payload, options)).awaitBytes()

/** Calls [function] with UTF-8 text. */
public suspend fun RpcClient.awaitCall(function: String, text: String): String = call(function, text).awaitOne()

/** Calls [function] with a typed request and response. */
public suspend fun <I : Any, O : Any> RpcClient.awaitCall(function: String, request: I, input: Codec<I>, output: Codec<O>): O =
    call(function, request, input, output).awaitOne()

/**
 * [RpcServer.register] for a suspend function, with Spring's `co` prefix for the suspend twin of a
 * handler-taking method (`coRouter`), the member's name being taken. Its coroutine starts on the server's handler scheduler (by default
 * off the poller thread, so it may block there) and, after a suspension, goes on on the thread that
 * resumed it (`Dispatchers.Unconfined`); blocking work after a suspension belongs in
 * `withContext(Dispatchers.IO)`. `mono { }` without a dispatcher started it on `Dispatchers.Default`:
 * a second thread hand-off per call after the handler scheduler's.
 */
public fun RpcServer.coRegister(name: String, handler: suspend (RpcRequest) -> ByteArray): RpcServer =
    register(name, RpcHandler { request -> mono(Dispatchers.Unconfined) { handler(request) } })

/** Starts an RPC server; suspends until it listens. */
public suspend fun RpcServer.awaitBind(): DisposableRpcServer = bind().awaitOwned { it.dispose() }

/** Builds an RPC server that accepts connections as this [RdmaServer] configures them ([RpcServer.create]). */
public fun RdmaServer.rpc(): RpcServer = RpcServer.create(this)

// ------------------------------------------------------------------------------ the names before the rule

@Deprecated(RENAMED, ReplaceWith("awaitRpcConnect()", "io.jrdma.kotlin.awaitRpcConnect"), DeprecationLevel.WARNING)
public suspend fun RdmaClient.rpcConnectAwait(): RpcClient = awaitRpcConnect()

@Deprecated(RENAMED, ReplaceWith("awaitCall(function, payload, options)", "io.jrdma.kotlin.awaitCall"), DeprecationLevel.WARNING)
public suspend fun RpcClient.callAwait(function: String, payload: ByteArray, options: CallOptions? = null): ByteArray =
    awaitCall(function, payload, options)

@Deprecated(RENAMED, ReplaceWith("awaitCall(function, text)", "io.jrdma.kotlin.awaitCall"), DeprecationLevel.WARNING)
public suspend fun RpcClient.callAwait(function: String, text: String): String = awaitCall(function, text)

@Deprecated(RENAMED, ReplaceWith("awaitCall(function, request, input, output)", "io.jrdma.kotlin.awaitCall"), DeprecationLevel.WARNING)
public suspend fun <I : Any, O : Any> RpcClient.callAwait(function: String, request: I, input: Codec<I>, output: Codec<O>): O =
    awaitCall(function, request, input, output)

@Deprecated(RENAMED, ReplaceWith("awaitDispose()", "io.jrdma.kotlin.awaitDispose"), DeprecationLevel.WARNING)
public suspend fun RpcClient.closeAwait(): Unit = awaitDispose()

@Deprecated(RENAMED, ReplaceWith("coRegister(name, handler)", "io.jrdma.kotlin.coRegister"), DeprecationLevel.WARNING)
public fun RpcServer.registerSuspend(name: String, handler: suspend (RpcRequest) -> ByteArray): RpcServer = coRegister(name, handler)

@Deprecated(RENAMED, ReplaceWith("awaitBind()", "io.jrdma.kotlin.awaitBind"), DeprecationLevel.WARNING)
public suspend fun RpcServer.bindAwait(): DisposableRpcServer = awaitBind()

@Deprecated(ONE_LIFECYCLE, ReplaceWith("awaitDispose()", "io.jrdma.kotlin.awaitDispose"), DeprecationLevel.WARNING)
public suspend fun RpcClient.awaitClose(): Unit = awaitDispose()

@Deprecated(ONE_LIFECYCLE, ReplaceWith("awaitOnDispose()", "io.jrdma.kotlin.awaitOnDispose"), DeprecationLevel.WARNING)
public suspend fun RpcClient.awaitOnClose(): Unit = awaitOnDispose()
