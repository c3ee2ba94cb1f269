package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import reactor.test.StepVerifier;

/** The lifecycle of resources and of a server, where no device is needed: none is ever opened. */
class HostLifecycleTest {
    private static final Duration WAIT = Duration.ofSeconds(10);

    @Test
    void resourcesDisposeWithoutWaitingThenStopTheirThreads() {
        RdmaResources resources = RdmaResources.create("lifecycle-test", 1);
        RdmaDisposable lifecycle = resources;
        lifecycle.dispose();
        assertTrue(resources.isDisposed());
        StepVerifier.create(resources.onDispose()).expectComplete().verify(WAIT);
        resources.disposeNow(Duration.ZERO);  // over already
        assertFalse(Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.isAlive() && t.getName().startsWith("lifecycle-test")), "the loop thread stopped");
    }

    @Test
    void resourcesDisposeNowWaitsForTheEnd() {
        RdmaResources resources = RdmaResources.create("lifecycle-now", 1);
        resources.disposeNow(WAIT);
        StepVerifier.create(resources.onDispose()).expectComplete().verify(Duration.ZERO);
    }

    @Test
    void aServerThatNeverListenedDisposesAndItsTakersLearnIt() {
        DisposableRdmaServer server = new DisposableRdmaServer(null, Lifecycle.NONE);
        StepVerifier.create(server.connections()).expectSubscription()
                .then(server::dispose)
                .expectComplete().verify(WAIT);
        assertTrue(server.isDisposed());
        StepVerifier.create(server.accept()).expectError(ConnectionException.Closed.class).verify(WAIT);
        StepVerifier.create(server.onDispose()).expectComplete().verify(WAIT);
        server.disposeNow();
    }
}
