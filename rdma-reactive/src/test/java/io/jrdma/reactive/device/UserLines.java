package io.jrdma.reactive.device;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.regex.Pattern;

/**
 * What a person reads when something goes wrong: one line, without a stack trace, a Java class
 * name, an object's {@code @hash} or the {@code /} {@link java.net.InetSocketAddress} puts before
 * an address. Also catches what a server logs (java.util.logging: Reactor's fallback, which the tests' JVMs select).
 */
final class UserLines implements AutoCloseable {
    private static final Pattern CLASS_NAME = Pattern.compile("\\b(java|javax|jdk|sun|io\\.jrdma|reactor)\\.[a-z]+\\.|Exception\\b|\\w+\\.\\w+\\$");
    private static final Pattern HASH = Pattern.compile("@[0-9a-f]{5,}");
    private static final Pattern SLASHED_ADDRESS = Pattern.compile("(^|[\\s(\\[])/\\d");

    /** Asserts that {@code line} is one line a person can read, and returns it. */
    static String assertReadable(String line) {
        assertFalse(line.contains("\n") || line.contains("\r"), "one line: " + line);
        assertFalse(line.contains("\tat "), "no stack trace: " + line);
        assertFalse(CLASS_NAME.matcher(line).find(), "no Java class names: " + line);
        assertFalse(HASH.matcher(line).find(), "no object hashes: " + line);
        assertFalse(SLASHED_ADDRESS.matcher(line).find(), "no / before an address: " + line);
        return line;
    }

    private final Logger logger;
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            records.add(r);
        }

        @Override
        public void flush() {}

        @Override
        public void close() {}
    };

    /** Collects what {@code loggerName} (e.g. {@code io.jrdma.reactive.server}) logs at INFO and above. */
    UserLines(String loggerName) {
        logger = Logger.getLogger(loggerName);
        handler.setLevel(Level.INFO);
        logger.addHandler(handler);
    }

    /** The messages logged so far, each asserted to be one readable line without a throwable attached. */
    List<String> lines() {
        return records.stream().map(r -> {
            assertNull(r.getThrown(), "no stack trace in the log: " + r.getMessage());
            return assertReadable(r.getMessage());
        }).toList();
    }

    /** Everything logged so far as it was logged, a throwable included (a failed handler's, say). */
    List<LogRecord> records() {
        return List.copyOf(records);
    }

    /** Waits (up to 20 s) until a logged line contains {@code text}; returns it. */
    String await(String text) {
        long deadline = System.nanoTime() + LabPeers.TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            for (String l : lines()) if (l.contains(text)) return l;
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        assertTrue(false, "no log line with \"" + text + "\" in " + lines());
        return null;
    }

    @Override
    public void close() {
        logger.removeHandler(handler);
    }
}
