package io.jrdma.reactive.rpc;

import java.util.function.Function;
import reactor.core.publisher.Mono;

/**
 * A registered function. It runs on the server's handler scheduler (bounded-elastic by default),
 * never on a poller thread, so it may block; it emits the response payload (empty = no bytes)
 * or an error, which the caller receives as {@link RpcException.HandlerFailed} with its message.
 * <p>
 * From Kotlin: {@code RpcHandler { req -> mono { f(req) } }} wraps a suspend function.
 */
@FunctionalInterface
public interface RpcHandler {
    Mono<byte[]> handle(RpcRequest request);

    /** A synchronous function of the request. */
    static RpcHandler of(Function<RpcRequest, byte[]> function) {
        return request -> Mono.fromCallable(() -> function.apply(request));
    }

    /** A typed function: the payload decoded with {@code in}, the result encoded with {@code out}. */
    static <I, O> RpcHandler typed(Codec<I> in, Codec<O> out, Function<? super I, ? extends Mono<? extends O>> function) {
        return request -> Mono.defer(() -> function.apply(request.decode(in))).map(out::encode);
    }
}
