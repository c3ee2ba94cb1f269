package io.jrdma.samples

import io.jrdma.kotlin.awaitBind
import io.jrdma.kotlin.awaitReceive
import io.jrdma.kotlin.awaitSend
import io.jrdma.kotlin.connectionsFlow
import io.jrdma.kotlin.receivesFlow
import io.jrdma.kotlin.use
import io.jrdma.reactive.DisposableRdmaServer
import io.jrdma.reactive.RdmaConnection
import io.jrdma.reactive.RdmaServer
import java.io.PrintStream
import kotlin.time.Duration
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.launch
import kotlinx.coroutines.withTimeout

/**
 * A small coroutine service on jrdma's suspend API: whatever a client SENDs comes back to it.
 * One coroutine per client. Structured: when [serve] ends or is cancelled, every client's
 * coroutine is cancelled, each connection closed (its in-flight SENDs flushed first), and then
 * the server disposed.
 */
class EchoService(private val server: RdmaServer, private val out: PrintStream = System.out) {
    /** Serves [clients] clients (null: until cancelled); [onListening] learns where. */
    suspend fun serve(clients: Int? = null, onListening: (DisposableRdmaServer) -> Unit = {}) {
        server.awaitBind().use { bound ->
            onListening(bound)
            coroutineScope {
                bound.connectionsFlow().limit(clients).collect { connection -> launch { echo(connection) } }
            }
        }
    }

    private suspend fun echo(connection: RdmaConnection) = connection.use { c ->
        out.println("client connected: $c")
        c.receivesFlow().collect { message ->
            message.use { m ->
                out.println("echoing: ${m.text()}")
                // straight from the receive buffer, no copy; it is re-posted only after the SEND completed
                c.awaitSend(m.buffer(), 0, m.length())
            }
        }
        out.println("client disconnected")
    }

    private fun <T> Flow<T>.limit(n: Int?): Flow<T> = if (n == null) this else take(n)
}

/** The client side: sends each line and prints the echo, each round trip within [timeout]. */
suspend fun echoLines(connection: RdmaConnection, lines: Flow<String>, timeout: Duration, out: PrintStream = System.out) {
    lines.collect { line ->
        val echo = withTimeout(timeout) {
            connection.awaitSend(line)
            out.println("sent: $line")
            connection.awaitReceive().use { it.text() }
        }
        out.println("echoed: $echo")
    }
}
