package io.jrdma.bench.lab;

/**
 * What one row measured at both ends, or why it failed.
 *
 * @param spec     the row
 * @param failure  null, or what failed (or, for a skipped row, why it did not run)
 * @param ops      operations in the measured window
 * @param nanos    the window, first post to last completion
 * @param latency  latency rows: the per-operation times, in µs as perftest reports them (half round trips for the ping-pongs)
 * @param client   the client JVM's cost over the window
 * @param server   the server JVM's cost over (just around) the window
 * @param rnrNaks  RNR NAKs the lab's devices received over the window ({@link RxeCounters}), -1 if unknown
 * @param counters the rxe counters that moved over the window, "" if none
 */
record RowResult(RowSpec spec, String failure, int ops, long nanos, Latencies.Summary latency, ProcessCost.Cost client,
                 ProcessCost.Cost server, long rnrNaks, String counters) {

    static RowResult failed(RowSpec spec, String why) {
        return new RowResult(spec, why, 0, 0, null, null, null, -1, "");
    }

    /** A row that did not run, and why: not a failure (a stream message above the receive buffer). */
    static RowResult skipped(RowSpec spec, String why) {
        return new RowResult(spec, SKIPPED + why, 0, 0, null, null, null, -1, "");
    }

    private static final String SKIPPED = "skipped: ";

    boolean skipped() {
        return failure != null && failure.startsWith(SKIPPED);
    }

    boolean ok() {
        return failure == null;
    }

    double seconds() {
        return nanos / 1e9;
    }

    /** Operations (or calls) per second over the window. */
    double rate() {
        return ops / seconds();
    }

    double megabytesPerSecond() {
        return rate() * spec.size() / 1e6;
    }

    /** Microseconds of CPU per operation of a cost, or NaN. */
    double perOp(long nanosOfCpu) {
        return ok() ? nanosOfCpu / 1e3 / ops : Double.NaN;
    }

    double perOpBytes(long bytes) {
        return ok() ? (double) bytes / ops : Double.NaN;
    }
}
