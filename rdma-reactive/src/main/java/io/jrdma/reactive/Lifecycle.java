package io.jrdma.reactive;

import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The callbacks a client or server runs for each of its connections, in Reactor Netty's shape
 * ({@link ConnectionSpec#doOnConnected}, {@link ConnectionSpec#doOnDisconnected}). The rules:
 * <ul>
 * <li>{@code connected} runs once per connection, after set-up and before the connection reaches
 *     the application (the client's subscriber, the server's taker or handler), on the thread
 *     that established it: it must not block;</li>
 * <li>if it throws, the connection is closed and never reaches the application: the client's
 *     {@code connect()} fails with that error, the server logs it and serves the next;</li>
 * <li>{@code disconnected} runs once per connection {@code connected} ran for (also one it threw
 *     for, which is closed at once), when the connection is disposed, however it ends; what it
 *     throws is logged. A connection that ends during set-up reaches neither;</li>
 * <li>setting a callback again adds it after those set before.</li>
 * </ul>
 */
record Lifecycle(@Nullable Consumer<? super RdmaConnection> connected, @Nullable Consumer<? super RdmaConnection> disconnected) {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.lifecycle");
    static final Lifecycle NONE = new Lifecycle(null, null);

    Lifecycle withConnected(Consumer<? super RdmaConnection> callback) {
        return new Lifecycle(then(connected, callback), disconnected);
    }

    Lifecycle withDisconnected(Consumer<? super RdmaConnection> callback) {
        return new Lifecycle(connected, then(disconnected, callback));
    }

    private static Consumer<? super RdmaConnection> then(@Nullable Consumer<? super RdmaConnection> first,
                                                         Consumer<? super RdmaConnection> second) {
        if (first == null) return second;
        return c -> {
            first.accept(c);
            second.accept(c);
        };
    }

    /**
     * A connection was established: runs {@code connected}, and arms {@code disconnected}.
     *
     * @throws RuntimeException what {@code connected} threw; the caller closes the connection
     */
    void established(RdmaConnection c) {
        if (disconnected != null) {
            Runnable gone = () -> {
                try {
                    disconnected.accept(c);
                } catch (RuntimeException e) {
                    LOG.warn("doOnDisconnected failed for " + c, e);
                }
            };
            c.onDispose().subscribe(null, e -> gone.run(), gone);
        }
        if (connected != null) connected.accept(c);
    }
}
