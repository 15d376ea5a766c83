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

/* Row-major C[m x n] = alpha * op(A)[m x k] * op(B)[k x n] + beta * C, where op(A) is A or its
 * transpose as `trans_a` says, and lda/ldb/ldc are the row strides (in elements) of A, B and C
 * as stored. With beta == 0, C's previous contents are ignored (NaN included). A product with
 * m == 1 or n == 1 runs as sgemv. Returns DS_STATUS_INVALID_ARGUMENT if a size does not fit
 * BLAS's int. */
DsStatus ds_cpu_sgemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                      const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
                      float *c, int64_t ldc);

/* The GEMMs a Convolution performs: `count` products of C[m x n] = W[m x k] * col[k x n], one
 * per image and group, with m = num_filter / num_group, n = the output's spatial size and
 * k = (channels / num_group) * kernel volume. */
typedef struct {
  int64_t m, n, k;
  int64_t count;
} DsConvGemmDims;

/* Fills `dims` for a Convolution with attributes `param` on data of shape `data_shape`
 * (`ndim` dims, NC + spatial). FALSE if the shape does not fit the attributes. */
bool ds_cpu_conv_gemm_dims(const DsConvolutionParam *param, const int64_t *data_shape, int ndim,
                           DsConvGemmDims *dims);

/* Kernels defined in ds-cpu-conv.c and ds-cpu-rnn.c, registered by ds_cpu_nn_register(). */
extern const DsKernel ds_cpu_convolution_kernel;
extern const DsKernel ds_cpu_rnn_kernel;

/* Fills n floats with `value` (vectorised). */
static inline void ds_vmath_fill(float *restrict y, int64_t n, float value)
{
  for (int64_t i = 0; i < n; i++)
    y[i] = value;
}

/* --- Vectorisable math ------------------------------------------------------------------- */

/* Bit casts through a union, which GCC keeps in registers (and vectorises) where a memcpy of
 * a computed value sometimes goes through the stack. */
typedef union {
  float f;
  uint32_t u;
} DsVmathBits;

static inline float ds_vmath_bits_to_float(uint32_t u)
{
  return (DsVmathBits){.u = u}.f;
}
static inline uint32_t ds_vmath_float_to_bits(float f)
{
  return (DsVmathBits){.f = f}.u;
}

/* 2^e for an integral e in [-126, 127], built from the exponent bits. */
static inline float ds_vmath_pow2i(int32_t e)
{
  return ds_vmath_bits_to_float((uint32_t)(e + 127) << 23);
}

/* Round to nearest integer (ties to even) for |x| < 2^22, by the 1.5 * 2^23 trick: it needs
 * no rounding instruction, so it vectorises on any x86-64. */
static inline float ds_vmath_round(float x)
{
  const float magic = 12582912.0f;
  return (x + magic) - magic;
}

/* exp(x): Cephes' range reduction x = n ln2 + r and degree-7 polynomial; about 1 ulp over the
 * whole float range. Overflows to +inf above 88.7228, underflows to 0 below about -103.9, and
 * passes NaN through. */
static inline float ds_vmath_exp(float x)
{
  float xc = x < -104.0f ? -104.0f : x;
  xc = xc > 88.8f ? 88.8f : xc;
  float n = ds_vmath_round(xc * 1.44269504088896341f);
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  /* Split the scale 2^n in two halves so that n = 128 and n = -150 stay representable. */
  int32_t ni = (int32_t)n;
  int32_t e1 = ni / 2;
  float result = p * ds_vmath_pow2i(e1) * ds_vmath_pow2i(ni - e1);
  result = x > 88.72283905f ? __builtin_inff() : result;
  return x != x ? x : result;
}

/* exp(x) - 1, accurate near 0 (Taylor series below |x| < 0.25, where exp(x) - 1 would cancel);
 * about 2 ulp elsewhere. */
static inline float ds_vmath_expm1(float x)
{
  float x2 = x * x;
  float t = 1.0f / 5040.0f;
  t = t * x + 1.0f / 720.0f;
  t = t * x + 1.0f / 120.0f;
  t = t * x + 1.0f / 24.0f;
  t = t * x + 1.0f / 6.0f;
  t = t * x + 0.5f;
  float small = x + x2 * t;
  float big = ds_vmath_exp(x) - 1.0f;
  return (x < 0.25f && x > -0.25f) ? small : big;
}

