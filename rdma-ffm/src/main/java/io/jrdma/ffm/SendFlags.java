package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDataPath.*;

/** {@code enum ibv_send_flags}, as int constants so they combine without allocation. */
public final class SendFlags {
    private SendFlags() {}

    /** Wait for previous RDMA READs/atomics before this WR. */
    public static final int FENCE = IBV_SEND_FENCE;
    /** Generate a completion (needed when the QP is not signal-all). */
    public static final int SIGNALED = IBV_SEND_SIGNALED;
    /** Wake a receiver that armed its CQ for solicited events only. */
    public static final int SOLICITED = IBV_SEND_SOLICITED;
    /** Copy the payload into the WQE: the buffer may be reused as soon as the post returns. */
    public static final int INLINE = IBV_SEND_INLINE;
}
