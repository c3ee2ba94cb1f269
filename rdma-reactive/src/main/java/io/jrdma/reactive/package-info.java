/**
 * The Reactor API: {@link io.jrdma.reactive.RdmaClient} and {@link io.jrdma.reactive.RdmaServer}
 * make {@link io.jrdma.reactive.RdmaConnection}s, whose operations are {@code Mono}s and whose
 * completions are a {@code Flux}, on the loops and setup threads of an
 * {@link io.jrdma.reactive.RdmaResources}.
 *
 * <p>Null-marked: a type is non-null unless it is annotated {@link org.jspecify.annotations.Nullable}.
 */
@NullMarked
package io.jrdma.reactive;

import org.jspecify.annotations.NullMarked;
