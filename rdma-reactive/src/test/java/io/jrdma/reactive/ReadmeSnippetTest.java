package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The reactive examples of the README and docs/ are lines of ReadmeExampleTest, which runs them against rxe: the two cannot drift. */
class ReadmeSnippetTest {
    private static final Path EXAMPLES = Path.of("src/test/java/io/jrdma/reactive/device/ReadmeExampleTest.java");

    @Test
    void theReadmesReactiveExampleIsTheDeviceTestsBodyLineForLine() throws IOException {
        List<String> snippet = firstJavaBlockAfter("README.md", "## rdma-reactive in 15 lines");
        assertEquals(linesBetween("    void theReadmeExampleWritesToTheServerAndReadsItBack() {", "    }", 8), snippet);
        assertTrue(snippet.size() <= 15, "the README promises at most 15 lines, has " + snippet.size());
    }

    @Test
    void theReadmesCPeerExampleIsTheDeviceTestsMarkedLines() throws IOException {
        assertEquals(linesBetween("            // README: C peer", "            // README end", 12),
                firstJavaBlockAfter("docs/c-interop.md", "## From jrdma: raw connections, C clients, the CLI"));
    }

    @Test
    void theReadmesHandleExampleIsTheDeviceTestsMarkedLines() throws IOException {
        assertEquals(linesBetween("        // README: handle", "        // README end", 8),
                firstJavaBlockAfter("docs/reactive.md", "## Serving connections, and the lifecycle"));
    }

    @Test
    void theReadmesStreamExampleIsTheDeviceTestsMarkedLines() throws IOException {
        assertEquals(linesBetween("        // README: stream", "        // README end", 8),
                firstJavaBlockAfter("docs/reactive.md", "## Streams across the wire"));
    }

    @Test
    void theReadmesTestKitExampleIsTheKitsOwnDeviceTest() throws IOException {
        Path kitTest = Path.of("..", "rdma-test", "src", "test", "java", "io", "jrdma", "test", "device", "TestKitTest.java");
        assertEquals(linesBetween(kitTest, "    // README: test kit", "    // README end", 0),
                firstJavaBlockAfter("docs/test-kit.md", "# Testing your RDMA code: the test kit"));
    }

    /** The first java block after a heading of README.md or a page under docs/, both relative to the repository root. */
    private static List<String> firstJavaBlockAfter(String page, String heading) throws IOException {
        List<String> readme = Files.readAllLines(Path.of("..").resolve(page));
        int open = indexFrom(readme, "```java", indexFrom(readme, heading, 0));
        return readme.subList(open + 1, indexFrom(readme, "```", open + 1));
    }

    /** The lines of ReadmeExampleTest strictly between two marker lines, {@code indent} spaces taken off. */
    private static List<String> linesBetween(String begin, String end, int indent) throws IOException {
        return linesBetween(EXAMPLES, begin, end, indent);
    }

    private static List<String> linesBetween(Path file, String begin, String end, int indent) throws IOException {
        List<String> test = Files.readAllLines(file);
        int from = indexFrom(test, begin, 0);
        String margin = " ".repeat(indent);
        return test.subList(from + 1, indexFrom(test, end, from + 1)).stream()
                .map(line -> line.startsWith(margin) ? line.substring(indent) : line).toList();
    }

    private static int indexFrom(List<String> lines, String line, int from) {
        for (int i = Math.max(from, 0); i < lines.size(); i++) if (lines.get(i).equals(line)) return i;
        throw new AssertionError("no line '" + line + "' after line " + from);
    }
}
