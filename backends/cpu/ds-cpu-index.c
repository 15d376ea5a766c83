/* ds-cpu-index.c: CPU kernels for repeat, tile, reverse, stack, SliceChannel, slice_like,
 * argsort, gather_nd, shape_array and size_array, and for ONNX's gathers and scatters
 * (take_along_axis, put_along_axis, batch_gather_nd, scatter_nd_update) and topk (with its
 * dynamic form _contrib_dynamic_topk, which shares the selection).
 *
 * Scatters check every index first and then apply the updates in order on one thread, so
 * duplicates combine (or overwrite) deterministically. topk sorts each lane with argsort's
 * stable merge sort and keeps the first k.
 *
 * Data movement works on raw elements by size, so every dtype is supported; only argsort's
 * keys, its output indices and gather_nd's indices are typed. Each kernel reduces its index
 * space to (outer, middle, inner) blocks or to rows of the output, so the innermost step is a
 * memcpy, a fill or a strided gather, and the rows are shared between threads.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "ds-cpu.h"
#include "ds-cpu-copy.h"
#include "ds-geometry-tensor.h"
#include "ds-ops-kernel-args.h"

/* ------------------------------------------------------------------------------------------ */
/* Row copies: out (contiguous) <- in at element offsets given per output dim. */

/* ------------------------------------------------------------------------------------------ */
/* repeat */

/* The input as (outer, len, inner) blocks of `inner` elements; each block is written `reps`
 * times in a row. */
typedef struct {
  const char *in;
  char *out;
  int64_t len, inner, reps;
  size_t es;
} RepeatJob;

static void repeat_worker(void *ctx, int64_t begin, int64_t end)
{
  const RepeatJob *job = ctx;
  size_t block = (size_t)job->inner * job->es;
  for (int64_t u = begin; u < end; u++) {
    const char *src = job->in + (size_t)u * block;
    char *dst = job->out + (size_t)(u * job->reps) * block;
    if (job->inner == 1) {
      ds_cpu_fill_elems(dst, src, job->es, job->reps);
      continue;
    }
    for (int64_t r = 0; r < job->reps; r++)
      memcpy(dst + (size_t)r * block, src, block);
  }
}

