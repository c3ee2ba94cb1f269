package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The code of the README and of docs/ is the code of tests. The reactive examples are lines of
 * ReadmeExampleTest, which runs them against rxe, the test kit's is its own device test; every other
 * java or kotlin block is, indentation aside, the lines between a {@code // README: name} and a
 * {@code // README end} marker in some module's test sources (the DocSnippets classes compile the
 * ones no device test runs). A block moved between the README and a page under docs/ stays tested:
 * the pages are read by the same rules.
 */
class ReadmeSnippetTest {
    private static final Path EXAMPLES = Path.of("src/test/java/io/jrdma/reactive/device/ReadmeExampleTest.java");
    private static final Path ROOT = Path.of("..");
    /** The first lines of blocks that are build scripts, not code a test could compile: Gradle's dependencies. */
    private static final List<String> BUILD_SCRIPTS = List.of("dependencies {");

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

    @Test
    void everyJavaAndKotlinBlockOfTheReadmeAndTheDocsIsLinesOfATest() throws IOException {
        List<List<String>> tested = new ArrayList<>(markedSnippets());
        tested.add(dedent(linesBetween("    void theReadmeExampleWritesToTheServerAndReadsItBack() {", "    }", 8)));
        List<String> untested = new ArrayList<>();
        int blocks = 0;
        for (Path page : pages()) {
            List<String> lines = Files.readAllLines(page);
            for (int i = 0; i < lines.size(); i++) {
                if (!lines.get(i).startsWith("```")) continue;
                String language = lines.get(i).substring(3).strip();
                int close = indexOfFence(lines, i + 1, page);
                List<String> block = lines.subList(i + 1, close);
                if ((language.equals("java") || language.equals("kotlin")) && !BUILD_SCRIPTS.contains(block.getFirst())) {
                    blocks++;
                    if (!tested.contains(dedent(block))) untested.add(ROOT.relativize(page) + ":" + (i + 1));
                }
                i = close;
            }
        }
        assertEquals(List.of(), untested, "java/kotlin blocks that no test's README markers hold, line for line");
        assertTrue(blocks >= 12, "found only " + blocks + " java/kotlin blocks: is the page list right?");
    }

    @Test
    void theReadmesTwoCommandsExistAndCiRunsItsTestCommand() throws IOException {
        List<String> readme = Files.readAllLines(ROOT.resolve("README.md"));
        int open = indexFrom(readme, "```sh", indexFrom(readme, "## Two commands", 0));
        List<String> commands = readme.subList(open + 1, indexOfFence(readme, open + 1, ROOT.resolve("README.md"))).stream()
                .map(line -> line.replaceFirst("#.*", "").strip()).toList();
        assertEquals(List.of("lab/demo", "lab/test"), commands);
        for (String command : commands) assertTrue(Files.isExecutable(ROOT.resolve(command)), command + " is not an executable script");
        List<String> ci = Files.readAllLines(ROOT.resolve(".ci/run"));
        assertEquals("exec " + commands.get(1), ci.getLast().strip(), ".ci/run must end by running the README's test command");
    }

    /** README.md and every page under docs/. */
    static List<Path> pages() throws IOException {
        List<Path> pages = new ArrayList<>(List.of(ROOT.resolve("README.md")));
        try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
    }

    /** The closing fence of a block opened before {@code from}. */
    static int indexOfFence(List<String> lines, int from, Path page) {
        for (int i = from; i < lines.size(); i++) if (lines.get(i).startsWith("```")) return i;
        throw new AssertionError(page + ": a code block opened before line " + from + " is never closed");
    }

    /** Every {@code // README: name} ... {@code // README end} region of every module's test sources, dedented. */
    private static List<List<String>> markedSnippets() throws IOException {
        List<List<String>> snippets = new ArrayList<>();
        List<Path> sources;
        try (Stream<Path> modules = Files.list(ROOT)) {
            sources = modules.map(m -> m.resolve("src/test")).filter(Files::isDirectory).flatMap(t -> {
                try (Stream<Path> files = Files.walk(t)) {
                    return files.filter(f -> f.toString().endsWith(".java") || f.toString().endsWith(".kt")).toList().stream();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).toList();
        }
        for (Path source : sources) {
            List<String> lines = Files.readAllLines(source);
            for (int i = 0; i < lines.size(); i++) {
                if (!lines.get(i).strip().startsWith("// README: ")) continue;
                int end = i + 1;
                while (end < lines.size() && !lines.get(end).strip().equals("// README end")) end++;
                if (end == lines.size()) throw new AssertionError(source + ":" + (i + 1) + ": a README marker without its '// README end'");
                snippets.add(dedent(lines.subList(i + 1, end)));
                i = end;
            }
        }
        return snippets;
    }

    /** The lines without the indentation they all share (blank lines aside). */
    private static List<String> dedent(List<String> lines) {
        int margin = lines.stream().filter(l -> !l.isBlank()).mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        return lines.stream().map(l -> l.isBlank() ? "" : l.substring(margin)).toList();
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
