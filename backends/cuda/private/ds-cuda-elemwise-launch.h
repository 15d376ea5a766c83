/* ds-cuda-elemwise-launch.h: the C launchers of the elementwise device code.
 *
 * Shared by ds-cuda-elemwise.c (the C compiler: reads params and shapes, plans broadcasts) and
 * ds-cuda-elemwise.cu (nvcc: the kernels). Only plain types cross: pointers to device memory,
 * element counts, dtype codes and small structs passed by value to the kernels. Every launcher
 * queues its work on `stream` and returns the launch's error, without synchronising. The
 * caller has already checked dtypes and shapes; a combination a launcher has no kernel for
 * gives cudaErrorInvalidValue.
 */
#pragma once

#include <cuda_runtime_api.h>
#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"
#include "ds-math-binary.h"
#include "ds-math-unary.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The most dims of a broadcast plan: DS_MAX_NDIM (ds-cuda-elemwise.c checks they agree). */
#define DS_CUDA_MAX_DIMS 8

/* NumPy's float predicates. */
typedef enum {
  DS_CUDA_PRED_NAN,
  DS_CUDA_PRED_INF,
  DS_CUDA_PRED_POSINF,
  DS_CUDA_PRED_NEGINF,
} DsCudaPredicate;

/* Up to three operands broadcast to an output of `ndim` dims (outermost first): output
 * element i sits at element offset sum(coord[d] * stride[k][d]) of operand k, a stride being
 * 0 where operand k is broadcast. Size-1 dims are dropped and mergeable neighbours merged on
 * the host, so same-shape and scalar operands arrive as one dim. */
typedef struct {
  int ndim; /* >= 1 */
  int64_t shape[DS_CUDA_MAX_DIMS];
  int64_t stride[3][DS_CUDA_MAX_DIMS];
} DsCudaBcast;

/* y = f(x) over n float32 elements: core/ds-math-unary.h's function `fn`, with its
 * coefficients `a` and `b` (clip's bounds, an activation's alpha and beta, a slope in `a`). */
cudaError_t ds_cuda_launch_unary_f32(DsMathUnaryFn fn, const float *x, float *y, int64_t n, float a,
                                     float b, cudaStream_t stream);

/* LeakyReLU(prelu): y = x > 0 ? x : x * gamma[(i / inner) % channels]. */
cudaError_t ds_cuda_launch_prelu_f32(const float *x, const float *gamma, float *y, int64_t n,
                                     int64_t channels, int64_t inner, cudaStream_t stream);

/* out = a (op) b over `n` output elements with operands 0 and 1 of `plan`, `op` a
 * DsMathBinaryFn (core/ds-math-binary.h). `t` is the operands' dtype, `t_out` the output's:
 * the same, or bool for the comparisons. float32 and float64 have every op but the shifts;
 * int32 and int64 add, sub, mul, max, min, the comparisons and the logical ops; bool the
 * comparisons (of its bytes) and the logical ops; int8 and uint8 the comparisons with a bool
 * result. */
cudaError_t ds_cuda_launch_binary(int op, DsDType t, DsDType t_out, const void *a, const void *b,
                                  void *out, int64_t n, const DsCudaBcast *plan,
                                  cudaStream_t stream);

/* out = x (op) s, or s (op) x when `reverse`, in float32 or float64 (`t`); the scalar is
 * converted to `t` first. */
cudaError_t ds_cuda_launch_scalar(int op, DsDType t, const void *x, double s, bool reverse,
                                  void *out, int64_t n, cudaStream_t stream);

/* out = cond != 0 ? x : y, operands 0 (cond, of dtype `t_cond`), 1 and 2 of `plan`; x, y and
 * out have elements of `elem_size` bytes (1, 2, 4 or 8). */
cudaError_t ds_cuda_launch_select(DsDType t_cond, const void *cond, const void *x, const void *y,
                                  void *out, size_t elem_size, int64_t n, const DsCudaBcast *plan,
                                  cudaStream_t stream);

/* out = the sum of the n_inputs tensors of n elements each, added left to right in `t`
 * (float32 or float64), or out + that sum when `accumulate`. `inputs` is a host array of
 * device pointers. */
cudaError_t ds_cuda_launch_add_n(DsDType t, const void *const *inputs, int n_inputs,
                                 bool accumulate, void *out, int64_t n, cudaStream_t stream);

/* out[i] = the predicate on x[i] (float32 or float64), as a bool byte. */
cudaError_t ds_cuda_launch_predicate(int pred, DsDType t, const void *x, uint8_t *out, int64_t n,
                                     cudaStream_t stream);

/* n elements of `elem_size` bytes (1, 2, 4 or 8), each set to the low bytes of `cell`. */
cudaError_t ds_cuda_launch_fill(void *out, size_t elem_size, uint64_t cell, int64_t n,
                                cudaStream_t stream);

#ifdef __cplusplus
}
#endif
