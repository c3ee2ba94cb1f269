package io.jrdma.rpc;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.micrometer.observation.transport.Kind;
import io.micrometer.observation.transport.ReceiverContext;
import io.micrometer.observation.transport.SenderContext;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.Logger;
import reactor.util.Loggers;
import reactor.util.context.Context;

/**
 * The calls' observations ({@link RpcObservations} has the names, keys and rules), for one client
 * or one server. Loaded only when observations were asked for: the client's and server's own
 * classes hold it and an observation as {@code Object}, so they load without Micrometer.
 */
final class CallObservations {
    static final String CLIENT = "jrdma.rpc.client";
    static final String SERVER = "jrdma.rpc.server";
    private static final Logger LOG = Loggers.getLogger("io.jrdma.rpc");

    private final ObservationRegistry registry;
    private final String name;

    /** {@code name}: the server's address, as the meters name it. */
    CallObservations(RpcObservations observations, String name) {
        this.registry = observations.registry();
        this.name = name;
    }

    /**
     * The client's observation around {@code call}, which is given the context to send: the
     * propagator's entries, encoded, or null when {@code propagate} is false (the server does not
     * take it) or there is nothing to send.
     */
    Mono<byte[]> client(String function, boolean propagate, Function<byte @Nullable [], Mono<byte[]>> call) {
        return Mono.deferContextual(view -> {
            Map<String, String> carrier = new LinkedHashMap<>();
            SenderContext<Map<String, String>> context = new SenderContext<>((c, key, value) -> {
                if (c != null) c.put(key, value);
            }, Kind.CLIENT);
            context.setCarrier(carrier);
            context.setRemoteServiceName(name);
            Observation o = Observation.createNotStarted(CLIENT, () -> context, registry).contextualName(function);
            Observation parent = view.getOrDefault(ObservationThreadLocalAccessor.KEY, null);
            if (parent != null) o.parentObservation(parent);
            tag(o, function);
            o.start();
            byte[] wire = null;
            if (propagate && !carrier.isEmpty()) {
                try {
                    wire = CallContext.encode(carrier);
                } catch (IllegalArgumentException e) {
                    // the call goes without its context: a trace missing a span beats a call refused
                    if (LOG.isDebugEnabled()) LOG.debug("a call to " + function + " goes without its context: " + e.getMessage());
                }
            }
            // stopped before the outcome goes downstream (a caller that has its answer sees the span ended), once
            AtomicBoolean stopped = new AtomicBoolean();
            return call.apply(wire)
                    .doOnSuccess(v -> stop(o, stopped, CallOutcome.SUCCESS, null))
                    .doOnError(e -> stop(o, stopped, CallOutcome.of(e), e))
                    .doOnCancel(() -> stop(o, stopped, CallOutcome.CANCELLED, null))
                    .contextWrite(c -> c.put(ObservationThreadLocalAccessor.KEY, o));
        });
    }

    private static void stop(Observation o, AtomicBoolean stopped, CallOutcome outcome, @Nullable Throwable error) {
        if (!stopped.compareAndSet(false, true)) return;
        o.lowCardinalityKeyValue("outcome", outcome.tag);
        if (error != null) o.error(error);
        o.stop();
    }

    /** The server's observation of an accepted call, started, its parent what the client's context says. */
    Object serverStart(String function, Map<String, String> requestContext) {
        ReceiverContext<Map<String, String>> context = new ReceiverContext<>((c, key) -> c.get(key), Kind.SERVER);
        context.setCarrier(requestContext);
        context.setRemoteServiceName(name);
        Observation o = Observation.createNotStarted(SERVER, () -> context, registry).contextualName(function);
        tag(o, function);
        return o.start();
    }

    /** Makes {@code observation} current on this thread until the returned scope is closed ({@link #closeScope}). */
    static Object openScope(Object observation) {
        return ((Observation) observation).openScope();
    }

    static void closeScope(Object scope) {
        ((Observation.Scope) scope).close();
    }

    /** The Reactor context a handler's {@code Mono} is subscribed with: the observation in it. */
    static Context reactorContext(Object observation) {
        return Context.of(ObservationThreadLocalAccessor.KEY, observation);
    }

    /** Ends the server's observation with the call's outcome; a failure is its error, as the caller gets it. */
    static void serverStop(Object observation, String function, RpcStatus status, boolean timedOut, byte[] payload) {
        Observation o = (Observation) observation;
        o.lowCardinalityKeyValue("outcome", CallOutcome.of(status, timedOut).tag);
        RpcException error = switch (status) {  // the payload is the failure's text: decoded for a failure only
            case HANDLER_ERROR -> new RpcException.HandlerFailed(function, new String(payload, StandardCharsets.UTF_8));
            case BAD_REQUEST -> new RpcException.BadRequest(function, new String(payload, StandardCharsets.UTF_8));
            case OVERLOADED -> new RpcException.Overloaded(function, new String(payload, StandardCharsets.UTF_8));
            default -> null;  // success, and answers that say what the call did (ALREADY_EXECUTED, RESPONSE_TOO_LARGE)
        };
        if (error != null) o.error(error);
        o.stop();
    }

    private void tag(Observation o, String function) {
        o.lowCardinalityKeyValue("rpc.system", "jrdma").lowCardinalityKeyValue("rpc.method", function).lowCardinalityKeyValue("name", name);
    }
}
