package io.jrdma.reactive.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The detector thread of {@link Leaks} and what it calls: a tracker's or a listener's failure is logged, and the thread goes on. */
@Timeout(120)
class LeakDetectorThreadTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** Tracks a plain object; its leak is named after it. */
    private static final class Named extends Leaks.Tracker {
        private final String name;

        Named(Object referent, String name) {
            super(referent, new Leaks.Site("a test object"));
            this.name = name;
        }

        @Override
        protected Leaks.Leak leaked() {
            return new Leaks.Leak(name, "it was never closed", "nothing to reclaim");
        }
    }

    @Test
    void aListenerThatThrowsAnErrorLeavesTheDetectorRunning() {
        // a test's listener asserting that nothing leaks throws an AssertionError, an Error
        Runnable failing = Leaks.onLeak(r -> {
            if (r.resource().equals("leaked first")) throw new AssertionError("a test's leak listener fails");
        });
        List<String> heard = new CopyOnWriteArrayList<>();
        Runnable recording = Leaks.onLeak(r -> heard.add(r.resource()));
        try {
            track("leaked first");
            assertTrue(Leaks.detectNow(WAIT), "the detector thread died with the listener's error");
            track("leaked second");
            assertTrue(Leaks.detectNow(WAIT), "the detector thread died with the listener's error");
            assertTrue(heard.containsAll(List.of("leaked first", "leaked second")), () -> "heard " + heard);
        } finally {
            failing.run();
            recording.run();
        }
    }

    /** A tracked object left unreachable, once its tracker is whole. */
    private static void track(String name) {
        Object leaked = new Object();
        new Named(leaked, name);
    }
}
