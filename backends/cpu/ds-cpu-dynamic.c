/* ds-cpu-dynamic.c: CPU kernels for the ops whose output shape depends on input values:
 * _contrib_boolean_mask, _npx_nonzero, _zeros_shape, _ones_shape, _full_shape,
 * _contrib_dynamic_reshape, _contrib_dynamic_arange, _npi_unique, _contrib_compress,
 * _contrib_dynamic_one_hot, and the shape-tensor forms of slice, expand, tile, pad, squeeze and
 * expand_dims (their copies shared with the static ops through ds-cpu-copy.h).
 * _contrib_dynamic_topk's kernel lives with topk's in ds-cpu-index.c.
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
#include "ds-geometry-tensor.h"

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

/* Whether element `i` is nonzero, for every dtype: float16 and bfloat16 by their bits (either zero has all
 * bits but the sign clear), NaN counting as nonzero as in NumPy. */
static bool truthy(DsDType t, const void *base, int64_t i)
{
  switch (t) {
  case DS_DTYPE_FLOAT32:
    return ((const float *)base)[i] != 0.0f;
  case DS_DTYPE_FLOAT64:
    return ((const double *)base)[i] != 0.0;
  case DS_DTYPE_FLOAT16:
  case DS_DTYPE_BFLOAT16:
    return (((const uint16_t *)base)[i] & 0x7fff) != 0;
  case DS_DTYPE_INT32:
    return ((const int32_t *)base)[i] != 0;
  case DS_DTYPE_INT64:
    return ((const int64_t *)base)[i] != 0;
  case DS_DTYPE_INT8:
    return ((const int8_t *)base)[i] != 0;
  case DS_DTYPE_INT16:
  case DS_DTYPE_UINT16:
    return ((const uint16_t *)base)[i] != 0;
  case DS_DTYPE_UINT32:
    return ((const uint32_t *)base)[i] != 0;
  case DS_DTYPE_UINT64:
    return ((const uint64_t *)base)[i] != 0;
  case DS_DTYPE_UINT8:
  case DS_DTYPE_BOOL:
  case DS_DTYPE_COUNT:
    break;
  }
  return ((const uint8_t *)base)[i] != 0;
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

static size_t boolean_mask_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                                     const DsTensor *outputs, int n_outputs)
{
  (void)n_inputs;
  (void)outputs;
  (void)n_outputs;
  int axis = ds_geom_axis(((const DsBooleanMaskParam *)param)->axis, inputs[0].ndim);
  return axis < 0 ? 0 : (size_t)inputs[0].shape[axis] * sizeof(int64_t);
}

