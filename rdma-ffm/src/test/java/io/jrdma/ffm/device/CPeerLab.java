package io.jrdma.ffm.device;

import static org.junit.jupiter.api.Assertions.fail;

import io.jrdma.interop.CPeerResult;
import io.jrdma.interop.RxeCounters;
import java.time.Duration;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What the device tests with C peers share: the lab's addresses as strings, the limits, transcript matching. */
final class CPeerLab {
    private CPeerLab() {}

    static final String IP_A = LabEnv.IP_A.getHostAddress();
    static final String IP_B = LabEnv.IP_B.getHostAddress();

    /**
     * The C peers' own limit for each wait ({@code -t}): shorter than {@link #WAIT}, so a peer that
     * waits in vain ends with its own one-line error, which names what it waited for, before the
     * Java side gives up on it.
     */
    static final String PEER_TIMEOUT_SECONDS = "20";
    /** Every Java-side wait for a C peer (its listening line, its exit) and for an rdma_cm event. */
    static final Duration WAIT = Duration.ofSeconds(45);

    /** The first match of {@code regex} (multi-line) in a peer's output, or a failure that shows the transcripts. */
    static Matcher find(CPeerResult result, String regex, CPeerResult... context) {
        Matcher m = Pattern.compile(regex, Pattern.MULTILINE).matcher(result.output());
        if (!m.find()) {
            StringBuilder b = new StringBuilder("no line matching \"" + regex + "\" in the output of " + result.command() + ":\n")
                    .append(result.output());
            for (CPeerResult c : context) b.append("--- ").append(c.command()).append(":\n").append(c.output());
            fail(b.toString());
        }
        return m;
    }

    /** The lab devices' rxe counters (retransmits, sequence errors, RNR NAKs ...), as DEVICE/COUNTER. */
    static Map<String, Long> rxeCounters() {
        return RxeCounters.of(LabEnv.DEV_A, LabEnv.DEV_B);
    }

    /**
     * The rxe counters that moved since {@code before}, for a failure's message: a C pair that hung
     * with packets resent or out of sequence lost them on the lab's wire, not in the programs.
     */
    static String countersMovedSince(Map<String, Long> before) {
        Map<String, Long> moved = RxeCounters.moved(before, rxeCounters());
        return moved.isEmpty() ? "rxe counters: none moved" : "rxe counters that moved: " + moved;
    }
}
