package io.jrdma.interop;

/**
 * Why a C peer could not be built, started or waited for, or ended badly. Each carries the
 * peer's transcript (stdout and stderr merged, in order) where there is one, so a failing
 * test shows what the C side printed, its one-line error in particular.
 */
public abstract sealed class CPeerException extends RuntimeException {
    private CPeerException(String message, Throwable cause) {
        super(message, cause);
    }

    /** gcc is missing or rejected the source; the message holds gcc's output. */
    public static final class CompileFailed extends CPeerException {
        CompileFailed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** An installed program (rdmacm-utils, perftest) is not on the PATH, or could not be started. */
    public static final class NotInstalled extends CPeerException {
        NotInstalled(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /** A wait ran out: the process was still running and has been killed (SIGKILL). */
    public static final class TimedOut extends CPeerException {
        private final String transcript;

        TimedOut(String message, String transcript) {
            super(message + "\n" + CPeerProcess.frame(transcript), null);
            this.transcript = transcript;
        }

        public String transcript() {
            return transcript;
        }
    }

    /** The process exited without printing what was awaited, or with a status other than the expected one. */
    public static final class UnexpectedExit extends CPeerException {
        private final int exitCode;
        private final String transcript;

        UnexpectedExit(String message, int exitCode, String transcript) {
            super(message + "\n" + CPeerProcess.frame(transcript), null);
            this.exitCode = exitCode;
            this.transcript = transcript;
        }

        public int exitCode() {
            return exitCode;
        }

        public String transcript() {
            return transcript;
        }
    }
}
