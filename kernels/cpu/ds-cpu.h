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

/* Dtypes the CPU kernels compute in (float16 is storage only). */
static inline bool ds_cpu_dtype_computable(DsDType t)
{
  return ds_dtype_is_valid(t) && t != DS_DTYPE_FLOAT16;
}

/* Kernels below this many elements run single-threaded: waking a worker costs a few µs. */
#define DS_CPU_PARALLEL_GRAIN 32768
