package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.ConnectionException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

/**
 * Where one TCP setup is, and its connect timer. Rules:
 * <ol>
 *   <li>the timer fires once, {@code connectTimeout} after {@link #arm}, on the scheduler's
 *       thread: a client's subscriber is told of its timeout then, not when the selector thread is
 *       next free (that thread opens devices and registers buffers for every setup of the
 *       resources; on a loaded host a timeout of 1 s came after 4 s behind it). The socket and QP
 *       are released on the selector thread, in order;</li>
 *   <li>the client's callback has one signal: {@link #tell()} is true once, for whichever of the
 *       timeout, a failure or the established connection comes first;</li>
 *   <li>a timeout says which step it expired in ({@link #awaiting}), and how much of the peer's
 *       hello had come; {@link #phase} and {@link #received} are volatile for that: the timer reads
 *       them on its own thread.</li>
 * </ol>
 */
final class TcpSteps {
    /**
     * CONNECTING: the client's TCP connect; QUEUE_PAIR: the client's QP being created; HELLO:
     * waiting for the peer's hello (the client: or a reject); READY: waiting for the peer's ready;
     * LIVE: established; REJECTED: the server's reject is going out, then it reads until the
     * client closes (closing on unread bytes would reset the connection, and the reset can destroy
     * the reject); DONE: closed.
     */
    enum Phase { CONNECTING, QUEUE_PAIR, HELLO, READY, LIVE, REJECTED, DONE }

    volatile Phase phase;
    /** Bytes of the peer's hello (or reject) in so far. */
    volatile int received;
    /** The bytes the peer's hello needs in all, as far as it is known (a proof makes it longer). */
    volatile int helloBytes = TcpHello.HELLO;
    private volatile Disposable timer;
    private final AtomicBoolean told = new AtomicBoolean();

    /**
     * Starts the timer; {@code timedOut} gets the timeout, on the scheduler's thread, saying
     * {@code what} did not finish and what it waited for, {@code peer} being "the server's" or
     * "the client's".
     */
    void arm(Scheduler scheduler, Duration connectTimeout, String what, String peer, Consumer<ConnectionException.Timeout> timedOut) {
        timer = scheduler.schedule(() -> timedOut.accept(new ConnectionException.Timeout(what + " did not finish within the connect timeout of "
                + SetupMessages.duration(connectTimeout) + ": it waited for " + awaiting(peer))), connectTimeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** True the first time: the caller gives the client's callback its one signal. */
    boolean tell() {
        return told.compareAndSet(false, true);
    }

    /** Whether the client's callback had its signal. */
    boolean told() {
        return told.get();
    }

    void stop() {
        Disposable t = timer;
        if (t != null) t.dispose();
    }

    /** The step a timeout expired in, {@code peer} being "the server's" or "the client's". */
    String awaiting(String peer) {
        return switch (phase) {
            case CONNECTING -> "the TCP connection";
            case QUEUE_PAIR -> "its queue pair to be created (the TCP connection was up)";
            case HELLO -> peer + " hello (" + received + " of " + helloBytes + " bytes came)";
            case READY -> peer + " ready";
            case REJECTED -> "the client to read the reject and close";
            case null, default -> "nothing";
        };
    }
}
