package io.jrdma.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.reactive.Transport;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** What the modes decide without a device: parsing, range checks, the verify verdict. */
class ModeLogicTest {
    @Test
    void everyDemoModeIsACommandWithTheCommonOptions() {
        CommandLine cli = Rdma.commandLine();
        assertEquals(List.of("devices", "send", "write", "write-imm", "read", "verify", "echo", "lambda"),
                List.copyOf(cli.getSubcommands().keySet()));
        for (String mode : List.of("send", "write", "write-imm", "read", "verify", "echo", "lambda")) {
            CommandLine sub = cli.getSubcommands().get(mode);
            for (String option : List.of("--port", "--bind", "--device", "--gid-index", "--size", "--transport", "--keep-serving")) {
                assertTrue(sub.getCommandSpec().findOption(option) != null, mode + " has " + option);
            }
        }
    }

    @Test
    void aServerAddressMakesTheClientAndTransportIsCaseInsensitive() {
        CommandLine cli = Rdma.commandLine();
        CommandLine.ParseResult r = cli.parseArgs("send", "10.77.0.2", "-t", "tcp", "-p", "9000");
        SendMode send = (SendMode) r.subcommand().commandSpec().userObject();
        assertTrue(send.options.isClient());
        assertEquals(Transport.TCP, send.options.transport);
        assertEquals(9000, send.options.port);
        assertEquals(4096, send.options.size, "the default buffer size");
        CommandLine.ParseResult server = Rdma.commandLine().parseArgs("write", "--transport", "RDMA_CM");
        assertEquals(Transport.RDMA_CM, ((WriteMode) server.subcommand().commandSpec().userObject()).options.transport);
    }

    @Test
    void aGidIndexWithoutADeviceIsRefusedWithAReason() {
        StringWriter err = new StringWriter();
        int status = Rdma.commandLine().setErr(new PrintWriter(err)).execute("verify", "10.77.0.2", "-g", "1");
        assertEquals(1, status);
        assertTrue(err.toString().contains("--gid-index needs --device"), err.toString());
    }

    @Test
    void readRangesAreHalfOpenAndCheckedAgainstTheServersText() {
        assertEquals(new ReadMode.Range(4, 9), ReadMode.Range.parse(" 4   9 ", 44));
        assertEquals(new ReadMode.Range(44, 44), ReadMode.Range.parse("44 44", 44));
        IllegalArgumentException out = assertThrows(IllegalArgumentException.class, () -> ReadMode.Range.parse("40 50", 44));
        assertEquals("range [40, 50) is outside the server's 44 bytes: use 0 <= start <= end <= 44", out.getMessage());
        assertEquals("range [9, 4) is reversed: its end comes before its start; use start <= end (end exclusive)",
                assertThrows(IllegalArgumentException.class, () -> ReadMode.Range.parse("9 4", 44)).getMessage());
        assertEquals("range 0 99999999999999999999 is outside the server's 44 bytes: use 0 <= start <= end <= 44",
                assertThrows(IllegalArgumentException.class, () -> ReadMode.Range.parse("0 99999999999999999999", 44)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> ReadMode.Range.parse("-1 4", 44));
        IllegalArgumentException words = assertThrows(IllegalArgumentException.class, () -> ReadMode.Range.parse("from 4", 44));
        assertEquals("expected two numbers \"start end\", got \"from 4\"", words.getMessage());
    }

    @Test
    void verifyNamesTheFirstDifferingByte() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment written = arena.allocateFrom("abcdef");
            MemorySegment same = arena.allocateFrom("abcdef");
            MemorySegment other = arena.allocateFrom("abcXef");
            assertEquals("SUCCESS: the 6 bytes read back are the bytes written", VerifyMode.compare(written, same, 6));
            assertEquals("MISMATCH at byte 3 of 6: wrote 0x64, read back 0x58", VerifyMode.compare(written, other, 6));
            other.set(ValueLayout.JAVA_BYTE, 3, (byte) 'd');
            assertEquals("SUCCESS: the 3 bytes read back are the bytes written", VerifyMode.compare(written, other, 3));
        }
    }
}
