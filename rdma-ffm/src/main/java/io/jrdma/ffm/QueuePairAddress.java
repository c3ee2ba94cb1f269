package io.jrdma.ffm;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * What two RC peers exchange out of band to connect their QPs by hand (as perftest does without
 * rdma_cm): QP number, starting packet sequence number, LID (InfiniBand) and GID (RoCE).
 */
public record QueuePairAddress(int qpNumber, int psn, int lid, byte[] gid) {
    public static final int WIRE_SIZE = 4 + 4 + 2 + 16;

    public QueuePairAddress {
        if (gid.length != 16) throw new IllegalArgumentException("a GID has 16 bytes");
        if ((psn & ~0xffffff) != 0) throw new IllegalArgumentException("a PSN has 24 bits: " + psn);
        gid = gid.clone();
    }

    @Override
    public byte[] gid() {
        return gid.clone();
    }

    /** Big-endian wire form, {@link #WIRE_SIZE} bytes. */
    public void writeTo(ByteBuffer out) {
        out.putInt(qpNumber).putInt(psn).putShort((short) lid).put(gid);
    }

    public static QueuePairAddress readFrom(ByteBuffer in) {
        int qpn = in.getInt();
        int psn = in.getInt();
        int lid = Short.toUnsignedInt(in.getShort());
        byte[] gid = new byte[16];
        in.get(gid);
        return new QueuePairAddress(qpn, psn, lid, gid);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof QueuePairAddress a && a.qpNumber == qpNumber && a.psn == psn && a.lid == lid
                && Arrays.equals(a.gid, gid);
    }

    @Override
    public int hashCode() {
        return qpNumber * 31 + psn;
    }

    @Override
    public String toString() {
        return "QPN 0x" + Integer.toHexString(qpNumber) + " PSN 0x" + Integer.toHexString(psn) + " LID " + lid + " GID "
                + Gid.format(gid);
    }
}
