package io.jrdma.rpc;

/**
 * Counters of a running server, as a snapshot. Every frame the server received ends in exactly
 * one of: {@code dropped}, {@code rejected}, {@code unknownFunction}, {@code overloaded},
 * {@code hellos}, {@code replayed}, {@code joined}, or an execution ({@code executed}); once its
 * receive buffer is posted again it counts in {@code framesDone}.
 *
 * @param connectionsAccepted connections accepted since the server started
 * @param connectionsOpen   connections open now
 * @param frames            SENDs received (and WRITE_WITH_IMM notifications, which are dropped)
 * @param framesDone        of those, whose receive buffer went back to the receive queue
 * @param dropped           unusable frames (truncated header, bad magic/version, header checksum): no answer, a log line
 * @param rejected          answered BAD_REQUEST (bad field or descriptor, payload checksum, duplicate id, key conflict)
 * @param unknownFunction   answered UNKNOWN_FUNCTION
 * @param overloaded        answered OVERLOADED (no handler slot or staging memory)
 * @param hellos            protocol hellos answered
 * @param executed          handler invocations
 * @param handlerErrors     of those, failed (threw, error, timeout)
 * @param replayed          keyed retries answered from the result table without executing
 * @param joined            keyed retries that arrived while the first attempt was running, answered with its result
 * @param payloadsFetched   request payloads fetched with RDMA READ
 * @param responsesSent     response SENDs completed
 * @param responsesWritten  responses written into a client's window with WRITE_WITH_IMM
 * @param responsesTooLarge results that fit no buffer nor window (answered RESPONSE_TOO_LARGE)
 * @param responseFailures  responses that could not be delivered (connection gone)
 * @param running           handlers running now
 * @param resultTableSize   idempotency keys remembered now
 */
public record RpcServerStats(long connectionsAccepted, long connectionsOpen, long frames, long framesDone, long dropped,
                             long rejected, long unknownFunction, long overloaded, long hellos, long executed,
                             long handlerErrors, long replayed, long joined, long payloadsFetched, long responsesSent,
                             long responsesWritten, long responsesTooLarge, long responseFailures, long running,
                             long resultTableSize) {
    /** {@return the frames that were turned away without running anything: dropped, rejected, unknown function or overloaded} */
    public long refused() {
        return dropped + rejected + unknownFunction + overloaded;
    }
}
