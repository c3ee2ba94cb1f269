package io.jrdma.ffm;

import org.jspecify.annotations.Nullable;

/**
 * A libibverbs or librdmacm call failed. Carries the C function name and the errno, so a log
 * line reads like the C program's would: {@code ibv_modify_qp(RTR): Invalid argument (EINVAL 22)}.
 */
public class VerbsException extends RdmaException {
    /** The C function that failed. */
    private final String function;
    /** The errno it failed with. */
    private final int errno;

    /**
     * A failed call.
     *
     * @param function the C function, with its target in parentheses where useful
     * @param errno    the errno it failed with (positive)
     */
    public VerbsException(String function, int errno) {
        this(function, errno, null);
    }

    /**
     * A failed call, with advice for the message.
     *
     * @param function the C function, with its target in parentheses where useful
     * @param errno    the errno it failed with (positive)
     * @param hint     what to do about it, appended to the message; or null
     */
    public VerbsException(String function, int errno, @Nullable String hint) {
        super(function + ": " + Errno.describe(errno) + (hint == null ? "" : ". " + hint));
        this.function = function;
        this.errno = errno;
    }

    /** {@return the C function that failed, with the QP transition or object in parentheses where useful} */
    public String function() {
        return function;
    }

    /** {@return the errno the call failed with} */
    public int errno() {
        return errno;
    }

    /** {@return the symbolic errno name, e.g. {@code EINVAL}; {@code "errno"} where glibc cannot name it} */
    public String errnoName() {
        return Errno.name(errno);
    }
}
