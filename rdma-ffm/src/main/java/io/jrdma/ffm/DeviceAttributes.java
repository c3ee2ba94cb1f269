package io.jrdma.ffm;

import static io.jrdma.ffm.abi.Verbs.*;

import java.lang.foreign.MemorySegment;

/** {@code struct ibv_device_attr}: the limits and capabilities of a device. */
public record DeviceAttributes(
        String firmwareVersion, long nodeGuid, long sysImageGuid, long maxMrSize, long pageSizeCap,
        int vendorId, int vendorPartId, int hardwareVersion, int maxQp, int maxQpWr, int deviceCapFlags,
        int maxSge, int maxSgeRd, int maxCq, int maxCqe, int maxMr, int maxPd, int maxQpRdAtom,
        int maxResRdAtom, int maxQpInitRdAtom, int atomicCap, int maxAh, int maxSrq, int maxSrqWr,
        int maxSrqSge, int maxPkeys, int localCaAckDelay, int physPortCount) {

    static DeviceAttributes read(MemorySegment a) {
        return new DeviceAttributes(
                a.getString(ibv_device_attr_fw_ver),
                (long) ibv_device_attr_node_guid.get(a),
                (long) ibv_device_attr_sys_image_guid.get(a),
                (long) ibv_device_attr_max_mr_size.get(a),
                (long) ibv_device_attr_page_size_cap.get(a),
                (int) ibv_device_attr_vendor_id.get(a),
                (int) ibv_device_attr_vendor_part_id.get(a),
                (int) ibv_device_attr_hw_ver.get(a),
                (int) ibv_device_attr_max_qp.get(a),
                (int) ibv_device_attr_max_qp_wr.get(a),
                (int) ibv_device_attr_device_cap_flags.get(a),
                (int) ibv_device_attr_max_sge.get(a),
                (int) ibv_device_attr_max_sge_rd.get(a),
                (int) ibv_device_attr_max_cq.get(a),
                (int) ibv_device_attr_max_cqe.get(a),
                (int) ibv_device_attr_max_mr.get(a),
                (int) ibv_device_attr_max_pd.get(a),
                (int) ibv_device_attr_max_qp_rd_atom.get(a),
                (int) ibv_device_attr_max_res_rd_atom.get(a),
                (int) ibv_device_attr_max_qp_init_rd_atom.get(a),
                (int) ibv_device_attr_atomic_cap.get(a),
                (int) ibv_device_attr_max_ah.get(a),
                (int) ibv_device_attr_max_srq.get(a),
                (int) ibv_device_attr_max_srq_wr.get(a),
                (int) ibv_device_attr_max_srq_sge.get(a),
                Short.toUnsignedInt((short) ibv_device_attr_max_pkeys.get(a)),
                Byte.toUnsignedInt((byte) ibv_device_attr_local_ca_ack_delay.get(a)),
                Byte.toUnsignedInt((byte) ibv_device_attr_phys_port_cnt.get(a)));
    }

    /** Whether the device executes RDMA atomics (atomic_cap is not IBV_ATOMIC_NONE). */
    public boolean supportsAtomics() {
        return atomicCap != IBV_ATOMIC_NONE;
    }
}
