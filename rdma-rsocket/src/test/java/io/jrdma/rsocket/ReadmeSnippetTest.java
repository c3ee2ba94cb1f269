package io.jrdma.rsocket;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The README's RSocket example is the marked lines of the device test that runs it against rxe: the two cannot drift. */
class ReadmeSnippetTest {
    private static final Path EXAMPLE = Path.of("src/test/java/io/jrdma/rsocket/device/ReadmeExampleTest.java");

    @Test
    void theReadmesRSocketExampleIsTheDeviceTestsMarkedLines() throws IOException {
        List<String> test = Files.readAllLines(EXAMPLE);
        int from = indexFrom(test, "        // README: rsocket", 0);
        List<String> marked = test.subList(from + 1, indexFrom(test, "        // README end", from + 1)).stream()
                .map(line -> line.startsWith("        ") ? line.substring(8) : line).toList();
        List<String> readme = Files.readAllLines(Path.of("..", "README.md"));
        int open = indexFrom(readme, "```java", indexFrom(readme, "## RSocket over RDMA", 0));
        assertEquals(marked, readme.subList(open + 1, indexFrom(readme, "```", open + 1)));
    }

    private static int indexFrom(List<String> lines, String line, int from) {
        for (int i = Math.max(from, 0); i < lines.size(); i++) if (lines.get(i).equals(line)) return i;
        throw new AssertionError("no line '" + line + "' after line " + from);
    }
}
