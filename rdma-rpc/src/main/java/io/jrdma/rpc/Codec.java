package io.jrdma.rpc;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * Turns values into payload bytes and back. The library ships raw bytes, UTF-8 and the two
 * formats of the sample functions; plug in protobuf or JSON by implementing the two methods,
 * e.g. {@code Codec.of(Msg::toByteArray, Msg::parseFrom)} - the library depends on neither.
 *
 * @param <T> the type of the values
 */
public interface Codec<T> {
    /**
     * The payload bytes of {@code value}.
     *
     * @param value the value to send
     * @return its bytes; the caller does not change them
     */
    byte[] encode(T value);

    /**
     * The value of payload bytes.
     *
     * @param bytes the payload, all of it
     * @return the value
     * @throws RuntimeException when the bytes are not a valid encoding (the call then fails)
     */
    T decode(byte[] bytes);

    /**
     * Decodes a request payload in registered memory. The default copies it once; a codec that can
     * parse from a {@code ByteBuffer} or segment in place may override it to avoid the copy.
     *
     * @param payload the payload, read-only, valid only during the call
     * @return the value, which must not keep a reference to {@code payload}
     */
    default T decode(MemorySegment payload) {
        return decode(payload.toArray(ValueLayout.JAVA_BYTE));
    }

    /**
     * A codec from two functions (method references to a generated message class, for example).
     *
     * @param <T>     the type of the values
     * @param encoder value to bytes
     * @param decoder bytes to value
     * @return the codec
     */
    static <T> Codec<T> of(java.util.function.Function<? super T, byte[]> encoder, java.util.function.Function<byte[], ? extends T> decoder) {
        return new Codec<>() {
            @Override
            public byte[] encode(T value) {
                return encoder.apply(value);
            }

            @Override
            public T decode(byte[] bytes) {
                return decoder.apply(bytes);
            }
        };
    }

    /** {@return a codec that passes the payload as it is, without copying the array} */
    static Codec<byte[]> raw() {
        return Codecs.RAW;
    }

    /** {@return a codec of text as UTF-8 (malformed input decodes with replacement characters, never throws)} */
    static Codec<String> utf8() {
        return Codecs.UTF8;
    }

    /**
     * {@return a codec of a vector of longs, 8 bytes each, big-endian (the {@code sum} sample's
     * request); decoding fails on a length that is not a multiple of 8}
     */
    static Codec<long[]> longArray() {
        return Codecs.LONGS;
    }

    /** {@return a codec of one long, 8 bytes big-endian (the {@code sum} sample's response); decoding fails on other lengths} */
    static Codec<Long> int64() {
        return Codecs.INT64;
    }
}

/** The built-in codecs. */
final class Codecs {
    private Codecs() {}

    static final Codec<byte[]> RAW = Codec.of(b -> b, b -> b);

    static final Codec<String> UTF8 = new Codec<>() {
        @Override
        public byte[] encode(String value) {
            return value.getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String decode(byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
        }
    };

    static final Codec<long[]> LONGS = new Codec<>() {
        @Override
        public byte[] encode(long[] value) {
            ByteBuffer b = ByteBuffer.allocate(Math.multiplyExact(value.length, 8));
            b.asLongBuffer().put(value);
            return b.array();
        }

        @Override
        public long[] decode(byte[] bytes) {
            return decode(MemorySegment.ofArray(bytes));
        }

        @Override
        public long[] decode(MemorySegment payload) {
            if (payload.byteSize() % 8 != 0) {
                throw new IllegalArgumentException("a vector of longs needs a multiple of 8 bytes, got " + payload.byteSize());
            }
            long[] out = new long[(int) (payload.byteSize() / 8)];
            for (int i = 0; i < out.length; i++) out[i] = payload.get(Frames.BE_LONG, i * 8L);
            return out;
        }
    };

    static final Codec<Long> INT64 = new Codec<>() {
        @Override
        public byte[] encode(Long value) {
            return ByteBuffer.allocate(8).putLong(value).array();
        }

        @Override
        public Long decode(byte[] bytes) {
            if (bytes.length != 8) throw new IllegalArgumentException("an int64 needs 8 bytes, got " + bytes.length);
            return ByteBuffer.wrap(bytes).getLong();
        }
    };
}
