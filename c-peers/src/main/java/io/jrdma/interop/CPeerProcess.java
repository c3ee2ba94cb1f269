package io.jrdma.interop;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.MatchResult;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A running C peer: its merged stdout and stderr captured as it runs, every wait bounded, and the
 * process killed (SIGKILL) when a wait runs out or the object is closed while it still runs.
 * Thread-safe: a test may wait for output on one thread while another runs the Java side.
 */
public final class CPeerProcess implements AutoCloseable {
    /** How long a killed process gets to be reaped and its pipe drained. */
    private static final Duration REAP = Duration.ofSeconds(10);

    private final String command;
    private final Process process;
    private final long startNanos = System.nanoTime();
    private final Thread pump;
    // bytes, decoded when read: a UTF-8 character may straddle two reads of the pipe
    private final ByteArrayOutputStream output = new ByteArrayOutputStream();
    private boolean endOfOutput;  // guarded by output

    private CPeerProcess(String command, Process process) {
        this.command = command;
        this.process = process;
        this.pump = Thread.ofPlatform().daemon().name("c-peer-output-" + process.pid()).start(this::pump);
    }

    static CPeerProcess start(List<String> command) {
        return start(command, null);
    }

    /** Starts {@code command} in {@code directory} (null: this JVM's) with stdin from /dev/null. */
    static CPeerProcess start(List<String> command, Path directory) {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        if (directory != null) builder.directory(directory.toFile());
        String text = String.join(" ", command);
        try {
            return new CPeerProcess(text, builder.start());
        } catch (IOException e) {
            throw new CPeerException.NotInstalled("cannot start " + text + ": " + e.getMessage(), e);
        }
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Everything the program printed so far. */
    public String output() {
        synchronized (output) {
            return output.toString(StandardCharsets.UTF_8);
        }
    }

    /**
     * Waits until the output so far has a match for {@code regex} (multi-line mode: {@code ^} and
     * {@code $} match at line boundaries). Fails with {@link CPeerException.UnexpectedExit} when the
     * program ends without printing it, and with {@link CPeerException.TimedOut} (after killing the
     * program) when {@code timeout} passes first.
     */
    public MatchResult awaitOutput(String regex, Duration timeout) {
        Pattern pattern = Pattern.compile(regex, Pattern.MULTILINE);
        long deadline = System.nanoTime() + timeout.toNanos();
        boolean ended;
        synchronized (output) {
            while (true) {
                Matcher m = pattern.matcher(output.toString(StandardCharsets.UTF_8));
                if (m.find()) return m.toMatchResult();
                if (endOfOutput) {
                    ended = true;
                    break;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    ended = false;
                    break;
                }
                waitOn(output, left);
            }
        }
        // killed and reaped outside the monitor: the pump thread needs it to drain the pipe
        if (!ended || !exitsWithin(REAP)) {
            String where = whereItWaits();
            kill();
            throw new CPeerException.TimedOut(command + ": no output matching \"" + regex + "\" within "
                    + timeout.toMillis() + " ms; killed it" + where, output());
        }
        drain();
        throw new CPeerException.UnexpectedExit(command + " exited " + process.exitValue() + " without printing a match for \""
                + regex + "\"", process.exitValue(), output());
    }

    /**
     * The port a server printed in its {@code listening on ADDRESS:PORT} line (every server peer
     * prints one, so PORT 0 can pick a free port).
     */
    public int awaitListeningPort(Duration timeout) {
        return Integer.parseInt(awaitOutput("listening on \\S*:(\\d+)", timeout).group(1));
    }

    /**
     * Waits for the program to exit and returns how it ended, whatever its status. When
     * {@code timeout} passes first, kills it and throws {@link CPeerException.TimedOut}.
     */
    public CPeerResult awaitExit(Duration timeout) {
        boolean exited;
        try {
            exited = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            kill();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for " + command + "; killed it", e);
        }
        if (!exited) {
            String where = whereItWaits();
            kill();
            throw new CPeerException.TimedOut(command + " did not exit within " + timeout.toMillis() + " ms; killed it" + where,
                    output());
        }
        drain();
        return new CPeerResult(command, process.exitValue(), output(), Duration.ofNanos(System.nanoTime() - startNanos));
    }

    /** Kills the program if it still runs (it may hold a QP and an rdma_cm port), and reaps it. */
    @Override
    public void close() {
        if (process.isAlive()) kill();
    }

    @Override
    public String toString() {
        return command + " (pid " + process.pid() + (process.isAlive() ? ", running)" : ", exited " + process.exitValue() + ")");
    }

    private void kill() {
        process.destroyForcibly();
        if (!exitsWithin(REAP)) {
            throw new IllegalStateException(command + " (pid " + process.pid() + ") survived SIGKILL for " + REAP.toSeconds() + " s");
        }
        drain();
    }

    /**
     * Where a program that did not finish was waiting, read just before it is killed: each thread's
     * kernel wait channel and, where readable (root), its kernel stack. A hung rdma-core program
     * prints nothing (its stdout is a pipe, so buffered), and this names the wait it hung in: an
     * rdma_cm event ({@code ucma_get_event}), a CQ event ({@code ib_uverbs_event_read}), a futex.
     * Empty where /proc says nothing.
     */
    String whereItWaits() {
        Path tasks = Path.of("/proc", String.valueOf(process.pid()), "task");
        StringBuilder where = new StringBuilder();
        try (Stream<Path> threads = Files.list(tasks)) {
            for (Path t : threads.sorted().toList()) {
                where.append("\n  thread ").append(t.getFileName()).append(" (").append(proc(t.resolve("comm")))
                        .append(") waits in ").append(proc(t.resolve("wchan")));
                String stack = proc(t.resolve("stack"));
                if (!stack.isEmpty()) where.append(", kernel stack:\n").append(stack.indent(4).stripTrailing());
            }
        } catch (IOException | UncheckedIOException e) {
            return "";  // it exited meanwhile, or no /proc
        }
        return where.isEmpty() ? "" : "; where it waited:" + where;
    }

    private static String proc(Path file) {
        try {
            return Files.readString(file).strip();
        } catch (IOException e) {
            return "";  // not readable (a kernel stack needs root), or gone
        }
    }

    private boolean exitsWithin(Duration within) {
        try {
            return process.waitFor(within.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for " + command + " to exit", e);
        }
    }

    /** After exit: the pipe still holds what the program printed last. */
    private void drain() {
        try {
            pump.join(REAP);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void pump() {
        byte[] buf = new byte[8192];
        try (InputStream in = process.getInputStream()) {
            for (int n; (n = in.read(buf)) > 0; ) {
                synchronized (output) {
                    output.write(buf, 0, n);
                    output.notifyAll();
                }
            }
        } catch (IOException e) {
            // the pipe broke with the process: what was read is kept
        } finally {
            synchronized (output) {
                endOfOutput = true;
                output.notifyAll();
            }
        }
    }

    private static void waitOn(Object monitor, long nanos) {
        try {
            TimeUnit.NANOSECONDS.timedWait(monitor, nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for a C peer's output", e);
        }
    }

    /** A transcript for an exception message, marked off so it reads apart from the stack trace. */
    static String frame(String transcript) {
        String body = transcript.isEmpty() ? "(no output)\n" : transcript.endsWith("\n") ? transcript : transcript + "\n";
        return "--- output:\n" + body + "---";
    }
}
