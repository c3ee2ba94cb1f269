package io.jrdma.reactive.internal.core;

import java.util.Collection;
import java.util.List;
import java.util.function.Function;
import reactor.core.publisher.Mono;

/** Closing many things at once. */
public final class Disposal {
    private Disposal() {}

    /** Closes every element of a snapshot of {@code all} concurrently; completes when all are closed. */
    public static <T> Mono<Void> closeAll(Collection<T> all, Function<T, Mono<Void>> close) {
        return Mono.whenDelayError(List.copyOf(all).stream().map(close).toList());
    }
}
