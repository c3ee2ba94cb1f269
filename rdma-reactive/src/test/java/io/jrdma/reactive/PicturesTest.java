package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NamedNodeMap;
import org.w3c.dom.NodeList;

/**
 * The pictures under docs/pictures are kept true. Their text follows one convention: a name of the
 * code is set in class {@code code}, a name of the C API in class {@code c}. Every name in class
 * {@code code} is declared in the main sources of the build's modules ({@code Type}, {@code Type.member()},
 * {@code Type.Nested}, {@code Type.CONSTANT}, {@code Type.field}, {@code member()}, {@code variable.member()};
 * arguments are ignored), every name in class {@code c} appears in rdma-ffm's sources, so renaming a class
 * or a method fails this test until the picture follows. Each picture is self-contained SVG that GitHub
 * renders as an image (no script, no external reference or font), and a page embeds it with alt text.
 */
class PicturesTest {
    private static final Path ROOT = Path.of("..");
    private static final Path PICTURES = ROOT.resolve("docs").resolve("pictures");
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final Pattern TYPE_DECLARATION = Pattern.compile("\\b(?:class|interface|record|enum|object)\\s+([A-Za-z_$][\\w$]*)");
    /** A chain of names: {@code a.B.c()}, arguments already taken out. */
    private static final Pattern CHAIN = Pattern.compile("[A-Za-z_$][\\w$]*(?:\\(\\))?(?:\\.[A-Za-z_$][\\w$]*(?:\\(\\))?)*");
    private static final Pattern ARGUMENTS = Pattern.compile("\\([^()]*\\)");
    private static final Pattern C_NAME = Pattern.compile("[A-Za-z_][\\w.]*\\w");
    /** Words that may stand before a name followed by "(" without declaring it. */
    private static final Set<String> NOT_A_TYPE = Set.of("return", "new", "throw", "else", "case", "yield", "assert", "await", "in", "is");
    private static final int MAX_WIDTH = 1100;

    /** Each declared simple type name, with the text of every main source file that declares one so named. */
    private static final Map<String, List<String>> TYPES = new HashMap<>();
    private static final List<String> SOURCES = new ArrayList<>();
    private static final StringBuilder FFM = new StringBuilder();

