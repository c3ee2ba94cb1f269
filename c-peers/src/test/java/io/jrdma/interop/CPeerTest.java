package io.jrdma.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.provider.FieldSource;

/**
 * The harness on the host, no RDMA device needed: every C peer compiles cleanly (which also fills
 * the cache the lab guest then uses), answers a usage error with exit 2, and a failure with one
 * error line; a process is killed when a wait runs out, and waits end early when it exits.
 */
class CPeerTest {
    static final List<String> PEERS = List.of("cm_rw_server", "cm_rw_client", "cm_imm_server", "cm_imm_client", "oob_tcp_peer");

    @ParameterizedTest
    @FieldSource("PEERS")
    void everyPeerCompilesWithWarningsAsErrorsAndAnswersAUsageErrorWithExitTwo(String name) {
        CPeer peer = CPeer.compile(name);
        assertTrue(Files.isExecutable(peer.executable()), peer.toString());

        CPeerResult r = peer.run(Duration.ofSeconds(20)).requireExitCode(2);
        assertTrue(r.output().startsWith(name + ": usage error: "), r.output());
        assertTrue(r.output().contains("\nusage: " + name + " "), r.output());
    }

    @Test
    void aCompiledPeerIsCachedUnderTargetByItsSourceHash() throws Exception {
        CPeer first = CPeer.compile("cm_rw_server");
        FileTime built = Files.getLastModifiedTime(first.executable());
        assertSame(first, CPeer.compile("cm_rw_server"), "one compilation per JVM");

        Path exe = first.executable();
        assertTrue(exe.getFileName().toString().matches("cm_rw_server-[0-9a-f]{16}"), exe.toString());
        assertEquals("c-peers", exe.getParent().getFileName().toString(), exe.toString());
        assertEquals("target", exe.getParent().getParent().getFileName().toString(), exe.toString());
        // the headers it includes were found on the class path beside it (copied into the compiling JVM's own source directory)
        try (var dirs = Files.list(exe.getParent())) {
            assertTrue(dirs.filter(d -> d.getFileName().toString().startsWith("src-" + exe.getFileName() + "-"))
                    .anyMatch(d -> Files.isRegularFile(d.resolve("cm_common.h")) && Files.isRegularFile(d.resolve("peer_common.h"))), exe.toString());
        }
        assertEquals(built, Files.getLastModifiedTime(exe), "not rebuilt");
    }

    @Test
    void aFailingPeerPrintsExactlyOneErrorLineAndExitsOne() {
        // with no RDMA here the event channel fails; with RDMA, the one-second wait for a client does
        CPeerResult r = CPeer.compile("cm_rw_server").run(Duration.ofSeconds(20), "-t", "1", "127.0.0.1", "0")
                .requireExitCode(1);
        List<String> errors = r.lines().stream().filter(l -> l.contains(": error: ")).toList();
        assertEquals(1, errors.size(), r.output());
        assertTrue(errors.getFirst().startsWith("cm_rw_server: error: "), r.output());
        assertEquals(errors.getFirst(), r.lines().getLast(), "the error is the last word");
    }

    @Test
    void aPeerStillRunningWhenItsTimeoutPassesIsKilledAndItsOutputKept() {
        CPeerProcess p = CPeer.installed("sh").start("-c", "echo started; exec sleep 60");
        long t0 = System.nanoTime();
        CPeerException.TimedOut e = assertThrows(CPeerException.TimedOut.class, () -> p.awaitExit(Duration.ofMillis(500)));
        assertTrue(Duration.ofNanos(System.nanoTime() - t0).compareTo(Duration.ofSeconds(10)) < 0);
        assertFalse(p.isAlive(), "killed");
        assertEquals("started\n", e.transcript());
        assertTrue(e.getMessage().contains("did not exit within 500 ms"), e.getMessage());
        // where it hung, read before the kill: sleep's one thread, in the kernel's sleep
        assertTrue(e.getMessage().matches("(?s).*; where it waited:\\n  thread \\d+ \\(sleep\\) waits in \\w*sleep.*"), e.getMessage());
    }

    @Test
    void awaitingOutputEndsAsSoonAsThePeerExitsWithoutIt() {
        try (CPeerProcess p = CPeer.installed("sh").start("-c", "echo 'x: error: nope' >&2; exit 3")) {
            long t0 = System.nanoTime();
            CPeerException.UnexpectedExit e = assertThrows(CPeerException.UnexpectedExit.class,
                    () -> p.awaitListeningPort(Duration.ofSeconds(60)));
            assertTrue(Duration.ofNanos(System.nanoTime() - t0).compareTo(Duration.ofSeconds(10)) < 0, "no 60 s wait");
            assertEquals(3, e.exitCode());
            assertEquals("x: error: nope\n", e.transcript(), "stderr is captured with stdout");
        }
    }

    @Test
    void awaitingOutputThatNeverComesKillsThePeer() {
        CPeerProcess p = CPeer.installed("sh").start("-c", "echo 'x: waiting'; exec sleep 60");
        CPeerException.TimedOut e = assertThrows(CPeerException.TimedOut.class,
                () -> p.awaitOutput("listening", Duration.ofMillis(500)));
        assertFalse(p.isAlive());
        assertEquals("x: waiting\n", e.transcript());
    }

    @Test
    void aServersListeningPortIsReadFromItsOutputAndCloseKillsIt() {
        CPeerProcess p = CPeer.installed("sh").start("-c", "echo 'x: listening on 10.77.0.2:7471'; exec sleep 60");
        try (p) {
            assertEquals(7471, p.awaitListeningPort(Duration.ofSeconds(20)));
            assertTrue(p.isAlive());
        }
        assertFalse(p.isAlive(), "close() killed it");
    }

    @Test
    void aProgramThatIsNotInstalledIsATypedError() {
        CPeerException.NotInstalled e = assertThrows(CPeerException.NotInstalled.class,
                () -> CPeer.installed("no_such_rdma_program"));
        assertTrue(e.getMessage().contains("lab/install-deps"), e.getMessage());
    }

    @Test
    void anUnknownPeerIsACompileError() {
        CPeerException.CompileFailed e = assertThrows(CPeerException.CompileFailed.class, () -> CPeer.compile("no_such_peer"));
        assertTrue(e.getMessage().contains("io/jrdma/interop/c/no_such_peer.c"), e.getMessage());
    }
}
