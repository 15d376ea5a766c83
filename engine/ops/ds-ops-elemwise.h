/* ds-ops-elemwise.h: elementwise, broadcast and scalar ops: ids and parsed attributes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"
#include "ds-math-binary.h"
#include "ds-tensor.h"

/* The unary math ops without attributes, one line each: X(ID, MXNet name). Each one's formula
 * is core/ds-math-unary.h's entry of the same ID, which every backend instantiates; its
 * definition (one input, same shape, elementwise) is ds-ops-elemwise.c's DS_UNARY_MATH_OP. */
#define DS_OPS_UNARY_MATH(X)                                                                  \
  X(RELU, "relu")                                                                             \
  X(SIGMOID, "sigmoid")                                                                       \
  X(TANH, "tanh")                                                                             \
  X(EXP, "exp")                                                                               \
  X(EXPM1, "expm1")                                                                           \
  X(LOG, "log")                                                                               \
  X(SQRT, "sqrt")                                                                             \
  X(RSQRT, "rsqrt")                                                                           \
  X(SQUARE, "square")                                                                         \
  X(ABS, "abs")                                                                               \
  X(NEGATIVE, "negative")                                                                     \
  X(RECIPROCAL, "reciprocal")                                                                 \
  X(ERF, "erf")                                                                               \
  X(FLOOR, "floor")                                                                           \
  X(CEIL, "ceil")                                                                             \
  X(RINT, "rint")                                                                             \
  X(SIGN, "sign")                                                                             \
  X(SIN, "sin")                                                                               \
  X(COS, "cos")                                                                               \
  X(TAN, "tan")                                                                               \
  X(ARCSIN, "arcsin")                                                                         \
  X(ARCCOS, "arccos")                                                                         \
  X(ARCTAN, "arctan")                                                                         \
  X(SINH, "sinh")                                                                             \
  X(COSH, "cosh")                                                                             \
  X(ARCSINH, "arcsinh")                                                                       \
  X(ARCCOSH, "arccosh")                                                                       \
  X(ARCTANH, "arctanh")                                                                       \
  X(SOFTSIGN, "softsign")                                                                     \
  X(LOGICAL_NOT, "logical_not")                                                               \
  X(HARD_SWISH, "hard_swish")                                                                 \
  X(LOG1P, "log1p")                                                                           \
  X(LOG2, "log2")                                                                             \
  X(LOG10, "log10")                                                                           \
  X(CBRT, "cbrt")                                                                             \
  X(RCBRT, "rcbrt")                                                                           \
  X(TRUNC, "trunc")                                                                           \
  X(FIX, "fix")                                                                               \
  X(ROUND, "round")                                                                           \
  X(DEGREES, "degrees")                                                                       \
  X(RADIANS, "radians")

/* The ops with a scalar attribute, one line each: X(ID, MXNet name, its legacy name, the
 * core/ds-math-binary.h function it applies, whether the scalar is the left operand). The
 * parser fills the function and the side into DsScalarParam, so a backend runs them all with
 * one kernel. (The registry's own lists read the first two columns.) */
