package io.jrdma.kotlin

import io.jrdma.ffm.Access
import io.jrdma.reactive.RdmaClient
import io.jrdma.reactive.RdmaServer

/**
 * The README's Kotlin example (and docs/kotlin.md's), between the README markers, compiled with
 * the tests and never run (the device tests run the same calls against rxe): if the API it shows
 * changes, the build fails here, and ReadmeSnippetTest fails if a page and these lines differ.
 */
@Suppress("unused", "UNUSED_VARIABLE")
internal suspend fun readmeKotlinExample() {
    // README: kotlin
    RdmaServer.create().host("10.77.0.2").exposeBuffer(4096, Access.REMOTE_READ, Access.REMOTE_WRITE)
        .awaitBind().handle { c ->                                              // a coroutine per connection
            c.receivesFlow().collect { m -> m.use { c.awaitSend(it.bytes()) } }   // echo
        }

    RdmaClient.create().host("10.77.0.2").localAddress("10.77.0.1").awaitConnect().use { c ->
        c.awaitSend("hello")
        println(c.awaitReceive().use { it.text() })
        c.awaitWriteWithImmediate("data".toByteArray(), immediate = 4)     // into c.remoteBuffer()
        val bytes = c.awaitRead(sourceOffset = 0, length = 4)
        val previous = c.awaitFetchAndAdd(offset = 64, add = 1)
    }
    // README end
}

/** docs/kotlin.md's client `coHandle { }` example, compiled and never run (ClientHandleTest runs the same calls against rxe). */
@Suppress("unused")
internal suspend fun clientCoHandleExample() {
    // README: client coHandle
    val conn = RdmaClient.create().host("10.77.0.2").localAddress("10.77.0.1")
        .coHandle { c ->                                                    // on the connection's loop, not blocking
            c.awaitSend("ping")
            println(c.awaitReceive().use { it.text() })
        }                                                                   // returned: the connection is disposed
        .awaitConnect()
    conn.awaitOnDispose()
    // README end
}
