package io.jrdma.reactive.internal;

import io.jrdma.reactive.LeakReport;
import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import reactor.util.Logger;
import reactor.util.Loggers;

/**
 * The leak detector behind {@link io.jrdma.reactive.LeakDetection}, shaped like Netty's
 * ResourceLeakDetector: an object that must be closed or released gets a {@link Tracker}, a
 * phantom reference that never holds it strongly, together with the stack of the call that handed
 * it to the application. Closing the object closes the tracker; a tracker whose object became
 * unreachable first is dequeued by the detector's one thread, which asks it what leaked, logs the
 * answer once on {@code io.jrdma.reactive.leak} at ERROR and hands it to the listeners.
 *
 * <p>Off unless {@code -Djrdma.leakDetection=true} or {@link #enable()}: then {@link #site} returns
 * null, nothing is tracked, and the tracked types pay one branch on a null field.
 */
public final class Leaks {
    public static final String PROPERTY = "jrdma.leakDetection";
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.leak");
    /** Frames a report prints from the creation site; a JUnit or Reactor stack below them says nothing more. */
    private static final int MAX_FRAMES = 24;
    private static final List<String> LIBRARY_FRAMES = List.of("io.jrdma.reactive.memory.BufferPool", "io.jrdma.reactive.memory.RegisteredBuffer",
            "io.jrdma.reactive.internal.", "io.jrdma.reactive.RdmaConnection", "reactor.", "java.", "jdk.");

    private static volatile boolean enabled = Boolean.parseBoolean(System.getProperty(PROPERTY, "false"));
    private static final ReferenceQueue<Object> QUEUE = new ReferenceQueue<>();
    /** Keeps every open tracker reachable until its object is closed or found leaked. */
    private static final Set<Tracker> LIVE = ConcurrentHashMap.newKeySet();
    private static final List<Consumer<? super LeakReport>> LISTENERS = new CopyOnWriteArrayList<>();
    private static @Nullable Thread detector;  // guarded by Leaks.class

    private Leaks() {
    }

    public static boolean enabled() {
        return enabled;
    }

    public static void enable() {
        enabled = true;
    }

    /** The stack of the call handing a resource to the application, {@code what} naming it; null when detection is off. */
    public static @Nullable Site site(String what) {
        return enabled ? new Site(what) : null;
    }

    /** Where a tracked object was created, for its report. Never thrown. */
    public static final class Site extends Throwable {
        private static final long serialVersionUID = 1L;

        public Site(String what) {
            super(what, null, false, true);
        }

        /** The first frame of the caller's code: past the pool's own, the library's internals, Reactor's and the JDK's. */
        public String caller() {
            for (StackTraceElement f : getStackTrace()) {
                String c = f.getClassName();
                if (LIBRARY_FRAMES.stream().noneMatch(c::startsWith)) return f.toString();
            }
            return "an unknown site";
        }

        /**
         * The frames from the API call that created the object on: the detector's own are left
         * out, and so is what runs below a reflective call (a test framework's machinery).
         */
        List<StackTraceElement> frames() {
            StackTraceElement[] all = getStackTrace();
            int from = 0;
            while (from < all.length && all[from].getClassName().equals(Leaks.class.getName())) from++;
            int to = from;
            while (to < all.length && !all[to].getClassName().startsWith("jdk.internal.reflect.")) to++;
            return List.of(all).subList(from, to);
        }
    }

    /**
     * One tracked object. Subclasses keep what they need to tell what leaked, never the object
     * itself (that would keep it reachable forever).
     */
    public abstract static class Tracker extends PhantomReference<Object> {
        private final Site site;

        protected Tracker(Object referent, Site site) {
            super(referent, QUEUE);
            this.site = site;
            LIVE.add(this);
            startDetector();
        }

        /** The object was closed or released: it is no leak, whenever it becomes unreachable. */
        public final void close() {
            if (LIVE.remove(this)) clear();
        }

        /**
         * On the detector's thread, once the object is unreachable and was not closed: reclaims what
         * can safely be, and says what leaked and what was done about it (null: nothing leaked
         * after all, such as a connection its peer closed).
         *
         * @return the resource and why it leaked, and the outcome
         */
        protected abstract @Nullable Leak leaked();

        final Site site() {
            return site;
        }
    }

    /** What a tracker found: {@code resource} (its description), {@code problem}, and {@code outcome} for its native resources. */
    public record Leak(String resource, String problem, String outcome) {
    }

    public static Runnable onLeak(Consumer<? super LeakReport> listener) {
        LISTENERS.add(listener);
        return () -> LISTENERS.remove(listener);
    }

    /**
     * Runs the garbage collector until every tracked object that was unreachable when called has
     * been reported (two collections, each confirmed by a sentinel the detector dequeues), or
     * {@code timeout} passed.
     *
     * @return true when done; false when the collector did not run in time (-XX:+DisableExplicitGC?)
     */
    public static boolean detectNow(Duration timeout) {
        startDetector();
        long deadline = System.nanoTime() + timeout.toNanos();
        // a collection puts every phantom reference it found on the pending list, which the JDK's
        // reference handler enqueues one batch at a time: once the second sentinel is dequeued,
        // the whole batch of the first collection was enqueued before it, and is drained with it
        for (int round = 0; round < 2; round++) {
            CountDownLatch seen = new CountDownLatch(1);
            new Sentinel(seen);
            try {
                do {
                    if (System.nanoTime() - deadline > 0) return false;
                    System.gc();
                } while (!seen.await(50, TimeUnit.MILLISECONDS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    /** Dequeued after what was enqueued before it: see {@link #detectNow}. */
    private static final class Sentinel extends Tracker {
        private final CountDownLatch seen;

        Sentinel(CountDownLatch seen) {
            super(new Object(), new Site("a sentinel"));
            this.seen = seen;
        }

        @Override
        protected @Nullable Leak leaked() {
            drainQueue();
            seen.countDown();
            return null;
        }
    }

    private static synchronized void startDetector() {
        if (detector != null) return;
        detector = Thread.ofPlatform().daemon().name("jrdma-leak-detector").start(() -> {
            while (true) {
                try {
                    process(QUEUE.remove());
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
    }

    private static void drainQueue() {
        for (var r = QUEUE.poll(); r != null; r = QUEUE.poll()) process(r);
    }

    private static void process(java.lang.ref.Reference<?> r) {
        if (!(r instanceof Tracker t) || !LIVE.remove(t)) return;  // closed as it was enqueued
        Leak leak;
        try {
            leak = t.leaked();
        } catch (RuntimeException e) {
            LOG.warn("the leak detector failed on a tracked object created at " + t.site().getMessage(), e);
            return;
        }
        if (leak == null) return;
        LeakReport report = new LeakReport(leak.resource(), leak.problem(), leak.outcome(), t.site().getMessage(), t.site().frames());
        if (LOG.isErrorEnabled()) LOG.error(report.text(MAX_FRAMES));
        for (Consumer<? super LeakReport> l : LISTENERS) {
            try {
                l.accept(report);
            } catch (RuntimeException e) {
                LOG.warn("a leak listener failed", e);
            }
        }
    }
}
