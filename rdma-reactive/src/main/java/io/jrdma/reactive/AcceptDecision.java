package io.jrdma.reactive;

import java.nio.charset.StandardCharsets;

/** What a server that speaks its peers' own protocol answers to a {@link ConnectRequest}. */
public sealed interface AcceptDecision {
    /**
     * Accept, with these bytes as the accept's private data (at most 196 on RoCE and InfiniBand; may be empty).
     *
     * @param privateData the bytes the client receives; copied. Longer than 196 bytes, the accept
     *                    fails and the connection is aborted
     * @return the decision
     */
    static AcceptDecision accept(byte[] privateData) {
        return new Accept(privateData.clone());
    }

    /**
     * Reject; the client gets {@code reason} (UTF-8, at most 148 bytes) as the reject's private data, and the server logs it.
     *
     * @param reason why; its UTF-8 bytes beyond the 148th are cut off on the wire
     * @return the decision
     */
    static AcceptDecision reject(String reason) {
        return new Reject(reason);
    }

    /**
     * The decision to accept.
     *
     * @param privateData the accept's private data; copied
     */
    record Accept(byte[] privateData) implements AcceptDecision {
        /** Copies {@code privateData}. */
        public Accept {
            privateData = privateData.clone();
        }

        /** {@return a copy of the accept's private data} */
        @Override
        public byte[] privateData() {
            return privateData.clone();
        }
    }

    /**
     * The decision to reject.
     *
     * @param reason why, for the client and the server's log
     */
    record Reject(String reason) implements AcceptDecision {
        /** {@return the reason as UTF-8, all of it (the reject carries at most the first 148 bytes)} */
        public byte[] bytes() {
            return reason.getBytes(StandardCharsets.UTF_8);
        }
    }
}
