/* ds-cpu-tensor.c: CPU kernels for shape manipulation, creation and indexing, and
 * for the ONNX forms of this family (_np_reshape, _np_squeeze, _contrib_expand, _npi_pad,
 * cumsum, trilu, eye_like, depth_to_space, space_to_depth, SequenceReverse).
 *
 * Data movement (Reshape, reshape_like, transpose, Concat, slice, broadcast_*, take, pad,
 * depth_to_space...) works on raw elements by size, so every dtype is supported; arithmetic
 * (Cast, _arange, fills, cumsum, SequenceMask's value) is typed. Each kernel first collapses
 * its index space (dropping size-1 dims, merging dims that stay contiguous) so the innermost
 * loop is a memcpy or a simple strided loop, and only the outer dims use an odometer.
 */
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#include "ds-cpu.h"
#include "ds-cpu-copy.h"
#include "ds-geometry-tensor.h"
#include "ds-ops-kernel-args.h"

/* Element `i` of an integer-valued tensor as int64: exact for int64, truncating for floats
 * (MXNet's static_cast<int64_t>). */
static int64_t load_index(DsDType t, const void *base, int64_t i)
{
  if (t == DS_DTYPE_INT64)
    return ((const int64_t *)base)[i];
  return ds_cpu_saturate_i64(ds_cpu_load_f64(t, base, i));
}

/* ------------------------------------------------------------------------------------------ */
/* Strided copies: out (contiguous) <- in at element offsets given per output dim. */

/* ------------------------------------------------------------------------------------------ */
/* Reshape, Flatten, expand_dims, squeeze, reshape_like: the bytes pass through (reshape_like's
 * second input only lent its shape). */

typedef struct {
  const char *src;
  char *dst;
} MemcpyJob;

static void memcpy_worker(void *ctx, int64_t begin, int64_t end)
{
  const MemcpyJob *job = ctx;
  memcpy(job->dst + begin, job->src + begin, (size_t)(end - begin));
}

static DsStatus k_view(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->dtype != out->dtype || ds_tensor_numel(in) != ds_tensor_numel(out))
    return DS_STATUS_INVALID_ARGUMENT;
  if (in->data == out->data)
    return DS_STATUS_OK;
  MemcpyJob job = {in->data, out->data};
  ds_parallel_for(ctx->pool, (int64_t)ds_tensor_nbytes(out), DS_CPU_COPY_GRAIN, memcpy_worker,
                  &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* transpose, SwapAxis */

/* The blocked 2-D transpose works on TILE x TILE tiles (64 KiB per side for 4-byte elements,
 * so both stay in L2), each done as 8 x 8 micro-tiles whose fixed trip counts let GCC turn
 * them into register shuffles. */
#define TILE  128
#define MICRO 8
typedef struct {
  size_t es;
  const char *in;
  char *out;
  int64_t batches;              /* product of the outer dims */
  int nb;                       /* number of outer dims */
  int64_t bshape[DS_MAX_NDIM];  /* outer dims */
  int64_t bstride[DS_MAX_NDIM]; /* their input strides */
  int64_t P, Q;                 /* out block is P x Q */
  int64_t S;                    /* input stride of q; p has input stride 1 */
  int64_t p_tiles;
} TransposeJob;

/* Output rows [p0, p1) of one P x Q block: out[p][q] = in[p + q * S]. */
#define DEFINE_TILE(NAME, T)                                                                       \
  static void NAME(T *restrict out, const T *restrict in, int64_t p0, int64_t p1, int64_t Q,       \
                   int64_t S)                                                                      \
  {                                                                                                \
    for (int64_t q0 = 0; q0 < Q; q0 += TILE) {                                                     \
      int64_t q1 = MIN(Q, q0 + TILE);                                                              \
      for (int64_t pp = p0; pp < p1; pp += MICRO)                                                  \
        for (int64_t qq = q0; qq < q1; qq += MICRO) {                                              \
          if (pp + MICRO <= p1 && qq + MICRO <= q1) {                                              \
            for (int a = 0; a < MICRO; a++)                                                        \
              for (int b = 0; b < MICRO; b++)                                                      \
                out[(pp + a) * Q + qq + b] = in[pp + a + (qq + b) * S];                            \
          } else {                                                                                 \
            for (int64_t p = pp; p < MIN(pp + MICRO, p1); p++)                                     \
              for (int64_t q = qq; q < MIN(qq + MICRO, q1); q++)                                   \
                out[p * Q + q] = in[p + q * S];                                                    \
          }                                                                                        \
        }                                                                                          \
    }                                                                                              \
  }
DEFINE_TILE(tile_1, uint8_t)
DEFINE_TILE(tile_2, uint16_t)
DEFINE_TILE(tile_4, uint32_t)
DEFINE_TILE(tile_8, uint64_t)

/* Units are (batch, band of TILE output rows). */
static void transpose_worker(void *ctx, int64_t begin, int64_t end)
{
  const TransposeJob *job = ctx;
  for (int64_t u = begin; u < end; u++) {
    int64_t b = u / job->p_tiles, p0 = (u % job->p_tiles) * TILE;
    int64_t p1 = MIN(job->P, p0 + TILE);
    int64_t off = 0, rest = b;
    for (int d = job->nb - 1; d >= 0; d--) {
      off += (rest % job->bshape[d]) * job->bstride[d];
      rest /= job->bshape[d];
    }
    const char *in = job->in + (size_t)off * job->es;
    char *out = job->out + (size_t)(b * job->P * job->Q) * job->es;
    switch (job->es) {
    case 1:
      tile_1((uint8_t *)out, (const uint8_t *)in, p0, p1, job->Q, job->S);
      break;
    case 2:
      tile_2((uint16_t *)out, (const uint16_t *)in, p0, p1, job->Q, job->S);
      break;
    case 4:
      tile_4((uint32_t *)out, (const uint32_t *)in, p0, p1, job->Q, job->S);
      break;
    default:
      tile_8((uint64_t *)out, (const uint64_t *)in, p0, p1, job->Q, job->S);
      break;
    }
  }
}

/* out[i0, i1, ...] = in[...] with output axis i reading input axis perm[i]. */
static DsStatus permute(const DsKernelCtx *ctx, const int *perm)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  int nd = in->ndim;
  DsCpuCopyPlan p = {
      .ndim = nd, .base = 0, .es = ds_dtype_size(in->dtype), .in = in->data, .out = out->data};
  if (!ds_geom_permute(in, out, perm, p.stride))
    return DS_STATUS_INVALID_ARGUMENT;
  memcpy(p.shape, out->shape, sizeof(int64_t) * (size_t)nd);
  if (ds_tensor_numel(out) == 0)
    return DS_STATUS_OK;
  ds_cpu_copy_plan_collapse(&p);
  int m = p.ndim;
  /* The input's innermost dim became the second-to-last output dim: a batch of 2-D
   * transposes, done in tiles so reads and writes both stay in cache. */
  if (m >= 2 && p.stride[m - 2] == 1 && p.stride[m - 1] != 1 && p.es <= 8 &&
      (p.es & (p.es - 1)) == 0) {
    TransposeJob job = {.es = p.es,
                        .in = in->data,
                        .out = out->data,
                        .nb = m - 2,
                        .P = p.shape[m - 2],
                        .Q = p.shape[m - 1],
                        .S = p.stride[m - 1]};
    job.batches = 1;
    for (int d = 0; d < m - 2; d++) {
      job.bshape[d] = p.shape[d];
      job.bstride[d] = p.stride[d];
      job.batches *= p.shape[d];
    }
    job.p_tiles = (job.P + TILE - 1) / TILE;
    int64_t unit_elems = TILE * job.Q;
    ds_parallel_for(ctx->pool, job.batches * job.p_tiles,
                    MAX(1, DS_CPU_PARALLEL_GRAIN / unit_elems), transpose_worker, &job);
    return DS_STATUS_OK;
  }
  /* Otherwise rows of the output: contiguous runs when the last axis stays in place
   * (BERT's (0, 2, 1, 3)), strided gathers else. */
  int64_t inner = p.shape[m - 1], rows = ds_tensor_numel(out) / inner;
  ds_parallel_for(ctx->pool, rows, MAX(1, DS_CPU_COPY_GRAIN / (inner * (int64_t)p.es)),
                  ds_cpu_copy_plan_rows, &p);
  return DS_STATUS_OK;
}

