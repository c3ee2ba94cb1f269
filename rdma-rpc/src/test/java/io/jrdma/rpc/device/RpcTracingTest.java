package io.jrdma.rpc.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.rpc.CallOptions;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.RpcClient;
import io.jrdma.rpc.RpcException;
import io.jrdma.rpc.RpcHandler;
import io.jrdma.rpc.RpcObservations;
import io.jrdma.rpc.RpcServer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.TraceContext;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.propagation.Propagator;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTraceContext;
import io.micrometer.tracing.test.simple.SimpleTracer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * observations(...) on both sides with micrometer-tracing's in-memory tracer, real calls on rxe:
 * a call is one trace, the client's span a child of the caller's, the server's a child of the
 * client's through the context in the request, current while the handler runs; failures are the
 * spans' errors. The propagator is a plain W3C {@code traceparent} one over the test tracer.
 */
@Tag("device")
@Timeout(120)
class RpcTracingTest {
    private final SimpleTracer tracer = new SimpleTracer();
    private final ObservationRegistry registry = registry(tracer);

    @Test
    void aCallIsOneTraceFromTheCallerThroughTheClientToTheHandler() {
        AtomicReference<TraceContext> inHandler = new AtomicReference<>();
        AtomicReference<Object> inReactorContext = new AtomicReference<>();
        DisposableRpcServer server = RpcLab.bind(RpcServer.create(RpcLab.rdmaServer())
                .register("traced", RpcHandler.of(r -> {
                    Span current = tracer.currentSpan();
                    inHandler.set(current == null ? null : current.context());
                    return r.bytes();
                }))
                .register("deferred", r -> Mono.deferContextual(c -> {
                    inReactorContext.set(c.getOrDefault(ObservationThreadLocalAccessor.KEY, null));
                    return Mono.just(new byte[] {1});
                }))
                .register("boom", RpcHandler.of(r -> {
                    throw new IllegalStateException("boom");
                }))
                .observations(RpcObservations.of(registry)));
        RpcClient client = RpcClient.create(RpcLab.rdmaClient(server)).defaults(CallOptions.defaults().timeout(RpcLab.TIMEOUT))
                .observations(RpcObservations.of(registry)).connect().block(RpcLab.TIMEOUT);
        try {
            Observation caller = Observation.start("test.caller", registry);
            byte[] echoed = client.call("traced", "x".getBytes(StandardCharsets.UTF_8))
                    .contextWrite(c -> c.put(ObservationThreadLocalAccessor.KEY, caller)).block(RpcLab.TIMEOUT);
            caller.stop();
            assertEquals("x", new String(echoed, StandardCharsets.UTF_8));

            SimpleSpan callerSpan = span("test.caller", Span.Kind.CLIENT, false);
            SimpleSpan clientSpan = span("traced", Span.Kind.CLIENT, true);
            SimpleSpan serverSpan = span("traced", Span.Kind.SERVER, true);
            assertEquals(callerSpan.context().traceId(), clientSpan.context().traceId(), "the client's span is in the caller's trace");
            assertEquals(callerSpan.context().spanId(), clientSpan.context().parentId(), "the client's span is the caller's child");
            assertEquals(callerSpan.context().traceId(), serverSpan.context().traceId(), "the server's span is in the caller's trace");
            assertEquals(clientSpan.context().spanId(), serverSpan.context().parentId(), "the server's span is the client's child");
            assertNotNull(inHandler.get(), "a span was current in the handler");
            assertEquals(serverSpan.context().spanId(), inHandler.get().spanId(), "the server's span was current in the handler");
            for (SimpleSpan s : List.of(clientSpan, serverSpan)) {
                assertEquals("traced", s.getTags().get("rpc.method"));
                assertEquals("jrdma", s.getTags().get("rpc.system"));
                assertEquals("success", s.getTags().get("outcome"));
                assertNull(s.getError());
                assertTrue(s.getEndTimestamp().toEpochMilli() > 0, "ended: " + s);
            }

            client.call("deferred", new byte[0]).block(RpcLab.TIMEOUT);
            Observation serving = assertInstanceOf(Observation.class, inReactorContext.get(), "the handler's Mono sees the server's observation");
            assertEquals("jrdma.rpc.server", serving.getContext().getName());

            StepVerifier.create(client.call("boom", new byte[0])).expectError(RpcException.HandlerFailed.class).verify(RpcLab.TIMEOUT);
            SimpleSpan clientBoom = span("boom", Span.Kind.CLIENT, true);
            SimpleSpan serverBoom = span("boom", Span.Kind.SERVER, true);
            assertInstanceOf(RpcException.HandlerFailed.class, clientBoom.getError());
            assertInstanceOf(RpcException.HandlerFailed.class, serverBoom.getError());
            assertEquals("HandlerFailed", clientBoom.getTags().get("outcome"));
            assertEquals("HandlerFailed", serverBoom.getTags().get("outcome"));
            assertEquals(clientBoom.context().spanId(), serverBoom.context().parentId());
        } finally {
            client.disposeNow(RpcLab.TIMEOUT);
            server.disposeNow();
        }
    }

