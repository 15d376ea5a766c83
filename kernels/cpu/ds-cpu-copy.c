/* ds-cpu-copy.c: dtype-agnostic strided copies; see the header. */
#include "ds-cpu-copy.h"

#include <string.h>

/* Repeats the `es`-byte element at `cell` n times at dst. */
void ds_cpu_fill_elems(void *dst, const void *cell, size_t es, int64_t n)
{
  switch (es) {
  case 1:
    memset(dst, *(const uint8_t *)cell, (size_t)n);
    break;
  case 2: {
    uint16_t v, *restrict d = dst;
    memcpy(&v, cell, 2);
    for (int64_t i = 0; i < n; i++)
      d[i] = v;
    break;
  }
  case 4: {
    uint32_t v, *restrict d = dst;
    memcpy(&v, cell, 4);
    for (int64_t i = 0; i < n; i++)
      d[i] = v;
    break;
  }
  case 8: {
    uint64_t v, *restrict d = dst;
    memcpy(&v, cell, 8);
    for (int64_t i = 0; i < n; i++)
      d[i] = v;
    break;
  }
  default:
    for (int64_t i = 0; i < n; i++)
      memcpy((char *)dst + (size_t)i * es, cell, es);
    break;
  }
}

/* n elements of size es from src, `stride` elements apart (negative walks backwards), into
 * contiguous dst. */
void ds_cpu_gather_elems(void *dst, const void *src, int64_t stride, size_t es, int64_t n)
{
  if (stride == 1) {
    memcpy(dst, src, (size_t)n * es);
    return;
  }
#define GATHER(T)                                                                                  \
  {                                                                                                \
    T *restrict d = dst;                                                                           \
    const T *s = src;                                                                              \
    for (int64_t i = 0; i < n; i++)                                                                \
      d[i] = s[i * stride];                                                                        \
  }
  switch (es) {
  case 1:
    GATHER(uint8_t) break;
  case 2:
    GATHER(uint16_t) break;
  case 4:
    GATHER(uint32_t) break;
  case 8:
    GATHER(uint64_t) break;
  default:
    for (int64_t i = 0; i < n; i++)
      memcpy((char *)dst + (size_t)i * es, (const char *)src + (i * stride) * (int64_t)es, es);
    break;
  }
#undef GATHER
}

/* Drops size-1 dims and merges neighbours the input walks contiguously. */
void ds_cpu_copy_plan_collapse(DsCpuCopyPlan *p)
{
  int n = 0;
  for (int i = 0; i < p->ndim; i++) {
    if (p->shape[i] == 1)
      continue;
    if (n > 0 && p->stride[n - 1] == p->stride[i] * p->shape[i]) {
      p->shape[n - 1] *= p->shape[i];
      p->stride[n - 1] = p->stride[i];
      continue;
    }
    p->shape[n] = p->shape[i];
    p->stride[n] = p->stride[i];
    n++;
  }
  if (n == 0) {
    p->shape[0] = 1;
    p->stride[0] = 1;
    n = 1;
  }
  p->ndim = n;
}

void ds_cpu_copy_plan_rows(void *ctx, int64_t begin, int64_t end)
{
  const DsCpuCopyPlan *p = ctx;
  int last = p->ndim - 1;
  int64_t inner = p->shape[last], s = p->stride[last];
  for (int64_t row = begin; row < end; row++) {
    int64_t off = p->base, rest = row;
    for (int d = last - 1; d >= 0; d--) {
      off += (rest % p->shape[d]) * p->stride[d];
      rest /= p->shape[d];
    }
    char *dst = p->out + (size_t)(row * inner) * p->es;
    const char *src = p->in + (size_t)off * p->es;
    if (s == 1)
      memcpy(dst, src, (size_t)inner * p->es);
    else if (s == 0)
      ds_cpu_fill_elems(dst, src, p->es, inner);
    else
      ds_cpu_gather_elems(dst, src, s, p->es, inner);
  }
}

/* Runs a plan: one work unit per output row, both cores when there is enough to move. */
void ds_cpu_copy_plan_run(DsCpuCopyPlan *p, DsThreadPool *pool)
{
  ds_cpu_copy_plan_collapse(p);
  int64_t inner = p->shape[p->ndim - 1], rows = 1;
  for (int d = 0; d < p->ndim - 1; d++)
    rows *= p->shape[d];
  if (rows == 0 || inner == 0)
    return;
  int64_t row_bytes = inner * (int64_t)p->es;
  ds_parallel_for(pool, rows, MAX(1, DS_CPU_COPY_GRAIN / row_bytes), ds_cpu_copy_plan_rows, p);
}
