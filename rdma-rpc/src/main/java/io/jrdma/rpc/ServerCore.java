package io.jrdma.rpc;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/** What a running server shares across its connections: functions, idempotency table, handler slots, counters. */
final class ServerCore {
    static final Logger LOG = Loggers.getLogger("io.jrdma.rpc");
    private static final long LOG_EVERY = 1000;

    final FunctionRegistry functions;
    final RpcServer.Settings settings;
    final long handlerTimeoutNanos;
    final ResultTable<Waiter> table;
    final Set<ServerSession> sessions = ConcurrentHashMap.newKeySet();
    /** Handler timeouts, swept together: a timer per call costs a thread wake-up each. */
    final Deadlines deadlines = new Deadlines();
    private final AtomicInteger running = new AtomicInteger();
    /** Null without metrics: then nothing on a call's path records anything. */
    final @Nullable ServerMeters meters;
    /** Null without observations ({@link RpcObservations}). */
    final @Nullable CallObservations observations;

    final LongAdder connectionsAccepted = new LongAdder();
    final LongAdder frames = new LongAdder();
    final LongAdder framesDone = new LongAdder();
    final LongAdder dropped = new LongAdder();
    final LongAdder rejected = new LongAdder();
    final LongAdder unknownFunction = new LongAdder();
    final LongAdder overloaded = new LongAdder();
    final LongAdder hellos = new LongAdder();
    final LongAdder executed = new LongAdder();
    final LongAdder handlerErrors = new LongAdder();
    final LongAdder replayed = new LongAdder();
    final LongAdder joined = new LongAdder();
    final LongAdder payloadsFetched = new LongAdder();
    final LongAdder responsesSent = new LongAdder();
    final LongAdder responsesWritten = new LongAdder();
    final LongAdder responsesTooLarge = new LongAdder();
    final LongAdder responseFailures = new LongAdder();

    /** A keyed retry parked on a running execution, answered on its own connection when it finishes. */
    record Waiter(ServerSession session, RequestHeader header) {}

    ServerCore(FunctionRegistry functions, RpcServer.Settings settings, @Nullable ServerMeters meters) {
        this(functions, settings, meters, null);
    }

    ServerCore(FunctionRegistry functions, RpcServer.Settings settings, @Nullable ServerMeters meters, @Nullable CallObservations observations) {
        this.functions = functions;
        this.settings = settings;
        this.meters = meters;
        this.observations = observations;
        this.handlerTimeoutNanos = settings.handlerTimeout().toNanos();
        this.table = new ResultTable<>(settings.tableEntries(), settings.tableBytes(), settings.tableTtl(), System::nanoTime);
    }

    boolean tryStartHandler() {
        int n;
        do {
            n = running.get();
            if (n >= settings.maxConcurrentCalls()) return false;
        } while (!running.compareAndSet(n, n + 1));
        return true;
    }

    void handlerDone() {
        running.decrementAndGet();
    }

    /**
     * One line per dropped frame at DEBUG; at WARNING only the first few and then every
     * thousandth, so a peer spraying garbage cannot flood the log.
     */
    void logDrop(ServerSession session, String reason) {
        dropped.increment();
        if (meters != null) meters.refused(ServerMeters.Refusal.DROPPED);
        long n = dropped.sum();
        if (LOG.isDebugEnabled()) LOG.debug("dropped a frame from " + session + ": " + reason);
        if (n <= 10 || n % LOG_EVERY == 0) {
            LOG.warn("dropped a frame from " + session + ": " + reason + " (" + n + " dropped so far)");
        }
    }

    RpcServerStats stats() {
        return new RpcServerStats(connectionsAccepted.sum(), sessions.size(), frames.sum(), framesDone.sum(), dropped.sum(),
                rejected.sum(), unknownFunction.sum(), overloaded.sum(), hellos.sum(), executed.sum(), handlerErrors.sum(),
                replayed.sum(), joined.sum(), payloadsFetched.sum(), responsesSent.sum(), responsesWritten.sum(),
                responsesTooLarge.sum(), responseFailures.sum(), running.get(), table.size());
    }
}
