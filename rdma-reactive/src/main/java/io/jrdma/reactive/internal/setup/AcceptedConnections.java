package io.jrdma.reactive.internal.setup;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The connections a server accepted, and when what they share (its SRQs and exposed regions) may
 * go. A connect request that passed the server's closing check went on to build its connection on
 * the shared SRQ, and only then registered it; a close in between found no connection, freed the
 * SRQ under the QP being created on it (its posted buffers back to their pools, the SRQ itself
 * refused and never destroyed), and the connection registered after the sweep. The rules:
 * <ul>
 * <li>a setup {@linkplain #reserve reserves} its place before it takes anything shared; refused once
 *     the server is closing;</li>
 * <li>a reservation ends as a connection ({@link #add}) or without one ({@link #abandon});</li>
 * <li>the shared things go once the server is closing and no connection nor reservation is left:
 *     exactly one call says so (returns true).</li>
 * </ul>
 */
final class AcceptedConnections<C> {
    private final Set<C> live = new HashSet<>();  // guarded by this
    private int reserved;                          // guarded by this
    private boolean closing;                       // guarded by this
    private boolean released;                      // guarded by this

    /** {@return false if the server is closing: the setup is refused} */
    synchronized boolean reserve() {
        if (closing) return false;
        reserved++;
        return true;
    }

    /** The reserved place holds {@code connection} until {@link #remove}. */
    synchronized void add(C connection) {
        reserved--;
        live.add(connection);
    }

    /** {@return whether the shared things go now} The reservation ended without a connection. */
    synchronized boolean abandon() {
        reserved--;
        return lastGone();
    }

    /** {@return whether the shared things go now} {@code connection} was destroyed. */
    synchronized boolean remove(C connection) {
        return live.remove(connection) && lastGone();
    }

    synchronized boolean isClosing() {
        return closing;
    }

    /** {@return the connections to close, or null if it was closing already} Refuses reservations from now on. */
    synchronized @Nullable List<C> close() {
        if (closing) return null;
        closing = true;
        return List.copyOf(live);
    }

    /** {@return whether the shared things go now}: after {@link #close}, when nothing was left. */
    synchronized boolean releaseIfIdle() {
        return lastGone();
    }

    private boolean lastGone() {
        if (!closing || released || reserved > 0 || !live.isEmpty()) return false;
        released = true;
        return true;
    }
}
