package io.jrdma.rpc;

import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.MetricsRecorder;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * How an {@link RpcClient} connects, from {@link RpcClient#create(RdmaClient)}: the connection to
 * make, the options of calls that give none, and metrics. Immutable: every setter returns a copy.
 *
 * <pre>{@code
 * RpcClient.create(RdmaClient.create().host("10.77.0.2").port(7471))
 *     .defaults(CallOptions.defaults().timeout(Duration.ofSeconds(2)))
 *     .metrics(true)
 *     .connect()                                   // Mono<RpcClient>
 * }</pre>
 */
public final class RpcClientSpec {
    private final RdmaClient rdma;
    private final CallOptions defaults;
    /** A {@code MeterRegistry} or {@link RpcMetering#GLOBAL_REGISTRY}; null without metrics. An {@code Object}, so this class loads without Micrometer. */
    private final @Nullable Object meterRegistry;
    private final @Nullable RpcObservations observations;

    RpcClientSpec(RdmaClient rdma, CallOptions defaults, @Nullable Object meterRegistry, @Nullable RpcObservations observations) {
        this.rdma = rdma;
        this.defaults = defaults;
        this.meterRegistry = meterRegistry;
        this.observations = observations;
    }

    /**
     * The options of calls that give none ({@link RpcClient#call(String, byte[])}).
     *
     * @param defaults the options
     * @return a copy with those defaults
     */
    public RpcClientSpec defaults(CallOptions defaults) {
        return new RpcClientSpec(rdma, Objects.requireNonNull(defaults, "defaults"), meterRegistry, observations);
    }

    /**
     * Records the client's calls to Micrometer's global registry ({@code Metrics.globalRegistry}),
     * like Reactor Netty's {@code metrics(true)}: {@code jrdma.rpc.client.calls} (timer from a
     * call's subscription to its outcome, retries included; tags {@code name}, {@code function},
     * {@code outcome}) and {@code jrdma.rpc.client.calls.in.flight} (gauge; {@code name}).
     * {@code name} is the server's address ({@code ip:port}); {@code function} the function called
     * (at most 256 names per client, the others as {@code $other}); {@code outcome} is
     * {@code success}, {@code cancelled}, {@code timeout}, or the simple name of the
     * {@link RpcException} the call failed with ({@code HandlerFailed}, {@code Overloaded}, ...).
     * The connection's own meters are the {@code RdmaClient}'s {@code metrics(true)}. Needs
     * {@code io.micrometer:micrometer-core} on the class or module path; throws
     * {@link IllegalStateException} here if it is missing.
     *
     * @param enabled whether to record
     * @return a copy with metrics on or off
     */
    public RpcClientSpec metrics(boolean enabled) {
        if (enabled) RpcMetering.requireMicrometer();
        return new RpcClientSpec(rdma, defaults, enabled ? RpcMetering.GLOBAL_REGISTRY : null, observations);
    }

    /**
     * As {@link #metrics(boolean)}, recording to an application's registry:
     * {@code metrics(true, MetricsRecorder.micrometer(registry))}.
     *
     * @param enabled  whether to record
     * @param recorder where to record
     * @return a copy with metrics on or off
     */
    public RpcClientSpec metrics(boolean enabled, MetricsRecorder recorder) {
        Objects.requireNonNull(recorder, "recorder");
        return new RpcClientSpec(rdma, defaults, enabled ? recorder : null, observations);
    }

    /**
     * Reports every call as a Micrometer Observation ({@code jrdma.rpc.client}), whose trace
     * context the request carries to a server that takes it ({@link RpcObservations} says what is
     * recorded and sent).
     *
     * @param observations the registry to report to, {@code RpcObservations.of(registry)}
     * @return a copy that observes its calls
     */
    public RpcClientSpec observations(RpcObservations observations) {
        return new RpcClientSpec(rdma, defaults, meterRegistry, Objects.requireNonNull(observations, "observations"));
    }

    /**
     * Connects and exchanges the protocol hello, as {@link RpcClient#connect(RdmaClient, CallOptions)}.
     *
     * @return emits the client, which the subscriber owns and disposes; fails with the connection's
     *         error, or an {@link RpcException} when the hello failed (the connection is then closed)
     */
    public Mono<RpcClient> connect() {
        return RpcClient.connect(rdma, defaults, meterRegistry, observations);
    }

    @Override
    public String toString() {
        return "RpcClientSpec[" + defaults + (meterRegistry == null ? "" : ", metrics to " + meterRegistry) + "]";
    }
}
