package io.jrdma.ffm;

import static io.jrdma.ffm.abi.VerbsDevice.*;

import java.lang.foreign.MemorySegment;

/**
 * {@code struct ibv_device_attr}: the limits and capabilities of a device.
 *
 * @param firmwareVersion firmware version string
 * @param nodeGuid        node GUID, as a number (the field is big-endian)
 * @param sysImageGuid    system image GUID, as a number
 * @param maxMrSize       largest memory region that can be registered, in bytes
 * @param pageSizeCap     supported memory page sizes, as a bit mask of sizes
 * @param vendorId        IEEE vendor ID
 * @param vendorPartId    the vendor's part ID
 * @param hardwareVersion hardware version
 * @param maxQp           most QPs
 * @param maxQpWr         most outstanding WRs on any work queue
 * @param deviceCapFlags  {@code enum ibv_device_cap_flags} bits
 * @param maxSge          most SGEs per WR (non-RD QPs)
 * @param maxSgeRd        most SGEs per WR on RD QPs
 * @param maxCq           most CQs
 * @param maxCqe          most entries per CQ
 * @param maxMr           most memory regions
 * @param maxPd           most protection domains
 * @param maxQpRdAtom     most RDMA READs/atomics a QP can have outstanding as target (responder)
 * @param maxResRdAtom    most RDMA READ/atomic target resources of the whole device
 * @param maxQpInitRdAtom most RDMA READs/atomics a QP can have outstanding as initiator
 * @param atomicCap       {@code enum ibv_atomic_cap}: none, within this HCA, or global
 * @param maxAh           most address handles
 * @param maxSrq          most shared receive queues
 * @param maxSrqWr        most WRs per SRQ
 * @param maxSrqSge       most SGEs per SRQ WR
 * @param maxPkeys        size of the P_Key table (partitions)
 * @param localCaAckDelay local CA ACK delay code (4.096 µs × 2^value)
 * @param physPortCount   number of physical ports
 */
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

    /** {@return whether the device executes RDMA atomics (atomic_cap is not IBV_ATOMIC_NONE)} */
    public boolean supportsAtomics() {
        return atomicCap != IBV_ATOMIC_NONE;
    }
}
