/* ds-math-unary.h: the formula of every unary elementwise function, written once for every
 * backend.
 *
 * Each entry is X(ID, COST, COEF, EXPR). EXPR is an expression in `x` (the element), `a` and
 * `b` (the coefficients) and `T` (the element type, a typedef the instantiating code gives),
 * calling only the DS_M_* primitives below. A backend defines those primitives for each type it
 * computes in, then expands the list into its loops or device functions: the CPU kernels
 * (backends/cpu, float32 and float64) and the CUDA kernels (backends/cuda, float32) evaluate
 * the same formula and differ only in how they compute exp, sin or a division.
 *
 * COST says how dear one element is: CHEAP (a few flops) or MATH (a libm-class function), which
 * sizes a CPU thread's share. COEF says where `a` and `b` come from: NONE (unused), CLIP (the
 * bounds a_min and a_max), ACT (an activation's alpha and beta), SLOPE (a slope in `a`).
 *
 * Primitives: DS_M_DIV(p, q), DS_M_EXP, DS_M_EXPM1, DS_M_LOG, DS_M_LOG1P, DS_M_LOG2,
 * DS_M_LOG10, DS_M_SQRT, DS_M_CBRT, DS_M_TANH, DS_M_ERF, DS_M_FABS, DS_M_FLOOR, DS_M_CEIL,
 * DS_M_RINT, DS_M_TRUNC, DS_M_ROUND (half away from zero), DS_M_SIN, DS_M_COS, DS_M_TAN,
 * DS_M_ASIN, DS_M_ACOS, DS_M_ATAN, DS_M_SINH, DS_M_COSH, DS_M_ASINH, DS_M_ACOSH, DS_M_ATANH; the
 * activation list also takes DS_M_SIGMOID (an overflow-free logistic) and DS_M_SOFTRELU
 * (log(1 + e^x), x itself above 20, as MXNet).
 *
 * Header only, and valid C and C++, so nvcc reads it as the C compilers do. Where a formula
 * compares, NaN falls through to a branch that keeps it (MXNet's and ONNX's behaviour).
 */
#pragma once

/* max(0, min(1, alpha * v + beta)), NaN kept. */
#define DS_MATH_HARD_SIGMOID(v, alpha, beta)                                                       \
  ((alpha) * (v) + (beta) > 1 ? (T)1 : ((alpha) * (v) + (beta) < 0 ? (T)0 : (alpha) * (v) + (beta)))

/* SELU's fixed constants (LeakyReLU's selu; the selu op takes them as attributes). */
#define DS_MATH_SELU_ALPHA  1.6732632423543772848170429916717
#define DS_MATH_SELU_LAMBDA 1.0507009873554804934193349852946

/* The ops of the same name (engine/ops/ds-ops-elemwise.h), with MXNet's mshadow formulas and
 * ONNX's for the activations with coefficients. Each ID is the op's DS_OP_ id. */
