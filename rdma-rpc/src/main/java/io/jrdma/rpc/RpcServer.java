package io.jrdma.rpc;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.MetricsRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * An RPC server: a registry of named functions served over an {@link RdmaServer}.
 *
 * <pre>{@code
 * RpcServer.create(RdmaServer.create().host("10.77.0.2").port(7471))
 *     .register("upper", RpcHandler.of(r -> r.text().toUpperCase().getBytes(UTF_8)))
 *     .bind()                                      // Mono<DisposableRpcServer>
 * }</pre>
 *
 * Only registered functions run: a request names a function by id, and there is no way for a
 * peer to make the server load or execute anything else. Immutable: every setter returns a new
 * server configuration; {@link #bind()} fixes the function set.
 * <p>
 * Each connection has private staging memory (payloads fetched into it with RDMA READ, large
 * responses written from it with WRITE_WITH_IMM), {@link #stagingBuffer} bytes, or the size the
 * {@code RdmaServer} was given with {@code exposeBuffer}. It is registered with local access only,
 * whatever access that asked for: no client ever reads or writes it, and none is advertised.
 */
public final class RpcServer {
    private final RdmaServer rdma;
    private final Map<String, RpcHandler> functions;
    private final List<String> providers;
    private final @Nullable ClassLoader providerLoader;
    private final Settings settings;
    /** A {@code MeterRegistry} or {@link RpcMetering#GLOBAL_REGISTRY}; null without metrics. An {@code Object}, so this class loads without Micrometer. */
    private final @Nullable Object meterRegistry;
    private final @Nullable RpcObservations observations;

    /** {@code scheduler} null: jrdma's own {@link HandlerPool} ({@link #handlerPool()}); Reactor's bounded-elastic by default. */
    record Settings(int maxConcurrentCalls, Duration handlerTimeout, @Nullable Scheduler scheduler, long stagingBytes, int tableEntries,
                    long tableBytes, Duration tableTtl) {}

    private RpcServer(RdmaServer rdma, Map<String, RpcHandler> functions, List<String> providers, @Nullable ClassLoader providerLoader,
                      Settings settings, @Nullable Object meterRegistry, @Nullable RpcObservations observations) {
        this.rdma = rdma;
        this.functions = functions;
        this.providers = providers;
        this.providerLoader = providerLoader;
        this.settings = settings;
        this.meterRegistry = meterRegistry;
        this.observations = observations;
    }

    /**
     * A server on {@code rdma}'s address and transport. Its receive queue depth is the number of
     * requests each client may have outstanding, and its buffer size the largest request that
     * travels inline in a SEND.
     *
     * @param rdma the RDMA server to serve over: address, transport and connection settings
     * @return a server configuration without functions; nothing listens until {@link #bind()} is subscribed
     */
    public static RpcServer create(RdmaServer rdma) {
        return new RpcServer(Objects.requireNonNull(rdma), Map.of(), List.of(), null,
                new Settings(256, Duration.ofSeconds(30), Schedulers.boundedElastic(), 4L << 20, 65_536, 64L << 20, Duration.ofMinutes(5)),
                null, null);
    }

    /**
     * Adds a function. Names are 1-255 UTF-8 bytes and may not start with '$'; the wire id is the
     * CRC32C of the name, and two names with the same id are refused at {@link #bind()}.
     *
     * @param name    the function's name, as callers give it
     * @param handler runs each call of {@code name}, on the {@link #handlerScheduler handler scheduler}
     * @return a copy with that function
     * @throws IllegalArgumentException when the name is not valid or already registered
     */
    public RpcServer register(String name, RpcHandler handler) {
        Frames.checkName(name);
        Objects.requireNonNull(handler, "handler");
        Map<String, RpcHandler> f = new LinkedHashMap<>(functions);
        if (f.putIfAbsent(name, handler) != null) throw new IllegalArgumentException("function '" + name + "' is already registered");
        return new RpcServer(rdma, Map.copyOf(f), providers, providerLoader, settings, meterRegistry, observations);
    }

    /**
     * Adds a typed function: requests decoded with {@code in}, results encoded with {@code out}.
     *
     * @param <I>      the request type
     * @param <O>      the result type
     * @param name     the function's name, as for {@link #register(String, RpcHandler)}
     * @param in       decodes the request payload
     * @param out      encodes the result
     * @param function the function, asynchronous; an empty {@code Mono} answers no bytes
     * @return a copy with that function
     * @throws IllegalArgumentException when the name is not valid or already registered
     */
    public <I, O> RpcServer register(String name, Codec<I> in, Codec<O> out, Function<? super I, ? extends Mono<? extends O>> function) {
        return register(name, RpcHandler.typed(in, out, function));
    }

    /**
     * Adds every function of {@code functions}, in its iteration order, as {@link #register(String, RpcHandler)} does.
     *
     * @param functions handlers by name
     * @return a copy with those functions
     * @throws IllegalArgumentException when a name is not valid or already registered
     */
    public RpcServer registerAll(Map<String, RpcHandler> functions) {
        RpcServer s = this;
        for (Map.Entry<String, RpcHandler> e : functions.entrySet()) s = s.register(e.getKey(), e.getValue());
        return s;
    }

    /**
     * Opts in to the functions of these {@link RpcFunctionProvider} classes (fully qualified names),
     * found with {@link java.util.ServiceLoader} on the class path when the server binds; the
     * thread context class loader is used. A named provider that is missing fails the bind.
     *
     * @param providerClasses fully qualified names of {@link RpcFunctionProvider} implementations
     * @return a copy that loads those providers at bind
     */
    public RpcServer functionsFrom(String... providerClasses) {
        return functionsFrom(null, providerClasses);
    }

    /**
     * As {@link #functionsFrom(String...)}, searching {@code loader} (e.g. a URLClassLoader over plug-in jars).
     *
     * @param loader          the class loader to search, or null to keep the one set before (at first the
     *                        thread context class loader when the server binds)
     * @param providerClasses fully qualified names of {@link RpcFunctionProvider} implementations
     * @return a copy that loads those providers at bind
     */
    public RpcServer functionsFrom(@Nullable ClassLoader loader, String... providerClasses) {
        List<String> p = new ArrayList<>(providers);
        for (String c : providerClasses) {
            if (!p.contains(Objects.requireNonNull(c))) p.add(c);
        }
        return new RpcServer(rdma, functions, List.copyOf(p), loader != null ? loader : providerLoader, settings, meterRegistry, observations);
    }

    /**
     * Handlers running at once, over all connections; a request beyond is answered OVERLOADED (default 256).
     *
     * @param calls from 1
     * @return a copy with that limit
     * @throws IllegalArgumentException when {@code calls} is below 1
     */
    public RpcServer maxConcurrentCalls(int calls) {
        if (calls < 1) throw new IllegalArgumentException("maxConcurrentCalls must be positive");
        return with(new Settings(calls, settings.handlerTimeout, settings.scheduler, settings.stagingBytes, settings.tableEntries,
                settings.tableBytes, settings.tableTtl));
    }

    /**
     * How long a handler may run before it is cancelled and the caller gets HANDLER_ERROR (default 30 s).
     *
     * @param timeout positive
     * @return a copy with that limit
     * @throws IllegalArgumentException when {@code timeout} is not positive
     */
    public RpcServer handlerTimeout(Duration timeout) {
        if (timeout.isNegative() || timeout.isZero()) throw new IllegalArgumentException("handlerTimeout must be positive");
        return with(new Settings(settings.maxConcurrentCalls, timeout, settings.scheduler, settings.stagingBytes, settings.tableEntries,
                settings.tableBytes, settings.tableTtl));
    }

    /**
     * Where handlers run. By default on Reactor's {@link Schedulers#boundedElastic()}, the scheduler
     * the ecosystem provides for work that may block: up to ten threads per CPU, shared with the
     * application's own blocking work, calls beyond queued (Reactor's default: 100,000 per thread,
     * then answered OVERLOADED). Its {@code schedule} runs each call, and disposing the returned task at
     * {@link #handlerTimeout} interrupts a handler still running; so it is for any scheduler given
     * here ({@code Schedulers.fromExecutorService(Executors.newVirtualThreadPerTaskExecutor())} for a
     * virtual thread per call). {@link #handlerPool()} is jrdma's own pool, the default before
     * {@code lab/bench --rpc-schedulers} measured the three.
     * <p>
     * {@link reactor.core.scheduler.Schedulers#immediate()} runs each handler on the thread that
     * delivers its request - the poller thread, or for a request that arrived while the
     * connection was being set up, the thread that set it up - and the answer is posted from
     * there: no thread hand-off per call. Only for handlers that never block and finish quickly (an echo, a lookup in
     * memory, arithmetic): while one runs, no connection of that poller makes progress. Large
     * fetched payloads are then checksummed on the poller thread too. In the emulated lab
     * (lab/bench rpc_lat beside rpc_lat_poller, tcg-mt, 2 B calls, two runs, 2026-11-24) a call's
     * typical round trip was 895-928 us on jrdma's handler pool and 558-579 us on this one
     * with EVENT polling, and the server's CPU per call (rpc_rate, 32 calls in flight) 166-177 us
     * and 73-81 us: a handler thread costs a thread wake-up per call.
     *
     * @param scheduler the scheduler; the caller keeps owning it
     * @return a copy that runs its handlers there
     */
    public RpcServer handlerScheduler(Scheduler scheduler) {
        return with(new Settings(settings.maxConcurrentCalls, settings.handlerTimeout, Objects.requireNonNull(scheduler),
                settings.stagingBytes, settings.tableEntries, settings.tableBytes, settings.tableTtl));
    }

    /**
     * Runs handlers on jrdma's own handler pool instead of a Reactor scheduler: threads that may
     * block, ten per CPU, shared by every server of the JVM; a call goes to the thread that went
     * idle last and never waits behind a blocked handler while a thread may still start; calls
     * beyond are queued (100,000 at most, then OVERLOADED); the hand-off allocates nothing. Measured
     * beside bounded-elastic and a virtual thread per call (lab/bench --rpc-schedulers, tcg with
     * C2, 2 B calls, EVENT polling, 2026-11-27): the server allocated about 520 B per call on it,
     * 730-830 B on bounded-elastic and 1,480-1,550 B on virtual threads; latency and calls/s differed
     * less than the rows' order moved them under emulation. For a server whose handlers are short and
     * whose allocation rate matters.
     *
     * @return a copy that runs its handlers on jrdma's pool
     */
    public RpcServer handlerPool() {
        return with(new Settings(settings.maxConcurrentCalls, settings.handlerTimeout, null, settings.stagingBytes,
                settings.tableEntries, settings.tableBytes, settings.tableTtl));
    }

    /**
     * Registered staging memory per connection, local access only, when the {@code RdmaServer}
     * sets no size with {@code exposeBuffer} (default 4 MiB): the largest fetched payload and the
     * largest written response.
     *
     * @param bytes from 64 to 2 GiB - 1
     * @return a copy with that staging size
     * @throws IllegalArgumentException when {@code bytes} is outside that range
     */
    public RpcServer stagingBuffer(long bytes) {
        if (bytes < Frames.ALIGNMENT || bytes > Integer.MAX_VALUE) throw new IllegalArgumentException("staging must be 64 B .. 2 GiB");
        return with(new Settings(settings.maxConcurrentCalls, settings.handlerTimeout, settings.scheduler, bytes, settings.tableEntries,
                settings.tableBytes, settings.tableTtl));
    }

    /**
     * Bounds of the idempotency table: keys remembered, result bytes retained, and how long a
     * finished call is remembered (defaults 65,536, 64 MiB, 5 minutes). A retry arriving later
     * than that executes again, so a client's retries must end well within {@code ttl}.
     *
     * @param entries idempotency keys remembered at most
     * @param bytes   result bytes retained at most
     * @param ttl     how long a finished call is remembered
     * @return a copy with those bounds
     */
    public RpcServer resultTable(int entries, long bytes, Duration ttl) {
        return with(new Settings(settings.maxConcurrentCalls, settings.handlerTimeout, settings.scheduler, settings.stagingBytes,
                entries, bytes, Objects.requireNonNull(ttl)));
    }

    /**
     * Records the server's calls to Micrometer's global registry ({@code Metrics.globalRegistry}),
     * like Reactor Netty's {@code metrics(true)}: {@code jrdma.rpc.server.calls} (timer from a
     * request's acceptance to its outcome; tags {@code name}, {@code function}, {@code outcome}),
     * {@code jrdma.rpc.server.calls.in.flight} (gauge; {@code name}) and
     * {@code jrdma.rpc.server.refused} (counter of frames turned away before any call; {@code name},
     * {@code reason}). {@code name} is the address the server is bound to ({@code ip:port});
     * {@code outcome} is {@code success}, {@code timeout} (the handler's), or the simple name of the
     * exception the caller gets ({@code HandlerFailed}, {@code Overloaded}, {@code BadRequest}).
     * The connections' own meters are the {@code RdmaServer}'s {@code metrics(true)}. Needs
     * {@code io.micrometer:micrometer-core} on the class or module path; throws
     * {@link IllegalStateException} here if it is missing.
     *
     * @param enabled whether to record
     * @return a copy with metrics on or off
     */
    public RpcServer metrics(boolean enabled) {
        if (enabled) RpcMetering.requireMicrometer();
        return withMeters(enabled ? RpcMetering.GLOBAL_REGISTRY : null);
    }

    /**
     * As {@link #metrics(boolean)}, recording to an application's registry:
     * {@code metrics(true, MetricsRecorder.micrometer(registry))}.
     *
     * @param enabled  whether to record
     * @param recorder where to record
     * @return a copy with metrics on or off
     */
    public RpcServer metrics(boolean enabled, MetricsRecorder recorder) {
        Objects.requireNonNull(recorder, "recorder");
        return withMeters(enabled ? recorder : null);
    }

    /**
     * Reports every call the server accepts as a Micrometer Observation ({@code jrdma.rpc.server}),
     * a child of the client's when the request carries its trace context, current while the
     * handler runs ({@link RpcObservations} says what is recorded).
     *
     * @param observations the registry to report to, {@code RpcObservations.of(registry)}
     * @return a copy that observes its calls
     */
    public RpcServer observations(RpcObservations observations) {
        return new RpcServer(rdma, functions, providers, providerLoader, settings, meterRegistry, Objects.requireNonNull(observations, "observations"));
    }

    private RpcServer withMeters(@Nullable Object registry) {
        return new RpcServer(rdma, functions, providers, providerLoader, settings, registry, observations);
    }

    private RpcServer with(Settings s) {
        return new RpcServer(rdma, functions, providers, providerLoader, s, meterRegistry, observations);
    }

    /** {@return the names registered so far (not counting providers, which load at bind)} */
    public List<String> functionNames() {
        return List.copyOf(functions.keySet());
    }

    /**
     * Loads the opted-in providers, fixes the function set and starts listening. Fails with
     * {@link IllegalArgumentException} or {@link IllegalStateException} on a bad function set.
     *
     * @return emits the listening server, which the subscriber owns and disposes
     */
    public Mono<DisposableRpcServer> bind() {
        return Mono.defer(() -> {
            Map<String, RpcHandler> all = new LinkedHashMap<>(functions);
            ClassLoader loader = providerLoader != null ? providerLoader : Thread.currentThread().getContextClassLoader();
            FunctionRegistry.load(loader != null ? loader : RpcServer.class.getClassLoader(), providers).forEach((name, h) -> {
                Frames.checkName(name);
                if (all.putIfAbsent(name, h) != null) throw new IllegalStateException("function '" + name + "' is registered and also provided");
            });
            FunctionRegistry registry = FunctionRegistry.of(all);
            // least privilege: staging is a READ target and a WRITE source of this side only, so no remote access
            long staging = rdma.configuration().exposedBufferSize() > 0 ? rdma.configuration().exposedBufferSize() : settings.stagingBytes;
            RdmaServer server = rdma.exposeBuffer(staging, Access.LOCAL_WRITE);
            Object meters = meterRegistry;
            RpcObservations observed = observations;
            // the meters' name is the bound address: the port may be picked at bind
            return server.bind().map(bound -> new DisposableRpcServer(bound, new ServerCore(registry, settings,
                    meters == null ? null : ServerMeters.create(meters, bound.address(), registry),
                    observed == null ? null : new CallObservations(observed, RpcMetering.name(bound.address())))));
        });
    }

    @Override
    public String toString() {
        return "RpcServer" + Arrays.asList(functions.keySet().toArray()) + (providers.isEmpty() ? "" : " + providers " + providers);
    }
}