#define DS_OPS_SCALAR(X)                                                                      \
  X(PLUS_SCALAR, "_plus_scalar", "_PlusScalar", ADD, false)                                   \
  X(MINUS_SCALAR, "_minus_scalar", "_MinusScalar", SUB, false)                                \
  X(RMINUS_SCALAR, "_rminus_scalar", "_RMinusScalar", SUB, true)                              \
  X(MUL_SCALAR, "_mul_scalar", "_MulScalar", MUL, false)                                      \
  X(DIV_SCALAR, "_div_scalar", "_DivScalar", DIV, false)                                      \
  X(RDIV_SCALAR, "_rdiv_scalar", "_RDivScalar", DIV, true)                                    \
  X(POWER_SCALAR, "_power_scalar", "_PowerScalar", POW, false)                                \
  X(MAXIMUM_SCALAR, "_maximum_scalar", "_MaximumScalar", MAX, false)                          \
  X(MINIMUM_SCALAR, "_minimum_scalar", "_MinimumScalar", MIN, false)                          \
  X(EQUAL_SCALAR, "_equal_scalar", "_EqualScalar", EQ, false)                                 \
  X(GREATER_SCALAR, "_greater_scalar", "_GreaterScalar", GT, false)                           \
  X(LESSER_SCALAR, "_lesser_scalar", "_LesserScalar", LT, false)                              \
  X(NOT_EQUAL_SCALAR, "_not_equal_scalar", "_NotEqualScalar", NE, false)                      \
  X(GREATER_EQUAL_SCALAR, "_greater_equal_scalar", "_GreaterEqualScalar", GE, false)          \
  X(LESSER_EQUAL_SCALAR, "_lesser_equal_scalar", "_LesserEqualScalar", LE, false)             \
  X(MOD_SCALAR, "_mod_scalar", "_ModScalar", MOD, false)                                      \
  X(RMOD_SCALAR, "_rmod_scalar", "_RModScalar", MOD, true)                                    \
  X(RPOWER_SCALAR, "_rpower_scalar", "_RPowerScalar", POW, true)                              \
  X(LOGICAL_AND_SCALAR, "_logical_and_scalar", "_LogicalAndScalar", AND, false)               \
  X(LOGICAL_OR_SCALAR, "_logical_or_scalar", "_LogicalOrScalar", OR, false)                   \
  X(LOGICAL_XOR_SCALAR, "_logical_xor_scalar", "_LogicalXorScalar", XOR, false)               \
  X(HYPOT_SCALAR, "_hypot_scalar", "_npi_hypot_scalar", HYPOT, false)

/* The ops that apply a binary function to two operands broadcast together, one line each:
 * X(ID, MXNet name, the core/ds-math-binary.h function, its dtype rule). The rules: SAME
 * (operands and result of one dtype), LHS (the result takes lhs's dtype: broadcast_power),
 * BOOL (operands of one dtype, a bool result: NumPy's comparisons), INTEGER (SAME, integer
 * dtypes only: the shifts and bitwise ops). Every backend makes its kernels from this list;
 * the definitions (ds-ops-elemwise.c) add aliases and shape and dtype rules. */
#define DS_OPS_BINARY(X)                                                                      \
  X(ELEMWISE_ADD, "elemwise_add", ADD, SAME)                                                  \
  X(ELEMWISE_SUB, "elemwise_sub", SUB, SAME)                                                  \
  X(ELEMWISE_MUL, "elemwise_mul", MUL, SAME)                                                  \
  X(ELEMWISE_DIV, "elemwise_div", DIV, SAME)                                                  \
  X(BROADCAST_ADD, "broadcast_add", ADD, SAME)                                                \
  X(BROADCAST_SUB, "broadcast_sub", SUB, SAME)                                                \
  X(BROADCAST_MUL, "broadcast_mul", MUL, SAME)                                                \
  X(BROADCAST_DIV, "broadcast_div", DIV, SAME)                                                \
  X(BROADCAST_MAXIMUM, "broadcast_maximum", MAX, SAME)                                        \
  X(BROADCAST_MINIMUM, "broadcast_minimum", MIN, SAME)                                        \
  X(BROADCAST_POWER, "broadcast_power", POW, LHS)                                             \
  X(BROADCAST_EQUAL, "broadcast_equal", EQ, SAME)                                             \
  X(BROADCAST_NOT_EQUAL, "broadcast_not_equal", NE, SAME)                                     \
  X(BROADCAST_GREATER, "broadcast_greater", GT, SAME)                                         \
  X(BROADCAST_GREATER_EQUAL, "broadcast_greater_equal", GE, SAME)                             \
  X(BROADCAST_LESSER, "broadcast_lesser", LT, SAME)                                           \
  X(BROADCAST_LESSER_EQUAL, "broadcast_lesser_equal", LE, SAME)                               \
  X(BROADCAST_MOD, "broadcast_mod", MOD, SAME)                                                \
  X(BROADCAST_FMOD, "_npi_fmod", FMOD, SAME)                                                  \
  X(BROADCAST_LOGICAL_AND, "broadcast_logical_and", AND, SAME)                                \
  X(BROADCAST_LOGICAL_OR, "broadcast_logical_or", OR, SAME)                                   \
  X(BROADCAST_LOGICAL_XOR, "broadcast_logical_xor", XOR, SAME)                                \
  X(BROADCAST_PRELU, "broadcast_prelu", PRELU, SAME)                                          \
  X(BITWISE_LEFT_SHIFT, "_npi_bitwise_left_shift", SHL, INTEGER)                              \
  X(BITWISE_RIGHT_SHIFT, "_npi_bitwise_right_shift", SHR, INTEGER)                            \
  X(BITWISE_AND, "_npi_bitwise_and", BITAND, INTEGER)                                         \
  X(BITWISE_OR, "_npi_bitwise_or", BITOR, INTEGER)                                            \
  X(BITWISE_XOR, "_npi_bitwise_xor", BITXOR, INTEGER)                                         \
  X(NP_EQUAL, "_npi_equal", EQ, BOOL)                                                         \
  X(NP_NOT_EQUAL, "_npi_not_equal", NE, BOOL)                                                 \
  X(NP_GREATER, "_npi_greater", GT, BOOL)                                                     \
  X(NP_GREATER_EQUAL, "_npi_greater_equal", GE, BOOL)                                         \
  X(NP_LESS, "_npi_less", LT, BOOL)                                                           \
  X(NP_LESS_EQUAL, "_npi_less_equal", LE, BOOL)                                              \
  X(BROADCAST_HYPOT, "broadcast_hypot", HYPOT, SAME)                                          \
  X(HYPOT, "_hypot", HYPOT, SAME)

