package io.jrdma.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;

/** rdma --version prints the version the build stamped, not one written into the source. */
class VersionTest {
    @Test
    void versionIsTheBuildsProjectVersion() throws Exception {
        StringWriter out = new StringWriter();
        int status = Rdma.commandLine().setOut(new PrintWriter(out)).execute("--version");
        assertEquals(0, status);
        String first = out.toString().lines().findFirst().orElseThrow();
        String built = System.getProperty("jrdma.version");   // set by surefire from ${project.version}
        if (built != null) {
            assertEquals("rdma (jrdma) " + built, first);
        } else {
            assertTrue(first.matches("rdma \\(jrdma\\) \\d+\\.\\d+\\.\\d+.*"), first);
        }
    }
}
