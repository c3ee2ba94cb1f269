package io.jrdma.ffm;

import java.nio.ByteBuffer;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * What two RC peers exchange out of band to connect their QPs by hand (as perftest does without
 * rdma_cm): QP number, starting packet sequence number, LID (InfiniBand) and GID (RoCE).
 *
 * @param qpNumber the QP's number
 * @param psn      its first send PSN, 24 bits: the receiving peer's {@code rq_psn}
 * @param lid      its port's LID (InfiniBand); 0 on RoCE
 * @param gid      its GID, 16 bytes (RoCE: the IP address); all zeros for a LID-routed path; copied
 */
public record QueuePairAddress(int qpNumber, int psn, int lid, byte[] gid) {
    /** Bytes of the wire form: QP number and PSN (4 each), LID (2), GID (16). */
    public static final int WIRE_SIZE = 4 + 4 + 2 + 16;

    /** Checks the GID length (16) and the PSN (24 bits), and copies the GID. */
    public QueuePairAddress {
        if (gid.length != 16) throw new IllegalArgumentException("a GID has 16 bytes");
        if ((psn & ~0xffffff) != 0) throw new IllegalArgumentException("a PSN has 24 bits: " + psn);
        gid = gid.clone();
    }

    /** {@return a copy of the 16 GID bytes} */
    @Override
    public byte[] gid() {
        return gid.clone();
    }

    /**
     * Big-endian wire form, {@link #WIRE_SIZE} bytes.
     *
     * @param out written at its position, in its byte order: leave it big-endian (the default)
     * @throws java.nio.BufferOverflowException when fewer than {@link #WIRE_SIZE} bytes remain
     */
    public void writeTo(ByteBuffer out) {
        out.putInt(qpNumber).putInt(psn).putShort((short) lid).put(gid);
    }

    /**
     * Reads the wire form {@link #writeTo} writes.
     *
     * @param in read at its position, in its byte order: leave it big-endian (the default)
     * @return the address
     * @throws java.nio.BufferUnderflowException when fewer than {@link #WIRE_SIZE} bytes remain
     * @throws IllegalArgumentException when the PSN read exceeds 24 bits
     */
    public static QueuePairAddress readFrom(ByteBuffer in) {
        int qpn = in.getInt();
        int psn = in.getInt();
        int lid = Short.toUnsignedInt(in.getShort());
        byte[] gid = new byte[16];
        in.get(gid);
        return new QueuePairAddress(qpn, psn, lid, gid);
    }

    @Override
    public boolean equals(@Nullable Object o) {
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
