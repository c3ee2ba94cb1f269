package io.jrdma.reactive;

import java.util.List;

/**
 * What the leak detector ({@link LeakDetection}) found: an object that became unreachable before
 * it was closed or released, where it was created, and what became of its native resources.
 *
 * @param resource     the object, as its {@code toString()} described it when it was tracked (e.g.
 *                     {@code RdmaConnection[rdma_cm /10.77.0.2:7471 <- /10.77.0.1:40000, QP 0x11]})
 * @param problem      what its owner did not do, e.g. "became unreachable without being closed"
 * @param outcome      what happens to its native resources (kept until the process exits, or
 *                     reclaimed, and why that is safe)
 * @param createdBy    the API call that handed it to the application, e.g. {@code RdmaClient.connect()}
 * @param creationSite the stack of that call, innermost frame first, starting at the API method
 */
public record LeakReport(String resource, String problem, String outcome, String createdBy, List<StackTraceElement> creationSite) {
    /** Copies {@code creationSite}. */
    public LeakReport {
        creationSite = List.copyOf(creationSite);
    }

    /** {@return the report as logged: one block, the creation site one frame a line} */
    @Override
    public String toString() {
        return text(creationSite.size());
    }

    /**
     * The report as one readable block, at most {@code maxFrames} frames of the creation site.
     *
     * @param maxFrames frames to print; the rest are counted
     * @return the block, lines separated by {@code \n}
     */
    public String text(int maxFrames) {
        StringBuilder b = new StringBuilder("LEAK: ").append(resource).append(' ').append(problem).append(".\n  ")
                .append(outcome).append(".\n  Created by ").append(createdBy).append(" at:");
        int n = Math.min(maxFrames, creationSite.size());
        for (int i = 0; i < n; i++) b.append("\n    at ").append(creationSite.get(i));
        if (n < creationSite.size()) b.append("\n    ... ").append(creationSite.size() - n).append(" more");
        return b.toString();
    }
}
