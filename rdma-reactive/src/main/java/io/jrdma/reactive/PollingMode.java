package io.jrdma.reactive;

/** How a connection's poller waits for completions. */
public enum PollingMode {
    /** Spin on ibv_poll_cq: lowest latency, one core per poller. */
    BUSY,
    /** Sleep on the completion channel: no CPU while idle, a wake-up per burst. */
    EVENT,
    /** Spin briefly after each completion, then arm the channel and sleep. */
    ADAPTIVE
}
