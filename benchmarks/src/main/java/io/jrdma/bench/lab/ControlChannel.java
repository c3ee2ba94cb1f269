package io.jrdma.bench.lab;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The bench client's line protocol to the bench server, over TCP on the loopback: one command
 * per line, {@code VERB key=value ...} with URL-encoded values, answered by one line ({@code ok
 * ...} or {@code error message=...}). It carries what the two ends of a row must agree on and
 * the edges of the measured window; no traffic of the row goes through it.
 */
final class ControlChannel implements AutoCloseable {
    /** A command line: its verb and arguments. */
    record Line(String verb, Map<String, String> args) {
        String get(String key) {
            String v = args.get(key);
            if (v == null) throw new IllegalStateException("'" + verb + "' has no " + key + ": " + args);
            return v;
        }

        long getLong(String key) {
            return Long.parseLong(get(key));
        }
    }

    /** The peer answered a command with an error. */
    static final class RemoteFailure extends RuntimeException {
        RemoteFailure(String message) {
            super(message);
        }
    }

    private final Socket socket;
    private final BufferedReader in;
    private final Writer out;

    ControlChannel(Socket socket) throws IOException {
        this.socket = socket;
        socket.setTcpNoDelay(true);
        this.in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
        this.out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8);
    }

    void send(String verb, Map<String, String> args) throws IOException {
        StringBuilder line = new StringBuilder(verb);
        args.forEach((k, v) -> line.append(' ').append(k).append('=').append(URLEncoder.encode(v, StandardCharsets.UTF_8)));
        out.write(line.append('\n').toString());
        out.flush();
    }

    void send(String verb) throws IOException {
        send(verb, Map.of());
    }

    /** The next line, or null when the peer closed the connection; waits at most {@code timeout}. */
    Line receive(Duration timeout) throws IOException {
        socket.setSoTimeout(Math.toIntExact(Math.max(1, timeout.toMillis())));
        String line;
        try {
            line = in.readLine();
        } catch (SocketTimeoutException e) {
            throw new SocketTimeoutException("no answer from the bench server within " + timeout.toSeconds() + " s");
        }
        if (line == null) return null;
        String[] words = line.trim().split(" ");
        Map<String, String> args = new LinkedHashMap<>();
        for (int i = 1; i < words.length; i++) {
            int eq = words[i].indexOf('=');
            if (eq > 0) args.put(words[i].substring(0, eq), URLDecoder.decode(words[i].substring(eq + 1), StandardCharsets.UTF_8));
        }
        return new Line(words[0], args);
    }

    /** Sends a command and returns the arguments of its {@code ok}; an {@code error} answer throws {@link RemoteFailure}. */
    Line call(String verb, Map<String, String> args, Duration timeout) throws IOException {
        send(verb, args);
        Line answer = receive(timeout);
        if (answer == null) throw new IOException("the bench server closed the control connection during '" + verb + "'");
        if (answer.verb().equals("error")) throw new RemoteFailure("server: " + answer.args().getOrDefault("message", "?"));
        if (!answer.verb().equals("ok")) throw new IOException("unexpected answer to '" + verb + "': " + answer);
        return answer;
    }

    Line call(String verb, Duration timeout) throws IOException {
        return call(verb, Map.of(), timeout);
    }

    void ok(Map<String, String> args) throws IOException {
        send("ok", args);
    }

    void error(Throwable t) throws IOException {
        send("error", Map.of("message", describe(t)));
    }

    static String describe(Throwable t) {
        StringBuilder s = new StringBuilder(t.getClass().getSimpleName() + ": " + t.getMessage());
        for (Throwable c = t.getCause(); c != null && c != c.getCause(); c = c.getCause()) {
            s.append(" <- ").append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
        }
        return s.toString().replace('\n', ' ');
    }

    static Map<String, String> map(Object... keyValues) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) m.put((String) keyValues[i], String.valueOf(keyValues[i + 1]));
        return m;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
