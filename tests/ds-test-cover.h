/* ds-test-cover.h: which ops a test program tests, for the registry's coverage test
 * (tests/test_op_coverage.py), which runs the op test programs and fails for a registered op
 * without a shape rule test, without a CPU case against a reference, or with a CUDA kernel but
 * no cross-backend case.
 *
 * The shared runners note the op they run (ds-test-ops.c: every shape rule and CPU kernel
 * run through them); tests that check an op another way (a loop run against NumPy, a
 * partitioned file against the flat graph) note it themselves, after the check. */
#ifndef DS_TEST_COVER_H
#define DS_TEST_COVER_H

#include "ds-op.h"

/* Notes that this program tests op `id`'s `what`: "shape" (its shape rule), "cpu" (its CPU
 * kernel, or its run by the executor, against a reference) or "cuda" (its CUDA kernel against
 * the CPU's). With DS_OP_COVERAGE_FILE set, each (what, op) is appended to that file once as
 * "what NAME"; without it, nothing happens. */
void ds_test_cover(const char *what, DsOpId id);

#endif
