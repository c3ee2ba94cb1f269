package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The server's frame decoder against random and mutated input: it must never throw, and a
 * corrupted frame must never decode as a valid request.
 */
class FrameDecoderFuzzTest {
    private static final int ROUNDS = 200_000;

    @Test
    void neverThrowsAndNeverAcceptsACorruptedFrame() {
        SplittableRandom random = new SplittableRandom(0x5EED);
        Map<String, Integer> outcomes = new HashMap<>();
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment buffer = arena.allocate(8192);  // like a receive buffer: larger than most frames
            for (int i = 0; i < ROUNDS; i++) {
                byte[] valid = validFrame(random);
                byte[] frame;
                String kind;
                switch (random.nextInt(6)) {
                    case 0 -> {
                        frame = new byte[random.nextInt(200)];
                        random.nextBytes(frame);
                        kind = "random";
                    }
                    case 1 -> {
                        frame = valid.clone();
                        int bit = random.nextInt(frame.length * 8);
                        frame[bit / 8] ^= (byte) (1 << (bit % 8));
                        kind = "bit flip";
                    }
                    case 2 -> {
                        frame = Arrays.copyOf(valid, random.nextInt(valid.length));
                        kind = "truncated";
                    }
                    case 3 -> {
                        frame = Arrays.copyOf(valid, valid.length + 1 + random.nextInt(64));
                        kind = "extended";
                    }
                    case 4 -> {
                        frame = valid.clone();
                        for (int k = 0; k < 1 + random.nextInt(8); k++) frame[random.nextInt(frame.length)] = (byte) random.nextInt();
                        kind = Arrays.equals(frame, valid) ? "unchanged" : "bytes replaced";
                    }
                    default -> {
                        frame = valid;
                        kind = "valid";
                    }
                }
                buffer.fill((byte) random.nextInt());  // stale bytes beyond the frame must not matter
                MemorySegment.copy(frame, 0, buffer, ValueLayout.JAVA_BYTE, 0, Math.min(frame.length, 8192));
                RequestHeader.Decoded d = RequestHeader.decode(buffer, frame.length);
                String outcome = d instanceof RequestHeader.Ok ? "ok" : d instanceof RequestHeader.Drop ? "drop" : "reject";
                outcomes.merge(kind + " -> " + outcome, 1, Integer::sum);
                if (kind.equals("valid") || kind.equals("unchanged")) assertEquals("ok", outcome, kind);
                else assertTrue(!outcome.equals("ok"), kind + " frame accepted: " + Arrays.toString(frame));
            }
        }
        System.out.println("decoder fuzz outcomes: " + new java.util.TreeMap<>(outcomes));
    }

    private static byte[] validFrame(SplittableRandom random) {
        byte[] payload = new byte[random.nextInt(64)];
        random.nextBytes(payload);
        int flags = random.nextBoolean() ? TestFrames.FLAG_KEYED : 0;
        IdempotencyKey key = flags != 0 ? new IdempotencyKey(random.nextLong() | 1, random.nextLong()) : null;
        return TestFrames.frame(flags, random.nextInt(), 1 + random.nextInt(1_000_000), key, payload, 0, 0, 4096, 0, 0, 0);
    }
}
