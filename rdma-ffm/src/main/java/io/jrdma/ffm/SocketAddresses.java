package io.jrdma.ffm;

import static io.jrdma.ffm.abi.Libc.*;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.jspecify.annotations.Nullable;

/** {@code struct sockaddr_in/_in6} to and from {@link InetSocketAddress}, for rdma_cm. */
final class SocketAddresses {
    private SocketAddresses() {}

    /**
     * {@code 10.77.0.2:7471}, {@code [fe80::1]:7471}: an address as people write it, without the
     * {@code hostname/} prefix (or the bare {@code /}) of {@link InetSocketAddress#toString()}.
     */
    static String format(InetSocketAddress address) {
        String host = address.isUnresolved() || address.getAddress() == null ? address.getHostString()
                : address.getAddress().getHostAddress();
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + address.getPort();
    }

    static MemorySegment write(Arena arena, InetSocketAddress address) {
        if (address.isUnresolved()) throw new IllegalArgumentException("unresolved address " + address);
        InetAddress ip = address.getAddress();
        if (ip instanceof Inet4Address) {
            MemorySegment s = arena.allocate(sockaddr_in);
            sockaddr_in_sin_family.set(s, (short) AF_INET);
            sockaddr_in_sin_port.set(s, (short) address.getPort());
            sockaddr_in_sin_addr_s_addr.set(s, ip.getAddress()[0] << 24 | (ip.getAddress()[1] & 0xff) << 16
                    | (ip.getAddress()[2] & 0xff) << 8 | (ip.getAddress()[3] & 0xff));
            return s;
        }
        MemorySegment s = arena.allocate(sockaddr_in6);
        sockaddr_in6_sin6_family.set(s, (short) AF_INET6);
        sockaddr_in6_sin6_port.set(s, (short) address.getPort());
        MemorySegment.copy(MemorySegment.ofArray(ip.getAddress()), 0, s, sockaddr_in6_sin6_addr, 16);
        sockaddr_in6_sin6_scope_id.set(s, ((Inet6Address) ip).getScopeId());
        return s;
    }

    /** Reads a sockaddr of family AF_INET or AF_INET6; null for an unset (AF_UNSPEC) one. */
    static @Nullable InetSocketAddress read(MemorySegment storage) {
        int family = Short.toUnsignedInt(storage.get(ValueLayout.JAVA_SHORT, 0));
        try {
            if (family == AF_INET) {
                MemorySegment s = storage.asSlice(0, sockaddr_in.byteSize());
                int a = (int) sockaddr_in_sin_addr_s_addr.get(s);
                byte[] b = {(byte) (a >>> 24), (byte) (a >>> 16), (byte) (a >>> 8), (byte) a};
                return new InetSocketAddress(InetAddress.getByAddress(b), Short.toUnsignedInt((short) sockaddr_in_sin_port.get(s)));
            }
            if (family == AF_INET6) {
                MemorySegment s = storage.asSlice(0, sockaddr_in6.byteSize());
                byte[] b = s.asSlice(sockaddr_in6_sin6_addr, 16).toArray(ValueLayout.JAVA_BYTE);
                return new InetSocketAddress(InetAddress.getByAddress(b), Short.toUnsignedInt((short) sockaddr_in6_sin6_port.get(s)));
            }
            return null;
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
