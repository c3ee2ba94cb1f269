package io.jrdma.bench.lab;

import java.util.Arrays;

/**
 * {@code lab/bench}'s JVM entry point, run inside the lab: {@code LabBench server [--control PORT]}
 * serves the rows on rxe1; {@code LabBench client --matrix FILE ...} runs them from rxe0 and
 * writes the CSV and the table (see {@link BenchClient.Options}). Started by {@code lab/bench},
 * which runs perftest first in the same session and documents the options.
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
            System.err.println("usage: LabBench server [--control PORT] | LabBench client --matrix FILE [options]");
            System.exit(2);
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        switch (args[0]) {
            case "server" -> {
                int port = rest.length == 2 && rest[0].equals("--control") ? Integer.parseInt(rest[1]) : 18600;
                BenchServer.serve(port);
                System.exit(0);
            }
            case "client" -> System.exit(BenchClient.run(rest));
            default -> {
                System.err.println("unknown role " + args[0]);
                System.exit(2);
            }
        }
    }
}
