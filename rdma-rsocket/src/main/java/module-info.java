/**
 * RSocket over RDMA: rsocket-java's transport SPI ({@code ClientTransport}, {@code ServerTransport},
 * {@code DuplexConnection}) on the exported API of {@code io.jrdma.reactive}, one RSocket frame per
 * RDMA message, its demand bound to the peer's receiver credits. What it does, an application could.
 */
module io.jrdma.rsocket {
    requires transitive io.jrdma.reactive;
    requires transitive rsocket.core;      // automatic module (rsocket-java's Automatic-Module-Name)
    requires transitive io.netty.buffer;   // automatic module: frames are ByteBufs
    requires io.netty.common;              // automatic module: their reference counting
    requires static transitive org.jspecify;  // annotations only: not needed at run time
    exports io.jrdma.rsocket;
}
