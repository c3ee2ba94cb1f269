package io.jrdma.samples.device;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaResources;
import java.time.Duration;

/**
 * What the reactive API tells an application that may lock less memory than it registers: run by
 * {@link MemlockTest} as an unprivileged user with a low {@code ulimit -l}, on the CLI's jar (which
 * holds the library). Prints one line per attempt: {@code FAILED} and the exception chain, type
 * and message of each, or {@code OK}.
 */
public final class MemlockProbe {
    private MemlockProbe() {}

    public static void main(String[] args) {
        String server = args[0], local = args[1], device = args[2];
        attempt("connect", () -> RdmaClient.create().host(server).port(7471).localAddress(local).connect().block(Duration.ofSeconds(30)));
        attempt("createPool", () -> RdmaResources.shared().domain(device).createPool(4096, 256, Access.LOCAL_WRITE).close());
        RdmaResources.shared().disposeNow();
    }

    private static void attempt(String what, Runnable action) {
        try {
            action.run();
            System.out.println(what + ": OK");
        } catch (RuntimeException e) {
            StringBuilder chain = new StringBuilder(what + ": FAILED");
            for (Throwable t = e; t != null; t = t.getCause()) chain.append(" | ").append(t.getClass().getName()).append(": ").append(t.getMessage());
            System.out.println(chain);
        }
    }
}
