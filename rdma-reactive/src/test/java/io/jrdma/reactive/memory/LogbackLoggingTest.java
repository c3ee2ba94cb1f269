package io.jrdma.reactive.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.jrdma.reactive.LeakDetection;
import io.jrdma.reactive.internal.Leaks;
import io.jrdma.reactive.internal.MemoryInternals;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * An application that logs through Logback (logback-classic on its class path, configured by
 * logback-test.xml, no java.util.logging bridge) receives jrdma's records there, and none go to
 * java.util.logging: here a leak report, the record a production application must not miss.
 * Tagged {@code logback}: Surefire runs it in a JVM of its own, the only one with Logback (rdma-reactive's pom).
 * Elsewhere JUnit loads the class to read its tag, so no member or lambda of it names a Logback
 * or SLF4J type (only local variables do): reflection would fail on the missing class.
 */
@Tag("logback")
class LogbackLoggingTest {
    private static final Duration DETECT = Duration.ofSeconds(30);

    private final Arena arena = Arena.ofShared();

    @Test
    void aLeakReportReachesTheApplicationsLogbackAppenderAtErrorAndNothingGoesToJavaUtilLogging() {
        LoggerContext logback = assertInstanceOf(LoggerContext.class, LoggerFactory.getILoggerFactory(), "SLF4J is bound to Logback");
        @SuppressWarnings("unchecked")
        ListAppender<ILoggingEvent> capture = (ListAppender<ILoggingEvent>) logback.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).getAppender("CAPTURE");
        List<LogRecord> jul = new CopyOnWriteArrayList<>();
        Handler julHandler = new Handler() {
            @Override
            public void publish(LogRecord r) {
                jul.add(r);
            }

            @Override
            public void flush() {}

            @Override
            public void close() {}
        };
        java.util.logging.Logger julLeak = java.util.logging.Logger.getLogger("io.jrdma.reactive.leak");
        julLeak.addHandler(julHandler);
        LeakDetection.enable();
        try {
            dropAPoolWithoutClosingIt();
            assertTrue(LeakDetection.detectNow(DETECT), "the garbage collector ran and the detector caught up");
            List<ILoggingEvent> leaks = new ArrayList<>();
            for (ILoggingEvent e : capture.list) if (e.getFormattedMessage().contains("dropAPoolWithoutClosingIt")) leaks.add(e);
            assertEquals(1, leaks.size(), "one record of the leak in Logback: " + capture.list);
            ILoggingEvent e = leaks.getFirst();
            assertEquals("io.jrdma.reactive.leak", e.getLoggerName());
            assertEquals(Level.ERROR, e.getLevel());
            assertTrue(e.getFormattedMessage().startsWith("LEAK: BufferPool[2 x 64 bytes]"), e.getFormattedMessage());
            assertEquals(List.of(), jul.stream().map(LogRecord::getMessage).toList(), "nothing through java.util.logging");
        } finally {
            julLeak.removeHandler(julHandler);
            arena.close();
        }
    }

    /** In a frame of its own, so that no local of the test keeps the pool reachable. */
    private void dropAPoolWithoutClosingIt() {
        BufferPool p = new BufferPool(arena.allocate(2 * 64, 64), 1, 2, 64, 2, () -> {});
        MemoryInternals.get().track(p, new Leaks.Site("MemoryDomain.createPool(...)"), false);
        p.tryAcquire().release();
    }
}
