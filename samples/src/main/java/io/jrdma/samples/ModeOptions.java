package io.jrdma.samples;

import io.jrdma.ffm.Context;
import io.jrdma.ffm.Gid;
import io.jrdma.ffm.GidType;
import io.jrdma.ffm.RdmaDevices;
import io.jrdma.reactive.AcceptDecision;
import io.jrdma.reactive.ConnectRequest;
import io.jrdma.reactive.RdmaClient;
import io.jrdma.reactive.RdmaConnection;
import io.jrdma.reactive.RdmaServer;
import io.jrdma.reactive.Transport;
import io.jrdma.reactive.memory.RemoteBuffer;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.time.Duration;
import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * What every mode shares: {@code rdma <mode>} is the server, {@code rdma <mode> SERVER} the client.
 * A picocli mixin, so each mode's file holds only its own protocol.
 */
final class ModeOptions {
    @Parameters(index = "0", arity = "0..1", paramLabel = "SERVER",
            description = "The server's address: run as the client. Without it, run as the server.")
    String server;

    @Option(names = {"-p", "--port"}, defaultValue = "7471", paramLabel = "PORT", converter = Port.class,
            description = "rdma_cm or TCP port (server: 0 picks a free one). Default: ${DEFAULT-VALUE}.")
    int port;

    @Option(names = {"-b", "--bind"}, paramLabel = "ADDRESS",
            description = "Local address: the server listens on it (default: all), the client connects from it.")
    String bind;

    @Option(names = {"-d", "--device"}, paramLabel = "NAME",
            description = "RDMA device (e.g. rxe0). Without --bind, its RoCE v2 IPv4 address is the local address.")
    String device;

    @Option(names = {"-g", "--gid-index"}, paramLabel = "INDEX",
            description = "GID index on --device to use (its IPv4 address becomes the local address; see rdma devices).")
    Integer gidIndex;

    @Option(names = {"-i", "--ib-port"}, defaultValue = "1", paramLabel = "N", description = "Port of --device. Default: ${DEFAULT-VALUE}.")
    int ibPort;

    @Option(names = "--size", defaultValue = "4096", paramLabel = "BYTES", converter = BufferSize.class,
            description = "Buffer size: the largest message, and the memory a server exposes. Each side registers (locks in memory)"
                    + " 20 receive buffers of this size (4 for the peer's credit grants and large-message replies),"
                    + " and 16 send buffers once it sends: 36 x BYTES,"
                    + " plus BYTES a server exposes."
                    + " 8 to 1073741824. Default: ${DEFAULT-VALUE}.")
    int size;

    @Option(names = {"-t", "--transport"}, defaultValue = "rdma_cm", paramLabel = "rdma_cm|tcp",
            description = "Connection setup: rdma_cm, or QP numbers exchanged over a TCP socket. Default: ${DEFAULT-VALUE}.")
    Transport transport;

    @Option(names = "--c-peer", description = "The peer is a C program written against librdmacm, not jrdma: no jrdma descriptor;"
            + " a server advertises its memory as {u64 address, u32 rkey, u32 length}, big-endian, in its accept's private data"
            + " (the classic WRITE/READ samples' layout, rping's). For verify and write-imm.")
    boolean cPeer;

    @Option(names = "--keep-serving", description = "Server: serve every client that comes, side by side, until stopped (default: exit after one).")
    boolean keepServing;

    @Option(names = "--timeout", defaultValue = "30", paramLabel = "SECONDS", converter = Seconds.class,
            description = "Limit for connection setup and for each operation, 1 to 86400. Default: ${DEFAULT-VALUE}.")
    int timeoutSeconds;

    /** Registered buffers per connection and direction ({@link #rdmaServer}, {@link #rdmaClient}): what --size multiplies. */
    static final int BUFFERS = 16;

    /** A number option with its valid range in the error, not picocli's "is not an int" and a usage dump. */
    abstract static class Range implements CommandLine.ITypeConverter<Integer> {
        private final long min;
        private final long max;
        private final String unit;

        Range(long min, long max, String unit) {
            this.min = min;
            this.max = max;
            this.unit = unit;
        }

        @Override
        public Integer convert(String value) {
            long v;
            try {
                v = Long.parseLong(value.strip().replace("_", ""));
            } catch (NumberFormatException e) {
                if (value.strip().replace("_", "").matches("[+-]?\\d+")) {  // digits beyond a long: out of range, not "not a number"
                    throw new CommandLine.TypeConversionException(value + " is out of range: " + unit + " from " + min + " to " + max);
                }
                throw new CommandLine.TypeConversionException("expected " + unit + " from " + min + " to " + max + ", got '" + value + "'");
            }
            if (v < min || v > max) {
                throw new CommandLine.TypeConversionException(value + " is out of range: " + unit + " from " + min + " to " + max);
            }
            return (int) v;
        }
    }

