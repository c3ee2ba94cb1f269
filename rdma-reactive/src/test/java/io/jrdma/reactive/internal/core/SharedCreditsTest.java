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
    void aNewcomerGetsAnEqualShareOfWhatIsFreeAndTheQueueGrowsOnceWhenTheReserveDoesNotFit() {
        AtomicInteger grown = new AtomicInteger();
        int r = Credits.RECEIVES_RESERVED;
        SharedCredits shared = new SharedCredits(3 * r + 10, () -> {
            grown.incrementAndGet();
            return 0;  // at its maximum
        });
        SharedCredits.Member a = shared.join(8, 4, () -> { });
        assertEquals(8, a.credits().initialGrant(), "2r + 10 left after its reserve, r + 9 beyond the cushion (r + 1): the whole window");
        SharedCredits.Member b = shared.join(8, 4, () -> { });
        assertEquals(1, b.credits().initialGrant(), "r + 6 left, 6 after its reserve, 1 beyond the cushion");
        SharedCredits.Member c = shared.join(8, 4, () -> { });
        assertNotNull(c, "the cushion: one more always fits");
        assertEquals(0, shared.tokens());
        assertNull(shared.join(8, 4, () -> { }), "no room for a fourth reserve");
        assertEquals(1, grown.get(), "the queue was asked to grow first");
        a.leave();
        assertNotNull(shared.join(8, 4, () -> { }), "the first one's reserve and promises came back");
    }

    @Test
    void clientsTogetherNeverExceedTheQueueAndEachKeepsGoing() {
        Random random = new Random(28);
        for (int round = 0; round < 50; round++) {
            int clients = 2 + random.nextInt(30);
            int window = 1 + random.nextInt(16);
            // more than the cushion beyond the reserves: a queue that holds no more than that stalls once its grants are spent
            int depth = SharedCredits.CUSHION * (clients + 1) + random.nextInt(clients * window);
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
            int goal = 200;
            for (int step = 0; step < 400_000 && all.stream().anyMatch(c -> c.delivered < goal); step++) {
                Client c = all.get(random.nextInt(clients));
                switch (random.nextInt(4)) {
                    case 0 -> {  // the client sends a message
                        if (c.credits.tryTake()) {
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
            for (Client c : all) assertTrue(c.delivered >= goal, "round " + round + ": a client stalled at " + c.delivered);
        }
    }

    private static final class Client {
        final SharedCredits.Member member;
        /** The client's view: what the server granted it. */
        final Credits credits;
        final Deque<Integer> controls = new ArrayDeque<>();
        int held;
        long delivered;

        Client(SharedCredits.Member member) {
            this.member = member;
            this.credits = new Credits(4, member.credits().initialGrant());
        }
    }
}
