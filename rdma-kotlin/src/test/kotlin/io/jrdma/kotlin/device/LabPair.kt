package io.jrdma.kotlin.device

import io.jrdma.ffm.Access
import io.jrdma.kotlin.awaitAccept
import io.jrdma.kotlin.awaitBind
import io.jrdma.kotlin.awaitDispose
import io.jrdma.kotlin.awaitConnect
import io.jrdma.reactive.DisposableRdmaServer
import io.jrdma.reactive.RdmaClient
import io.jrdma.reactive.RdmaConnection
import io.jrdma.reactive.RdmaServer
import io.jrdma.reactive.Transport
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.NonCancellable
import kotlinx.coroutines.async
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.withContext

/** The lab's two hosts, connected with the suspend API: server on rxe1 (10.77.0.2), client on rxe0 (10.77.0.1). */
class LabPair(val server: DisposableRdmaServer, val client: RdmaConnection, val accepted: RdmaConnection) {
    companion object {
        val SERVER_IP: String = System.getenv("RXE_IP_B") ?: "10.77.0.2"
        val CLIENT_IP: String = System.getenv("RXE_IP_A") ?: "10.77.0.1"

        fun server(): RdmaServer =
            RdmaServer.create().host(SERVER_IP).port(0)
                .exposeBuffer(1 shl 16, Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC)

        fun client(server: DisposableRdmaServer): RdmaClient =
            RdmaClient.create().host(SERVER_IP).port(server.address().port).localAddress(CLIENT_IP)
                .exposeBuffer(1 shl 16, Access.REMOTE_READ, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC)

        /** Binds, connects and accepts; [configure] adjusts the client (queue depths, buffers). */
        suspend fun connect(
            transport: Transport = Transport.RDMA_CM,
            configure: (RdmaClient) -> RdmaClient = { it },
        ): LabPair = coroutineScope {
            val server = server().transport(transport).awaitBind()
            val accepted = async { server.awaitAccept() }
            val client = configure(client(server)).transport(transport).awaitConnect()
            LabPair(server, client, accepted.await())
        }
    }

    suspend fun close() = withContext(NonCancellable + Dispatchers.IO) {
        client.awaitDispose()
        accepted.awaitDispose()
        server.awaitDispose()
    }
}

/** Runs [block] on a connected pair and closes it afterwards. */
suspend fun <R> withLabPair(
    transport: Transport = Transport.RDMA_CM,
    configure: (RdmaClient) -> RdmaClient = { it },
    block: suspend (LabPair) -> R,
): R {
    val pair = LabPair.connect(transport, configure)
    try {
        return block(pair)
    } finally {
        pair.close()
    }
}
