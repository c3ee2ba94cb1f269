package io.jrdma.rpc;

import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * A registered function. It runs on the server's handler scheduler (by default threads where it
 * may block; {@link RpcServer#handlerScheduler} can run non-blocking handlers on the poller
 * thread); it emits the response payload (empty = no bytes) or an error, which the caller
 * receives as {@link RpcException.HandlerFailed} with its message.
 * <p>
 * From Kotlin: {@code RpcHandler { req -> mono { f(req) } }} wraps a suspend function.
 */
@FunctionalInterface
public interface RpcHandler {
    /**
     * Runs the function for one call.
     *
     * @param request the call; its payload is valid until the returned {@code Mono} terminates or is cancelled
     * @return the response payload, empty for no bytes, or an error for {@link RpcStatus#HANDLER_ERROR}
     */
    Mono<byte[]> handle(RpcRequest request);

    /**
     * A synchronous function of the request.
     *
     * @param function request to response payload; null answers no bytes, a throw answers HANDLER_ERROR
     * @return the handler
     */
    static RpcHandler of(Function<RpcRequest, byte @Nullable []> function) {
        return new SynchronousHandler(Objects.requireNonNull(function, "function"));
    }

    /**
     * A typed function: the payload decoded with {@code in}, the result encoded with {@code out}.
     *
     * @param <I>      the request type
     * @param <O>      the response type
     * @param in       decodes the request payload
     * @param out      encodes the result
     * @param function the function, asynchronous; an empty {@code Mono} answers no bytes
     * @return the handler
     */
    static <I, O> RpcHandler typed(Codec<I> in, Codec<O> out, Function<? super I, ? extends Mono<? extends O>> function) {
        return request -> Mono.defer(() -> function.apply(request.decode(in))).map(out::encode);
    }
}

/**
 * The handler {@link RpcHandler#of} makes. The server calls its function directly, where a
 * {@code Mono.fromCallable} per call cost the Mono, a lambda, Reactor's subscribe path and a
 * subscriber between the function and the answer; {@link #handle} is still that Mono for
 * anyone else.
 */
final class SynchronousHandler implements RpcHandler {
    private final Function<RpcRequest, byte @Nullable []> function;

    SynchronousHandler(Function<RpcRequest, byte @Nullable []> function) {
        this.function = function;
    }

    /** The function's result for {@code request} (null: no bytes); what it throws, thrown. */
    byte @Nullable [] apply(RpcRequest request) {
        return function.apply(request);
    }

    @Override
    public Mono<byte[]> handle(RpcRequest request) {
        return Mono.fromCallable(() -> function.apply(request));
    }
}
