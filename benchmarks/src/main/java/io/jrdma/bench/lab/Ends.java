package io.jrdma.bench.lab;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.time.Duration;
import java.util.Map;

/** The two ends of a row, on one of the layers; the bench client runs one, the bench server the other. */
final class Ends {
    /** How long connection setup, and each control step of a row, may take. */
    static final Duration SETUP = Duration.ofSeconds(30);

    /*
     * Where the two ends are: bin/bench sets JRDMA_BENCH_{SERVER,CLIENT}_{IP,DEVICE} from its
     * options (a real host, or the lab's devices); without them, the lab's own names.
     */
    static final String SERVER_IP = env("JRDMA_BENCH_SERVER_IP", "RXE_IP_B", "10.77.0.2");
    static final String CLIENT_IP = env("JRDMA_BENCH_CLIENT_IP", "RXE_IP_A", "10.77.0.1");
    static final String SERVER_DEVICE = env("JRDMA_BENCH_SERVER_DEVICE", "RXE_DEV_B", "rxe1");
    static final String CLIENT_DEVICE = env("JRDMA_BENCH_CLIENT_DEVICE", "RXE_DEV_A", "rxe0");

    private Ends() {}

    private static String env(String name, String labName, String labDefault) {
        String v = System.getenv(name);
        return v != null && !v.isBlank() ? v : System.getenv().getOrDefault(labName, labDefault);
    }

    /** How long a row's connection setup may take: longer for the RSocket layers, whose first connection loads their classes. */
    static Duration setup(RowSpec spec) {
        return spec.layer().rsocket() ? RSocketEnds.COLD : SETUP;
    }

    /** The client end, connected: it runs the row's operations. */
    interface ClientEnd extends AutoCloseable {
        /**
         * Runs {@code ops} operations of the row's test, keeping the row's depth in flight.
         *
         * @param latencies where a latency test records each operation's time (round trip for the ping-pongs)
         * @param deadline  System.nanoTime() by which it must be done, or it fails
         * @return the nanoseconds from the first post to the last completion
         */
        long run(int ops, Latencies latencies, long deadline) throws Exception;

        @Override
        void close();
    }

    /** The server end: listens, accepts the client's connection, then plays its part until closed. */
    interface ServerEnd extends AutoCloseable {
        /** Starts listening; returns what the client needs to connect (at least {@code port}). */
        Map<String, String> listen() throws Exception;

        /**
         * Accepts the client's connection, takes the client's {@code peer} line from the control
         * channel, starts the server's part (receive, echo, pong, or nothing) and answers {@code ok}
         * with what the client needs to run (the server's memory, for rdma-ffm).
         */
        void accept(ControlChannel control) throws Exception;

        /** {@return what ended the server's part early, or null while it runs (or never ran)} */
        default Throwable failure() {
            return null;
        }

        @Override
        void close();
    }

    static ClientEnd connect(RowSpec spec, Map<String, String> ready, ControlChannel control) throws Exception {
        return switch (spec.layer()) {
            case FFM -> FfmClient.connect(spec, ready, control);
            case REACTIVE -> ReactiveEnds.connect(spec, ready, control);
            case KOTLIN -> KotlinEnds.connect(spec, ready, control);
            case RSOCKET, RSOCKET_TCP -> RSocketEnds.connect(spec, ready, control);
        };
    }

    static ServerEnd server(RowSpec spec) {
        return switch (spec.layer()) {
            case FFM -> new FfmServer(spec);
            case REACTIVE -> new ReactiveEnds.Server(spec);
            case KOTLIN -> KotlinEnds.server(spec);
            case RSOCKET, RSOCKET_TCP -> RSocketEnds.server(spec);
        };
    }

    /** libc's abs, linked as a plain downcall: its return passes a thread-state transition. */
    private static final MethodHandle ABS = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("abs").orElseThrow(), FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    /**
     * What a BUSY spin does every 1,024 empty polls: {@link #checkDeadline}, and one plain downcall,
     * whose return checks for a safepoint. rdma-ffm links poll_cq as a critical downcall (no
     * thread-state change), and the C2 bench server's spin around it reached no safepoint under
     * multi-threaded TCG: a GC waited on it for ever, and the JVM hung (lab/README, "Pitfalls").
     */
    static void spinCheck(long deadline, long done, long ops) throws java.util.concurrent.TimeoutException {
        checkDeadline(deadline, done, ops);
        try {
            int unused = (int) ABS.invokeExact(0);
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /** Fails a run whose deadline passed, saying how far it got. */
    static void checkDeadline(long deadline, long done, long ops) throws java.util.concurrent.TimeoutException {
        if (System.nanoTime() - deadline > 0) {
            throw new java.util.concurrent.TimeoutException("the row's time limit passed after " + done + " of " + ops + " operations");
        }
    }
}
