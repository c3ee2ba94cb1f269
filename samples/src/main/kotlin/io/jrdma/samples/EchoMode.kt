package io.jrdma.samples

import io.jrdma.kotlin.awaitConnect
import java.util.concurrent.Callable
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.flowOn
import picocli.CommandLine.Command
import picocli.CommandLine.Mixin

/**
 * `rdma echo [SERVER]`: [EchoService], the Kotlin sample, on the command line. The client sends
 * the lines of its stdin and prints each echo.
 *
 * Wire: one SEND per line each way.
 */
@Command(name = "echo", mixinStandardHelpOptions = true,
    description = ["Kotlin coroutine echo service: the server sends back every message; the client sends lines."])
class EchoMode : Callable<Int> {
    @Mixin
    private lateinit var options: ModeOptions

    override fun call(): Int {
        options.requireJrdmaPeer("echo")
        return Session(options).use { session ->
            runBlocking {
                if (options.isClient) client(session) else server(session)
            }
        }
    }

    private suspend fun server(session: Session): Int {
        val service = EchoService(options.rdmaServer().runOn(session.resources))
        service.serve(clients = if (options.keepServing) null else 1) { bound -> session.listening("echo", bound) }
        return 0
    }

    private suspend fun client(session: Session): Int {
        val connection = session.connected("echo", options.rdmaClient().runOn(session.resources).awaitConnect())
        val stdin = System.`in`.bufferedReader()
        // reading stdin blocks: on an IO thread, not on runBlocking's one thread, which the replies resume on
        val lines = flow { while (true) emit(stdin.readLine() ?: break) }.flowOn(Dispatchers.IO)
        echoLines(connection, lines, options.timeoutSeconds.seconds)
        return 0
    }
}
