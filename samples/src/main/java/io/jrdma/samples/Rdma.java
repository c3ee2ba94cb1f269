package io.jrdma.samples;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code rdma <mode> [SERVER]}: the classic RDMA demo modes. Without SERVER a mode runs its
 * server side, with it the client side; servers serve one client and exit unless --keep-serving.
 */
@Command(name = "rdma", mixinStandardHelpOptions = true, version = "jrdma 0.1.0",
        description = "RDMA demos on the JVM (libibverbs/librdmacm through Panama FFM).",
        subcommands = {DevicesCommand.class, SendMode.class, WriteMode.class, WriteImmMode.class, ReadMode.class,
                VerifyMode.class, EchoMode.class, LambdaMode.class})
public final class Rdma {
    public static void main(String[] args) {
        System.exit(commandLine().execute(args));
    }

    static CommandLine commandLine() {
        return new CommandLine(new Rdma())
                .setCaseInsensitiveEnumValuesAllowed(true)   // --transport rdma_cm|tcp
                .setExecutionExceptionHandler((e, cmd, parsed) -> {
                    cmd.getErr().println("rdma " + cmd.getCommandName() + ": " + Errors.describe(e));
                    return 1;
                });
    }
}
