package io.jrdma.kotlin.device

import io.jrdma.ffm.Access
import io.jrdma.kotlin.awaitBind
import io.jrdma.kotlin.awaitCall
import io.jrdma.kotlin.awaitRpcConnect
import io.jrdma.kotlin.coRegister
import io.jrdma.kotlin.rpc
import io.jrdma.kotlin.use
import io.jrdma.reactive.RdmaClient
import io.jrdma.reactive.RdmaServer
import io.jrdma.rpc.Codec
import io.jrdma.rpc.RpcException
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows
import reactor.core.publisher.Mono

/** The lambda mode through the suspend API: registered suspend functions called remotely, client and server closed by use { }. */
@Tag("device")
class RpcTest {
    @Test
    fun `a suspend function registered on the server is called remotely and unknown names are refused`() =
        runTest(timeout = 60.seconds) {
            val server = RdmaServer.create().host(System.getenv("RXE_IP_B") ?: "10.77.0.2").port(0).rpc()
                .coRegister("greet") { request -> "hello, ${request.text()}".toByteArray() }
                .coRegister("upper") { request -> request.text().uppercase().toByteArray() }
                .register("sum", Codec.longArray(), Codec.int64()) { values: LongArray -> Mono.just(values.sum()) }
                .awaitBind().use { server ->
                    val client = RdmaClient.create().host(server.address().address.hostAddress).port(server.address().port)
                        .localAddress(System.getenv("RXE_IP_A") ?: "10.77.0.1")
                        .exposeBuffer(1L shl 20, Access.REMOTE_READ, Access.REMOTE_WRITE)
                        .awaitRpcConnect().use { client ->
                            assertEquals("hello, kotlin", client.awaitCall("greet", "kotlin"))
                            assertEquals("UPPER", client.awaitCall("upper", "upper"))
                            assertEquals(6L, client.awaitCall("sum", longArrayOf(1, 2, 3), Codec.longArray(), Codec.int64()))
                            assertThrows<RpcException.UnknownFunction> { client.awaitCall("no-such-function", "x") }
                            client
                        }
                    assertTrue(client.isDisposed, "use { } disposed the client")
                    server
                }
            assertTrue(server.isDisposed, "use { } disposed the server")
        }
}
