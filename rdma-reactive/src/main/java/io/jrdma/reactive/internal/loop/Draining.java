package io.jrdma.reactive.internal.loop;

import io.jrdma.reactive.internal.loop.Loop.Member;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * A loop's closing members: each is drained (the loop waits until every work request it posted
 * has flushed, or its deadline passed) and then destroyed on the loop thread, between two polls,
 * so no QP is destroyed while its completions are being dispatched. Loop thread only. The rules:
 * <ul>
 * <li>a member's one-sided waits fail as it starts draining ({@link Watches#closeOwner}): a word
 *     nobody will write any more. No task of their own: a look at the loop's registered waits,
 *     none on a loop that has none;</li>
 * <li>a member is destroyed once, at the first look that finds it drained or past its drain
 *     deadline; a destroy that throws is logged, and the others go on;</li>
 * <li>a sleeping loop waits no longer than the earliest drain deadline ({@link #cap}), and
 *     allocates nothing for it while no member is draining;</li>
 * <li>a loop that stops on an error destroys the members still draining at once
 *     ({@link #destroyAll}), and a stopped loop each member that starts draining after: no loop is
 *     left to wait for them.</li>
 * </ul>
 */
final class Draining {
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.loop");

    private final String name;
    private final Watches watches;
    private final List<Member> draining = new ArrayList<>();

    /**
     * @param name    the loop's, for the log
     * @param watches the loop's one-sided waits
     */
    Draining(String name, Watches watches) {
        this.name = name;
        this.watches = watches;
    }

    /** The member starts draining (its QP is in ERR). */
    void add(Member member) {
        watches.closeOwner(member);
        draining.add(member);
    }

    boolean isEmpty() {
        return draining.isEmpty();
    }

    /** Destroys the members that have drained, or whose drain deadline passed. */
    void destroyDrained() {
        long now = System.nanoTime();
        for (Iterator<Member> it = draining.iterator(); it.hasNext(); ) {
            Member m = it.next();
            if (m.drained() || now - m.drainDeadline() > 0) {
                it.remove();
                try {
                    m.destroy();
                } catch (Throwable t) {
                    LOG.error("destroying a connection on " + name + " failed", t);
                }
            }
        }
    }

    /** How long a loop that sleeps at {@code now} may wait: {@code wait}, or less if a drain deadline comes first. */
    Duration cap(Duration wait, long now) {
        if (!draining.isEmpty()) {
            long nanos = wait.toNanos();
            for (int i = 0; i < draining.size(); i++) nanos = Math.min(nanos, Math.max(0, draining.get(i).drainDeadline() - now));
            wait = Duration.ofNanos(nanos);
        }
        return wait;
    }

    /** The loop stopped: destroys every member still draining, each once. */
    void destroyAll() {
        // members' closing needs a loop to destroy them; this one is gone, so destroy them here
        List<Member> all = List.copyOf(draining);
        draining.clear();
        for (Member m : all) {
            try {
                m.destroy();
            } catch (Throwable t) {
                LOG.error("destroying a connection on " + name + " failed", t);
            }
        }
    }
}
