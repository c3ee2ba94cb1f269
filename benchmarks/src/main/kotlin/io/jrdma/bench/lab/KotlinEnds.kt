package io.jrdma.bench.lab

import io.jrdma.kotlin.awaitAccept
import io.jrdma.kotlin.awaitBind
import io.jrdma.kotlin.awaitByteChange
import io.jrdma.kotlin.awaitCall
import io.jrdma.kotlin.awaitConnect
import io.jrdma.kotlin.awaitRead
import io.jrdma.kotlin.awaitReceive
import io.jrdma.kotlin.awaitRpcConnect
import io.jrdma.kotlin.awaitSend
import io.jrdma.kotlin.awaitWrite
import io.jrdma.kotlin.awaitWriteWithImmediate
import io.jrdma.kotlin.coRegister
import io.jrdma.kotlin.receivesFlow
import io.jrdma.kotlin.use
import io.jrdma.reactive.DisposableRdmaServer
import io.jrdma.reactive.OperationTimeoutException
import io.jrdma.reactive.RdmaConnection
import io.jrdma.rpc.DisposableRpcServer
import io.jrdma.rpc.RpcClient
import io.jrdma.rpc.RpcServer
import java.lang.foreign.ValueLayout
import java.util.concurrent.TimeoutException
import java.util.concurrent.atomic.AtomicInteger
import kotlinx.coroutines.CoroutineExceptionHandler
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.SupervisorJob
import kotlinx.coroutines.TimeoutCancellationException
import kotlinx.coroutines.cancel
import kotlinx.coroutines.coroutineScope
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withContext
import kotlinx.coroutines.withTimeout

/**
 * The Kotlin layer: rdma-kotlin's suspend functions at both ends, on the same connection settings
 * as the reactive layer. Bandwidth rows run one coroutine per operation in flight (a window of
 * `depth` coroutines taking the next index as each operation completes); latency rows one
 * coroutine, `awaitSend` then `awaitReceive` (write_lat: `awaitWriteWithImmediate`; write_lat_poll:
 * `awaitWrite` then `awaitByteChange` on the pong's last byte, no receive), as the
 * README's echo client does; stream_bw one `awaitSend(Flow)` of all the row's messages. Coroutines run in [Dispatchers.Unconfined]: each resumes on the
 * connection's loop thread that completed its operation and posts the next from there, so a row
 * measures the suspend API, not a dispatcher's thread hop.
 */
internal object KotlinEnds {
    @JvmStatic
    fun connect(row: RowSpec, ready: Map<String, String>, control: ControlChannel): Ends.ClientEnd {
        if (row.test().rpc()) {
            val rpc = setUp { ReactiveEnds.client(row, ready).awaitRpcConnect() }
            try {
                control.call("peer", emptyMap(), Ends.SETUP)
            } catch (e: Exception) {
                rpc.disposeNow(Ends.SETUP)
                throw e
            }
            return RpcEnd(row, rpc)
        }
        val conn = setUp { ReactiveEnds.client(row, ready).awaitConnect() }
        try {
            control.call("peer", emptyMap(), Ends.SETUP)
        } catch (e: Exception) {
            conn.disposeNow()
            throw e
        }
        return Client(row, conn)
    }

    @JvmStatic
    fun server(row: RowSpec): Ends.ServerEnd = Server(row)

    private fun <T> setUp(block: suspend () -> T): T = runBlocking { withTimeout(Ends.SETUP.toMillis()) { block() } }

    /** Runs [block] on the unconfined dispatcher until it ends or [deadline] (System.nanoTime) passes; returns its nanoseconds. */
    private fun timed(ops: Int, deadline: Long, done: AtomicInteger, block: suspend () -> Unit): Long = runBlocking {
        val t0 = System.nanoTime()
        try {
            withTimeout(maxOf(1, (deadline - t0) / 1_000_000)) { withContext(Dispatchers.Unconfined) { block() } }
        } catch (e: TimeoutCancellationException) {
            throw TimeoutException("the row's time limit passed after ${done.get()} of $ops operations")
        }
        System.nanoTime() - t0
    }

