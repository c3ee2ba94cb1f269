package io.jrdma.spring.rsocket;

import static org.assertj.core.api.Assertions.assertThat;

import io.jrdma.reactive.PollingMode;
import io.jrdma.reactive.RdmaClient;
import io.rsocket.core.RSocketServer;
import io.rsocket.frame.decoder.PayloadDecoder;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.rsocket.autoconfigure.RSocketMessagingAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketServerAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketStrategiesAutoConfiguration;
import org.springframework.boot.rsocket.context.RSocketServerBootstrap;
import org.springframework.boot.rsocket.netty.NettyRSocketServerFactory;
import org.springframework.boot.rsocket.server.RSocketServerCustomizer;
import org.springframework.boot.rsocket.server.RSocketServerFactory;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.LifecycleProcessor;
import org.springframework.test.util.ReflectionTestUtils;

/**
 * Which RSocket server Boot builds with this auto-configuration, on a host without RDMA: the
 * context's lifecycle processor is one that starts nothing, so the server is made (the factory's
 * {@code create}, which touches no device) but never listens.
 */
class RdmaRSocketAutoConfigurationTest {
    private final ApplicationContextRunner contexts = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(RSocketStrategiesAutoConfiguration.class, RSocketMessagingAutoConfiguration.class,
                    RSocketServerAutoConfiguration.class, RdmaRSocketAutoConfiguration.class))
            .withBean("lifecycleProcessor", LifecycleProcessor.class, StartsNothing::new);

    @Test
    void theRdmaPortMakesBootsBootstrapServeOverRdma() {
        contexts.withPropertyValues("jrdma.rsocket.server.host=10.77.0.2", "jrdma.rsocket.server.port=0").run(context -> {
            assertThat(context).hasSingleBean(RSocketServerFactory.class).hasSingleBean(RSocketServerBootstrap.class);
            assertThat(context.getBean(RSocketServerFactory.class)).isInstanceOf(RdmaRSocketServerFactory.class);
            Object server = ReflectionTestUtils.getField(context.getBean(RSocketServerBootstrap.class), "server");
            assertThat(server).isInstanceOf(RdmaRSocketServer.class);
            assertThat(((RdmaRSocketServer) server).address()).as("not listening before start()").isNull();
        });
    }

    @Test
    void bootsTcpServerDoesNotStartBesideTheRdmaOne() {
        contexts.withPropertyValues("jrdma.rsocket.server.port=7000", "spring.rsocket.server.port=7000").run(context -> {
            assertThat(context).hasSingleBean(RSocketServerFactory.class).hasSingleBean(RSocketServerBootstrap.class)
                    .doesNotHaveBean(NettyRSocketServerFactory.class);
            assertThat(context.getBean(RSocketServerFactory.class)).isInstanceOf(RdmaRSocketServerFactory.class);
        });
    }

    @Test
    void withoutTheRdmaPortBootsOwnServerIsUntouched() {
        contexts.withPropertyValues("spring.rsocket.server.port=0").run(context -> {
            assertThat(context).doesNotHaveBean(RdmaRSocketServerFactory.class).hasSingleBean(RSocketServerBootstrap.class);
            assertThat(context.getBean(RSocketServerFactory.class)).isInstanceOf(NettyRSocketServerFactory.class);
            assertThat(context).hasSingleBean(RdmaClient.class);
        });
        contexts.run(context -> assertThat(context).doesNotHaveBean(RSocketServerFactory.class).doesNotHaveBean(RSocketServerBootstrap.class));
    }

    @Test
    void propertiesConfigureTheServerAndTheClient() {
        contexts.withPropertyValues("jrdma.rsocket.server.host=10.77.0.2", "jrdma.rsocket.server.port=7000",
                        "jrdma.rsocket.server.polling-mode=event", "jrdma.rsocket.server.buffer-size=64KB", "jrdma.rsocket.server.buffers=32",
                        "jrdma.rsocket.server.start-timeout=90s",
                        "jrdma.rsocket.client.local-address=10.77.0.1", "jrdma.rsocket.client.polling-mode=busy",
                        "jrdma.rsocket.client.buffer-size=16KB")
                .run(context -> {
                    RdmaRSocketServerFactory factory = context.getBean(RdmaRSocketServerFactory.class);
                    assertThat(factory.server().configuration().pollingMode()).isEqualTo(PollingMode.EVENT);
                    assertThat(factory.server().configuration().bufferSize()).isEqualTo(64 << 10);
                    assertThat(factory.server().configuration().bufferCount()).isEqualTo(32);
                    assertThat(factory.lifecycleTimeout()).hasSeconds(90);
                    RdmaClient client = context.getBean(RdmaClient.class);
                    assertThat(client.configuration().pollingMode()).isEqualTo(PollingMode.BUSY);
                    assertThat(client.configuration().bufferSize()).isEqualTo(16 << 10);
                    assertThat(client.configuration().bufferCount()).as("jrdma's default")
                            .isEqualTo(RdmaClient.create().configuration().bufferCount());
                });
    }

    @Test
    void bootsServerCustomizersAndPayloadDecoderApplyToTheRdmaServer() {
        contexts.withPropertyValues("jrdma.rsocket.server.port=7000")
                .withBean("fragments", RSocketServerCustomizer.class, () -> server -> server.fragment(1024))
                .run(context -> {
                    RSocketServer rsocket = (RSocketServer) ReflectionTestUtils.getField(
                            ReflectionTestUtils.getField(context.getBean(RSocketServerBootstrap.class), "server"), "rsocket");
                    assertThat(ReflectionTestUtils.getField(rsocket, "mtu")).isEqualTo(1024);
                    assertThat(ReflectionTestUtils.getField(rsocket, "payloadDecoder")).as("as Boot's own server decodes")
                            .isSameAs(PayloadDecoder.ZERO_COPY);
                });
    }

    /** A context's lifecycle processor that starts and stops nothing: no server listens. */
    static final class StartsNothing implements LifecycleProcessor {
        @Override
        public void onRefresh() {
        }

        @Override
        public void onClose() {
        }

        @Override
        public void start() {
        }

        @Override
        public void stop() {
        }

        @Override
        public boolean isRunning() {
            return false;
        }
    }
}
