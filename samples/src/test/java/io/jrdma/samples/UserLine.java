package io.jrdma.samples;

import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.regex.Pattern;

/**
 * What a person reads when something goes wrong: one line, without a stack trace, a Java class
 * name, an object's {@code @hash} or the {@code /} {@link java.net.InetSocketAddress} puts before
 * an address.
 */
public final class UserLine {
    private static final Pattern CLASS_NAME = Pattern.compile("\\b(java|javax|jdk|sun|io\\.jrdma|reactor|picocli)\\.[a-z]+\\.|Exception\\b|\\w+\\.\\w+\\$");
    private static final Pattern HASH = Pattern.compile("@[0-9a-f]{5,}");
    private static final Pattern SLASHED_ADDRESS = Pattern.compile("(^|[\\s(\\[])/\\d");

    private UserLine() {}

    /** Asserts that {@code line} is one line a person can read, and returns it. */
    public static String assertReadable(String line) {
        assertFalse(line.contains("\n") || line.contains("\r"), "one line: " + line);
        assertFalse(line.contains("\tat "), "no stack trace: " + line);
        assertFalse(CLASS_NAME.matcher(line).find(), "no Java class names: " + line);
        assertFalse(HASH.matcher(line).find(), "no object hashes: " + line);
        assertFalse(SLASHED_ADDRESS.matcher(line).find(), "no / before an address: " + line);
        return line;
    }
}
