package io.jrdma.reactive.rpc;

import java.time.Duration;
import java.util.Objects;

/**
 * How one call is made. Immutable; the withers return a copy.
 *
 * @param timeout          per attempt: from the call's subscription (waiting for a credit included) to its response
 * @param retries          further attempts after a timeout or an {@link RpcStatus#OVERLOADED} answer
 * @param idempotencyKey   names the call across attempts; null = a random key when {@code retries > 0}, none otherwise
 * @param responseCapacity bytes reserved in the client's exposed buffer for a large response (a response frame,
 *                         header included, written with RDMA WRITE_WITH_IMM); -1 = as large as a staged request, 0 = none
 */
public record CallOptions(Duration timeout, int retries, IdempotencyKey idempotencyKey, int responseCapacity) {
    private static final CallOptions DEFAULTS = new CallOptions(Duration.ofSeconds(30), 0, null, -1);

    public CallOptions {
        Objects.requireNonNull(timeout, "timeout");
        if (timeout.isNegative() || timeout.isZero()) throw new IllegalArgumentException("timeout must be positive");
        if (retries < 0) throw new IllegalArgumentException("retries must not be negative");
        if (responseCapacity < -1) throw new IllegalArgumentException("responseCapacity must be -1 (automatic), 0 or positive");
    }

    /** 30 s per attempt, no retries, no key, automatic response window. */
    public static CallOptions defaults() {
        return DEFAULTS;
    }

    public CallOptions timeout(Duration timeout) {
        return new CallOptions(timeout, retries, idempotencyKey, responseCapacity);
    }

    /** Retries are made safe by the idempotency key: without an explicit one, each call gets a random key. */
    public CallOptions retries(int retries) {
        return new CallOptions(timeout, retries, idempotencyKey, responseCapacity);
    }

    public CallOptions idempotencyKey(IdempotencyKey key) {
        return new CallOptions(timeout, retries, key, responseCapacity);
    }

    public CallOptions responseCapacity(int bytes) {
        return new CallOptions(timeout, retries, idempotencyKey, bytes);
    }
}