static DsStatus k_repeat(const DsKernelCtx *ctx)
{
  const DsRepeatParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->dtype != out->dtype || p->repeats < 0)
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t n = ds_tensor_numel(in);
  if (p->repeats == 0)
    return ds_tensor_numel(out) == 0 ? DS_STATUS_OK : DS_STATUS_INVALID_ARGUMENT;
  int axis;
  if (!ds_geom_repeat(in, out, p->repeats, p->has_axis, p->axis, &axis))
    return DS_STATUS_INVALID_ARGUMENT;
  RepeatJob job = {in->data, out->data, n, 1, p->repeats, ds_dtype_size(in->dtype)};
  if (axis >= 0) {
    job.len = ds_shape_span(in->shape, 0, axis + 1);
    job.inner = ds_shape_span(in->shape, axis + 1, in->ndim);
  }
  if (n == 0)
    return DS_STATUS_OK;
  ds_parallel_for(ctx->pool, job.len, ds_cpu_copy_grain(job.inner * job.reps * (int64_t)job.es),
                  repeat_worker, &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* tile */

/* Output rows (every dim but the last fixed) read input row (idx[d] mod in_shape[d]) and write
 * it reps_last times. Shapes are the rank-extended ones (leading 1s). */
static DsStatus k_tile(const DsKernelCtx *ctx)
{
  const DsTileParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->dtype != out->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_geom_tile(in, out, p->reps, p->n_reps, NULL))
    return DS_STATUS_INVALID_ARGUMENT;
  ds_cpu_tile(in, out, ctx->pool);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* reverse */

static DsStatus k_reverse(const DsKernelCtx *ctx)
{
  const DsReverseParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  int nd = in->ndim;
  if (in->dtype != out->dtype || !ds_geom_same_shape(in, out) || in->data == out->data)
    return DS_STATUS_INVALID_ARGUMENT;
  DsCpuCopyPlan plan = {
      .ndim = nd, .es = ds_dtype_size(in->dtype), .in = in->data, .out = out->data};
  if (!ds_geom_reverse(in->shape, nd, p->axes, p->n_axes, plan.stride, &plan.base))
    return DS_STATUS_INVALID_ARGUMENT;
  memcpy(plan.shape, in->shape, sizeof(int64_t) * (size_t)nd);
  if (ds_tensor_numel(out) == 0)
    return DS_STATUS_OK;
  if (nd == 0) {
    memcpy(out->data, in->data, plan.es);
    return DS_STATUS_OK;
  }
  ds_cpu_copy_plan_run(&plan, ctx->pool);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* stack, SliceChannel: (outer, k, inner) blocks moved between one tensor and several. */

typedef struct {
  const DsTensor *parts; /* the several tensors */
  int n_parts;
  int64_t part_bytes; /* bytes of one part's block for one outer index */
  char *whole;        /* the one tensor */
  bool gather;        /* true: parts -> whole (stack); false: whole -> parts (split) */
} BlockJob;

static void block_worker(void *ctx, int64_t begin, int64_t end)
{
  const BlockJob *job = ctx;
  for (int64_t u = begin; u < end; u++) {
    int64_t o = u / job->n_parts, k = u % job->n_parts;
    char *w = job->whole + (size_t)(u * job->part_bytes);
    char *part = (char *)job->parts[k].data + (size_t)(o * job->part_bytes);
    if (job->gather)
      memcpy(w, part, (size_t)job->part_bytes);
    else
      memcpy(part, w, (size_t)job->part_bytes);
  }
}

/* Split with one element per part and outer index: part k is every n-th element from k. */
static void column_worker(void *ctx, int64_t begin, int64_t end)
{
  const BlockJob *job = ctx;
  size_t es = (size_t)job->part_bytes;
  int64_t rows = ds_tensor_numel(&job->parts[0]);
  for (int64_t k = begin; k < end; k++)
    ds_cpu_gather_elems(job->parts[k].data, job->whole + (size_t)k * es, job->n_parts, es, rows);
}

static DsStatus k_stack(const DsKernelCtx *ctx)
{
  DsTensor *out = &ctx->outputs[0];
  int64_t outer, inner;
  DsStatus args = ds_kernel_args_stack(ctx, &outer, &inner);
  if (args != DS_STATUS_OK)
    return args;
  BlockJob job = {ctx->inputs, ctx->n_inputs, inner * (int64_t)ds_dtype_size(out->dtype), out->data,
                  true};
  if (outer == 0 || job.part_bytes == 0)
    return DS_STATUS_OK;
  ds_parallel_for(ctx->pool, outer * job.n_parts, ds_cpu_copy_grain(job.part_bytes), block_worker,
                  &job);
  return DS_STATUS_OK;
}

static DsStatus k_slice_channel(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  int n;
  int64_t outer, inner;
  DsStatus args = ds_kernel_args_slice_channel(ctx, &n, &outer, &inner);
  if (args != DS_STATUS_OK)
    return args;
  BlockJob job = {ctx->outputs, n, inner * (int64_t)ds_dtype_size(in->dtype), in->data, false};
  if (outer == 0 || job.part_bytes == 0)
    return DS_STATUS_OK;
  if (inner == 1) {
    /* One element per part and row (box coordinates split off the last axis): a strided
     * gather per output beats a memcpy call per element. */
    ds_parallel_for(ctx->pool, n, ds_cpu_copy_grain(outer * job.part_bytes), column_worker, &job);
    return DS_STATUS_OK;
  }
  ds_parallel_for(ctx->pool, outer * n, ds_cpu_copy_grain(job.part_bytes), block_worker, &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* slice_like: the output's shape, cut from the data's origin. */

static DsStatus k_slice_like(const DsKernelCtx *ctx)
{
  const DsSliceLikeParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0], *like = &ctx->inputs[1];
  DsTensor *out = &ctx->outputs[0];
  int nd = in->ndim;
  if (out->ndim != nd || out->dtype != in->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  /* Which axes take shape_like's size; the others stay whole. */
  bool cut[DS_MAX_NDIM] = {false};
  if (p->n_axes == 0) {
    if (like->ndim != nd)
      return DS_STATUS_INVALID_ARGUMENT;
    for (int d = 0; d < nd; d++)
      cut[d] = true;
  }
  for (int i = 0; i < p->n_axes; i++) {
    int64_t a = p->axes[i] < 0 ? p->axes[i] + nd : p->axes[i];
    if (a < 0 || a >= nd || a >= like->ndim)
      return DS_STATUS_INVALID_ARGUMENT;
    cut[a] = true;
  }
  DsCpuCopyPlan plan = {
      .ndim = nd, .es = ds_dtype_size(in->dtype), .in = in->data, .out = out->data};
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    int64_t want = cut[d] ? like->shape[d] : in->shape[d];
    if (want > in->shape[d] || out->shape[d] != want)
      return DS_STATUS_INVALID_ARGUMENT;
    plan.shape[d] = want;
    plan.stride[d] = s;
    s *= in->shape[d];
  }
  if (ds_tensor_numel(out) == 0)
    return DS_STATUS_OK;
  if (nd == 0) {
    memcpy(out->data, in->data, plan.es);
    return DS_STATUS_OK;
  }
  ds_cpu_copy_plan_run(&plan, ctx->pool);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* argsort */

/* The keys of one sort: `n` elements `stride` apart from `base`. */
typedef struct {
  DsDType t;
  const char *base;
  int64_t stride;
} Keys;

/* -1, 0 or 1 for key a against key b in ascending order, NaN after every number. */
static int key_cmp(const Keys *k, int64_t a, int64_t b)
{
  return ds_cpu_compare_elements(k->t, k->base, a * k->stride, b * k->stride);
}

/* Whether key a goes before key b. Descending order keeps NaN last too, and equal keys never
 * go first, which keeps the merge sort stable in both directions. */
static inline bool key_before(const Keys *k, bool ascend, int64_t a, int64_t b)
{
  int c = key_cmp(k, a, b);
  if (ascend)
    return c < 0;
  const char *x = k->base;
  bool a_nan = false, b_nan = false;
  if (k->t == DS_DTYPE_FLOAT32) {
    a_nan = isnan(((const float *)x)[a * k->stride]);
    b_nan = isnan(((const float *)x)[b * k->stride]);
  } else if (k->t == DS_DTYPE_FLOAT64) {
    a_nan = isnan(((const double *)x)[a * k->stride]);
    b_nan = isnan(((const double *)x)[b * k->stride]);
  }
  if (a_nan || b_nan)
    return !a_nan && b_nan;
  return c > 0;
}

/* Stable bottom-up merge sort of the positions idx[0..n) by their keys; tmp holds n more. */
static void merge_sort(const Keys *k, bool ascend, int64_t *idx, int64_t *tmp, int64_t n)
{
  /* Runs of 16 by insertion sort first: fewer passes, and it is stable too. */
  const int64_t run = 16;
  for (int64_t lo = 0; lo < n; lo += run) {
    int64_t hi = MIN(n, lo + run);
    for (int64_t i = lo + 1; i < hi; i++) {
      int64_t v = idx[i], j = i;
      while (j > lo && key_before(k, ascend, v, idx[j - 1])) {
        idx[j] = idx[j - 1];
        j--;
      }
      idx[j] = v;
    }
  }
  int64_t *src = idx, *dst = tmp;
  for (int64_t width = run; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = MIN(n, lo + width), hi = MIN(n, lo + 2 * width);
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi)
        dst[o++] = key_before(k, ascend, src[j], src[i]) ? src[j++] : src[i++];
      while (i < mid)
        dst[o++] = src[i++];
      while (j < hi)
        dst[o++] = src[j++];
    }
    int64_t *swap = src;
    src = dst;
    dst = swap;
  }
  if (src != idx)
    memcpy(idx, src, (size_t)n * sizeof(int64_t));
}

typedef struct {
  DsDType key_t, out_t;
  const char *keys;
  void *out;
  int64_t len, inner; /* sorted length; rows are (outer, inner) pairs, keys `inner` apart */
  bool ascend;
  int64_t *idx, *tmp; /* workspace: len positions per row, twice */
} ArgsortJob;

static void argsort_worker(void *ctx, int64_t begin, int64_t end)
{
  const ArgsortJob *job = ctx;
  size_t key_es = ds_dtype_size(job->key_t);
  for (int64_t row = begin; row < end; row++) {
    int64_t o = row / job->inner, i = row % job->inner;
    int64_t first = o * job->len * job->inner + i;
    Keys k = {job->key_t, job->keys + (size_t)first * key_es, job->inner};
    int64_t *idx = job->idx + row * job->len, *tmp = job->tmp + row * job->len;
    for (int64_t j = 0; j < job->len; j++)
      idx[j] = j;
    merge_sort(&k, job->ascend, idx, tmp, job->len);
    for (int64_t j = 0; j < job->len; j++) {
      int64_t at = first + j * job->inner;
      switch (job->out_t) {
      case DS_DTYPE_FLOAT32:
        ((float *)job->out)[at] = (float)idx[j];
        break;
      case DS_DTYPE_FLOAT64:
        ((double *)job->out)[at] = (double)idx[j];
        break;
      case DS_DTYPE_INT32:
        ((int32_t *)job->out)[at] = (int32_t)idx[j];
        break;
      case DS_DTYPE_UINT8:
        ((uint8_t *)job->out)[at] = (uint8_t)idx[j];
        break;
      default:
        ((int64_t *)job->out)[at] = idx[j];
        break;
      }
    }
  }
}

/* The sort geometry: `len` positions per sort, `inner` apart, numel / len sorts. */
static bool argsort_geometry(const DsArgsortParam *p, const DsTensor *in, int64_t *len,
                             int64_t *inner)
{
  if (in->ndim == 0 || !p->has_axis) {
    *len = ds_tensor_numel(in);
    *inner = 1;
    return true;
  }
  int axis = p->axis < 0 ? p->axis + in->ndim : p->axis;
  if (axis < 0 || axis >= in->ndim)
    return false;
  *len = in->shape[axis];
  *inner = ds_shape_span(in->shape, axis + 1, in->ndim);
  return true;
}

static size_t argsort_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                                const DsTensor *outputs, int n_outputs)
{
  (void)param;
  (void)n_inputs;
  (void)outputs;
  (void)n_outputs;
  /* Two position arrays per sort; every element belongs to exactly one sort. */
  return 2 * (size_t)ds_tensor_numel(&inputs[0]) * sizeof(int64_t);
}

static DsStatus k_argsort(const DsKernelCtx *ctx)
{
  const DsArgsortParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (!ds_dtype_is_valid(in->dtype) || ds_dtype_is_storage_only(in->dtype))
    return DS_STATUS_UNSUPPORTED;
  if (out->dtype != p->dtype || ds_index_dtype_capacity(out->dtype) == 0)
    return DS_STATUS_UNSUPPORTED;
  int64_t len, inner, n = ds_tensor_numel(in);
  if (!argsort_geometry(p, in, &len, &inner) || ds_tensor_numel(out) != n)
    return DS_STATUS_INVALID_ARGUMENT;
  if (len > ds_index_dtype_capacity(out->dtype))
    return DS_STATUS_INVALID_ARGUMENT;
  if (n == 0)
    return DS_STATUS_OK;
  if (ctx->workspace == NULL)
    return DS_STATUS_NO_MEMORY;
  int64_t rows = n / len;
  int64_t *positions = ctx->workspace;
  ArgsortJob job = {.key_t = in->dtype,
                    .out_t = out->dtype,
                    .keys = in->data,
                    .out = out->data,
                    .len = len,
                    .inner = inner,
                    .ascend = p->is_ascend,
                    .idx = positions,
                    .tmp = positions + n};
  /* A sort costs about len * log2(len) comparisons: share rows once that adds up. */
  int64_t cost = len * (int64_t)MAX(1, (int)ceil(log2((double)len + 1)));
  ds_parallel_for(ctx->pool, rows, MAX(1, DS_CPU_PARALLEL_GRAIN / cost), argsort_worker, &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* gather_nd */

typedef struct {
  const char *data;
  const DsTensor *idx;
  char *out;
  int64_t m, n;                 /* indexed axes; positions */
  int64_t dims[DS_MAX_NDIM];    /* sizes of the indexed axes */
  int64_t strides[DS_MAX_NDIM]; /* their strides, in blocks */
  int64_t block_bytes;          /* bytes of data.shape[m:] */
  atomic_int out_of_range;
} GatherNdJob;

/* Index j of position i on an axis of size `dim`: MXNet takes [-dim, dim - 1], adds dim and
 * truncates (so 2.7 picks 2 and -0.5 picks dim - 1). -1 when out of range. */
static int64_t gather_index(const DsTensor *idx, int64_t at, int64_t dim)
{
  const void *base = idx->data;
  switch (idx->dtype) {
  case DS_DTYPE_FLOAT32:
  case DS_DTYPE_FLOAT64: {
    double x =
        idx->dtype == DS_DTYPE_FLOAT32 ? ((const float *)base)[at] : ((const double *)base)[at];
    if (!(x >= (double)-dim && x <= (double)(dim - 1)))
      return -1;
    return (int64_t)(x + (double)dim) % dim;
  }
  default: {
    int64_t x;
    switch (idx->dtype) {
    case DS_DTYPE_INT32:
      x = ((const int32_t *)base)[at];
      break;
    case DS_DTYPE_INT64:
      x = ((const int64_t *)base)[at];
      break;
    case DS_DTYPE_INT8:
      x = ((const int8_t *)base)[at];
      break;
    default: /* uint8, bool */
      x = ((const uint8_t *)base)[at];
      break;
    }
    if (x < -dim || x > dim - 1)
      return -1;
    return x < 0 ? x + dim : x;
  }
  }
}

static void gather_nd_worker(void *ctx, int64_t begin, int64_t end)
{
  GatherNdJob *job = ctx;
  for (int64_t i = begin; i < end; i++) {
    int64_t off = 0;
    for (int64_t j = 0; j < job->m; j++) {
      int64_t k = gather_index(job->idx, j * job->n + i, job->dims[j]);
      if (k < 0) {
        atomic_store_explicit(&job->out_of_range, 1, memory_order_relaxed);
        return;
      }
      off += k * job->strides[j];
    }
    memcpy(job->out + i * job->block_bytes, job->data + off * job->block_bytes,
           (size_t)job->block_bytes);
  }
}

static DsStatus k_gather_nd(const DsKernelCtx *ctx)
{
  const DsTensor *data = &ctx->inputs[0], *idx = &ctx->inputs[1];
  DsTensor *out = &ctx->outputs[0];
  if (!ds_dtype_is_valid(idx->dtype) || ds_dtype_is_storage_only(idx->dtype))
    return DS_STATUS_UNSUPPORTED;
  if (out->dtype != data->dtype || idx->ndim < 2)
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t m = idx->shape[0];
  if (m < 1 || m > data->ndim || out->ndim != idx->ndim - 1 + data->ndim - (int)m)
    return DS_STATUS_INVALID_ARGUMENT;
  for (int d = 1; d < idx->ndim; d++)
    if (out->shape[d - 1] != idx->shape[d])
      return DS_STATUS_INVALID_ARGUMENT;
  for (int d = (int)m; d < data->ndim; d++)
    if (out->shape[idx->ndim - 1 + d - m] != data->shape[d])
      return DS_STATUS_INVALID_ARGUMENT;
  GatherNdJob job = {.data = data->data, .idx = idx, .out = out->data, .m = m};
  job.n = ds_shape_span(idx->shape, 1, idx->ndim);
  job.block_bytes =
      ds_shape_span(data->shape, (int)m, data->ndim) * (int64_t)ds_dtype_size(data->dtype);
  int64_t s = 1;
  for (int j = (int)m - 1; j >= 0; j--) {
    job.dims[j] = data->shape[j];
    job.strides[j] = s;
    s *= data->shape[j];
  }
  atomic_init(&job.out_of_range, 0);
  if (job.n == 0)
    return DS_STATUS_OK;
  ds_parallel_for(ctx->pool, job.n, ds_cpu_copy_grain(job.block_bytes), gather_nd_worker, &job);
  return atomic_load(&job.out_of_range) ? DS_STATUS_OUT_OF_RANGE : DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* shape_array, size_array: the input's geometry, never its values. */

static DsStatus k_shape_array(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (out->dtype != DS_DTYPE_INT64 || ds_tensor_numel(out) != in->ndim)
    return DS_STATUS_INVALID_ARGUMENT;
  for (int d = 0; d < in->ndim; d++)
    ((int64_t *)out->data)[d] = in->shape[d];
  return DS_STATUS_OK;
}

static DsStatus k_size_array(const DsKernelCtx *ctx)
{
  DsTensor *out = &ctx->outputs[0];
  if (out->dtype != DS_DTYPE_INT64 || ds_tensor_numel(out) != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  *(int64_t *)out->data = ds_tensor_numel(&ctx->inputs[0]);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* take_along_axis, put_along_axis */

/* Where an indices position reads or writes in the data: for every axis but `axis` the same
 * coordinate, on `axis` the index value. */
typedef struct {
  const DsTensor *data, *idx;
  int axis;
  int64_t dstride[DS_MAX_NDIM];
} AlongAxis;

/* Checks shapes and fills the data's strides; false if indices do not fit the data. */
static bool along_axis_setup(AlongAxis *g, const DsTensor *data, const DsTensor *idx, int axis)
{
  if (data->ndim != idx->ndim || data->ndim == 0 || axis < -data->ndim || axis >= data->ndim)
    return false;
  g->data = data;
  g->idx = idx;
  g->axis = axis < 0 ? axis + data->ndim : axis;
  int64_t s = 1;
  for (int d = data->ndim - 1; d >= 0; d--) {
    if (d != g->axis && idx->shape[d] > data->shape[d])
      return false;
    g->dstride[d] = s;
    s *= data->shape[d];
  }
  return true;
}

/* The data element indices position `u` names, or -1 when its index is out of range. */
static int64_t along_axis_offset(const AlongAxis *g, int64_t u)
{
  int64_t off = 0, rest = u;
  for (int d = g->idx->ndim - 1; d >= 0; d--) {
    int64_t c = rest % g->idx->shape[d];
    rest /= g->idx->shape[d];
    if (d == g->axis) {
      c = gather_index(g->idx, u, g->data->shape[d]);
      if (c < 0)
        return -1;
    }
    off += c * g->dstride[d];
  }
  return off;
}

typedef struct {
  AlongAxis g;
  char *out;
  size_t es;
  atomic_int out_of_range;
} TakeAlongJob;

static void take_along_worker(void *ctx, int64_t begin, int64_t end)
{
  TakeAlongJob *job = ctx;
  const char *data = job->g.data->data;
  for (int64_t u = begin; u < end; u++) {
    int64_t off = along_axis_offset(&job->g, u);
    if (off < 0) {
      atomic_store_explicit(&job->out_of_range, 1, memory_order_relaxed);
      return;
    }
    memcpy(job->out + (size_t)u * job->es, data + (size_t)off * job->es, job->es);
  }
}

static DsStatus k_take_along_axis(const DsKernelCtx *ctx)
{
  const DsTakeAlongAxisParam *p = ctx->param;
  const DsTensor *data = &ctx->inputs[0], *idx = &ctx->inputs[1];
  DsTensor *out = &ctx->outputs[0];
  if (!ds_cpu_dtype_computable(idx->dtype))
    return DS_STATUS_UNSUPPORTED;
  TakeAlongJob job = {.out = out->data, .es = ds_dtype_size(data->dtype)};
  if (!along_axis_setup(&job.g, data, idx, p->axis) || out->dtype != data->dtype ||
      !ds_geom_same_shape(out, idx))
    return DS_STATUS_INVALID_ARGUMENT;
  atomic_init(&job.out_of_range, 0);
  int64_t n = ds_tensor_numel(out);
  if (n == 0)
    return DS_STATUS_OK;
  ds_parallel_for(ctx->pool, n, DS_CPU_PARALLEL_GRAIN, take_along_worker, &job);
  return atomic_load(&job.out_of_range) ? DS_STATUS_OUT_OF_RANGE : DS_STATUS_OK;
}

/* dst (one element of dtype t) combined with src as `r` says. */
static void scatter_combine(DsDType t, DsScatterReduction r, void *dst, const void *src)
{
#define COMBINE(T)                                                                                 \
  {                                                                                                \
    T a = *(T *)dst, b = *(const T *)src;                                                          \
    switch (r) {                                                                                   \
    case DS_SCATTER_ADD:                                                                           \
      *(T *)dst = (T)(a + b);                                                                      \
      break;                                                                                       \
    case DS_SCATTER_MUL:                                                                           \
      *(T *)dst = (T)(a * b);                                                                      \
      break;                                                                                       \
    case DS_SCATTER_MAX:                                                                           \
      *(T *)dst = b > a ? b : a;                                                                   \
      break;                                                                                       \
    case DS_SCATTER_MIN:                                                                           \
      *(T *)dst = b < a ? b : a;                                                                   \
      break;                                                                                       \
    default:                                                                                       \
      *(T *)dst = b;                                                                               \
      break;                                                                                       \
    }                                                                                              \
    return;                                                                                        \
  }
  switch (t) {
  case DS_DTYPE_FLOAT32:
    COMBINE(float)
  case DS_DTYPE_FLOAT64:
    COMBINE(double)
  case DS_DTYPE_INT32:
    COMBINE(int32_t)
  case DS_DTYPE_INT64:
    COMBINE(int64_t)
  case DS_DTYPE_INT8:
    COMBINE(int8_t)
  default: /* uint8, bool: a bool's product and sum stay 0/1 through the test below */
    COMBINE(uint8_t)
  }
#undef COMBINE
}

/* The output starts as a copy of the data (unless it is the data's buffer). */
static void copy_data_to_output(const DsKernelCtx *ctx, const DsTensor *data, DsTensor *out)
{
  ds_cpu_copy_bytes(out->data, data->data, ds_tensor_nbytes(out), ctx->pool);
}

static DsStatus k_put_along_axis(const DsKernelCtx *ctx)
{
  const DsPutAlongAxisParam *p = ctx->param;
  const DsTensor *data = &ctx->inputs[0], *idx = &ctx->inputs[1], *upd = &ctx->inputs[2];
  DsTensor *out = &ctx->outputs[0];
  if (!ds_cpu_dtype_computable(idx->dtype) ||
      (p->reduction != DS_SCATTER_NONE && !ds_cpu_dtype_computable(data->dtype)))
    return DS_STATUS_UNSUPPORTED;
  AlongAxis g;
  if (!along_axis_setup(&g, data, idx, p->axis) || !ds_geom_same_shape(idx, upd) ||
      !ds_geom_same_shape(out, data) || upd->dtype != data->dtype || out->dtype != data->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  /* Every index is checked before anything is written. */
  int64_t n = ds_tensor_numel(idx);
  for (int64_t u = 0; u < n; u++)
    if (along_axis_offset(&g, u) < 0)
      return DS_STATUS_OUT_OF_RANGE;
  copy_data_to_output(ctx, data, out);
  size_t es = ds_dtype_size(data->dtype);
  /* In order, one thread: duplicates combine (or overwrite) in the indices' order. */
  for (int64_t u = 0; u < n; u++) {
    char *dst = (char *)out->data + (size_t)along_axis_offset(&g, u) * es;
    const char *src = (const char *)upd->data + (size_t)u * es;
    if (p->reduction == DS_SCATTER_NONE)
      memcpy(dst, src, es);
    else
      scatter_combine(data->dtype, p->reduction, dst, src);
  }
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* batch_gather_nd, scatter_nd_update */

/* The geometry shared by both: `batch` groups of `n` tuples of `k` coordinates, each naming a
 * block of `block` elements in a group of the data (`group` elements). */
typedef struct {
  const DsTensor *idx;
  int64_t batch, n, k, block, group;
  int64_t dims[DS_MAX_NDIM], strides[DS_MAX_NDIM]; /* of the indexed axes, strides in blocks */
} NdIndex;

static bool nd_index_setup(NdIndex *g, const DsTensor *data, const DsTensor *idx, int b)
{
  if (idx->ndim < 1 || idx->ndim <= b || data->ndim < b)
    return false;
  int64_t k = idx->shape[idx->ndim - 1];
  if (k > data->ndim - b)
    return false;
  for (int d = 0; d < b; d++)
    if (idx->shape[d] != data->shape[d])
      return false;
  *g = (NdIndex){.idx = idx, .k = k};
  g->batch = ds_shape_span(data->shape, 0, b);
  g->n = ds_shape_span(idx->shape, b, idx->ndim - 1);
  g->block = ds_shape_span(data->shape, b + (int)k, data->ndim);
  g->group = ds_shape_span(data->shape, b, data->ndim);
  int64_t s = 1;
  for (int j = (int)k - 1; j >= 0; j--) {
    g->dims[j] = data->shape[b + j];
    g->strides[j] = s;
    s *= g->dims[j];
  }
  return true;
}

/* The data offset (in elements) of tuple `t` (over all groups), or -1 when out of range. */
static int64_t nd_index_offset(const NdIndex *g, int64_t t)
{
  int64_t off = 0;
  for (int64_t j = 0; j < g->k; j++) {
    int64_t c = gather_index(g->idx, t * g->k + j, g->dims[j]);
    if (c < 0)
      return -1;
    off += c * g->strides[j];
  }
  return (t / MAX(g->n, 1)) * g->group + off * g->block;
}

typedef struct {
  NdIndex g;
  const char *data;
  char *out;
  size_t block_bytes, es;
  atomic_int out_of_range;
} BatchGatherJob;

static void batch_gather_worker(void *ctx, int64_t begin, int64_t end)
{
  BatchGatherJob *job = ctx;
  for (int64_t t = begin; t < end; t++) {
    int64_t off = nd_index_offset(&job->g, t);
    if (off < 0) {
      atomic_store_explicit(&job->out_of_range, 1, memory_order_relaxed);
      return;
    }
    memcpy(job->out + (size_t)t * job->block_bytes, job->data + (size_t)off * job->es,
           job->block_bytes);
  }
}

static DsStatus k_batch_gather_nd(const DsKernelCtx *ctx)
{
  const DsBatchGatherNdParam *p = ctx->param;
  const DsTensor *data = &ctx->inputs[0], *idx = &ctx->inputs[1];
  DsTensor *out = &ctx->outputs[0];
  if (!ds_cpu_dtype_computable(idx->dtype))
    return DS_STATUS_UNSUPPORTED;
  BatchGatherJob job = {.data = data->data, .out = out->data, .es = ds_dtype_size(data->dtype)};
  if (!nd_index_setup(&job.g, data, idx, p->batch_dims) || out->dtype != data->dtype ||
      ds_tensor_numel(out) != job.g.batch * job.g.n * job.g.block)
    return DS_STATUS_INVALID_ARGUMENT;
  job.block_bytes = (size_t)job.g.block * job.es;
  atomic_init(&job.out_of_range, 0);
  int64_t tuples = job.g.batch * job.g.n;
  if (tuples == 0 || job.block_bytes == 0)
    return DS_STATUS_OK;
  ds_parallel_for(ctx->pool, tuples, ds_cpu_copy_grain((int64_t)job.block_bytes),
                  batch_gather_worker, &job);
  return atomic_load(&job.out_of_range) ? DS_STATUS_OUT_OF_RANGE : DS_STATUS_OK;
}

static DsStatus k_scatter_nd_update(const DsKernelCtx *ctx)
{
  const DsScatterNdParam *p = ctx->param;
  const DsTensor *data = &ctx->inputs[0], *idx = &ctx->inputs[1], *upd = &ctx->inputs[2];
  DsTensor *out = &ctx->outputs[0];
  if (!ds_cpu_dtype_computable(idx->dtype) ||
      (p->reduction != DS_SCATTER_NONE && !ds_cpu_dtype_computable(data->dtype)))
    return DS_STATUS_UNSUPPORTED;
  NdIndex g;
  if (!nd_index_setup(&g, data, idx, 0) || !ds_geom_same_shape(out, data) ||
      upd->dtype != data->dtype || out->dtype != data->dtype ||
      ds_tensor_numel(upd) != g.n * g.block)
    return DS_STATUS_INVALID_ARGUMENT;
  for (int64_t t = 0; t < g.n; t++)
    if (nd_index_offset(&g, t) < 0)
      return DS_STATUS_OUT_OF_RANGE;
  copy_data_to_output(ctx, data, out);
  size_t es = ds_dtype_size(data->dtype);
  for (int64_t t = 0; t < g.n; t++) {
    char *dst = (char *)out->data + (size_t)nd_index_offset(&g, t) * es;
    const char *src = (const char *)upd->data + (size_t)(t * g.block) * es;
    if (p->reduction == DS_SCATTER_NONE) {
      memcpy(dst, src, (size_t)g.block * es);
      continue;
    }
    for (int64_t e = 0; e < g.block; e++)
      scatter_combine(data->dtype, p->reduction, dst + (size_t)e * es, src + (size_t)e * es);
  }
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* topk */

typedef struct {
  DsDType key_t, idx_t;
  const char *keys;
  size_t es;
  char *values;  /* NULL unless wanted */
  void *indices; /* NULL unless wanted */
  char *mask;    /* NULL unless wanted */
  int64_t len, inner, k;
  bool ascend;
  int64_t *idx, *tmp; /* workspace: len positions per lane, twice */
  char one[8];
} TopkJob;

static void topk_worker(void *ctx, int64_t begin, int64_t end)
{
  const TopkJob *job = ctx;
  for (int64_t lane = begin; lane < end; lane++) {
    int64_t o = lane / job->inner, i = lane % job->inner;
    int64_t first = o * job->len * job->inner + i, ofirst = o * job->k * job->inner + i;
    Keys keys = {job->key_t, job->keys + (size_t)first * job->es, job->inner};
    int64_t *idx = job->idx + lane * job->len, *tmp = job->tmp + lane * job->len;
    for (int64_t j = 0; j < job->len; j++)
      idx[j] = j;
    merge_sort(&keys, job->ascend, idx, tmp, job->len);
    for (int64_t j = 0; j < job->k; j++) {
      int64_t at = ofirst + j * job->inner, src = first + idx[j] * job->inner;
      if (job->values != NULL)
        memcpy(job->values + (size_t)at * job->es, job->keys + (size_t)src * job->es, job->es);
      if (job->indices != NULL)
        ds_cpu_store_f64(job->idx_t, (char *)job->indices + (size_t)at * ds_dtype_size(job->idx_t),
                         (double)idx[j]);
      if (job->mask != NULL)
        memcpy(job->mask + (size_t)src * job->es, job->one, job->es);
    }
  }
}

/* Lanes of `len` elements `inner` apart along the axis (or the whole flattened data). */
static bool topk_geometry(bool has_axis, int axis, const DsTensor *in, int64_t *len,
                          int64_t *inner)
{
  if (!has_axis) {
    *len = ds_tensor_numel(in);
    *inner = 1;
    return true;
  }
  if (in->ndim == 0 || axis < -in->ndim || axis >= in->ndim)
    return false;
  int a = axis < 0 ? axis + in->ndim : axis;
  *len = in->shape[a];
  *inner = ds_shape_span(in->shape, a + 1, in->ndim);
  return true;
}

static size_t topk_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                             const DsTensor *outputs, int n_outputs)
{
  (void)param;
  (void)n_inputs;
  (void)outputs;
  (void)n_outputs;
  return 2 * (size_t)ds_tensor_numel(&inputs[0]) * sizeof(int64_t);
}

/* The selection itself, once the outputs exist: values/indices/mask may each be NULL. */
static DsStatus topk_run(const DsKernelCtx *ctx, bool has_axis, int axis, int64_t k, bool ascend,
                         DsTensor *values, DsTensor *indices, DsTensor *mask)
{
  const DsTensor *in = &ctx->inputs[0];
  int64_t len, inner, n = ds_tensor_numel(in);
  if (!topk_geometry(has_axis, axis, in, &len, &inner) || k > len)
    return DS_STATUS_INVALID_ARGUMENT;
  TopkJob job = {.key_t = in->dtype, .keys = in->data, .es = ds_dtype_size(in->dtype),
                 .len = len, .inner = inner, .k = k, .ascend = ascend};
  if (values != NULL)
    job.values = values->data;
  if (indices != NULL) {
    job.indices = indices->data;
    job.idx_t = indices->dtype;
    if (len > ds_index_dtype_capacity(indices->dtype))
      return DS_STATUS_INVALID_ARGUMENT;
  }
  if (mask != NULL) {
    job.mask = mask->data;
    memset(mask->data, 0, ds_tensor_nbytes(mask));
    ds_cpu_store_f64(in->dtype, job.one, 1.0);
  }
  if (n == 0 || k == 0)
    return DS_STATUS_OK;
  if (ctx->workspace == NULL)
    return DS_STATUS_NO_MEMORY;
  job.idx = ctx->workspace;
  job.tmp = job.idx + n;
  int64_t cost = len * (int64_t)MAX(1, (int)ceil(log2((double)len + 1)));
  ds_parallel_for(ctx->pool, n / len, MAX(1, DS_CPU_PARALLEL_GRAIN / cost), topk_worker, &job);
  return DS_STATUS_OK;
}

static DsStatus k_topk(const DsKernelCtx *ctx)
{
  const DsTopkParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  if (!ds_cpu_dtype_computable(in->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t len, inner;
  if (!topk_geometry(p->has_axis, p->axis, in, &len, &inner))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t k = p->k < 1 ? len : p->k;
  DsTensor *o = ctx->outputs;
  switch (p->ret_typ) {
  case DS_TOPK_VALUE:
    return topk_run(ctx, p->has_axis, p->axis, k, p->is_ascend, &o[0], NULL, NULL);
  case DS_TOPK_INDICES:
    return topk_run(ctx, p->has_axis, p->axis, k, p->is_ascend, NULL, &o[0], NULL);
  case DS_TOPK_MASK:
    return topk_run(ctx, p->has_axis, p->axis, k, p->is_ascend, NULL, NULL, &o[0]);
  default:
    return topk_run(ctx, p->has_axis, p->axis, k, p->is_ascend, &o[0], &o[1], NULL);
  }
}

/* _contrib_dynamic_topk: k read from its tensor, then the outputs sized and filled as topk. */
static DsStatus k_dynamic_topk(const DsKernelCtx *ctx)
{
  const DsDynamicTopkParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0], *kt = &ctx->inputs[1];
  if (!ds_cpu_dtype_computable(in->dtype) || !ds_cpu_dtype_computable(kt->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t len, inner;
  if (kt->ndim > 1 || ds_tensor_numel(kt) != 1 || !topk_geometry(true, p->axis, in, &len, &inner))
    return DS_STATUS_INVALID_ARGUMENT;
  double kv = ds_cpu_load_f64(kt->dtype, kt->data, 0);
  if (!(kv >= 0 && kv <= (double)len) || kv != floor(kv))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t shape[DS_MAX_NDIM];
  memcpy(shape, in->shape, sizeof shape);
  int axis = p->axis < 0 ? p->axis + in->ndim : p->axis;
  shape[axis] = (int64_t)kv;
  DsStatus status = ds_kernel_prepare_output(ctx, 0, in->dtype, in->ndim, shape);
  if (status == DS_STATUS_OK)
    status = ds_kernel_prepare_output(ctx, 1, p->dtype, in->ndim, shape);
  if (status != DS_STATUS_OK)
    return status;
  return topk_run(ctx, true, p->axis, shape[axis], p->is_ascend, &ctx->outputs[0],
                  &ctx->outputs[1], NULL);
}

/* ------------------------------------------------------------------------------------------ */
/* one_hot, pick */

/* An index element truncated towards zero to an integer (MXNet's static_cast<index_t>), or
 * INT64_MIN for NaN, which matches no position. */
static int64_t truncated_index(const DsTensor *t, int64_t i)
{
  if (t->dtype == DS_DTYPE_INT64)
    return ((const int64_t *)t->data)[i];
  double v = ds_cpu_load_f64(t->dtype, t->data, i);
  return isnan(v) ? INT64_MIN : ds_cpu_saturate_i64(v);
}

static DsStatus k_one_hot(const DsKernelCtx *ctx)
{
  const DsOneHotParam *p = ctx->param;
  const DsTensor *indices = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  int64_t n = ds_tensor_numel(indices);
  if (ds_tensor_numel(out) != n * p->depth || out->dtype != p->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(indices->dtype) || !ds_cpu_dtype_computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  size_t es = ds_dtype_size(out->dtype);
  char on[8], off[8];
  ds_cpu_store_f64(out->dtype, on, p->on_value);
  ds_cpu_store_f64(out->dtype, off, p->off_value);
  char *o = out->data;
  for (int64_t i = 0; i < n * p->depth; i++)
    memcpy(o + (size_t)i * es, off, es);
  for (int64_t i = 0; i < n; i++) {
    int64_t j = truncated_index(indices, i);
    if (j >= 0 && j < p->depth)
      memcpy(o + (size_t)(i * p->depth + j) * es, on, es);
  }
  return DS_STATUS_OK;
}

/* out[l, t] = data[l, j, t] for each leading l and trailing t, j the index clipped to
 * [0, len) or wrapped around it (MXNet's pick kernel). */
static DsStatus k_pick(const DsKernelCtx *ctx)
{
  const DsPickParam *p = ctx->param;
  const DsTensor *data = &ctx->inputs[0], *index = &ctx->inputs[1];
  DsTensor *out = &ctx->outputs[0];
  int axis = p->axis < 0 ? p->axis + data->ndim : p->axis;
  if (axis < 0 || axis >= data->ndim || out->dtype != data->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(index->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t leading = ds_shape_span(data->shape, 0, axis), len = data->shape[axis];
  int64_t trailing = ds_shape_span(data->shape, axis + 1, data->ndim);
  int64_t n = leading * trailing;
  if (ds_tensor_numel(out) != n || ds_tensor_numel(index) != n)
    return DS_STATUS_INVALID_ARGUMENT;
  if (n == 0)
    return DS_STATUS_OK;
  if (len == 0)
    return DS_STATUS_INVALID_ARGUMENT; /* nothing to pick from */
  size_t es = ds_dtype_size(data->dtype);
  for (int64_t i = 0; i < n; i++) {
    int64_t j = truncated_index(index, i);
    if (p->mode == DS_PICK_CLIP) {
      j = j < 0 ? 0 : (j >= len ? len - 1 : j);
    } else {
      j = j == INT64_MIN ? 0 : j % len;
      j += j < 0 ? len : 0;
    }
    int64_t l = i / trailing, t = i % trailing;
    memcpy((char *)out->data + (size_t)i * es,
           (const char *)data->data + (size_t)((l * len + j) * trailing + t) * es, es);
  }
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */

void ds_cpu_index_register(DsKernel *table)
{
  table[DS_OP_REPEAT] = (DsKernel){k_repeat, NULL};
  table[DS_OP_TILE] = (DsKernel){k_tile, NULL};
  table[DS_OP_REVERSE] = (DsKernel){k_reverse, NULL};
  table[DS_OP_STACK] = (DsKernel){k_stack, NULL};
  table[DS_OP_SLICE_CHANNEL] = (DsKernel){k_slice_channel, NULL};
  table[DS_OP_SLICE_LIKE] = (DsKernel){k_slice_like, NULL};
  table[DS_OP_ARGSORT] = (DsKernel){k_argsort, argsort_workspace};
  table[DS_OP_GATHER_ND] = (DsKernel){k_gather_nd, NULL};
  table[DS_OP_SHAPE_ARRAY] = (DsKernel){k_shape_array, NULL};
  table[DS_OP_SIZE_ARRAY] = (DsKernel){k_size_array, NULL};
  table[DS_OP_TAKE_ALONG_AXIS] = (DsKernel){k_take_along_axis, NULL};
  table[DS_OP_PUT_ALONG_AXIS] = (DsKernel){k_put_along_axis, NULL};
  table[DS_OP_BATCH_GATHER_ND] = (DsKernel){k_batch_gather_nd, NULL};
  table[DS_OP_SCATTER_ND_UPDATE] = (DsKernel){k_scatter_nd_update, NULL};
  table[DS_OP_TOPK] = (DsKernel){k_topk, topk_workspace};
  table[DS_OP_ONE_HOT] = (DsKernel){k_one_hot, NULL};
  table[DS_OP_PICK] = (DsKernel){k_pick, NULL};
  /* The dynamic form shares topk's selection (its op is listed with the dynamic family). */
  table[DS_OP_DYNAMIC_TOPK] = (DsKernel){k_dynamic_topk, topk_workspace};
}
