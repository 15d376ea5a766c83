/* ds-tensor.h: a dense, C-ordered tensor view.
 *
 * Memory policy: a DsTensor never owns its data. Buffers belong to whoever created them (the
 * executor's arena, a weight table, a loaded .npy), and a view lives no longer than its buffer.
 */
#pragma once

#include "ds-dtype.h"

/* The most dimensions a tensor may have. MXNet allows more in theory; no real model needs it,
 * and a fixed bound keeps shapes on the stack. Loaders reject more with a clear error. */
#define DS_MAX_NDIM 8

typedef struct _DsConstant DsConstant; /* ds-constant.h */

/* Where a tensor's bytes live. Host code reads only DS_MEMORY_HOST data; device data is read
 * through its backend's copies (ds-backend.h) or ds_tensor_read(). */
typedef enum {
  DS_MEMORY_HOST = 0,
  DS_MEMORY_DEVICE, /* an accelerator's memory (CUDA) */
} DsMemory;

typedef struct {
  DsDType dtype;
  int ndim;
  int64_t shape[DS_MAX_NDIM];
  void *data;
  DsConstant *constant; /* the immutable buffer `data` lies in (a weight), or NULL */
  DsMemory memory;      /* where `data` points */
} DsTensor;

/* Number of elements (1 for a scalar, 0 if any dim is 0). */
static inline int64_t ds_tensor_numel(const DsTensor *t)
{
  int64_t n = 1;
  for (int i = 0; i < t->ndim; i++)
    n *= t->shape[i];
  return n;
}

static inline size_t ds_tensor_nbytes(const DsTensor *t)
{
  return (size_t)ds_tensor_numel(t) * ds_dtype_size(t->dtype);
}

/* Product of dims [from, to). */
static inline int64_t ds_shape_span(const int64_t *shape, int from, int to)
{
  int64_t n = 1;
  for (int i = from; i < to; i++)
    n *= shape[i];
  return n;
}

/* Checked element count for untrusted shapes: false if any dim is negative or the byte size
 * of `elem_bytes`-sized elements would overflow `SIZE_MAX`/`limit_bytes`. */
bool ds_shape_checked_nbytes(const int64_t *shape, int ndim, size_t elem_bytes,
                             size_t limit_bytes, size_t *nbytes_out);

/* How host code reads device memory: a device backend that can run registers its blocking
 * device-to-host copy here (one device kind per process). */
typedef bool (*DsDeviceReadFn)(void *dst, const void *src, size_t bytes);
void ds_tensor_set_device_reader(DsDeviceReadFn read);
/* Copies `t`'s bytes into host memory `dst` (ds_tensor_nbytes(t) of them), from wherever they
 * live; false if they are on a device no reader is registered for, or the copy failed. */
bool ds_tensor_copy_to_host(const DsTensor *t, void *dst);

/* IEEE half-precision bits as a float (float16 is a storage type: nothing computes in it but
 * Cast, which converts to and from it). */
static inline float ds_half_to_float(uint16_t h)
{
  int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0)
    magnitude = (float)mantissa * (1.0f / 16777216.0f); /* subnormal: m * 2^-24 */
  else if (exponent == 31)
    magnitude = mantissa != 0 ? __builtin_nanf("") : __builtin_inff();
  else
    magnitude = (float)(1024 + mantissa) * __builtin_ldexpf(1.0f, exponent - 25);
  return sign ? -magnitude : magnitude;
}

/* A double as the nearest IEEE half (ties to even), as NumPy's astype(float16) rounds: values
 * from 65520 up become infinity, NaN stays NaN. Rounding once from the double matters: going
 * through a float first would round twice. */
static inline uint16_t ds_double_to_half(double x)
{
  uint64_t bits;
  __builtin_memcpy(&bits, &x, sizeof bits);
  uint32_t sign = (uint32_t)(bits >> 48) & 0x8000u;
  int biased = (int)((bits >> 52) & 0x7ff);
  uint64_t fraction = bits & 0xfffffffffffffull;
  if (biased == 0x7ff)
    return (uint16_t)(sign | 0x7c00u | (fraction != 0 ? 0x200u : 0u));
  int exponent = biased - 1023;
  if (exponent > 15)
    return (uint16_t)(sign | 0x7c00u);
  if (exponent < -25) /* below half the smallest subnormal (2^-24): zero */
    return (uint16_t)sign;
  uint64_t significand = fraction | (1ull << 52);
  /* Normal halves keep 10 fraction bits; subnormals count units of 2^-24. */
  int shift = exponent >= -14 ? 42 : 28 - exponent;
  uint64_t kept = significand >> shift;
  uint64_t rest = significand & ((1ull << shift) - 1), halfway = 1ull << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1)))
    kept++;
  /* A normal's `kept` holds the implicit bit (1024): adding it to the exponent field carries a
   * rounded-up fraction into the exponent, up to infinity. */
  uint32_t magnitude =
      exponent >= -14 ? ((uint32_t)(exponent + 14) << 10) + (uint32_t)kept : (uint32_t)kept;
  return (uint16_t)(sign | magnitude);
}

/* bfloat16 bits (the upper half of a float32's) as a float: exact. */
static inline float ds_bfloat16_to_float(uint16_t b)
{
  uint32_t bits = (uint32_t)b << 16;
  float f;
  __builtin_memcpy(&f, &bits, sizeof f);
  return f;
}

