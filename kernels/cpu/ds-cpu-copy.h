/* ds-cpu-copy.h: element copies by byte size, for the data-moving kernels of every family
 * (transpose, slice, broadcast, tile, reverse...): dtype-agnostic, and parallel on rows. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "ds-cpu.h"

/* Bytes below which a copy runs on one thread: memory moves faster than math. */
#define DS_CPU_COPY_GRAIN ((int64_t)DS_CPU_PARALLEL_GRAIN * 16)

/* Work units of `unit_bytes` each that make one thread's share worth waking it. */
static inline int64_t ds_cpu_copy_grain(int64_t unit_bytes)
{
  return MAX(1, DS_CPU_COPY_GRAIN / MAX(unit_bytes, 1));
}

/* Repeats the `es`-byte element at `cell` n times at dst. */
void ds_cpu_fill_elems(void *dst, const void *cell, size_t es, int64_t n);
/* n elements of size es from src, `stride` elements apart (negative walks backwards, 1 is a
 * plain copy), into contiguous dst. */
void ds_cpu_gather_elems(void *dst, const void *src, int64_t stride, size_t es, int64_t n);

/* A strided copy: a contiguous output of dims `shape`, read from `in` at element offset
 * base + sum(index[d] * stride[d]); a stride may be 0 (broadcast) or negative (reverse). */
typedef struct {
  int ndim;
  int64_t shape[DS_MAX_NDIM];
  int64_t stride[DS_MAX_NDIM];
  int64_t base;
  size_t es;
  const char *in;
  char *out;
} DsCpuCopyPlan;

/* Drops size-1 dims and merges neighbours the input walks contiguously, so the inner run is
 * as long as possible. */
void ds_cpu_copy_plan_collapse(DsCpuCopyPlan *plan);
/* Copies output rows [begin, end) (a DsParallelFn over a collapsed plan). */
void ds_cpu_copy_plan_rows(void *plan, int64_t begin, int64_t end);
/* Collapses and runs a plan, one work unit per output row, on `pool` when worth it. */
void ds_cpu_copy_plan_run(DsCpuCopyPlan *plan, DsThreadPool *pool);
