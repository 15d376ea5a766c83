/* ds-cpu-gemm.h: matrix products for the CPU kernels, the GEMM sizes a convolution performs,
 * and the vectorisable float math the neural-network kernels share.
 *
 * Every kernel that multiplies matrices goes through ds_cpu_sgemm(), which routes a product
 * with a single row or column to sgemv: with this machine's OpenBLAS 0.3.21 a one-row sgemm
 * took 5 to 8 times as long as the matching sgemv (1 x 768 x 768: 231 us against 28 us), and
 * batch-1 FullyConnected and the recurrent step of a batch-1 RNN are exactly that shape. BLAS runs
 * its own threads, so these functions must not be called from inside a ds_parallel_for body.
 *
 * The ds_vmath_* functions are branch-free float approximations of exp, tanh, erf... written
 * so that GCC vectorises the loops that call them (libm's scalar calls block that). Their
 * error is within a few float ulps of libm's in the ranges that matter (documented per
 * function), and they keep NaN and infinity behaviour. GCC turns their selects into vector
 * blends only under -fno-trapping-math, which the kernel files that use them set by pragma.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-kernel.h"
#include "ds-op.h"
#include "ds-cpu-vmath.h"

/* Row-major C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C, where op(A) is A or its
 * transpose as `trans_a` says, and lda/ldb/ldc are the row strides (in elements) of A, B and C
 * as stored. With beta == 0, C's previous contents are ignored (NaN included). A product with
 * m == 1 or n == 1 runs as sgemv. Returns DS_STATUS_INVALID_ARGUMENT if a size does not fit
 * BLAS's int. */
DsStatus ds_cpu_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                      const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                      float *c, int64_t ldc);

/* The same in double precision (dgemm, dgemv). */
DsStatus ds_cpu_dgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
                      const double *a, int64_t lda, const double *b, int64_t ldb, double beta,
                      double *c, int64_t ldc);

/* The GEMMs a Convolution performs: `count` products of C[m x n] = W[m x k] * col[k x n], one
 * per image and group, with m = num_filter / num_group, n = the output's spatial size and
 * k = (channels / num_group) * kernel volume. */
typedef struct {
  int64_t m, n, k;
  int64_t count;
} DsConvGemmDims;

/* Fills `dims` for a Convolution with attributes `param` on data of shape `data_shape`
 * (`ndim` dims, NC + spatial). FALSE if the shape does not fit the attributes, or if
 * num_filter is 0 (the weight's: unknown here). */
bool ds_cpu_conv_gemm_dims(const DsConvolutionParam *param, const int64_t *data_shape, int ndim,
                           DsConvGemmDims *dims);

/* Kernels defined in ds-cpu-conv.c and ds-cpu-rnn.c, registered by ds_cpu_nn_register(). */
extern const DsKernel ds_cpu_convolution_kernel;
extern const DsKernel ds_cpu_rnn_kernel;
extern const DsKernel ds_cpu_recurrent_layer_kernel;

