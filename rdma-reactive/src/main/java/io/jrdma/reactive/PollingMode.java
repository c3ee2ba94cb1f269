package io.jrdma.reactive;

/**
 * How a connection's poller waits for completions, and how often it reads the words of one-sided
 * waits ({@link RdmaConnection#wordChange}): on every pass while it spins, and every millisecond
 * while it sleeps with a wait pending.
 */
public enum PollingMode {
    /** Spin on ibv_poll_cq: lowest latency, one core per poller. */
    BUSY,
    /** Sleep on the completion channel: no CPU while idle, a wake-up per burst (and per millisecond while a one-sided wait is pending). */
    EVENT,
    /** Spin briefly after each completion (or changed word of a one-sided wait), then arm the channel and sleep. */
    ADAPTIVE
}
