package io.jrdma.kotlin.device

import io.jrdma.kotlin.awaitAccept
import io.jrdma.kotlin.awaitBind
import io.jrdma.kotlin.awaitConnect
import io.jrdma.kotlin.awaitDispose
import io.jrdma.kotlin.awaitOnDispose
import io.jrdma.kotlin.awaitReceive
import io.jrdma.kotlin.awaitSend
import io.jrdma.kotlin.handle
import io.jrdma.kotlin.receivesFlow
import io.jrdma.kotlin.use
import io.jrdma.reactive.ConnectionException
import io.jrdma.reactive.RdmaConnection
import io.jrdma.reactive.RdmaResources
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitCancellation
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

/** The suspend `handle { }` keeps its rules: a coroutine per connection, a failure costs its connection only, cancelling disposes. */
@Tag("device")
class HandleTest {
    private suspend fun echo(c: RdmaConnection) = c.receivesFlow().collect { m ->
        m.use {
            if (it.text() == "fail") throw IllegalStateException("this handler fails")
            c.awaitSend(it.text())
        }
    }

    private suspend fun RdmaConnection.roundTrip(text: String): String {
        awaitSend(text)
        return awaitReceive().use { it.text() }
    }

    @Test
    fun `two clients at once are echoed, and a failing handler closes its own connection only`() = runTest(timeout = 90.seconds) {
        val server = LabPair.server().awaitBind()
        val serving = launch(start = CoroutineStart.UNDISPATCHED) { server.handle { c -> echo(c) } }
        LabPair.client(server).awaitConnect().use { a ->
            LabPair.client(server).awaitConnect().use { b ->
                assertEquals("a", a.roundTrip("a"))
                assertEquals("b", b.roundTrip("b"))
                a.awaitSend("fail")
                a.awaitOnDispose()  // the server closed a's connection after its handler failed
                assertEquals("b again", b.roundTrip("b again"))
            }
        }
        assertTrue(serving.isActive, "the server goes on serving")
        serving.cancelAndJoin()
        assertTrue(server.isDisposed, "cancelling handle disposed the server")
    }

    @Test
    fun `cancelling handle cancels the handlers, closes their connections and disposes the server`() = runTest(timeout = 90.seconds) {
        val server = LabPair.server().awaitBind()
        val handling = CompletableDeferred<Unit>()
        val serving = launch(start = CoroutineStart.UNDISPATCHED) {
            server.handle { handling.complete(Unit); awaitCancellation() }
        }
        LabPair.client(server).awaitConnect().use { client ->
            handling.await()
            serving.cancelAndJoin()
            client.awaitOnDispose()
        }
        assertTrue(server.isDisposed)
        assertThrows<ConnectionException.Closed> { server.awaitAccept() }
    }

    @Test
    fun `disposing the server elsewhere ends handle once its handlers ended`() = runTest(timeout = 90.seconds) {
        RdmaResources.create("handle-test", 1).use { resources ->
            val server = LabPair.server().runOn(resources).awaitBind()
            val connected = CompletableDeferred<Unit>()
            val serving = async(start = CoroutineStart.UNDISPATCHED) {
                server.handle { c -> connected.complete(Unit); echo(c) }
                "returned"
            }
            val client = LabPair.client(server).runOn(resources).awaitConnect()
            connected.await()
            server.awaitDispose()
            assertEquals("returned", serving.await())
            client.awaitOnDispose()
        }
    }
}
