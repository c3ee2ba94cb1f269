package io.jrdma.samples;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code rdma <mode> [server-address]}: the classic RDMA demo modes. */
@Command(name = "rdma", mixinStandardHelpOptions = true, version = "jrdma 0.1.0",
        description = "RDMA demos on the JVM (libibverbs/librdmacm through Panama FFM).",
        subcommands = {DevicesCommand.class})
public final class Rdma {
    public static void main(String[] args) {
        System.exit(new CommandLine(new Rdma()).execute(args));
    }
}
