package io.jrdma.reactive.internal.setup;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jrdma.ffm.MemoryLockLimitException;
import io.jrdma.ffm.NoRdmaDeviceException;
import io.jrdma.reactive.ConnectionException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** How the setup paths word failures for the server's log and for the client's reject reason. */
class SetupMessagesTest {
    @Test
    void addressesPrintAsPeopleWriteThemWithoutASlash() throws Exception {
        InetSocketAddress v4 = new InetSocketAddress(InetAddress.getByName("10.77.0.2"), 7471);
        assertEquals("/10.77.0.2:7471", v4.toString(), "what the JDK prints, and this replaces");
        assertEquals("10.77.0.2:7471", SetupMessages.address(v4));
        assertEquals("10.77.0.2", SetupMessages.host(v4));
        assertEquals("[0:0:0:0:0:0:0:1]:7471", SetupMessages.address(new InetSocketAddress(InetAddress.getByName("::1"), 7471)));
        assertEquals("0.0.0.0:0", SetupMessages.address(new InetSocketAddress(0)));
        InetSocketAddress named = new InetSocketAddress(InetAddress.getByAddress("rxe-b", new byte[] {10, 77, 0, 2}), 7471);
        assertEquals("10.77.0.2:7471", SetupMessages.address(named), "not rxe-b/10.77.0.2:7471");
    }

    @Test
    void timeoutsPrintAsTheUserGaveThem() {
        assertEquals("10 s", SetupMessages.duration(Duration.ofSeconds(10)));
        assertEquals("1.5 s", SetupMessages.duration(Duration.ofMillis(1500)));
        assertEquals("250 ms", SetupMessages.duration(Duration.ofMillis(250)));
    }

    @Test
    void aMemoryLockLimitTellsThePeerWhatTheServerMustRaise() {
        String reason = SetupMessages.forPeer(new MemoryLockLimitException("ibv_reg_mr", 12, 16 << 20, 64 << 10), SetupMessages.CM_REJECT_BYTES);
        assertEquals("the server cannot register memory for the connection: its locked-memory limit (64 KiB) is too low;"
                + " raise ulimit -l on the server", reason);
        assertTrue(reason.getBytes(UTF_8).length <= SetupMessages.CM_REJECT_BYTES);
    }

    @Test
    void aPeerThatIsNotJrdmaIsToldSoAndABugIsNotExplainedToThePeer() {
        assertEquals("not a jrdma client: x", SetupMessages.forPeer(new ConnectionException.Protocol("not a jrdma client: x"), 148));
        assertEquals("the server could not set up the connection (an internal error: see its log)",
                SetupMessages.forPeer(new NullPointerException(), 148));
        assertTrue(SetupMessages.expected(new NoRdmaDeviceException("none")));
        assertFalse(SetupMessages.expected(new NullPointerException()), "a bug keeps its stack trace in the log");
        assertEquals("an internal error (NullPointerException)", SetupMessages.text(new NullPointerException()));
    }

    @Test
    void aLongReasonIsCutToTheRejectsSizeOnACharacterBoundary() {
        String longReason = "é".repeat(100);  // 200 bytes of UTF-8
        String cut = SetupMessages.truncate(longReason, 148);
        byte[] bytes = cut.getBytes(UTF_8);
        assertTrue(bytes.length <= 148, bytes.length + " bytes");
        assertTrue(cut.endsWith("..."), cut);
        assertEquals("é".repeat(72) + "...", cut, "72 whole characters (144 bytes) and the ellipsis");
        assertEquals("short", SetupMessages.truncate("short", 148));
    }
}