    /**
     * [depth] coroutines, each taking the next index until [ops] operations were started. Inline, so
     * [op]'s body runs in each coroutine's own frame: called as a suspend lambda it cost a lambda
     * instance, its continuation and a new intercepted continuation per operation (the bench's, not
     * the library's, about a fifth of the Kotlin client's samples in a send_bw profile).
     */
    private suspend inline fun window(ops: Int, depth: Int, done: AtomicInteger, crossinline op: suspend (Int) -> Unit) = coroutineScope {
        val next = AtomicInteger()
        repeat(minOf(depth, ops)) {
            launch {
                while (true) {
                    val i = next.getAndIncrement()
                    if (i >= ops) break
                    op(i)
                    done.incrementAndGet()
                }
            }
        }
    }

    private class Client(private val row: RowSpec, private val conn: RdmaConnection) : Ends.ClientEnd {
        private val local = conn.exposedBuffer()
        private val remote = conn.remoteBuffer()
        private val stride = row.regionBytes() / row.slots()
        /** write_lat_poll: the last byte of the last ping, which the server's pong echoes; kept across runs. */
        private var sequence: Byte = 0

        override fun run(ops: Int, latencies: Latencies?, deadline: Long): Long {
            val size = row.size()
            val slots = row.slots()
            val depth = row.depth()
            val done = AtomicInteger()
            return timed(ops, deadline, done) {
                when (row.test()) {
                    BenchTest.WRITE_BW -> window(ops, depth, done) { i ->
                        conn.awaitWrite(local, i % slots * stride, size, remote, i % slots * stride)
                    }
                    BenchTest.READ_BW -> window(ops, depth, done) { i ->
                        conn.awaitRead(remote, i % slots * stride, size, local, i % slots * stride)
                    }
                    BenchTest.SEND_BW -> window(ops, depth, done) { i -> conn.awaitSend(local, i % slots * stride, size) }
                    BenchTest.STREAM_BW -> {
                        val messages = ReactiveEnds.messages(row, local, stride)
                        // each element with a reference of its own, for the stream to release
                        conn.awaitSend(flow {
                            for (i in 0 until ops) {
                                val m = messages[i % messages.size]
                                m.buffer().retain()
                                emit(m)
                                done.incrementAndGet()
                            }
                        })
                    }
                    BenchTest.SEND_LAT -> repeat(ops) {
                        val start = System.nanoTime()
                        conn.awaitSend(local, stride, size)
                        conn.awaitReceive().use { }
                        latencies!!.record(System.nanoTime() - start)
                        done.incrementAndGet()
                    }
                    BenchTest.WRITE_LAT -> repeat(ops) { i ->
                        val start = System.nanoTime()
                        conn.awaitWriteWithImmediate(local, stride, size, i, remote, 0)
                        conn.awaitReceive().use { }
                        latencies!!.record(System.nanoTime() - start)
                        done.incrementAndGet()
                    }
                    BenchTest.WRITE_LAT_POLL -> repeat(ops) {
                        val start = System.nanoTime()
                        val before = sequence
                        sequence++
                        local.segment().set(ValueLayout.JAVA_BYTE, stride + size - 1, sequence)
                        conn.awaitWrite(local, stride, size, remote, 0)
                        conn.awaitByteChange(local, size - 1L, before)  // the pong lands in slot 0
                        latencies!!.record(System.nanoTime() - start)
                        done.incrementAndGet()
                    }
                    BenchTest.READ_LAT -> repeat(ops) {
                        val start = System.nanoTime()
                        conn.awaitRead(remote, 0, size, local, 0)
                        latencies!!.record(System.nanoTime() - start)
                        done.incrementAndGet()
                    }
                    else -> throw UnsupportedOperationException(row.test().label())
                }
            }
        }

