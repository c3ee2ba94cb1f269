package io.jrdma.reactive;

/**
 * How many of the tracked objects {@link LeakDetection} follows, as Netty's
 * {@code ResourceLeakDetector.Level}: {@link #OFF}, {@link #SAMPLED} (the default) or
 * {@link #EVERY}. Set with {@code -Djrdma.leakDetection=off|sampled|every} ({@code false} and
 * {@code true}, as before levels, mean {@code off} and {@code every}) or {@link LeakDetection#setLevel}.
 *
 * <p><b>Why sampled by default:</b> a leak in production (a message never released starves its peer
 * of credits, a connection or pool dropped keeps its QP and pinned memory until the process exits)
 * is a leak of many objects, so one in {@linkplain LeakDetection#samplingInterval() 128} tracked is
 * enough to name where it is made, while an untracked object costs one draw of a thread-local random
 * number: no allocation, no stack walk. Netty made the same choice for its buffers.
 */
public enum LeakDetectionLevel {
    /** Nothing is tracked: one branch where the objects are created and closed. */
    OFF,
    /**
     * One object in {@link LeakDetection#samplingInterval()} is tracked, with the stack of the call
     * that handed it out; a sampled pool does not record where each of its buffers is acquired.
     * A call handing out a stream ({@code receives()}, {@code connections()}) records its stack once
     * and samples the objects it delivers.
     */
    SAMPLED,
    /**
     * Every object is tracked with its stack, and a tracked pool records where each buffer was
     * acquired: for tests (the test kit and this build's own run with it), too costly to leave on.
     */
    EVERY
}
