package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The one close sequence: first cause wins, nothing is destroyed before the disconnect is done, and only once. */
class CloseStateTest {
    private final CloseState state = new CloseState();

    @Test
    void theFirstCauseWinsAndOnlyItsCallerDisconnects() {
        RuntimeException first = new RuntimeException("peer gone"), second = new RuntimeException("closed locally");
        assertFalse(state.isClosing());
        assertTrue(state.begin(first));
        assertFalse(state.begin(second));
        assertSame(first, state.cause());
        assertTrue(state.isClosing());
    }

    @Test
    void aLocalCloseAfterThePeersDepartureIsNotTheClosure() {
        assertTrue(state.begin(new RuntimeException("peer gone")));
        assertFalse(state.begin(new RuntimeException("closed locally"), true));
        assertFalse(state.isLocal(), "the peer's departure won");
        CloseState local = new CloseState();
        assertTrue(local.begin(new RuntimeException("closed locally"), true));
        assertFalse(local.begin(new RuntimeException("peer gone")));
        assertTrue(local.isLocal());
    }

    @Test
    void theQpIsDestroyedOnlyAfterTheDisconnectAndOnlyOnce() {
        assertFalse(state.destroy(), "open: nothing to destroy");
        state.begin(new RuntimeException());
        assertFalse(state.destroy(), "the closer may still be inside ibv_modify_qp");
        state.disconnected();
        assertTrue(state.isDraining());
        assertTrue(state.destroy());
        assertFalse(state.destroy());
        assertTrue(state.isDestroyed());
    }

    @Test
    void theDrainDeadlineIsSetWhenClosingBegins() {
        long before = System.nanoTime();
        state.begin(new RuntimeException());
        assertTrue(state.drainDeadline() - before >= CloseState.DRAIN_TIMEOUT.toNanos());
    }
}
