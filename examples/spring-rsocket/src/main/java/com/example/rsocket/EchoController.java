package com.example.rsocket;

import org.springframework.messaging.handler.annotation.MessageMapping;
import org.springframework.stereotype.Controller;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The application's RSocket routes, the same whatever the transport underneath. */
@Controller
public class EchoController {

    /** Request-response. */
    @MessageMapping("echo")
    public Mono<String> echo(String text) {
        return Mono.just("echo " + text);
    }

    /** Request-stream: {@code n} items, numbered from 1. */
    @MessageMapping("count")
    public Flux<Item> count(int n) {
        return Flux.range(1, n).map(i -> new Item(i, "item " + i));
    }

    /** Request-channel: each word that comes in goes back in upper case. */
    @MessageMapping("uppercase")
    public Flux<String> uppercase(Flux<String> words) {
        return words.map(String::toUpperCase);
    }
}