static DsStatus k_boolean_mask(const DsKernelCtx *ctx)
{
  const DsBooleanMaskParam *p = ctx->param;
  const DsTensor *data = &ctx->inputs[0], *index = &ctx->inputs[1];
  int axis;
  DsStatus status = ds_geom_boolean_mask(data, index, p->axis, &axis);
  if (status != DS_STATUS_OK)
    return status;
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
  status = ds_kernel_prepare_output(ctx, 0, data->dtype, data->ndim, shape);
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
  const DsTensor *x = &ctx->inputs[0];
  if (!ds_dtype_is_valid(x->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(x), count = 0;
  for (int64_t i = 0; i < n; i++)
    count += truthy(x->dtype, x->data, i);
  int64_t shape[2] = {count, x->ndim};
  DsStatus status = ds_kernel_prepare_output(ctx, 0, DS_DTYPE_INT64, 2, shape);
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
  _Alignas(double) char cell[8];
} FillJob;

static void fill_worker(void *ctx, int64_t begin, int64_t end)
{
  const FillJob *job = ctx;
  ds_cpu_fill_elems(job->out + (size_t)begin * job->es, job->cell, job->es, end - begin);
}

static DsStatus k_shape_init(const DsKernelCtx *ctx)
{
  const DsShapeInitParam *p = ctx->param;
  if (!ds_cpu_dtype_computable(p->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t dims[DS_MAX_NDIM];
  int n;
  DsStatus status = read_shape_tensor(&ctx->inputs[0], dims, &n);
  for (int d = 0; d < n && status == DS_STATUS_OK; d++)
    if (dims[d] < 0)
      status = DS_STATUS_INVALID_ARGUMENT;
  if (status == DS_STATUS_OK)
    status = ds_kernel_prepare_output(ctx, 0, p->dtype, n, dims);
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
                                       bool allowzero, int64_t *dims)
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
    if (c < -1 || (c == 0 && !allowzero && d >= data->ndim))
      return DS_STATUS_INVALID_ARGUMENT;
    dims[d] = c == 0 && !allowzero ? data->shape[d] : c;
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
  const DsDynamicReshapeParam *p = ctx->param;
  const DsTensor *data = &ctx->inputs[0];
  int64_t codes[DS_MAX_NDIM], dims[DS_MAX_NDIM];
  int n;
  DsStatus status = read_shape_tensor(&ctx->inputs[1], codes, &n);
  if (status == DS_STATUS_OK)
    status = dynamic_reshape_target(data, codes, n, p->allowzero, dims);
  if (status == DS_STATUS_OK)
    status = ds_kernel_prepare_output(ctx, 0, data->dtype, n, dims);
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
  DsDType dtype = p->dtype == DS_DTYPE_UNKNOWN ? ctx->inputs[0].dtype : p->dtype;
  if (!ds_cpu_dtype_computable(dtype) || dtype == DS_DTYPE_BOOL)
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
  DsStatus status = ds_kernel_prepare_output(ctx, 0, dtype, 1, &n);
  if (status != DS_STATUS_OK)
    return status;
  ArangeJob job = {start, step, ctx->outputs[0].data, dtype, ds_dtype_size(dtype)};
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
  (void)n_inputs;
  (void)outputs;
  (void)n_outputs;
  UniqueKeys k;
  if (!unique_keys(param, &inputs[0], &k))
    return 0;
  /* The permutation and the merge sort's second array, which then holds the group ids; the
   * first occurrence of each group and its place in output order. */
  return 4 * (size_t)k.len * sizeof(int64_t);
}

static DsStatus k_unique(const DsKernelCtx *ctx)
{
  const DsUniqueParam *p = ctx->param;
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
  /* place[g]: where unique item g goes in the output: g when sorted, else its rank by first
   * occurrence (the stable sort made perm[j] the first occurrence at each run's start). */
  int64_t *first_at = group + n, *place = first_at + n;
  for (int64_t j = 0; j < n; j++)
    if (j == 0 || group[j - 1] != group[j])
      first_at[group[j]] = perm[j];
  if (p->sorted) {
    for (int64_t g = 0; g < n_unique; g++)
      place[g] = g;
  } else {
    /* `place` first marks each position that starts a group (with the group + 1); numbering
     * the marks in position order gives each group its rank, parked in first_at as -rank - 1
     * while `place` still holds the marks. */
    for (int64_t i = 0; i < n; i++)
      place[i] = 0;
    for (int64_t g = 0; g < n_unique; g++)
      place[first_at[g]] = g + 1;
    int64_t next = 0;
    for (int64_t i = 0; i < n; i++)
      if (place[i] > 0)
        first_at[place[i] - 1] = -(next++) - 1;
    for (int64_t g = 0; g < n_unique; g++)
      place[g] = -first_at[g] - 1;
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
  DsStatus status = ds_kernel_prepare_output(ctx, 0, data->dtype, ndim, shape);
  int at_index = -1, at_inverse = -1, at_counts = -1, next = 1;
  if (p->return_index)
    at_index = next++;
  if (p->return_inverse)
    at_inverse = next++;
  if (p->return_counts)
    at_counts = next++;
  if (status == DS_STATUS_OK && at_index > 0)
    status = ds_kernel_prepare_output(ctx, at_index, DS_DTYPE_INT64, 1, &n_unique);
  if (status == DS_STATUS_OK && at_inverse > 0)
    status = ds_kernel_prepare_output(ctx, at_inverse, DS_DTYPE_INT64, 1, &n);
  if (status == DS_STATUS_OK && at_counts > 0)
    status = ds_kernel_prepare_output(ctx, at_counts, DS_DTYPE_INT64, 1, &n_unique);
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
    int64_t g = place[group[j]];
    if (j == 0 || group[j - 1] != group[j]) {
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
/* Integer parameter tensors */

/* The values of a 1-D (or 0-D: one value) integer-valued tensor, at most `max` of them. */
static DsStatus read_int_vector(const DsTensor *t, int64_t *out, int max, int *n)
{
  if (t->ndim > 1)
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t len = ds_tensor_numel(t);
  if (len > max)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(t->dtype))
    return DS_STATUS_UNSUPPORTED;
  for (int64_t i = 0; i < len; i++)
    if (!load_whole(t->dtype, t->data, i, &out[i]))
      return DS_STATUS_INVALID_ARGUMENT;
  *n = (int)len;
  return DS_STATUS_OK;
}

/* Normalises `n` axes for rank `ndim` into mask[]: false for one out of range or repeated. */
static bool axes_mask(const int64_t *axes, int n, int ndim, bool *mask)
{
  for (int d = 0; d < ndim; d++)
    mask[d] = false;
  for (int i = 0; i < n; i++) {
    int64_t a = axes[i] < 0 ? axes[i] + ndim : axes[i];
    if (a < 0 || a >= ndim || mask[a])
      return false;
    mask[a] = true;
  }
  return true;
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_dynamic_slice */

/* Python slice bounds as ONNX reads them: INT64_MIN is a number (clamped like any other), not
 * ds_slice_axis_range()'s None. */
static int64_t onnx_bound(int64_t v)
{
  return v == INT64_MIN ? INT64_MIN + 1 : v;
}

static DsStatus k_dynamic_slice(const DsKernelCtx *ctx)
{
  const DsDynamicSliceParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  int nd = in->ndim, n, n_end, n_axes, n_steps;
  int64_t starts[DS_MAX_NDIM], ends[DS_MAX_NDIM], axes[DS_MAX_NDIM], steps[DS_MAX_NDIM];
  DsStatus status = read_int_vector(&ctx->inputs[1], starts, DS_MAX_NDIM, &n);
  if (status == DS_STATUS_OK)
    status = read_int_vector(&ctx->inputs[2], ends, DS_MAX_NDIM, &n_end);
  if (status == DS_STATUS_OK && p->use_axes)
    status = read_int_vector(&ctx->inputs[3], axes, DS_MAX_NDIM, &n_axes);
  if (status == DS_STATUS_OK && p->use_steps)
    status = read_int_vector(&ctx->inputs[ctx->n_inputs - 1], steps, DS_MAX_NDIM, &n_steps);
  if (status != DS_STATUS_OK)
    return status;
  if (!p->use_axes) {
    n_axes = p->n_axes >= 0 ? p->n_axes : n;
    for (int i = 0; i < n_axes; i++)
      axes[i] = p->n_axes >= 0 ? p->axes[i] : i;
  }
  if (!p->use_steps) {
    n_steps = n;
    for (int i = 0; i < n; i++)
      steps[i] = 1;
  }
  bool sliced[DS_MAX_NDIM];
  if (n_end != n || n_axes != n || n_steps != n || !axes_mask(axes, n, nd, sliced))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t first[DS_MAX_NDIM], count[DS_MAX_NDIM], step[DS_MAX_NDIM];
  for (int d = 0; d < nd; d++) {
    first[d] = 0;
    count[d] = in->shape[d];
    step[d] = 1;
  }
  for (int i = 0; i < n; i++) {
    int d = (int)(axes[i] < 0 ? axes[i] + nd : axes[i]);
    if (steps[i] == 0 || steps[i] == INT64_MIN)
      return DS_STATUS_INVALID_ARGUMENT;
    step[d] = steps[i];
    ds_slice_axis_range(in->shape[d], onnx_bound(starts[i]), onnx_bound(ends[i]), steps[i],
                        &first[d], &count[d]);
  }
  status = ds_kernel_prepare_output(ctx, 0, in->dtype, nd, count);
  if (status != DS_STATUS_OK)
    return status;
  DsTensor *out = &ctx->outputs[0];
  DsCpuCopyPlan plan = {
      .ndim = nd, .es = ds_dtype_size(in->dtype), .in = in->data, .out = out->data};
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    plan.shape[d] = count[d];
    plan.stride[d] = s * step[d];
    if (count[d] > 0)
      plan.base += first[d] * s;
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
/* _contrib_dynamic_expand, _contrib_dynamic_tile, _contrib_dynamic_pad */

static DsStatus k_dynamic_expand(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  int64_t shape[DS_MAX_NDIM], dims[DS_MAX_NDIM];
  int n;
  DsStatus status = read_int_vector(&ctx->inputs[1], shape, DS_MAX_NDIM, &n);
  if (status != DS_STATUS_OK)
    return status;
  /* NumPy broadcasting of the data's shape and the target, right-aligned. */
  int nd = MAX(n, in->ndim);
  for (int d = 0; d < nd; d++) {
    int i1 = d - (nd - in->ndim), i2 = d - (nd - n);
    int64_t a = i1 >= 0 ? in->shape[i1] : 1, b = i2 >= 0 ? shape[i2] : 1;
    if (b < 0 || (a != b && a != 1 && b != 1))
      return DS_STATUS_INVALID_ARGUMENT;
    dims[d] = a == 1 ? b : a;
  }
  status = ds_kernel_prepare_output(ctx, 0, in->dtype, nd, dims);
  if (status != DS_STATUS_OK)
    return status;
  DsCpuCopyPlan plan;
  if (!ds_cpu_broadcast_plan(in, &ctx->outputs[0], &plan))
    return DS_STATUS_INVALID_ARGUMENT;
  if (ds_tensor_numel(&ctx->outputs[0]) > 0)
    ds_cpu_copy_plan_run(&plan, ctx->pool);
  return DS_STATUS_OK;
}

static DsStatus k_dynamic_tile(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  int64_t reps[DS_MAX_NDIM], dims[DS_MAX_NDIM];
  int n;
  DsStatus status = read_int_vector(&ctx->inputs[1], reps, DS_MAX_NDIM, &n);
  if (status != DS_STATUS_OK)
    return status;
  if (n != in->ndim)
    return DS_STATUS_INVALID_ARGUMENT;
  for (int d = 0; d < n; d++) {
    if (reps[d] < 0 || (in->shape[d] > 0 && reps[d] > INT64_MAX / in->shape[d]))
      return DS_STATUS_INVALID_ARGUMENT;
    dims[d] = in->shape[d] * reps[d];
  }
  status = ds_kernel_prepare_output(ctx, 0, in->dtype, n, dims);
  if (status != DS_STATUS_OK)
    return status;
  ds_cpu_tile(in, &ctx->outputs[0], ctx->pool);
  return DS_STATUS_OK;
}

static DsStatus k_dynamic_pad(const DsKernelCtx *ctx)
{
  const DsDynamicPadParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0], *value = &ctx->inputs[2];
  int64_t pads[2 * DS_MAX_NDIM], dims[DS_MAX_NDIM];
  int n, nd = in->ndim;
  DsStatus status = read_int_vector(&ctx->inputs[1], pads, 2 * DS_MAX_NDIM, &n);
  if (status != DS_STATUS_OK)
    return status;
  if (n != 2 * nd || value->ndim > 1 || ds_tensor_numel(value) != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(value->dtype) ||
      (p->mode == DS_PAD_CONSTANT && !ds_cpu_dtype_computable(in->dtype)))
    return DS_STATUS_UNSUPPORTED;
  for (int d = 0; d < nd; d++) {
    int64_t b = pads[d], a = pads[nd + d];
    if (b > INT32_MAX || a > INT32_MAX || b < -in->shape[d] || a < -in->shape[d])
      return DS_STATUS_INVALID_ARGUMENT;
    dims[d] = in->shape[d] + b + a;
    if (dims[d] < 0 || (p->mode != DS_PAD_CONSTANT && in->shape[d] == 0 && dims[d] > 0))
      return DS_STATUS_INVALID_ARGUMENT;
  }
  status = ds_kernel_prepare_output(ctx, 0, in->dtype, nd, dims);
  if (status != DS_STATUS_OK)
    return status;
  ds_cpu_pad(in, &ctx->outputs[0], pads, p->mode, ds_cpu_load_f64(value->dtype, value->data, 0),
             ctx->pool);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_dynamic_squeeze, _contrib_dynamic_expand_dims: the bytes pass through. */

static DsStatus copy_to_new_shape(const DsKernelCtx *ctx, const int64_t *dims, int nd)
{
  const DsTensor *in = &ctx->inputs[0];
  DsStatus status = ds_kernel_prepare_output(ctx, 0, in->dtype, nd, dims);
  if (status == DS_STATUS_OK)
    ds_cpu_copy_bytes(ctx->outputs[0].data, in->data, ds_tensor_nbytes(in), ctx->pool);
  return status;
}

static DsStatus k_dynamic_squeeze(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  int64_t axes[DS_MAX_NDIM], dims[DS_MAX_NDIM];
  bool drop[DS_MAX_NDIM];
  int n, nd = 0;
  DsStatus status = read_int_vector(&ctx->inputs[1], axes, DS_MAX_NDIM, &n);
  if (status != DS_STATUS_OK)
    return status;
  if (!axes_mask(axes, n, in->ndim, drop))
    return DS_STATUS_INVALID_ARGUMENT;
  for (int d = 0; d < in->ndim; d++) {
    if (drop[d] && in->shape[d] != 1)
      return DS_STATUS_INVALID_ARGUMENT;
    if (!drop[d])
      dims[nd++] = in->shape[d];
  }
  return copy_to_new_shape(ctx, dims, nd);
}

static DsStatus k_dynamic_expand_dims(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  int64_t axes[DS_MAX_NDIM], dims[DS_MAX_NDIM];
  bool is_new[DS_MAX_NDIM];
  int n;
  DsStatus status = read_int_vector(&ctx->inputs[1], axes, DS_MAX_NDIM, &n);
  if (status != DS_STATUS_OK)
    return status;
  int nd = in->ndim + n;
  if (nd > DS_MAX_NDIM || !axes_mask(axes, n, nd, is_new))
    return DS_STATUS_INVALID_ARGUMENT;
  for (int d = 0, k = 0; d < nd; d++)
    dims[d] = is_new[d] ? 1 : in->shape[k++];
  return copy_to_new_shape(ctx, dims, nd);
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_dynamic_one_hot */

typedef struct {
  const DsTensor *indices;
  char *out;
  size_t es;
  int64_t depth, inner; /* inner: indices elements after the new axis */
  char on[8], off[8];
} OneHotJob;

/* Units are indices elements: each writes its `depth` outputs, `inner` apart. */
static void one_hot_worker(void *ctx, int64_t begin, int64_t end)
{
  const OneHotJob *job = ctx;
  for (int64_t u = begin; u < end; u++) {
    int64_t o = u / job->inner, i = u % job->inner;
    double v = ds_cpu_load_f64(job->indices->dtype, job->indices->data, u);
    int64_t hot = -1;
    if (v >= (double)-job->depth && v < (double)job->depth) {
      hot = (int64_t)v; /* truncates towards zero, as a cast to int64 does */
      hot = hot < 0 ? hot + job->depth : hot;
    }
    char *base = job->out + (size_t)(o * job->depth * job->inner + i) * job->es;
    for (int64_t k = 0; k < job->depth; k++)
      memcpy(base + (size_t)(k * job->inner) * job->es, k == hot ? job->on : job->off, job->es);
  }
}

static DsStatus k_dynamic_one_hot(const DsKernelCtx *ctx)
{
  const DsDynamicOneHotParam *p = ctx->param;
  const DsTensor *indices = &ctx->inputs[0], *values = &ctx->inputs[2];
  double depth_value;
  if (ctx->inputs[1].ndim > 1 || ds_tensor_numel(&ctx->inputs[1]) != 1 ||
      values->ndim != 1 || values->shape[0] != 2)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(indices->dtype) || !ds_cpu_dtype_computable(values->dtype) ||
      !ds_cpu_dtype_computable(ctx->inputs[1].dtype))
    return DS_STATUS_UNSUPPORTED;
  /* ONNX lets depth be any numeric type; a fraction is rounded down. */
  depth_value = floor(ds_cpu_load_f64(ctx->inputs[1].dtype, ctx->inputs[1].data, 0));
  int nd = indices->ndim + 1;
  int axis = p->axis < 0 ? p->axis + nd : p->axis;
  if (!(depth_value >= 1 && depth_value < 9.0e15) || axis < 0 || axis >= nd || nd > DS_MAX_NDIM)
    return DS_STATUS_INVALID_ARGUMENT;
  OneHotJob job = {.indices = indices, .es = ds_dtype_size(values->dtype),
                   .depth = (int64_t)depth_value};
  int64_t dims[DS_MAX_NDIM];
  for (int d = 0, k = 0; d < nd; d++)
    dims[d] = d == axis ? job.depth : indices->shape[k++];
  DsStatus status = ds_kernel_prepare_output(ctx, 0, values->dtype, nd, dims);
  if (status != DS_STATUS_OK)
    return status;
  job.out = ctx->outputs[0].data;
  job.inner = ds_shape_span(indices->shape, axis, indices->ndim);
  memcpy(job.off, values->data, job.es);
  memcpy(job.on, (const char *)values->data + job.es, job.es);
  int64_t n = ds_tensor_numel(indices);
  if (n == 0)
    return DS_STATUS_OK;
  ds_parallel_for(ctx->pool, n, MAX(1, DS_CPU_PARALLEL_GRAIN / job.depth), one_hot_worker, &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_compress */

static size_t compress_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                                 const DsTensor *outputs, int n_outputs)
{
  (void)param;
  (void)n_inputs;
  (void)outputs;
  (void)n_outputs;
  return (size_t)ds_tensor_numel(&inputs[1]) * sizeof(int64_t);
}

static DsStatus k_compress(const DsKernelCtx *ctx)
{
  const DsCompressParam *p = ctx->param;
  const DsTensor *data = &ctx->inputs[0], *cond = &ctx->inputs[1];
  if (cond->ndim != 1 || !ds_dtype_is_valid(cond->dtype) || !ds_dtype_is_valid(data->dtype))
    return DS_STATUS_INVALID_ARGUMENT;
  /* Without an axis the data is its flattened self. */
  int64_t flat[1] = {ds_tensor_numel(data)};
  int nd = p->has_axis ? data->ndim : 1;
  const int64_t *shape = p->has_axis ? data->shape : flat;
  int axis = p->has_axis ? (p->axis < 0 ? p->axis + nd : p->axis) : 0;
  if (axis < 0 || axis >= nd || cond->shape[0] > shape[axis])
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t len = shape[axis], n_cond = cond->shape[0], n_kept = 0;
  int64_t *kept = ctx->workspace;
  if (n_cond > 0 && kept == NULL)
    return DS_STATUS_NO_MEMORY;
  for (int64_t i = 0; i < n_cond; i++)
    if (truthy(cond->dtype, cond->data, i))
      kept[n_kept++] = i;
  int64_t dims[DS_MAX_NDIM];
  memcpy(dims, shape, sizeof(int64_t) * (size_t)nd);
  dims[axis] = n_kept;
  DsStatus status = ds_kernel_prepare_output(ctx, 0, data->dtype, nd, dims);
  if (status != DS_STATUS_OK)
    return status;
  MaskJob job = {.in = data->data, .out = ctx->outputs[0].data, .kept = kept, .n_kept = n_kept,
                 .len = len};
  int64_t outer = ds_shape_span(shape, 0, axis);
  job.row_bytes = (size_t)ds_shape_span(shape, axis + 1, nd) * ds_dtype_size(data->dtype);
  if (n_kept == 0 || outer == 0 || job.row_bytes == 0)
    return DS_STATUS_OK;
  ds_parallel_for(ctx->pool, outer * n_kept, ds_cpu_copy_grain((int64_t)job.row_bytes),
                  mask_worker, &job);
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
  table[DS_OP_DYNAMIC_SLICE] = (DsKernel){k_dynamic_slice, NULL};
  table[DS_OP_DYNAMIC_EXPAND] = (DsKernel){k_dynamic_expand, NULL};
  table[DS_OP_DYNAMIC_TILE] = (DsKernel){k_dynamic_tile, NULL};
  table[DS_OP_DYNAMIC_PAD] = (DsKernel){k_dynamic_pad, NULL};
  table[DS_OP_DYNAMIC_SQUEEZE] = (DsKernel){k_dynamic_squeeze, NULL};
  table[DS_OP_DYNAMIC_EXPAND_DIMS] = (DsKernel){k_dynamic_expand_dims, NULL};
  table[DS_OP_DYNAMIC_ONE_HOT] = (DsKernel){k_dynamic_one_hot, NULL};
  table[DS_OP_COMPRESS] = (DsKernel){k_compress, compress_workspace};
}
