package com.example.rsocket;

/**
 * One element of the {@code count} stream, encoded as CBOR by Spring's default RSocket strategies.
 *
 * @param number its place in the stream, from 1
 * @param text   what it says
 */
public record Item(int number, String text) {
}
