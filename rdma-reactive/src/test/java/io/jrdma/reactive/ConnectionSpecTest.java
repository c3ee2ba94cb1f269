package io.jrdma.reactive;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Settings given as durations land on the values the verbs can say, rounded up; out of range is refused at once. */
class ConnectionSpecTest {
    @Test
    void theRnrNakDelayIsRoundedUpToItsCodeAndDefaultsToThePathsOwn() {
        assertNull(ConnectionConfig.defaults().minRnrTimer(), "default: the setup path's own");
        assertEquals(-1, ConnectionConfig.defaults().minRnrTimerCode());
        ConnectionConfig c = RdmaClient.create().minRnrTimer(Duration.ofMillis(2)).configuration();
        assertEquals(16, c.minRnrTimerCode());
        assertEquals(Duration.ofNanos(2_560_000), c.minRnrTimer());
        assertEquals(0, RdmaServer.create().minRnrTimer(Duration.ofMillis(600)).configuration().minRnrTimerCode(), "655.36 ms");
        assertNotEquals(ConnectionConfig.defaults(), c, "part of equality");
        assertTrue(c.toString().contains("RNR NAK delay PT0.00256S"), c.toString());
        assertThrows(IllegalArgumentException.class, () -> RdmaClient.create().minRnrTimer(Duration.ofSeconds(1)));
        assertThrows(IllegalArgumentException.class, () -> RdmaClient.create().minRnrTimer(Duration.ZERO));
    }

    @Test
    void theAckTimeoutIsRoundedUpToAPowerOfTwoTimes4096Ns() {
        assertEquals(14, RdmaClient.create().ackTimeout(Duration.ofMillis(50)).configuration().ackTimeoutExponent(), "67 ms");
        assertEquals(Duration.ofNanos(4096L << 14), RdmaClient.create().ackTimeout(Duration.ofMillis(50)).configuration().ackTimeout());
        assertThrows(IllegalArgumentException.class, () -> RdmaClient.create().ackTimeout(Duration.ofDays(1)));
    }
}
