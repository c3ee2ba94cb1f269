package io.jrdma.samples

import io.jrdma.kotlin.awaitBind
import io.jrdma.kotlin.awaitReceive
import io.jrdma.kotlin.awaitDispose
import io.jrdma.kotlin.awaitSend
import io.jrdma.kotlin.handle
import io.jrdma.kotlin.receivesFlow
import io.jrdma.kotlin.use
import io.jrdma.reactive.DisposableRdmaServer
import io.jrdma.reactive.RdmaConnection
import io.jrdma.reactive.RdmaServer
import java.io.PrintStream
import java.util.concurrent.atomic.AtomicInteger
import kotlin.time.Duration
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.withTimeout

/**
 * A small coroutine service on jrdma's suspend API: whatever a client SENDs comes back to it.
 * One coroutine per client ([handle]). Structured: when [serve] ends or is cancelled, every
 * client's coroutine is cancelled, each connection closed (its in-flight SENDs flushed first), and
 * the server disposed; a client whose echo fails loses its connection, the others keep theirs.
 */
class EchoService(private val server: RdmaServer, private val out: PrintStream = System.out) {
    /** Serves [clients] clients (null: until cancelled); [onListening] learns where. */
    suspend fun serve(clients: Int? = null, onListening: (DisposableRdmaServer) -> Unit = {}) {
        server.awaitBind().use { bound ->
            onListening(bound)
            val served = AtomicInteger()
            bound.handle { c ->
                echo(c)
                if (served.incrementAndGet() == clients) bound.awaitDispose()  // the last one: handle returns
            }
        }
    }

    private suspend fun echo(c: RdmaConnection) {
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
