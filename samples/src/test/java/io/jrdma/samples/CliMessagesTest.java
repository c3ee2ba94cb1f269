package io.jrdma.samples;

import static io.jrdma.samples.UserLine.assertReadable;
import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.MemoryLockLimitException;
import io.jrdma.reactive.ConnectionException;
import io.jrdma.reactive.OperationTimeoutException;
import io.jrdma.reactive.RdmaOperationException;
import io.jrdma.reactive.WorkCompletion;
import io.jrdma.ffm.WcOpcode;
import io.jrdma.ffm.WcStatus;
import io.jrdma.ffm.SendOpcode;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import reactor.core.publisher.Mono;

/** What the command prints when the user got something wrong, without a device: one line and a hint. */
class CliMessagesTest {
    /** A run of the command in this JVM: exit status, stdout and stderr. */
    record Run(int status, String out, String err) {
        List<String> errLines() {
            return err.lines().toList();
        }
    }

    private static Run rdma(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = Rdma.commandLine().setOut(new PrintWriter(out, true)).setErr(new PrintWriter(err, true));
        int status = cli.execute(args);
        return new Run(status, out.toString(), err.toString());
    }

    @Test
    void aNumberOutOfRangeNamesTheRangeInOneLineAndPointsAtTheHelp() {
        Run r = rdma("send", "--size", "99999999999");
        assertEquals(2, r.status());
        assertEquals(List.of("rdma send: Invalid value for option '--size': 99999999999 is out of range: bytes from 8 to 1073741824",
                "Try 'rdma send --help' for the options."), r.errLines());
        assertEquals(List.of("rdma send: Invalid value for option '--size': 99999999999999999999 is out of range: bytes from 8 to 1073741824",
                "Try 'rdma send --help' for the options."), rdma("send", "--size", "99999999999999999999").errLines());
        assertEquals(List.of("rdma verify: Invalid value for option '--size': expected bytes from 8 to 1073741824, got '4k'",
                "Try 'rdma verify --help' for the options."), rdma("verify", "--size", "4k").errLines());
        assertEquals("rdma send: Invalid value for option '--timeout': 0 is out of range: seconds from 1 to 86400",
                rdma("send", "10.77.0.2", "--timeout", "0").errLines().getFirst());
        assertEquals("rdma lambda: Invalid value for option '--port': 70000 is out of range: a port from 0 to 65535",
                rdma("lambda", "-p", "70000").errLines().getFirst());
    }

    @Test
    void everyOptionErrorIsOneLinePlusAHintNotAUsageDump() {
        for (String[] args : List.of(new String[] {"send", "--bogus"}, new String[] {"write", "-t", "infiniband"},
                new String[] {"read", "-p"}, new String[] {"verify", "1", "2"}, new String[] {"lambda", "--max-payload", "-1"})) {
            Run r = rdma(args);
            assertEquals(2, r.status(), String.join(" ", args));
            assertEquals(2, r.errLines().size(), r.err());
            assertTrue(r.errLines().get(0).startsWith("rdma " + args[0] + ": "), r.err());
            assertReadable(r.errLines().get(0));
            assertEquals("Try 'rdma " + args[0] + " --help' for the options.", r.errLines().get(1));
        }
        Run mode = rdma("sned");
        assertEquals(List.of("rdma: Unmatched argument at index 0: 'sned'",
                "Modes: devices, send, write, write-imm, read, verify, echo, lambda. Try 'rdma --help'."), mode.errLines());
    }

    @Test
    void devicesHasHelpLikeEveryMode() {
        Run r = rdma("devices", "--help");
        assertEquals(0, r.status(), r.err());
        assertTrue(r.out().startsWith("Usage: rdma devices"), r.out());
    }

