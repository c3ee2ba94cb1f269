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
 *
 * <p><b>Measured</b> with {@code LeakDetectionBench} (benchmarks, JMH, {@code -f 2 -wi 3 -i 10 -prof gc}):
 * {@code decide} is the choice alone ({@code connect()}, {@code accept()}, {@code receive()} and the
 * pool factories make it per object), {@code receiveAndRelease} a received message handed out,
 * tracked if chosen, and released. Medians of 20 one-second iterations, ns (bytes) per object; 2026-11-27, the
 * build host (2 vCPUs, AMD EPYC, shared with a lab VM that used about 1.5 of them: the means
 * scatter), Temurin 25.0.3. JMH's stack is about 10 frames deep; an application's under Reactor is
 * deeper, which makes a stack, so EVERY, dearer.
 * <table>
 * <caption>cost per object by level</caption>
 * <tr><th>level</th><th>decide</th><th>receiveAndRelease</th></tr>
 * <tr><td>OFF</td><td>1.2 (0)</td><td>110 (40)</td></tr>
 * <tr><td>SAMPLED, 1 in 128</td><td>26 (5.7); an untracked object alone: 5.2 (0)</td><td>152 (47)</td></tr>
 * <tr><td>EVERY</td><td>1,236 (728)</td><td>1,508 (992)</td></tr>
 * </table>
 * An earlier run on a quieter host ({@code -f 1 -wi 3 -i 5}): receiveAndRelease 50 ns at OFF, 56 at
 * SAMPLED, about 1,100 at EVERY. SAMPLED's average is mostly its one stack in 128.
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