    static {
        try {
            Matcher modules = MODULE.matcher(Files.readString(ROOT.resolve("pom.xml")));
            while (modules.find()) {
                Path main = ROOT.resolve(modules.group(1)).resolve("src").resolve("main");
                if (!Files.isDirectory(main)) continue;
                try (Stream<Path> files = Files.walk(main)) {
                    for (Path f : files.filter(p -> p.toString().endsWith(".java") || p.toString().endsWith(".kt")).sorted().toList()) {
                        String text = Files.readString(f);
                        SOURCES.add(text);
                        if (modules.group(1).equals("rdma-ffm")) FFM.append(text).append('\n');
                        Matcher t = TYPE_DECLARATION.matcher(text);
                        while (t.find()) TYPES.computeIfAbsent(t.group(1), k -> new ArrayList<>()).add(text);
                    }
                }
            }
        } catch (IOException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @Test
    void everyNameOfTheCodeInThePicturesIsDeclaredInTheSources() throws Exception {
        assertTrue(TYPES.containsKey("RdmaConnection") && TYPES.containsKey("QueuePair") && TYPES.containsKey("RpcClient"),
                "the sources were not found: is the working directory a module's?");
        List<String> wrong = new ArrayList<>();
        for (Path picture : pictures()) {
            List<String> names = texts(picture, "code");
            assertTrue(names.size() >= 10, picture + " names only " + names.size() + " things of the code in class \"code\"");
            for (String text : names) {
                for (String problem : problems(text)) wrong.add(picture.getFileName() + ": " + problem);
            }
        }
        assertEquals(List.of(), wrong, "names in the pictures that the sources no longer declare: rename them there too");
    }

    @Test
    void everyNameOfTheCApiInThePicturesAppearsInRdmaFfm() throws Exception {
        List<String> wrong = new ArrayList<>();
        for (Path picture : pictures()) {
            for (String text : texts(picture, "c")) {
                Matcher m = C_NAME.matcher(text);
                while (m.find()) {
                    if (FFM.indexOf(m.group()) < 0) wrong.add(picture.getFileName() + ": " + m.group() + " is nowhere in rdma-ffm");
                }
            }
        }
        assertEquals(List.of(), wrong);
    }

    /** Misspelt or renamed names are caught, in every position of a chain; the right ones pass. */
    @Test
    void aNameTheSourcesDoNotDeclareIsCaught() {
        for (String wrong : List.of("SendQeue", "SendQueue.drian()", "Loop.Member.onCompletoin()", "Loop.Membre.onCompletion()",
                "CmEventType.ESTABLISHD", "VerbsCalls.ops_post_sned", "postSnd()", "conn.wirte(bytes, remote, 0)", "ESTABLISHD", "conn")) {
            assertFalse(problems(wrong).isEmpty(), wrong + " passed");
        }
        for (String right : List.of("SendQueue", "SendQueue.drain()", "Loop.Member.onCompletion()", "CmEventType.ESTABLISHED",
                "VerbsCalls.ops_post_send", "postSend()", "conn.write(bytes, remote, 0)", "ESTABLISHED → CmConnect.established()",
                "Transport.TCP", "ConnectionException.Closed", "awaitWrite()", "ServerSession.Call.finished()")) {
            assertEquals(List.of(), problems(right), right);
        }
    }

    @Test
    void everyPictureIsSelfContainedSvgThatGitHubRendersAsAnImage() throws Exception {
        List<Path> pictures = pictures();
        assertTrue(pictures.size() >= 4, "pictures: " + pictures);
        for (Path picture : pictures) {
            Element svg = parse(picture).getDocumentElement();
            assertEquals("svg", svg.getTagName(), picture.toString());
            assertEquals("http://www.w3.org/2000/svg", svg.getAttribute("xmlns"), picture + ": the SVG namespace");
            assertFalse(svg.getAttribute("viewBox").isEmpty(), picture + ": a viewBox, so it scales");
            int width = Integer.parseInt(svg.getAttribute("width"));
            assertTrue(width > 0 && width <= MAX_WIDTH, picture + ": width " + width);
            assertEquals(1, svg.getElementsByTagName("title").getLength(), picture + ": a title, what a screen reader says");
            for (String tag : List.of("script", "foreignObject", "image", "use", "a")) {
                assertEquals(0, svg.getElementsByTagName(tag).getLength(), picture + ": <" + tag + ">");
            }
            NodeList all = svg.getElementsByTagName("*");
            for (int i = 0; i < all.getLength(); i++) {
                NamedNodeMap attributes = all.item(i).getAttributes();
                for (int a = 0; a < attributes.getLength(); a++) {
                    String name = attributes.item(a).getNodeName();
                    String value = attributes.item(a).getNodeValue();
                    if (name.equals("xmlns")) continue;
                    assertFalse(name.startsWith("on") || name.contains("href") || value.contains("//"),
                            picture + ": " + name + "=\"" + value + "\" (scripts and external references are not rendered)");
                }
            }
            String text = Files.readString(picture);
            for (String external : List.of("@import", "@font-face", "url(http")) {
                assertFalse(text.contains(external), picture + ": " + external + " (an image loads nothing)");
            }
        }
    }

    @Test
    void everyPictureIsEmbeddedInAPageWithAltText() throws Exception {
        List<String> pages = new ArrayList<>();
        for (Path page : ReadmeSnippetTest.pages()) pages.add(Files.readString(page));
        for (Path picture : pictures()) {
            Pattern embedded = Pattern.compile("!\\[([^\\]]*)\\]\\([^)]*pictures/" + Pattern.quote(picture.getFileName().toString()) + "\\)");
            boolean found = false;
            for (String page : pages) {
                Matcher m = embedded.matcher(page);
                while (m.find()) {
                    assertFalse(m.group(1).isBlank(), picture + " is embedded without alt text");
                    found = true;
                }
            }
            assertTrue(found, picture + " is embedded in no page");
        }
    }

    /** What is wrong with the names in {@code text} (empty: nothing). */
    static List<String> problems(String text) {
        String names = text;
        for (String previous = null; !names.equals(previous); ) {
            previous = names;
            names = ARGUMENTS.matcher(names).replaceAll("()");
        }
        List<String> problems = new ArrayList<>();
        Matcher chain = CHAIN.matcher(names);
        while (chain.find()) {
            String problem = problem(chain.group());
            if (problem != null) problems.add(problem);
        }
        return problems;
    }

    /** What is wrong with one chain ({@code Type.member()}, {@code variable.method()}, ...), or null. */
    private static String problem(String chain) {
        String[] segments = chain.split("\\.");
        List<String> owner = null;  // the files declaring the type the previous segment named; null: no type known
        for (int i = 0; i < segments.length; i++) {
            boolean call = segments[i].endsWith("()");
            String name = call ? segments[i].substring(0, segments[i].length() - 2) : segments[i];
            String where = String.join(".", Arrays.copyOf(segments, i + 1));
            if (call) {
                if (!declares(owner == null ? SOURCES : owner, methodDeclaration(name))) {
                    return where + ": no method " + name + "(" + (owner == null ? "" : " in " + segments[i - 1]);
                }
                owner = null;  // its return type is not known
            } else if (isType(name)) {
                if (owner != null ? !declares(owner, nestedType(name)) : !TYPES.containsKey(name)) {
                    return where + ": no type " + name + (owner == null ? "" : " in " + segments[i - 1]);
                }
                owner = TYPES.get(name);
            } else if (owner != null || isConstant(name)) {
                if (!declares(owner == null ? SOURCES : owner, fieldDeclaration(name))) {
                    return where + ": no constant or field " + name + (owner == null ? "" : " in " + segments[i - 1]);
                }
                owner = null;
            } else if (i == segments.length - 1) {
                return where + ": a lone lower-case name checks nothing: write it as " + name + "() or Type." + name;
            }
            // else a variable or a package: what follows is checked against every source
        }
        return null;
    }

    private static boolean isType(String name) {
        return Character.isUpperCase(name.charAt(0)) && !name.equals(name.toUpperCase());
    }

    private static boolean isConstant(String name) {
        return Character.isUpperCase(name.charAt(0)) && name.equals(name.toUpperCase());
    }

    private static Pattern methodDeclaration(String name) {
        // Java: a return type (a word, or a generic or array type's last character) before the name;
        // Kotlin: fun, with or without a receiver
        return Pattern.compile("(?:([\\w$]+)|[>\\]?])\\s+" + Pattern.quote(name) + "\\s*\\(|\\bfun\\s[^(=\\n]*?\\b" + Pattern.quote(name) + "\\s*\\(");
    }

    private static Pattern fieldDeclaration(String name) {
        // an enum constant on its own line, or a field with a type before it
        return Pattern.compile("(?m)^\\s*" + Pattern.quote(name) + "\\b\\s*(?:[,;({]|//|$)|(?:([\\w$]+)|[>\\]?])\\s+" + Pattern.quote(name) + "\\s*[=;]");
    }

    private static Pattern nestedType(String name) {
        return Pattern.compile("\\b(?:class|interface|record|enum|object)\\s+" + Pattern.quote(name) + "\\b");
    }

    private static boolean declares(List<String> files, Pattern declaration) {
        for (String file : files) {
            Matcher m = declaration.matcher(file);
            while (m.find()) {
                if (m.groupCount() == 0 || m.group(1) == null || !NOT_A_TYPE.contains(m.group(1))) return true;
            }
        }
        return false;
    }

    private static List<Path> pictures() throws IOException {
        try (Stream<Path> files = Files.list(PICTURES)) {
            return files.filter(p -> p.toString().endsWith(".svg")).sorted().toList();
        }
    }

    private static Document parse(Path picture) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);  // an image needs no DTD, and loads none
        return factory.newDocumentBuilder().parse(picture.toFile());
    }

    /** The text of every element of {@code picture} whose class list holds {@code cssClass}. */
    private static List<String> texts(Path picture, String cssClass) throws Exception {
        List<String> texts = new ArrayList<>();
        NodeList all = parse(picture).getElementsByTagName("*");
        for (int i = 0; i < all.getLength(); i++) {
            Element e = (Element) all.item(i);
            if (Arrays.asList(e.getAttribute("class").split("\\s+")).contains(cssClass)) texts.add(e.getTextContent());
        }
        return texts;
    }
}
