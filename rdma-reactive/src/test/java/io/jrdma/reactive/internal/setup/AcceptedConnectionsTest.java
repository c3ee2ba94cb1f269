package io.jrdma.reactive.internal.setup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The rules of {@link AcceptedConnections}' Javadoc, each interleaving of a server's close with a setup in one test. */
class AcceptedConnectionsTest {
    private final AcceptedConnections<String> connections = new AcceptedConnections<>();

    @Test
    void aCloseWhileAConnectionIsBuiltLeavesTheSharedThingsUntilItIsDestroyed() {
        assertTrue(connections.reserve());  // the setup passed the closing check and takes the shared SRQ
        assertEquals(List.of(), connections.close());
        assertFalse(connections.releaseIfIdle(), "the SRQ was freed under the connection being created on it");
        connections.add("accepted");
        assertTrue(connections.remove("accepted"));
    }

    @Test
    void aSetupAfterTheCloseIsRefused() {
        connections.close();
        assertFalse(connections.reserve(), "a connection registered after the close swept");
    }

    @Test
    void aSetupThatFailsAfterTheCloseReleasesTheSharedThings() {
        assertTrue(connections.reserve());
        connections.close();
        assertFalse(connections.releaseIfIdle());
        assertTrue(connections.abandon());
    }

    @Test
    void theSharedThingsGoOnceAndASecondCloseClosesNothing() {
        connections.reserve();
        connections.add("a");
        assertEquals(List.of("a"), connections.close());
        assertNull(connections.close());
        assertFalse(connections.releaseIfIdle());
        assertTrue(connections.remove("a"));
        assertFalse(connections.releaseIfIdle());
        assertFalse(connections.remove("a"));
    }
}
