package io.jrdma.reactive.internal.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link SharedCredits} without a device: clients stream into one shared receive queue smaller
 * than their windows together; the test is the NIC and counts the receives the queue has posted.
 */
class SharedCreditsTest {
    @Test
    void aNewcomerGetsAnEqualShareOfWhatIsFreeAndIsRefusedWhenWhatOthersHoldCouldStarveSomeone() {
        AtomicInteger grown = new AtomicInteger();
        int r = Credits.RECEIVES_RESERVED, cushion = SharedCredits.CUSHION;
        int capacity = 2 * r + cushion + 9;  // 9 beyond reserves and cushion once two have joined
        SharedCredits shared = new SharedCredits(capacity, () -> {
            grown.incrementAndGet();
            return 0;  // at its maximum
        });
        SharedCredits.Member a = shared.join(8, 4, () -> { });
        assertEquals(1, a.credits().initialGrant(), "one to begin with; more as its messages arrive");
        assertEquals(capacity - r - 1, shared.tokens());
        assertTrue(a.credits().messageArrived());
        a.messageArrived();  // it sends: its share is capacity - r - cushion = r + 9, its window 8, so it is promised 8
        assertEquals(1 + 8, a.credits().grantNow() & ((1 << 30) - 1), "the cumulative grant: the first credit and 8 more");
        assertEquals(capacity - r - 1 - 8, shared.tokens());
        SharedCredits.Member b = shared.join(8, 4, () -> { });
        assertNotNull(b, "9 beyond two reserves and the cushion: a holds at most 8, b finds 1");
        assertEquals(0, grown.get());
        // a may keep what it was promised unused for good: a third would leave nothing for b, or for itself
        assertNull(shared.join(8, 4, () -> { }), "no room for a third while a holds its window");
        assertEquals(1, grown.get(), "the queue was asked to grow first");
        a.leave();
        assertNotNull(shared.join(8, 4, () -> { }), "the first one's reserve and promises came back");
    }

    @Test
    void aQueueThatCanGrowAdmitsSixtyFourClientsWhoseWindowsTogetherExceedItsMaximum() {
        // each takes its reserve and one credit: 64 x (RECEIVES_RESERVED + 1) plus the cushion fit 384
        int max = 6 * 64;
        int[] capacity = {64};
        SharedCredits shared = new SharedCredits(64, () -> {
            if (capacity[0] + 64 > max) return 0;
            capacity[0] += 64;
            return 64;
        });
        for (int i = 0; i < 64; i++) assertNotNull(shared.join(8, 4, () -> { }), "client " + i + " of 64, " + shared);
        assertTrue(capacity[0] <= max && 64 * 8 > capacity[0], "windows together exceed the queue: " + capacity[0]);
    }

    @Test
    void clientsTogetherNeverExceedTheQueueAndEachKeepsGoing() {
        simulate(new Random(28), false);
    }

    /**
     * Clients that are done stop sending and keep their connections (the 64-client device test
     * stalled so: the finished ones held the queue's receives as credits they would never use,
     * and the last three clients waited for a credit forever).
     */
    @Test
    void clientsThatStopSendingDoNotStarveThoseStillSending() {
        simulate(new Random(64), true);
    }

    private static void simulate(Random random, boolean clientsStop) {
        for (int round = 0; round < 50; round++) {
            int clients = 2 + random.nextInt(30);
            int window = 1 + random.nextInt(16);
            int depth = SharedCredits.CUSHION * clients + random.nextInt(clients * window);
            int[] posted = {depth};
            SharedCredits shared = new SharedCredits(depth, () -> 0);
            List<Client> all = new ArrayList<>();
            for (int i = 0; i < clients; i++) {
                SharedCredits.Member m = shared.join(window, 4, () -> { });
                if (m != null) all.add(new Client(m));  // a refused one never sends: its connect request was rejected
            }
            assertTrue(all.size() >= Math.min(clients, depth / (window + SharedCredits.CUSHION)),
                    "round " + round + ": " + all.size() + " of " + clients + " admitted with depth " + depth);
            clients = all.size();
            for (Client c : all) c.goal = clientsStop ? 1 + random.nextInt(200) : 200;
            for (int step = 0; step < 400_000 && all.stream().anyMatch(c -> c.delivered < c.goal); step++) {
                Client c = all.get(random.nextInt(clients));
                switch (random.nextInt(4)) {
                    case 0 -> {  // the client sends a message (one that is done stops, if clients stop)
                        if ((!clientsStop || c.delivered < c.goal) && c.credits.tryTake()) {
                            assertTrue(posted[0] > 0, "round " + round + ": a message met an empty shared receive queue");
                            posted[0]--;
                            assertTrue(c.member.credits().messageArrived(), "a message without a credit");
                            c.member.messageArrived();
                            c.held++;
                            c.delivered++;
                        }
                    }
                    case 1 -> {  // the server's application releases one of its messages
                        if (c.held > 0) {
                            c.held--;
                            posted[0]++;
                            shared.reposted(1);
                        }
                    }
                    case 2 -> {  // the server grants
                        int imm = c.member.credits().grantNow();
                        if (imm != 0) c.controls.add(imm);
                    }
                    default -> {  // the client takes a grant; the server's control message completes
                        Integer imm = c.controls.poll();
                        if (imm != null) {
                            assertTrue(c.credits.controlArrived(imm) >= 0);
                            c.member.credits().controlCompleted();
                        }
                    }
                }
                long promised = all.stream().mapToLong(x -> x.member.credits().peerOutstanding()).sum();
                assertTrue(posted[0] - promised >= (long) Credits.RECEIVES_RESERVED * clients,
                        "round " + round + ": the reserves for control messages are always posted");
            }
            for (Client c : all) {
                assertTrue(c.delivered >= c.goal, "round " + round + ": a client stalled at " + c.delivered + " of " + c.goal + "; "
                        + c.member + ", its credits " + c.credits);
            }
        }
    }

    private static final class Client {
        final SharedCredits.Member member;
        /** The client's view: what the server granted it. */
        final Credits credits;
        final Deque<Integer> controls = new ArrayDeque<>();
        int held;
        long delivered, goal;

        Client(SharedCredits.Member member) {
            this.member = member;
            this.credits = new Credits(4, member.credits().initialGrant());
        }
    }
}
