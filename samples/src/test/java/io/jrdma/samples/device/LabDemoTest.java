package io.jrdma.samples.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The README's first command, lab/demo, boots the lab and runs lab/demo-modes in it. Device tests
 * already run inside the lab, so this runs lab/demo-modes itself: CI drives the demo on every run.
 */
@Tag("device")
class LabDemoTest {
    @Test
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void everyDemoModeRunsBetweenTheTwoHosts() throws IOException, InterruptedException {
        // samples/target/rdma.jar -> the repository root, where bin/rdma and lab/ live
        Path root = RdmaProcess.jar().getParent().getParent().getParent();
        Path script = root.resolve("lab/demo-modes");
        assertTrue(Files.isExecutable(script), script + " is missing or not executable");
        Path log = RdmaProcess.jar().resolveSibling("lab-demo.log");
        Process demo = new ProcessBuilder(script.toString()).directory(root.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        boolean exited = demo.waitFor(840, TimeUnit.SECONDS);
        if (!exited) demo.destroy();  // TERM: the script stops its background servers
        String output = Files.readString(log, StandardCharsets.UTF_8);
        assertTrue(exited, "lab/demo-modes did not finish within 840 s:\n" + output);
        assertEquals(0, demo.exitValue(), "lab/demo-modes failed:\n" + output);
        assertTrue(output.contains("=== demo finished: every mode worked"), output);
    }
}
