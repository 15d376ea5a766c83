/* ds-cpu-copy.c: dtype-agnostic strided copies; see the header. */
#include "ds-cpu-copy.h"

#include <string.h>

#include "ds-geometry-tensor.h"

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

typedef struct {
  const char *src;
  char *dst;
} BytesJob;

static void bytes_worker(void *ctx, int64_t begin, int64_t end)
{
  const BytesJob *job = ctx;
  memcpy(job->dst + begin, job->src + begin, (size_t)(end - begin));
}

void ds_cpu_copy_bytes(void *dst, const void *src, size_t n, DsThreadPool *pool)
{
  if (n == 0 || dst == src)
    return;
  BytesJob job = {src, dst};
  ds_parallel_for(pool, (int64_t)n, DS_CPU_COPY_GRAIN, bytes_worker, &job);
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

bool ds_cpu_broadcast_plan(const DsTensor *in, const DsTensor *out, DsCpuCopyPlan *plan)
{
  if (in->dtype != out->dtype)
    return false;
  *plan = (DsCpuCopyPlan){
      .ndim = out->ndim, .es = ds_dtype_size(out->dtype), .in = in->data, .out = out->data};
  memcpy(plan->shape, out->shape, sizeof(int64_t) * (size_t)out->ndim);
  return ds_geom_broadcast_strides(in, out, plan->stride);
}

/* ---- pad ---- */

typedef struct {
  const char *in;
  char *out;
  size_t es;
  int ndim;
  int64_t ishape[DS_MAX_NDIM], oshape[DS_MAX_NDIM], istride[DS_MAX_NDIM], before[DS_MAX_NDIM];
  DsPadMode mode;
  _Alignas(double) char cell[8]; /* the constant, in the output dtype */
} PadJob;

/* The input index output index `o` reads on an axis of `n` elements, or -1 for the constant. */
static int64_t pad_source(DsPadMode mode, int64_t o, int64_t before, int64_t n)
{
  int64_t i = o - before;
  if (i >= 0 && i < n)
    return i;
  if (mode == DS_PAD_CONSTANT || n == 0)
    return -1;
  if (mode == DS_PAD_EDGE || n == 1)
    return i < 0 ? 0 : n - 1;
  /* reflect: the periodic extension of 0, 1, ..., n-1, n-2, ..., 1. */
  int64_t period = 2 * (n - 1), m = ((i % period) + period) % period;
  return m < n ? m : period - m;
}

static void pad_worker(void *ctx, int64_t begin, int64_t end)
{
  const PadJob *job = ctx;
  int last = job->ndim - 1;
  int64_t n = job->ishape[last], on = job->oshape[last], b = job->before[last];
  size_t es = job->es;
  /* Output columns [lo, hi) read the input row in order. */
  int64_t lo = MIN(MAX(b, 0), on), hi = MAX(MIN(b + n, on), lo);
  for (int64_t row = begin; row < end; row++) {
    char *dst = job->out + (size_t)(row * on) * es;
    int64_t off = 0, rest = row;
    bool outside = false;
    for (int d = last - 1; d >= 0; d--) {
      int64_t src = pad_source(job->mode, rest % job->oshape[d], job->before[d], job->ishape[d]);
      rest /= job->oshape[d];
      outside |= src < 0;
      off += src * job->istride[d];
    }
    if (outside) {
      ds_cpu_fill_elems(dst, job->cell, es, on);
      continue;
    }
    const char *src = job->in + (size_t)off * es;
    if (hi > lo)
      memcpy(dst + (size_t)lo * es, src + (size_t)(lo - b) * es, (size_t)(hi - lo) * es);
    for (int64_t o = 0; o < on; o++) {
      if (o == lo)
        o = hi;
      if (o >= on)
        break;
      int64_t i = pad_source(job->mode, o, b, n);
      memcpy(dst + (size_t)o * es, i < 0 ? job->cell : src + (size_t)i * es, es);
    }
  }
}

void ds_cpu_pad(const DsTensor *in, DsTensor *out, const int64_t *before, DsPadMode mode,
                double value, DsThreadPool *pool)
{
  if (ds_tensor_numel(out) == 0)
    return;
  size_t es = ds_dtype_size(out->dtype);
  if (out->ndim == 0) {
    memcpy(out->data, in->data, es);
    return;
  }
  PadJob job = {.in = in->data, .out = out->data, .es = es, .ndim = out->ndim, .mode = mode};
  ds_cpu_store_f64(out->dtype, job.cell, value);
  int64_t s = 1;
  for (int d = out->ndim - 1; d >= 0; d--) {
    job.ishape[d] = in->shape[d];
    job.oshape[d] = out->shape[d];
    job.before[d] = before[d];
    job.istride[d] = s;
    s *= in->shape[d];
  }
  int64_t row = out->shape[out->ndim - 1], rows = ds_tensor_numel(out) / row;
  ds_parallel_for(pool, rows, ds_cpu_copy_grain(row * (int64_t)es), pad_worker, &job);
}

/* ---- tile ---- */

typedef struct {
  int ndim;
  size_t es;
  int64_t ishape[DS_MAX_NDIM], oshape[DS_MAX_NDIM], istride[DS_MAX_NDIM];
  const char *in;
  char *out;
} TileJob;

static void tile_worker(void *ctx, int64_t begin, int64_t end)
{
  const TileJob *job = ctx;
  int last = job->ndim - 1;
  int64_t in_row = job->ishape[last], out_row = job->oshape[last];
  size_t row_bytes = (size_t)in_row * job->es;
  for (int64_t row = begin; row < end; row++) {
    int64_t off = 0, rest = row;
    for (int d = last - 1; d >= 0; d--) {
      off += (rest % job->oshape[d]) % job->ishape[d] * job->istride[d];
      rest /= job->oshape[d];
    }
    const char *src = job->in + (size_t)off * job->es;
    char *dst = job->out + (size_t)(row * out_row) * job->es;
    if (in_row == 1) {
      ds_cpu_fill_elems(dst, src, job->es, out_row);
      continue;
    }
    for (int64_t c = 0; c < out_row; c += in_row)
      memcpy(dst + (size_t)c * job->es, src, row_bytes);
  }
}

void ds_cpu_tile(const DsTensor *in, DsTensor *out, DsThreadPool *pool)
{
  int nd = out->ndim, lead = out->ndim - in->ndim;
  TileJob job = {.ndim = nd, .es = ds_dtype_size(in->dtype), .in = in->data, .out = out->data};
  if (ds_tensor_numel(out) == 0)
    return;
  if (nd == 0) {
    memcpy(out->data, in->data, job.es);
    return;
  }
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    job.ishape[d] = d >= lead ? in->shape[d - lead] : 1;
    job.oshape[d] = out->shape[d];
    job.istride[d] = s;
    s *= job.ishape[d];
  }
  int64_t rows = ds_tensor_numel(out) / job.oshape[nd - 1];
  ds_parallel_for(pool, rows, ds_cpu_copy_grain(job.oshape[nd - 1] * (int64_t)job.es),
                  tile_worker, &job);
}
