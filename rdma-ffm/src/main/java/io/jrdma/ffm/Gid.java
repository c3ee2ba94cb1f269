package io.jrdma.ffm;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.HexFormat;
import org.jspecify.annotations.Nullable;

/**
 * A GID table entry. For RoCE the GID is the interface's IP address (IPv4 as
 * {@code ::ffff:a.b.c.d}); RoCE v2 entries are the ones that route over UDP/IP.
 *
 * @param index         the entry's index in the port's GID table: a QP's {@code sgid_index} to send from it
 * @param raw           the 16 GID bytes, network order; copied
 * @param type          InfiniBand, RoCE v1 or RoCE v2
 * @param netdevIfindex interface index of the network device the entry belongs to (RoCE); 0 when none
 */
public record Gid(int index, byte[] raw, GidType type, int netdevIfindex) {
    /** Checks and copies {@code raw}, which must have 16 bytes. */
    public Gid {
        if (raw.length != 16) throw new IllegalArgumentException("a GID has 16 bytes");
        raw = raw.clone();
    }

    /** {@return a copy of the 16 GID bytes} */
    @Override
    public byte[] raw() {
        return raw.clone();
    }

    /**
     * The 16 GID bytes of an IP address as RoCE puts it in the GID table.
     *
     * @param address an IPv4 or IPv6 address
     * @return IPv6 addresses as they are, IPv4 ones mapped to {@code ::ffff:a.b.c.d}
     */
    public static byte[] ofAddress(InetAddress address) {
        byte[] ip = address.getAddress();
        if (address instanceof Inet4Address) {
            byte[] g = new byte[16];
            g[10] = (byte) 0xff;
            g[11] = (byte) 0xff;
            System.arraycopy(ip, 0, g, 12, 4);
            return g;
        }
        return ip;
    }

    /**
     * Whether this GID is {@code address} as RoCE maps it ({@link #ofAddress}).
     *
     * @param address an IPv4 or IPv6 address
     * @return true when the bytes are equal
     */
    public boolean matches(InetAddress address) {
        return Arrays.equals(raw, ofAddress(address));
    }

    /** {@return the IP address of a RoCE GID: an {@code Inet4Address} for an IPv4-mapped one} */
    public InetAddress toInetAddress() {
        try {
            return InetAddress.getByAddress(raw);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Colon-separated like sysfs shows it: {@code 0000:0000:0000:0000:0000:ffff:0a4d:0001}.
     *
     * @param raw 16 GID bytes
     * @return eight groups of four hex digits
     */
    public static String format(byte[] raw) {
        String h = HexFormat.of().formatHex(raw);
        StringBuilder b = new StringBuilder(39);
        for (int i = 0; i < 32; i += 4) {
            if (i > 0) b.append(':');
            b.append(h, i, i + 4);
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return "GID[" + index + "] " + format(raw) + " " + type;
    }

    @Override
    public boolean equals(@Nullable Object o) {
        return o instanceof Gid g && g.index == index && Arrays.equals(g.raw, raw) && g.type == type
                && g.netdevIfindex == netdevIfindex;
    }

    @Override
    public int hashCode() {
        return 31 * index + Arrays.hashCode(raw);
    }
}
