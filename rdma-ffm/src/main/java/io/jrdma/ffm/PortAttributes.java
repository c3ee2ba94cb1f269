package io.jrdma.ffm;

import static io.jrdma.ffm.abi.Verbs.*;

import java.lang.foreign.MemorySegment;

/** {@code struct ibv_port_attr}, as filled by the provider's real {@code query_port}. */
public record PortAttributes(
        int state, int maxMtu, int activeMtu, int gidTableLength, int portCapFlags, long maxMessageSize,
        int badPkeyCounter, int qkeyViolationCounter, int pkeyTableLength, int lid, int smLid, int lmc,
        int maxVlNum, int smSl, int subnetTimeout, int initTypeReply, int activeWidth, int activeSpeed,
        int physState, int linkLayer, int flags, int portCapFlags2) {

    static PortAttributes read(MemorySegment p) {
        return new PortAttributes(
                (int) ibv_port_attr_state.get(p),
                (int) ibv_port_attr_max_mtu.get(p),
                (int) ibv_port_attr_active_mtu.get(p),
                (int) ibv_port_attr_gid_tbl_len.get(p),
                (int) ibv_port_attr_port_cap_flags.get(p),
                Integer.toUnsignedLong((int) ibv_port_attr_max_msg_sz.get(p)),
                (int) ibv_port_attr_bad_pkey_cntr.get(p),
                (int) ibv_port_attr_qkey_viol_cntr.get(p),
                Short.toUnsignedInt((short) ibv_port_attr_pkey_tbl_len.get(p)),
                Short.toUnsignedInt((short) ibv_port_attr_lid.get(p)),
                Short.toUnsignedInt((short) ibv_port_attr_sm_lid.get(p)),
                Byte.toUnsignedInt((byte) ibv_port_attr_lmc.get(p)),
                Byte.toUnsignedInt((byte) ibv_port_attr_max_vl_num.get(p)),
                Byte.toUnsignedInt((byte) ibv_port_attr_sm_sl.get(p)),
                Byte.toUnsignedInt((byte) ibv_port_attr_subnet_timeout.get(p)),
                Byte.toUnsignedInt((byte) ibv_port_attr_init_type_reply.get(p)),
                Byte.toUnsignedInt((byte) ibv_port_attr_active_width.get(p)),
                Byte.toUnsignedInt((byte) ibv_port_attr_active_speed.get(p)),
                Byte.toUnsignedInt((byte) ibv_port_attr_phys_state.get(p)),
                Byte.toUnsignedInt((byte) ibv_port_attr_link_layer.get(p)),
                Byte.toUnsignedInt((byte) ibv_port_attr_flags.get(p)),
                Short.toUnsignedInt((short) ibv_port_attr_port_cap_flags2.get(p)));
    }

    public boolean isActive() {
        return state == IBV_PORT_ACTIVE;
    }

    public String stateName() {
        return switch (state) {
            case IBV_PORT_DOWN -> "DOWN";
            case IBV_PORT_INIT -> "INIT";
            case IBV_PORT_ARMED -> "ARMED";
            case IBV_PORT_ACTIVE -> "ACTIVE";
            default -> "state " + state;
        };
    }

    public String linkLayerName() {
        return switch (linkLayer) {
            case IBV_LINK_LAYER_ETHERNET -> "Ethernet";
            case IBV_LINK_LAYER_INFINIBAND, 0 -> "InfiniBand";
            default -> "link layer " + linkLayer;
        };
    }

    /** The active path MTU in bytes (the {@code ibv_mtu} enum decoded). */
    public int activeMtuBytes() {
        return Mtu.bytes(activeMtu);
    }
}
