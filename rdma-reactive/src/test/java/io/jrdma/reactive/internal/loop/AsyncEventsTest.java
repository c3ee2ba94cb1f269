package io.jrdma.reactive.internal.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jrdma.ffm.AsyncEvent;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The rules of {@link AsyncEvents}' Javadoc, on the dispatch seam: no device, no context needed for a watched object's event. */
class AsyncEventsTest {
    /** An address no verbs object of this JVM has: a test's own. */
    private static final long ADDRESS = 0x7e57_0000_0000L;
    private static final int IBV_EVENT_QP_FATAL = 1;
    private final Object destroyed = new Object();
    private final Object created = new Object();

    @AfterEach
    void unwatch() {
        AsyncEvents.unwatch(ADDRESS, created);
    }

    @Test
    void aDestroyedObjectsUnwatchLeavesTheWatchOfTheObjectCreatedAtItsAddress() {
        List<AsyncEvent> heard = new ArrayList<>();
        AsyncEvents.watch(ADDRESS, destroyed, e -> { });
        AsyncEvents.watch(ADDRESS, created, heard::add);  // a QP created at the freed address, on another thread
        AsyncEvents.unwatch(ADDRESS, destroyed);           // the destroyed QP's late unwatch
        AsyncEvent fatal = new AsyncEvent(IBV_EVENT_QP_FATAL, "IBV_EVENT_QP_FATAL", ADDRESS, 0);
        AsyncEvents.dispatch(null, fatal);  // a watched object's event reads nothing of the context
        assertEquals(List.of(fatal), heard, "the new QP's fatal error went unheard");
    }
}
