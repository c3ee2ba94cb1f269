package io.jrdma.test;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import org.jspecify.annotations.NullMarked;
import org.junit.jupiter.api.Test;

/** The test kit's API is null-marked like jrdma's: Kotlin tests see its types as non-null. */
class NullMarkedTest {
    @Test
    void thePackageIsNullMarked() {
        assertNotNull(RdmaLab.class.getPackage().getAnnotation(NullMarked.class));
    }
}
