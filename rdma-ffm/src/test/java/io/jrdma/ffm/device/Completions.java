package io.jrdma.ffm.device;

import static org.junit.jupiter.api.Assertions.fail;

import io.jrdma.ffm.CompletionQueue;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.ffm.WorkCompletionException;
import io.jrdma.ffm.WorkCompletions;
import java.lang.foreign.Arena;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/** Bounded completion polling: every wait has a deadline and fails with what did arrive. */
final class Completions {
    private Completions() {}

    /** Long enough for rxe under single-threaded TCG, short enough to fail a hung test quickly. */
    static final Duration DEFAULT_WAIT = Duration.ofSeconds(10);

    /** One polled {@code ibv_wc}, copied out of the reused array. */
    record Completion(long wrId, WcStatus status, int opcodeValue, int byteLength, boolean hasImmediate, int immediate,
                      int qpNumber, WorkCompletionException error) {
        WcOpcode opcode() {
            return WcOpcode.of(opcodeValue);
        }

        @Override
        public String toString() {
            // a failed completion's opcode field is not valid (ibv_poll_cq(3)): show it raw only
            String op = status.isSuccess() ? opcode() + "(" + opcodeValue + ")" : "invalid(" + opcodeValue + ")";
            return "wr_id " + wrId + " " + status + " opcode " + op + " byte_len " + byteLength
                    + (hasImmediate ? " imm 0x" + Integer.toHexString(immediate) : "") + " qp 0x" + Integer.toHexString(qpNumber);
        }
    }

    /**
     * Polls until exactly {@code expected} completions arrived; a failed one is thrown as
     * {@link WorkCompletions#error(int)}.
     */
    static List<Completion> awaitSuccess(CompletionQueue cq, int expected) {
        List<Completion> all = await(cq, expected, DEFAULT_WAIT);
        for (Completion c : all) {
            if (c.error() != null) throw c.error();
        }
        return all;
    }

    /** Polls until {@code expected} completions arrived, successful or not. */
    static List<Completion> await(CompletionQueue cq, int expected) {
        return await(cq, expected, DEFAULT_WAIT);
    }

    static List<Completion> await(CompletionQueue cq, int expected, Duration wait) {
        List<Completion> got = new ArrayList<>(expected);
        long deadline = System.nanoTime() + wait.toNanos();
        try (Arena arena = Arena.ofConfined()) {
            WorkCompletions wcs = WorkCompletions.allocate(arena, 8);
            while (got.size() < expected) {
                int n = cq.poll(wcs, Math.min(wcs.capacity(), expected - got.size()));
                for (int i = 0; i < n; i++) got.add(copy(wcs, i));
                if (n > 0) continue;
                if (System.nanoTime() - deadline >= 0) {
                    fail("expected " + expected + " completion(s) on " + cq + " within " + wait.toMillis() + " ms, got "
                            + got.size() + ": " + got);
                }
                LockSupport.parkNanos(50_000);  // let rxe's kernel work run on the emulated CPUs
            }
        }
        return got;
    }

    /**
     * Polls one completion, which must have failed, and returns its error as
     * {@link WorkCompletions#error(int, WcOpcode)} builds it for a caller that posted {@code posted}.
     */
    static WorkCompletionException awaitFailure(CompletionQueue cq, WcOpcode posted) {
        long deadline = System.nanoTime() + DEFAULT_WAIT.toNanos();
        try (Arena arena = Arena.ofConfined()) {
            WorkCompletions wcs = WorkCompletions.allocate(arena, 1);
            while (cq.poll(wcs) == 0) {
                if (System.nanoTime() - deadline >= 0) fail("no completion on " + cq + " within " + DEFAULT_WAIT.toMillis() + " ms");
                LockSupport.parkNanos(50_000);
            }
            if (wcs.isSuccess(0)) fail("expected a failed completion, got " + copy(wcs, 0));
            return wcs.error(0, posted);
        }
    }

    /** Asserts that nothing completes on {@code cq} within {@code quiet}. */
    static void assertNoneWithin(CompletionQueue cq, Duration quiet) {
        long deadline = System.nanoTime() + quiet.toNanos();
        try (Arena arena = Arena.ofConfined()) {
            WorkCompletions wcs = WorkCompletions.allocate(arena, 1);
            while (System.nanoTime() - deadline < 0) {
                if (cq.poll(wcs) > 0) fail("unexpected completion on " + cq + ": " + copy(wcs, 0));
                LockSupport.parkNanos(1_000_000);
            }
        }
    }

    private static Completion copy(WorkCompletions wcs, int i) {
        boolean ok = wcs.isSuccess(i);
        return new Completion(wcs.wrId(i), wcs.status(i), wcs.opcodeValue(i), wcs.byteLength(i), wcs.hasImmediate(i),
                wcs.immediateData(i), wcs.qpNumber(i), ok ? null : wcs.error(i));
    }
}
