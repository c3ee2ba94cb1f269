package io.jrdma.samples;

import io.jrdma.ffm.Access;
import io.jrdma.rpc.Codec;
import io.jrdma.rpc.DisposableRpcServer;
import io.jrdma.rpc.RpcClient;
import io.jrdma.rpc.RpcException;
import io.jrdma.rpc.RpcHandler;
import io.jrdma.rpc.RpcServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

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

    @Option(names = "--max-payload", defaultValue = "1048576", paramLabel = "BYTES", converter = MaxPayload.class,
            description = "The largest argument, and the largest result, of one call: each side registers room for both"
                    + " (arguments beyond --size travel by RDMA READ, results by RDMA WRITE). Give both sides the same."
                    + " 64 to 536870912. Default: ${DEFAULT-VALUE}.")
    int maxPayload;

    /** --max-payload: its room, argument and result, is registered on both sides. */
    static final class MaxPayload extends ModeOptions.Range {
        MaxPayload() {
            super(64, 1 << 29, "bytes");
        }
    }

    /** Per call, besides the payload, for the RPC headers and alignment. */
    private static final int FRAME_ROOM = 4096;

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
        DisposableRpcServer server = RpcServer.create(options.rdmaServer().runOn(session.resources))
                .stagingBuffer(room()).registerAll(functions).bind().block(options.timeout());
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
            server.disposeNow();
        }
    }

    /** Registered room for one call: its argument and its result, each with its frame. */
    private long room() {
        return 2L * (maxPayload + FRAME_ROOM);
    }

    private int client(Session session) throws Exception {
        RpcClient rpc = session.awaitConnect(RpcClient.connect(options.rdmaClient().runOn(session.resources)
                .exposeBuffer(room(), Access.REMOTE_READ, Access.REMOTE_WRITE)));
        // not session.connected(): its "server went away" watcher would mistake our own close for the server's
        session.out.printf("rdma lambda: connected to %s:%d over %s%n", options.server, options.port, options.transportName());
        AtomicBoolean ending = new AtomicBoolean();
        // the server may go while we wait for input: say so and exit then, not at the next line
        rpc.onDispose().subscribe(null, null, () -> {
            if (!ending.get()) session.serverGone("lambda", true);
        });
        try {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            int status = 0;
            for (String line; (line = in.readLine()) != null; ) {
                if (line.isBlank()) continue;
                String[] parts = line.strip().split("\\s+", 2);
                String fn = parts[0];
                String arg = parts.length > 1 ? parts[1] : "";
                // one bad line is reported and the session goes on: the next call is as good as ever
                try {
                    session.out.println(fn + "(" + shown(arg) + ") = " + invoke(rpc, fn, arg));
                } catch (RpcException.ConnectionLost e) {
                    // no later call can do better: one line, not one per line of input left
                    session.serverGone("lambda", false);
                    return 1;
                } catch (IllegalArgumentException | RpcException e) {
                    session.out.println(fn + "(" + shown(arg) + ") failed: " + why(fn, arg, e));
                    status = 1;
                }
            }
            return status;
        } finally {
            ending.set(true);
            rpc.disposeNow(options.timeout());
        }
    }

    private String invoke(RpcClient rpc, String fn, String arg) {
        byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > maxPayload) {
            throw new IllegalArgumentException("the argument has " + bytes.length + " bytes, more than --max-payload " + maxPayload
                    + ": raise --max-payload, on both sides");
        }
        return switch (fn) {
            case "sum" -> String.valueOf(rpc.call("sum", numbers(arg), Codec.longArray(), Codec.int64()).block(options.timeout()));
            case "sha256" -> HexFormat.of().formatHex(rpc.call("sha256", bytes).block(options.timeout()));
            default -> rpc.call(fn, arg).block(options.timeout());
        };
    }

    /** {@code sum}'s argument: whole numbers separated by spaces. */
    static long[] numbers(String arg) {
        if (arg.isBlank()) return new long[0];
        String[] words = arg.strip().split("\\s+");
        long[] values = new long[words.length];
        for (int i = 0; i < words.length; i++) {
            try {
                values[i] = Long.parseLong(words[i]);
            } catch (NumberFormatException e) {
                if (words[i].matches("[+-]?\\d+")) {
                    throw new IllegalArgumentException(words[i] + " is beyond the 64-bit range: sum adds whole numbers from "
                            + Long.MIN_VALUE + " to " + Long.MAX_VALUE);
                }
                throw new IllegalArgumentException("\"" + words[i] + "\" is not a whole number: sum adds whole numbers separated by"
                        + " spaces, e.g. sum 1 2 3");
            }
        }
        return values;
    }

    /** A failed call in the command's terms: its options and functions, not the RPC API's settings. */
    private String why(String fn, String arg, RuntimeException e) {
        String prefix = fn + ": ";
        String message = String.valueOf(e.getMessage());
        if (message.startsWith(prefix)) message = message.substring(prefix.length());
        return switch (e) {
            case RpcException.UnknownFunction u -> "the server has no function " + fn + " (it runs " + String.join(", ",
                    SampleFunctions.functions().keySet()) + ")";
            case RpcException.PayloadTooLarge p -> "the server does not take an argument of " + arg.getBytes(StandardCharsets.UTF_8).length
                    + " bytes: start it with a larger --max-payload";
            case RpcException.ResponseTooLarge r -> "the result needs " + r.requiredBytes() + " bytes, more than --max-payload makes room"
                    + " for: raise --max-payload, on both sides";
            case RpcException.HandlerFailed h -> "the server's " + fn + " failed: "
                    + h.remoteMessage().replaceFirst("^[\\w.$]+(Exception|Error): ", "");
            case RpcException.Timeout t -> "no response within --timeout " + options.timeoutSeconds + " s";
            default -> message;
        };
    }

    /** An argument as the result line shows it: long ones cut, with their size. */
    private static String shown(String arg) {
        return arg.length() <= 64 ? arg : arg.substring(0, 32) + "... (" + arg.getBytes(StandardCharsets.UTF_8).length + " bytes)";
    }
}