    /** --size: at least 8 (atomics), at most 1 GiB. */
    static final class BufferSize extends Range {
        BufferSize() {
            super(8, 1 << 30, "bytes");
        }
    }

    /** --timeout: a second to a day. */
    static final class Seconds extends Range {
        Seconds() {
            super(1, 86_400, "seconds");
        }
    }

    /** --port: 0 (a server picks one) to 65535. */
    static final class Port extends Range {
        Port() {
            super(0, 65_535, "a port");
        }
    }

    void check() {
        if (cPeer && transport != Transport.RDMA_CM) throw new IllegalArgumentException("--c-peer speaks rdma_cm: drop -t tcp");
        if (isClient() && port == 0) throw new IllegalArgumentException("-p 0: a client needs the server's port (0 only lets a server pick one)");
    }

    boolean isClient() {
        return server != null;
    }

    Duration timeout() {
        return Duration.ofSeconds(timeoutSeconds);
    }

    String transportName() {
        return transport == Transport.RDMA_CM ? "rdma_cm" : "tcp";
    }

    /** A server configured from the options; the mode adds what it exposes. */
    RdmaServer rdmaServer() {
        String local = localAddress();
        RdmaServer s = RdmaServer.create().host(local == null ? "0.0.0.0" : local).port(port).transport(transport)
                .queueDepth(BUFFERS, BUFFERS).buffers(size, BUFFERS).connectTimeout(timeout()).operationTimeout(timeout());
        if (cPeer) s = s.acceptRaw(ModeOptions::advertise);
        return device == null ? s : s.device(device, ibPort);
    }

    /** A C peer's accept: the exposed memory, {u64 address, u32 rkey, u32 length} big-endian, or nothing. */
    private static AcceptDecision advertise(ConnectRequest request) {
        return AcceptDecision.accept(request.exposed().map(b -> b.toRemote(0, b.capacity()).toBigEndian()).orElse(new byte[0]));
    }

    /** The server's memory: from jrdma's descriptor, or from a C server's accept private data. */
    RemoteBuffer remote(RdmaConnection c) {
        return cPeer ? RemoteBuffer.fromBigEndian(c.peerPrivateData(), 0) : c.remoteBuffer();
    }

    /** Modes whose protocol is jrdma's own say so when asked to talk to a C peer. */
    void requireJrdmaPeer(String mode) {
        if (cPeer) {
            throw new IllegalArgumentException("--c-peer: " + mode + " speaks jrdma's own protocol (its descriptor and SENDs);"
                    + " with C peers use verify or write-imm");
        }
    }

    /** A client configured from the options. */
    RdmaClient rdmaClient() {
        String local = localAddress();
        RdmaClient c = RdmaClient.create().host(server).port(port).transport(transport)
                .queueDepth(BUFFERS, BUFFERS).buffers(size, BUFFERS).connectTimeout(timeout()).operationTimeout(timeout());
        if (local != null) c = c.localAddress(local);
        if (cPeer) c = c.rawPrivateData(new byte[0]);
        return device == null ? c : c.device(device, ibPort);
    }

    /**
     * jrdma picks the device and GID by IP address (RoCE v2: a GID is an IP address), so a device
     * and GID index become the address they stand for.
     */
    String localAddress() {
        if (bind != null) return bind;
        if (device == null) {
            if (gidIndex != null) throw new IllegalArgumentException("--gid-index needs --device");
            return null;
        }
        try (Context ctx = RdmaDevices.open(device)) {
            for (Gid g : ctx.gids(ibPort)) {
                boolean wanted = gidIndex == null ? g.type() == GidType.ROCE_V2 : g.index() == gidIndex;
                if (!wanted) continue;
                InetAddress ip = g.toInetAddress();
                if (ip instanceof Inet4Address) return ip.getHostAddress();
                if (gidIndex != null) {
                    throw new IllegalArgumentException("GID[" + gidIndex + "] of " + device + " (" + Gid.format(g.raw())
                            + ") is no IPv4 address; jrdma connects by IP: pick an index with one (rdma devices)");
                }
            }
        }
        throw new IllegalArgumentException(gidIndex == null
                ? device + " port " + ibPort + " has no RoCE v2 GID with an IPv4 address (rdma devices)"
                : device + " port " + ibPort + " has no GID[" + gidIndex + "] (rdma devices)");
    }
}