        override fun close() {
            conn.disposeNow()
        }
    }

    private class RpcEnd(private val row: RowSpec, private val rpc: RpcClient) : Ends.ClientEnd {
        private val payload = ReactiveEnds.payload(row)

        override fun run(ops: Int, latencies: Latencies?, deadline: Long): Long {
            val done = AtomicInteger()
            return timed(ops, deadline, done) {
                if (!row.test().rate) {
                    repeat(ops) {
                        val start = System.nanoTime()
                        rpc.awaitCall(ReactiveEnds.ECHO, payload)
                        latencies!!.record(System.nanoTime() - start)
                        done.incrementAndGet()
                    }
                } else {
                    window(ops, row.depth(), done) { rpc.awaitCall(ReactiveEnds.ECHO, payload) }
                }
            }
        }

        override fun close() {
            rpc.disposeNow(Ends.SETUP)
        }
    }

    private class Server(private val row: RowSpec) : Ends.ServerEnd {
        @Volatile
        private var failure: Throwable? = null
        private val scope = CoroutineScope(Dispatchers.Unconfined + SupervisorJob() + CoroutineExceptionHandler { _, t ->
            if (failure == null) failure = t
        })
        private var server: DisposableRdmaServer? = null
        private var rpcServer: DisposableRpcServer? = null
        private var conn: RdmaConnection? = null

        override fun listen(): Map<String, String> {
            if (row.test().rpc()) {
                val s = setUp { ReactiveEnds.rpcServer(RpcServer.create(ReactiveEnds.server(row)).coRegister(ReactiveEnds.ECHO) { it.bytes() }, row).awaitBind() }
                rpcServer = s
                return ControlChannel.map("port", s.address().port)
            }
            val s = setUp { ReactiveEnds.server(row).awaitBind() }
            server = s
            return ControlChannel.map("port", s.address().port)
        }

        override fun accept(control: ControlChannel) {
            server?.let { s ->
                val c = setUp { s.awaitAccept() }
                conn = c
                when (row.test()) {
                    BenchTest.SEND_BW, BenchTest.STREAM_BW -> scope.launch { c.receivesFlow().collect { it.release() } }
                    BenchTest.SEND_LAT -> scope.launch {
                        c.receivesFlow().collect { m -> m.use { c.awaitSend(it.buffer(), 0, it.length()) } }
                    }
                    BenchTest.WRITE_LAT -> {
                        val local = c.exposedBuffer()
                        val remote = c.remoteBuffer()
                        val stride = row.regionBytes() / row.slots()
                        scope.launch {
                            c.receivesFlow().collect { m -> m.use { c.awaitWriteWithImmediate(local, stride, row.size(), it.immediate(), remote, 0) } }
                        }
                    }
                    BenchTest.WRITE_LAT_POLL -> {
                        val local = c.exposedBuffer()
                        val remote = c.remoteBuffer()
                        val stride = row.regionBytes() / row.slots()
                        val last = row.size() - 1L
                        scope.launch {
                            var seen: Byte = 0
                            while (true) {
                                // an idle client (between runs) only times a wait out
                                seen = try { c.awaitByteChange(local, last, seen) } catch (e: OperationTimeoutException) { continue }
                                local.segment().set(ValueLayout.JAVA_BYTE, stride + last, seen)
                                c.awaitWrite(local, stride, row.size(), remote, 0)
                            }
                        }
                    }
                    else -> {}
                }
            }
            val peer = control.receive(Ends.SETUP)
            check(peer != null && peer.verb() == "peer") { "expected the client's peer line, got $peer" }
            control.ok(emptyMap())
        }

        override fun failure(): Throwable? = failure

        override fun close() {
            scope.cancel()
            conn?.disposeNow()
            server?.disposeNow()
            rpcServer?.disposeNow()
        }
    }
}
