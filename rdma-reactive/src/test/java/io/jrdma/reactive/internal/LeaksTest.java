package io.jrdma.reactive.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.LeakDetection;
import io.jrdma.reactive.LeakDetectionLevel;
import java.lang.management.ManagementFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The levels' choice of what to track, without any tracked object: what {@link Leaks#site} returns
 * at each level and interval, what an untracked call costs, and what the property's values mean.
 */
class LeaksTest {
    private final LeakDetectionLevel level = LeakDetection.level();
    private final int interval = LeakDetection.samplingInterval();

    @AfterEach
    void restore() {
        LeakDetection.setLevel(level);
        LeakDetection.setSamplingInterval(interval);
    }

    @Test
    void offGivesNoSiteAndStreamsNoSite() {
        LeakDetection.setLevel(LeakDetectionLevel.OFF);
        for (int i = 0; i < 1000; i++) assertNull(Leaks.site("MemoryDomain.createPool(...)"));
        assertNull(Leaks.streamSite("RdmaConnection.receives()"));
        assertFalse(LeakDetection.isEnabled());
    }

    @Test
    void everyGivesASiteForEveryCallStartingAtTheCaller() {
        LeakDetection.setLevel(LeakDetectionLevel.EVERY);
        for (int i = 0; i < 1000; i++) {
            Leaks.Site site = Leaks.site("MemoryDomain.createPool(...)");
            assertNotNull(site);
            assertEquals("MemoryDomain.createPool(...)", site.getMessage());
            assertEquals(LeaksTest.class.getName(), site.frames().getFirst().getClassName());
        }
    }

    @Test
    void sampledGivesASiteForAboutOneCallInTheInterval() {
        LeakDetection.setLevel(LeakDetectionLevel.SAMPLED);
        LeakDetection.setSamplingInterval(8);
        int sites = 8000 - untracked(8000);
        // binomial(8000, 1/8): 1000 expected, standard deviation 30; 800..1200 is over 6 of them
        assertTrue(sites > 800 && sites < 1200, () -> "one in 8 of 8000 calls: " + sites);
        assertNotNull(Leaks.streamSite("RdmaConnection.receives()"), "a stream's call records its stack once; its elements are sampled");
    }

    @Test
    void sampledAtIntervalOneGivesASiteForEveryCall() {
        LeakDetection.setLevel(LeakDetectionLevel.SAMPLED);
        LeakDetection.setSamplingInterval(1);
        for (int i = 0; i < 1000; i++) assertNotNull(Leaks.site("RdmaClient.connect()"));
        assertFalse(Leaks.recordsAcquisitions(), "a sampled pool records no stack per acquire");
    }

    @Test
    void anUntrackedCallAllocatesNothing() {
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().threadId();
        LeakDetection.setLevel(LeakDetectionLevel.SAMPLED);
        LeakDetection.setSamplingInterval(Integer.MAX_VALUE);
        for (LeakDetectionLevel l : new LeakDetectionLevel[] {LeakDetectionLevel.SAMPLED, LeakDetectionLevel.OFF}) {
            LeakDetection.setLevel(l);
            untracked(1000);  // past class loading and the first compilations
            long before = threads.getThreadAllocatedBytes(self);
            int untracked = untracked(100_000);
            long allocated = threads.getThreadAllocatedBytes(self) - before;
            assertTrue(untracked >= 99_999, "one in 2^31 tracked");
            // a Site per call would be over 10 MB
            assertTrue(allocated < 64 * 1024, () -> l + ": " + allocated + " bytes for 100,000 untracked calls");
        }
    }

    /** {@return how many of {@code calls} calls got no site} */
    private static int untracked(int calls) {
        int untracked = 0;
        for (int i = 0; i < calls; i++) if (Leaks.site("RdmaConnection.receive()") == null) untracked++;
        return untracked;
    }

    @Test
    void thePropertyNamesALevelAndTrueAndFalseKeepTheirMeaning() {
        assertEquals(LeakDetectionLevel.SAMPLED, Leaks.level(null), "the default");
        assertEquals(LeakDetectionLevel.EVERY, Leaks.level("true"));
        assertEquals(LeakDetectionLevel.OFF, Leaks.level("false"));
        assertEquals(LeakDetectionLevel.OFF, Leaks.level("off"));
        assertEquals(LeakDetectionLevel.SAMPLED, Leaks.level("Sampled"));
        assertEquals(LeakDetectionLevel.EVERY, Leaks.level(" EVERY "));
        assertEquals(LeakDetectionLevel.SAMPLED, Leaks.level("paranoid"), "an unknown value: the default, with a warning");
        assertEquals(128, Leaks.interval(null));
        assertEquals(16, Leaks.interval("16"));
        assertEquals(128, Leaks.interval("0"), "not positive: the default, with a warning");
        assertEquals(128, Leaks.interval("many"));
        assertThrows(IllegalArgumentException.class, () -> LeakDetection.setSamplingInterval(0));
    }

    @Test
    void enableTracksEveryObjectAsBeforeLevels() {
        LeakDetection.setLevel(LeakDetectionLevel.OFF);
        LeakDetection.enable();
        assertEquals(LeakDetectionLevel.EVERY, LeakDetection.level());
        assertTrue(Leaks.recordsAcquisitions());
    }
}
