package io.jrdma.interop;

import java.time.Duration;
import java.util.List;

/**
 * How a C peer ended.
 *
 * @param command  the program and its arguments, for messages
 * @param exitCode the process's exit status (128 + N for a signal, as the shell shows it)
 * @param output   stdout and stderr merged, in the order the program wrote them (the peers flush
 *                 stdout before every stderr line)
 * @param elapsed  from start to exit
 */
public record CPeerResult(String command, int exitCode, String output, Duration elapsed) {

    public List<String> lines() {
        return output.lines().toList();
    }

    /** This result when the exit status is 0, else {@link CPeerException.UnexpectedExit} with the transcript. */
    public CPeerResult requireSuccess() {
        return requireExitCode(0);
    }

    public CPeerResult requireExitCode(int expected) {
        if (exitCode != expected) {
            throw new CPeerException.UnexpectedExit(command + " exited " + exitCode + ", expected " + expected + " (after "
                    + elapsed.toMillis() + " ms)", exitCode, output);
        }
        return this;
    }
}
