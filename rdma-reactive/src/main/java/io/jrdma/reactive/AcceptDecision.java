package io.jrdma.reactive;

import java.nio.charset.StandardCharsets;

/** What a server that speaks its peers' own protocol answers to a {@link ConnectRequest}. */
public sealed interface AcceptDecision {
    /** Accept, with these bytes as the accept's private data (at most 196 on RoCE and InfiniBand; may be empty). */
    static AcceptDecision accept(byte[] privateData) {
        return new Accept(privateData.clone());
    }

    /** Reject; the client gets {@code reason} (UTF-8, at most 148 bytes) as the reject's private data, and the server logs it. */
    static AcceptDecision reject(String reason) {
        return new Reject(reason);
    }

    record Accept(byte[] privateData) implements AcceptDecision {
        public Accept {
            privateData = privateData.clone();
        }

        @Override
        public byte[] privateData() {
            return privateData.clone();
        }
    }

    record Reject(String reason) implements AcceptDecision {
        public byte[] bytes() {
            return reason.getBytes(StandardCharsets.UTF_8);
        }
    }
}
