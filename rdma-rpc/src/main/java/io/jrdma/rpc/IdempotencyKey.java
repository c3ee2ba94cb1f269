package io.jrdma.rpc;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.UUID;

/**
 * 128 bits naming one logical call across its retries. The server executes a keyed call at most
 * once while it remembers the key (see {@link RpcServer#resultTable}); a retry with the same key
 * gets the first execution's result. Keys are server-wide, like an HTTP Idempotency-Key: two
 * clients that pick the same key share one execution.
 *
 * @param high the upper 64 bits
 * @param low  the lower 64 bits; not both zero
 */
public record IdempotencyKey(long high, long low) {
    /** Checks that the key is not all zeros, which the wire uses for "no key" ({@link IllegalArgumentException}). */
    public IdempotencyKey {
        if (high == 0 && low == 0) throw new IllegalArgumentException("the all-zero idempotency key is reserved (no key)");
    }

    /** {@return a fresh random key (122 random bits, from {@link UUID#randomUUID()})} */
    public static IdempotencyKey random() {
        UUID u = UUID.randomUUID();
        return new IdempotencyKey(u.getMostSignificantBits(), u.getLeastSignificantBits());
    }

    /**
     * A key derived from an application identifier, e.g. an order number: SHA-256 of its UTF-8, first 128 bits.
     *
     * @param name the identifier; equal names give equal keys, on every client
     * @return the key
     */
    public static IdempotencyKey of(String name) {
        try {
            ByteBuffer d = ByteBuffer.wrap(MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8)));
            long hi = d.getLong();
            long lo = d.getLong();
            return hi == 0 && lo == 0 ? new IdempotencyKey(0, 1) : new IdempotencyKey(hi, lo);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    @Override
    public String toString() {
        return String.format("IdempotencyKey[%016x%016x]", high, low);
    }
}
