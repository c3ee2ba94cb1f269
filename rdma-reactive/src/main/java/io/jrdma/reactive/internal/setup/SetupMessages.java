package io.jrdma.reactive.internal.setup;

import io.jrdma.ffm.MemoryLockLimitException;
import io.jrdma.ffm.NoRdmaDeviceException;
import io.jrdma.ffm.RdmaException;
import io.jrdma.reactive.ConnectionException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetEncoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CancellationException;

/**
 * How the setup paths word what went wrong, for the two people who read it: the operator of the
 * server (its log: one line, the whole cause and what to change) and the person at the client (the
 * reject reason: a short sentence that fits the reject's private data). No class names, no
 * {@code /} before addresses, no stack trace for a failure we expect (memory lock limit, no
 * device, a peer that is not jrdma); a stack trace only for what would be a bug.
 */
public final class SetupMessages {
    /** The IB CM REJ message's private data: 148 bytes, and rdma_cm pads shorter ones with zeros. */
    public static final int CM_REJECT_BYTES = 148;
    /** The TCP path's reject carries its reason behind a u8 length. */
    public static final int TCP_REJECT_BYTES = 255;

    private SetupMessages() {}

    /** {@code 10.77.0.2:7471} ({@code [fe80::1]:7471} for IPv6): no {@code host/} prefix, no bare {@code /}. */
    public static String address(InetSocketAddress a) {
        if (a == null) return "an unknown address";
        String host = a.isUnresolved() || a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + a.getPort();
    }

    /** {@code 10.77.0.1}: the address without its port. */
    public static String host(InetSocketAddress a) {
        if (a == null) return "an unknown address";
        return a.isUnresolved() || a.getAddress() == null ? a.getHostString() : a.getAddress().getHostAddress();
    }

    /** {@code 10 s}, {@code 1.5 s}, {@code 250 ms}: a timeout as the user gave it. */
    public static String duration(Duration d) {
        long ms = d.toMillis();
        if (ms < 1000) return ms + " ms";
        if (ms % 1000 == 0) return ms / 1000 + " s";
        return String.format(java.util.Locale.ROOT, "%.1f s", ms / 1000.0);
    }

    /** True for failures a server meets in normal life (limits, devices, peers): logged as one line, no stack trace. */
    public static boolean expected(Throwable e) {
        return e instanceof RdmaException;
    }

    /** A failure's own words; a failure without any (a bug) is named by its kind, not by a class name. */
    public static String text(Throwable e) {
        String m = e.getMessage();
        return m == null || m.isBlank() ? "an internal error (" + e.getClass().getSimpleName() + ")" : m;
    }

    /**
     * Why a server turned a client away, in words for the person at the client, at most
     * {@code maxBytes} of UTF-8: the server's log has the whole story.
     */
    public static String forPeer(Throwable e, int maxBytes) {
        String reason;
        if (e instanceof MemoryLockLimitException m) {
            reason = "the server cannot register memory for the connection: its locked-memory limit ("
                    + (m.limitBytes() < 0 ? "unlimited" : bytes(m.limitBytes())) + ") is too low; raise ulimit -l on the server";
        } else if (e instanceof NoRdmaDeviceException n) {
            reason = "the server has no RDMA device for this connection: " + n.getMessage();
        } else if (e instanceof ConnectionException.Protocol p) {
            reason = p.getMessage();
        } else if (e instanceof RdmaException r) {
            reason = "the server could not set up the connection: " + r.getMessage();
        } else {
            reason = "the server could not set up the connection (an internal error: see its log)";
        }
        return truncate(reason, maxBytes);
    }

    /**
     * A TCP setup's failure as its client ({@code client}) or the server's log reads it: an I/O
     * error is an unreachable peer, an RDMA failure a failed setup with {@code remote}.
     */
    public static Throwable overTcp(Throwable t, boolean client, InetSocketAddress remote) {
        if (t instanceof ConnectionException || t instanceof CancellationException) return t;
        if (t instanceof IOException e) {
            return new ConnectionException.Unreachable(address(remote) + " is unreachable over TCP: " + e.getMessage(), e);
        }
        if (t instanceof RdmaException e) {
            return new ConnectionException("setting up the connection " + (client ? "to " : "from ") + address(remote) + " failed: " + e.getMessage(), e);
        }
        return t;
    }

    /** {@code 64 KiB}, {@code 16 MiB}, {@code 1000 bytes}. */
    public static String bytes(long n) {
        if (n >= 1L << 30 && n % (1L << 30) == 0) return (n >> 30) + " GiB";
        if (n >= 1L << 20 && n % (1L << 20) == 0) return (n >> 20) + " MiB";
        if (n >= 1L << 10 && n % (1L << 10) == 0) return (n >> 10) + " KiB";
        return n + " bytes";
    }

    /** {@code text} cut to at most {@code maxBytes} of UTF-8 on a character boundary, ending in "..." when cut. */
    public static String truncate(String text, int maxBytes) {
        if (text.getBytes(StandardCharsets.UTF_8).length <= maxBytes) return text;
        CharsetEncoder encoder = StandardCharsets.UTF_8.newEncoder().onMalformedInput(CodingErrorAction.REPLACE)
                .onUnmappableCharacter(CodingErrorAction.REPLACE);
        ByteBuffer room = ByteBuffer.allocate(maxBytes - 3);
        CharBuffer in = CharBuffer.wrap(text);
        encoder.encode(in, room, true);  // stops before the first character that does not fit whole
        return text.substring(0, in.position()) + "...";
    }

    /** The UTF-8 bytes of a reject reason, at most {@code maxBytes}. */
    public static byte[] rejectBytes(String reason, int maxBytes) {
        return truncate(reason, maxBytes).getBytes(StandardCharsets.UTF_8);
    }
}
