package com.example.rsocket

import io.jrdma.reactive.RdmaClient
import io.jrdma.rsocket.RdmaClientTransport
import org.springframework.beans.factory.annotation.Value
import org.springframework.context.annotation.Bean
import org.springframework.context.annotation.Configuration
import org.springframework.messaging.rsocket.RSocketRequester

/**
 * The client side: Boot's [RSocketRequester.Builder] (its codecs, its `RSocketConnectorConfigurer`s)
 * with jrdma's transport where `.tcp(host, port)` would be. The requester connects on its first
 * request, and again after its connection closed.
 */
@Configuration(proxyBeanMethods = false)
class ClientConfiguration {

    @Bean(destroyMethod = "dispose")
    fun echoRequester(
        builder: RSocketRequester.Builder,
        rdmaClient: RdmaClient,
        @Value("\${sample.server.host}") host: String,
        @Value("\${sample.server.port}") port: Int,
    ): RSocketRequester = builder.transport(RdmaClientTransport.create(rdmaClient, host, port))

    @Bean
    fun echoClient(echoRequester: RSocketRequester): EchoClient = EchoClient(echoRequester)
}
