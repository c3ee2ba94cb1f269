package io.jrdma.reactive.device;

import static io.jrdma.reactive.device.LabPeers.TIMEOUT;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.QpState;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaResources;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.internal.core.ConnectionCore;
import io.jrdma.reactive.internal.core.FaultInjection;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import reactor.core.publisher.Mono;

/**
 * The setup thread's steps on a QP and the loop's destroy of it never overlap (the rules of
 * {@code CloseState}): a connection closed while a step is under way keeps its QP until the step
 * ends, and a step after the destroy fails with the connection's closed error without touching
 * the QP. Before the rule, a CLI client whose connect timed out while its setup thread posted its
 * first receives disposed its resources, and the loop destroyed the QP under
 * {@code ibv_post_recv}: a SIGSEGV in librxe (CliFailuresTest, in CI).
 */
@Tag("device")
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class SetupStepTest {
    private RdmaResources resources;

    @BeforeEach
    void oneLoop() {
        resources = RdmaResources.create("setup-step", 1);
    }

    @AfterEach
    void dispose() {
        resources.disposeLater().block(TIMEOUT);
    }

    @Test
    void aConnectionClosedDuringASetupStepIsDestroyedAfterTheStep() throws Exception {
        try (LabPeers p = LabPeers.connect(Transport.TCP, RdmaServer.create().runOn(resources), RdmaClient.create().runOn(resources))) {
            ConnectionCore core = FaultInjection.core(p.client);
            Mono<Void> destroyed = p.client.onDispose().cache();
            destroyed.subscribe();
            AtomicBoolean destroyedDuringStep = new AtomicBoolean();
            CompletableFuture<QpState> seen = new CompletableFuture<>();
            CompletableFuture<Void> inStep = new CompletableFuture<>();
            Thread setup = Thread.ofPlatform().name("setup-step").start(() -> {
                try {
                    core.setUp(qp -> {
                        inStep.complete(null);
                        // the loop reaches the destroy while the step is under way: it waits for the step (its thread
                        // blocks), or, without the rule, destroys the QP and the close completes
                        awaitLoopBlockedOr(destroyed.toFuture());
                        destroyedDuringStep.set(destroyed.toFuture().isDone());
                        seen.complete(qp.state());
                    });
                } catch (Throwable t) {
                    seen.completeExceptionally(t);
                }
            });
            inStep.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
            p.client.dispose();
            assertEquals(QpState.ERR, seen.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS), "the step saw the QP the close moved to ERR");
            assertFalse(destroyedDuringStep.get(), "the QP was destroyed while a setup step used it");
            destroyed.block(TIMEOUT);
            setup.join(TIMEOUT.toMillis());
        }
    }

    @Test
    void aSetupStepAfterTheDestroyFailsWithTheClosedErrorAndNeverRuns() {
        try (LabPeers p = LabPeers.connect(Transport.TCP, RdmaServer.create().runOn(resources), RdmaClient.create().runOn(resources))) {
            ConnectionCore core = FaultInjection.core(p.client);
            p.client.dispose();
            p.client.onDispose().block(TIMEOUT);
            AtomicBoolean ran = new AtomicBoolean();
            ConnectionException.Closed e = assertThrows(ConnectionException.Closed.class, () -> core.setUp(qp -> ran.set(true)));
            assertTrue(e.getMessage().contains("closed locally"), e.getMessage());
            assertFalse(ran.get());
            assertThrows(ConnectionException.Closed.class, core::postReceives);
        }
    }

    /** Until a thread of the resources' loop is blocked (on the step's monitor) or {@code destroyed} completed. */
    private static void awaitLoopBlockedOr(CompletableFuture<Void> destroyed) {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!destroyed.isDone() && !loopBlocked()) {
            if (System.nanoTime() - deadline > 0) throw new AssertionError("the loop neither destroyed the QP nor waited for the step");
            Thread.onSpinWait();
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }

    private static boolean loopBlocked() {
        return Thread.getAllStackTraces().keySet().stream()
                .anyMatch(t -> t.getName().startsWith("setup-step-loop-") && t.getState() == Thread.State.BLOCKED);
    }
}
