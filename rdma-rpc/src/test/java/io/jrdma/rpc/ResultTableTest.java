package io.jrdma.rpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class ResultTableTest {
    private final AtomicLong now = new AtomicLong();
    private final IdempotencyKey k1 = new IdempotencyKey(1, 1);
    private final IdempotencyKey k2 = new IdempotencyKey(2, 2);

    private ResultTable<String> table(int entries, long bytes, Duration ttl) {
        return new ResultTable<>(entries, bytes, ttl, now::get);
    }

    @Test
    void aRetryDuringExecutionJoinsItAndAfterwardsIsReplayed() {
        ResultTable<String> t = table(10, 1 << 20, Duration.ofMinutes(1));
        assertInstanceOf(ResultTable.Started.class, t.begin(k1, 7, "first"));
        assertInstanceOf(ResultTable.Joined.class, t.begin(k1, 7, "retry-1"));
        assertInstanceOf(ResultTable.Joined.class, t.begin(k1, 7, "retry-2"));
        assertEquals(List.of("retry-1", "retry-2"), t.complete(k1, RpcStatus.OK, new byte[] {42}));
        ResultTable.Replay r = assertInstanceOf(ResultTable.Replay.class, t.begin(k1, 7, "retry-3"));
        assertEquals(RpcStatus.OK, r.status());
        assertArrayEquals(new byte[] {42}, r.payload());
    }

    @Test
    void aKeyBelongsToOneFunction() {
        ResultTable<String> t = table(10, 1 << 20, Duration.ofMinutes(1));
        t.begin(k1, 7, "a");
        assertEquals(7, assertInstanceOf(ResultTable.Conflict.class, t.begin(k1, 8, "b")).functionId());
    }

    @Test
    void anAbortedCallIsForgottenSoALaterAttemptRuns() {
        ResultTable<String> t = table(10, 1 << 20, Duration.ofMinutes(1));
        t.begin(k1, 7, "a");
        t.begin(k1, 7, "joined");
        assertEquals(List.of("joined"), t.abort(k1));
        assertInstanceOf(ResultTable.Started.class, t.begin(k1, 7, "again"));
    }

    @Test
    void finishedEntriesExpireButRunningOnesNever() {
        ResultTable<String> t = table(10, 1 << 20, Duration.ofSeconds(5));
        t.begin(k1, 7, "a");
        t.complete(k1, RpcStatus.OK, new byte[1]);
        t.begin(k2, 7, "running");
        now.addAndGet(Duration.ofSeconds(6).toNanos());
        assertInstanceOf(ResultTable.Started.class, t.begin(k1, 7, "after expiry"));
        assertInstanceOf(ResultTable.Joined.class, t.begin(k2, 7, "still running"));
    }

    @Test
    void countAndBytesBoundTheTableOldestFirst() {
        ResultTable<String> t = table(3, 1000, Duration.ofMinutes(1));
        for (int i = 1; i <= 5; i++) {
            IdempotencyKey k = new IdempotencyKey(9, i);
            t.begin(k, 1, "x");
            t.complete(k, RpcStatus.OK, new byte[10]);
        }
        assertEquals(3, t.size());
        assertFalse(t.contains(new IdempotencyKey(9, 1)));
        assertTrue(t.contains(new IdempotencyKey(9, 5)));
        ResultTable<String> small = table(100, 100, Duration.ofMinutes(1));
        for (int i = 1; i <= 10; i++) {
            IdempotencyKey k = new IdempotencyKey(8, i);
            small.begin(k, 1, "x");
            small.complete(k, RpcStatus.OK, new byte[12]);  // maxBytes/8 = 12: each is retained
        }
        assertTrue(small.retainedBytes() <= 100, "retained " + small.retainedBytes());
        assertTrue(small.evictions() > 0);
    }

    @Test
    void aHugeResultIsRecordedAsExecutedButNotRetained() {
        ResultTable<String> t = table(10, 800, Duration.ofMinutes(1));
        t.begin(k1, 7, "a");
        t.complete(k1, RpcStatus.OK, new byte[101]);  // over maxBytes/8
        ResultTable.Replay r = assertInstanceOf(ResultTable.Replay.class, t.begin(k1, 7, "retry"));
        assertNull(r.payload());
        assertEquals(0, t.retainedBytes());
    }
}
