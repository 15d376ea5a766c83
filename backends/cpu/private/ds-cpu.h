/* ds-cpu.h: the CPU backend's private interface between its files. */
#pragma once

#include "ds-backend.h"
#include "ds-cpu-backend.h"

/* Family registration: each fills its ops' slots of the kernel table. */
void ds_cpu_nn_register(DsKernel *table);
void ds_cpu_elemwise_register(DsKernel *table);
void ds_cpu_reduce_register(DsKernel *table);
void ds_cpu_tensor_register(DsKernel *table);
void ds_cpu_index_register(DsKernel *table);
void ds_cpu_vision_register(DsKernel *table);
void ds_cpu_dynamic_register(DsKernel *table);
void ds_cpu_signal_register(DsKernel *table);
void ds_cpu_linalg_register(DsKernel *table);

/* double -> int64 without undefined behaviour (ds_tensor_saturate_i64). */
static inline int64_t ds_cpu_saturate_i64(double x)
{
  return ds_tensor_saturate_i64(x);
}

/* Integer division must not trap: x/0 gives 0 and MIN/-1 wraps, where MXNet would crash. */
static inline int32_t ds_cpu_div_i32(int32_t x, int32_t y)
{
  if (y == 0)
    return 0;
  if (y == -1)
    return (int32_t)(0u - (uint32_t)x);
  return x / y;
}

static inline int64_t ds_cpu_div_i64(int64_t x, int64_t y)
{
  if (y == 0)
    return 0;
  if (y == -1)
    return (int64_t)(0u - (uint64_t)x);
  return x / y;
}

/* Element `i` of a computable tensor as a double. */
static inline double ds_cpu_load_f64(DsDType t, const void *base, int64_t i)
{
  return ds_tensor_load_f64(t, base, i);
}

/* Writes `value` converted to dtype `t` into `cell` (ds_tensor_store_f64). */
static inline void ds_cpu_store_f64(DsDType t, void *cell, double value)
{
  ds_tensor_store_f64(t, cell, value);
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
  case DS_DTYPE_INT16:
    DS_CPU_CMP_INT(int16_t)
  case DS_DTYPE_UINT16:
    DS_CPU_CMP_INT(uint16_t)
  case DS_DTYPE_UINT32:
    DS_CPU_CMP_INT(uint32_t)
  case DS_DTYPE_UINT64:
    DS_CPU_CMP_INT(uint64_t)
  case DS_DTYPE_FLOAT16:
  case DS_DTYPE_BFLOAT16: { /* storage types: compared by value, should a caller ask */
    double x = ds_tensor_load_f64(t, base, i), y = ds_tensor_load_f64(t, base, j);
    if (x != x || y != y)
      return (x != x) - (y != y);
    return (x > y) - (x < y);
  }
  case DS_DTYPE_UINT8:
  case DS_DTYPE_BOOL:
  case DS_DTYPE_COUNT:
    break;
  }
  DS_CPU_CMP_INT(uint8_t)
#undef DS_CPU_CMP_FLOAT
#undef DS_CPU_CMP_INT
}

/* Dtypes the CPU kernels compute in (float16, bfloat16 and the 16-bit and unsigned wide
 * integers are storage only: Cast converts them). */
static inline bool ds_cpu_dtype_computable(DsDType t)
{
  return ds_dtype_is_valid(t) && !ds_dtype_is_storage_only(t);
}

/* Kernels below this many elements per thread run single-threaded: cheap elementwise work
 * moves at memory speed, and handing a share to a worker costs about a µs (more when it has
 * gone to sleep, ds-thread-pool.h). */
#define DS_CPU_PARALLEL_GRAIN 32768
/* The same for transcendental math (exp, log, tanh, erf, sigmoid, libm's trigonometry): at 1
 * to 40 ns an element, a thousand elements already repay the hand-over. */
#define DS_CPU_MATH_GRAIN 1024
