package com.example.rsocket

import kotlinx.coroutines.flow.flowOf
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.springframework.boot.ApplicationArguments
import org.springframework.boot.ApplicationRunner
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty
import org.springframework.stereotype.Component
import kotlin.time.Duration.Companion.seconds

/** With `sample.client.demo=true`, calls each route once the application has started, and prints what came back. */
@Component
@ConditionalOnBooleanProperty("sample.client.demo")
class ClientDemo(private val client: EchoClient) : ApplicationRunner {

    override fun run(args: ApplicationArguments) = runBlocking {
        withTimeout(60.seconds) {  // a cold JVM's first connect under emulation takes 26-40 s
            println(client.echo("hello, rsocket over rdma"))
            client.count(3).collect { println(it) }
            client.uppercase(flowOf("rdma", "rsocket", "spring")).collect { println(it) }
        }
    }
}
