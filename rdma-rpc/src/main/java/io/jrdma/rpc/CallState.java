package io.jrdma.rpc;

import org.jspecify.annotations.Nullable;

/**
 * The lifecycle of one attempt of an RPC call on the client: what it holds, when it gives that
 * back, and who tells its caller how it ended. {@link PendingCall} does the I/O (credits, staging,
 * the SEND, the answer) and asks this class, under this object's monitor, what each event means.
 * <p>
 * Rules:
 * <ol>
 * <li>The states go forward only, {@code CREDIT -> STAGING -> BUFFER -> SENT}, and any of them to
 *     {@code DONE}, which is final. Every transition holds the monitor.</li>
 * <li>What the attempt holds (a credit, a staging range with a reference on the exposed buffer,
 *     a queued credit or staging waiter) is given back exactly once, by the move to {@code DONE},
 *     through {@link #giveBack(boolean, long, long, CreditGate.Waiter, RangeAllocator.Waiter)}
 *     outside the monitor. A grant that arrives after {@code DONE} goes back at once.</li>
 * <li>Withdrawn (a cancel or the timeout) before its SEND, the attempt moves to {@code DONE} at
 *     once; withdrawn after it, the attempt is only marked abandoned and keeps what it holds until
 *     the answer or the connection's end: the server may still READ the payload or WRITE the
 *     window.</li>
 * <li>The caller gets exactly one terminal signal, from the first of: the timeout
 *     ({@link #timedOut()}), an answer ({@link #answered()}), the connection's end or a failure
 *     ({@link #ended()}); a cancel takes the caller's place and nothing is signalled after it.
 *     Whether the caller was told already is read in the same monitor step as the state change:
 *     read apart, a timeout in between was followed by a second signal (an answer, or the SEND's
 *     failure, issue 14).</li>
 * <li>An answer to an abandoned attempt is late: it gives back what the attempt held and tells
 *     nobody.</li>
 * </ol>
 * {@code CallStateTest} proves these rules on virtual time, without a device.
 */
abstract class CallState<B> {
    enum State { CREDIT, STAGING, BUFFER, SENT, DONE }

    /** What an answer means: tell the caller, a late answer (the caller was told), or nothing (over already). */
    enum Answer { TELL, LATE, OVER }

    /** What {@link #giveBack(boolean)} did: nothing (over already), gave back, gave back a call whose caller was told. */
    private enum GivenBack { OVER, GIVEN_BACK, GIVEN_BACK_TOLD }

    // guarded by this
    State state = State.CREDIT;
    private boolean abandoned;
    private CreditGate.@Nullable Waiter creditWaiter;
    private RangeAllocator.@Nullable Waiter stagingWaiter;
    private boolean hasCredit;
    long stagingOffset = -1;
    private long stagingBytes;

    /** Gives back what the attempt held, once, outside the monitor (rule 2); offset -1: no staging range. */
    abstract void giveBack(boolean credit, long offset, long bytes, CreditGate.@Nullable Waiter creditWaiter,
                           RangeAllocator.@Nullable Waiter stagingWaiter);

    /** Under the monitor, when the attempt begins (a live list entry, so the connection's end finds it). */
    abstract void began();

    /** Under the monitor, with a staging range granted: takes a reference on the exposed buffer and fills the range; false if the buffer is gone. */
    abstract boolean stage(long offset);

    /** Under the monitor, the attempt's SEND of {@code b}: posted here so that no withdrawal slips in between (rule 3). */
    abstract void send(B b);

    // ------------------------------------------------------------------------------ the way forward

    /** The caller's first request; false if the attempt is over already (a cancel came first). */
    final synchronized boolean begin() {
        if (state == State.DONE) return false;
        began();
        return true;
    }

    /** A credit waiter queued; false if the attempt ended meanwhile (the waiter is then the caller's to cancel). */
    final synchronized boolean waitingForCredit(CreditGate.Waiter w) {
        if (state == State.DONE) return false;
        if (state == State.CREDIT) creditWaiter = w;
        return true;
    }

    /** A credit granted; false if the attempt ended meanwhile (the credit is then the caller's to release). */
    final synchronized boolean credited() {
        if (state == State.DONE) return false;
        hasCredit = true;
        creditWaiter = null;
        state = State.STAGING;
        return true;
    }

    /** A staging waiter queued; false if the attempt ended meanwhile (the waiter is the caller's to cancel). */
    final synchronized boolean waitingForStaging(RangeAllocator.Waiter w) {
        if (state == State.DONE) return false;
        stagingWaiter = w;
        return true;
    }

    /** What {@link #staged} found. */
    enum Staged { READY, OVER, BUFFER_GONE }

    /**
     * A staging range granted ({@code offset} -1: none was needed). {@link Staged#OVER}: the
     * attempt ended meanwhile, the range is the caller's to free; {@link Staged#BUFFER_GONE}: the
     * connection closed and freed the exposed buffer, the range is the caller's to free and the
     * attempt fails holding only its credit.
     */
    final synchronized Staged staged(long offset, long bytes) {
        if (state == State.DONE) return Staged.OVER;
        stagingWaiter = null;
        state = State.BUFFER;
        if (offset < 0) return Staged.READY;
        if (!stage(offset)) return Staged.BUFFER_GONE;
        stagingOffset = offset;
        stagingBytes = bytes;
        return Staged.READY;
    }

    /** Posts the SEND ({@link #send}) unless the attempt ended meanwhile; then {@code SENT}. */
    final synchronized void post(B b) {
        if (state == State.DONE) return;
        send(b);
        state = State.SENT;
    }

    // ------------------------------------------------------------------------------ the ends

    /** The timeout: true if the caller is to be told (rule 4); false if it was over, or told of a cancel. */
    final boolean timedOut() {
        return giveBack(true) != GivenBack.OVER;
    }

    /** A cancel: the caller gave up and is told nothing (rule 4). */
    final void cancelled() {
        giveBack(true);
    }

    /** The answer arrived (rule 5). */
    final Answer answered() {
        return switch (giveBack(false)) {
            case OVER -> Answer.OVER;
            case GIVEN_BACK_TOLD -> Answer.LATE;
            case GIVEN_BACK -> Answer.TELL;
        };
    }

    /** The connection ended, or a step failed: true if the caller is to be told (rule 4). */
    final boolean ended() {
        return giveBack(false) == GivenBack.GIVEN_BACK;
    }

    /**
     * Rules 2 and 3 in one monitor step. {@code unlessSent} (a withdrawal): a sent attempt is only
     * marked abandoned; abandoned already (a cancel, then the timeout), the caller was told once
     * and this is {@code OVER}.
     */
    private GivenBack giveBack(boolean unlessSent) {
        boolean credit;
        long offset;
        long bytes;
        CreditGate.Waiter cw;
        RangeAllocator.Waiter sw;
        GivenBack given;
        synchronized (this) {
            if (state == State.DONE) return GivenBack.OVER;
            if (unlessSent && state == State.SENT) {
                if (abandoned) return GivenBack.OVER;
                abandoned = true;
                return GivenBack.GIVEN_BACK;
            }
            given = abandoned ? GivenBack.GIVEN_BACK_TOLD : GivenBack.GIVEN_BACK;
            state = State.DONE;
            credit = hasCredit;
            hasCredit = false;
            offset = stagingOffset;
            bytes = stagingBytes;
            stagingOffset = -1;
            cw = creditWaiter;
            sw = stagingWaiter;
        }
        giveBack(credit, offset, bytes, cw, sw);
        return given;
    }
}
