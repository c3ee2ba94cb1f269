package com.example.rsocket

import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.flow.asFlow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test
import org.springframework.beans.factory.annotation.Autowired
import org.springframework.beans.factory.annotation.Value
import org.springframework.boot.test.context.SpringBootTest
import org.springframework.test.context.DynamicPropertyRegistry
import org.springframework.test.context.DynamicPropertySource
import kotlin.time.Duration.Companion.seconds

/**
 * The sample application as it is, its server on rxe1 and its client (the [EchoClient] bean) from
 * rxe0: each of RSocket's interaction models over RDMA, through Spring's messaging both ways. The
 * lab's guest runs it (`lab/example-project examples/spring-rsocket`); a host build leaves it out.
 */
@Tag("device")
@SpringBootTest
class EchoOverRdmaDeviceTest {

    companion object {
        /** A cold JVM's first connect under emulation took 26-40 s; any test may be the first. */
        private val TIMEOUT = 90.seconds

        @JvmStatic
        @DynamicPropertySource
        fun lab(registry: DynamicPropertyRegistry) {
            registry.add("jrdma.rsocket.server.host") { System.getenv("RXE_IP_B") ?: "10.77.0.2" }
            registry.add("jrdma.rsocket.client.local-address") { System.getenv("RXE_IP_A") ?: "10.77.0.1" }
        }
    }

    @Autowired
    lateinit var client: EchoClient

    @Value("\${jrdma.rsocket.server.port}")
    var configuredPort: Int = 0

    /** What Boot's bootstrap publishes once the server listens (RSocketServerInitializedEvent). */
    @Value("\${local.rsocket.server.port}")
    var listeningPort: Int = 0

    @Test
    fun bootsBootstrapStartedTheRdmaServerAndPublishedItsPort() {
        assertEquals(configuredPort, listeningPort)
    }

    @Test
    fun requestResponse() = runBlocking {
        withTimeout(TIMEOUT) {
            assertEquals("echo hello, rdma", client.echo("hello, rdma"))
        }
    }

    @Test
    fun aStreamOfAThousandItemsArrivesWholeAndInOrder() = runBlocking {
        withTimeout(TIMEOUT) {
            val items = client.count(1_000).toList()
            assertEquals((1..1_000).map { Item(it, "item $it") }, items)
        }
    }

    @Test
    fun aChannelAnswersEveryWordInOrder() = runBlocking {
        withTimeout(TIMEOUT) {
            val words = (1..500).map { "word $it" }
            assertEquals(words.map { it.uppercase() }, client.uppercase(words.asFlow()).toList())
        }
    }

    @Test
    fun requestsInFlightAtOnceEachGetTheirOwnAnswer() = runBlocking {
        withTimeout(TIMEOUT) {
            val answers = (1..100).map { async { client.echo("request $it") } }.awaitAll()
            assertEquals((1..100).map { "echo request $it" }, answers)
        }
    }
}
