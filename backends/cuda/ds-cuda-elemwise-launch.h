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

#ifdef __cplusplus
extern "C" {
#endif

/* The most dims of a broadcast plan: DS_MAX_NDIM (ds-cuda-elemwise.c checks they agree). */
#define DS_CUDA_MAX_DIMS 8

/* Unary float32 functions. The first block follows ds-cpu-elemwise.c's unary ops; the
 * DS_CUDA_UN_ACT_* and DS_CUDA_UN_LEAKY_* ones are Activation's and LeakyReLU's formulas
 * (ds-cpu-nn.c) where they differ from those. `a` and `b` are the op's coefficients: clip's
 * bounds, the activations' alpha and beta, LeakyReLU's slope in `a`. */
typedef enum {
  DS_CUDA_UN_RELU,
  DS_CUDA_UN_SIGMOID,
  DS_CUDA_UN_TANH,
  DS_CUDA_UN_EXP,
  DS_CUDA_UN_LOG,
  DS_CUDA_UN_SQRT,
  DS_CUDA_UN_RSQRT,
  DS_CUDA_UN_SQUARE,
  DS_CUDA_UN_ABS,
  DS_CUDA_UN_NEGATIVE,
  DS_CUDA_UN_RECIPROCAL,
  DS_CUDA_UN_ERF,
  DS_CUDA_UN_CLIP,
  DS_CUDA_UN_FLOOR,
  DS_CUDA_UN_CEIL,
  DS_CUDA_UN_RINT,
  DS_CUDA_UN_SIGN,
  DS_CUDA_UN_SIN,
  DS_CUDA_UN_COS,
  DS_CUDA_UN_TAN,
  DS_CUDA_UN_ASIN,
  DS_CUDA_UN_ACOS,
  DS_CUDA_UN_ATAN,
  DS_CUDA_UN_SINH,
  DS_CUDA_UN_COSH,
  DS_CUDA_UN_ASINH,
  DS_CUDA_UN_ACOSH,
  DS_CUDA_UN_ATANH,
  DS_CUDA_UN_SOFTSIGN,
  DS_CUDA_UN_LOGICAL_NOT,
  DS_CUDA_UN_HARD_SWISH,
  DS_CUDA_UN_HARD_SIGMOID,
  DS_CUDA_UN_SELU,
  DS_CUDA_UN_CELU,
  DS_CUDA_UN_THRESHOLDED_RELU,
  DS_CUDA_UN_SHRINK,
  DS_CUDA_UN_ACT_RELU, /* Activation's relu keeps NaN */
  DS_CUDA_UN_ACT_SOFTRELU,
  DS_CUDA_UN_ACT_LOG_SIGMOID,
  DS_CUDA_UN_ACT_MISH,
  DS_CUDA_UN_LEAKY,      /* x > 0 ? x : x * a (leaky, rrelu, prelu with one slope) */
  DS_CUDA_UN_LEAKY_ELU,  /* x > 0 ? x : a * expm1(x) */
  DS_CUDA_UN_LEAKY_SELU, /* the fixed SELU constants */
  DS_CUDA_UN_LEAKY_GELU, /* the erf form */
  DS_CUDA_UN_COUNT
} DsCudaUnaryOp;

/* Binary operations (ds-cpu-elemwise.c's BinOp). The comparisons and logical ops give 0 or 1
 * in the output's dtype. */
typedef enum {
  DS_CUDA_BIN_ADD,
  DS_CUDA_BIN_SUB,
  DS_CUDA_BIN_MUL,
  DS_CUDA_BIN_DIV,
  DS_CUDA_BIN_MAX,
  DS_CUDA_BIN_MIN,
  DS_CUDA_BIN_POW,
  DS_CUDA_BIN_MOD,
  DS_CUDA_BIN_FMOD,
  DS_CUDA_BIN_PRELU,
  DS_CUDA_BIN_EQ,
  DS_CUDA_BIN_NE,
  DS_CUDA_BIN_GT,
  DS_CUDA_BIN_GE,
  DS_CUDA_BIN_LT,
  DS_CUDA_BIN_LE,
  DS_CUDA_BIN_AND,
  DS_CUDA_BIN_OR,
  DS_CUDA_BIN_XOR,
  DS_CUDA_BIN_COUNT
} DsCudaBinaryOp;

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

/* y = f(x) over n float32 elements (DsCudaUnaryOp `op`). */
cudaError_t ds_cuda_launch_unary_f32(int op, const float *x, float *y, int64_t n, float a, float b,
                                     cudaStream_t stream);

/* LeakyReLU(prelu): y = x > 0 ? x : x * gamma[(i / inner) % channels]. */
cudaError_t ds_cuda_launch_prelu_f32(const float *x, const float *gamma, float *y, int64_t n,
                                     int64_t channels, int64_t inner, cudaStream_t stream);

/* out = a (op) b over `n` output elements with operands 0 and 1 of `plan`. `t` is the
 * operands' dtype, `t_out` the output's: the same, or bool for the comparisons. float32 and
 * float64 have every op; int32 and int64 add, sub, mul, max, min, the comparisons and the
 * logical ops; bool the comparisons (of its bytes) and the logical ops; int8 and uint8 the
 * comparisons with a bool result. */
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
