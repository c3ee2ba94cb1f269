package io.jrdma.samples;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import reactor.core.publisher.Mono;

/**
 * {@code rdma write [SERVER]}: one-sided placement. The server exposes --size bytes of registered
 * memory; the client RDMA-WRITEs each line straight into it, at offset 0, with the line's length
 * as the 32-bit immediate. The server's CPU takes no part in moving the bytes: the immediate is
 * its only news, and it tells how many bytes to print.
 *
 * <p>Wire: one WRITE_WITH_IMM per line (immediate = length); one SEND "ack" back once the server
 * has printed it, because the next line overwrites the same bytes.
 */
@Command(name = "write", mixinStandardHelpOptions = true,
        description = "RDMA WRITE with immediate: the client writes lines into server memory; the immediate notifies the server.")
final class WriteMode implements Callable<Integer> {
    @Mixin
    ModeOptions options;

    @Override
    public Integer call() throws Exception {
        options.requireJrdmaPeer("write");
        try (Session session = new Session(options)) {
            return options.isClient()
                    ? client(session)
                    : session.serve("write", options.rdmaServer().exposeBuffer(options.size, Access.REMOTE_WRITE), this::serve);
        }
    }

    private Mono<Void> serve(RdmaConnection c) {
        return c.receives().concatMap(m -> {  // no timeout on the messages: the client writes when its user types
            int length = m.immediate();
            System.out.printf("client wrote %d bytes (immediate %d): %s%n", length, length, c.exposedBuffer().string(0, length));
            m.release();  // after reading: the held message keeps the exposed region of a closing connection
            return c.send("ack");
        }, 1).then();
    }

    private int client(Session session) throws Exception {
        RdmaConnection c = session.connect("write", options.rdmaClient());
        RemoteBuffer target = c.remoteBuffer();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
            if (bytes.length > Math.min(target.length(), options.size)) {
                System.err.printf("line of %d bytes not written: the server exposes %d bytes, the buffers hold %d (--size)%n",
                        bytes.length, target.length(), options.size);
                continue;
            }
            c.writeWithImmediate(bytes, target, 0, bytes.length).block(options.timeout());
            System.out.printf("wrote %d bytes into the server's memory (immediate %d): %s%n", bytes.length, bytes.length, line);
            c.receive().block(options.timeout()).release();  // the server's "ack": it has printed, the bytes may be overwritten
        }
        return 0;
    }
}
