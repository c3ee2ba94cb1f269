package io.jrdma.rpc;

import static java.nio.charset.StandardCharsets.UTF_8;

import io.jrdma.reactive.MetricsRecorder;
import io.jrdma.ffm.Access;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaServer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Locale;
import java.util.stream.LongStream;
import reactor.core.publisher.Mono;

/**
 * The code blocks of docs/ that use rdma-rpc, between the README markers, compiled with the tests
 * and never run (the RPC device tests run the same calls against rxe): if the API they show
 * changes, the build fails here, and ReadmeSnippetTest fails if a page and these lines differ.
 */
final class DocSnippets {
    private DocSnippets() {
    }

    /** docs/rpc.md: {@code order} is whatever a "charge" function takes. */
    @SuppressWarnings("unused")
    static void remoteFunctions(byte[] order) {
        // README: rpc
        DisposableRpcServer server = RpcServer.create(RdmaServer.create().host("10.77.0.2").port(7471))
                .register("upper", RpcHandler.of(r -> r.text().toUpperCase(Locale.ROOT).getBytes(UTF_8)))
                .register("sum", Codec.longArray(), Codec.int64(), v -> Mono.just(LongStream.of(v).sum()))
                .register("sha256", r -> Mono.fromCallable(() -> {          // hashed in place, in registered memory
                    MessageDigest md = MessageDigest.getInstance("SHA-256");
                    md.update(r.asByteBuffer());
                    return md.digest();
                }))
                .bind().block(Duration.ofSeconds(10));

        RpcClient client = RpcClient.connect(RdmaClient.create().host("10.77.0.2").port(7471)
                .exposeBuffer(8 << 20, Access.REMOTE_READ, Access.REMOTE_WRITE))  // for payloads > one buffer
                .block(Duration.ofSeconds(10));
        String up = client.call("upper", "hello, rdma").block();             // "HELLO, RDMA"
        long sum = client.call("sum", new long[] {1, 2, 3}, Codec.longArray(), Codec.int64()).block();
        byte[] digest = client.call("sha256", new byte[2 << 20]).block();    // fetched by RDMA READ
        byte[] once = client.call("charge", order,                           // retried, runs at most once
                CallOptions.defaults().timeout(Duration.ofSeconds(2)).retries(3)).block();
        // README end
    }

    /** docs/rpc.md, Metrics: {@code registry} is the application's. */
    @SuppressWarnings("unused")
    static void metrics(MeterRegistry registry) {
        // README: rpc metrics
        DisposableRpcServer server = RpcServer.create(RdmaServer.create().host("10.77.0.2").port(7471))
                .register("upper", RpcHandler.of(r -> r.text().toUpperCase(Locale.ROOT).getBytes(UTF_8)))
                .metrics(true)                                                // to Metrics.globalRegistry
                .bind().block(Duration.ofSeconds(10));
        RpcClient client = RpcClient.create(RdmaClient.create().host("10.77.0.2").port(7471))
                .defaults(CallOptions.defaults().timeout(Duration.ofSeconds(2)))
                .metrics(true, MetricsRecorder.micrometer(registry))          // the application's MeterRegistry
                .connect().block(Duration.ofSeconds(10));
        // README end
    }

    /** docs/rpc.md, Tracing: {@code registry} is the application's, with its tracing handlers (Spring Boot's, say). */
    @SuppressWarnings("unused")
    static void tracing(ObservationRegistry registry) {
        // README: rpc tracing
        DisposableRpcServer server = RpcServer.create(RdmaServer.create().host("10.77.0.2").port(7471))
                .register("upper", RpcHandler.of(r -> r.text().toUpperCase(Locale.ROOT).getBytes(UTF_8)))
                .observations(RpcObservations.of(registry))                  // a span per call, current in the handler
                .bind().block(Duration.ofSeconds(10));
        RpcClient client = RpcClient.create(RdmaClient.create().host("10.77.0.2").port(7471))
                .observations(RpcObservations.of(registry))                  // its trace context travels in the request
                .connect().block(Duration.ofSeconds(10));
        // README end
    }
}
