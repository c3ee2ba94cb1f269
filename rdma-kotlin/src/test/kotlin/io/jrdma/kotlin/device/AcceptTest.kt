package io.jrdma.kotlin.device

import io.jrdma.kotlin.awaitAccept
import io.jrdma.kotlin.awaitBind
import io.jrdma.kotlin.awaitConnect
import io.jrdma.kotlin.awaitReceive
import io.jrdma.kotlin.awaitSend
import io.jrdma.kotlin.connectionsFlow
import io.jrdma.kotlin.use
import io.jrdma.reactive.ConnectionException
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.assertThrows

@Tag("device")
class AcceptTest {
    @Test
    fun `one server accepts client after client, through accept and connectionsFlow alike`() = runTest(timeout = 90.seconds) {
        LabPair.server().awaitBind().use { server ->
            for (i in 1..3) {
                // accept() and connections() take one connection each, whoever asks
                val accepted = async(start = CoroutineStart.UNDISPATCHED) {
                    if (i == 2) server.connectionsFlow().first() else server.awaitAccept()
                }
                LabPair.client(server).awaitConnect().use { client ->
                    accepted.await().use { c ->
                        client.awaitSend("client $i")
                        assertEquals("client $i", c.awaitReceive().use { it.text() })
                    }
                }
            }
            server.dispose()
            assertThrows<ConnectionException.Closed> { server.awaitAccept() }
        }
    }
}
