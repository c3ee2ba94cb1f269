package io.jrdma.rpc;

import io.micrometer.observation.ObservationRegistry;
import java.util.Objects;

/**
 * Where an RPC client and server report their calls as Micrometer Observations, given with
 * {@code observations(RpcObservations.of(registry))}: with a tracing bridge on the registry
 * (micrometer-tracing with Brave or OpenTelemetry, as Spring Boot configures it), each call is a
 * client span and a server span of one trace. The client's propagator writes the trace context
 * into the request (docs/rpc-protocol.md, "Call context"); the server reads it there, and its
 * observation is current while the handler runs, on the handler's thread and in its
 * {@code Mono}'s Reactor context.
 * <ul>
 *   <li>{@code jrdma.rpc.client}: from a call's subscription to its outcome (retries included),
 *       a {@code SenderContext} whose carrier is the request's context; the parent is the
 *       observation in the subscriber's Reactor context, else the registry's current one.</li>
 *   <li>{@code jrdma.rpc.server}: from a request's acceptance to its answer, a
 *       {@code ReceiverContext} on the request's context.</li>
 *   <li>Low-cardinality keys on both: {@code rpc.system} ({@code jrdma}), {@code rpc.method} (the
 *       function), {@code name} (the server's address, as the meters), {@code outcome} (as the
 *       meters: {@code success}, {@code cancelled}, {@code timeout}, or the {@link RpcException}'s
 *       simple name); a failed call's error is the observation's.</li>
 * </ul>
 * A client sends the context only to a server whose hello offers it (this version and later);
 * an older server gets the requests it knows, and its side of the trace is missing.
 *
 * <p>A type of jrdma's own, as {@link io.jrdma.reactive.MetricsRecorder} is, so that Micrometer stays
 * optional: only this class names it ({@code io.micrometer:micrometer-observation}, which
 * micrometer-core and Spring bring).
 */
public final class RpcObservations {
    /** The {@code ObservationRegistry}, typed Object so that reading it from jrdma's classes names no Micrometer type. */
    final Object registry;

    private RpcObservations(Object registry) {
        this.registry = registry;
    }

    /**
     * Observes calls in {@code registry}.
     *
     * @param registry the application's registry (with its tracing handlers)
     * @return what to give {@code observations(...)}
     */
    public static RpcObservations of(ObservationRegistry registry) {
        return new RpcObservations(Objects.requireNonNull(registry, "registry"));
    }

    /** {@return the registry the calls are observed in} */
    public ObservationRegistry registry() {
        return (ObservationRegistry) registry;
    }

    @Override
    public String toString() {
        return "RpcObservations[" + registry.getClass().getSimpleName() + "]";
    }
}
