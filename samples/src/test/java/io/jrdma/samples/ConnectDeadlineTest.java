package io.jrdma.samples;

import static io.jrdma.samples.UserLine.assertReadable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.ConnectionException;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.test.StepVerifier;

/**
 * A client's connect has one deadline, the library's (--timeout): the CLI's own bound is a net
 * past it, on virtual time. Before, the CLI blocked for --timeout + 5 s, and a library timeout
 * delivered late on a loaded host lost that race (CliFailuresTest read "no answer within
 * --timeout 3 s" where the connect timeout belonged).
 */
class ConnectDeadlineTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(3);
    private static final String WHAT = "connecting to 10.77.0.2:7471 over TCP";

    @Test
    void theLibrarysTimeoutIsWhatTheUserReadsEvenWhenItComesLate() {
        ConnectionException.Timeout library = new ConnectionException.Timeout(WHAT + " did not finish within the connect timeout of 3 s:"
                + " it waited for the server's hello (0 of 58 bytes came)");
        Duration late = TIMEOUT.plusSeconds(20);  // far past the old margin of 5 s: a starved setup thread
        StepVerifier.withVirtualTime(() -> Session.withConnectNet(Mono.error(library).delaySubscription(late), WHAT, TIMEOUT,
                        Schedulers.parallel()))
                .expectSubscription()
                .expectNoEvent(late)
                .expectErrorSatisfies(e -> {
                    assertSame(library, e);
                    assertEquals(WHAT + " did not finish within the connect timeout of 3 s: it waited for the server's hello (0 of 58 bytes"
                            + " came) (--timeout 3)", Errors.describe(e, 3, null));
                })
                .verify(Duration.ofSeconds(10));
    }

    @Test
    void aConnectThatNeverEndsIsToldAsTheConnectTimeoutOnlyAtTheNet() {
        Duration net = Session.connectNet(TIMEOUT);
        StepVerifier.withVirtualTime(() -> Session.withConnectNet(Mono.never(), WHAT, TIMEOUT, Schedulers.parallel()))
                .expectSubscription()
                .expectNoEvent(net.minusMillis(1))
                .thenAwait(Duration.ofMillis(1))
                .expectErrorSatisfies(e -> {
                    assertTrue(e instanceof ConnectionException.Timeout, e.toString());
                    assertEquals(WHAT + " did not finish within the connect timeout of 3 s: the setup had not ended 36 s after it started"
                            + " (--timeout 3)", assertReadable(Errors.describe(e, 3, null)));
                })
                .verify(Duration.ofSeconds(10));
    }
}
