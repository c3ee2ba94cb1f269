package io.jrdma.ffm.device;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * The SoftRoCE lab's topology as the lab exports it (lab/softroce sets these variables), with
 * the lab's defaults: rxe0 on 10.77.0.1 and rxe1 on 10.77.0.2, both RoCE v2 GIDs at index 1.
 * Nothing here checks that the devices exist: a test that opens them fails when they do not.
 */
final class LabEnv {
    private LabEnv() {}

    /** The one port of an rxe device. */
    static final int PORT = 1;

    static final String DEV_A = env("RXE_DEV_A", "rxe0");
    static final String DEV_B = env("RXE_DEV_B", "rxe1");
    static final InetAddress IP_A = address(env("RXE_IP_A", "10.77.0.1"));
    static final InetAddress IP_B = address(env("RXE_IP_B", "10.77.0.2"));
    static final int GID_INDEX_A = Integer.parseInt(env("RXE_GID_INDEX_A", "1"));
    static final int GID_INDEX_B = Integer.parseInt(env("RXE_GID_INDEX_B", "1"));

    private static String env(String name, String fallback) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? fallback : v.trim();
    }

    private static InetAddress address(String literal) {
        try {
            return InetAddress.getByName(literal);  // a literal: no name lookup happens
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("not an IP address: " + literal, e);
        }
    }

    static String describe() {
        return DEV_A + "@" + IP_A.getHostAddress() + "/gid" + GID_INDEX_A + " <-> " + DEV_B + "@" + IP_B.getHostAddress()
                + "/gid" + GID_INDEX_B;
    }
}