    /** A server without observations takes the context and ignores it; the client's side of the trace is there all the same. */
    @Test
    void aServerThatDoesNotObserveStillAnswersAnObservedClient() {
        DisposableRpcServer server = RpcLab.bind(RpcServer.create(RpcLab.rdmaServer()).register("upper",
                RpcHandler.of(r -> r.text().toUpperCase(java.util.Locale.ROOT).getBytes(StandardCharsets.UTF_8))));
        RpcClient client = RpcClient.create(RpcLab.rdmaClient(server)).defaults(CallOptions.defaults().timeout(RpcLab.TIMEOUT))
                .observations(RpcObservations.of(registry)).connect().block(RpcLab.TIMEOUT);
        try {
            assertEquals("HI", new String(client.call("upper", "hi".getBytes(StandardCharsets.UTF_8)).block(RpcLab.TIMEOUT), StandardCharsets.UTF_8));
            assertEquals("success", span("upper", Span.Kind.CLIENT, true).getTags().get("outcome"));
            assertTrue(tracer.getSpans().stream().noneMatch(s -> s.getKind() == Span.Kind.SERVER), "no server span: " + tracer.getSpans());
        } finally {
            client.disposeNow(RpcLab.TIMEOUT);
            server.disposeNow();
        }
    }

    /** The one finished span of that name and kind ({@code rpc}: recorded by jrdma, so tagged). */
    private SimpleSpan span(String name, Span.Kind kind, boolean rpc) {
        List<SimpleSpan> found = tracer.getSpans().stream()
                .filter(s -> name.equals(s.getName()) && (!rpc || s.getKind() == kind) && (rpc || s.getTags().get("rpc.method") == null))
                .toList();
        assertEquals(1, found.size(), "one span " + name + " " + kind + " in " + tracer.getSpans());
        return found.getFirst();
    }

    private static ObservationRegistry registry(SimpleTracer tracer) {
        Propagator propagator = new TraceparentPropagator(tracer);
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler.FirstMatchingCompositeObservationHandler(
                new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
                new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
                new DefaultTracingObservationHandler(tracer)));
        return registry;
    }

    /** W3C trace context's {@code traceparent} ({@code 00-traceid-spanid-01}) for the in-memory tracer. */
    private record TraceparentPropagator(SimpleTracer tracer) implements Propagator {
        @Override
        public List<String> fields() {
            return List.of("traceparent");
        }

        @Override
        public <C> void inject(TraceContext context, C carrier, Setter<C> setter) {
            setter.set(carrier, "traceparent", "00-" + context.traceId() + "-" + context.spanId() + "-01");
        }

        @Override
        public <C> Span.Builder extract(C carrier, Getter<C> getter) {
            String traceparent = getter.get(carrier, "traceparent");
            Span.Builder builder = tracer.spanBuilder();
            if (traceparent == null) return builder;
            String[] parts = traceparent.split("-");
            SimpleTraceContext parent = new SimpleTraceContext();
            parent.setTraceId(parts[1]);
            parent.setSpanId(parts[2]);
            parent.setSampled(true);
            return builder.setParent(parent);
        }
    }
}
