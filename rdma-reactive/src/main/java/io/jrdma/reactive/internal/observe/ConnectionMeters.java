package io.jrdma.reactive.internal.observe;

import io.jrdma.reactive.ConnectionConfig;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.RdmaOperationException;
import java.util.concurrent.CancellationException;
import org.jspecify.annotations.Nullable;

/**
 * What the setup paths report about connections, for {@code metrics(true)}: one instance per
 * side, setup path and (for a server) listener, shared by its connections. Called on setup
 * threads and, for {@link #closed}, on the loop that destroys a connection; never on the data
 * path. The default is {@link #NONE}: with metrics off nothing is recorded or looked up. Nothing
 * here names a Micrometer type, so the setup code loads without it ({@link Metering}).
 */
public interface ConnectionMeters {
    /** Records nothing. */
    ConnectionMeters NONE = new ConnectionMeters() { };

    /** Why an established connection ended, as far as the connection knows: a bounded set of tag values. */
    enum Closure {
        /** Closed by this side: the application disposed it, or its server or resources. */
        LOCAL,
        /** The peer left in order: rdma_cm DISCONNECTED, or EOF on the TCP path's control socket. */
        PEER,
        /** The peer stopped acknowledging: a work request ran out of transport retries (IBV_WC_RETRY_EXC_ERR). */
        TIMEOUT,
        /** Anything else: a failed work request, the QP in error, a fatal device event, the control socket failed. */
        ERROR;

        /** The closure {@code cause} (a connection's first, see {@code CloseState}) stands for; {@code local}: this side's close() won. */
        public static Closure of(@Nullable Throwable cause, boolean local) {
            if (local) return LOCAL;
            if (cause instanceof ConnectionException.Closed c && c.isOrderly() && c.getCause() == null) return PEER;
            if (cause instanceof RdmaOperationException.RetryExceededException) return TIMEOUT;
            return ERROR;
        }
    }

    /** How a connect ended, for the set-up timer's {@code outcome} tag. */
    enum Outcome {
        SUCCESS, REJECTED, UNREACHABLE, TIMEOUT, AUTHENTICATION, PROTOCOL, CANCELLED, ERROR;

        /** The outcome of a connect that failed with {@code error}. */
        public static Outcome of(Throwable error) {
            return switch (error) {
                case ConnectionException.Rejected _ -> REJECTED;
                case ConnectionException.Unreachable _ -> UNREACHABLE;
                case ConnectionException.Timeout _ -> TIMEOUT;
                case ConnectionException.Authentication _ -> AUTHENTICATION;
                case ConnectionException.Protocol _ -> PROTOCOL;
                case CancellationException _ -> CANCELLED;
                default -> ERROR;
            };
        }
    }

    /** Why a server turned a connect request away, for the {@code reason} tag. */
    enum Rejection {
        /** The server was closing. */
        SHUTTING_DOWN,
        /** Not a jrdma client: its connect request or hello is not jrdma's. */
        MALFORMED,
        /** The accept filter kept its address out. */
        FILTERED,
        /** Its proof was missing or wrong ({@code PeerAuthentication}). */
        AUTHENTICATION,
        /** The application's {@code acceptRaw} function rejected it (or failed). */
        APPLICATION,
        /** The server could not set its side up: QP, memory, device, a full shared receive queue. */
        RESOURCES
    }

    /** The side a meter's connections are on: its {@code side} tag. */
    enum Side {
        CLIENT, SERVER
    }

    /** A connection was established and is about to reach the application. */
    default void opened() {
    }

    /** An opened connection was destroyed. */
    default void closed(Closure why) {
    }

    /** A connect ended after {@code nanos}: established ({@code error} null) or failed. */
    default void connected(long nanos, @Nullable Throwable error) {
    }

    /** A server turned a connect request away. */
    default void rejected(Rejection reason) {
    }

    /**
     * A server's side of a connection ended its set-up after {@code nanos}, counted from its
     * creation for an accepted request: handed out ({@code established}), or destroyed first.
     */
    default void accepted(long nanos, boolean established) {
    }

    /**
     * The meters {@code config} asks for: {@link #NONE} unless metrics are on, else those of
     * {@code side} over {@code transport} (a tag value: {@code rdma_cm}, {@code tcp}, {@code out_of_band}),
     * for a server also {@code name}, its bound address.
     */
    static ConnectionMeters of(ConnectionConfig config, Side side, String transport, @Nullable String name) {
        return config.metrics() ? Metering.connections(config.meterRegistry(), side, transport, name) : NONE;
    }
}
