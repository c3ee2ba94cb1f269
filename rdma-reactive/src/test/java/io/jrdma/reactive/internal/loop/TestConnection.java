package io.jrdma.reactive.internal.loop;

import io.jrdma.ffm.WorkCompletions;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.PollingMode;

/** A connection to the loop tests, with no QP: its waits' owner, and a member whose drain ends at once (nothing posted) unless told. */
final class TestConnection implements Loop.Member {
    private final String name;
    volatile boolean closing;
    volatile boolean destroyed;
    /** False: its work requests have not flushed yet, and its drain deadline is a minute away. */
    volatile boolean flushed = true;

    TestConnection(String name) {
        this.name = name;
    }

    @Override
    public boolean isClosing() {
        return closing;
    }

    @Override
    public RuntimeException closedError() {
        return new ConnectionException.Closed(name + " closed locally");
    }

    @Override
    public String description() {
        return name;
    }

    @Override
    public void onCompletion(WorkCompletions wcs, int i) {
        throw new AssertionError("no QP, no completion");
    }

    @Override
    public boolean drained() {
        return flushed;
    }

    @Override
    public long drainDeadline() {
        return flushed ? System.nanoTime() : System.nanoTime() + 60_000_000_000L;
    }

    @Override
    public void destroy() {
        destroyed = true;
    }

    @Override
    public void fail(Throwable error) {
    }

    @Override
    public PollingMode pollingMode() {
        return PollingMode.EVENT;
    }
}
