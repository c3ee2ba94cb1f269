package io.jrdma.reactive.internal.setup;

import io.jrdma.reactive.ConnectionException;
import java.time.Duration;
import java.util.concurrent.Executor;
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
 *       them on its own thread;</li>
 *   <li>a timer that fires as the setup goes live loses: the setup ends on the selector thread only
 *       if it is not {@link Phase#LIVE} when the selector gets to it, and only the selector thread
 *       makes a setup live. A connection handed out is never closed by its setup's timer (a server
 *       whose 64th accept of a burst finished as its timer fired handed the connection out, then
 *       closed it without a word; the rdma_cm path's {@code done} flag says the same).</li>
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
     * Starts the timer. When it fires, {@code tell} gets the timeout on the scheduler's thread, and
     * {@code end} gets it on {@code selector} unless the setup went live first (rule 4); the timeout
     * says {@code what} did not finish and what it waited for, {@code peer} being "the server's" or
     * "the client's". A selector that stopped refuses the task: its sockets are closed already.
     */
    void arm(Scheduler scheduler, Duration connectTimeout, String what, String peer, Consumer<ConnectionException.Timeout> tell,
             Executor selector, Consumer<ConnectionException.Timeout> end) {
        timer = scheduler.schedule(() -> {
            ConnectionException.Timeout t = new ConnectionException.Timeout(what + " did not finish within the connect timeout of "
                    + SetupMessages.duration(connectTimeout) + ": it waited for " + awaiting(peer));
            tell.accept(t);
            SetupTasks.offer(selector, () -> {
                if (phase != Phase.LIVE) end.accept(t);
            });
        }, connectTimeout.toNanos(), TimeUnit.NANOSECONDS);
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
