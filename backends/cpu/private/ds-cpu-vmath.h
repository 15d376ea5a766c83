/* ds-cpu-vmath.h: float32 math written branch-free so that the loops calling it vectorise.
 *
 * libm's scalar expf/erff/tanhf/logf cost 10-40 ns an element here, which would rival a model's
 * GEMMs for its activations (BERT's GELUs); these stay within a few ulp of the correctly
 * rounded result and pass NaN through. Include it from kernel files only.
 */
#pragma once

#include <math.h>
#include <stdint.h>

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

/* Cephes' expf: x = n ln2 + r with |r| <= ln2/2, a degree-6 polynomial for e^r, and 2^n
 * applied in two halves so results down in the subnormals stay right. */
static inline float ds_vmath_exp(float x)
{
  float xc = x > 88.7228394f ? 88.7228394f : (x < -103.972084f ? -103.972084f : x);
  /* Round to nearest through the 1.5 * 2^23 trick: no libm call, so it vectorises. */
  float n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  int32_t ni = (int32_t)(n == n ? n : 0.0f);
  int32_t n1 = ni / 2, n2 = ni - n1;
  float y = p * ds_vmath_pow2i(n1) * ds_vmath_pow2i(n2);
  return x > 88.7228394f ? INFINITY : y;
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

/* log(x) for x >= 0 (Cephes' logf): about 1 ulp; log(0) = -inf, log(inf) = inf, NaN for
 * negative x or NaN. A subnormal x is scaled by 2^23 first (the Log op sees any float). */
static inline float ds_vmath_log(float x)
{
  /* Float selects only: mixing int and float conditions stops GCC's vectoriser. */
  float tiny = x < 1.17549435e-38f ? 1.0f : 0.0f; /* below FLT_MIN: subnormal, 0 or negative */
  float xs = tiny != 0.0f ? x * 8388608.0f : x;
  uint32_t bits = ds_vmath_float_to_bits(xs);
  int32_t e = (int32_t)((bits >> 23) & 0xff) - 126;
  float m = ds_vmath_bits_to_float((bits & 0x007fffffu) | 0x3f000000u); /* [0.5, 1) */
  float ef = (float)e - 23.0f * tiny;
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

/* sigmoid as e / (1 + e) with e = exp(-|x|) <= 1: no overflow, and the small side keeps its
 * relative accuracy down into the subnormals. The rounding error of 1 + e (exact, since
 * 1 >= e) is divided out too, so only exp's error and the division's remain. */
static inline float ds_vmath_sigmoid(float x)
{
  float e = ds_vmath_exp(-fabsf(x));
  float d = 1.0f + e, dl = (1.0f - d) + e;
  float r = (x >= 0.0f ? 1.0f : e) / d;
  return r - r * (dl / d);
}

/* tanh: x R(x^2) below 0.625, 1 - 2 / (e^(2|x|) + 1) above (which tends to 1 as e^(2|x|)
 * overflows to infinity). */
static inline float ds_vmath_tanh(float x)
{
  float ax = fabsf(x), u = x * x;
  float p = 2.130308373e-03f;
  p = p * u + -8.161230475e-03f;
  p = p * u + 2.169275496e-02f;
  p = p * u + -5.394488782e-02f;
  p = p * u + 1.333318454e-01f;
  p = p * u + -3.333332976e-01f;
  p = p * u + 9.999999999e-01f;
  float small = x * p;
  float large = copysignf(1.0f - 2.0f / (ds_vmath_exp(2.0f * ax) + 1.0f), x);
  float r = ax < 0.625f ? small : large;
  return x != x ? x : r;
}

/* erf: x + x S(x^2) below 1 (the leading x kept exact, so the float rounding of 2/sqrt(pi)
 * does not show); 1 - e^(-x^2) Q(x) on [1, 4], with x^2 split exactly by an FMA so the
 * exponential sees no rounding; +-1 beyond, where float32 cannot tell erf from 1. */
static inline float ds_vmath_erf(float x)
{
  float ax = fabsf(x), u = x * x;
  float p = 7.8824970228e-05f;
  p = p * u + -8.0188549658e-04f;
  p = p * u + 5.1893119395e-03f;
  p = p * u + -2.6854328794e-02f;
  p = p * u + 1.1283597463e-01f;
  p = p * u + -3.7612626904e-01f;
  p = p * u + 1.2837916588e-01f;
  float small = fmaf(x, p, x);

  float t = ax * (2.0f / 3.0f) - 5.0f / 3.0f;
  float q = -3.692872345e-05f;
  q = q * t + 9.640451523e-05f;
  q = q * t + -1.439485982e-04f;
  q = q * t + 3.678686725e-04f;
  q = q * t + -1.017117774e-03f;
  q = q * t + 2.425885101e-03f;
  q = q * t + -5.567332910e-03f;
  q = q * t + 1.248403569e-02f;
  q = q * t + -2.700572529e-02f;
  q = q * t + 5.611095841e-02f;
  q = q * t + -1.115210047e-01f;
  q = q * t + 2.108063575e-01f;
  float hi = ax * ax, lo = fmaf(ax, ax, -hi);
  float e = ds_vmath_exp(-hi);
  e = e - e * lo;
  float large = copysignf(1.0f - e * q, x);

  float r = ax < 1.0f ? small : (ax < 4.0f ? large : copysignf(1.0f, x));
  return x != x ? x : r;
}
