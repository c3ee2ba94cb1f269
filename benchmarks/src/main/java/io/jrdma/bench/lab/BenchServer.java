package io.jrdma.bench.lab;

import io.jrdma.bench.lab.Ends.ServerEnd;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.time.LocalTime;
import java.time.temporal.ChronoUnit;

/**
 * The server JVM of {@code lab/bench}: started once per lab session, it serves every row of the
 * matrix on rxe1, as the bench client asks over the control connection. A control connection
 * that breaks ends the row in progress (its end is closed) and the server waits for the next
 * one: that is how the client recovers from a failed row.
 *
 * <pre>
 * row (spec)     → ok port=... (listening); then the end accepts, reads the client's "peer" line, answers ok
 * jit            → ok ns=...               (CPU time of the JIT compiler threads so far: is the warm-up over?)
 * begin          → ok                      (opens the server's measured window)
 * end            → ok cpu_ns= jit_ns= alloc= (closes it), or error when the server's part failed
 * close          → ok                      (the row's end closed)
 * quit           → ok, and the JVM exits
 * </pre>
 */
final class BenchServer {
    /** How long a control connection may stay silent: the client runs a row between two commands. */
    private static final Duration IDLE = Duration.ofMinutes(30);

    private ServerEnd end;
    private ProcessCost.Sample window;

    static void serve(InetSocketAddress address) throws IOException {
        BenchServer server = new BenchServer();
        try (ServerSocket listener = new ServerSocket()) {
            listener.setReuseAddress(true);
            listener.bind(address, 4);
            log("listening for the bench client on " + listener.getLocalSocketAddress());
            listener.setSoTimeout(Math.toIntExact(IDLE.toMillis()));
            while (true) {
                Socket socket;
                try {
                    socket = listener.accept();
                } catch (SocketTimeoutException e) {
                    log("no bench client for " + IDLE.toMinutes() + " minutes: exiting");
                    return;
                }
                try (ControlChannel control = new ControlChannel(socket)) {
                    if (server.session(control)) return;
                } catch (IOException | RuntimeException e) {
                    log("control connection ended: " + ControlChannel.describe(e));
                } finally {
                    server.closeEnd();
                }
            }
        }
    }

    /** Serves one control connection; true when the client said quit. */
    private boolean session(ControlChannel control) throws IOException {
        while (true) {
            ControlChannel.Line line = control.receive(IDLE);
            if (line == null) return false;
            try {
                switch (line.verb()) {
                    case "ping" -> control.ok(ControlChannel.map("pid", ProcessHandle.current().pid()));
                    case "jit" -> control.ok(ControlChannel.map("ns", ProcessCost.compilerNanos()));
                    case "row" -> {
                        closeEnd();
                        RowSpec spec = RowSpec.fromMap(line.args());
                        log("row " + spec.describe());
                        end = Ends.server(spec);
                        control.ok(end.listen());
                        end.accept(control);
                    }
                    case "begin" -> {
                        if (Threads.ON) log("begin: " + Threads.loops());
                        window = ProcessCost.open();
                        control.ok(java.util.Map.of());
                    }
                    case "end" -> {
                        ProcessCost.Cost cost = ProcessCost.close(window);
                        Throwable failure = end == null ? null : end.failure();
                        if (failure != null) throw new IllegalStateException("the server's part failed", failure);
                        control.ok(cost.toMap());
                        if (Threads.ON) log("end: " + Threads.loops());
                    }
                    case "close" -> {
                        closeEnd();
                        control.ok(java.util.Map.of());
                        if (Threads.ON) log("closed: " + Threads.loops());
                    }
                    case "quit" -> {
                        control.ok(java.util.Map.of());
                        log("quit");
                        return true;
                    }
                    default -> throw new IllegalArgumentException("unknown command " + line.verb());
                }
            } catch (Exception | LinkageError e) {
                // a class a layer needs that does not load (a dependency's version) fails its rows, not the server
                log(line.verb() + " failed: " + ControlChannel.describe(e));
                closeEnd();
                control.error(e);
            }
        }
    }

    private void closeEnd() {
        if (end == null) return;
        try {
            end.close();
        } catch (RuntimeException e) {
            log("closing the row's end failed: " + ControlChannel.describe(e));
        }
        end = null;
    }

    static void log(String message) {
        System.out.println(LocalTime.now().truncatedTo(ChronoUnit.MILLIS) + " bench server: " + message);
    }
}
