package io.jrdma.ffm.device;

import static org.junit.jupiter.api.Assertions.fail;

import io.jrdma.interop.CPeerResult;
import java.time.Duration;
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
}
