package io.jrdma.reactive.internal.observe;

import io.jrdma.ffm.SendOpcode;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import reactor.util.Logger;
import reactor.util.Loggers;

/** Logs every work request and completion of one connection at DEBUG, like Reactor Netty's wiretap. */
final class Wiretap implements Observer {
    static final Logger LOG = Loggers.getLogger("io.jrdma.reactive.wiretap");

    private final String connection;

    Wiretap(String connection) {
        this.connection = connection;
    }

    @Override
    public void posted(SendOpcode opcode, int slot, long length) {
        if (LOG.isDebugEnabled()) LOG.debug(connection + " POST " + opcode + " " + length + " B (slot " + slot + ")");
    }

    @Override
    public void completed(WcOpcode opcode, WcStatus status, long wrId, long bytes, long nanos) {
        if (LOG.isDebugEnabled()) {
            LOG.debug(connection + " COMPLETION " + opcode + " " + status + " " + bytes + " B (wr_id 0x"
                    + Long.toHexString(wrId) + (nanos >= 0 ? ", " + nanos / 1_000 + " us after the post)" : ")"));
        }
    }

    @Override
    public boolean timed() {
        return LOG.isDebugEnabled();
    }
}
