/* ds-cpu-dynamic.c: CPU kernels for the ops whose output shape depends on input values:
 * _contrib_boolean_mask, _npx_nonzero, _zeros_shape, _ones_shape, _full_shape,
 * _contrib_dynamic_reshape, _contrib_dynamic_arange and _npi_unique.
 *
 * Each kernel reads what decides its outputs' sizes first (the mask, the shape tensor, the
 * bounds, the sorted data), then sets each output's dtype and shape and has the executor
 * allocate it (ds_kernel_alloc_output), then writes it. An output that arrives already shaped
 * and allocated (an executor that knew the size) is checked against the size found instead.
 * Scratch (kept positions, sort permutations) comes from the workspace, sized from the inputs
 * alone. Data movement works on raw elements by size, so every dtype moves; values that are
 * read as numbers (shapes, bounds, unique's keys) must be of a computable dtype, while truth
 * tests (masks, nonzero) take every dtype, float16 included.
 */
#include <math.h>
#include <string.h>

#include "ds-cpu.h"
#include "ds-cpu-copy.h"

/* Element `i` as a whole number: false if it is not one (2.5, NaN, out of int64's range).
 * int64 is read exactly, not through a double. */
static bool load_whole(DsDType t, const void *base, int64_t i, int64_t *out)
{
  if (t == DS_DTYPE_INT64) {
    *out = ((const int64_t *)base)[i];
    return true;
  }
  double v = ds_cpu_load_f64(t, base, i);
  if (!(v >= -9.0e18 && v <= 9.0e18) || v != floor(v))
    return false;
  *out = (int64_t)v;
  return true;
}

/* Whether element `i` is nonzero, for every dtype: float16 by its bits (either zero has all
 * bits but the sign clear), NaN counting as nonzero as in NumPy. */
static bool truthy(DsDType t, const void *base, int64_t i)
{
  switch (t) {
  case DS_DTYPE_FLOAT32:
    return ((const float *)base)[i] != 0.0f;
  case DS_DTYPE_FLOAT64:
    return ((const double *)base)[i] != 0.0;
  case DS_DTYPE_FLOAT16:
    return (((const uint16_t *)base)[i] & 0x7fff) != 0;
  case DS_DTYPE_INT32:
    return ((const int32_t *)base)[i] != 0;
  case DS_DTYPE_INT64:
    return ((const int64_t *)base)[i] != 0;
  case DS_DTYPE_INT8:
    return ((const int8_t *)base)[i] != 0;
  default: /* uint8, bool */
    return ((const uint8_t *)base)[i] != 0;
  }
}

/* Gives output `index` its dtype and shape and a buffer. One the executor already shaped and
 * allocated must have exactly that dtype and shape. */
static DsStatus prepare_output(const DsKernelCtx *ctx, int index, DsDType dtype, int ndim,
                               const int64_t *shape)
{
  DsTensor *out = &ctx->outputs[index];
  if (out->ndim >= 0 && out->data != NULL) {
    if (out->dtype != dtype || out->ndim != ndim)
      return DS_STATUS_INVALID_ARGUMENT;
    for (int d = 0; d < ndim; d++)
      if (out->shape[d] != shape[d])
        return DS_STATUS_INVALID_ARGUMENT;
    return DS_STATUS_OK;
  }
  size_t nbytes;
  /* A size past int64 (a shape tensor of huge values) could never be allocated; saying so here
   * also keeps ds_tensor_numel() from overflowing later. */
  if (!ds_shape_checked_nbytes(shape, ndim, ds_dtype_size(dtype), (size_t)INT64_MAX, &nbytes))
    return DS_STATUS_NO_MEMORY;
  out->dtype = dtype;
  out->ndim = ndim;
  memcpy(out->shape, shape, sizeof(int64_t) * (size_t)ndim);
  out->data = NULL;
  return ds_kernel_alloc_output(ctx, index);
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_boolean_mask */

/* The data as (outer, len, row) blocks: output row (o, k) is input row (o, kept[k]). */
typedef struct {
  const char *in;
  char *out;
  size_t row_bytes;
  const int64_t *kept; /* the kept positions along the axis */
  int64_t n_kept, len; /* kept count; the axis' length */
} MaskJob;

static void mask_worker(void *ctx, int64_t begin, int64_t end)
{
  const MaskJob *job = ctx;
  for (int64_t u = begin; u < end; u++) {
    int64_t o = u / job->n_kept, k = job->kept[u % job->n_kept];
    memcpy(job->out + (size_t)u * job->row_bytes,
           job->in + (size_t)(o * job->len + k) * job->row_bytes, job->row_bytes);
  }
}

static int mask_axis(const DsBooleanMaskParam *p, const DsTensor *data)
{
  int axis = p->axis < 0 ? p->axis + data->ndim : p->axis;
  return axis >= 0 && axis < data->ndim ? axis : -1;
}

static size_t boolean_mask_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                                     const DsTensor *outputs, int n_outputs)
{
  (void)outputs;
  (void)n_outputs;
  if (param == NULL || n_inputs < 1)
    return 0;
  int axis = mask_axis(param, &inputs[0]);
  return axis < 0 ? 0 : (size_t)inputs[0].shape[axis] * sizeof(int64_t);
}