/* A float as the nearest bfloat16 (ties to even), as ONNX Runtime's Cast rounds; NaN stays a
 * quiet NaN of the same sign, overflow becomes infinity. */
static inline uint16_t ds_float_to_bfloat16(float f)
{
  uint32_t bits;
  __builtin_memcpy(&bits, &f, sizeof bits);
  if ((bits & 0x7fffffffu) > 0x7f800000u)
    return (uint16_t)((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return (uint16_t)(bits >> 16);
}

/* A double as the nearest bfloat16, rounded once: the double is first cut to a float toward
 * zero with the bits it loses kept as a sticky lowest bit ("round to odd"), which a second
 * rounding to 8 significant bits cannot turn into a double rounding. */
static inline uint16_t ds_double_to_bfloat16(double x)
{
  if (x != x)
    return ds_float_to_bfloat16((float)x);
  float f = (float)x;
  if (__builtin_fabs((double)f) > __builtin_fabs(x))
    f = __builtin_nextafterf(f, 0.0f);
  uint32_t bits;
  __builtin_memcpy(&bits, &f, sizeof bits);
  if ((double)f != x)
    bits |= 1u;
  __builtin_memcpy(&f, &bits, sizeof f);
  return ds_float_to_bfloat16(f);
}

/* double -> int64 without undefined behaviour: NaN gives 0, out-of-range saturates (narrower
 * integer types then wrap, as C arithmetic on them would). */
static inline int64_t ds_tensor_saturate_i64(double x)
{
  if (x != x)
    return 0;
  if (x >= 9223372036854775807.0)
    return INT64_MAX;
  if (x <= -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)x;
}

/* A double as uint64: values up to 2^64 convert directly (int64 would saturate them at 2^63),
 * the rest as ds_tensor_saturate_i64 does, negatives then wrapping. */
static inline uint64_t ds_tensor_double_to_u64(double x)
{
  if (x >= 9223372036854775808.0 && x < 18446744073709551616.0)
    return (uint64_t)x;
  return (uint64_t)ds_tensor_saturate_i64(x);
}

/* Writes `value` converted to dtype `t` into `cell`: floats round, integers truncate and
 * saturate (then wrap for the narrow types), bool is value != 0. */
static inline void ds_tensor_store_f64(DsDType t, void *cell, double value)
{
  switch (t) {
  case DS_DTYPE_FLOAT32:
    *(float *)cell = (float)value;
    break;
  case DS_DTYPE_FLOAT64:
    *(double *)cell = value;
    break;
  case DS_DTYPE_FLOAT16:
    *(uint16_t *)cell = ds_double_to_half(value);
    break;
  case DS_DTYPE_INT32:
    *(int32_t *)cell = (int32_t)ds_tensor_saturate_i64(value);
    break;
  case DS_DTYPE_INT64:
    *(int64_t *)cell = ds_tensor_saturate_i64(value);
    break;
  case DS_DTYPE_INT8:
    *(int8_t *)cell = (int8_t)ds_tensor_saturate_i64(value);
    break;
  case DS_DTYPE_UINT8:
    *(uint8_t *)cell = (uint8_t)ds_tensor_saturate_i64(value);
    break;
  case DS_DTYPE_BOOL:
    *(uint8_t *)cell = value != 0.0;
    break;
  case DS_DTYPE_INT16:
    *(int16_t *)cell = (int16_t)ds_tensor_saturate_i64(value);
    break;
  case DS_DTYPE_UINT16:
    *(uint16_t *)cell = (uint16_t)ds_tensor_saturate_i64(value);
    break;
  case DS_DTYPE_UINT32:
    *(uint32_t *)cell = (uint32_t)ds_tensor_saturate_i64(value);
    break;
  case DS_DTYPE_UINT64:
    *(uint64_t *)cell = ds_tensor_double_to_u64(value);
    break;
  case DS_DTYPE_BFLOAT16:
    *(uint16_t *)cell = ds_double_to_bfloat16(value);
    break;
  case DS_DTYPE_COUNT:
    break;
  }
}

/* Element `i` of a buffer of dtype `t` as a double (bool as 0/1; unknown dtypes as 0). */
static inline double ds_tensor_load_f64(DsDType t, const void *base, int64_t i)
{
  switch (t) {
  case DS_DTYPE_FLOAT32:
    return ((const float *)base)[i];
  case DS_DTYPE_FLOAT64:
    return ((const double *)base)[i];
  case DS_DTYPE_FLOAT16:
    return ds_half_to_float(((const uint16_t *)base)[i]);
  case DS_DTYPE_INT32:
    return ((const int32_t *)base)[i];
  case DS_DTYPE_INT64:
    return (double)((const int64_t *)base)[i];
  case DS_DTYPE_INT8:
    return ((const int8_t *)base)[i];
  case DS_DTYPE_UINT8:
    return ((const uint8_t *)base)[i];
  case DS_DTYPE_BOOL:
    return ((const uint8_t *)base)[i] != 0;
  case DS_DTYPE_INT16:
    return ((const int16_t *)base)[i];
  case DS_DTYPE_UINT16:
    return ((const uint16_t *)base)[i];
  case DS_DTYPE_UINT32:
    return ((const uint32_t *)base)[i];
  case DS_DTYPE_UINT64:
    return (double)((const uint64_t *)base)[i];
  case DS_DTYPE_BFLOAT16:
    return ds_bfloat16_to_float(((const uint16_t *)base)[i]);
  case DS_DTYPE_COUNT:
    break;
  }
  return 0.0;
}
