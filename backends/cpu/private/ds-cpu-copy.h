/* ds-cpu-copy.h: element copies by byte size, for the data-moving kernels of every family
 * (transpose, slice, broadcast, tile, reverse, pad...): dtype-agnostic, and parallel on rows.
 * The cores shared by a static op and its dynamic-shape form (broadcast, pad, tile) live here;
 * dynamic-shape kernels shape their outputs with ds_kernel_prepare_output() (ds-kernel.h). */
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

/* memcpy of `n` bytes, split over `pool` when large. */
void ds_cpu_copy_bytes(void *dst, const void *src, size_t n, DsThreadPool *pool);

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

/* A right-aligned NumPy broadcast of `in` to `out`'s shape (in's rank at most out's; each dim of
 * in equal to out's or 1) as a copy plan; false if the shapes do not broadcast. */
bool ds_cpu_broadcast_plan(const DsTensor *in, const DsTensor *out, DsCpuCopyPlan *plan);

/* `out` (shape set by the caller: in's dims grown by before[d] and the matching after widths,
 * which may be negative to crop) from `in` padded as `mode` says: constant writes `value`
 * (converted to the dtype), edge repeats the border element, reflect mirrors about it
 * (periodically, for widths past the axis). Edge and reflect need a non-empty input axis
 * wherever they pad. */
void ds_cpu_pad(const DsTensor *in, DsTensor *out, const int64_t *before, DsPadMode mode,
                double value, DsThreadPool *pool);

/* `out` (shape set by the caller) filled with copies of `in`, right-aligned: each output dim is
 * a whole multiple of the input's (missing leading input dims act as 1). */
void ds_cpu_tile(const DsTensor *in, DsTensor *out, DsThreadPool *pool);
