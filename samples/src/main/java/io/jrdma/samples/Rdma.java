package io.jrdma.samples;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;
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
        // jrdma logs through Reactor's Loggers; without SLF4J, as here, they fall back to a console
        // logger unless told java.util.logging, whose format the command sets (before Reactor's first
        // logger is made). Its default is two lines per record with the class and method: one line,
        // like everything else the command prints.
        if (System.getProperty(LOG_FALLBACK) == null) System.setProperty(LOG_FALLBACK, "JDK");
        if (System.getProperty(LOG_FORMAT) == null) {
            System.setProperty(LOG_FORMAT, Errors.DEBUG ? "rdma: %4$s %3$s: %5$s%6$s%n" : "rdma: %5$s%n");
        }
        for (Handler h : Logger.getLogger("").getHandlers()) h.setFormatter(new CliTerms());
        System.exit(commandLine().execute(args));
    }

    private static final String LOG_FORMAT = "java.util.logging.SimpleFormatter.format";
    private static final String LOG_FALLBACK = "reactor.logging.fallback";

    /** The library's log lines in the command's terms: its options where the library names its API. */
    static final class CliTerms extends SimpleFormatter {
        @Override
        public String formatMessage(LogRecord record) {
            return cliTerms(super.formatMessage(record));
        }

        static String cliTerms(String line) {
            return line.replace("needs a server with acceptRaw", "needs a server started with --c-peer");
        }
    }

    static CommandLine commandLine() {
        return new CommandLine(new Rdma())
                .setCaseInsensitiveEnumValuesAllowed(true)   // --transport rdma_cm|tcp
                .setParameterExceptionHandler(Rdma::optionError)
                .setExecutionExceptionHandler((e, cmd, parsed) -> {
                    if (Errors.DEBUG) e.printStackTrace(cmd.getErr());
                    cmd.getErr().println("rdma " + cmd.getCommandName() + ": " + Errors.describe(e, optionValue(cmd, "--timeout"),
                            optionValue(cmd, "--size")));
                    return 1;
                });
    }

    /** A bad option or argument: one line saying which and why, and where the options are listed; exit status 2. */
    private static int optionError(CommandLine.ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        String name = cmd.getCommandName().equals("rdma") ? "rdma" : "rdma " + cmd.getCommandName();
        cmd.getErr().println(name + ": " + e.getMessage());
        if (cmd.getCommandName().equals("rdma") && e instanceof CommandLine.UnmatchedArgumentException) {
            cmd.getErr().println("Modes: " + String.join(", ", cmd.getSubcommands().keySet()) + ". Try 'rdma --help'.");
        } else {
            cmd.getErr().println("Try '" + name + " --help' for the options.");
        }
        return cmd.getCommandSpec().exitCodeOnInvalidInput();
    }

    /** The parsed value of a mode's integer option, or null for a command without it. */
    private static Integer optionValue(CommandLine cmd, String name) {
        CommandLine.Model.OptionSpec o = cmd.getCommandSpec().findOption(name);
        return o == null ? null : o.getValue();
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
