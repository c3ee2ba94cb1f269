package io.jrdma.samples.device;

import static io.jrdma.samples.device.RdmaProcess.CLIENT_IP;
import static io.jrdma.samples.device.RdmaProcess.SERVER_IP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Registration beyond {@code ulimit -l}, as an ordinary user meets it: the lab runs as root, which
 * has CAP_IPC_LOCK and no limit, so these run the JVM as {@code nobody} (setpriv) with
 * {@code ulimit -l 64}. The CLI client and the reactive API both say that the locked-memory limit
 * is the cause, what it is, and how to raise it; nothing crashes and no stack trace is printed.
 */
@Tag("device")
@Timeout(180)
class MemlockTest {
    private static final String DEVICE = System.getenv().getOrDefault("RXE_DEV_A", "rxe0");

    /** {@code java args...} as nobody with a 64 KiB locked-memory limit; stdout and stderr, and the exit status. */
    private record Run(int status, String out) {
        static Run asNobody(String... javaArgs) throws IOException, InterruptedException {
            List<String> java = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
            java.addAll(List.of(javaArgs));
            List<String> command = new ArrayList<>(List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--",
                    "bash", "-c", "ulimit -l 64 && exec \"$@\"", "memlock"));
            command.addAll(java);
            Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(120, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new AssertionError("did not end within 120 s:\n" + out);
            }
            return new Run(p.exitValue(), out);
        }
    }

    @Test
    void theCliClientSaysTheLockedMemoryLimitIsTooLowAndHowToRaiseIt() throws Exception {
        // --size 65536: the client registers 16 buffers of it, 1 MiB (with the default 4096, 64 KiB: just within the limit)
        Run run = Run.asNobody("-jar", RdmaProcess.jar().toString(), "verify", SERVER_IP, "--bind", CLIENT_IP, "-p", "7495", "--size", "65536");
        System.out.println(run.out);
        assertNotEquals(0, run.status, run.out);
        assertTrue(run.out.contains("locked-memory limit (65536 bytes)"), run.out);
        assertTrue(run.out.contains("ulimit -l"), "the remedy: " + run.out);
        assertFalse(run.out.contains("\tat "), "one line, no stack trace: " + run.out);
    }

    @Test
    void theReactiveApiFailsWithMemoryLockLimitExceptionSayingTheLimitAndTheRemedy() throws Exception {
        String classPath = RdmaProcess.jar() + File.pathSeparator + testClasses();
        Run run = Run.asNobody("--enable-native-access=ALL-UNNAMED", "-cp", classPath, MemlockProbe.class.getName(), SERVER_IP, CLIENT_IP,
                DEVICE);
        System.out.println(run.out);
        assertEquals(0, run.status, run.out);
        for (String attempt : List.of("connect", "createPool")) {
            String line = run.out.lines().filter(l -> l.startsWith(attempt + ": ")).findFirst().orElseThrow(() -> new AssertionError(run.out));
            assertTrue(line.contains("io.jrdma.ffm.MemoryLockLimitException: ibv_reg_mr: Cannot allocate memory"), line);
            assertTrue(line.contains("exceeds the locked-memory limit (65536 bytes)") && line.contains("ulimit -l unlimited"), line);
        }
        assertTrue(run.out.contains("connect: FAILED | io.jrdma.reactive.ConnectionException: connecting to"),
                "a failed connect is a ConnectionException caused by it: " + run.out);
    }

    private static String testClasses() throws URISyntaxException {
        return Path.of(MemlockTest.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }
}
