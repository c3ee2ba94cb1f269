package com.example.rsocket

import io.jrdma.spring.rsocket.RdmaRSocketAutoConfiguration
import kotlinx.coroutines.flow.asFlow
import kotlinx.coroutines.flow.take
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Test
import org.springframework.beans.factory.annotation.Autowired
import org.springframework.beans.factory.annotation.Value
import org.springframework.boot.autoconfigure.EnableAutoConfiguration
import org.springframework.boot.test.context.SpringBootTest
import org.springframework.context.annotation.Configuration
import org.springframework.context.annotation.Import
import org.springframework.messaging.rsocket.RSocketRequester
import kotlin.time.Duration.Companion.seconds

/**
 * The application's routes and its Kotlin client, on any host: over Boot's own TCP server, what
 * [EchoOverRdmaDeviceTest] checks over RDMA in the lab (codecs, routes, the Flow both ways), so a
 * fault of the application's own shows here first.
 */
@SpringBootTest(
    classes = [EchoOverTcpTest.TcpApplication::class],
    properties = ["spring.rsocket.server.port=0", "spring.rsocket.server.address=127.0.0.1"],
)
class EchoOverTcpTest {

    /** The controller with Boot's auto-configuration, this sample's RDMA one left out. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration(exclude = [RdmaRSocketAutoConfiguration::class])
    @Import(EchoController::class)
    class TcpApplication

    @Autowired
    lateinit var builder: RSocketRequester.Builder

    @Value("\${local.rsocket.server.port}")
    var port: Int = 0

    private fun <T> withClient(test: suspend (EchoClient) -> T): T {
        val requester = builder.tcp("127.0.0.1", port)
        try {
            return runBlocking { withTimeout(30.seconds) { test(EchoClient(requester)) } }
        } finally {
            requester.dispose()
        }
    }

    @Test
    fun requestResponse() = withClient { client ->
        assertEquals("echo hello", client.echo("hello"))
    }

    @Test
    fun aStreamOfAThousandItemsArrivesWholeAndInOrder() = withClient { client ->
        assertEquals((1..1_000).map { Item(it, "item $it") }, client.count(1_000).toList())
    }

    @Test
    fun aCollectorThatStopsEarlyCancelsTheStream() = withClient { client ->
        assertEquals(listOf(Item(1, "item 1"), Item(2, "item 2")), client.count(Int.MAX_VALUE).take(2).toList())
    }

    @Test
    fun aChannelAnswersEveryWordInOrder() = withClient { client ->
        val words = (1..500).map { "word $it" }
        assertEquals(words.map { it.uppercase() }, client.uppercase(words.asFlow()).toList())
    }
}
