package com.example.rsocket

import kotlinx.coroutines.flow.Flow
import org.springframework.messaging.rsocket.RSocketRequester
import org.springframework.messaging.rsocket.dataWithType
import org.springframework.messaging.rsocket.retrieveAndAwait
import org.springframework.messaging.rsocket.retrieveFlow

/** [EchoController]'s routes as suspend functions and Flows, over whichever transport [requester] has. */
class EchoClient(private val requester: RSocketRequester) {

    /** Request-response. */
    suspend fun echo(text: String): String = requester.route("echo").data(text).retrieveAndAwait()

    /** Request-stream: the items arrive as the Flow's collector asks for them (RSocket's REQUEST_N). */
    fun count(n: Int): Flow<Item> = requester.route("count").data(n).retrieveFlow()

    /** Request-channel: [words] go out as the server asks for them, and come back in upper case. */
    fun uppercase(words: Flow<String>): Flow<String> = requester.route("uppercase").dataWithType(words).retrieveFlow()
}
