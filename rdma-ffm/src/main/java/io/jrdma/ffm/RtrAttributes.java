package io.jrdma.ffm;

/**
 * What an RC QP needs to go INIT → RTR: the remote's address and how much it may have in flight.
 *
 * @param sgidIndex       local GID index to send from (the RoCE v2 GID of the local IP)
 * @param maxDestRdAtomic RDMA READs/atomics the remote may have outstanding at this QP
 * @param minRnrTimer     RNR NAK delay code (12 = 0.64 ms)
 */
public record RtrAttributes(QueuePairAddress remote, int port, int sgidIndex, Mtu mtu, int maxDestRdAtomic,
                            int minRnrTimer, int hopLimit, int trafficClass, int serviceLevel) {
    /** Defaults that suit RoCE and InfiniBand alike: MTU 1024, 16 reads in flight, 0.64 ms RNR delay. */
    public static RtrAttributes of(QueuePairAddress remote, int port, int sgidIndex) {
        return new RtrAttributes(remote, port, sgidIndex, Mtu.MTU_1024, 16, 12, 64, 0, 0);
    }

    public RtrAttributes mtu(Mtu m) {
        return new RtrAttributes(remote, port, sgidIndex, m, maxDestRdAtomic, minRnrTimer, hopLimit, trafficClass, serviceLevel);
    }

    public RtrAttributes maxDestRdAtomic(int n) {
        return new RtrAttributes(remote, port, sgidIndex, mtu, n, minRnrTimer, hopLimit, trafficClass, serviceLevel);
    }
}
