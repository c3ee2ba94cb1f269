package io.jrdma.ffm;

/**
 * An RDMA device as listed by {@code ibv_get_device_list}.
 *
 * @param name          kernel device name, e.g. {@code rxe0} or {@code mlx5_0}
 * @param nodeGuid      node GUID (host order)
 * @param nodeType      {@code ibv_node_type}: 1 = CA
 * @param transportType {@code ibv_transport_type}: 0 = InfiniBand (also RoCE)
 * @param ibdevPath     sysfs path of the device
 */
public record DeviceInfo(String name, long nodeGuid, int nodeType, int transportType, String ibdevPath) {
    /** {@return the node GUID in four colon-separated groups, as sysfs shows it: {@code 0002:c903:0001:2345}} */
    public String guidString() {
        String h = String.format("%016x", nodeGuid);
        return h.substring(0, 4) + ":" + h.substring(4, 8) + ":" + h.substring(8, 12) + ":" + h.substring(12);
    }
}
