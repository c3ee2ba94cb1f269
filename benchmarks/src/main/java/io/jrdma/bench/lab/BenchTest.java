package io.jrdma.bench.lab;

import java.util.Locale;

/**
 * The tests of the matrix, each named after the perftest program it stands beside. A latency row
 * reports what that program reports: half the round trip for the ping-pongs (send_lat, write_lat),
 * the whole operation for read_lat. The RPC rows stand beside ib_send_lat of the same size and
 * polling: one call is one SEND each way, one of ib_send_lat's exchanges. The stream rows stand
 * beside ib_send_bw of the same size and polling: one message is one SEND, as one of its iterations.
 */
enum BenchTest {
    WRITE_BW("ib_write_bw", true, false, false),
    SEND_BW("ib_send_bw", true, false, true),
    READ_BW("ib_read_bw", true, false, true),
    WRITE_LAT("ib_write_lat", false, true, false),
    /**
     * write_lat with one-sided waits: each end waits for the last byte of the other's WRITE to change
     * ({@code RdmaConnection.byteChange}, Kotlin's {@code awaitByteChange}), as ib_write_lat spins on it, and no
     * receive is posted for it; beside ib_write_lat (write_lat's perftest run when there is one). The reactive and
     * Kotlin forms only: rdma-ffm's write_lat already spins on memory.
     */
    WRITE_LAT_POLL("ib_write_lat", false, true, false),
    SEND_LAT("ib_send_lat", false, true, true),
    READ_LAT("ib_read_lat", false, false, true),
    /** Sequential calls of a small echo function: the round trip, beside ib_send_lat's (twice what it reports). */
    RPC_LAT("ib_send_lat", false, false, true),
    /** Calls per second with the in-flight depth of the row: no perftest counterpart, ib_send_lat's exchanges/s for scale. */
    RPC_RATE("ib_send_lat", true, false, true),
    /**
     * As {@link #RPC_LAT} with the echo on the server's poller thread ({@code handlerScheduler(Schedulers.immediate())}),
     * like with like beside ib_send_lat, whose server answers in its polling loop; RPC_LAT keeps the default
     * scheduler, where a handler may block.
     */
    RPC_LAT_POLLER("ib_send_lat", false, false, true),
    /** As {@link #RPC_RATE} with the echo on the server's poller thread. */
    RPC_RATE_POLLER("ib_send_lat", true, false, true),
    /**
     * Messages per second of one {@code send(Publisher)} (Kotlin: {@code awaitSend(Flow)}) of all the row's
     * messages, its demand bound to the receiver's credits, the receiver consuming {@code receives()} and
     * releasing each: beside ib_send_bw's of the same size and polling. A message above the receive buffer
     * (lab/bench's --stream-buffer) goes by rendezvous, the receiver READing it: beside ib_read_bw's.
     */
    STREAM_BW("ib_send_bw", true, false, true),
    /**
     * The RSocket layers only: messages per second of one request-channel whose responder echoes what it receives,
     * counted as the echoes arrive at the client, the client's demand (REQUEST_N) bounding what is in flight; beside
     * ib_send_bw as {@link #STREAM_BW} (each message crosses twice).
     */
    CHANNEL_BW("ib_send_bw", true, false, true);

    /** The perftest program of the row (for the RPC rows: the one they stand beside). */
    final String perftest;
    /** A rate (messages or calls per second), not a latency. */
    final boolean rate;
    /** perftest reports half the round trip of a ping-pong. */
    final boolean halfRoundTrip;
    /** perftest 4.5 has {@code -e} (sleep on CQ events) for this program. */
    final boolean perftestEvents;

    BenchTest(String perftest, boolean rate, boolean halfRoundTrip, boolean perftestEvents) {
        this.perftest = perftest;
        this.rate = rate;
        this.halfRoundTrip = halfRoundTrip;
        this.perftestEvents = perftestEvents;
    }

    /** {@return the name in the table and on the command line: write_bw, rpc_lat, ...} */
    String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    boolean rpc() {
        return this == RPC_LAT || this == RPC_RATE || this == RPC_LAT_POLLER || this == RPC_RATE_POLLER;
    }

    /** An RPC row whose server runs the echo on its poller thread rather than on the default handler scheduler. */
    boolean handlerOnPoller() {
        return this == RPC_LAT_POLLER || this == RPC_RATE_POLLER;
    }

    /**
     * The test whose perftest run this one's stands beside when lab/bench ran none of its own (matrix
     * status "reference"): ib_send_lat's for the RPC rows, ib_send_bw's for the stream rows, ib_write_lat's
     * (write_lat's) for write_lat_poll.
     */
    BenchTest reference() {
        return rpc() ? SEND_LAT : stream() ? SEND_BW : this == WRITE_LAT_POLL ? WRITE_LAT : this;
    }

    /** A stream of the row's messages (stream_bw, channel_bw): its receive buffers are lab/bench's --stream-buffer. */
    boolean stream() {
        return this == STREAM_BW || this == CHANNEL_BW;
    }

    /** No rdma-ffm form: the RPC rows, the stream rows and write_lat_poll are the reactive API's (and Kotlin's; RSocket's where it has them). */
    boolean apiOnly() {
        return rpc() || stream() || this == WRITE_LAT_POLL;
    }

    /** The server end only holds memory: it posts nothing and polls nothing, like perftest's server. */
    boolean passiveServer() {
        return this == WRITE_BW || this == READ_BW || this == READ_LAT;
    }

    static BenchTest of(String label) {
        return valueOf(label.toUpperCase(Locale.ROOT));
    }
}
