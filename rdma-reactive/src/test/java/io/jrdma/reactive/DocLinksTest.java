package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The README and the pages under docs/ link to each other and to the tree: every relative link reaches a file, and its #anchor a heading there. */
class DocLinksTest {
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6} (.*)$");

    @Test
    void everyRelativeLinkOfTheReadmeAndTheDocsReachesAFileAndItsAnchor() throws IOException {
        Path root = Path.of("..").toAbsolutePath().normalize();
        List<String> broken = new ArrayList<>();
        int links = 0;
        for (Path page : ReadmeSnippetTest.pages()) {
            List<String> lines = Files.readAllLines(page);
            for (int i = 0; i < lines.size(); i++) {
                if (lines.get(i).startsWith("```")) {
                    i = ReadmeSnippetTest.indexOfFence(lines, i + 1, page);
                    continue;
                }
                Matcher m = LINK.matcher(lines.get(i).replaceAll("`[^`]*`", ""));
                while (m.find()) {
                    String link = m.group(1);
                    if (link.matches("[a-z]+:.*")) continue;  // https:, mailto: are not the tree's
                    links++;
                    String where = root.relativize(page.toAbsolutePath().normalize()) + ":" + (i + 1) + ": " + link;
                    int hash = link.indexOf('#');
                    String file = hash < 0 ? link : link.substring(0, hash);
                    Path target = file.isEmpty() ? page : page.getParent().resolve(file);
                    if (!target.toAbsolutePath().normalize().startsWith(root) || !Files.exists(target)) {
                        broken.add(where + " (no such file)");
                    } else if (hash >= 0 && target.toString().endsWith(".md") && !anchors(target).contains(link.substring(hash + 1))) {
                        broken.add(where + " (no such heading)");
                    }
                }
            }
        }
        assertEquals(List.of(), broken);
        assertTrue(links >= 20, "found only " + links + " relative links: is the page list right?");
    }

    @Test
    void anchorsAreGitHubs() {
        assertEquals("rpc-remote-functions-over-rdma-lambda-mode", slug("RPC: remote functions over RDMA (lambda mode)"));
        assertEquals("benchmark-labbench", slug("Benchmark: `lab/bench`"));
        assertEquals("jrdma--rdma-for-the-jvm", slug("jrdma — RDMA for the JVM"));
    }

    /** The anchors GitHub gives a page's headings (outside code blocks): a repeated one gets -1, -2, ... */
    private static Set<String> anchors(Path page) throws IOException {
        Set<String> anchors = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        List<String> lines = Files.readAllLines(page);
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("```")) {
                i = ReadmeSnippetTest.indexOfFence(lines, i + 1, page);
                continue;
            }
            Matcher h = HEADING.matcher(lines.get(i));
            if (!h.matches()) continue;
            String slug = slug(h.group(1));
            int n = seen.merge(slug, 1, Integer::sum) - 1;
            anchors.add(n == 0 ? slug : slug + "-" + n);
        }
        return anchors;
    }

    private static String slug(String heading) {
        return heading.strip().toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N}_\\- ]", "").replace(' ', '-');
    }
}
