package io.jrdma.kotlin.device

import io.jrdma.kotlin.awaitAcquire
import io.jrdma.kotlin.awaitByteChange
import io.jrdma.kotlin.awaitWordChange
import io.jrdma.kotlin.awaitWrite
import java.lang.foreign.ValueLayout
import java.util.concurrent.locks.LockSupport
import kotlin.time.Duration.Companion.seconds
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.async
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.launch
import kotlinx.coroutines.test.runTest
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Tag
import org.junit.jupiter.api.Test

/** The suspend forms of one-sided waits on rxe: a WRITE ping-pong on watched words, and a cancelled wait. */
@Tag("device")
class OneSidedWaitTest {
    @Test
    fun `a ping-pong of writes suspends on watched words, with no receive`() = runTest(timeout = 90.seconds) {
        withLabPair { p ->
            val rounds = 100
            val serverBox = p.accepted.exposedBuffer()
            val clientBox = p.client.exposedBuffer()
            val serverSource = p.accepted.buffers().awaitAcquire()
            val clientSource = p.client.buffers().awaitAcquire()
            val receives = p.accepted.receivesPosted()
            val pings = async {
                (1..rounds).map { i ->
                    val ping = p.accepted.awaitWordChange(offset = 0, current = i - 1L)
                    serverSource.segment().set(ValueLayout.JAVA_LONG, 0, ping)
                    p.accepted.awaitWrite(serverSource, 0, 8, targetOffset = 8)
                    ping
                }
            }
            val pongs = (1..rounds).map { i ->
                clientSource.segment().set(ValueLayout.JAVA_LONG, 0, i.toLong())
                p.client.awaitWrite(clientSource, 0, 8, targetOffset = 0)
                p.client.awaitWordChange(clientBox, 8, i - 1L)
            }
            val expected = (1..rounds).map { it.toLong() }
            assertEquals(expected, pongs)
            assertEquals(expected, pings.await())
            assertEquals(receives, p.accepted.receivesPosted(), "no receive consumed")
            assertEquals(1, serverBox.refCount())
            serverSource.release()
            clientSource.release()
        }
    }

    @Test
    fun `cancelling the coroutine ends the wait and gives the buffer back`() = runTest(timeout = 90.seconds) {
        withLabPair { p ->
            val box = p.client.exposedBuffer()
            val wait = launch(start = CoroutineStart.UNDISPATCHED) { p.client.awaitByteChange(box, 99, 0) }
            assertEquals(2, box.refCount(), "the wait holds the buffer")
            wait.cancelAndJoin()
            val deadline = System.nanoTime() + 20_000_000_000L
            while (box.refCount() != 1 && System.nanoTime() < deadline) LockSupport.parkNanos(10_000_000)
            assertEquals(1, box.refCount(), "the loop took the cancelled wait out")
        }
    }
}
