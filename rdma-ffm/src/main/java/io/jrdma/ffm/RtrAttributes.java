package io.jrdma.ffm;

/**
 * What an RC QP needs to go INIT → RTR: the remote's address and how much it may have in flight.
 *
 * @param remote          the peer's QP number, PSN, LID and GID
 * @param port            the local port, from 1
 * @param sgidIndex       local GID index to send from (the RoCE v2 GID of the local IP)
 * @param mtu             the path MTU: at most the active MTU of both ports
 * @param maxDestRdAtomic RDMA READs/atomics the remote may have outstanding at this QP
 * @param minRnrTimer     RNR NAK delay code (12 = 0.64 ms)
 * @param hopLimit        IP hop limit (TTL) of the GRH
 * @param trafficClass    IP traffic class (DSCP and ECN bits) of the GRH
 * @param serviceLevel    service level
 */
public record RtrAttributes(QueuePairAddress remote, int port, int sgidIndex, Mtu mtu, int maxDestRdAtomic,
                            int minRnrTimer, int hopLimit, int trafficClass, int serviceLevel) {
    /**
     * Defaults that suit RoCE and InfiniBand alike: MTU 1024, 16 reads in flight, 0.64 ms RNR delay.
     * Hop limit 64, traffic class 0, service level 0.
     *
     * @param remote    the peer's QP number, PSN, LID and GID
     * @param port      the local port, from 1
     * @param sgidIndex local GID index to send from
     * @return the attributes
     */
    public static RtrAttributes of(QueuePairAddress remote, int port, int sgidIndex) {
        return new RtrAttributes(remote, port, sgidIndex, Mtu.MTU_1024, 16, 12, 64, 0, 0);
    }

    /**
     * These attributes with another path MTU.
     *
     * @param m at most the active MTU of both ports
     * @return a new value
     */
    public RtrAttributes mtu(Mtu m) {
        return new RtrAttributes(remote, port, sgidIndex, m, maxDestRdAtomic, minRnrTimer, hopLimit, trafficClass, serviceLevel);
    }

    /**
     * These attributes with another responder READ depth.
     *
     * @param n RDMA READs/atomics the remote may have outstanding at this QP
     * @return a new value
     */
    public RtrAttributes maxDestRdAtomic(int n) {
        return new RtrAttributes(remote, port, sgidIndex, mtu, n, minRnrTimer, hopLimit, trafficClass, serviceLevel);
    }

    /**
     * These attributes with another RNR NAK delay: how long a peer whose SEND finds no receive
     * posted here is asked to wait before it retries.
     *
     * @param code 0 to 31, see {@link RnrNakTimer}
     * @return a new value
     * @throws IllegalArgumentException for a code outside 0 to 31
     */
    public RtrAttributes minRnrTimer(int code) {
        RnrNakTimer.delay(code);
        return new RtrAttributes(remote, port, sgidIndex, mtu, maxDestRdAtomic, code, hopLimit, trafficClass, serviceLevel);
    }
}
