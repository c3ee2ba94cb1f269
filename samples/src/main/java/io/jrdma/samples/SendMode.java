package io.jrdma.samples;

import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.memory.ReceivedMessage;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

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

    private void serve(RdmaConnection c) {
        while (true) {
            // no timeout: a person types at their own pace; the connection's end ends the wait
            ReceivedMessage m = c.receive().block();
            String line;
            try {
                line = m.text();
            } finally {
                m.release();
            }
            System.out.println("received: " + line);
            c.send("ack").block(options.timeout());
        }
    }

    private int client(Session session) throws Exception {
        RdmaConnection c = session.connect("send", options.rdmaClient());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
            if (bytes.length > options.size) {
                System.err.printf("line of %d bytes not sent: the buffers hold %d (--size)%n", bytes.length, options.size);
                continue;
            }
            c.send(bytes).block(options.timeout());
            System.out.println("sent: " + line);
            ReceivedMessage reply = c.receive().block(options.timeout());
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
