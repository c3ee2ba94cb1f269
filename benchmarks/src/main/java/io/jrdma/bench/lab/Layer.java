package io.jrdma.bench.lab;

import java.util.Locale;

/** Which of jrdma's APIs a row runs on, at both ends. */
enum Layer {
    /** rdma-ffm's verbs objects in a tight loop, as perftest uses libibverbs: the cost of Java and FFM alone. */
    FFM,
    /** rdma-reactive's RdmaClient/RdmaServer: a Mono per operation, the in-flight depth kept by a subscriber per operation. */
    REACTIVE,
    /** rdma-kotlin's suspend functions: one coroutine per operation in flight. */
    KOTLIN;

    String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    static Layer of(String label) {
        return valueOf(label.toUpperCase(Locale.ROOT));
    }
}
