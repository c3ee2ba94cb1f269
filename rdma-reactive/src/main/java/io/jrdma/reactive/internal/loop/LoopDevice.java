package io.jrdma.reactive.internal.loop;

import io.jrdma.ffm.CompletionChannel;
import java.util.ArrayList;
import java.util.List;

/** One device's channel and CQs on this loop. */
final class LoopDevice {
    final DeviceDomain domain;
    final CompletionChannel channel;
    final List<LoopCq> cqs = new ArrayList<>();  // guarded by the loop's cqLock
    final QpTable<Loop.Member> members = new QpTable<>();

    LoopDevice(DeviceDomain domain, CompletionChannel channel) {
        this.domain = domain;
        this.channel = channel;
    }

    /** The members of every CQ of this device on the loop. Under the loop's cqLock. */
    List<Loop.Member> allMembers() {
        List<Loop.Member> all = new ArrayList<>();
        for (LoopCq c : cqs) all.addAll(c.members);
        return all;
    }
}
