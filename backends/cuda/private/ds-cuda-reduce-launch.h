/* ds-cuda-reduce-launch.h: the C launchers of the reduction and normalisation device code.
 *
 * Shared by ds-cuda-reduce.c (the C compiler: reads params, lays the reduction out) and
 * ds-cuda-reduce.cu (nvcc: the kernels). Only plain types cross: device pointers, sizes and
 * small structs passed by value. Every launcher queues its work on `stream` and returns the
 * launch's error without synchronising; float32 everywhere, and float64 for the axis
 * reductions.
 */
#pragma once

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"
#include "ds-math-reduce.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most dims of a reduction layout: DS_MAX_NDIM (ds-cuda-reduce.c checks they agree). */
#define DS_CUDA_RED_MAX_DIMS 8

/* An axis reduction: the input's dims, with size-1 dims dropped and neighbours of the same
 * role merged, split into kept dims (whose flat index is the output element o, in input
 * order) and reduced dims (whose flat index r runs over the `count` reduced positions); both
 * lists outermost first, with the input's element strides. Input element (o, r) sits at
 * offset(kept dims, o) + offset(reduced dims, r).
 *
 * `columns`: the innermost input dim is kept, so neighbouring outputs are neighbours in memory
 * and a warp takes 32 outputs at once; otherwise a block takes one output (a row). `splits` > 1
 * cuts each output's reduced range into that many parts whose partial results go to a
 * workspace of splits * n_out doubles, folded in order by a second kernel (deterministic,
 * unlike atomics). */
typedef struct {
  int nk, nr;
  int64_t kshape[DS_CUDA_RED_MAX_DIMS], kstride[DS_CUDA_RED_MAX_DIMS];
  int64_t rshape[DS_CUDA_RED_MAX_DIMS], rstride[DS_CUDA_RED_MAX_DIMS];
  int64_t n_out, count;
  bool columns;
  int splits;
} DsCudaReducePlan;

/* Reduces `in` into `out` (both of dtype t: float32 or float64) as `plan` says, `op` being
 * DS_MATH_RED_SUM, _MEAN, _MAX, _MIN, _PROD, _NANSUM, _NANPROD, _L1 or _L2
 * (core/ds-math-reduce.h); `partials` is the workspace
 * (NULL when plan->splits is 1). Sums accumulate in double. */
cudaError_t ds_cuda_launch_reduce(int op, DsDType t, const void *in, void *out,
                                  const DsCudaReducePlan *plan, double *partials,
                                  cudaStream_t stream);

/* Rows of `len` elements, element k of row (o, i) at o * len * inner + k * inner + i:
 * softmax (or log_softmax when `log`) of each row divided by `temperature`, of the row negated
 * when `negate` (softmin). */
cudaError_t ds_cuda_launch_softmax_f32(const float *x, float *y, int64_t outer, int64_t len,
                                       int64_t inner, float temperature, bool log, bool negate,
                                       cudaStream_t stream);

/* LayerNorm over the same rows: y = (x - mean) / sqrt(var + eps) * gamma[k] + beta[k];
 * mean and std (may be NULL) get one value per row, row (o, i) at o * inner + i. */
cudaError_t ds_cuda_launch_layer_norm_f32(const float *x, const float *gamma, const float *beta,
                                          float *y, float *mean, float *std, int64_t outer,
                                          int64_t len, int64_t inner, float eps,
                                          cudaStream_t stream);

/* BatchNorm at inference, channel c = (i / inner) % channels:
 * y = (x - mean[c]) * (gamma[c] or 1) / sqrt(var[c] + eps) + beta[c]. */
cudaError_t ds_cuda_launch_batch_norm_f32(const float *x, const float *gamma, const float *beta,
                                          const float *mean, const float *var, float *y, int64_t n,
                                          int64_t channels, int64_t inner, float eps,
                                          bool fix_gamma, cudaStream_t stream);

/* InstanceNorm: planes p of `plane` elements, each normalised by its own statistics and scaled
 * by gamma[p % channels], shifted by beta[p % channels]. */
cudaError_t ds_cuda_launch_instance_norm_f32(const float *x, const float *gamma, const float *beta,
                                             float *y, int64_t planes, int64_t plane,
                                             int64_t channels, float eps, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
