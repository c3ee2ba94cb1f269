package io.jrdma.ffm;

/**
 * A libibverbs or librdmacm call failed. Carries the C function name and the errno, so a log
 * line reads like the C program's would: {@code ibv_modify_qp(RTR): Invalid argument (EINVAL 22)}.
 */
public class VerbsException extends RdmaException {
    private final String function;
    private final int errno;

    public VerbsException(String function, int errno) {
        this(function, errno, null);
    }

    public VerbsException(String function, int errno, String hint) {
        super(function + ": " + Errno.describe(errno) + (hint == null ? "" : ". " + hint));
        this.function = function;
        this.errno = errno;
    }

    /** The C function that failed, with the QP transition or object in parentheses where useful. */
    public String function() {
        return function;
    }

    public int errno() {
        return errno;
    }

    /** The symbolic errno name, e.g. {@code EINVAL}. */
    public String errnoName() {
        return Errno.name(errno);
    }
}
