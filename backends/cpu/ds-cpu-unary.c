/* ds-cpu-unary.c: the CPU loops of core/ds-math-unary.h's unary functions.
 *
 * Each function's formula is expanded twice, once with the float32 primitives and once with the
 * float64 ones, into a plain loop GCC vectorises; the elementwise ops (ds-cpu-elemwise.c) and
 * Activation and LeakyReLU (ds-cpu-nn.c) run those loops.
 */

/* Under GCC's default -ftrapping-math the selects guarding ds-cpu-vmath.h's clamps stay
 * branches, and a loop with a branch does not vectorise; nothing here enables traps. Before
 * the includes, so that the inline math gets it too (see ds-cpu-elemwise.c). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include "ds-cpu-unary.h"

#include <math.h>

#include "ds-cpu-vmath.h"

/* The primitives for float32: libm's f-suffixed functions, and ds-cpu-vmath.h's where libm's
 * scalar calls would not vectorise. */
#define DS_M_DIV(p, q) ((p) / (q))
#define DS_M_EXP       ds_vmath_exp
#define DS_M_EXPM1     ds_vmath_expm1
#define DS_M_LOG       ds_vmath_log
#define DS_M_LOG1P     log1pf
#define DS_M_LOG2      log2f
#define DS_M_LOG10     log10f
#define DS_M_CBRT      cbrtf
#define DS_M_TRUNC     truncf
#define DS_M_ROUND     roundf
#define DS_M_SQRT      sqrtf
#define DS_M_TANH      ds_vmath_tanh
#define DS_M_ERF       ds_vmath_erf
#define DS_M_FABS      fabsf
#define DS_M_FLOOR     floorf
#define DS_M_CEIL      ceilf
#define DS_M_RINT      rintf
#define DS_M_SIN       sinf
#define DS_M_COS       cosf
#define DS_M_TAN       tanf
#define DS_M_ASIN      asinf
#define DS_M_ACOS      acosf
#define DS_M_ATAN      atanf
#define DS_M_SINH      sinhf
#define DS_M_COSH      coshf
#define DS_M_ASINH     asinhf
#define DS_M_ACOSH     acoshf
#define DS_M_ATANH     atanhf
#define DS_M_SIGMOID   ds_vmath_sigmoid
#define DS_M_SOFTRELU  ds_vmath_softrelu

#define UNARY_LOOP(P, TYPE, ID, EXPR)                                                              \
  static void P##_##ID(int64_t n, const TYPE *restrict in, TYPE *restrict out, TYPE a, TYPE b)     \
  {                                                                                                \
    typedef TYPE T;                                                                                \
    (void)a;                                                                                       \
    (void)b;                                                                                       \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T x = in[i];                                                                                 \
      out[i] = (EXPR);                                                                             \
    }                                                                                              \
  }
#define UNARY_LOOP_F32(ID, COST, COEF, EXPR) UNARY_LOOP(f32, float, ID, EXPR)
DS_MATH_UNARY(UNARY_LOOP_F32)
DS_MATH_ACTIVATION(UNARY_LOOP_F32)
#undef UNARY_LOOP_F32

/* float64: libm throughout, the activations included (gradient checks run in double). */
static inline double sigmoid_f64(double x)
{
  return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}

/* log(1 + e^x) without overflow */
static inline double softrelu_f64(double x)
{
  return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

#undef DS_M_SIGMOID
#undef DS_M_SOFTRELU
#define DS_M_SIGMOID  sigmoid_f64
#define DS_M_SOFTRELU softrelu_f64
#undef DS_M_EXP
#undef DS_M_EXPM1
#undef DS_M_LOG
#undef DS_M_LOG1P
#undef DS_M_LOG2
#undef DS_M_LOG10
#undef DS_M_CBRT
#undef DS_M_TRUNC
#undef DS_M_ROUND
#undef DS_M_SQRT
#undef DS_M_TANH
#undef DS_M_ERF
#undef DS_M_FABS
#undef DS_M_FLOOR
#undef DS_M_CEIL
#undef DS_M_RINT
#undef DS_M_SIN
#undef DS_M_COS
#undef DS_M_TAN
#undef DS_M_ASIN
#undef DS_M_ACOS
#undef DS_M_ATAN
#undef DS_M_SINH
#undef DS_M_COSH
#undef DS_M_ASINH
#undef DS_M_ACOSH
#undef DS_M_ATANH
#define DS_M_EXP   exp
#define DS_M_EXPM1 expm1
#define DS_M_LOG   log
#define DS_M_LOG1P log1p
#define DS_M_LOG2  log2
#define DS_M_LOG10 log10
#define DS_M_CBRT  cbrt
#define DS_M_TRUNC trunc
#define DS_M_ROUND round
#define DS_M_SQRT  sqrt
#define DS_M_TANH  tanh
#define DS_M_ERF   erf
#define DS_M_FABS  fabs
#define DS_M_FLOOR floor
#define DS_M_CEIL  ceil
#define DS_M_RINT  rint
#define DS_M_SIN   sin
#define DS_M_COS   cos
#define DS_M_TAN   tan
#define DS_M_ASIN  asin
#define DS_M_ACOS  acos
#define DS_M_ATAN  atan
#define DS_M_SINH  sinh
#define DS_M_COSH  cosh
#define DS_M_ASINH asinh
#define DS_M_ACOSH acosh
#define DS_M_ATANH atanh
#define UNARY_LOOP_F64(ID, COST, COEF, EXPR) UNARY_LOOP(f64, double, ID, EXPR)
DS_MATH_UNARY(UNARY_LOOP_F64)
DS_MATH_ACTIVATION(UNARY_LOOP_F64)
#undef UNARY_LOOP_F64
#undef UNARY_LOOP

typedef void (*UnLoopF32)(int64_t, const float *restrict, float *restrict, float, float);
typedef void (*UnLoopF64)(int64_t, const double *restrict, double *restrict, double, double);

#define UNARY_ENTRY_F32(ID, COST, COEF, EXPR) [DS_MATH_UN_##ID] = f32_##ID,
#define UNARY_ENTRY_F64(ID, COST, COEF, EXPR) [DS_MATH_UN_##ID] = f64_##ID,
static const UnLoopF32 unary_f32[DS_MATH_UN_COUNT] = {
    DS_MATH_UNARY(UNARY_ENTRY_F32) DS_MATH_ACTIVATION(UNARY_ENTRY_F32)};
static const UnLoopF64 unary_f64[DS_MATH_UN_COUNT] = {
    DS_MATH_UNARY(UNARY_ENTRY_F64) DS_MATH_ACTIVATION(UNARY_ENTRY_F64)};
#undef UNARY_ENTRY_F32
#undef UNARY_ENTRY_F64

void ds_cpu_unary_f32(DsMathUnaryFn fn, int64_t n, const float *x, float *y, float a, float b)
{
  unary_f32[fn](n, x, y, a, b);
}

void ds_cpu_unary_f64(DsMathUnaryFn fn, int64_t n, const double *x, double *y, double a, double b)
{
  unary_f64[fn](n, x, y, a, b);
}