#define DS_MATH_UNARY(X)                                                                           \
  X(RELU, CHEAP, NONE, x > 0 ? x : (T)0)                                                           \
  X(SIGMOID, MATH, NONE, DS_M_DIV((T)1, (T)1 + DS_M_EXP(-x)))                                      \
  X(TANH, MATH, NONE, DS_M_TANH(x))                                                                \
  X(EXP, MATH, NONE, DS_M_EXP(x))                                                                  \
  X(EXPM1, MATH, NONE, DS_M_EXPM1(x))                                                              \
  X(LOG, MATH, NONE, DS_M_LOG(x))                                                                  \
  X(SQRT, CHEAP, NONE, DS_M_SQRT(x))                                                               \
  X(RSQRT, CHEAP, NONE, DS_M_DIV((T)1, DS_M_SQRT(x)))                                              \
  X(SQUARE, CHEAP, NONE, x * x)                                                                    \
  X(ABS, CHEAP, NONE, DS_M_FABS(x))                                                                \
  X(NEGATIVE, CHEAP, NONE, -x)                                                                     \
  X(RECIPROCAL, CHEAP, NONE, DS_M_DIV((T)1, x))                                                    \
  X(ERF, MATH, NONE, DS_M_ERF(x))                                                                  \
  X(CLIP, CHEAP, CLIP, x > b ? b : (x < a ? a : x))                                                \
  X(FLOOR, CHEAP, NONE, DS_M_FLOOR(x))                                                             \
  X(CEIL, CHEAP, NONE, DS_M_CEIL(x))                                                               \
  X(RINT, CHEAP, NONE, DS_M_RINT(x))                                                               \
  X(SIGN, CHEAP, NONE, x > 0 ? (T)1 : (x < 0 ? (T)-1 : x))                                         \
  X(SIN, MATH, NONE, DS_M_SIN(x))                                                                  \
  X(COS, MATH, NONE, DS_M_COS(x))                                                                  \
  X(TAN, MATH, NONE, DS_M_TAN(x))                                                                  \
  X(ARCSIN, MATH, NONE, DS_M_ASIN(x))                                                              \
  X(ARCCOS, MATH, NONE, DS_M_ACOS(x))                                                              \
  X(ARCTAN, MATH, NONE, DS_M_ATAN(x))                                                              \
  X(SINH, MATH, NONE, DS_M_SINH(x))                                                                \
  X(COSH, MATH, NONE, DS_M_COSH(x))                                                                \
  X(ARCSINH, MATH, NONE, DS_M_ASINH(x))                                                            \
  X(ARCCOSH, MATH, NONE, DS_M_ACOSH(x))                                                            \
  X(ARCTANH, MATH, NONE, DS_M_ATANH(x))                                                            \
  X(SOFTSIGN, CHEAP, NONE, DS_M_DIV(x, (T)1 + DS_M_FABS(x)))                                       \
  X(LOGICAL_NOT, CHEAP, NONE, x == 0 ? (T)1 : (T)0)                                                \
  /* x * hard_sigmoid(x) with alpha 1/6, beta 1/2, taken as (x + 3) / 6: exact near -3 */          \
  X(HARD_SWISH, CHEAP, NONE, x * DS_MATH_HARD_SIGMOID(x + (T)3, (T)1 / (T)6, (T)0))                \
  X(HARD_SIGMOID, CHEAP, ACT, DS_MATH_HARD_SIGMOID(x, a, b))                                       \
  X(SELU, MATH, ACT, x > 0 ? b * x : b * a * DS_M_EXPM1(x))                                        \
  X(CELU, MATH, ACT, x > 0 ? x : a * DS_M_EXPM1(DS_M_DIV(x, a)))                                   \
  X(THRESHOLDED_RELU, CHEAP, ACT, x > a ? x : (T)0)                                                \
  X(SHRINK, CHEAP, ACT, x < -a ? x + b : (x > a ? x - b : (T)0))                                   \
  /* MXNet's: round goes half away from zero, fix toward zero; degrees and radians scale in */     \
  /* double and round once */                                                                      \
  X(LOG1P, MATH, NONE, DS_M_LOG1P(x))                                                              \
  X(LOG2, MATH, NONE, DS_M_LOG2(x))                                                                \
  X(LOG10, MATH, NONE, DS_M_LOG10(x))                                                              \
  X(CBRT, MATH, NONE, DS_M_CBRT(x))                                                                \
  X(RCBRT, MATH, NONE, DS_M_DIV((T)1, DS_M_CBRT(x)))                                               \
  X(TRUNC, CHEAP, NONE, DS_M_TRUNC(x))                                                             \
  X(FIX, CHEAP, NONE, DS_M_TRUNC(x))                                                               \
  X(ROUND, CHEAP, NONE, DS_M_ROUND(x))                                                             \
  X(DEGREES, CHEAP, NONE, (T)(57.295779513082320876798 * (double)x))                               \
  X(RADIANS, CHEAP, NONE, (T)(0.017453292519943295769237 * (double)x))

/* Activation's act_types and LeakyReLU's formulas where they differ from the ops above
 * (float32 only). Activation's relu keeps NaN; its sigmoid is the overflow-free one. */
#define DS_MATH_ACTIVATION(X)                                                                      \
  X(ACT_RELU, CHEAP, NONE, (x > 0 || x != x) ? x : (T)0)                                           \
  X(ACT_SIGMOID, MATH, NONE, DS_M_SIGMOID(x))                                                      \
  X(ACT_SOFTRELU, MATH, NONE, DS_M_SOFTRELU(x))                                                    \
  /* log(1 / (1 + e^-x)) = -softrelu(-x) */                                                        \
  X(ACT_LOG_SIGMOID, MATH, NONE, -DS_M_SOFTRELU(-x))                                               \
  X(ACT_MISH, MATH, NONE, x * DS_M_TANH(DS_M_SOFTRELU(x)))                                         \
  X(LEAKY, CHEAP, SLOPE, x > 0 ? x : x * a)                                                        \
  X(LEAKY_ELU, MATH, SLOPE, x > 0 ? x : a * DS_M_EXPM1(x))                                         \
  X(LEAKY_SELU, MATH, NONE,                                                                        \
    (T)DS_MATH_SELU_LAMBDA * (x > 0 ? x : (T)DS_MATH_SELU_ALPHA * DS_M_EXPM1(x)))                  \
  /* the erf form: x Phi(x) */                                                                     \
  X(LEAKY_GELU, MATH, NONE, (T)0.5 * x * ((T)1 + DS_M_ERF(x * (T)0.70710678118654752)))

/* Every function's index, for tables and switches. */
#define DS_MATH_UNARY_ENUM(ID, COST, COEF, EXPR) DS_MATH_UN_##ID,
typedef enum {
  DS_MATH_UNARY(DS_MATH_UNARY_ENUM) DS_MATH_ACTIVATION(DS_MATH_UNARY_ENUM) DS_MATH_UN_COUNT
} DsMathUnaryFn;
#undef DS_MATH_UNARY_ENUM

/* Whether function `fn` is of cost class MATH. */
#define DS_MATH_UNARY_IS_MATH(ID, COST, COEF, EXPR) (DS_MATH_COST_##COST && fn == DS_MATH_UN_##ID) ||
#define DS_MATH_COST_CHEAP                          0
#define DS_MATH_COST_MATH                           1
static inline int ds_math_unary_is_costly(DsMathUnaryFn fn)
{
  return DS_MATH_UNARY(DS_MATH_UNARY_IS_MATH) DS_MATH_ACTIVATION(DS_MATH_UNARY_IS_MATH) 0;
}
#undef DS_MATH_UNARY_IS_MATH
