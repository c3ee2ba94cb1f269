package io.jrdma.samples;

import java.io.Console;
import java.io.PrintStream;

/**
 * Progress of a long transfer on stderr, so stdout carries only the data: one line per tenth on a
 * pipe or file, one line rewritten in place on a terminal. Short transfers print nothing.
 */
final class Progress {
    private final String verb;
    private final long total;
    private final PrintStream err;
    private final boolean shown;
    private final boolean terminal;
    private volatile long done;  // advanced on the loop thread, read by the one that reports a failure
    private int tenthsPrinted;

    Progress(String verb, long total, long showAbove, PrintStream err) {
        this.verb = verb;
        this.total = total;
        this.err = err;
        this.shown = total > showAbove;
        Console console = System.console();
        this.terminal = console != null && console.isTerminal();
    }

    long done() {
        return done;
    }

    void advance(long bytes) {
        done += bytes;
        if (!shown) return;
        int tenths = (int) (done * 10 / total);
        if (tenths == tenthsPrinted && done < total) return;
        tenthsPrinted = tenths;
        String line = String.format("%s %d of %d bytes (%d%%)", verb, done, total, done * 100 / total);
        if (terminal) err.print("\r" + line + (done == total ? System.lineSeparator() : ""));
        else err.println(line);
    }
}
