package io.jrdma.samples;

import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.memory.ReceivedMessage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import reactor.core.publisher.Mono;

/**
 * {@code rdma send [SERVER]}: two-sided messaging. The client SENDs each line it reads from stdin;
 * the server prints it and SENDs back {@code ack}, which the client reports as "Server
 * acknowledged" before it sends the next line. End the client with Ctrl-D (end of input).
 *
 * <p>Wire: one SEND per line (UTF-8, no newline, at most --size bytes), one SEND "ack" per line back.
 */
@Command(name = "send", mixinStandardHelpOptions = true,
        description = "Two-sided SEND/RECV: the client sends lines, the server prints and acknowledges each.")
final class SendMode implements Callable<Integer> {
    @Mixin
    ModeOptions options;

    @Override
    public Integer call() throws Exception {
        options.requireJrdmaPeer("send");
        try (Session session = new Session(options)) {
            return options.isClient() ? client(session) : session.serve("send", options.rdmaServer(), this::serve);
        }
    }

    private Mono<Void> serve(RdmaConnection c) {
        // no timeout on the messages: a person types at their own pace; the connection's end ends the stream
        return c.receives().concatMap(m -> {
            String line;
            try {
                line = m.text();
            } finally {
                m.release();
            }
            System.out.println("received: " + line);
            return c.send("ack");  // within the connection's operation timeout (--timeout)
        }, 1).then();
    }

    private int client(Session session) throws Exception {
        RdmaConnection c = session.connect("send", options.rdmaClient());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String read; (read = in.readLine()) != null; ) {
            String line = read;
            byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
            if (bytes.length > options.size) {
                System.err.printf("line of %d bytes not sent: the buffers hold %d (--size)%n", bytes.length, options.size);
                continue;
            }
            ReceivedMessage reply;
            try {
                reply = session.operation("send", c, () -> {
                    c.send(bytes).block(options.timeout());
                    System.out.println("sent: " + line);
                    return c.receive().block(options.timeout());
                });
            } catch (RuntimeException e) {
                if (!Errors.peerClosed(e)) throw e;
                session.serverGone("send", false, "before it acknowledged \"" + line + "\"");
                return 1;
            }
            try {
                if (!reply.text().equals("ack")) throw new IllegalStateException("expected \"ack\", got \"" + reply.text() + "\"");
            } finally {
                reply.release();
            }
            System.out.println("Server acknowledged");
        }
        return 0;
    }
}
