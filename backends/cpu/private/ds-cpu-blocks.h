/* ds-cpu-blocks.h: the CPU kernels' generic path. Dtypes without typed loops (uint8, int8,
 * bool, and mixed dtypes) are converted to double a block at a time on the stack, computed in
 * the float64 loops and converted back: slower, but exact for those types and never
 * allocating. */
#pragma once

#include <string.h>

#include "ds-cpu.h"

/* Elements converted per block: a few blocks of doubles fit a kernel's stack (2 KiB each). */
#define DS_CPU_BLOCK 256

/* Loads n elements (from element `offset` with element stride `stride`, 0 for a scalar). */
static inline void ds_cpu_load_block_f64(DsDType t, const void *base, int64_t offset,
                                         int64_t stride, int64_t n, double *restrict dst)
{
#define LOAD_CASE(DT, T)                                                                           \
  case DT: {                                                                                       \
    const T *s = (const T *)base + offset;                                                         \
    if (stride == 1) { /* the common case, as a loop GCC vectorises */                             \
      for (int64_t i = 0; i < n; i++)                                                              \
        dst[i] = (double)s[i];                                                                     \
    } else {                                                                                       \
      for (int64_t i = 0; i < n; i++)                                                              \
        dst[i] = (double)s[i * stride];                                                            \
    }                                                                                              \
    break;                                                                                         \
  }
  switch (t) {
    LOAD_CASE(DS_DTYPE_FLOAT32, float)
    LOAD_CASE(DS_DTYPE_FLOAT64, double)
    LOAD_CASE(DS_DTYPE_INT32, int32_t)
    LOAD_CASE(DS_DTYPE_INT64, int64_t)
    LOAD_CASE(DS_DTYPE_INT8, int8_t)
    LOAD_CASE(DS_DTYPE_UINT8, uint8_t)
    LOAD_CASE(DS_DTYPE_INT16, int16_t)
    LOAD_CASE(DS_DTYPE_UINT16, uint16_t)
    LOAD_CASE(DS_DTYPE_UINT32, uint32_t)
    LOAD_CASE(DS_DTYPE_UINT64, uint64_t)
  case DS_DTYPE_BOOL: {
    const uint8_t *s = (const uint8_t *)base + offset;
    for (int64_t i = 0; i < n; i++)
      dst[i] = s[i * stride] != 0 ? 1.0 : 0.0;
    break;
  }
  case DS_DTYPE_FLOAT16:
  case DS_DTYPE_BFLOAT16: /* storage types, decoded one by one */
    for (int64_t i = 0; i < n; i++)
      dst[i] = ds_tensor_load_f64(t, base, offset + i * stride);
    break;
  case DS_DTYPE_COUNT:
    break;
  }
#undef LOAD_CASE
}

/* Stores n doubles as dtype `t` from element `offset` on (integers saturate). */
static inline void ds_cpu_store_block_f64(DsDType t, void *base, int64_t offset, int64_t n,
                                          const double *restrict src)
{
#define STORE_INT_CASE(DT, T)                                                                      \
  case DT: {                                                                                       \
    T *d = (T *)base + offset;                                                                     \
    for (int64_t i = 0; i < n; i++)                                                                \
      d[i] = (T)ds_cpu_saturate_i64(src[i]);                                                       \
    break;                                                                                         \
  }
  switch (t) {
  case DS_DTYPE_FLOAT32: {
    float *d = (float *)base + offset;
    for (int64_t i = 0; i < n; i++)
      d[i] = (float)src[i];
    break;
  }
  case DS_DTYPE_FLOAT64:
    memcpy((double *)base + offset, src, (size_t)n * sizeof(double));
    break;
    STORE_INT_CASE(DS_DTYPE_INT32, int32_t)
    STORE_INT_CASE(DS_DTYPE_INT64, int64_t)
    STORE_INT_CASE(DS_DTYPE_INT8, int8_t)
    STORE_INT_CASE(DS_DTYPE_UINT8, uint8_t)
    STORE_INT_CASE(DS_DTYPE_INT16, int16_t)
    STORE_INT_CASE(DS_DTYPE_UINT16, uint16_t)
    STORE_INT_CASE(DS_DTYPE_UINT32, uint32_t)
  case DS_DTYPE_BOOL: {
    uint8_t *d = (uint8_t *)base + offset;
    for (int64_t i = 0; i < n; i++)
      d[i] = src[i] != 0.0;
    break;
  }
  case DS_DTYPE_UINT64: /* int64 would saturate at 2^63 */
  case DS_DTYPE_FLOAT16:
  case DS_DTYPE_BFLOAT16:
    for (int64_t i = 0; i < n; i++)
      ds_tensor_store_f64(t, (char *)base + (size_t)(offset + i) * ds_dtype_size(t), src[i]);
    break;
  case DS_DTYPE_COUNT:
    break;
  }
#undef STORE_INT_CASE
}
