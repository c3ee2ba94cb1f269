package io.jrdma.reactive.internal.observe;

import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.internal.loop.Loop;

/**
 * What a connection reports about its work requests, for metrics and the wiretap. Called on the
 * thread that posts ({@link #posted}) and on the loop ({@link #completed}); the default is
 * {@link #NONE}, whose empty methods the JIT removes, so a connection without metrics or wiretap
 * pays nothing.
 */
public interface Observer {
    /** Observes nothing. */
    Observer NONE = new Observer() { };

    /** A work request went to the NIC: {@code length} bytes, from send-queue slot {@code slot}. */
    default void posted(SendOpcode opcode, int slot, long length) {
    }

    /**
     * A completion was taken: {@code bytes} posted (a receive: received), {@code nanos} since its
     * work request was posted, or -1 for a receive (and whenever {@link #timed()} is false).
     */
    default void completed(WcOpcode opcode, WcStatus status, long wrId, long bytes, long nanos) {
    }

    /** Whether {@link #completed} wants the time since the post (the connection then takes a timestamp per post). */
    default boolean timed() {
        return false;
    }

    /**
     * The observer {@code config} asks for on a connection described by {@code description}
     * on {@code loop}: metrics, wiretap, both, or {@link #NONE}.
     */
    static Observer of(ConnectionConfig config, String description, Loop loop) {
        Observer metrics = config.metrics() ? Metering.observer(config.meterRegistry(), loop) : NONE;
        Observer wiretap = config.wiretap() ? new Wiretap(description) : NONE;
        if (metrics == NONE) return wiretap;
        if (wiretap == NONE) return metrics;
        return new Observer() {
            @Override
            public void posted(SendOpcode opcode, int slot, long length) {
                metrics.posted(opcode, slot, length);
                wiretap.posted(opcode, slot, length);
            }

            @Override
            public void completed(WcOpcode opcode, WcStatus status, long wrId, long bytes, long nanos) {
                metrics.completed(opcode, status, wrId, bytes, nanos);
                wiretap.completed(opcode, status, wrId, bytes, nanos);
            }

            @Override
            public boolean timed() {
                return true;
            }
        };
    }
}
