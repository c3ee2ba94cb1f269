package io.jrdma.reactive.soak;

import io.jrdma.reactive.OutOfBandExchange;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.Optional;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * An {@link OutOfBandExchange} over a plain TCP socket in c-peers' {@code oob_tcp_peer} format:
 * each side writes a 40-byte descriptor (qpn, psn, gid[16], addr, rkey, len, big-endian) and
 * reads the other's, then each writes and reads a ready byte {@code 'R'}; at the end the client
 * writes {@code 'D'} and the server answers {@code 'D'} once it closed its side. The socket's
 * blocking I/O runs on {@code io}, never on jrdma's setup thread.
 */
final class OutOfBandWire implements OutOfBandExchange {
    static final int DESCRIPTOR_BYTES = 40;

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private final Scheduler io;

    OutOfBandWire(Socket socket, Scheduler io) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
        this.io = io;
    }

    @Override
    public Mono<Peer> exchange(Local local) {
        return Mono.fromCallable(() -> {
            RegisteredBuffer mine = local.exposed().orElseThrow(() -> new IllegalStateException("both sides expose memory"));
            ByteBuffer d = ByteBuffer.allocate(DESCRIPTOR_BYTES).putInt(local.qpNumber()).putInt(local.psn()).put(local.gid())
                    .putLong(mine.address()).putInt(mine.rkey()).putInt((int) mine.capacity());
            out.write(d.array());
            byte[] theirs = new byte[DESCRIPTOR_BYTES];
            in.readFully(theirs);
            ByteBuffer t = ByteBuffer.wrap(theirs);
            byte[] gid = new byte[16];
            t.get(8, gid);
            return new Peer(t.getInt(0), t.getInt(4), 0, gid, Optional.of(RemoteBuffer.fromBigEndian(theirs, 24)));
        }).subscribeOn(io);
    }

    @Override
    public Mono<Void> ready(Peer peer) {
        return Mono.<Void>fromCallable(() -> {
            out.write('R');
            expect('R', "ready");
            return null;
        }).subscribeOn(io);
    }

    /** Client: says it is done and waits until the server closed its side. */
    Mono<Void> goodbye() {
        return Mono.<Void>fromCallable(() -> {
            out.write('D');
            expect('D', "goodbye");
            return null;
        }).subscribeOn(io);
    }

    /** Server: blocks until the client says it is done. */
    void awaitGoodbye() throws IOException {
        expect('D', "goodbye");
    }

    /** Server: tells the client its side is closed. */
    void answerGoodbye() throws IOException {
        out.write('D');
    }

    private void expect(int b, String what) throws IOException {
        int got = in.read();
        if (got != b) throw new IOException("expected the " + what + " byte '" + (char) b + "' from " + socket.getRemoteSocketAddress() + ", got " + got);
    }
}
