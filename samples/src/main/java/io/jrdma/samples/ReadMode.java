package io.jrdma.samples;

import io.jrdma.ffm.Access;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import reactor.core.publisher.Flux;

/**
 * {@code rdma read [SERVER]}: one-sided reads. The server stores all of its stdin and exposes it
 * for RDMA READ only; the client reads lines {@code start end} and prints exactly the bytes
 * {@code [start, end)} of the server's text, fetched with RDMA READ. The server's CPU takes no
 * part in the reads, so it has nothing to print until the client leaves.
 *
 * <p>Wire: the server SENDs "ready" once the text is in its exposed memory; then only READs.
 * Ranges longer than --size are read in --size chunks, four in flight, with progress on stderr.
 */
@Command(name = "read", mixinStandardHelpOptions = true,
        description = "RDMA READ: the server serves its stdin; the client prints byte ranges \"start end\" of it.")
final class ReadMode implements Callable<Integer> {
    @Mixin
    ModeOptions options;

    /** A byte range {@code [start, end)}. */
    record Range(long start, long end) {
        private static final java.util.regex.Pattern WHOLE = java.util.regex.Pattern.compile("[+-]?\\d+");

        /** Parses {@code start end}; the message of the exception is what the user sees. */
        static Range parse(String line, long size) {
            String[] parts = line.trim().split("\\s+");
            long start, end;
            if (parts.length != 2 || !WHOLE.matcher(parts[0]).matches() || !WHOLE.matcher(parts[1]).matches()) {
                throw new IllegalArgumentException("expected two numbers \"start end\", got \"" + line.trim() + "\"");
            }
            try {
                start = Long.parseLong(parts[0]);
                end = Long.parseLong(parts[1]);
            } catch (NumberFormatException tooLong) {  // digits, but beyond a long: past any text a server holds
                throw new IllegalArgumentException("range " + line.trim() + " is outside the server's " + size
                        + " bytes: use 0 <= start <= end <= " + size);
            }
            if (end < start) {
                throw new IllegalArgumentException("range [" + start + ", " + end + ") is reversed: its end comes before its start;"
                        + " use start <= end (end exclusive)");
            }
            if (start < 0 || end > size) {
                throw new IllegalArgumentException("range [" + start + ", " + end + ") is outside the server's " + size
                        + " bytes: use 0 <= start <= end <= " + size);
            }
            return new Range(start, end);
        }
    }

    @Override
    public Integer call() throws Exception {
        options.requireJrdmaPeer("read");
        try (Session session = new Session(options)) {
            return options.isClient() ? client(session) : server(session);
        }
    }

    private int server(Session session) throws Exception {
        byte[] text = System.in.readAllBytes();
        if (text.length == 0) {
            System.err.println("rdma read: stdin was empty: give the server text to serve (pipe a file, or type and end with Ctrl-D)");
            return 2;
        }
        System.out.printf("rdma read: serving %d bytes from stdin%n", text.length);
        return session.serve("read", options.rdmaServer().exposeBuffer(text.length, Access.REMOTE_READ), c -> {
            c.exposedBuffer().put(0, text);
            return c.send("ready")
                    .doOnSuccess(done -> System.out.printf("exposed %d bytes for RDMA READ; the reads will not involve this side's CPU%n",
                            text.length))
                    .then(c.onDispose());  // no timeout: the client reads for as long as its user likes
        });
    }

    private int client(Session session) throws Exception {
        RdmaConnection c = session.connect("read", options.rdmaClient());
        c.receive().block(options.timeout()).release();  // "ready": the text is in place
        RemoteBuffer text = c.remoteBuffer();
        System.out.printf("the server exposes %d bytes; enter ranges as \"start end\" (end exclusive)%n", text.length());
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            if (line.isBlank()) continue;
            Range r;
            try {
                r = Range.parse(line, text.length());
            } catch (IllegalArgumentException e) {
                System.out.println(e.getMessage());
                continue;
            }
            Progress progress = new Progress("read", r.end() - r.start(), 8L * options.size, System.err);
            try {
                session.operation("read", c, () -> read(c, text, r, progress));
            } catch (RuntimeException e) {
                if (!Errors.peerClosed(e)) throw e;
                System.out.flush();
                session.serverGone("read", false, "during the RDMA READ of bytes [" + r.start() + ", " + r.end() + "): "
                        + progress.done() + " of " + (r.end() - r.start()) + " bytes had arrived");
                return 1;
            }
            System.out.println();
        }
        return 0;
    }

    private Void read(RdmaConnection c, RemoteBuffer source, Range r, Progress progress) {
        int chunk = options.size;
        long total = r.end() - r.start();
        Duration perChunk = options.timeout();
        Flux.range(0, (int) ((total + chunk - 1) / chunk))
                .flatMapSequential(i -> {
                    long offset = r.start() + (long) i * chunk;
                    return c.read(source, offset, (int) Math.min(chunk, r.end() - offset));
                }, 4)
                .timeout(perChunk)
                .doOnNext(bytes -> {
                    System.out.writeBytes(bytes);
                    progress.advance(bytes.length);
                })
                .blockLast(perChunk.multipliedBy(1 + total / chunk));
        System.out.flush();
        return null;
    }
}
