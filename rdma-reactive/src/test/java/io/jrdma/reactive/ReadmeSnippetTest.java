package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The README's reactive examples are lines of ReadmeExampleTest, which runs them against rxe: the two cannot drift. */
class ReadmeSnippetTest {
    @Test
    void theReadmesReactiveExampleIsTheDeviceTestsBodyLineForLine() throws IOException {
        List<String> readme = Files.readAllLines(Path.of("..", "README.md"));
        int heading = readme.indexOf("## rdma-reactive in 15 lines");
        int open = indexFrom(readme, "```java", heading);
        List<String> snippet = readme.subList(open + 1, indexFrom(readme, "```", open + 1));

        List<String> test = Files.readAllLines(Path.of("src/test/java/io/jrdma/reactive/device/ReadmeExampleTest.java"));
        int method = indexFrom(test, "    void theReadmeExampleWritesToTheServerAndReadsItBack() {", 0);
        List<String> body = test.subList(method + 1, indexFrom(test, "    }", method + 1)).stream()
                .map(line -> line.startsWith("        ") ? line.substring(8) : line).toList();

        assertEquals(body, snippet);
        assertTrue(snippet.size() <= 15, "the README promises at most 15 lines, has " + snippet.size());
    }

    @Test
    void theReadmesCPeerExampleIsTheDeviceTestsMarkedLines() throws IOException {
        List<String> readme = Files.readAllLines(Path.of("..", "README.md"));
        int heading = readme.indexOf("## Talking to C peers");
        int open = indexFrom(readme, "```java", heading);
        List<String> snippet = readme.subList(open + 1, indexFrom(readme, "```", open + 1));

        List<String> test = Files.readAllLines(Path.of("src/test/java/io/jrdma/reactive/device/ReadmeExampleTest.java"));
        int begin = indexFrom(test, "            // README: C peer", 0);
        List<String> marked = test.subList(begin + 1, indexFrom(test, "            // README end", begin + 1)).stream()
                .map(line -> line.startsWith("            ") ? line.substring(12) : line).toList();

        assertEquals(marked, snippet);
    }

    private static int indexFrom(List<String> lines, String line, int from) {
        for (int i = Math.max(from, 0); i < lines.size(); i++) if (lines.get(i).equals(line)) return i;
        throw new AssertionError("no line '" + line + "' after line " + from);
    }
}
