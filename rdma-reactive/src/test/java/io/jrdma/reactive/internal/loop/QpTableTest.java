package io.jrdma.reactive.internal.loop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The loop's QP number to connection map: sorted snapshots, lookups without locks. */
class QpTableTest {
    @Test
    void lookupsFindWhatWasPutUntilItIsRemoved() {
        QpTable<String> t = new QpTable<>();
        Random r = new Random(7);
        List<Integer> keys = new ArrayList<>();
        Map<Integer, String> values = new HashMap<>();
        for (int i = 0; i < 500; i++) {
            int qpn = r.nextInt(1 << 24);
            if (keys.contains(qpn)) continue;
            keys.add(qpn);
            values.put(qpn, "qp" + qpn);
            t.put(qpn, values.get(qpn));
        }
        for (int k : keys) assertEquals("qp" + k, t.get(k));
        for (int i = 0; i < keys.size(); i += 2) t.remove(keys.get(i), values.get(keys.get(i)));
        for (int i = 0; i < keys.size(); i++) {
            if (i % 2 == 0) assertNull(t.get(keys.get(i)));
            else assertEquals("qp" + keys.get(i), t.get(keys.get(i)));
        }
        assertEquals(keys.size() / 2, t.size());
    }

    @Test
    void aQpNumberIsRegisteredOnceAndOnlyItsOwnerRemovesIt() {
        QpTable<String> t = new QpTable<>();
        t.put(0x11, "first");
        assertThrows(IllegalStateException.class, () -> t.put(0x11, "second"));
        t.remove(0x11, "someone else");
        assertEquals("first", t.get(0x11), "a reused number's new owner is not removed by the old one");
        t.remove(0x11, "first");
        assertNull(t.get(0x11));
    }
}
