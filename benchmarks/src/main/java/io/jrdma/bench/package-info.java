/**
 * Benchmarks: JMH benchmarks of what runs without a device (host), and the bench mains the lab
 * runs beside perftest ({@code lab/bench}). Nothing here is a test or part of the API.
 */
package io.jrdma.bench;
