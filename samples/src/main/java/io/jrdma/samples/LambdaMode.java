package io.jrdma.samples;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.rpc.Codec;
import io.jrdma.reactive.rpc.DisposableRpcServer;
import io.jrdma.reactive.rpc.RpcClient;
import io.jrdma.reactive.rpc.RpcException;
import io.jrdma.reactive.rpc.RpcHandler;
import io.jrdma.reactive.rpc.RpcServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * {@code rdma lambda [SERVER]}: remote function execution over the RPC layer. The server runs
 * only its registered functions (echo, upper, sum, sha256); no code travels. The client reads
 * lines {@code FUNCTION ARGUMENT} and prints each result; {@code sum} takes numbers separated by
 * spaces, {@code sha256} prints the digest of the argument in hex.
 *
 * <p>Wire: docs/rpc-protocol.md (small payloads in the SEND, large ones by RDMA READ).
 */
@Command(name = "lambda", mixinStandardHelpOptions = true,
        description = "Remote function execution: the client calls functions registered on the server.")
final class LambdaMode implements Callable<Integer> {
    @Mixin
    ModeOptions options;

    @Override
    public Integer call() throws Exception {
        options.requireJrdmaPeer("lambda");
        try (Session session = new Session(options)) {
            return options.isClient() ? client(session) : serve(session);
        }
    }

    private int serve(Session session) throws InterruptedException {
        Map<String, RpcHandler> functions = new LinkedHashMap<>();
        SampleFunctions.functions().forEach((name, f) -> functions.put(name, request -> {
            session.out.printf("call %s(%d bytes)%n", name, request.length());
            return f.handle(request);
        }));
        DisposableRpcServer server = RpcServer.create(options.rdmaServer().resources(session.resources))
                .registerAll(functions).bind().block(options.timeout());
        try {
            session.out.printf("rdma lambda: listening on %s:%d over %s; functions %s%n",
                    server.address().getAddress().getHostAddress(), server.address().getPort(), options.transportName(),
                    server.functions());
            // serve until the first client (or, with --keep-serving, until stopped) has gone
            while (!server.isDisposed()) {
                var stats = server.stats();
                if (!options.keepServing && stats.connectionsAccepted() > 0 && stats.connectionsOpen() == 0) break;
                Thread.sleep(200);
            }
            session.out.println("client disconnected");
            return 0;
        } finally {
            server.dispose();
        }
    }

    private int client(Session session) throws Exception {
        RpcClient rpc = RpcClient.connect(options.rdmaClient().resources(session.resources)
                        .exposeBuffer(1 << 20, Access.REMOTE_READ, Access.REMOTE_WRITE))
                .block(options.timeout().plusSeconds(5));
        // not session.connected(): its "server went away" watcher would mistake our own close for the server's
        session.out.printf("rdma lambda: connected to %s:%d over %s%n", options.server, options.port, options.transportName());
        try {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            int status = 0;
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isBlank()) continue;
                String[] parts = line.strip().split("\\s+", 2);
                String fn = parts[0];
                String arg = parts.length > 1 ? parts[1] : "";
                try {
                    System.out.println(fn + "(" + arg + ") = " + invoke(rpc, fn, arg));
                } catch (RpcException e) {
                    System.out.println(fn + "(" + arg + ") failed: " + e.getMessage());
                    status = 1;
                }
            }
            return status;
        } finally {
            rpc.close().block(options.timeout());
        }
    }

    private String invoke(RpcClient rpc, String fn, String arg) {
        return switch (fn) {
            case "sum" -> {
                long[] values = arg.isBlank() ? new long[0] : Arrays.stream(arg.split("\\s+")).mapToLong(Long::parseLong).toArray();
                yield String.valueOf(rpc.call("sum", values, Codec.longArray(), Codec.int64()).block(options.timeout()));
            }
            case "sha256" -> HexFormat.of().formatHex(rpc.call("sha256", arg.getBytes(StandardCharsets.UTF_8)).block(options.timeout()));
            default -> rpc.call(fn, arg).block(options.timeout());
        };
    }
}
