package io.jrdma.samples;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.memory.BufferPool;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.memory.RegisteredBuffer;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import reactor.core.publisher.Mono;

/**
 * {@code rdma verify [SERVER] -s STRING}: a round trip through remote memory. The client puts
 * STRING in one registered buffer, RDMA-WRITEs it into the server's exposed memory, RDMA-READs it
 * back into a second registered buffer, and compares the two: SUCCESS, or the first byte that
 * differs. Both posts are zero-copy, straight from and into the pooled buffers.
 *
 * <p>Wire: WRITE and READ of the server's memory, then a SEND "verified N" so the server can show
 * what its memory holds; the server answers "ack". With {@code --c-peer} (the C peers cm_rw_server
 * and cm_rw_client): WRITE and READ only, the server's memory advertised in its accept's private
 * data; the server shows its memory once the client has disconnected.
 */
@Command(name = "verify", mixinStandardHelpOptions = true,
        description = "RDMA WRITE a string into the server, READ it back into a second buffer, compare.")
final class VerifyMode implements Callable<Integer> {
    @Mixin
    ModeOptions options;

    @Option(names = {"-s", "--string"}, defaultValue = "Hello from jrdma", paramLabel = "STRING",
            description = "What to write and read back (client). Default: \"${DEFAULT-VALUE}\".")
    String string;

    @Override
    public Integer call() throws Exception {
        try (Session session = new Session(options)) {
            return options.isClient()
                    ? client(session)
                    : session.serve("verify", options.rdmaServer().exposeBuffer(options.size, Access.REMOTE_READ, Access.REMOTE_WRITE),
                            options.cPeer ? this::serveCPeer : this::serve);
        }
    }

    private Mono<Void> serve(RdmaConnection c) {
        return c.receives().concatMap(m -> {  // no timeout on the messages: the client's pace
            String note = m.text();
            if (!note.startsWith("verified ")) {
                m.release();
                return Mono.error(new IllegalStateException("unexpected message \"" + note + "\""));
            }
            int length = Integer.parseInt(note.substring("verified ".length()));
            System.out.printf("client wrote and read back %d bytes; my memory holds: %s%n", length, c.exposedBuffer().string(0, length));
            m.release();  // after reading: the held message keeps the exposed region of a closing connection
            return c.send("ack");
        }, 1).then();
    }

    /** A C client says nothing: its WRITE and READ leave no trace here, so the memory is shown after it disconnected. */
    private Mono<Void> serveCPeer(RdmaConnection c) {
        RegisteredBuffer memory = c.exposedBuffer().retain();  // kept past the connection, whose QP is gone by then
        return c.onDispose()  // no timeout: the client's pace
                .then(Mono.<Void>fromRunnable(() -> {
                    int length = 0;
                    while (length < memory.capacity() && memory.segment().get(ValueLayout.JAVA_BYTE, length) != 0) length++;
                    System.out.printf("the client disconnected; my memory holds %d bytes: %s%n", length, memory.string(0, length));
                }))
                .doFinally(signal -> memory.release());
    }

    private int client(Session session) {
        byte[] bytes = string.getBytes(StandardCharsets.UTF_8);
        RdmaConnection c = session.connect("verify", options.rdmaClient());
        RemoteBuffer target = options.remote(c);
        if (bytes.length > Math.min(target.length(), options.size)) {
            System.err.printf("rdma verify: %d bytes do not fit: the server exposes %d bytes, the buffers hold %d (--size)%n",
                    bytes.length, target.length(), options.size);
            return 2;
        }
        BufferPool pool = c.buffers();
        RegisteredBuffer written = pool.acquire().block(options.timeout());
        RegisteredBuffer readBack = pool.acquire().block(options.timeout());
        try {
            written.put(0, bytes);
            c.write(written, 0, bytes.length, target, 0).block(options.timeout());
            System.out.printf("wrote %d bytes into the server's memory (RDMA WRITE): %s%n", bytes.length, string);
            c.read(target, 0, bytes.length, readBack, 0).block(options.timeout());
            System.out.printf("read %d bytes back into a second buffer (RDMA READ)%n", bytes.length);
            String verdict = compare(written.segment(), readBack.segment(), bytes.length);
            System.out.println(verdict);
            if (!options.cPeer) {
                c.send("verified " + bytes.length).block(options.timeout());
                c.receive().block(options.timeout()).release();  // the server's "ack": it has looked
            }
            return verdict.startsWith("SUCCESS") ? 0 : 1;
        } finally {
            written.release();
            readBack.release();
        }
    }

    /** SUCCESS, or where and how the first {@code length} bytes of the two buffers differ. */
    static String compare(MemorySegment written, MemorySegment readBack, int length) {
        long at = written.asSlice(0, length).mismatch(readBack.asSlice(0, length));
        if (at < 0) return "SUCCESS: the " + length + " bytes read back are the bytes written";
        byte w = written.get(ValueLayout.JAVA_BYTE, at);
        byte r = readBack.get(ValueLayout.JAVA_BYTE, at);
        return String.format("MISMATCH at byte %d of %d: wrote 0x%02x, read back 0x%02x", at, length, w & 0xff, r & 0xff);
    }
}
