package io.jrdma.bench.lab;

import java.util.Arrays;

/**
 * Per-operation times of a latency row, recorded without allocating (a preallocated array, one
 * slot per iteration). Summarised as perftest summarises: typical = median, average, and the
 * 99th and 99.9th percentile of the sorted times.
 */
final class Latencies {
    /** Microseconds. */
    record Summary(double typical, double average, double p99, double p999) {}

    private final long[] nanos;
    private int count;

    Latencies(int capacity) {
        nanos = new long[capacity];
    }

    /** Forgets what was recorded (after the warm-up). */
    void reset() {
        count = 0;
    }

    void record(long elapsedNanos) {
        if (count < nanos.length) nanos[count++] = elapsedNanos;
    }

    int count() {
        return count;
    }

    /** The summary in microseconds, every time divided by {@code divisor} (2 for half round trips). */
    Summary summary(int divisor) {
        if (count == 0) throw new IllegalStateException("no latency recorded");
        long[] sorted = Arrays.copyOf(nanos, count);
        Arrays.sort(sorted);
        double sum = 0;
        for (long t : sorted) sum += t;
        double scale = 1e3 * divisor;
        return new Summary(sorted[count / 2] / scale, sum / count / scale, sorted[index(count, 0.99)] / scale,
                sorted[index(count, 0.999)] / scale);
    }

    private static int index(int n, double fraction) {
        return Math.min(n - 1, (int) Math.ceil(fraction * n) - 1);
    }
}
