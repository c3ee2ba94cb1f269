package io.jrdma.samples;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code rdma <mode> [SERVER]}: the classic RDMA demo modes. Without SERVER a mode runs its
 * server side, with it the client side; servers serve one client and exit unless --keep-serving.
 */
@Command(name = "rdma", mixinStandardHelpOptions = true, versionProvider = Rdma.Version.class,
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

    /** {@code rdma --version}: the version Maven wrote into rdma-version.properties, and the JVM it runs on. */
    static final class Version implements CommandLine.IVersionProvider {
        static String jrdmaVersion() throws IOException {
            Properties build = new Properties();
            try (InputStream in = Rdma.class.getResourceAsStream("rdma-version.properties")) {
                if (in != null) build.load(in);
            }
            return build.getProperty("version", "unknown");
        }

        @Override
        public String[] getVersion() throws IOException {
            return new String[] {
                "rdma (jrdma) " + jrdmaVersion(),
                "Java " + Runtime.version() + " (" + System.getProperty("java.vm.vendor") + "), "
                        + System.getProperty("os.name") + " " + System.getProperty("os.arch")
            };
        }
    }
}