    @Test
    void devicesWithoutRdmaSaysWhatIsMissingInTheLibrarysWordsThenWhereTheLabIs() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status = DevicesCommand.print(new PrintStream(out, true, UTF_8), new PrintStream(err, true, UTF_8));
        Assumptions.assumeTrue(status == 1 && out.size() == 0, "this host has RDMA devices");
        List<String> lines = err.toString(UTF_8).lines().toList();
        assertEquals(2, lines.size(), err.toString(UTF_8));
        assertTrue(lines.get(0).startsWith("No RDMA devices: ") && lines.get(0).contains("modprobe rdma_rxe"), lines.get(0));
        assertFalse(lines.get(0).matches(".*\\blab\\b.*"), "the library's message names no tool of this repository: " + lines.get(0));
        assertEquals(DevicesCommand.IN_THE_LAB, lines.get(1));
    }

    @Test
    void theHelpSaysWhatSizeRegisters() {
        Run r = rdma("send", "--help");
        String help = r.out().replaceAll("\\s+", " ");
        assertTrue(help.contains("20 receive buffers of this size (4 for the peer's credit grants and large-message replies), and 16 send buffers once it sends: 36 x BYTES"), help);
        assertTrue(help.contains("8 to 1073741824"), help);
    }

    @Test
    void aClientNeedsAPortAndSaysSo() {
        Run r = rdma("send", "10.77.0.2", "-p", "0");
        assertEquals(1, r.status());
        assertEquals(List.of("rdma send: -p 0: a client needs the server's port (0 only lets a server pick one)"), r.errLines());
    }

    /** 127.0.0.1 belongs to no RDMA device anywhere: a TCP-path server there could serve nobody, and says so instead of listening. */
    @Test
    void aTcpServerThatCouldServeNobodySaysSoAtStartInsteadOfListening() {
        Run r = rdma("send", "-t", "tcp", "--bind", "127.0.0.1", "-p", "0");
        assertEquals(1, r.status(), r.out() + r.err());
        assertEquals("", r.out(), "no \"listening\" line");
        assertEquals(1, r.errLines().size(), r.err());
        String line = assertReadable(r.errLines().getFirst());
        assertTrue(line.startsWith("rdma send: cannot serve connections set up over TCP on 127.0.0.1: "), line);
        assertTrue(line.contains("RDMA"), line);
    }

    @Test
    void failuresAreWordedInTheCommandsTerms() {
        String blocked = Errors.describe(assertThrows(IllegalStateException.class, () -> Mono.never().block(Duration.ofMillis(1))), 5, 4096);
        assertEquals("no answer within --timeout 5 s: the other side stopped responding (gone, or its link is down);"
                + " raise --timeout if it is only slow", assertReadable(blocked));
        assertEquals("connecting to 10.77.0.2:7471 over rdma_cm did not finish within the connect timeout of 10 s: it waited for x (--timeout 10)",
                Errors.describe(new ConnectionException.Timeout(
                        "connecting to 10.77.0.2:7471 over rdma_cm did not finish within the connect timeout of 10 s: it waited for x"), 10, 4096));
        assertEquals("an RDMA SEND did not complete within --timeout 30 s: the other side stopped responding (gone, or its link is down)",
                assertReadable(Errors.describe(OperationTimeoutException.of(SendOpcode.SEND, true, Duration.ofSeconds(30),
                        "RdmaConnection[rdma_cm 10.77.0.1:1 -> 10.77.0.2:7471, QP 0x11]"), 30, 4096)));
        String memlock = Errors.describe(new MemoryLockLimitException("ibv_reg_mr", 12, 16 << 20, 64 << 10), 30, 1 << 20);
        assertTrue(memlock.endsWith("raise it with 'ulimit -l unlimited', LimitMEMLOCK=infinity (systemd) or memlock in"
                + " /etc/security/limits.conf (each connection registers 36 x --size 1048576 bytes)"), memlock);
        assertReadable(memlock);
        String wrapped = Errors.describe(new ConnectionException("connecting to 10.77.0.2:7475 failed: x",
                new MemoryLockLimitException("ibv_reg_mr", 12, 16 << 20, 64 << 10)), 30, 1 << 20);
        assertTrue(wrapped.endsWith("(each connection registers 36 x --size 1048576 bytes)"), "a failed connect names --size too: " + wrapped);
        assertEquals("unexpected error: boom (RDMA_DEBUG=1 prints the stack trace)", Errors.describe(new UnsupportedOperationException("boom")));
    }

    @Test
    void lambdasSumNamesTheWordThatIsNoNumber() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LambdaMode.numbers("1 two 3"));
        assertEquals("\"two\" is not a whole number: sum adds whole numbers separated by spaces, e.g. sum 1 2 3", e.getMessage());
        assertEquals(6, java.util.Arrays.stream(LambdaMode.numbers(" 1  2 3 ")).sum());
        assertEquals("12345678901234567890 is beyond the 64-bit range: sum adds whole numbers from -9223372036854775808 to"
                + " 9223372036854775807", assertThrows(IllegalArgumentException.class, () -> LambdaMode.numbers("1 12345678901234567890"))
                .getMessage());
    }

    @Test
    void lambdasSumSaysAnOverflowInItsOwnWords() {
        ArithmeticException e = assertThrows(ArithmeticException.class, () -> SampleFunctions.sum(new long[] {Long.MAX_VALUE, 1}));
        assertEquals("the sum is beyond the 64-bit range (-9223372036854775808 to 9223372036854775807)", e.getMessage());
    }

    @Test
    void theServerLogNamesTheCommandsOptionNotTheApi() {
        assertEquals("rejected a connection from 10.77.0.1:5 on 10.77.0.2:7471: not a jrdma client: bad magic in its connect request;"
                + " a client that is not jrdma needs a server started with --c-peer", Rdma.CliTerms.cliTerms("rejected a connection from"
                + " 10.77.0.1:5 on 10.77.0.2:7471: not a jrdma client: bad magic in its connect request; a client that is not jrdma needs"
                + " a server with acceptRaw"));
    }

    /**
     * A served client that goes is a disconnect, whatever failed on the way: its connection's
     * close, or an operation that failed while one side closed it, flushed or refused by the
     * dying peer (REM_OP_ERR: CliKilledClientTest's killed client, CI 2026-11-28). An operation
     * that failed with no orderly close behind it is an error.
     */
    @Test
    void aClientThatWentIsADisconnectWhateverOperationFailedOnTheWay() {
        ConnectionException.Closed byThePeer = new ConnectionException.Closed("the peer disconnected", true);
        ConnectionException.Closed failed = new ConnectionException.Closed("the QP went to error", false);
        assertTrue(Session.clientWent(byThePeer));
        assertTrue(Session.clientWent(RdmaOperationException.of(failedWith(WcStatus.IBV_WC_REM_OP_ERR), WcOpcode.SEND, byThePeer)));
        assertTrue(Session.clientWent(RdmaOperationException.of(failedWith(WcStatus.IBV_WC_WR_FLUSH_ERR), WcOpcode.SEND, byThePeer)));
        assertFalse(Session.clientWent(RdmaOperationException.of(failedWith(WcStatus.IBV_WC_WR_FLUSH_ERR), WcOpcode.SEND, failed)));
        assertFalse(Session.clientWent(RdmaOperationException.of(failedWith(WcStatus.IBV_WC_REM_OP_ERR), WcOpcode.SEND, null)));
        assertFalse(Session.clientWent(OperationTimeoutException.of(SendOpcode.SEND, true, false, Duration.ofSeconds(30), "rdma_cm a -> b")));
    }

    private static WorkCompletion failedWith(WcStatus status) {
        return new WorkCompletion(7, status, WcOpcode.UNKNOWN, 0, false, 0, 0x11, 0);
    }
}
