package io.jrdma.reactive.internal.core;

import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.reactive.internal.loop.Loop;
import io.jrdma.reactive.memory.RegisteredBuffer;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * The receiving side of large messages (docs/credit-protocol.md, "Large messages"; the wire is
 * {@link Rendezvous}'): it reads each rendezvous by RDMA READ into a buffer of its own and delivers
 * every message in the order it arrived. The rules:
 * <ul>
 * <li>a message that arrives while no rendezvous is waiting goes to the application at once, as
 *     before (the eager path allocates nothing more); one that arrives behind a rendezvous waits
 *     for it, so messages are delivered in the order they were sent;</li>
 * <li>a descriptor's receive goes back at once (its credit returns); its message gets a buffer of
 *     its size class ({@link LargeBuffers}, waiting for one to come back if need be) and is read
 *     into it, in pieces of {@link #READ_PIECE}, up to {@link #READS_PER_SLOT} of them in flight (the
 *     QP completes them in the order they were posted, so the bytes read are counted from the
 *     front); the READs post on send entries of their own, never behind the application's sends;</li>
 * <li>the DONE goes when the READ completed (the peer may reuse its source) or at once for a
 *     message above {@code maxMessageSize}, refused: nothing of it is read or delivered, and the
 *     connection goes on;</li>
 * <li>a delivered large message is a {@link io.jrdma.reactive.memory.ReceivedMessage} backed by its
 *     buffer; releasing it returns the buffer to its class;</li>
 * <li>a failed READ (the peer's source gone, the peer gone) closes the connection with its error;
 *     buffers of messages not delivered go back once the QP is destroyed;</li>
 * <li>a descriptor that is malformed or names a slot still open is a protocol violation.</li>
 * </ul>
 * Loop thread only.
 */
final class RendezvousReceiver {
    /** A message waiting behind a rendezvous: an eager one ({@code buffer} is its receive), or a rendezvous. */
    private static final class Waiting {
        final int slot;   // -1: an eager message
        final int length;
        final boolean hasImmediate;
        final int immediate;
        @Nullable RegisteredBuffer buffer;
        boolean ready, refused;
        long address;
        int rkey, read, posted, inFlight;  // the source; bytes read; bytes asked for; READs in flight

        Waiting(int slot, @Nullable RegisteredBuffer buffer, int length, boolean hasImmediate, int immediate) {
            this.slot = slot;
            this.buffer = buffer;
            this.length = length;
            this.hasImmediate = hasImmediate;
            this.immediate = immediate;
            this.ready = slot < 0;
        }
    }

    /**
     * The most bytes one READ asks for; a larger message is read in such pieces, so a large message
     * never holds the sender's QP in one long burst of READ responses (one packet per MTU) while its
     * own SENDs wait behind it. The system property {@code jrdma.rendezvous.readPiece} (bytes, at
     * least 1,024) sets it for a measurement: lab/bench's stream rows beside ib_read_bw, with
     * {@code JRDMA_BENCH_JAVA_OPTS}.
     */
    static final int READ_PIECE = Math.max(1024, Integer.getInteger("jrdma.rendezvous.readPiece", 16 << 10));
    /**
     * READs of one rendezvous in flight at once: the pieces pipeline, as ib_read_bw's READs do
     * (the QP's initiator depth bounds how many the device has outstanding; the rest wait in the
     * send queue, which has room for them: {@link Rendezvous#CONTROL_SENDS}). The system property
     * {@code jrdma.rendezvous.readsPerSlot} (1 to 16) sets it for a measurement.
     */
    static final int READS_PER_SLOT = Math.clamp(Integer.getInteger("jrdma.rendezvous.readsPerSlot", 4), 1, 16);

    private final ConnectionCore connection;
    private final SendPoster poster;
    private final Loop loop;
    private final LargeBuffers buffers;
    private final int maxMessageSize;
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    private final @Nullable Waiting[] reading = new Waiting[Rendezvous.SLOTS];  // by the peer's slot, until its DONE is posted
    private int readsInFlight;
    private boolean destroyed;

    RendezvousReceiver(ConnectionCore connection, SendPoster poster, Loop loop, LargeBuffers buffers, int maxMessageSize) {
        this.connection = connection;
        this.poster = poster;
        this.loop = loop;
        this.buffers = buffers;
        this.maxMessageSize = maxMessageSize;
    }

    /** A message arrived (counted against the credits already): delivered, or kept in order behind a rendezvous. */
    void arrived(RegisteredBuffer buffer, WcOpcode opcode, int byteLength, boolean hasImmediate, int immediate) {
        if (hasImmediate && byteLength > 0 && opcode == WcOpcode.RECV && Rendezvous.isReserved(immediate)) {
            descriptor(buffer, byteLength, immediate);
        } else if (waiting.isEmpty()) {
            connection.deliver(buffer, byteLength, hasImmediate, immediate);
        } else {
            waiting.add(new Waiting(-1, buffer, byteLength, hasImmediate, immediate));
        }
    }

    private void descriptor(RegisteredBuffer buffer, int byteLength, int immediate) {
        int slot = immediate & Rendezvous.SLOT_MASK;
        long address = byteLength == Rendezvous.DESCRIPTOR_BYTES ? Rendezvous.descriptorAddress(buffer.segment()) : 0;
        int rkey = byteLength == Rendezvous.DESCRIPTOR_BYTES ? Rendezvous.descriptorRkey(buffer.segment()) : 0;
        int length = byteLength == Rendezvous.DESCRIPTOR_BYTES ? Rendezvous.descriptorLength(buffer.segment()) : 0;
        buffer.release();  // its receive goes back at once
        if (byteLength != Rendezvous.DESCRIPTOR_BYTES || (immediate & ~(Rendezvous.RESERVED | Rendezvous.SLOT_MASK)) != 0
                || slot >= Rendezvous.SLOTS || reading[slot] != null || length <= 0) {
            CreditLink.failProtocol(connection, String.format("the peer sent a malformed or unexpected rendezvous (%d bytes, immediate 0x%08x, length %d)",
                    byteLength, immediate, length));
            return;
        }
        Waiting w = new Waiting(slot, null, length, false, 0);
        reading[slot] = w;
        waiting.add(w);
        if (length > maxMessageSize) {
            w.refused = w.ready = true;
            done(w);
            flush();
            return;
        }
        RegisteredBuffer into;
        try {
            into = buffers.tryAcquire(length);
        } catch (RuntimeException e) {  // closed: the connection is closing
            return;
        }
        if (into != null) {
            read(w, address, rkey, into);
        } else {
            buffers.acquire(length).subscribe(b -> loop.execute(() -> read(w, address, rkey, b)), e -> { });  // fails only when closed
        }
    }

    private void read(Waiting w, long address, int rkey, RegisteredBuffer into) {
        if (destroyed || connection.isClosing()) {
            into.release();
            return;
        }
        w.buffer = into;
        w.address = address;
        w.rkey = rkey;
        readNext(w);
    }

    /** Posts READs of {@code w}'s next pieces, up to {@link #READS_PER_SLOT} in flight. */
    private void readNext(Waiting w) {
        while (w.posted < w.length && w.inFlight < READS_PER_SLOT) {
            int piece = Math.min(READ_PIECE, w.length - w.posted);
            try {
                poster.postRead(w.slot, w.buffer, w.posted, piece, w.address + w.posted, w.rkey);
            } catch (RuntimeException e) {
                connection.beginClose(e);  // the QP is in error: the close says why; the buffer goes back at destroy
                return;
            }
            w.posted += piece;
            w.inFlight++;
            readsInFlight++;
        }
    }

    /** The READ for the peer's slot {@code slot} completed. */
    void readCompleted(int slot, WcStatus status, @Nullable WorkCompletion failed) {
        readsInFlight--;
        Waiting w = reading[slot];
        if (status != WcStatus.IBV_WC_SUCCESS) {
            // its buffer goes back at destroy, with the rest; a flush is the close's own
            if (status != WcStatus.IBV_WC_WR_FLUSH_ERR && failed != null) connection.beginClose(RdmaOperationException.of(failed, WcOpcode.RDMA_READ));
            return;
        }
        if (w == null) return;
        w.inFlight--;
        w.read += Math.min(READ_PIECE, w.length - w.read);  // completions come in the order the pieces were posted
        if (w.read < w.length) {
            if (!connection.isClosing()) readNext(w);
            return;
        }
        w.ready = true;
        done(w);
        flush();
    }

    /** A DONE's send failed for another reason than the close: the connection closes. */
    void doneCompleted(WcStatus status) {
        if (status != WcStatus.IBV_WC_SUCCESS && status != WcStatus.IBV_WC_WR_FLUSH_ERR) {
            connection.beginClose(new io.jrdma.reactive.ConnectionException.Closed(connection.description()
                    + ": a large message's DONE to the peer failed (" + status.name() + ")", false));
        }
    }

    private void done(Waiting w) {
        reading[w.slot] = null;
        if (connection.isClosing()) return;
        try {
            poster.postDone(w.slot, Rendezvous.RESERVED | (w.refused ? Rendezvous.REFUSED : 0) | w.slot);
        } catch (RuntimeException e) {
            connection.beginClose(e);
        }
    }

    /** Delivers what is ready at the head, in order. */
    private void flush() {
        Waiting w;
        while ((w = waiting.peek()) != null && w.ready) {
            waiting.poll();
            RegisteredBuffer b = w.buffer;
            w.buffer = null;
            if (b != null) connection.deliver(b, w.length, w.hasImmediate, w.immediate);
        }
    }

    @Override
    public String toString() {
        Waiting head = waiting.peek();
        return "RendezvousReceiver[waiting " + waiting.size() + (head == null ? "" : " (head: slot " + head.slot + ", " + head.length
                + " bytes, ready " + head.ready + ", buffer " + (head.buffer != null) + ")") + ", reading "
                + java.util.Arrays.stream(reading).map(w -> w == null ? "-" : w.length + (w.buffer != null ? " into a buffer" : " waiting for a buffer"))
                .toList() + ", READs in flight " + readsInFlight + "]";
    }

    /** READs posted and not completed: the connection is drained only without any. */
    int readsInFlight() {
        return readsInFlight;
    }

    /** After the QP is destroyed: what was not delivered goes back, and the pools close. */
    void destroyed() {
        destroyed = true;
        Waiting w;
        while ((w = waiting.poll()) != null) {
            RegisteredBuffer b = w.buffer;
            w.buffer = null;
            if (b != null) b.release();
        }
        buffers.close();
    }
}