static DsStatus k_transpose(const DsKernelCtx *ctx)
{
  int perm[DS_MAX_NDIM];
  DsStatus st = ds_kernel_args_transpose(ctx, perm);
  return st == DS_STATUS_OK ? permute(ctx, perm) : st;
}

static DsStatus k_swap_axis(const DsKernelCtx *ctx)
{
  int perm[DS_MAX_NDIM];
  DsStatus st = ds_kernel_args_swap_axis(ctx, perm);
  return st == DS_STATUS_OK ? permute(ctx, perm) : st;
}

/* ------------------------------------------------------------------------------------------ */
/* Concat */

typedef struct {
  const DsTensor *inputs;
  int n_inputs;
  int axis;
  int64_t trail_bytes; /* bytes of one index along the axis */
  int64_t out_row;     /* output bytes per outer index */
  char *out;
} ConcatJob;

static void concat_worker(void *ctx, int64_t begin, int64_t end)
{
  const ConcatJob *job = ctx;
  for (int64_t o = begin; o < end; o++) {
    char *dst = job->out + o * job->out_row;
    for (int k = 0; k < job->n_inputs; k++) {
      int64_t row = job->inputs[k].shape[job->axis] * job->trail_bytes;
      memcpy(dst, (const char *)job->inputs[k].data + o * row, (size_t)row);
      dst += row;
    }
  }
}

