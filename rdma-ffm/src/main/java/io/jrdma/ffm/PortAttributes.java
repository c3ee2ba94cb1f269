package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDevice.*;

import java.lang.foreign.MemorySegment;

/**
 * {@code struct ibv_port_attr}, as filled by the provider's real {@code query_port}.
 *
 * @param state                {@code enum ibv_port_state}: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE ({@link #stateName()})
 * @param maxMtu               the largest MTU the port supports, an {@code ibv_mtu} code ({@link Mtu#of})
 * @param activeMtu            the active MTU, an {@code ibv_mtu} code ({@link #activeMtuBytes()})
 * @param gidTableLength       entries in the GID table
 * @param portCapFlags         {@code enum ibv_port_cap_flags} bits
 * @param maxMessageSize       the longest message, in bytes
 * @param badPkeyCounter       packets dropped for a bad P_Key
 * @param qkeyViolationCounter datagrams dropped for a wrong Q_Key
 * @param pkeyTableLength      entries in the P_Key table
 * @param lid                  base LID (InfiniBand; 0 on RoCE)
 * @param smLid                LID of the subnet manager
 * @param lmc                  LID mask control: the port answers to 2^lmc LIDs from {@code lid}
 * @param maxVlNum             virtual lanes supported (a code)
 * @param smSl                 service level to reach the subnet manager
 * @param subnetTimeout        subnet propagation delay code (4.096 µs × 2^value)
 * @param initTypeReply        the initialization the subnet manager performed
 * @param activeWidth          active link width code (1 = 1x, 2 = 4x, 4 = 8x, 8 = 12x, 16 = 2x)
 * @param activeSpeed          active per-lane link speed code (see ibv_query_port(3))
 * @param physState            physical port state (5 = LinkUp)
 * @param linkLayer            {@code IBV_LINK_LAYER_*}: 1 InfiniBand, 2 Ethernet (RoCE), 0 unspecified ({@link #linkLayerName()})
 * @param flags                {@code ibv_port_attr.flags}, e.g. IBV_QPF_GRH_REQUIRED
 * @param portCapFlags2        {@code enum ibv_port_cap_flags2} bits
 */
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

    /** {@return whether the port is ACTIVE: able to send and receive} */
    public boolean isActive() {
        return state == IBV_PORT_ACTIVE;
    }

    /** {@return the state's name: DOWN, INIT, ARMED or ACTIVE, else {@code "state <n>"}} */
    public String stateName() {
        return switch (state) {
            case IBV_PORT_DOWN -> "DOWN";
            case IBV_PORT_INIT -> "INIT";
            case IBV_PORT_ARMED -> "ARMED";
            case IBV_PORT_ACTIVE -> "ACTIVE";
            default -> "state " + state;
        };
    }

    /** {@return {@code Ethernet} (RoCE) or {@code InfiniBand}, else {@code "link layer <n>"}} */
    public String linkLayerName() {
        return switch (linkLayer) {
            case IBV_LINK_LAYER_ETHERNET -> "Ethernet";
            case IBV_LINK_LAYER_INFINIBAND, 0 -> "InfiniBand";
            default -> "link layer " + linkLayer;
        };
    }

    /** {@return the active path MTU in bytes (the {@code ibv_mtu} enum decoded), 0 for an unknown code} */
    public int activeMtuBytes() {
        return Mtu.bytes(activeMtu);
    }
}