/* log(x) for x >= 0 normal (Cephes' logf): about 1 ulp; log(0) = -inf, log(inf) = inf,
 * NaN for negative x or NaN. Denormal inputs are not handled (no caller passes them). */
static inline float ds_vmath_log(float x)
{
  uint32_t bits = ds_vmath_float_to_bits(x);
  int32_t e = (int32_t)((bits >> 23) & 0xff) - 126;
  float m = ds_vmath_bits_to_float((bits & 0x007fffffu) | 0x3f000000u); /* [0.5, 1) */
  /* Float selects only: mixing int and float conditions stops GCC's vectoriser. */
  float ef = (float)e;
  float mlow = m + m - 1.0f;
  ef = m < 0.707106781186547524f ? ef - 1.0f : ef;
  m = m < 0.707106781186547524f ? mlow : m - 1.0f;
  float z = m * m;
  float y = 7.0376836292e-2f;
  y = y * m - 1.1514610310e-1f;
  y = y * m + 1.1676998740e-1f;
  y = y * m - 1.2420140846e-1f;
  y = y * m + 1.4249322787e-1f;
  y = y * m - 1.6668057665e-1f;
  y = y * m + 2.0000714765e-1f;
  y = y * m - 2.4999993993e-1f;
  y = y * m + 3.3333331174e-1f;
  y = y * m * z;
  y += -2.12194440e-4f * ef;
  y += -0.5f * z;
  float result = m + y + 0.693359375f * ef;
  result = x == 0.0f ? -__builtin_inff() : result;
  result = x == __builtin_inff() ? x : result;
  result = x < 0.0f ? __builtin_nanf("") : result;
  return x != x ? x : result;
}

/* log(1 + exp(x)) (softplus, MXNet's softrelu): x itself above 20, as MXNet does; otherwise
 * log1p of exp(x) with the u = 1 + e correction that keeps small results accurate. */
static inline float ds_vmath_softrelu(float x)
{
  float e = ds_vmath_exp(x);
  float u = 1.0f + e;
  float d = u - 1.0f;
  float l = d == 0.0f ? e : ds_vmath_log(u) * (e / d);
  return x > 20.0f ? x : l;
}

/* 1 / (1 + exp(-x)). */
static inline float ds_vmath_sigmoid(float x)
{
  return 1.0f / (1.0f + ds_vmath_exp(-x));
}

/* tanh(x): odd Taylor series below |x| < 0.25, 1 - 2 / (exp(2|x|) + 1) above; within 3 ulp. */
static inline float ds_vmath_tanh(float x)
{
  float ax = x < 0.0f ? -x : x;
  float x2 = x * x;
  float t = -1382.0f / 155925.0f;
  t = t * x2 + 62.0f / 2835.0f;
  t = t * x2 - 17.0f / 315.0f;
  t = t * x2 + 2.0f / 15.0f;
  t = t * x2 - 1.0f / 3.0f;
  float small = x + x * x2 * t;
  float big = 1.0f - 2.0f / (ds_vmath_exp(2.0f * ax) + 1.0f);
  big = x < 0.0f ? -big : big;
  return ax < 0.25f ? small : (x != x ? x : big);
}

/* erf(x) = 1 - erfc(|x|) with the sign of x, erfc from the Chebyshev-fitted formula of
 * Numerical Recipes (fractional error below 1.2e-7); absolute error below 2.5e-7. */
static inline float ds_vmath_erf(float x)
{
  float z = x < 0.0f ? -x : x;
  float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  float erfc = t * ds_vmath_exp(p - z * z);
  float y = 1.0f - erfc;
  y = x < 0.0f ? -y : y;
  /* Near 0, where 1 - erfc would cancel, the Maclaurin series (to x^15, error < 1e-9). */
  float x2 = x * x;
  float s = -1.0f / 75600.0f;
  s = s * x2 + 1.0f / 9360.0f;
  s = s * x2 - 1.0f / 1320.0f;
  s = s * x2 + 1.0f / 216.0f;
  s = s * x2 - 1.0f / 42.0f;
  s = s * x2 + 1.0f / 10.0f;
  s = s * x2 - 1.0f / 3.0f;
  float small = 1.12837916709551257f * (x + x * x2 * s);
  y = z < 0.6f ? small : y;
  return x != x ? x : y;
}
