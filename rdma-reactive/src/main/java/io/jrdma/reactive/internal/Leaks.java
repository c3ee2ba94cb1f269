package io.jrdma.reactive.internal;

import io.jrdma.reactive.LeakDetectionLevel;
import io.jrdma.reactive.LeakReport;
import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
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
 * <p>At {@link LeakDetectionLevel#OFF} {@link #site} returns null, nothing is tracked, and the tracked
 * types pay one branch on a null field. At {@link LeakDetectionLevel#SAMPLED} (the default) it returns
 * a site for one call in {@link #samplingInterval()}, picked by {@link ThreadLocalRandom}, and null,
 * having allocated nothing, for the others; at {@link LeakDetectionLevel#EVERY} always.
 *
 * <p>The detector thread is started once and never again: it outlives whatever it calls. Before,
 * a listener that threw an {@code Error} (a test's listener asserting that nothing leaks throws an
 * {@code AssertionError}) ended the thread, and from then on no leak of the JVM was reported and
 * every {@link #detectNow} ran out its timeout. A tracker's or listener's failure, whatever it is,
 * is logged, and the thread goes on to the next report and the next listener.
 */
public final class Leaks {
    public static final String PROPERTY = "jrdma.leakDetection";
    public static final String INTERVAL_PROPERTY = "jrdma.leakDetection.samplingInterval";
    public static final int DEFAULT_INTERVAL = 128;
    private static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.leak");
    /** Frames a report prints from the creation site; a JUnit or Reactor stack below them says nothing more. */
    private static final int MAX_FRAMES = 24;
    private static final List<String> LIBRARY_FRAMES = List.of("io.jrdma.reactive.memory.BufferPool", "io.jrdma.reactive.memory.RegisteredBuffer",
            "io.jrdma.reactive.internal.", "io.jrdma.reactive.RdmaConnection", "reactor.", "java.", "jdk.");

    private static volatile LeakDetectionLevel level = level(System.getProperty(PROPERTY));
    private static volatile int interval = interval(System.getProperty(INTERVAL_PROPERTY));
    private static final ReferenceQueue<Object> QUEUE = new ReferenceQueue<>();
    /** Keeps every open tracker reachable until its object is closed or found leaked. */
    private static final Set<Tracker> LIVE = ConcurrentHashMap.newKeySet();
    private static final List<Consumer<? super LeakReport>> LISTENERS = new CopyOnWriteArrayList<>();
    private static @Nullable Thread detector;  // guarded by Leaks.class

    private Leaks() {
    }

    /** The level {@code value} of {@link #PROPERTY} names; true and false, from before levels, are EVERY and OFF. */
    static LeakDetectionLevel level(@Nullable String value) {
        if (value == null) return LeakDetectionLevel.SAMPLED;
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "false", "off" -> LeakDetectionLevel.OFF;
            case "sampled" -> LeakDetectionLevel.SAMPLED;
            case "true", "every" -> LeakDetectionLevel.EVERY;
            default -> {
                LOG.warn("-D" + PROPERTY + "=" + value + " is none of off, sampled, every (or false, true): leak detection stays sampled");
                yield LeakDetectionLevel.SAMPLED;
            }
        };
    }

    static int interval(@Nullable String value) {
        if (value == null) return DEFAULT_INTERVAL;
        try {
            return checkInterval(Integer.parseInt(value.trim()));
        } catch (IllegalArgumentException e) {
            LOG.warn("-D" + INTERVAL_PROPERTY + "=" + value + " is no positive number: one object in " + DEFAULT_INTERVAL + " is sampled");
            return DEFAULT_INTERVAL;
        }
    }

    private static int checkInterval(int n) {
        if (n < 1) throw new IllegalArgumentException("a sampling interval is positive: " + n);
        return n;
    }

    public static LeakDetectionLevel level() {
        return level;
    }

    public static void setLevel(LeakDetectionLevel l) {
        level = Objects.requireNonNull(l, "level");
    }

    public static int samplingInterval() {
        return interval;
    }

    public static void setSamplingInterval(int n) {
        interval = checkInterval(n);
    }

    public static boolean enabled() {
        return level != LeakDetectionLevel.OFF;
    }

    public static void enable() {
        level = LeakDetectionLevel.EVERY;
    }

    /** Whether to track the next object: always at EVERY, one call in {@link #samplingInterval()} at SAMPLED, never at OFF. */
    public static boolean sample() {
        LeakDetectionLevel l = level;
        return l == LeakDetectionLevel.EVERY || l == LeakDetectionLevel.SAMPLED && ThreadLocalRandom.current().nextInt(interval) == 0;
    }

    /**
     * The stack of the call handing a resource to the application, {@code what} naming it; null when
     * the resource is not to be tracked (see {@link #sample()}): then nothing was allocated.
     */
    public static @Nullable Site site(String what) {
        return sample() ? new Site(what) : null;
    }

    /**
     * The stack of a call handing out a stream of resources, such as {@code receives()}: taken once,
     * unless detection is off; each resource it delivers is then tracked if {@link #sample()} says so.
     */
    public static @Nullable Site streamSite(String what) {
        return enabled() ? new Site(what) : null;
    }

    /** Whether a pool tracked from now on records where each of its buffers is acquired (a stack per acquire). */
    public static boolean recordsAcquisitions() {
        return level == LeakDetectionLevel.EVERY;
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

        public final Site site() {
            return site;
        }
    }

    /** What a tracker found: {@code resource} (its description), {@code problem}, and {@code outcome} for its native resources. */
    public record Leak(String resource, String problem, String outcome) {
    }

    /** {@return the trackers open now: for tests proving what a level tracks} */
    public static int tracking() {
        return LIVE.size();
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
            // before super(): its referent is unreachable at once, so the detector may process it
            // while super() still runs (a collection in Tracker's registration), and must find the latch
            this.seen = seen;
            super(new Object(), new Site("a sentinel"));
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
        } catch (Throwable e) {
            LOG.warn("the leak detector failed on a tracked object created at " + t.site().getMessage(), e);
            return;
        }
        if (leak == null) return;
        LeakReport report = new LeakReport(leak.resource(), leak.problem(), leak.outcome(), t.site().getMessage(), t.site().frames());
        if (LOG.isErrorEnabled()) LOG.error(report.text(MAX_FRAMES));
        for (Consumer<? super LeakReport> l : LISTENERS) {
            try {
                l.accept(report);
            } catch (Throwable e) {
                LOG.warn("a leak listener failed", e);
            }
        }
    }
}
