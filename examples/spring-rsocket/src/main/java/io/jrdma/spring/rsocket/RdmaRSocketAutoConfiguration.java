package io.jrdma.spring.rsocket;

import io.jrdma.reactive.RdmaClient;
import io.jrdma.rsocket.RdmaServerTransport;
import io.rsocket.frame.decoder.PayloadDecoder;
import java.util.ArrayList;
import java.util.List;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.rsocket.autoconfigure.RSocketMessagingAutoConfiguration;
import org.springframework.boot.rsocket.autoconfigure.RSocketServerAutoConfiguration;
import org.springframework.boot.rsocket.context.RSocketServerBootstrap;
import org.springframework.boot.rsocket.server.RSocketServerCustomizer;
import org.springframework.boot.rsocket.server.RSocketServerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.io.buffer.NettyDataBufferFactory;
import org.springframework.messaging.rsocket.annotation.support.RSocketMessageHandler;

/**
 * RSocket over RDMA for Spring Boot: with {@code jrdma.rsocket.server.port} set, the application's
 * {@code @MessageMapping} handlers ({@link RSocketMessageHandler}'s responder) are served by an
 * {@link RdmaRSocketServerFactory}, which Boot's own {@link RSocketServerBootstrap} starts and stops
 * with the context; and an {@link RdmaClient} bean ({@code jrdma.rsocket.client.*}) is there for
 * {@code RSocketRequester.Builder.transport(RdmaClientTransport.create(rdmaClient, host, port))}.
 * <p>
 * Boot's hook is its {@link RSocketServerFactory} bean, but Boot makes the bootstrap that uses it
 * only with {@code spring.rsocket.server.port} set, a TCP or WebSocket port. Running before
 * {@link RSocketServerAutoConfiguration}, this defines both the factory and the bootstrap; Boot's
 * are {@code @ConditionalOnMissingBean}, so it then makes neither, and no TCP server, whatever
 * {@code spring.rsocket.server.port} says. Without {@code jrdma.rsocket.server.port} nothing here
 * touches Boot's server.
 */
@AutoConfiguration(after = RSocketMessagingAutoConfiguration.class, before = RSocketServerAutoConfiguration.class)
@ConditionalOnClass({RdmaServerTransport.class, RSocketMessageHandler.class})
@EnableConfigurationProperties(RdmaRSocketProperties.class)
public final class RdmaRSocketAutoConfiguration {

    /** {@return the settings every {@code RdmaClientTransport} of the application starts from} */
    @Bean
    @ConditionalOnMissingBean
    RdmaClient rdmaClient(RdmaRSocketProperties properties) {
        return properties.client().toRdmaClient();
    }

    /** The server, on when {@code jrdma.rsocket.server.port} is set and there are handlers to serve. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty("jrdma.rsocket.server.port")
    @ConditionalOnBean(RSocketMessageHandler.class)
    static class ServerConfiguration {

        @Bean
        @ConditionalOnMissingBean(RSocketServerFactory.class)
        RdmaRSocketServerFactory rdmaRSocketServerFactory(RdmaRSocketProperties properties, RSocketMessageHandler handler,
                ObjectProvider<RSocketServerCustomizer> customizers) {
            List<RSocketServerCustomizer> all = new ArrayList<>();
            // what Boot's embedded server does: payloads in Netty buffers handed on without a copy,
            // here views of the registered receive buffers, released once the handler decoded them
            if (handler.getRSocketStrategies().dataBufferFactory() instanceof NettyDataBufferFactory) {
                all.add(server -> server.payloadDecoder(PayloadDecoder.ZERO_COPY));
            }
            customizers.orderedStream().forEach(all::add);
            return new RdmaRSocketServerFactory(properties.server().toRdmaServer(), properties.server().startTimeout(), all);
        }

        @Bean
        @ConditionalOnMissingBean
        RSocketServerBootstrap rdmaRSocketServerBootstrap(RSocketServerFactory factory, RSocketMessageHandler handler) {
            return new RSocketServerBootstrap(factory, handler.responder());
        }
    }
}