static DsStatus k_boolean_mask(const DsKernelCtx *ctx)
{
  const DsBooleanMaskParam *p = ctx->param;
  if (p == NULL || ctx->n_inputs != 2 || ctx->n_outputs != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *data = &ctx->inputs[0], *index = &ctx->inputs[1];
  int axis = mask_axis(p, data);
  if (axis < 0 || index->ndim != 1 || index->shape[0] != data->shape[axis])
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_dtype_is_valid(data->dtype) || !ds_dtype_is_valid(index->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t len = data->shape[axis];
  int64_t *kept = ctx->workspace;
  if (len > 0 && kept == NULL)
    return DS_STATUS_NO_MEMORY;
  int64_t n_kept = 0;
  for (int64_t i = 0; i < len; i++)
    if (truthy(index->dtype, index->data, i))
      kept[n_kept++] = i;
  int64_t shape[DS_MAX_NDIM];
  memcpy(shape, data->shape, sizeof shape);
  shape[axis] = n_kept;
  DsStatus status = prepare_output(ctx, 0, data->dtype, data->ndim, shape);
  if (status != DS_STATUS_OK)
    return status;
  MaskJob job = {
      .in = data->data, .out = ctx->outputs[0].data, .kept = kept, .n_kept = n_kept, .len = len};
  int64_t outer = ds_shape_span(data->shape, 0, axis);
  job.row_bytes =
      (size_t)ds_shape_span(data->shape, axis + 1, data->ndim) * ds_dtype_size(data->dtype);
  if (n_kept == 0 || outer == 0 || job.row_bytes == 0)
    return DS_STATUS_OK;
  ds_parallel_for(ctx->pool, outer * n_kept, ds_cpu_copy_grain((int64_t)job.row_bytes), mask_worker,
                  &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* _npx_nonzero */

/* (count, ndim) int64 coordinates of the nonzero elements in row-major order: counted in one
 * pass, written in a second that keeps the coordinates in an odometer. */
static DsStatus k_nonzero(const DsKernelCtx *ctx)
{
  if (ctx->n_inputs != 1 || ctx->n_outputs != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *x = &ctx->inputs[0];
  if (!ds_dtype_is_valid(x->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(x), count = 0;
  for (int64_t i = 0; i < n; i++)
    count += truthy(x->dtype, x->data, i);
  int64_t shape[2] = {count, x->ndim};
  DsStatus status = prepare_output(ctx, 0, DS_DTYPE_INT64, 2, shape);
  if (status != DS_STATUS_OK || count == 0 || x->ndim == 0)
    return status;
  int64_t *out = ctx->outputs[0].data;
  int64_t idx[DS_MAX_NDIM] = {0};
  for (int64_t i = 0; i < n; i++) {
    if (truthy(x->dtype, x->data, i)) {
      memcpy(out, idx, sizeof(int64_t) * (size_t)x->ndim);
      out += x->ndim;
    }
    for (int d = x->ndim - 1; d >= 0; d--) {
      if (++idx[d] < x->shape[d])
        break;
      idx[d] = 0;
    }
  }
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* _zeros_shape, _ones_shape, _full_shape */

/* The dims held by a 1-D shape tensor: each a non-negative whole number. *n is its length. */
static DsStatus read_shape_tensor(const DsTensor *s, int64_t *dims, int *n)
{
  if (s->ndim != 1 || s->shape[0] > DS_MAX_NDIM)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(s->dtype))
    return DS_STATUS_UNSUPPORTED;
  *n = (int)s->shape[0];
  for (int d = 0; d < *n; d++)
    if (!load_whole(s->dtype, s->data, d, &dims[d]))
      return DS_STATUS_INVALID_ARGUMENT;
  return DS_STATUS_OK;
}

typedef struct {
  char *out;
  size_t es;
  char cell[8];
} FillJob;

static void fill_worker(void *ctx, int64_t begin, int64_t end)
{
  const FillJob *job = ctx;
  ds_cpu_fill_elems(job->out + (size_t)begin * job->es, job->cell, job->es, end - begin);
}

static DsStatus k_shape_init(const DsKernelCtx *ctx)
{
  const DsShapeInitParam *p = ctx->param;
  if (p == NULL || ctx->n_inputs != 1 || ctx->n_outputs != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(p->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t dims[DS_MAX_NDIM];
  int n;
  DsStatus status = read_shape_tensor(&ctx->inputs[0], dims, &n);
  for (int d = 0; d < n && status == DS_STATUS_OK; d++)
    if (dims[d] < 0)
      status = DS_STATUS_INVALID_ARGUMENT;
  if (status == DS_STATUS_OK)
    status = prepare_output(ctx, 0, p->dtype, n, dims);
  if (status != DS_STATUS_OK)
    return status;
  DsTensor *out = &ctx->outputs[0];
  FillJob job = {.out = out->data, .es = ds_dtype_size(out->dtype)};
  ds_cpu_store_f64(out->dtype, job.cell, p->value);
  ds_parallel_for(ctx->pool, ds_tensor_numel(out), DS_CPU_PARALLEL_GRAIN * 4, fill_worker, &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_dynamic_reshape */

typedef struct {
  const char *src;
  char *dst;
} MemcpyJob;

static void memcpy_worker(void *ctx, int64_t begin, int64_t end)
{
  const MemcpyJob *job = ctx;
  memcpy(job->dst + begin, job->src + begin, (size_t)(end - begin));
}

/* The target shape: 0 copies the data's dim at that position, one -1 takes what is left. */
static DsStatus dynamic_reshape_target(const DsTensor *data, const int64_t *codes, int n,
                                       int64_t *dims)
{
  int64_t size = ds_tensor_numel(data), known = 1;
  int infer_at = -1;
  for (int d = 0; d < n; d++) {
    int64_t c = codes[d];
    if (c == -1) {
      if (infer_at >= 0)
        return DS_STATUS_INVALID_ARGUMENT;
      infer_at = d;
      continue;
    }
    if (c < -1 || (c == 0 && d >= data->ndim))
      return DS_STATUS_INVALID_ARGUMENT;
    dims[d] = c == 0 ? data->shape[d] : c;
    /* A product past the size can only end in a mismatch: stop before it can overflow. */
    if (dims[d] != 0 && known > INT64_MAX / dims[d])
      return DS_STATUS_INVALID_ARGUMENT;
    known *= dims[d];
  }
  if (infer_at >= 0) {
    /* NumPy refuses a -1 next to a 0 dim: any size would do. */
    if (known == 0 || size % known != 0)
      return DS_STATUS_INVALID_ARGUMENT;
    dims[infer_at] = size / known;
    known = size;
  }
  return known == size ? DS_STATUS_OK : DS_STATUS_INVALID_ARGUMENT;
}

static DsStatus k_dynamic_reshape(const DsKernelCtx *ctx)
{
  if (ctx->n_inputs != 2 || ctx->n_outputs != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *data = &ctx->inputs[0];
  int64_t codes[DS_MAX_NDIM], dims[DS_MAX_NDIM];
  int n;
  DsStatus status = read_shape_tensor(&ctx->inputs[1], codes, &n);
  if (status == DS_STATUS_OK)
    status = dynamic_reshape_target(data, codes, n, dims);
  if (status == DS_STATUS_OK)
    status = prepare_output(ctx, 0, data->dtype, n, dims);
  if (status != DS_STATUS_OK)
    return status;
  DsTensor *out = &ctx->outputs[0];
  if (out->data == data->data || ds_tensor_nbytes(out) == 0)
    return DS_STATUS_OK;
  MemcpyJob job = {data->data, out->data};
  ds_parallel_for(ctx->pool, (int64_t)ds_tensor_nbytes(out), DS_CPU_COPY_GRAIN, memcpy_worker,
                  &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_dynamic_arange */

typedef struct {
  double start, step;
  char *out;
  DsDType t;
  size_t es;
} ArangeJob;

static void arange_worker(void *ctx, int64_t begin, int64_t end)
{
  const ArangeJob *job = ctx;
  for (int64_t i = begin; i < end; i++)
    ds_cpu_store_f64(job->t, job->out + (size_t)i * job->es, job->start + (double)i * job->step);
}

/* A scalar bound: shape () or (1,), of a computable dtype. */
static DsStatus read_bound(const DsTensor *t, double *out)
{
  if (t->ndim > 1 || ds_tensor_numel(t) != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(t->dtype))
    return DS_STATUS_UNSUPPORTED;
  *out = ds_cpu_load_f64(t->dtype, t->data, 0);
  return DS_STATUS_OK;
}

static DsStatus k_dynamic_arange(const DsKernelCtx *ctx)
{
  const DsDynamicArangeParam *p = ctx->param;
  if (p == NULL || ctx->n_inputs != 3 || ctx->n_outputs != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(p->dtype) || p->dtype == DS_DTYPE_BOOL)
    return DS_STATUS_UNSUPPORTED;
  double b[3];
  for (int i = 0; i < 3; i++) {
    DsStatus status = read_bound(&ctx->inputs[i], &b[i]);
    if (status != DS_STATUS_OK)
      return status;
  }
  double start = b[0], stop = b[1], step = b[2];
  if (step == 0.0 || !isfinite(start) || !isfinite(stop) || !isfinite(step))
    return DS_STATUS_INVALID_ARGUMENT;
  double length = ceil((stop - start) / step);
  /* 2^53: beyond it the positions themselves stop being exact doubles. */
  if (!(length <= 9007199254740992.0))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t n = length > 0 ? (int64_t)length : 0;
  DsStatus status = prepare_output(ctx, 0, p->dtype, 1, &n);
  if (status != DS_STATUS_OK)
    return status;
  ArangeJob job = {start, step, ctx->outputs[0].data, p->dtype, ds_dtype_size(p->dtype)};
  ds_parallel_for(ctx->pool, n, DS_CPU_PARALLEL_GRAIN, arange_worker, &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* _npi_unique */

/* The keys: `len` items, each `outer` x `inner` elements (item k's element (o, i) sits at
 * (o * len + k) * inner + i); without an axis every element is an item (outer = inner = 1). */
typedef struct {
  DsDType t;
  const void *base;
  int64_t outer, len, inner;
} UniqueKeys;

/* -1, 0 or 1 for elements x and y in NumPy's sort order: NaN after every number and equal to
 * every other NaN. */
static int elem_cmp(const UniqueKeys *k, int64_t a, int64_t b)
{
  return ds_cpu_compare_elements(k->t, k->base, a, b);
}

/* Items compared lexicographically, element by element in row-major order. */
static int item_cmp(const UniqueKeys *k, int64_t a, int64_t b)
{
  if (k->outer == 1 && k->inner == 1)
    return elem_cmp(k, a, b);
  for (int64_t o = 0; o < k->outer; o++) {
    int64_t row = o * k->len;
    for (int64_t i = 0; i < k->inner; i++) {
      int c = elem_cmp(k, (row + a) * k->inner + i, (row + b) * k->inner + i);
      if (c != 0)
        return c;
    }
  }
  return 0;
}

/* Stable bottom-up merge sort of positions idx[0..n) by their items; tmp holds n more. Stable,
 * so each run of equal items starts with its first occurrence. */
static void sort_items(const UniqueKeys *k, int64_t *idx, int64_t *tmp, int64_t n)
{
  const int64_t run = 16;
  for (int64_t lo = 0; lo < n; lo += run) {
    int64_t hi = MIN(n, lo + run);
    for (int64_t i = lo + 1; i < hi; i++) {
      int64_t v = idx[i], j = i;
      while (j > lo && item_cmp(k, v, idx[j - 1]) < 0) {
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
        dst[o++] = item_cmp(k, src[j], src[i]) < 0 ? src[j++] : src[i++];
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

/* The items unique works on: false for an axis out of range. */
static bool unique_keys(const DsUniqueParam *p, const DsTensor *data, UniqueKeys *k)
{
  *k = (UniqueKeys){data->dtype, data->data, 1, ds_tensor_numel(data), 1};
  if (!p->has_axis)
    return true;
  int axis = p->axis < 0 ? p->axis + data->ndim : p->axis;
  if (axis < 0 || axis >= data->ndim)
    return false;
  k->outer = ds_shape_span(data->shape, 0, axis);
  k->len = data->shape[axis];
  k->inner = ds_shape_span(data->shape, axis + 1, data->ndim);
  return true;
}

static size_t unique_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                               const DsTensor *outputs, int n_outputs)
{
  (void)outputs;
  (void)n_outputs;
  UniqueKeys k;
  if (param == NULL || n_inputs < 1 || !unique_keys(param, &inputs[0], &k))
    return 0;
  /* The permutation and the merge sort's second array, which then holds the group ids. */
  return 2 * (size_t)k.len * sizeof(int64_t);
}

static DsStatus k_unique(const DsKernelCtx *ctx)
{
  const DsUniqueParam *p = ctx->param;
  if (p == NULL || ctx->n_inputs != 1 || ctx->n_outputs != ds_unique_num_outputs(p))
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *data = &ctx->inputs[0];
  if (!ds_cpu_dtype_computable(data->dtype))
    return DS_STATUS_UNSUPPORTED;
  UniqueKeys k;
  if (!unique_keys(p, data, &k))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t n = k.len;
  int64_t *perm = ctx->workspace, *group = perm + n;
  if (n > 0 && perm == NULL)
    return DS_STATUS_NO_MEMORY;
  for (int64_t i = 0; i < n; i++)
    perm[i] = i;
  sort_items(&k, perm, group, n);
  /* group[j]: which unique item the j-th sorted item is. */
  int64_t n_unique = 0;
  for (int64_t j = 0; j < n; j++) {
    if (j == 0 || item_cmp(&k, perm[j - 1], perm[j]) != 0)
      n_unique++;
    group[j] = n_unique - 1;
  }

  int64_t shape[DS_MAX_NDIM];
  int ndim = 1;
  shape[0] = n_unique;
  if (p->has_axis) {
    int axis = p->axis < 0 ? p->axis + data->ndim : p->axis;
    ndim = data->ndim;
    memcpy(shape, data->shape, sizeof shape);
    shape[axis] = n_unique;
  }
  DsStatus status = prepare_output(ctx, 0, data->dtype, ndim, shape);
  int at_index = -1, at_inverse = -1, at_counts = -1, next = 1;
  if (p->return_index)
    at_index = next++;
  if (p->return_inverse)
    at_inverse = next++;
  if (p->return_counts)
    at_counts = next++;
  if (status == DS_STATUS_OK && at_index > 0)
    status = prepare_output(ctx, at_index, DS_DTYPE_INT64, 1, &n_unique);
  if (status == DS_STATUS_OK && at_inverse > 0)
    status = prepare_output(ctx, at_inverse, DS_DTYPE_INT64, 1, &n);
  if (status == DS_STATUS_OK && at_counts > 0)
    status = prepare_output(ctx, at_counts, DS_DTYPE_INT64, 1, &n_unique);
  if (status != DS_STATUS_OK)
    return status;

  size_t row_bytes = (size_t)k.inner * ds_dtype_size(data->dtype);
  char *values = ctx->outputs[0].data;
  const char *in = data->data;
  int64_t *first = at_index > 0 ? ctx->outputs[at_index].data : NULL;
  int64_t *inverse = at_inverse > 0 ? ctx->outputs[at_inverse].data : NULL;
  int64_t *counts = at_counts > 0 ? ctx->outputs[at_counts].data : NULL;
  if (counts != NULL)
    memset(counts, 0, (size_t)n_unique * sizeof(int64_t));
  for (int64_t j = 0; j < n; j++) {
    int64_t g = group[j];
    if (j == 0 || group[j - 1] != g) {
      /* The first of its run: the stable sort made it the first occurrence. */
      for (int64_t o = 0; o < k.outer && row_bytes > 0; o++)
        memcpy(values + (size_t)(o * n_unique + g) * row_bytes,
               in + (size_t)(o * n + perm[j]) * row_bytes, row_bytes);
      if (first != NULL)
        first[g] = perm[j];
    }
    if (inverse != NULL)
      inverse[perm[j]] = g;
    if (counts != NULL)
      counts[g]++;
  }
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */

void ds_cpu_dynamic_register(DsKernel *table)
{
  table[DS_OP_BOOLEAN_MASK] = (DsKernel){k_boolean_mask, boolean_mask_workspace};
  table[DS_OP_NONZERO] = (DsKernel){k_nonzero, NULL};
  table[DS_OP_ZEROS_SHAPE] = (DsKernel){k_shape_init, NULL};
  table[DS_OP_ONES_SHAPE] = (DsKernel){k_shape_init, NULL};
  table[DS_OP_FULL_SHAPE] = (DsKernel){k_shape_init, NULL};
  table[DS_OP_DYNAMIC_RESHAPE] = (DsKernel){k_dynamic_reshape, NULL};
  table[DS_OP_DYNAMIC_ARANGE] = (DsKernel){k_dynamic_arange, NULL};
  table[DS_OP_UNIQUE] = (DsKernel){k_unique, unique_workspace};
}
