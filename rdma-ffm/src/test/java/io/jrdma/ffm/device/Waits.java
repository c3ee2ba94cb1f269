package io.jrdma.ffm.device;

import static org.junit.jupiter.api.Assertions.fail;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.Callable;

/** Helpers for tests about blocking waits: a waiter thread, where it is, and fd readiness. */
final class Waits {
    private Waits() {}

    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle POLL = LINKER.downcallHandle(LINKER.defaultLookup().find("poll").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT));

    /** Outcome of a call on another thread: what it returned or threw, and how long it took. */
    record Outcome<T>(T value, Throwable failure, long millis) {}

    /** Runs {@code call} on a new platform thread named {@code name}. */
    static <T> Waiter<T> start(String name, Callable<T> call) {
        CompletableFuture<Outcome<T>> result = new CompletableFuture<>();
        Thread thread = Thread.ofPlatform().daemon().name(name).start(() -> {
            long t0 = System.nanoTime();
            try {
                T v = call.call();
                result.complete(new Outcome<>(v, null, (System.nanoTime() - t0) / 1_000_000));
            } catch (Throwable t) {
                result.complete(new Outcome<>(null, t, (System.nanoTime() - t0) / 1_000_000));
            }
        });
        return new Waiter<>(thread, result);
    }

    record Waiter<T>(Thread thread, Future<Outcome<T>> result) {
        Outcome<T> outcome(Duration within) throws Exception {
            return result.get(within.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        }

        /**
         * Waits until the thread is inside jrdma's fd wait (Fds.await, after it became the
         * channel's reader), so what the test does next happens while it sleeps there.
         */
        void awaitBlockedInWait(Duration within) throws InterruptedException {
            long deadline = System.nanoTime() + within.toNanos();
            while (Arrays.stream(thread.getStackTrace())
                    .noneMatch(f -> f.getClassName().equals("io.jrdma.ffm.Fds") && f.getMethodName().equals("await"))) {
                if (!thread.isAlive()) fail(thread.getName() + " ended before it waited");
                if (System.nanoTime() - deadline >= 0) fail(thread.getName() + " did not start waiting within " + within);
                Thread.sleep(10);
            }
            Thread.sleep(50);  // from the Java frame into poll(2)
        }
    }

    /** Whether {@code fd} turns readable within {@code within}; reads nothing from it. */
    static boolean readable(int fd, Duration within) throws Throwable {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment pfd = arena.allocate(8);
            pfd.set(ValueLayout.JAVA_INT, 0, fd);
            pfd.set(ValueLayout.JAVA_SHORT, 4, (short) 1);  // POLLIN
            return (int) POLL.invokeExact(pfd, 1L, (int) within.toMillis()) > 0;
        }
    }
}
