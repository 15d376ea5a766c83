/* ds-cpu.h: the CPU backend's private interface between its files. */
#pragma once

#include "ds-backend.h"

const DsBackend *ds_cpu_backend_get(void);

/* Family registration: each fills its ops' slots of the kernel table. */
void ds_cpu_nn_register(DsKernel *table);
void ds_cpu_elemwise_register(DsKernel *table);
void ds_cpu_tensor_register(DsKernel *table);
void ds_cpu_index_register(DsKernel *table);
void ds_cpu_vision_register(DsKernel *table);
void ds_cpu_dynamic_register(DsKernel *table);

/* double -> int64 without undefined behaviour: NaN gives 0, out-of-range saturates (narrower
 * integer types then wrap, as C arithmetic on them would). */
static inline int64_t ds_cpu_saturate_i64(double x)
{
  if (x != x)
    return 0;
  if (x >= 9223372036854775807.0)
    return INT64_MAX;
  if (x <= -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)x;
}

/* Element `i` of a computable tensor as a double. */
static inline double ds_cpu_load_f64(DsDType t, const void *base, int64_t i)
{
  return ds_tensor_load_f64(t, base, i);
}

/* Writes `value` converted to dtype `t` into `cell`: floats round, integers truncate and
 * saturate (then wrap for the narrow types), bool is value != 0. */
static inline void ds_cpu_store_f64(DsDType t, void *cell, double value)
{
  switch (t) {
  case DS_DTYPE_FLOAT32:
    *(float *)cell = (float)value;
    break;
  case DS_DTYPE_FLOAT64:
    *(double *)cell = value;
    break;
  case DS_DTYPE_INT32:
    *(int32_t *)cell = (int32_t)ds_cpu_saturate_i64(value);
    break;
  case DS_DTYPE_INT64:
    *(int64_t *)cell = ds_cpu_saturate_i64(value);
    break;
  case DS_DTYPE_INT8:
    *(int8_t *)cell = (int8_t)ds_cpu_saturate_i64(value);
    break;
  case DS_DTYPE_UINT8:
    *(uint8_t *)cell = (uint8_t)ds_cpu_saturate_i64(value);
    break;
  case DS_DTYPE_BOOL:
    *(uint8_t *)cell = value != 0.0;
    break;
  default:
    break;
  }
}

/* -1, 0 or 1 for element i against element j of a computable tensor, ascending, NaN after
 * every number (and equal to NaN): the order argsort and unique sort by. */
static inline int ds_cpu_compare_elements(DsDType t, const void *base, int64_t i, int64_t j)
{
#define DS_CPU_CMP_FLOAT(T)                                                                        \
  {                                                                                                \
    T x = ((const T *)base)[i], y = ((const T *)base)[j];                                          \
    if (x != x || y != y)                                                                          \
      return (x != x) - (y != y);                                                                  \
    return (x > y) - (x < y);                                                                      \
  }
#define DS_CPU_CMP_INT(T)                                                                          \
  {                                                                                                \
    T x = ((const T *)base)[i], y = ((const T *)base)[j];                                          \
    return (x > y) - (x < y);                                                                      \
  }
  switch (t) {
  case DS_DTYPE_FLOAT32:
    DS_CPU_CMP_FLOAT(float)
  case DS_DTYPE_FLOAT64:
    DS_CPU_CMP_FLOAT(double)
  case DS_DTYPE_INT32:
    DS_CPU_CMP_INT(int32_t)
  case DS_DTYPE_INT64:
    DS_CPU_CMP_INT(int64_t)
  case DS_DTYPE_INT8:
    DS_CPU_CMP_INT(int8_t)
  default:
    DS_CPU_CMP_INT(uint8_t) /* uint8, bool */
  }
#undef DS_CPU_CMP_FLOAT
#undef DS_CPU_CMP_INT
}

/* Dtypes the CPU kernels compute in (float16 is storage only). */
static inline bool ds_cpu_dtype_computable(DsDType t)
{
  return ds_dtype_is_valid(t) && t != DS_DTYPE_FLOAT16;
}

/* Kernels below this many elements run single-threaded: waking a worker costs a few µs. */
#define DS_CPU_PARALLEL_GRAIN 32768