#define DS_OPS_ELEMWISE(X)                                                                    \
  DS_OPS_BINARY(X)                                                                            \
  DS_OPS_SCALAR(X)                                                                            \
  DS_OPS_UNARY_MATH(X)                                                                        \
  X(CLIP, "clip")                                                                             \
  X(IDENTITY, "_copy")                                                                        \
  X(BLOCK_GRAD, "BlockGrad")                                                                  \
  X(ZEROS_LIKE, "zeros_like")                                                                 \
  X(ONES_LIKE, "ones_like")                                                                   \
  X(WHERE, "where")                                                                           \
  X(ADD_N, "add_n")                                                                           \
  X(DIV_SQRT_DIM, "_contrib_div_sqrt_dim")                                                   \
  X(NP_WHERE, "_npi_where")                                                                   \
  X(HARD_SIGMOID, "hard_sigmoid")                                                             \
  X(SELU, "selu")                                                                             \
  X(CELU, "celu")                                                                             \
  X(THRESHOLDED_RELU, "thresholded_relu")                                                     \
  X(SHRINK, "shrink")                                                                         \
  X(ISNAN, "_npi_isnan")                                                                      \
  X(ISINF, "_npi_isinf")                                                                      \
  X(ISPOSINF, "_npi_isposinf")                                                                \
  X(ISNEGINF, "_npi_isneginf")                                                                \
  X(NP_SUM, "_npi_sum")                                                                       \
  X(NP_MEAN, "_npi_mean")                                                                     \
  X(NP_MAX, "_npi_max")                                                                       \
  X(NP_MIN, "_npi_min")                                                                       \
  X(NP_PROD, "_npi_prod")                                                                     \
  X(SUM_SQUARE, "sum_square")                                                                 \
  X(L1_NORM, "l1_norm")                                                                       \
  X(L2_NORM, "l2_norm")                                                                       \
  X(LOG_SUM, "log_sum")                                                                       \
  X(LOG_SUM_EXP, "log_sum_exp")                                                               \
  X(NP_ARGMAX, "_npi_argmax")                                                                 \
  X(NP_ARGMIN, "_npi_argmin")                                                                 \
  X(ARGMAX, "argmax")                                                                         \
  X(ARGMIN, "argmin")                                                                         \
  X(ARGMAX_CHANNEL, "argmax_channel")                                                         \
  X(DYNAMIC_SUM, "_contrib_dynamic_sum")                                                      \
  X(QUANTIZE_LINEAR, "quantize_linear")                                                       \
  X(DEQUANTIZE_LINEAR, "dequantize_linear")                                                   \
  X(DYNAMIC_QUANTIZE_LINEAR, "dynamic_quantize_linear")

