/* ds-test-cuda.h: runs an op's CUDA kernel beside its CPU kernel (the cross-backend tests).
 *
 * cuda_ready() is called first by every case: without a CUDA device it marks the case
 * skipped (g_test_skip) and returns FALSE. compare_backends() copies host inputs to the
 * device, runs the op's CUDA kernel (with the workspace it asks for), copies the outputs
 * back, runs the CPU kernel on the same inputs and compares every output element within
 * atol + rtol * |cpu| (integers and bools exactly, NaN against NaN). Outputs of
 * dynamic-shape ops are given with ndim -1; both kernels size them themselves and the
 * shapes must agree. */
#ifndef DS_TEST_CUDA_H
#define DS_TEST_CUDA_H

#include "ds-test-ops.h"

gboolean cuda_ready(void);

/* Runs op `id`'s CUDA kernel on host tensors `in`; `out` are host tensors (shapes set and
 * data allocated, or ndim -1 for dynamic outputs, which get host buffers the caller frees
 * with tensors_free). Returns the kernel's status. */
DsStatus run_cuda_kernel(DsOpId id, const void *param, const DsTensor *in, int n_in,
                         DsTensor *out, int n_out);

/* The CPU and CUDA kernels of op `id` on the same inputs; `out_like` gives each output's
 * dtype and shape (ndim -1: sized by the kernel). Fails the test, naming `what`, the output
 * and the first element that differs. */
void compare_backends(const char *what, DsOpId id, const void *param, const DsTensor *in,
                      int n_in, const DsTensor *out_like, int n_out, double atol, double rtol);

#endif
