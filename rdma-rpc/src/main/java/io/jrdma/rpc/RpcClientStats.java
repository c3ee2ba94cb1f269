package io.jrdma.rpc;

/**
 * Counters of one client, as a snapshot.
 *
 * @param calls               calls subscribed
 * @param attempts            requests sent (first attempts, retries and window upgrades)
 * @param retries             attempts after a timeout or OVERLOADED
 * @param succeeded           calls that got OK
 * @param failed              calls that ended in an error (timeouts included)
 * @param timeouts            attempts that timed out
 * @param lateResponses       answers that arrived after their attempt had timed out (their credit came back then)
 * @param unexpectedResponses answers to no outstanding request
 * @param protocolErrors      answers that failed validation (checksum, magic, lengths)
 * @param outstanding         requests sent and not yet answered, timed-out ones included
 * @param credits             requests that may be sent now without waiting
 * @param window              the credit window: calls outstanding at most (the server's receive depth, bounded by ours)
 */
public record RpcClientStats(long calls, long attempts, long retries, long succeeded, long failed, long timeouts,
                             long lateResponses, long unexpectedResponses, long protocolErrors, int outstanding, int credits,
                             int window) {}
