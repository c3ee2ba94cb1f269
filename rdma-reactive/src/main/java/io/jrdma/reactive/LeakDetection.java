package io.jrdma.reactive;

import io.jrdma.reactive.internal.Leaks;
import java.time.Duration;
import java.util.function.Consumer;
import reactor.core.Disposable;

/**
 * Reports a {@link RdmaConnection}, {@link io.jrdma.reactive.memory.BufferPool} (and registered
 * region) or {@link io.jrdma.reactive.memory.ReceivedMessage} that became unreachable before it was
 * closed or released, with the stack of the call that created it (for a pool, at
 * {@link LeakDetectionLevel#EVERY}, also where each buffer it never got back was acquired). How many
 * objects it follows is its {@linkplain LeakDetectionLevel level}: by default one in 128
 * ({@link LeakDetectionLevel#SAMPLED}), cheap enough for production. Set at start-up with
 * {@code -Djrdma.leakDetection=off|sampled|every} ({@code false} and {@code true}: off and every)
 * and {@code -Djrdma.leakDetection.samplingInterval=N}, or with {@link #setLevel} and
 * {@link #setSamplingInterval}. The test kit rdma-test tracks every object ({@link #enable()}) in
 * each {@code @RdmaTest} and fails a test that leaks.
 *
 * <p>Each leak is reported once: logged at ERROR on {@code io.jrdma.reactive.leak} as one block,
 * and passed to the {@link #onLeak} listeners. What is tracked:
 * <ul>
 * <li>a connection handed out by {@link RdmaClient#connect()}, {@link DisposableRdmaServer#accept()}
 *     or {@link DisposableRdmaServer#connections()} (a server's {@code handle} function does not
 *     own its connection: the server disposes it), until {@code close()} is subscribed or
 *     {@code dispose()} / {@code disposeNow()} called. One that its peer or an error already closed,
 *     with no message left unread, holds nothing and is not reported;</li>
 * <li>a received message, from the {@code receive()} or {@code receives()} call that delivered it,
 *     until released;</li>
 * <li>a pool from {@link io.jrdma.reactive.memory.MemoryDomain#createPool} or
 *     {@link io.jrdma.reactive.memory.BufferPool#create}, until closed with every buffer back
 *     (its memory deregistered); the report counts the buffers still out and, at EVERY, names where
 *     each was acquired. A region from {@link io.jrdma.reactive.memory.MemoryDomain#register},
 *     until released.</li>
 * </ul>
 * What happens to the native resources of a leaked object: <b>a leaked connection or pool keeps
 * them</b> until the process exits. Closing a connection or deregistering a pool nobody can
 * reach could still pull memory from under code that holds one of its buffers (its
 * {@code exposedBuffer()}, a buffer's {@code segment()}), the use after free this library exists to
 * prevent, so the detector only reports. <b>A leaked received message is released</b>, so its
 * receive buffer goes back to the receive queue and the peer does not run out of credits, when
 * that is safe: when its {@code buffer()} was never taken. Its bytes were then only reachable
 * through the message, by copy ({@code bytes()}, {@code text()}), and nothing was posted from the
 * buffer. A message whose buffer was taken is only reported.
 *
 * <p>The cost of an untracked object: one branch on a null field where it is closed or released,
 * and where it is created one on a static field (OFF) or one thread-local random draw (SAMPLED);
 * nothing is allocated. Of a tracked one: a stack trace and a phantom reference, and one daemon
 * thread ({@code jrdma-leak-detector}) for all. Figures: {@link LeakDetectionLevel}.
 */
public final class LeakDetection {
    /** The system property that sets the {@linkplain LeakDetectionLevel level} at start-up: {@value}. */
    public static final String PROPERTY = Leaks.PROPERTY;
    /** The system property that sets the {@linkplain #samplingInterval() sampling interval} at start-up: {@value}. */
    public static final String SAMPLING_INTERVAL_PROPERTY = Leaks.INTERVAL_PROPERTY;

    private LeakDetection() {
    }

    /** {@return whether objects created from now on may be tracked: the level is not OFF} */
    public static boolean isEnabled() {
        return Leaks.enabled();
    }

    /** Tracks every such object created from now on (objects created before stay as they were): {@code setLevel(EVERY)}. */
    public static void enable() {
        Leaks.enable();
    }

    /** {@return how many of the objects created from now on are tracked} */
    public static LeakDetectionLevel level() {
        return Leaks.level();
    }

    /**
     * Sets how many of the objects created from now on are tracked; objects created before stay as they were.
     *
     * @param level OFF, SAMPLED or EVERY
     */
    public static void setLevel(LeakDetectionLevel level) {
        Leaks.setLevel(level);
    }

    /** {@return at {@link LeakDetectionLevel#SAMPLED}, one object in how many is tracked (on average: picked at random)} */
    public static int samplingInterval() {
        return Leaks.samplingInterval();
    }

    /**
     * Sets one object in how many is tracked at {@link LeakDetectionLevel#SAMPLED}, from now on.
     *
     * @param interval from 1 (every object, as EVERY but without a pool's acquisition sites)
     * @throws IllegalArgumentException when {@code interval} is not positive
     */
    public static void setSamplingInterval(int interval) {
        Leaks.setSamplingInterval(interval);
    }

    /**
     * Passes every report from now on to {@code listener}, on the detector's thread, besides logging it.
     *
     * @param listener takes each report; it must not block
     * @return disposing it removes the listener
     */
    public static Disposable onLeak(Consumer<? super LeakReport> listener) {
        Runnable remove = Leaks.onLeak(listener);
        return remove::run;
    }

    /**
     * Runs the garbage collector and waits until every tracked object that was unreachable when
     * this was called has been reported: for a test's teardown, once the test dropped what it made.
     *
     * @param timeout how long to wait at most
     * @return true when done; false when {@code timeout} passed first (explicit garbage collection
     *         disabled with {@code -XX:+DisableExplicitGC}, say)
     */
    public static boolean detectNow(Duration timeout) {
        return Leaks.detectNow(timeout);
    }
}
