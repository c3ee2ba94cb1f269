package io.jrdma.reactive.internal.loop;

import io.jrdma.ffm.PollSet;
import io.jrdma.ffm.Wakeup;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What a {@link Loop} waits on in poll(2): its wakeup, the completion channel of each device it
 * serves and the async event fd of each device whose events it reads. The rules:
 * <ul>
 * <li>loop thread only: the loop syncs the set with its devices and event sources
 *     ({@link #sync}) before it waits, whenever they changed; other threads only signal the wakeup;</li>
 * <li>an fd joins the set once and stays until the loop closes (a device's channel leaves as the
 *     loop closes it, {@link #remove});</li>
 * <li>a readable channel's event is taken only to re-enable its notification: the CQ it names is
 *     polled in the loop's next pass; a readable async event fd is serviced at once;</li>
 * <li>a wait allocates nothing: a wake-up walks arrays that only a sync rebuilds.</li>
 * </ul>
 */
final class LoopFds {
    private final PollSet pollSet;
    private final Map<LoopDevice, Integer> channelSlots = new HashMap<>();
    private final Map<DeviceDomain, Integer> asyncSlots = new HashMap<>();
    // the same as arrays, rebuilt when the poll set changes: a wake-up walks them without an iterator
    private LoopDevice[] channelDevices = new LoopDevice[0];
    private int[] channelSlotOf = new int[0];
    private DeviceDomain[] asyncDomains = new DeviceDomain[0];
    private int[] asyncSlotOf = new int[0];

    LoopFds(Wakeup wakeup) {
        this.pollSet = new PollSet(wakeup);
    }

    /** Adds the channel of each of {@code current} and the async event fd of each of {@code sources} not in the set yet. */
    void sync(List<LoopDevice> current, List<DeviceDomain> sources) {
        for (LoopDevice d : current) channelSlots.computeIfAbsent(d, x -> pollSet.add(x.channel.fd()));
        for (DeviceDomain d : sources) asyncSlots.computeIfAbsent(d, x -> pollSet.add(x.context().asyncEventFd()));
        channelDevices = channelSlots.keySet().toArray(LoopDevice[]::new);
        channelSlotOf = new int[channelDevices.length];
        for (int i = 0; i < channelDevices.length; i++) channelSlotOf[i] = channelSlots.get(channelDevices[i]);
        asyncDomains = asyncSlots.keySet().toArray(DeviceDomain[]::new);
        asyncSlotOf = new int[asyncDomains.length];
        for (int i = 0; i < asyncDomains.length; i++) asyncSlotOf[i] = asyncSlots.get(asyncDomains[i]);
    }

    /**
     * Waits up to {@code wait}, then takes the completion events and async events that are there;
     * {@return false if the wait ran out with no fd ready (the wakeup's included)}
     */
    boolean await(Duration wait) {
        if (pollSet.await(wait) == 0) return false;
        for (int i = 0; i < channelDevices.length; i++) {
            // the CQ it names is polled in the next pass; taking the event only re-enables notification
            if (pollSet.isReadable(channelSlotOf[i])) channelDevices[i].channel.takeEvent();
        }
        for (int i = 0; i < asyncDomains.length; i++) {
            if (pollSet.isReadable(asyncSlotOf[i])) asyncDomains[i].serviceAsyncEvents();
        }
        return true;
    }

    /** Takes {@code d}'s channel out of the set, before the loop closes it. */
    void remove(LoopDevice d) {
        Integer slot = channelSlots.remove(d);
        if (slot != null) pollSet.remove(slot);
    }

    void close() {
        pollSet.close();
    }
}