static DsStatus k_concat(const DsKernelCtx *ctx)
{
  const DsConcatParam *prm = ctx->param;
  DsTensor *out = &ctx->outputs[0];
  int nd = out->ndim, axis;
  if (!ds_geom_concat(ctx->inputs, ctx->n_inputs, out, prm->dim, &axis))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t outer = ds_shape_span(out->shape, 0, axis);
  int64_t trail = ds_shape_span(out->shape, axis + 1, nd);
  ConcatJob job = {ctx->inputs, ctx->n_inputs, axis, trail * (int64_t)ds_dtype_size(out->dtype),
                   0,           out->data};
  job.out_row = out->shape[axis] * job.trail_bytes;
  if (outer == 0 || job.out_row == 0)
    return DS_STATUS_OK;
  ds_parallel_for(ctx->pool, outer, MAX(1, DS_CPU_COPY_GRAIN / job.out_row), concat_worker, &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* broadcast_axis, broadcast_to, broadcast_like, _contrib_expand: input 0 stretched to the
 * output's shape (right-aligned: _contrib_expand's output may have more dims). */

static DsStatus k_broadcast_copy(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  DsCpuCopyPlan p;
  if (!ds_cpu_broadcast_plan(in, out, &p))
    return DS_STATUS_INVALID_ARGUMENT;
  if (ds_tensor_numel(out) == 0)
    return DS_STATUS_OK;
  ds_cpu_copy_plan_run(&p, ctx->pool);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* _arange, _zeros, _ones, _full */

typedef struct {
  const DsArangeParam *p;
  void *out;
  DsDType t;
} ArangeJob;

/* MXNet's range_fwd: start + (i / repeat) * step, computed in the output dtype. */
static void arange_worker(void *ctx, int64_t begin, int64_t end)
{
  const ArangeJob *job = ctx;
  const DsArangeParam *p = job->p;
  int64_t rep = p->repeat;
  switch (job->t) {
  case DS_DTYPE_FLOAT32: {
    float *restrict o = job->out, start = (float)p->start, step = (float)p->step;
    for (int64_t i = begin; i < end; i++)
      o[i] = start + (float)(i / rep) * step;
    break;
  }
  case DS_DTYPE_FLOAT64: {
    double *restrict o = job->out;
    for (int64_t i = begin; i < end; i++)
      o[i] = p->start + (double)(i / rep) * p->step;
    break;
  }
  default: {
    /* Integer dtypes: start and step truncate first; the arithmetic wraps. */
    uint64_t start = (uint64_t)ds_cpu_saturate_i64(p->start),
             step = (uint64_t)ds_cpu_saturate_i64(p->step);
    for (int64_t i = begin; i < end; i++) {
      uint64_t v = start + (uint64_t)(i / rep) * step;
      switch (job->t) {
      case DS_DTYPE_INT32:
        ((int32_t *)job->out)[i] = (int32_t)v;
        break;
      case DS_DTYPE_INT64:
        ((int64_t *)job->out)[i] = (int64_t)v;
        break;
      case DS_DTYPE_INT8:
        ((int8_t *)job->out)[i] = (int8_t)v;
        break;
      default:
        ((uint8_t *)job->out)[i] = (uint8_t)v;
        break;
      }
    }
    break;
  }
  }
}

static DsStatus k_arange(const DsKernelCtx *ctx)
{
  const DsArangeParam *p = ctx->param;
  DsTensor *out = &ctx->outputs[0];
  if (!ds_cpu_dtype_computable(out->dtype) || out->dtype == DS_DTYPE_BOOL)
    return DS_STATUS_UNSUPPORTED;
  ArangeJob job = {p, out->data, out->dtype};
  ds_parallel_for(ctx->pool, ds_tensor_numel(out), DS_CPU_PARALLEL_GRAIN, arange_worker, &job);
  return DS_STATUS_OK;
}

/* _contrib_arange_like computes exactly _arange's values (MXNet runs the same range_fwd for
 * both); only the length differs, and the output's shape already holds it. */
static DsStatus k_arange_like(const DsKernelCtx *ctx)
{
  const DsArangeLikeParam *lp = ctx->param;
  DsTensor *out = &ctx->outputs[0];
  if (!ds_cpu_dtype_computable(out->dtype) || out->dtype == DS_DTYPE_BOOL)
    return DS_STATUS_UNSUPPORTED;
  DsArangeParam p = {
      .start = lp->start, .step = lp->step, .repeat = lp->repeat, .dtype = lp->dtype};
  ArangeJob job = {&p, out->data, out->dtype};
  ds_parallel_for(ctx->pool, ds_tensor_numel(out), DS_CPU_PARALLEL_GRAIN, arange_worker, &job);
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

/* Fills the output with `value` in its dtype. */
static DsStatus fill_output(const DsKernelCtx *ctx, DsTensor *out, double value)
{
  if (!ds_cpu_dtype_computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  FillJob job = {.out = out->data, .es = ds_dtype_size(out->dtype)};
  ds_cpu_store_f64(out->dtype, job.cell, value);
  ds_parallel_for(ctx->pool, ds_tensor_numel(out), DS_CPU_PARALLEL_GRAIN * 4, fill_worker, &job);
  return DS_STATUS_OK;
}

static DsStatus k_init(const DsKernelCtx *ctx)
{
  const DsInitParam *p = ctx->param;
  return fill_output(ctx, &ctx->outputs[0], p->value);
}

/* ------------------------------------------------------------------------------------------ */
/* SequenceMask */

static DsStatus k_sequence_mask(const DsKernelCtx *ctx)
{
  const DsSequenceMaskParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->ndim < 2 || in->dtype != out->dtype || ds_tensor_numel(in) != ds_tensor_numel(out))
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  if (in->data != out->data) {
    MemcpyJob job = {in->data, out->data};
    ds_parallel_for(ctx->pool, (int64_t)ds_tensor_nbytes(out), DS_CPU_COPY_GRAIN, memcpy_worker,
                    &job);
  }
  if (!p->use_sequence_length)
    return DS_STATUS_OK;
  const DsTensor *len = &ctx->inputs[1];
  int64_t T = in->shape[p->axis], B = in->shape[1 - p->axis];
  if (ds_tensor_numel(len) != B || !ds_cpu_dtype_computable(len->dtype))
    return ds_dtype_is_storage_only(len->dtype) ? DS_STATUS_UNSUPPORTED : DS_STATUS_INVALID_ARGUMENT;
  size_t es = ds_dtype_size(out->dtype);
  int64_t rest = ds_shape_span(in->shape, 2, in->ndim);
  _Alignas(double) char cell[8];
  ds_cpu_store_f64(out->dtype, cell, p->value);
  char *o = out->data;
  for (int64_t b = 0; b < B; b++) {
    /* MXNet truncates the length to an integer; steps at or past it take `value`. */
    int64_t n = load_index(len->dtype, len->data, b);
    int64_t from = n < 0 ? 0 : MIN(n, T);
    if (p->axis == 1) {
      /* (batch, time, rest): the masked steps are one contiguous run. */
      ds_cpu_fill_elems(o + (size_t)((b * T + from) * rest) * es, cell, es, (T - from) * rest);
    } else {
      for (int64_t t = from; t < T; t++)
        ds_cpu_fill_elems(o + (size_t)((t * B + b) * rest) * es, cell, es, rest);
    }
  }
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* slice_axis, slice */

static DsStatus k_slice_axis(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  int nd = in->ndim, axis;
  int64_t first;
  DsStatus args = ds_kernel_args_slice_axis(ctx, &axis, &first);
  if (args != DS_STATUS_OK)
    return args;
  DsCpuCopyPlan plan = {
      .ndim = nd, .es = ds_dtype_size(in->dtype), .in = in->data, .out = out->data};
  memcpy(plan.shape, out->shape, sizeof(int64_t) * (size_t)nd);
  ds_geom_strides(in->shape, nd, plan.stride);
  plan.base = first * plan.stride[axis];
  if (ds_tensor_numel(out) == 0)
    return DS_STATUS_OK;
  ds_cpu_copy_plan_run(&plan, ctx->pool);
  return DS_STATUS_OK;
}

static DsStatus k_slice(const DsKernelCtx *ctx)
{
  const DsSliceParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  int nd = in->ndim;
  if (p->n_axes > nd || out->ndim != nd || out->dtype != in->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  DsCpuCopyPlan plan = {
      .ndim = nd, .es = ds_dtype_size(in->dtype), .in = in->data, .out = out->data};
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    int64_t first = 0, count = in->shape[d], step = 1;
    int i = ds_slice_entry_for_axis(p, nd, d);
    if (i >= 0) {
      step = p->n_step > 0 ? p->step[i] : 1;
      if (step == 0)
        return DS_STATUS_INVALID_ARGUMENT;
      ds_slice_axis_range(in->shape[d], p->begin[i], p->end[i], step, &first, &count);
    }
    if (out->shape[d] != count)
      return DS_STATUS_INVALID_ARGUMENT;
    plan.shape[d] = count;
    plan.stride[d] = s * step;
    if (count > 0)
      plan.base += first * s;
    s *= in->shape[d];
  }
  if (ds_tensor_numel(out) == 0)
    return DS_STATUS_OK;
  ds_cpu_copy_plan_run(&plan, ctx->pool);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* take */

typedef struct {
  const char *data;
  const DsTensor *idx;
  char *out;
  int64_t K, M;      /* indices, size of the taken axis */
  int64_t row_bytes; /* bytes per taken slice */
  DsTakeMode mode;
  atomic_int out_of_range; /* set by any worker that meets a bad index in raise mode */
} TakeJob;

static void take_worker(void *ctx, int64_t begin, int64_t end)
{
  TakeJob *job = ctx;
  for (int64_t u = begin; u < end; u++) {
    int64_t o = u / job->K, j = u % job->K;
    int64_t k = load_index(job->idx->dtype, job->idx->data, j);
    if (k < 0 || k >= job->M) {
      if (job->mode == DS_TAKE_RAISE) {
        atomic_store_explicit(&job->out_of_range, 1, memory_order_relaxed);
        return;
      }
      if (job->mode == DS_TAKE_CLIP)
        k = k < 0 ? 0 : job->M - 1;
      else
        k = ((k % job->M) + job->M) % job->M;
    }
    memcpy(job->out + u * job->row_bytes, job->data + (o * job->M + k) * job->row_bytes,
           (size_t)job->row_bytes);
  }
}

static DsStatus k_take(const DsKernelCtx *ctx)
{
  const DsTakeParam *p = ctx->param;
  const DsTensor *data = &ctx->inputs[0], *idx = &ctx->inputs[1];
  DsTensor *out = &ctx->outputs[0];
  DsGeomTake g;
  DsStatus st = ds_geom_take(data, idx, out, p->axis, &g);
  if (st != DS_STATUS_OK || g.outer * g.k == 0)
    return st;
  TakeJob job = {.data = data->data,
                 .idx = idx,
                 .out = out->data,
                 .K = g.k,
                 .M = g.m,
                 .row_bytes = g.trail * (int64_t)ds_dtype_size(data->dtype),
                 .mode = p->mode,
                 .out_of_range = 0};
  ds_parallel_for(ctx->pool, g.outer * g.k, MAX(1, DS_CPU_COPY_GRAIN / MAX(job.row_bytes, 1)),
                  take_worker, &job);
  return atomic_load(&job.out_of_range) ? DS_STATUS_OUT_OF_RANGE : DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Cast */

typedef struct {
  DsDType from, to;
  const void *in;
  void *out;
} CastJob;

/* Float to narrow integer goes through int32 (what C compilers do for in-range values);
 * anything to bool is a test against zero. */
#define CONV_TO_F32(x)  ((float)(x))
#define CONV_TO_F64(x)  ((double)(x))
#define CONV_TO_I32(x)  ((int32_t)(x))
#define CONV_TO_I64(x)  ((int64_t)(x))
#define CONV_TO_I8(x)   ((int8_t)(int32_t)(x))
#define CONV_TO_U8(x)   ((uint8_t)(int32_t)(x))
#define CONV_TO_BOOL(x) ((uint8_t)((x) != 0))
#define CONV_TO_F16(x)  ds_double_to_half((double)(x))
/* The storage integers wrap like C's integer conversions (ONNX Runtime's Cast is a
 * static_cast): 16 bits through int32 as int8 does, uint32 through int64 so that floats up to
 * 2^32 and every int64 keep their low 32 bits. */
#define CONV_TO_I16(x)  ((int16_t)(int32_t)(x))
#define CONV_TO_U16(x)  ((uint16_t)(int32_t)(x))
#define CONV_TO_U32(x)  ((uint32_t)(int64_t)(x))

/* uint64: a float converts by value (int64 would stop at 2^63), a signed integer wraps. */
static inline uint64_t u64_of_double(double x) { return ds_tensor_double_to_u64(x); }
static inline uint64_t u64_of_u64(uint64_t x) { return x; }
static inline uint64_t u64_of_i64(int64_t x) { return (uint64_t)x; }
#define CONV_TO_U64(x)                                                                             \
  _Generic((x), float: u64_of_double, double: u64_of_double, uint64_t: u64_of_u64,                 \
           default: u64_of_i64)(x)

/* bfloat16 rounds to nearest even, from a float directly and from anything else through a
 * double (exact for every source but 64-bit integers beyond 2^53). */
static inline uint16_t bf16_of_float(float x) { return ds_float_to_bfloat16(x); }
static inline uint16_t bf16_of_double(double x) { return ds_double_to_bfloat16(x); }
#define CONV_TO_BF16(x) _Generic((x), float: bf16_of_float, default: bf16_of_double)(x)

#define CAST_LOOP(TO_T, CONV, LOAD)                                                                \
  {                                                                                                \
    TO_T *restrict d = (TO_T *)job->out + begin;                                                   \
    for (int64_t i = 0; i < n; i++)                                                                \
      d[i] = CONV(LOAD(s[i]));                                                                     \
    return;                                                                                        \
  }

/* LOAD normalises the source element: a bool byte other than 0 or 1 still reads as true. */
#define LOAD_PLAIN(x) (x)
#define LOAD_BOOL(x)  ((uint8_t)((x) != 0))
#define LOAD_HALF(x)  ds_half_to_float(x)
#define LOAD_BF16(x)  ds_bfloat16_to_float(x)

#define CAST_FROM(FROM_T, LOAD)                                                                    \
  {                                                                                                \
    const FROM_T *restrict s = (const FROM_T *)job->in + begin;                                    \
    switch (job->to) {                                                                             \
    case DS_DTYPE_FLOAT32:                                                                         \
      CAST_LOOP(float, CONV_TO_F32, LOAD)                                                          \
    case DS_DTYPE_FLOAT64:                                                                         \
      CAST_LOOP(double, CONV_TO_F64, LOAD)                                                         \
    case DS_DTYPE_INT32:                                                                           \
      CAST_LOOP(int32_t, CONV_TO_I32, LOAD)                                                        \
    case DS_DTYPE_INT64:                                                                           \
      CAST_LOOP(int64_t, CONV_TO_I64, LOAD)                                                        \
    case DS_DTYPE_INT8:                                                                            \
      CAST_LOOP(int8_t, CONV_TO_I8, LOAD)                                                          \
    case DS_DTYPE_UINT8:                                                                           \
      CAST_LOOP(uint8_t, CONV_TO_U8, LOAD)                                                         \
    case DS_DTYPE_BOOL:                                                                            \
      CAST_LOOP(uint8_t, CONV_TO_BOOL, LOAD)                                                       \
    case DS_DTYPE_FLOAT16:                                                                         \
      CAST_LOOP(uint16_t, CONV_TO_F16, LOAD)                                                       \
    case DS_DTYPE_INT16:                                                                           \
      CAST_LOOP(int16_t, CONV_TO_I16, LOAD)                                                        \
    case DS_DTYPE_UINT16:                                                                          \
      CAST_LOOP(uint16_t, CONV_TO_U16, LOAD)                                                       \
    case DS_DTYPE_UINT32:                                                                          \
      CAST_LOOP(uint32_t, CONV_TO_U32, LOAD)                                                       \
    case DS_DTYPE_UINT64:                                                                          \
      CAST_LOOP(uint64_t, CONV_TO_U64, LOAD)                                                       \
    case DS_DTYPE_BFLOAT16:                                                                        \
      CAST_LOOP(uint16_t, CONV_TO_BF16, LOAD)                                                      \
    case DS_DTYPE_COUNT:                                                                           \
      return;                                                                                      \
    }                                                                                              \
    return;                                                                                        \
  }

static void cast_worker(void *ctx, int64_t begin, int64_t end)
{
  const CastJob *job = ctx;
  int64_t n = end - begin;
  switch (job->from) {
  case DS_DTYPE_FLOAT32:
    CAST_FROM(float, LOAD_PLAIN)
  case DS_DTYPE_FLOAT64:
    CAST_FROM(double, LOAD_PLAIN)
  case DS_DTYPE_INT32:
    CAST_FROM(int32_t, LOAD_PLAIN)
  case DS_DTYPE_INT64:
    CAST_FROM(int64_t, LOAD_PLAIN)
  case DS_DTYPE_INT8:
    CAST_FROM(int8_t, LOAD_PLAIN)
  case DS_DTYPE_UINT8:
    CAST_FROM(uint8_t, LOAD_PLAIN)
  case DS_DTYPE_BOOL:
    CAST_FROM(uint8_t, LOAD_BOOL)
  case DS_DTYPE_FLOAT16:
    CAST_FROM(uint16_t, LOAD_HALF)
  case DS_DTYPE_INT16:
    CAST_FROM(int16_t, LOAD_PLAIN)
  case DS_DTYPE_UINT16:
    CAST_FROM(uint16_t, LOAD_PLAIN)
  case DS_DTYPE_UINT32:
    CAST_FROM(uint32_t, LOAD_PLAIN)
  case DS_DTYPE_UINT64:
    CAST_FROM(uint64_t, LOAD_PLAIN)
  case DS_DTYPE_BFLOAT16:
    CAST_FROM(uint16_t, LOAD_BF16)
  case DS_DTYPE_COUNT:
    return;
  }
}

static DsStatus k_cast(const DsKernelCtx *ctx)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (ds_tensor_numel(in) != ds_tensor_numel(out))
    return DS_STATUS_INVALID_ARGUMENT;
  /* Cast is the one kernel that reads and writes the storage types (float16, bfloat16, the
   * 16-bit and wide unsigned integers): it is how their data enters and leaves computation. */
  if (!ds_dtype_is_valid(in->dtype) || !ds_dtype_is_valid(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  if (in->dtype == out->dtype && in->dtype != DS_DTYPE_BOOL)
    return k_view(ctx); /* bool still normalises bytes other than 0 and 1 */
  CastJob job = {in->dtype, out->dtype, in->data, out->data};
  ds_parallel_for(ctx->pool, ds_tensor_numel(out), DS_CPU_PARALLEL_GRAIN, cast_worker, &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* _npi_pad */

static DsStatus k_pad(const DsKernelCtx *ctx)
{
  const DsPadParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->ndim != p->ndim || out->ndim != p->ndim || in->dtype != out->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  if (p->value != 0.0 && !ds_cpu_dtype_computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  for (int d = 0; d < p->ndim; d++) {
    if (out->shape[d] != in->shape[d] + p->before[d] + p->after[d])
      return DS_STATUS_INVALID_ARGUMENT;
    if (p->mode != DS_PAD_CONSTANT && in->shape[d] == 0 && out->shape[d] > 0)
      return DS_STATUS_INVALID_ARGUMENT;
  }
  ds_cpu_pad(in, out, p->before, p->mode, p->value, ctx->pool);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* cumsum */

/* A scalar integer parameter (shape () or (1,)): cumsum's axis, trilu's k. */
static bool load_scalar_param(const DsTensor *t, int64_t *out)
{
  if (t->ndim > 1 || ds_tensor_numel(t) != 1 || !ds_cpu_dtype_computable(t->dtype))
    return false;
  *out = load_index(t->dtype, t->data, 0);
  return true;
}

typedef struct {
  const void *in;
  void *out;
  int64_t len, inner;
  bool exclusive, reverse;
} CumsumJob;

/* Each unit is one outer block: `len` rows of `inner` elements, summed row after row. */
#define CUMSUM_BLOCK(T)                                                                            \
  {                                                                                                \
    const T *in = (const T *)job->in + o * job->len * job->inner;                                  \
    T *out = (T *)job->out + o * job->len * job->inner;                                            \
    for (int64_t i = 0; i < job->inner; i++) {                                                     \
      T acc = 0;                                                                                   \
      for (int64_t k = 0; k < job->len; k++) {                                                     \
        int64_t at = (job->reverse ? job->len - 1 - k : k) * job->inner + i;                       \
        if (job->exclusive) {                                                                      \
          out[at] = acc;                                                                           \
          acc = (T)(acc + in[at]);                                                                 \
        } else {                                                                                   \
          acc = (T)(acc + in[at]);                                                                 \
          out[at] = acc;                                                                           \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }

static void cumsum_worker_f32(void *ctx, int64_t begin, int64_t end)
{
  const CumsumJob *job = ctx;
  for (int64_t o = begin; o < end; o++)
    CUMSUM_BLOCK(float)
}

static void cumsum_worker_f64(void *ctx, int64_t begin, int64_t end)
{
  const CumsumJob *job = ctx;
  for (int64_t o = begin; o < end; o++)
    CUMSUM_BLOCK(double)
}

static void cumsum_worker_i32(void *ctx, int64_t begin, int64_t end)
{
  const CumsumJob *job = ctx;
  for (int64_t o = begin; o < end; o++)
    CUMSUM_BLOCK(int32_t)
}

static void cumsum_worker_i64(void *ctx, int64_t begin, int64_t end)
{
  const CumsumJob *job = ctx;
  for (int64_t o = begin; o < end; o++)
    CUMSUM_BLOCK(int64_t)
}

static void cumsum_worker_i8(void *ctx, int64_t begin, int64_t end)
{
  const CumsumJob *job = ctx;
  for (int64_t o = begin; o < end; o++)
    CUMSUM_BLOCK(int8_t)
}

static void cumsum_worker_u8(void *ctx, int64_t begin, int64_t end)
{
  const CumsumJob *job = ctx;
  for (int64_t o = begin; o < end; o++)
    CUMSUM_BLOCK(uint8_t)
}
#undef CUMSUM_BLOCK

static DsStatus k_cumsum(const DsKernelCtx *ctx)
{
  const DsCumsumParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  int64_t axis;
  if (!load_scalar_param(&ctx->inputs[1], &axis) || in->dtype != out->dtype ||
      !ds_geom_same_shape(in, out))
    return DS_STATUS_INVALID_ARGUMENT;
  if (axis < -in->ndim || axis >= in->ndim)
    return DS_STATUS_OUT_OF_RANGE;
  int a = (int)(axis < 0 ? axis + in->ndim : axis);
  CumsumJob job = {in->data, out->data, in->shape[a], ds_shape_span(in->shape, a + 1, in->ndim),
                   p->exclusive, p->reverse};
  int64_t outer = ds_shape_span(in->shape, 0, a);
  DsParallelFn fn;
  switch (in->dtype) {
  case DS_DTYPE_FLOAT32:
    fn = cumsum_worker_f32;
    break;
  case DS_DTYPE_FLOAT64:
    fn = cumsum_worker_f64;
    break;
  case DS_DTYPE_INT32:
    fn = cumsum_worker_i32;
    break;
  case DS_DTYPE_INT64:
    fn = cumsum_worker_i64;
    break;
  case DS_DTYPE_INT8:
    fn = cumsum_worker_i8;
    break;
  case DS_DTYPE_UINT8:
    fn = cumsum_worker_u8;
    break;
  default:
    return DS_STATUS_UNSUPPORTED;
  }
  if (ds_tensor_numel(out) == 0)
    return DS_STATUS_OK;
  ds_parallel_for(ctx->pool, outer, MAX(1, DS_CPU_PARALLEL_GRAIN / MAX(job.len * job.inner, 1)),
                  fn, &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* trilu, eye_like */

typedef struct {
  const char *in; /* NULL for eye_like */
  char *out;
  size_t es;
  int64_t rows, cols, k;
  bool upper;
  _Alignas(8) char one[8]; /* eye_like's 1 in the output dtype, stored as that type */
} TriJob;

/* Units are matrix rows: columns [lo, hi) are kept (trilu) or, for eye_like, the one column
 * row + k is one; everything else is zero. */
static void tri_worker(void *ctx, int64_t begin, int64_t end)
{
  const TriJob *job = ctx;
  size_t es = job->es;
  for (int64_t u = begin; u < end; u++) {
    int64_t r = u % job->rows;
    char *dst = job->out + (size_t)(u * job->cols) * es;
    memset(dst, 0, (size_t)job->cols * es);
    if (job->in == NULL) {
      int64_t c = r + job->k;
      if (c >= 0 && c < job->cols)
        memcpy(dst + (size_t)c * es, job->one, es);
      continue;
    }
    /* Keep column c when c - r >= k (upper) or c - r <= k (lower); r + k cannot overflow as k
     * is clamped by the caller. */
    int64_t lo = job->upper ? MAX(r + job->k, 0) : 0;
    int64_t hi = job->upper ? job->cols : MIN(r + job->k + 1, job->cols);
    if (hi > lo)
      memcpy(dst + (size_t)lo * es, job->in + (size_t)(u * job->cols + lo) * es,
             (size_t)(hi - lo) * es);
  }
}

static void run_tri(const DsKernelCtx *ctx, TriJob *job, const DsTensor *out)
{
  int64_t n = ds_tensor_numel(out);
  if (n == 0)
    return;
  int64_t rows = n / MAX(job->cols, 1);
  ds_parallel_for(ctx->pool, rows, ds_cpu_copy_grain(job->cols * (int64_t)job->es), tri_worker,
                  job);
}

static DsStatus k_trilu(const DsKernelCtx *ctx)
{
  const DsTriluParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  int64_t k;
  if (in->ndim < 2 || !load_scalar_param(&ctx->inputs[1], &k) || in->dtype != out->dtype ||
      !ds_geom_same_shape(in, out) || in->data == out->data)
    return DS_STATUS_INVALID_ARGUMENT;
  TriJob job = {.in = in->data, .out = out->data, .es = ds_dtype_size(in->dtype),
                .rows = in->shape[in->ndim - 2], .cols = in->shape[in->ndim - 1],
                .upper = p->upper};
  /* Past either corner every k keeps all or nothing. */
  int64_t far = job.rows + job.cols + 1;
  job.k = k < -far ? -far : (k > far ? far : k);
  run_tri(ctx, &job, out);
  return DS_STATUS_OK;
}

static DsStatus k_full_like(const DsKernelCtx *ctx)
{
  const DsFullLikeParam *p = ctx->param;
  DsTensor *out = &ctx->outputs[0];
  if (!ds_geom_same_shape(&ctx->inputs[0], out))
    return DS_STATUS_INVALID_ARGUMENT;
  return fill_output(ctx, out, p->fill_value);
}

static DsStatus k_eye_like(const DsKernelCtx *ctx)
{
  const DsEyeLikeParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->ndim != 2 || !ds_geom_same_shape(in, out))
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  TriJob job = {.out = out->data, .es = ds_dtype_size(out->dtype), .rows = out->shape[0],
                .cols = out->shape[1]};
  int64_t far = job.rows + job.cols + 1;
  job.k = p->k < -far ? -far : (p->k > far ? far : p->k);
  ds_cpu_store_f64(out->dtype, job.one, 1.0);
  run_tri(ctx, &job, out);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* depth_to_space, space_to_depth: one strided copy over the blocks' six axes. */

static DsStatus depth_space(const DsKernelCtx *ctx, bool to_space)
{
  const DsDepthSpaceParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->ndim != 4 || out->ndim != 4 || in->dtype != out->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t b = p->block_size, N = in->shape[0], C = in->shape[1], H = in->shape[2],
          W = in->shape[3];
  DsCpuCopyPlan plan = {.ndim = 6, .es = ds_dtype_size(in->dtype), .in = in->data,
                        .out = out->data};
  if (to_space) {
    int64_t c = C / (b * b);
    if (C % (b * b) != 0 || out->shape[0] != N || out->shape[1] != c || out->shape[2] != H * b ||
        out->shape[3] != W * b)
      return DS_STATUS_INVALID_ARGUMENT;
    /* Output axes (n, c, h, bh, w, bw); channel (bh * b + bw) * c + c' (DCR) or
     * c' * b * b + bh * b + bw (CRD). */
    int64_t hw = H * W;
    int64_t shape[6] = {N, c, H, b, W, b};
    int64_t stride[6] = {C * hw, p->crd ? b * b * hw : hw, W, p->crd ? b * hw : b * c * hw, 1,
                         p->crd ? hw : c * hw};
    memcpy(plan.shape, shape, sizeof shape);
    memcpy(plan.stride, stride, sizeof stride);
  } else {
    int64_t h = H / b, w = W / b;
    if (H % b != 0 || W % b != 0 || out->shape[0] != N || out->shape[1] != C * b * b ||
        out->shape[2] != h || out->shape[3] != w)
      return DS_STATUS_INVALID_ARGUMENT;
    /* Output axes (n, bh, bw, c, h, w) (DCR) or (n, c, bh, bw, h, w) (CRD). */
    int64_t shape_dcr[6] = {N, b, b, C, h, w}, stride_dcr[6] = {C * H * W, W, 1, H * W, b * W, b};
    int64_t shape_crd[6] = {N, C, b, b, h, w}, stride_crd[6] = {C * H * W, H * W, W, 1, b * W, b};
    memcpy(plan.shape, p->crd ? shape_crd : shape_dcr, sizeof shape_dcr);
    memcpy(plan.stride, p->crd ? stride_crd : stride_dcr, sizeof stride_dcr);
  }
  if (ds_tensor_numel(out) == 0)
    return DS_STATUS_OK;
  ds_cpu_copy_plan_run(&plan, ctx->pool);
  return DS_STATUS_OK;
}

static DsStatus k_depth_to_space(const DsKernelCtx *ctx)
{
  return depth_space(ctx, true);
}

static DsStatus k_space_to_depth(const DsKernelCtx *ctx)
{
  return depth_space(ctx, false);
}

/* ------------------------------------------------------------------------------------------ */
/* SequenceReverse */

typedef struct {
  const char *in;
  char *out;
  size_t row_bytes;
  int64_t T, B;
  const DsTensor *lengths; /* NULL: every sequence is T long */
} SeqRevJob;

/* The length of batch entry b's sequence, clamped to [0, T]. */
static int64_t seq_length(const SeqRevJob *job, int64_t b)
{
  if (job->lengths == NULL)
    return job->T;
  int64_t n = load_index(job->lengths->dtype, job->lengths->data, b);
  return n < 0 ? 0 : (n > job->T ? job->T : n);
}

/* Units are (t, b) rows of the output. */
static void seq_rev_worker(void *ctx, int64_t begin, int64_t end)
{
  const SeqRevJob *job = ctx;
  for (int64_t u = begin; u < end; u++) {
    int64_t t = u / job->B, b = u % job->B, n = seq_length(job, b);
    int64_t src = t < n ? n - 1 - t : t;
    memcpy(job->out + (size_t)u * job->row_bytes,
           job->in + (size_t)(src * job->B + b) * job->row_bytes, job->row_bytes);
  }
}

static DsStatus k_sequence_reverse(const DsKernelCtx *ctx)
{
  const DsSequenceReverseParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->ndim < 2 || in->dtype != out->dtype || !ds_geom_same_shape(in, out) ||
      in->data == out->data)
    return DS_STATUS_INVALID_ARGUMENT;
  SeqRevJob job = {in->data, out->data, 0, in->shape[0], in->shape[1], NULL};
  job.row_bytes = (size_t)ds_shape_span(in->shape, 2, in->ndim) * ds_dtype_size(in->dtype);
  if (p->use_sequence_length) {
    job.lengths = &ctx->inputs[1];
    if (job.lengths->ndim != 1 || job.lengths->shape[0] != job.B)
      return DS_STATUS_INVALID_ARGUMENT;
    if (!ds_cpu_dtype_computable(job.lengths->dtype))
      return DS_STATUS_UNSUPPORTED;
  }
  if (ds_tensor_numel(out) == 0)
    return DS_STATUS_OK;
  ds_parallel_for(ctx->pool, job.T * job.B, ds_cpu_copy_grain((int64_t)job.row_bytes),
                  seq_rev_worker, &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* SequenceLast */

/* Each batch entry's row (rest of the dims) copied from its last valid step. A length outside
 * [1, T] has no last step (MXNet would read outside the data): refused. */
static DsStatus k_sequence_last(const DsKernelCtx *ctx)
{
  const DsSequenceLastParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->ndim < 2 || in->dtype != out->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t T = in->shape[p->axis], B = in->shape[1 - p->axis];
  int64_t rest = ds_shape_span(in->shape, 2, in->ndim);
  if (ds_tensor_numel(out) != B * rest)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *lengths = p->use_sequence_length ? &ctx->inputs[1] : NULL;
  if (lengths != NULL) {
    if (ds_tensor_numel(lengths) != B)
      return DS_STATUS_INVALID_ARGUMENT;
    if (!ds_cpu_dtype_computable(lengths->dtype))
      return DS_STATUS_UNSUPPORTED;
  }
  size_t row_bytes = (size_t)rest * ds_dtype_size(in->dtype);
  for (int64_t b = 0; b < B; b++) {
    int64_t last = lengths != NULL ? load_index(lengths->dtype, lengths->data, b) - 1 : T - 1;
    if (last < 0 || last >= T)
      return DS_STATUS_INVALID_ARGUMENT;
    int64_t row = p->axis == 0 ? last * B + b : b * T + last;
    memcpy((char *)out->data + (size_t)b * row_bytes,
           (const char *)in->data + (size_t)row * row_bytes, row_bytes);
  }
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */

void ds_cpu_tensor_register(DsKernel *table)
{
  table[DS_OP_RESHAPE] = (DsKernel){k_view, NULL};
  table[DS_OP_FLATTEN] = (DsKernel){k_view, NULL};
  table[DS_OP_EXPAND_DIMS] = (DsKernel){k_view, NULL};
  table[DS_OP_SQUEEZE] = (DsKernel){k_view, NULL};
  table[DS_OP_RESHAPE_LIKE] = (DsKernel){k_view, NULL};
  table[DS_OP_TRANSPOSE] = (DsKernel){k_transpose, NULL};
  table[DS_OP_SWAP_AXIS] = (DsKernel){k_swap_axis, NULL};
  table[DS_OP_CONCAT] = (DsKernel){k_concat, NULL};
  table[DS_OP_BROADCAST_AXIS] = (DsKernel){k_broadcast_copy, NULL};
  table[DS_OP_BROADCAST_TO] = (DsKernel){k_broadcast_copy, NULL};
  table[DS_OP_BROADCAST_LIKE] = (DsKernel){k_broadcast_copy, NULL};
  table[DS_OP_ARANGE] = (DsKernel){k_arange, NULL};
  table[DS_OP_ARANGE_LIKE] = (DsKernel){k_arange_like, NULL};
  table[DS_OP_ZEROS] = (DsKernel){k_init, NULL};
  table[DS_OP_ONES] = (DsKernel){k_init, NULL};
  table[DS_OP_FULL] = (DsKernel){k_init, NULL};
  table[DS_OP_SEQUENCE_MASK] = (DsKernel){k_sequence_mask, NULL};
  table[DS_OP_SLICE_AXIS] = (DsKernel){k_slice_axis, NULL};
  table[DS_OP_SLICE] = (DsKernel){k_slice, NULL};
  table[DS_OP_TAKE] = (DsKernel){k_take, NULL};
  table[DS_OP_CAST] = (DsKernel){k_cast, NULL};
  table[DS_OP_NP_RESHAPE] = (DsKernel){k_view, NULL};
  table[DS_OP_NP_SQUEEZE] = (DsKernel){k_view, NULL};
  table[DS_OP_EXPAND] = (DsKernel){k_broadcast_copy, NULL};
  table[DS_OP_PAD] = (DsKernel){k_pad, NULL};
  table[DS_OP_MX_PAD] = (DsKernel){k_pad, NULL};
  table[DS_OP_CUMSUM] = (DsKernel){k_cumsum, NULL};
  table[DS_OP_TRILU] = (DsKernel){k_trilu, NULL};
  table[DS_OP_EYE_LIKE] = (DsKernel){k_eye_like, NULL};
  table[DS_OP_DEPTH_TO_SPACE] = (DsKernel){k_depth_to_space, NULL};
  table[DS_OP_SPACE_TO_DEPTH] = (DsKernel){k_space_to_depth, NULL};
  table[DS_OP_SEQUENCE_REVERSE] = (DsKernel){k_sequence_reverse, NULL};
  table[DS_OP_FULL_LIKE] = (DsKernel){k_full_like, NULL};
  table[DS_OP_SEQUENCE_LAST] = (DsKernel){k_sequence_last, NULL};
}
