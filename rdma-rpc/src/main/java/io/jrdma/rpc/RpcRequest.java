package io.jrdma.rpc;

import io.jrdma.reactive.memory.RegisteredBuffer;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * One call as a handler sees it. The payload is registered memory - the receive buffer the SEND
 * landed in, or the staging slice the server's RDMA READ fetched it into - so a handler can use it
 * without a copy. It is valid until the handler's {@code Mono} terminates or is cancelled (the
 * server's handler timeout cancels it); after that the memory belongs to the next request.
 */
public final class RpcRequest {
    private final String function;
    private final long requestId;
    private final @Nullable IdempotencyKey key;
    /** The memory the payload lies in, at {@link #offset} ({@link #buffer}'s segment, or an array's for {@link #of}). */
    private final MemorySegment memory;
    private final @Nullable RegisteredBuffer buffer;
    private final int offset;
    private final int length;
    private final boolean fetched;
    /**
     * The read-only slice, made when first asked for: a handler that only copies the payload
     * ({@link #bytes}) needs none, and a slice and its read-only view are two objects and, under
     * the lab's C1-only JIT, two calls into the segment implementation's checks per call. Racy but
     * benign: a segment is immutable, and two threads would make equal slices.
     */
    private @Nullable MemorySegment payload;

    RpcRequest(String function, long requestId, @Nullable IdempotencyKey key, MemorySegment memory, @Nullable RegisteredBuffer buffer,
               int offset, int length, boolean fetched) {
        this.function = function;
        this.requestId = requestId;
        this.key = key;
        this.memory = memory;
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        this.fetched = fetched;
    }

    /**
     * A request over plain memory, for testing handlers without a connection.
     *
     * @param function the function name
     * @param payload  the payload; copied
     * @return a request with id 1, no key and no registered buffer
     */
    public static RpcRequest of(String function, byte[] payload) {
        return new RpcRequest(function, 1, null, MemorySegment.ofArray(payload.clone()), null, 0, payload.length, false);
    }

    /** {@return the name of the function called} */
    public String function() {
        return function;
    }

    /** {@return the id the client gave this attempt (unique per connection, increasing)} */
    public long requestId() {
        return requestId;
    }

    /** {@return the call's idempotency key, if the client sent one} */
    public Optional<IdempotencyKey> idempotencyKey() {
        return Optional.ofNullable(key);
    }

    /** {@return the payload's length in bytes} */
    public int length() {
        return length;
    }

    /** {@return the payload, read-only, in registered memory (on-heap only for {@link #of})} */
    public MemorySegment payload() {
        MemorySegment p = payload;
        if (p == null) payload = p = memory.asSlice(offset, length).asReadOnly();
        return p;
    }

    /**
     * {@return the registered buffer the payload lives in (at {@link #offset()}), e.g. to post it
     * elsewhere; null for {@link #of}}
     */
    public @Nullable RegisteredBuffer buffer() {
        return buffer;
    }

    /** {@return where the payload starts in {@link #buffer()}} */
    public int offset() {
        return offset;
    }

    /** {@return true when the server fetched the payload with RDMA READ (it was too large for a SEND)} */
    public boolean fetched() {
        return fetched;
    }

    /** {@return a copy of the payload} */
    public byte[] bytes() {
        return Frames.copyOut(memory, offset, length);
    }

    /** {@return the payload decoded as UTF-8} */
    public String text() {
        return new String(bytes(), StandardCharsets.UTF_8);
    }

    /** {@return a read-only view of the payload, without a copy; valid as long as the payload is} */
    public ByteBuffer asByteBuffer() {
        return payload().asByteBuffer();
    }

    /**
     * The payload decoded by {@code codec} (in place where the codec can).
     *
     * @param <T>   the value type
     * @param codec the codec
     * @return the value
     */
    public <T> T decode(Codec<T> codec) {
        return codec.decode(payload());
    }

    @Override
    public String toString() {
        return "RpcRequest[" + function + " #" + requestId + ", " + length() + " bytes" + (fetched ? ", fetched" : "") + "]";
    }
}
