package io.jrdma.reactive;

import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.util.Logger;

/**
 * Runs a {@code handle(...)} function on one connection, for {@link RdmaServer#handle} and
 * {@link RdmaClient#handle} alike, in the shape of Reactor Netty's {@code disposeSubscriber()}. The rules:
 * <ul>
 * <li>the function is called once, on the connection's loop;</li>
 * <li>when the {@code Publisher<Void>} it returns completes, fails or is cancelled, the connection is disposed;</li>
 * <li>a failure (the function throws, returns null, or its publisher fails) is logged once, at WARN,
 *     to the owner's logger, and disposes the connection;</li>
 * <li>once the connection is closed, however (its {@code dispose()}, the peer, an error), the
 *     publisher is cancelled if it is still running;</li>
 * <li>a server's running handlers are held in a group, and disposing the group cancels them.</li>
 * </ul>
 */
final class ConnectionHandler {
    private ConnectionHandler() {}

    /**
     * Hands {@code c} to {@code handler} on {@code loop}; returns at once.
     *
     * @param c       the connection (any {@link RdmaDisposable}: the host tests give it one without a device)
     * @param loop    the connection's loop
     * @param owner   the server or client, as a failure's log line names it
     * @param running the group the running handler joins (a server's, disposed with it), or null
     * @param <C>     the connection's type
     */
    static <C extends RdmaDisposable> void handOff(Function<? super C, ? extends Publisher<Void>> handler, C c, Executor loop,
                                                   Logger log, Object owner, Disposable.@Nullable Composite running) {
        loop.execute(() -> run(handler, c, log, owner, running));
    }

    private static <C extends RdmaDisposable> void run(Function<? super C, ? extends Publisher<Void>> handler, C c,
                                                       Logger log, Object owner, Disposable.@Nullable Composite running) {
        Publisher<Void> work;
        try {
            work = Objects.requireNonNull(handler.apply(c), "the handler returned null");
        } catch (RuntimeException e) {
            log.warn(failed(owner, c), e);
            c.dispose();
            return;
        }
        Disposable[] subscription = new Disposable[1];
        subscription[0] = Flux.from(work).then()
                .doFinally(s -> {
                    c.dispose();  // the handler is done with it, however it ended
                    if (running != null && subscription[0] != null) running.remove(subscription[0]);
                })
                .subscribe(null, e -> log.warn(failed(owner, c), e));
        Disposable s = subscription[0];
        // an ended handler stays out of the group (it may end before the connection says it is closing)
        if (running != null && !s.isDisposed() && !c.isDisposed() && !running.add(s)) s.dispose();  // the server was disposed meanwhile
        c.onDispose(s);  // a closed connection cancels its handler (at once if it is closed already)
    }

    private static String failed(Object owner, RdmaDisposable c) {
        return "the handler of " + owner + " failed on " + c + "; closing it";
    }
}