/* Parsed attribute structs for these ops follow. */

/* The scalar ops (_plus_scalar, _rdiv_scalar, _greater_scalar...). `is_int` (MXNet 1.8+,
 * default true) says whether the scalar is an integer: an integer input with a non-integer
 * scalar gives a float64 result, as in NumPy. */
typedef struct {
  double scalar;
  bool is_int;
  DsMathBinaryFn fn; /* what the op computes: x (fn) scalar */
  bool reverse;      /* scalar (fn) x instead */
} DsScalarParam;

/* clip: both bounds are required. */
typedef struct {
  double a_min;
  double a_max;
} DsClipParam;

/* add_n (ElementWiseSum): the number of summed inputs. */
typedef struct {
  int num_args;
} DsAddNParam;

/* The activations with parameters (hard_sigmoid, selu, celu, thresholded_relu, shrink): two
 * coefficients whose meaning and defaults depend on the op (ds-ops-elemwise.c says which). */
typedef struct {
  double alpha;
  double beta;
} DsActParam;

/* The NumPy-style reductions (_npi_sum, _npi_prod, l2_norm, log_sum_exp...): `n_axes` -1 (the
 * attribute missing or None) reduces every axis, 0 ("()") none. Unlike MXNet's sum, reducing
 * every axis without keepdims gives a 0-dim result, as NumPy and ONNX do. */
typedef struct {
  int n_axes;
  int64_t axes[DS_MAX_NDIM];
  bool keepdims;
} DsNpReduceParam;

/* _contrib_dynamic_sum: a sum over axes given as a tensor (ONNX's ReduceSum-13 with axes
 * computed at run time). An empty axes tensor reduces every axis, or none with
 * noop_with_empty_axes. */
typedef struct {
  bool keepdims;
  bool noop_with_empty_axes;
} DsDynamicSumParam;

/* quantize_linear (data, scale, zero_point): saturate(rint(data / scale) + zero_point) in the
 * zero point's dtype (uint8 or int8); dequantize_linear: (data - zero_point) * scale in the
 * scale's dtype. A scale (and zero point) of one value applies to every element, a 1-D one of
 * length C to the slices along `axis` (ONNX's per-axis quantization, default axis 1). */
typedef struct {
  int axis;
} DsQuantizeLinearParam;

/* _npi_argmax, _npi_argmin: the int64 index of the first extreme along `axis` (the last one with
 * select_last_index); without an axis, of the flattened input. NaN counts as the extreme. */
typedef struct {
  bool has_axis;
  int axis;
  bool keepdims;
  bool select_last_index;
} DsArgReduceParam;

/* argmax, argmin (MXNet's legacy ReduceAxisParam) reuse DsArgReduceParam without
 * select_last_index: the index of the first extreme along `axis`, or of the flattened input
 * without one, stored in the input's dtype (MXNet's ElemwiseType: float32 indices for float32
 * data). argmax_channel is argmax with axis 1 and no attributes. */

/* Marks the axes a DsNpReduceParam reduces for a rank-`ndim` input; false if an axis is out of
 * range or repeated. */
static inline bool ds_np_reduce_axes_mask(const DsNpReduceParam *p, int ndim, bool *reduced)
{
  for (int d = 0; d < ndim; d++)
    reduced[d] = p->n_axes < 0;
  for (int i = 0; i < p->n_axes; i++) {
    int64_t a = p->axes[i] < 0 ? p->axes[i] + ndim : p->axes[i];
    if (a < 0 || a >= ndim || reduced[a])
      return false;
    reduced[a] = true;
  }
  return true;
}
