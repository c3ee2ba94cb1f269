package io.jrdma.bench.lab;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Arrays;

/**
 * {@code bin/bench}'s JVM entry point: {@code LabBench server [--control [ADDRESS:]PORT]} serves
 * the rows on the server's device; {@code LabBench client --matrix FILE ...} runs them from the
 * client's and writes the CSV and the table (see {@link BenchClient.Options}). Started by
 * {@code bin/bench} (on a real host, or inside the lab by {@code lab/bench}), which runs perftest
 * first and documents the options. The control socket is the loopback's unless an address is
 * given (two hosts).
 */
public final class LabBench {
    private LabBench() {}

    /**
     * Runs the server or the client.
     *
     * @param args {@code server} or {@code client}, then that role's options
     * @throws Exception when the role cannot start
     */
    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: LabBench server [--control [ADDRESS:]PORT] | LabBench client --matrix FILE [options]");
            System.exit(2);
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        switch (args[0]) {
            case "server" -> {
                BenchServer.serve(rest.length == 2 && rest[0].equals("--control") ? control(rest[1]) : control("18600"));
                System.exit(0);
            }
            case "client" -> System.exit(BenchClient.run(rest));
            default -> {
                System.err.println("unknown role " + args[0]);
                System.exit(2);
            }
        }
    }

    /** {@code PORT} (the loopback's) or {@code ADDRESS:PORT}, the bench server's control socket. */
    static InetSocketAddress control(String value) {
        int colon = value.lastIndexOf(':');
        int port = Integer.parseInt(value.substring(colon + 1));
        return colon < 0 ? new InetSocketAddress(InetAddress.getLoopbackAddress(), port) : new InetSocketAddress(value.substring(0, colon), port);
    }
}
