package io.jrdma.ffm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The specification's table, read back both ways: a code's delay, and the code that asks a peer to
 * wait at least a given delay (never less).
 */
class RnrNakTimerTest {
    @Test
    void theCodesOfTheTableStandForTheirDelays() {
        assertEquals(Duration.ofNanos(655_360_000), RnrNakTimer.delay(0), "0, the longest");
        assertEquals(Duration.ofNanos(10_000), RnrNakTimer.delay(1));
        assertEquals(Duration.ofNanos(640_000), RnrNakTimer.delay(12), "perftest's");
        assertEquals(Duration.ofNanos(1_920_000), RnrNakTimer.delay(15));
        assertEquals(Duration.ofNanos(491_520_000), RnrNakTimer.delay(31));
        for (int code = 2; code < 32; code++) {
            assertTrue(RnrNakTimer.delay(code).compareTo(RnrNakTimer.delay(code - 1)) > 0, "codes 1 to 31 grow: " + code);
        }
        assertThrows(IllegalArgumentException.class, () -> RnrNakTimer.delay(32));
        assertThrows(IllegalArgumentException.class, () -> RnrNakTimer.delay(-1));
    }

    @Test
    void aDelayIsRoundedUpToTheNextCode() {
        for (int code = 0; code < 32; code++) assertEquals(code, RnrNakTimer.code(RnrNakTimer.delay(code)), "exact delay of code " + code);
        assertEquals(1, RnrNakTimer.code(Duration.ofNanos(1)));
        assertEquals(12, RnrNakTimer.code(Duration.ofNanos(480_001)), "just above 0.48 ms: 0.64 ms");
        assertEquals(16, RnrNakTimer.code(Duration.ofMillis(2)), "2 ms: 2.56 ms");
        assertEquals(0, RnrNakTimer.code(Duration.ofMillis(500)), "above 491.52 ms: 655.36 ms");
        assertThrows(IllegalArgumentException.class, () -> RnrNakTimer.code(Duration.ofMillis(656)));
        assertThrows(IllegalArgumentException.class, () -> RnrNakTimer.code(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> RnrNakTimer.code(Duration.ofMillis(-1)));
    }
}
