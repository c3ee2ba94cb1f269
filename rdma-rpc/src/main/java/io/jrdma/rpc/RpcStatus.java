package io.jrdma.rpc;

import org.jspecify.annotations.Nullable;

/**
 * The status byte of a response frame. Whether the function ran matters to a caller deciding to
 * retry, so each status says it.
 */
public enum RpcStatus {
    /** The function ran; the payload is its result. */
    OK(0, true),
    /** No function with the request's id is registered; nothing ran. */
    UNKNOWN_FUNCTION(1, false),
    /** The function ran and failed (threw, emitted an error or exceeded the server's handler timeout); the payload is a UTF-8 message. */
    HANDLER_ERROR(2, true),
    /** The request was malformed (bad field, bad descriptor, checksum mismatch, duplicate id); nothing ran; the payload is a UTF-8 reason. */
    BAD_REQUEST(3, false),
    /** The server had no handler capacity or staging memory free; nothing ran, retrying later is safe. */
    OVERLOADED(4, false),
    /** The function ran but its result fits neither a receive buffer nor the response window; the payload is the u64 frame size needed. */
    RESPONSE_TOO_LARGE(5, true),
    /** A retry of an idempotent call whose first execution finished but whose result the server did not keep (too large); nothing ran again. */
    ALREADY_EXECUTED(6, true);

    /** {@code values()} clones its array, and {@link #of} runs once per response decoded. */
    private static final RpcStatus[] VALUES = values();

    private final int code;
    private final boolean executed;

    RpcStatus(int code, boolean executed) {
        this.code = code;
        this.executed = executed;
    }

    /** {@return the wire value} */
    public int code() {
        return code;
    }

    /** {@return true when the function was (or may have been) executed for this request or an earlier attempt with its key} */
    public boolean executed() {
        return executed;
    }

    /**
     * The status with wire value {@code code}, or null for a value this version does not know.
     *
     * @param code the status byte of a response frame
     * @return the status, or null
     */
    public static @Nullable RpcStatus of(int code) {
        for (RpcStatus s : VALUES) if (s.code == code) return s;
        return null;
    }
}
