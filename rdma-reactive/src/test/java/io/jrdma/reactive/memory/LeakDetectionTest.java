package io.jrdma.reactive.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.LeakDetection;
import io.jrdma.reactive.LeakDetectionLevel;
import io.jrdma.reactive.LeakReport;
import io.jrdma.reactive.internal.Leaks;
import io.jrdma.reactive.internal.MemoryInternals;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;

/**
 * The leak detector on plain memory (pools built as in BufferPoolTest, messages as a connection
 * builds them): a pool or message dropped unclosed is reported once, with the stack of the call
 * that made it; a closed or released one is not. Each object is made and dropped in a method of
 * its own, whose name the report must carry, so that no local of the test keeps it reachable.
 */
class LeakDetectionTest {
    private static final Duration DETECT = Duration.ofSeconds(30);
    private static final MemoryInternals MEMORY = MemoryInternals.get();

    private final Arena arena = Arena.ofShared();
    private final AtomicInteger deregistered = new AtomicInteger();
    private final List<LeakReport> reports = new CopyOnWriteArrayList<>();
    private final List<LogRecord> logged = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            logged.add(r);
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };
    private final Logger leakLogger = Logger.getLogger("io.jrdma.reactive.leak");
    private Disposable listening;

    @BeforeAll
    static void on() {
        LeakDetection.enable();
    }

    @AfterEach
    void everyAgain() {
        LeakDetection.enable();
        LeakDetection.setSamplingInterval(128);
    }

    @BeforeEach
    void listen() {
        listening = LeakDetection.onLeak(reports::add);
        leakLogger.addHandler(handler);
    }

    @AfterEach
    void tearDown() {
        listening.dispose();
        leakLogger.removeHandler(handler);
        arena.close();
    }

    private BufferPool pool() {
        return new BufferPool(arena.allocate(2 * 64, 64), 1, 2, 64, 2, deregistered::incrementAndGet);
    }

    /** What the pool's public factories (MemoryDomain.createPool, BufferPool.create) do when detection is on. */
    private BufferPool trackedPool(String createdBy) {
        BufferPool p = pool();
        MEMORY.track(p, new Leaks.Site(createdBy), false);
        return p;
    }

    /** What MemoryDomain.createPool does, at whatever level is set. */
    private BufferPool createPool() {
        Leaks.Site site = Leaks.site("MemoryDomain.createPool(...)");
        BufferPool p = pool();
        if (site != null) MEMORY.track(p, site, false);
        return p;
    }

    /** Reports about objects this test made: its methods are on their creation sites. */
    private List<LeakReport> reportsFrom(String method) {
        assertTrue(LeakDetection.detectNow(DETECT), "the garbage collector ran and the detector caught up");
        return reports.stream().filter(r -> r.creationSite().stream().anyMatch(f -> f.getMethodName().equals(method))).toList();
    }

    @Test
    void aPoolDroppedWithoutBeingClosedIsReportedWithWhereItWasCreatedAndKeepsItsMemory() {
        dropAPoolWithoutClosingIt();
        List<LeakReport> found = reportsFrom("dropAPoolWithoutClosingIt");
        assertEquals(1, found.size(), () -> "one report: " + reports);
        LeakReport r = found.getFirst();
        assertEquals("BufferPool[2 x 64 bytes]", r.resource());
        assertEquals("became unreachable without being closed", r.problem());
        assertEquals("MemoryDomain.createPool(...)", r.createdBy());
        assertTrue(r.outcome().contains("stay registered"), r.outcome());
        assertEquals(0, deregistered.get(), "the detector never deregisters: code may still address the memory");
        assertTrue(logged.stream().anyMatch(l -> l.getLevel() == Level.SEVERE && l.getMessage().startsWith("LEAK: BufferPool[2 x 64 bytes]")
                && l.getMessage().contains("dropAPoolWithoutClosingIt")), () -> "logged at ERROR with the site: " + logged);
        assertEquals(1, logged.stream().filter(l -> l.getMessage().contains("dropAPoolWithoutClosingIt")).count(), "logged once");
    }

    private void dropAPoolWithoutClosingIt() {
        trackedPool("MemoryDomain.createPool(...)").tryAcquire().release();
    }

    @Test
    void aPoolClosedWithABufferOutIsReportedWithWhereTheBufferWasAcquired() {
        closeAPoolWithABufferOut();
        List<LeakReport> found = reportsFrom("closeAPoolWithABufferOut");
        assertEquals(1, found.size(), () -> "one report: " + reports);
        assertTrue(found.getFirst().problem().startsWith("was closed but became unreachable, 1 of its 2 buffers not released (acquired at "
                + LeakDetectionTest.class.getName() + ".acquireAndKeep("), found.getFirst().problem());
        assertEquals(0, deregistered.get());
    }

    private void closeAPoolWithABufferOut() {
        BufferPool p = trackedPool("BufferPool.create(...)");
        acquireAndKeep(p);
        p.close();
    }

    private static void acquireAndKeep(BufferPool p) {
        p.tryAcquire().put(0, new byte[] {1});
    }

    @Test
    void aPoolClosedWithEveryBufferBackIsNoLeak() {
        closeAPoolProperly();
        assertEquals(1, deregistered.get(), "deregistered by its close");
        assertEquals(List.of(), reportsFrom("closeAPoolProperly"));
    }

    private void closeAPoolProperly() {
        BufferPool p = trackedPool("MemoryDomain.createPool(...)");
        RegisteredBuffer b = p.tryAcquire();
        p.close();
        b.release();  // the last one back: deregistered now
    }

    @Test
    void aReceivedMessageDroppedUnreleasedIsReportedAndGoesBackToItsReceiveQueue() {
        BufferPool receivePool = pool();
        AtomicInteger messageReleases = new AtomicInteger();
        dropAMessageAfterCopyingIt(receivePool, messageReleases);
        List<LeakReport> found = reportsFrom("dropAMessageAfterCopyingIt");
        assertEquals(1, found.size(), () -> "one report: " + reports);
        assertEquals("ReceivedMessage[5 bytes] received on RdmaConnection[a test]", found.getFirst().resource());
        assertTrue(found.getFirst().outcome().startsWith("Released by the leak detector"), found.getFirst().outcome());
        assertEquals(1, messageReleases.get(), "released once, as release() does");
        assertEquals(2, receivePool.available(), "its buffer is back");
    }

    private void dropAMessageAfterCopyingIt(BufferPool receivePool, AtomicInteger messageReleases) {
        ReceivedMessage m = deliver(receivePool, messageReleases, "dropAMessageAfterCopyingIt");
        assertEquals(5, m.bytes().length);
    }

    @Test
    void aMessageWhoseBufferWasTakenIsReportedButNotReleased() {
        BufferPool receivePool = pool();
        AtomicInteger messageReleases = new AtomicInteger();
        RegisteredBuffer kept = dropAMessageAfterTakingItsBuffer(receivePool, messageReleases);
        List<LeakReport> found = reportsFrom("dropAMessageAfterTakingItsBuffer");
        assertEquals(1, found.size(), () -> "one report: " + reports);
        assertTrue(found.getFirst().outcome().startsWith("Not released by the leak detector: its buffer() was taken"),
                found.getFirst().outcome());
        assertEquals(0, messageReleases.get());
        assertEquals(1, kept.refCount(), "the buffer the application took is still its own");
        kept.release();
    }

    private RegisteredBuffer dropAMessageAfterTakingItsBuffer(BufferPool receivePool, AtomicInteger messageReleases) {
        return deliver(receivePool, messageReleases, "dropAMessageAfterTakingItsBuffer").buffer();
    }

    @Test
    void aReleasedMessageIsNoLeak() {
        BufferPool receivePool = pool();
        AtomicInteger messageReleases = new AtomicInteger();
        releaseAMessage(receivePool, messageReleases);
        assertEquals(List.of(), reportsFrom("releaseAMessage"));
        assertEquals(1, messageReleases.get());
        assertEquals(2, receivePool.available());
    }

    private void releaseAMessage(BufferPool receivePool, AtomicInteger messageReleases) {
        try (ReceivedMessage m = deliver(receivePool, messageReleases, "releaseAMessage")) {
            assertEquals("hello", m.text());
        }
    }

    /** A message as a connection delivers it: in a receive buffer, tracked from the receive() call (here: {@code site}). */
    private static ReceivedMessage deliver(BufferPool receivePool, AtomicInteger releases, String site) {
        RegisteredBuffer b = receivePool.tryAcquire().put(0, "hello".getBytes());
        ReceivedMessage m = MEMORY.message(b, 5, false, 0, releases::incrementAndGet);
        MEMORY.track(m, new Leaks.Site("RdmaConnection.receive() in " + site), "RdmaConnection[a test]");
        return m;
    }

    // ------------------------------------------------------------------------------ levels

    @Test
    void offTracksNoPoolAndReportsNone() {
        LeakDetection.setLevel(LeakDetectionLevel.OFF);
        assertTrue(LeakDetection.detectNow(DETECT));
        int open = Leaks.tracking();
        List<BufferPool> kept = new ArrayList<>();
        for (int i = 0; i < 100; i++) kept.add(createPool());
        assertTrue(Leaks.tracking() <= open, "no tracker made");
        kept.clear();
        dropPoolsAtOff();
        assertEquals(List.of(), reportsFrom("dropPoolsAtOff"));
    }

    private void dropPoolsAtOff() {
        for (int i = 0; i < 10; i++) createPool().tryAcquire().release();
    }

    @Test
    void everyReportsEveryDroppedPoolWithItsSiteAndWhereItsBuffersWereAcquired() {
        LeakDetection.setLevel(LeakDetectionLevel.EVERY);
        dropPoolsAtEvery();
        List<LeakReport> found = reportsFrom("dropPoolsAtEvery");
        assertEquals(10, found.size(), () -> "ten reports: " + reports);
        for (LeakReport r : found) {
            assertEquals("MemoryDomain.createPool(...)", r.createdBy());
            assertTrue(r.problem().startsWith("became unreachable without being closed, 1 of its 2 buffers not released (acquired at "
                    + LeakDetectionTest.class.getName() + ".acquireAndKeep("), r.problem());
        }
    }

    private void dropPoolsAtEvery() {
        for (int i = 0; i < 10; i++) acquireAndKeep(createPool());
    }

    @Test
    void sampledReportsATrackedPoolWithItsSiteButNoStackPerAcquire() {
        LeakDetection.setLevel(LeakDetectionLevel.SAMPLED);
        LeakDetection.setSamplingInterval(1);  // every pool sampled: the test must not depend on chance
        dropASampledPool();
        List<LeakReport> found = reportsFrom("dropASampledPool");
        assertEquals(1, found.size(), () -> "one report: " + reports);
        assertEquals("MemoryDomain.createPool(...)", found.getFirst().createdBy());
        assertEquals("became unreachable without being closed, 1 of its 2 buffers not released (where, -Djrdma.leakDetection=every"
                + " records)", found.getFirst().problem());
    }

    private void dropASampledPool() {
        acquireAndKeep(createPool());
    }

    @Test
    void sampledTracksAboutOneObjectInTheInterval() {
        LeakDetection.setLevel(LeakDetectionLevel.SAMPLED);
        LeakDetection.setSamplingInterval(4);
        dropSampledPools();
        int found = reportsFrom("dropSampledPools").size();
        // binomial(400, 1/4): 100 expected, standard deviation 8.7; 50..150 is over 5 of them
        assertTrue(found > 50 && found < 150, () -> found + " of 400 pools reported, at one in 4");
    }

    private void dropSampledPools() {
        for (int i = 0; i < 400; i++) createPool().tryAcquire().release();
    }
}
