package io.jrdma.rpc;

import java.time.Duration;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How one call is made. Immutable; the withers return a copy.
 *
 * @param timeout          per attempt: from the call's subscription (waiting for a credit included) to its response
 * @param retries          further attempts after a timeout or an {@link RpcStatus#OVERLOADED} answer
 * @param idempotencyKey   names the call across attempts; null = a random key when {@code retries > 0}, none otherwise
 * @param responseCapacity bytes reserved in the client's exposed buffer for a large response (a response frame,
 *                         header included, written with RDMA WRITE_WITH_IMM); -1 = as large as a staged request, 0 = none
 */
public record CallOptions(Duration timeout, int retries, @Nullable IdempotencyKey idempotencyKey, int responseCapacity) {
    private static final CallOptions DEFAULTS = new CallOptions(Duration.ofSeconds(30), 0, null, -1);

    /**
     * Checks the options: a positive timeout, no negative retries, a response capacity of -1 or more
     * ({@link IllegalArgumentException} otherwise; {@link NullPointerException} for a null timeout).
     */
    public CallOptions {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) throw new IllegalArgumentException("timeout must be positive");
        if (retries < 0) throw new IllegalArgumentException("retries must not be negative");
        if (responseCapacity < -1) throw new IllegalArgumentException("responseCapacity must be -1 (automatic), 0 or positive");
    }

    /**
     * 30 s per attempt, no retries, no key, automatic response window.
     *
     * @return the defaults
     */
    public static CallOptions defaults() {
        return DEFAULTS;
    }

    /**
     * These options with another timeout per attempt.
     *
     * @param timeout positive
     * @return a copy
     */
    public CallOptions timeout(Duration timeout) {
        return new CallOptions(timeout, retries, idempotencyKey, responseCapacity);
    }

    /**
     * Retries are made safe by the idempotency key: without an explicit one, each call gets a random key.
     *
     * @param retries further attempts after a timeout or OVERLOADED, from 0
     * @return a copy
     */
    public CallOptions retries(int retries) {
        return new CallOptions(timeout, retries, idempotencyKey, responseCapacity);
    }

    /**
     * These options with a key that names the call across attempts, and across clients.
     *
     * @param key the key, or null for a random one when retrying and none otherwise
     * @return a copy
     */
    public CallOptions idempotencyKey(@Nullable IdempotencyKey key) {
        return new CallOptions(timeout, retries, key, responseCapacity);
    }

    /**
     * These options with another response window.
     *
     * @param bytes the window for a large response frame, header included; -1 as large as a staged
     *              request, 0 none (a response must then fit a receive buffer)
     * @return a copy
     */
    public CallOptions responseCapacity(int bytes) {
        return new CallOptions(timeout, retries, idempotencyKey, bytes);
    }
}
