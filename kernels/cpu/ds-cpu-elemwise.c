/* ds-cpu-elemwise.c: CPU kernels for the elementwise, broadcast and scalar ops.
 *
 * Layout of the work: a binary op first collapses the broadcast into at most DS_MAX_NDIM
 * output dims where each operand either walks contiguously or stays put (stride 0), so the
 * innermost loop is one of three simple restrict-qualified loops (vector-vector,
 * vector-scalar, scalar-vector) that GCC vectorises. Same-shape operands, scalar operands, row
 * broadcasts (N,C)+(1,C) and column broadcasts (N,C)+(N,1) all land on those loops with no
 * per-element index arithmetic; only the outer rows use an odometer.
 *
 * float32, float64, int32 and int64 have typed loops. Other dtypes (uint8, int8, bool) and
 * mixed dtypes (an int input with a non-integer scalar gives float64, as in MXNet) go through
 * blocks converted to double on the stack, then the float64 loops: slower, but exact for
 * those types and never allocating.
 */
#include <math.h>
#include <string.h>

#include "ds-cpu.h"
#include "ds-cpu-vmath.h"

/* Under GCC's default -ftrapping-math a select that guards float arithmetic (the clamps and
 * range blends of ds_vmath_exp, ds_vmath_erf, ds_vmath_tanh) stays a branch, and a loop with a branch
 * does not vectorise. Nothing here enables floating-point traps, so let GCC assume there are
 * none (Clang already does by default). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

/* Elements converted per block on the generic (through-double) path: 3 x 2 KiB of stack. */
#define BLOCK 256

/* ------------------------------------------------------------------------------------------ */
/* Conversions for the generic path */

/* Loads n elements (from element `offset` with element stride `stride`, 0 for a scalar). */
static void load_f64(DsDType t, const void *base, int64_t offset, int64_t stride, int64_t n,
                     double *restrict dst)
{
#define LOAD_CASE(DT, T)                                                                           \
  case DT: {                                                                                       \
    const T *s = (const T *)base + offset;                                                         \
    for (int64_t i = 0; i < n; i++)                                                                \
      dst[i] = (double)s[i * stride];                                                              \
    break;                                                                                         \
  }
  switch (t) {
    LOAD_CASE(DS_DTYPE_FLOAT32, float)
    LOAD_CASE(DS_DTYPE_FLOAT64, double)
    LOAD_CASE(DS_DTYPE_INT32, int32_t)
    LOAD_CASE(DS_DTYPE_INT64, int64_t)
    LOAD_CASE(DS_DTYPE_INT8, int8_t)
    LOAD_CASE(DS_DTYPE_UINT8, uint8_t)
  case DS_DTYPE_BOOL: {
    const uint8_t *s = (const uint8_t *)base + offset;
    for (int64_t i = 0; i < n; i++)
      dst[i] = s[i * stride] != 0 ? 1.0 : 0.0;
    break;
  }
  default:
    break;
  }
#undef LOAD_CASE
}

static void store_f64(DsDType t, void *base, int64_t offset, int64_t n, const double *restrict src)
{
#define STORE_INT_CASE(DT, T)                                                                      \
  case DT: {                                                                                       \
    T *d = (T *)base + offset;                                                                     \
    for (int64_t i = 0; i < n; i++)                                                                \
      d[i] = (T)ds_cpu_saturate_i64(src[i]);                                                                   \
    break;                                                                                         \
  }
  switch (t) {
  case DS_DTYPE_FLOAT32: {
    float *d = (float *)base + offset;
    for (int64_t i = 0; i < n; i++)
      d[i] = (float)src[i];
    break;
  }
  case DS_DTYPE_FLOAT64:
    memcpy((double *)base + offset, src, (size_t)n * sizeof(double));
    break;
    STORE_INT_CASE(DS_DTYPE_INT32, int32_t)
    STORE_INT_CASE(DS_DTYPE_INT64, int64_t)
    STORE_INT_CASE(DS_DTYPE_INT8, int8_t)
    STORE_INT_CASE(DS_DTYPE_UINT8, uint8_t)
  case DS_DTYPE_BOOL: {
    uint8_t *d = (uint8_t *)base + offset;
    for (int64_t i = 0; i < n; i++)
      d[i] = src[i] != 0.0;
    break;
  }
  default:
    break;
  }
#undef STORE_INT_CASE
}

/* A scalar converted to dtype `t` and back, so the generic path sees MXNet's DType(alpha). */
static double round_trip(DsDType t, double x)
{
  union {
    double f64;
    float f32;
    int64_t i64;
    int32_t i32;
    int8_t i8;
    uint8_t u8;
  } cell;
  double back = x;
  store_f64(t, &cell, 0, 1, &x);
  load_f64(t, &cell, 0, 0, 1, &back);
  return back;
}

/* Index of the typed loop set for a dtype, or -1 for the generic path. */
enum { TY_F32, TY_F64, TY_I32, TY_I64, TY_COUNT };

static int typed_index(DsDType t)
{
  switch (t) {
  case DS_DTYPE_FLOAT32:
    return TY_F32;
  case DS_DTYPE_FLOAT64:
    return TY_F64;
  case DS_DTYPE_INT32:
    return TY_I32;
  case DS_DTYPE_INT64:
    return TY_I64;
  default:
    return -1;
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Binary loops */

typedef enum {
  BIN_ADD,
  BIN_SUB,
  BIN_MUL,
  BIN_DIV,
  BIN_MAX,
  BIN_MIN,
  BIN_POW,
  BIN_EQ,
  BIN_NE,
  BIN_GT,
  BIN_GE,
  BIN_LT,
  BIN_LE,
  BIN_COUNT
} BinOp;

typedef void (*BinLoop)(int64_t n, const void *a, const void *b, void *out);

typedef struct {
  BinLoop vv, vs, sv; /* both vectors; b a scalar; a a scalar */
} BinLoops;

/* Integer division must not trap: x/0 gives 0 and MIN/-1 wraps, where MXNet would crash. */
static inline int32_t div_i32(int32_t x, int32_t y)
{
  if (y == 0)
    return 0;
  if (y == -1)
    return (int32_t)(0u - (uint32_t)x);
  return x / y;
}

static inline int64_t div_i64(int64_t x, int64_t y)
{
  if (y == 0)
    return 0;
  if (y == -1)
    return (int64_t)(0u - (uint64_t)x);
  return x / y;
}

#define DEFINE_BIN_LOOPS(NAME, T, EXPR)                                                            \
  static void NAME##_vv(int64_t n, const void *pa, const void *pb, void *po)                       \
  {                                                                                                \
    const T *restrict a = pa;                                                                      \
    const T *restrict b = pb;                                                                      \
    T *restrict o = po;                                                                            \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T x = a[i], y = b[i];                                                                        \
      o[i] = (EXPR);                                                                               \
    }                                                                                              \
  }                                                                                                \
  static void NAME##_vs(int64_t n, const void *pa, const void *pb, void *po)                       \
  {                                                                                                \
    const T *restrict a = pa;                                                                      \
    const T y = *(const T *)pb;                                                                    \
    T *restrict o = po;                                                                            \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T x = a[i];                                                                                  \
      o[i] = (EXPR);                                                                               \
    }                                                                                              \
  }                                                                                                \
  static void NAME##_sv(int64_t n, const void *pa, const void *pb, void *po)                       \
  {                                                                                                \
    const T x = *(const T *)pa;                                                                    \
    const T *restrict b = pb;                                                                      \
    T *restrict o = po;                                                                            \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T y = b[i];                                                                                  \
      o[i] = (EXPR);                                                                               \
    }                                                                                              \
  }

/* NaN-propagating max/min, as NumPy's maximum/minimum; branch-free so it vectorises. */
#define MAX_EXPR ((x > y || x != x) ? x : y)
#define MIN_EXPR ((x < y || x != x) ? x : y)

#define DEFINE_BIN_TYPE(P, T, DIV_EXPR, POW_EXPR)                                                  \
  DEFINE_BIN_LOOPS(P##_add, T, x + y)                                                              \
  DEFINE_BIN_LOOPS(P##_sub, T, x - y)                                                              \
  DEFINE_BIN_LOOPS(P##_mul, T, x *y)                                                               \
  DEFINE_BIN_LOOPS(P##_div, T, DIV_EXPR)                                                           \
  DEFINE_BIN_LOOPS(P##_max, T, MAX_EXPR)                                                           \
  DEFINE_BIN_LOOPS(P##_min, T, MIN_EXPR)                                                           \
  DEFINE_BIN_LOOPS(P##_pow, T, POW_EXPR)                                                           \
  DEFINE_BIN_LOOPS(P##_eq, T, (T)(x == y))                                                         \
  DEFINE_BIN_LOOPS(P##_ne, T, (T)(x != y))                                                         \
  DEFINE_BIN_LOOPS(P##_gt, T, (T)(x > y))                                                          \
  DEFINE_BIN_LOOPS(P##_ge, T, (T)(x >= y))                                                         \
  DEFINE_BIN_LOOPS(P##_lt, T, (T)(x < y))                                                          \
  DEFINE_BIN_LOOPS(P##_le, T, (T)(x <= y))

/* Integer adds and multiplies wrap through unsigned arithmetic, as the hardware does. */
DEFINE_BIN_TYPE(f32, float, x / y, powf(x, y))
DEFINE_BIN_TYPE(f64, double, x / y, pow(x, y))
#undef MAX_EXPR
#undef MIN_EXPR
#define MAX_EXPR (x > y ? x : y)
#define MIN_EXPR (x < y ? x : y)
DEFINE_BIN_LOOPS(i32_add, int32_t, (int32_t)((uint32_t)x + (uint32_t)y))
DEFINE_BIN_LOOPS(i32_sub, int32_t, (int32_t)((uint32_t)x - (uint32_t)y))
DEFINE_BIN_LOOPS(i32_mul, int32_t, (int32_t)((uint32_t)x *(uint32_t)y))
DEFINE_BIN_LOOPS(i32_div, int32_t, div_i32(x, y))
DEFINE_BIN_LOOPS(i32_max, int32_t, MAX_EXPR)
DEFINE_BIN_LOOPS(i32_min, int32_t, MIN_EXPR)
DEFINE_BIN_LOOPS(i32_pow, int32_t, (int32_t)ds_cpu_saturate_i64(pow((double)x, (double)y)))
DEFINE_BIN_LOOPS(i32_eq, int32_t, (int32_t)(x == y))
DEFINE_BIN_LOOPS(i32_ne, int32_t, (int32_t)(x != y))
DEFINE_BIN_LOOPS(i32_gt, int32_t, (int32_t)(x > y))
DEFINE_BIN_LOOPS(i32_ge, int32_t, (int32_t)(x >= y))
DEFINE_BIN_LOOPS(i32_lt, int32_t, (int32_t)(x < y))
DEFINE_BIN_LOOPS(i32_le, int32_t, (int32_t)(x <= y))
DEFINE_BIN_LOOPS(i64_add, int64_t, (int64_t)((uint64_t)x + (uint64_t)y))
DEFINE_BIN_LOOPS(i64_sub, int64_t, (int64_t)((uint64_t)x - (uint64_t)y))
DEFINE_BIN_LOOPS(i64_mul, int64_t, (int64_t)((uint64_t)x *(uint64_t)y))
DEFINE_BIN_LOOPS(i64_div, int64_t, div_i64(x, y))
DEFINE_BIN_LOOPS(i64_max, int64_t, MAX_EXPR)
DEFINE_BIN_LOOPS(i64_min, int64_t, MIN_EXPR)
DEFINE_BIN_LOOPS(i64_pow, int64_t, ds_cpu_saturate_i64(pow((double)x, (double)y)))
DEFINE_BIN_LOOPS(i64_eq, int64_t, (int64_t)(x == y))
DEFINE_BIN_LOOPS(i64_ne, int64_t, (int64_t)(x != y))
DEFINE_BIN_LOOPS(i64_gt, int64_t, (int64_t)(x > y))
DEFINE_BIN_LOOPS(i64_ge, int64_t, (int64_t)(x >= y))
DEFINE_BIN_LOOPS(i64_lt, int64_t, (int64_t)(x < y))
DEFINE_BIN_LOOPS(i64_le, int64_t, (int64_t)(x <= y))
#undef MAX_EXPR
#undef MIN_EXPR

#define LOOPS(P, OP)                                                                               \
  {                                                                                                \
    P##_##OP##_vv, P##_##OP##_vs, P##_##OP##_sv                                                    \
  }
#define TYPE_LOOPS(P)                                                                              \
  {                                                                                                \
    LOOPS(P, add), LOOPS(P, sub), LOOPS(P, mul), LOOPS(P, div), LOOPS(P, max), LOOPS(P, min),      \
        LOOPS(P, pow), LOOPS(P, eq), LOOPS(P, ne), LOOPS(P, gt), LOOPS(P, ge), LOOPS(P, lt),       \
        LOOPS(P, le)                                                                               \
  }

static const BinLoops bin_loops[TY_COUNT][BIN_COUNT] = {
    [TY_F32] = TYPE_LOOPS(f32),
    [TY_F64] = TYPE_LOOPS(f64),
    [TY_I32] = TYPE_LOOPS(i32),
    [TY_I64] = TYPE_LOOPS(i64),
};
#undef LOOPS
#undef TYPE_LOOPS

/* ------------------------------------------------------------------------------------------ */
/* Broadcast plans */

typedef struct {
  int ndim;                   /* collapsed rank, >= 1 */
  int64_t shape[DS_MAX_NDIM]; /* output dims */
  int64_t sa[DS_MAX_NDIM];    /* element strides of a; 0 where a is broadcast */
  int64_t sb[DS_MAX_NDIM];
} BcastPlan;

/* Builds the plan for out = a (op) b; false if the shapes do not broadcast to out's. */
static bool bcast_plan(const DsTensor *a, const DsTensor *b, const DsTensor *out, BcastPlan *p)
{
  int nd = out->ndim;
  if (a->ndim > nd || b->ndim > nd)
    return false;
  int64_t shape[DS_MAX_NDIM], sa[DS_MAX_NDIM], sb[DS_MAX_NDIM];
  int64_t stride_a = 1, stride_b = 1;
  for (int i = nd - 1; i >= 0; i--) {
    int ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
    int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
    int64_t d = out->shape[i];
    if ((da != d && da != 1) || (db != d && db != 1))
      return false;
    shape[i] = d;
    sa[i] = da == 1 ? 0 : stride_a;
    sb[i] = db == 1 ? 0 : stride_b;
    stride_a *= da;
    stride_b *= db;
  }
  /* Drop size-1 dims, then merge neighbours that both operands walk the same way. */
  int n = 0;
  for (int i = 0; i < nd; i++) {
    if (shape[i] == 1)
      continue;
    if (n > 0 && p->sa[n - 1] == sa[i] * shape[i] && p->sb[n - 1] == sb[i] * shape[i]) {
      p->shape[n - 1] *= shape[i];
      p->sa[n - 1] = sa[i];
      p->sb[n - 1] = sb[i];
      continue;
    }
    p->shape[n] = shape[i];
    p->sa[n] = sa[i];
    p->sb[n] = sb[i];
    n++;
  }
  if (n == 0) {
    p->shape[0] = 1;
    p->sa[0] = p->sb[0] = 0;
    n = 1;
  }
  p->ndim = n;
  return true;
}

/* A binary job: typed when `typed` is set, else through double blocks. */
typedef struct {
  const BinLoops *typed;
  const BinLoops *f64;
  DsDType ta, tb, to;
  const char *a, *b;
  char *o;
  size_t ea, eb, eo;
  BcastPlan plan;
  int64_t inner; /* length of the innermost dim */
  int64_t chunk; /* elements per work unit: a whole row, or a slice of a single row */
} BinJob;

/* One run of n output elements at element offsets (oa, ob, oo), inner strides from the plan. */
static void bin_run(const BinJob *job, int64_t oa, int64_t ob, int64_t oo, int64_t n)
{
  int last = job->plan.ndim - 1;
  bool va = job->plan.sa[last] != 0, vb = job->plan.sb[last] != 0;
  if (job->typed != NULL) {
    const void *pa = job->a + oa * job->ea, *pb = job->b + ob * job->eb;
    void *po = job->o + oo * job->eo;
    if (va && vb)
      job->typed->vv(n, pa, pb, po);
    else if (va)
      job->typed->vs(n, pa, pb, po);
    else if (vb)
      job->typed->sv(n, pa, pb, po);
    else {
      /* Both operands constant along the row: one result, repeated. */
      job->typed->vv(1, pa, pb, po);
      for (int64_t i = 1; i < n; i++)
        memcpy((char *)po + i * job->eo, po, job->eo);
    }
    return;
  }
  double xa[BLOCK], xb[BLOCK], xo[BLOCK];
  for (int64_t done = 0; done < n; done += BLOCK) {
    int64_t m = MIN(BLOCK, n - done);
    load_f64(job->ta, job->a, oa + (va ? done : 0), va ? 1 : 0, va ? m : 1, xa);
    load_f64(job->tb, job->b, ob + (vb ? done : 0), vb ? 1 : 0, vb ? m : 1, xb);
    if (va && vb)
      job->f64->vv(m, xa, xb, xo);
    else if (va)
      job->f64->vs(m, xa, xb, xo);
    else if (vb)
      job->f64->sv(m, xa, xb, xo);
    else {
      job->f64->vv(1, xa, xb, xo);
      for (int64_t i = 1; i < m; i++)
        xo[i] = xo[0];
    }
    store_f64(job->to, job->o, oo + done, m, xo);
  }
}

/* Work units [begin, end): each is `chunk` consecutive output elements inside one row. */
static void bin_worker(void *ctx, int64_t begin, int64_t end)
{
  const BinJob *job = ctx;
  const BcastPlan *p = &job->plan;
  int last = p->ndim - 1;
  int64_t per_row = (job->inner + job->chunk - 1) / job->chunk;
  for (int64_t u = begin; u < end; u++) {
    int64_t row = u / per_row, col = (u % per_row) * job->chunk;
    int64_t n = MIN(job->chunk, job->inner - col);
    /* Outer coordinates of the row, from the innermost outer dim up. */
    int64_t oa = col * (p->sa[last] != 0), ob = col * (p->sb[last] != 0);
    int64_t rest = row;
    for (int d = last - 1; d >= 0; d--) {
      int64_t c = rest % p->shape[d];
      rest /= p->shape[d];
      oa += c * p->sa[d];
      ob += c * p->sb[d];
    }
    bin_run(job, oa, ob, row * job->inner + col, n);
  }
}

/* Runs a prepared job over every output element, on both cores when it is large. */
static void bin_execute(BinJob *job, int64_t numel, DsThreadPool *pool)
{
  if (numel == 0)
    return;
  job->inner = job->plan.shape[job->plan.ndim - 1];
  /* Long rows are cut into pieces so even a single row (same-shape operands) splits across
   * threads; short rows are whole units. The piece size keeps vector loops long. */
  job->chunk = MIN(job->inner, (int64_t)DS_CPU_PARALLEL_GRAIN / 4);
  if (job->chunk < 1)
    job->chunk = 1;
  int64_t per_row = (job->inner + job->chunk - 1) / job->chunk;
  int64_t units = (numel / job->inner) * per_row;
  int64_t grain = MAX(1, (int64_t)DS_CPU_PARALLEL_GRAIN / job->chunk);
  ds_parallel_for(pool, units, grain, bin_worker, job);
}

/* Sets up the loops for operand dtypes ta/tb and output dtype to. */
static DsStatus bin_select(BinJob *job, BinOp op, DsDType ta, DsDType tb, DsDType to)
{
  if (!ds_cpu_dtype_computable(ta) || !ds_cpu_dtype_computable(tb) || !ds_cpu_dtype_computable(to))
    return DS_STATUS_UNSUPPORTED;
  int ty = typed_index(to);
  job->typed = (ty >= 0 && ta == to && tb == to) ? &bin_loops[ty][op] : NULL;
  job->f64 = &bin_loops[TY_F64][op];
  job->ta = ta;
  job->tb = tb;
  job->to = to;
  job->ea = ds_dtype_size(ta);
  job->eb = ds_dtype_size(tb);
  job->eo = ds_dtype_size(to);
  return DS_STATUS_OK;
}

static DsStatus run_binary(const DsKernelCtx *ctx, BinOp op)
{
  if (ctx->n_inputs != 2 || ctx->n_outputs != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  DsTensor *out = &ctx->outputs[0];
  if (a->dtype != out->dtype || b->dtype != out->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  BinJob job;
  DsStatus st = bin_select(&job, op, a->dtype, b->dtype, out->dtype);
  if (st != DS_STATUS_OK)
    return st;
  if (!bcast_plan(a, b, out, &job.plan))
    return DS_STATUS_INVALID_ARGUMENT;
  job.a = a->data;
  job.b = b->data;
  job.o = out->data;
  bin_execute(&job, ds_tensor_numel(out), ctx->pool);
  return DS_STATUS_OK;
}

/* out = x (op) scalar, or scalar (op) x when `reverse`. The scalar takes the input's dtype
 * first (MXNet's DType(alpha)) unless the output dtype differs (an integer input with a
 * non-integer scalar computes in float64), where it stays a double. */
static DsStatus run_scalar_value(const DsKernelCtx *ctx, BinOp op, double scalar, bool reverse)
{
  if (ctx->n_inputs != 1 || ctx->n_outputs != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *x = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  int64_t n = ds_tensor_numel(out);
  if (ds_tensor_numel(x) != n)
    return DS_STATUS_INVALID_ARGUMENT;
  DsDType ts = x->dtype == out->dtype ? x->dtype : DS_DTYPE_FLOAT64;
  if (!ds_cpu_dtype_computable(ts))
    return DS_STATUS_UNSUPPORTED;
  double value = ts == DS_DTYPE_FLOAT64 ? scalar : round_trip(ts, scalar);
  /* The typed loops read the scalar in their own dtype, the generic path as a double. */
  union {
    double f64;
    float f32;
    int32_t i32;
    int64_t i64;
  } cell;
  if (typed_index(ts) < 0)
    ts = DS_DTYPE_FLOAT64;
  store_f64(ts, &cell, 0, 1, &value);

  BinJob job;
  DsStatus st = reverse ? bin_select(&job, op, ts, x->dtype, out->dtype)
                        : bin_select(&job, op, x->dtype, ts, out->dtype);
  if (st != DS_STATUS_OK)
    return st;
  job.plan.ndim = 1;
  job.plan.shape[0] = n;
  job.plan.sa[0] = reverse ? 0 : 1;
  job.plan.sb[0] = reverse ? 1 : 0;
  job.a = reverse ? (const char *)&cell : x->data;
  job.b = reverse ? x->data : (const char *)&cell;
  job.o = out->data;
  bin_execute(&job, n, ctx->pool);
  return DS_STATUS_OK;
}

static DsStatus run_scalar(const DsKernelCtx *ctx, BinOp op, bool reverse)
{
  const DsScalarParam *p = ctx->param;
  if (p == NULL)
    return DS_STATUS_INVALID_ARGUMENT;
  return run_scalar_value(ctx, op, p->scalar, reverse);
}

#define BINARY_KERNEL(NAME, OP)                                                                    \
  static DsStatus NAME(const DsKernelCtx *ctx)                                                     \
  {                                                                                                \
    return run_binary(ctx, OP);                                                                    \
  }
#define SCALAR_KERNEL(NAME, OP, REVERSE)                                                           \
  static DsStatus NAME(const DsKernelCtx *ctx)                                                     \
  {                                                                                                \
    return run_scalar(ctx, OP, REVERSE);                                                           \
  }

BINARY_KERNEL(k_add, BIN_ADD)
BINARY_KERNEL(k_sub, BIN_SUB)
BINARY_KERNEL(k_mul, BIN_MUL)
BINARY_KERNEL(k_div, BIN_DIV)
BINARY_KERNEL(k_maximum, BIN_MAX)
BINARY_KERNEL(k_minimum, BIN_MIN)
BINARY_KERNEL(k_power, BIN_POW)
BINARY_KERNEL(k_equal, BIN_EQ)
BINARY_KERNEL(k_not_equal, BIN_NE)
BINARY_KERNEL(k_greater, BIN_GT)
BINARY_KERNEL(k_greater_equal, BIN_GE)
BINARY_KERNEL(k_lesser, BIN_LT)
BINARY_KERNEL(k_lesser_equal, BIN_LE)
SCALAR_KERNEL(k_plus_scalar, BIN_ADD, false)
SCALAR_KERNEL(k_minus_scalar, BIN_SUB, false)
SCALAR_KERNEL(k_rminus_scalar, BIN_SUB, true)
SCALAR_KERNEL(k_mul_scalar, BIN_MUL, false)
SCALAR_KERNEL(k_div_scalar, BIN_DIV, false)
SCALAR_KERNEL(k_rdiv_scalar, BIN_DIV, true)
SCALAR_KERNEL(k_power_scalar, BIN_POW, false)
SCALAR_KERNEL(k_maximum_scalar, BIN_MAX, false)
SCALAR_KERNEL(k_minimum_scalar, BIN_MIN, false)
SCALAR_KERNEL(k_equal_scalar, BIN_EQ, false)
SCALAR_KERNEL(k_greater_scalar, BIN_GT, false)
SCALAR_KERNEL(k_lesser_scalar, BIN_LT, false)

/* _contrib_div_sqrt_dim: x / sqrt(last dim), the root taken in double as MXNet does. */
static DsStatus k_div_sqrt_dim(const DsKernelCtx *ctx)
{
  if (ctx->n_inputs != 1 || ctx->inputs[0].ndim < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *x = &ctx->inputs[0];
  return run_scalar_value(ctx, BIN_DIV, sqrt((double)x->shape[x->ndim - 1]), false);
}

/* ------------------------------------------------------------------------------------------ */
/* Unary math */

typedef enum {
  UN_RELU,
  UN_SIGMOID,
  UN_TANH,
  UN_EXP,
  UN_LOG,
  UN_SQRT,
  UN_RSQRT,
  UN_SQUARE,
  UN_ABS,
  UN_NEGATIVE,
  UN_RECIPROCAL,
  UN_ERF,
  UN_CLIP,
  UN_COUNT
} UnOp;

/* MXNet's sigmoid for float64, exactly its formula. */
#define SIGMOID_F64(x) (1.0 / (1.0 + exp(-(x))))

typedef struct {
  UnOp op;
  DsDType ti, to;
  const char *in;
  char *out;
  double lo, hi; /* clip bounds */
} UnJob;

#define DEFINE_UNARY(NAME, T, EXPR)                                                                \
  static void NAME(int64_t n, const T *restrict in, T *restrict out, T lo, T hi)                   \
  {                                                                                                \
    (void)lo;                                                                                      \
    (void)hi;                                                                                      \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T x = in[i];                                                                                 \
      out[i] = (EXPR);                                                                             \
    }                                                                                              \
  }

/* MXNet's mshadow_op definitions; clip keeps NaN, relu maps it to 0. */
#define DEFINE_UNARY_TYPE(P, T, EXP, LOG, SQRT, TANH, ERF, FABS, SIGMOID)                          \
  DEFINE_UNARY(P##_relu, T, x > 0 ? x : (T)0)                                                      \
  DEFINE_UNARY(P##_sigmoid, T, (T)1 / ((T)1 + EXP(-x)))                                            \
  DEFINE_UNARY(P##_tanh, T, TANH(x))                                                               \
  DEFINE_UNARY(P##_exp, T, EXP(x))                                                                 \
  DEFINE_UNARY(P##_log, T, LOG(x))                                                                 \
  DEFINE_UNARY(P##_sqrt, T, SQRT(x))                                                               \
  DEFINE_UNARY(P##_rsqrt, T, (T)1 / SQRT(x))                                                       \
  DEFINE_UNARY(P##_square, T, x *x)                                                                \
  DEFINE_UNARY(P##_abs, T, FABS(x))                                                                \
  DEFINE_UNARY(P##_negative, T, -x)                                                                \
  DEFINE_UNARY(P##_reciprocal, T, (T)1 / x)                                                        \
  DEFINE_UNARY(P##_erf, T, ERF(x))                                                                 \
  DEFINE_UNARY(P##_clip, T, x > hi ? hi : (x < lo ? lo : x))

DEFINE_UNARY_TYPE(f32, float, ds_vmath_exp, logf, sqrtf, ds_vmath_tanh, ds_vmath_erf, fabsf,
                  ds_vmath_sigmoid)
DEFINE_UNARY_TYPE(f64, double, exp, log, sqrt, tanh, erf, fabs, SIGMOID_F64)

typedef void (*UnLoopF32)(int64_t, const float *restrict, float *restrict, float, float);
typedef void (*UnLoopF64)(int64_t, const double *restrict, double *restrict, double, double);

#define UNARY_TABLE(P)                                                                             \
  {                                                                                                \
    P##_relu, P##_sigmoid, P##_tanh, P##_exp, P##_log, P##_sqrt, P##_rsqrt, P##_square, P##_abs,   \
        P##_negative, P##_reciprocal, P##_erf, P##_clip                                            \
  }

static const UnLoopF32 unary_f32[UN_COUNT] = UNARY_TABLE(f32);
static const UnLoopF64 unary_f64[UN_COUNT] = UNARY_TABLE(f64);
#undef UNARY_TABLE

static void unary_worker(void *ctx, int64_t begin, int64_t end)
{
  const UnJob *job = ctx;
  if (job->ti == DS_DTYPE_FLOAT32 && job->to == DS_DTYPE_FLOAT32) {
    unary_f32[job->op](end - begin, (const float *)job->in + begin, (float *)job->out + begin,
                       (float)job->lo, (float)job->hi);
    return;
  }
  if (job->ti == DS_DTYPE_FLOAT64 && job->to == DS_DTYPE_FLOAT64) {
    unary_f64[job->op](end - begin, (const double *)job->in + begin, (double *)job->out + begin,
                       job->lo, job->hi);
    return;
  }
  double x[BLOCK], y[BLOCK];
  for (int64_t i = begin; i < end; i += BLOCK) {
    int64_t m = MIN(BLOCK, end - i);
    load_f64(job->ti, job->in, i, 1, m, x);
    unary_f64[job->op](m, x, y, job->lo, job->hi);
    store_f64(job->to, job->out, i, m, y);
  }
}

static DsStatus run_unary_bounds(const DsKernelCtx *ctx, UnOp op, double lo, double hi)
{
  if (ctx->n_inputs != 1 || ctx->n_outputs != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (!ds_cpu_dtype_computable(in->dtype) || !ds_cpu_dtype_computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(in);
  if (n != ds_tensor_numel(out) || in->dtype != out->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  /* The bounds take the data's dtype, as MXNet compares against DType(a_min). */
  if (op == UN_CLIP && in->dtype != DS_DTYPE_FLOAT64) {
    lo = round_trip(in->dtype, lo);
    hi = round_trip(in->dtype, hi);
  }
  UnJob job = {op, in->dtype, out->dtype, in->data, out->data, lo, hi};
  ds_parallel_for(ctx->pool, n, DS_CPU_PARALLEL_GRAIN, unary_worker, &job);
  return DS_STATUS_OK;
}

#define UNARY_KERNEL(NAME, OP)                                                                     \
  static DsStatus NAME(const DsKernelCtx *ctx)                                                     \
  {                                                                                                \
    return run_unary_bounds(ctx, OP, 0, 0);                                                        \
  }

UNARY_KERNEL(k_relu, UN_RELU)
UNARY_KERNEL(k_sigmoid, UN_SIGMOID)
UNARY_KERNEL(k_tanh, UN_TANH)
UNARY_KERNEL(k_exp, UN_EXP)
UNARY_KERNEL(k_log, UN_LOG)
UNARY_KERNEL(k_sqrt, UN_SQRT)
UNARY_KERNEL(k_rsqrt, UN_RSQRT)
UNARY_KERNEL(k_square, UN_SQUARE)
UNARY_KERNEL(k_abs, UN_ABS)
UNARY_KERNEL(k_negative, UN_NEGATIVE)
UNARY_KERNEL(k_reciprocal, UN_RECIPROCAL)
UNARY_KERNEL(k_erf, UN_ERF)

static DsStatus k_clip(const DsKernelCtx *ctx)
{
  const DsClipParam *p = ctx->param;
  if (p == NULL)
    return DS_STATUS_INVALID_ARGUMENT;
  return run_unary_bounds(ctx, UN_CLIP, p->a_min, p->a_max);
}

/* ------------------------------------------------------------------------------------------ */
/* Copies and fills */

typedef struct {
  const char *src;
  char *dst;
} CopyJob;

static void copy_worker(void *ctx, int64_t begin, int64_t end)
{
  const CopyJob *job = ctx;
  memcpy(job->dst + begin, job->src + begin, (size_t)(end - begin));
}

/* _copy and BlockGrad: the bytes pass through (nothing to do when the planner aliased them). */
static DsStatus k_copy(const DsKernelCtx *ctx)
{
  if (ctx->n_inputs != 1 || ctx->n_outputs != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->dtype != out->dtype || ds_tensor_numel(in) != ds_tensor_numel(out))
    return DS_STATUS_INVALID_ARGUMENT;
  if (in->data == out->data)
    return DS_STATUS_OK;
  CopyJob job = {in->data, out->data};
  /* Bytes move faster than elements compute: a larger grain. */
  ds_parallel_for(ctx->pool, (int64_t)ds_tensor_nbytes(out), (int64_t)DS_CPU_PARALLEL_GRAIN * 16,
                  copy_worker, &job);
  return DS_STATUS_OK;
}

typedef struct {
  char *out;
  size_t es;
  uint64_t cell; /* the value's bytes in the output dtype */
} FillJob;

/* Repeats the job's element over [begin, end): typed stores of its size so GCC vectorises. */
static void fill_worker(void *ctx, int64_t begin, int64_t end)
{
  const FillJob *job = ctx;
#define FILL(T)                                                                                    \
  {                                                                                                \
    T v, *restrict d = (T *)job->out + begin;                                                      \
    memcpy(&v, &job->cell, sizeof v);                                                              \
    for (int64_t i = 0; i < end - begin; i++)                                                      \
      d[i] = v;                                                                                    \
    break;                                                                                         \
  }
  switch (job->es) {
  case 1:
    FILL(uint8_t)
  case 2:
    FILL(uint16_t)
  case 4:
    FILL(uint32_t)
  default:
    FILL(uint64_t)
  }
#undef FILL
}

/* zeros_like, ones_like: the output filled with `value` in its dtype. */
static DsStatus run_fill_like(const DsKernelCtx *ctx, double value)
{
  if (ctx->n_outputs != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  DsTensor *out = &ctx->outputs[0];
  if (!ds_cpu_dtype_computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  FillJob job = {.out = out->data, .es = ds_dtype_size(out->dtype), .cell = 0};
  store_f64(out->dtype, &job.cell, 0, 1, &value);
  ds_parallel_for(ctx->pool, ds_tensor_numel(out), (int64_t)DS_CPU_PARALLEL_GRAIN * 4, fill_worker,
                  &job);
  return DS_STATUS_OK;
}

static DsStatus k_zeros_like(const DsKernelCtx *ctx)
{
  return run_fill_like(ctx, 0.0);
}
static DsStatus k_ones_like(const DsKernelCtx *ctx)
{
  return run_fill_like(ctx, 1.0);
}

/* ------------------------------------------------------------------------------------------ */
/* where */

typedef struct {
  DsDType tc;
  size_t es;
  const char *cond, *x, *y;
  char *out;
  int64_t row; /* elements per condition flag: 1, or a row of x for a 1-D condition */
} WhereJob;

/* Condition values to 0/1 bytes. */
static void cond_mask(DsDType t, const void *base, int64_t offset, int64_t n,
                      uint8_t *restrict mask)
{
#define MASK_CASE(DT, T)                                                                           \
  case DT: {                                                                                       \
    const T *restrict s = (const T *)base + offset;                                                \
    for (int64_t i = 0; i < n; i++)                                                                \
      mask[i] = s[i] != 0;                                                                         \
    break;                                                                                         \
  }
  switch (t) {
    MASK_CASE(DS_DTYPE_FLOAT32, float)
    MASK_CASE(DS_DTYPE_FLOAT64, double)
    MASK_CASE(DS_DTYPE_INT32, int32_t)
    MASK_CASE(DS_DTYPE_INT64, int64_t)
    MASK_CASE(DS_DTYPE_INT8, int8_t)
    MASK_CASE(DS_DTYPE_UINT8, uint8_t)
    MASK_CASE(DS_DTYPE_BOOL, uint8_t)
  default:
    memset(mask, 0, (size_t)n);
    break;
  }
#undef MASK_CASE
}

#define DEFINE_SELECT(NAME, T)                                                                     \
  static void NAME(int64_t n, const uint8_t *restrict m, const void *px, const void *py, void *po) \
  {                                                                                                \
    const T *restrict x = px;                                                                      \
    const T *restrict y = py;                                                                      \
    T *restrict o = po;                                                                            \
    for (int64_t i = 0; i < n; i++)                                                                \
      o[i] = m[i] ? x[i] : y[i];                                                                   \
  }
DEFINE_SELECT(select_1, uint8_t)
DEFINE_SELECT(select_2, uint16_t)
DEFINE_SELECT(select_4, uint32_t)
DEFINE_SELECT(select_8, uint64_t)

static void where_worker(void *ctx, int64_t begin, int64_t end)
{
  const WhereJob *job = ctx;
  uint8_t mask[BLOCK];
  if (job->row > 1) {
    /* 1-D condition: whole rows come from x or y. */
    for (int64_t r = begin; r < end; r++) {
      cond_mask(job->tc, job->cond, r, 1, mask);
      size_t bytes = (size_t)job->row * job->es, off = (size_t)r * bytes;
      memcpy(job->out + off, (mask[0] ? job->x : job->y) + off, bytes);
    }
    return;
  }
  void (*sel)(int64_t, const uint8_t *restrict, const void *, const void *, void *) =
      job->es == 1   ? select_1
      : job->es == 2 ? select_2
      : job->es == 4 ? select_4
                     : select_8;
  for (int64_t i = begin; i < end; i += BLOCK) {
    int64_t m = MIN(BLOCK, end - i);
    size_t off = (size_t)i * job->es;
    cond_mask(job->tc, job->cond, i, m, mask);
    sel(m, mask, job->x + off, job->y + off, job->out + off);
  }
}

static DsStatus k_where(const DsKernelCtx *ctx)
{
  if (ctx->n_inputs != 3 || ctx->n_outputs != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *c = &ctx->inputs[0], *x = &ctx->inputs[1], *y = &ctx->inputs[2];
  DsTensor *out = &ctx->outputs[0];
  if (x->dtype != out->dtype || y->dtype != out->dtype || !ds_dtype_is_valid(c->dtype))
    return DS_STATUS_INVALID_ARGUMENT;
  if (c->dtype == DS_DTYPE_FLOAT16 || out->dtype == DS_DTYPE_FLOAT16)
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(out);
  if (ds_tensor_numel(x) != n || ds_tensor_numel(y) != n)
    return DS_STATUS_INVALID_ARGUMENT;
  WhereJob job = {c->dtype, ds_dtype_size(out->dtype), c->data, x->data, y->data, out->data, 1};
  int64_t nc = ds_tensor_numel(c);
  if (nc == n && (c->ndim == out->ndim || n == 0)) {
    ds_parallel_for(ctx->pool, n, DS_CPU_PARALLEL_GRAIN, where_worker, &job);
    return DS_STATUS_OK;
  }
  if (c->ndim == 1 && out->ndim >= 1 && c->shape[0] == out->shape[0]) {
    if (nc == 0)
      return DS_STATUS_OK;
    job.row = n / nc;
    if (job.row == 1) {
      ds_parallel_for(ctx->pool, n, DS_CPU_PARALLEL_GRAIN, where_worker, &job);
      return DS_STATUS_OK;
    }
    ds_parallel_for(ctx->pool, nc, MAX(1, DS_CPU_PARALLEL_GRAIN / job.row), where_worker, &job);
    return DS_STATUS_OK;
  }
  return DS_STATUS_INVALID_ARGUMENT;
}

/* ------------------------------------------------------------------------------------------ */
/* add_n */

typedef struct {
  const DsTensor *inputs;
  int n_inputs;
  DsTensor *out;
} AddNJob;

static void add_n_worker(void *ctx, int64_t begin, int64_t end)
{
  const AddNJob *job = ctx;
  DsDType t = job->out->dtype;
  int64_t n = end - begin;
  if (t == DS_DTYPE_FLOAT32) {
    float *restrict o = (float *)job->out->data + begin;
    const float *restrict a = (const float *)job->inputs[0].data + begin;
    if (job->n_inputs == 1) {
      memmove(o, a, (size_t)n * sizeof(float));
      return;
    }
    const float *restrict b = (const float *)job->inputs[1].data + begin;
    for (int64_t i = 0; i < n; i++)
      o[i] = a[i] + b[i];
    for (int k = 2; k < job->n_inputs; k++) {
      const float *restrict c = (const float *)job->inputs[k].data + begin;
      for (int64_t i = 0; i < n; i++)
        o[i] += c[i];
    }
    return;
  }
  double acc[BLOCK], x[BLOCK];
  for (int64_t i = begin; i < end; i += BLOCK) {
    int64_t m = MIN(BLOCK, end - i);
    load_f64(t, job->inputs[0].data, i, 1, m, acc);
    for (int k = 1; k < job->n_inputs; k++) {
      load_f64(t, job->inputs[k].data, i, 1, m, x);
      for (int64_t j = 0; j < m; j++)
        acc[j] += x[j];
    }
    store_f64(t, job->out->data, i, m, acc);
  }
}

static DsStatus k_add_n(const DsKernelCtx *ctx)
{
  if (ctx->n_inputs < 1 || ctx->n_outputs != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  DsTensor *out = &ctx->outputs[0];
  if (!ds_cpu_dtype_computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(out);
  for (int k = 0; k < ctx->n_inputs; k++)
    if (ctx->inputs[k].dtype != out->dtype || ds_tensor_numel(&ctx->inputs[k]) != n)
      return DS_STATUS_INVALID_ARGUMENT;
  AddNJob job = {ctx->inputs, ctx->n_inputs, out};
  ds_parallel_for(ctx->pool, n, DS_CPU_PARALLEL_GRAIN, add_n_worker, &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */

void ds_cpu_elemwise_register(DsKernel *table)
{
  table[DS_OP_ELEMWISE_ADD] = (DsKernel){k_add, NULL};
  table[DS_OP_ELEMWISE_SUB] = (DsKernel){k_sub, NULL};
  table[DS_OP_ELEMWISE_MUL] = (DsKernel){k_mul, NULL};
  table[DS_OP_ELEMWISE_DIV] = (DsKernel){k_div, NULL};
  table[DS_OP_BROADCAST_ADD] = (DsKernel){k_add, NULL};
  table[DS_OP_BROADCAST_SUB] = (DsKernel){k_sub, NULL};
  table[DS_OP_BROADCAST_MUL] = (DsKernel){k_mul, NULL};
  table[DS_OP_BROADCAST_DIV] = (DsKernel){k_div, NULL};
  table[DS_OP_BROADCAST_MAXIMUM] = (DsKernel){k_maximum, NULL};
  table[DS_OP_BROADCAST_MINIMUM] = (DsKernel){k_minimum, NULL};
  table[DS_OP_BROADCAST_POWER] = (DsKernel){k_power, NULL};
  table[DS_OP_BROADCAST_EQUAL] = (DsKernel){k_equal, NULL};
  table[DS_OP_BROADCAST_NOT_EQUAL] = (DsKernel){k_not_equal, NULL};
  table[DS_OP_BROADCAST_GREATER] = (DsKernel){k_greater, NULL};
  table[DS_OP_BROADCAST_GREATER_EQUAL] = (DsKernel){k_greater_equal, NULL};
  table[DS_OP_BROADCAST_LESSER] = (DsKernel){k_lesser, NULL};
  table[DS_OP_BROADCAST_LESSER_EQUAL] = (DsKernel){k_lesser_equal, NULL};
  table[DS_OP_PLUS_SCALAR] = (DsKernel){k_plus_scalar, NULL};
  table[DS_OP_MINUS_SCALAR] = (DsKernel){k_minus_scalar, NULL};
  table[DS_OP_RMINUS_SCALAR] = (DsKernel){k_rminus_scalar, NULL};
  table[DS_OP_MUL_SCALAR] = (DsKernel){k_mul_scalar, NULL};
  table[DS_OP_DIV_SCALAR] = (DsKernel){k_div_scalar, NULL};
  table[DS_OP_RDIV_SCALAR] = (DsKernel){k_rdiv_scalar, NULL};
  table[DS_OP_POWER_SCALAR] = (DsKernel){k_power_scalar, NULL};
  table[DS_OP_MAXIMUM_SCALAR] = (DsKernel){k_maximum_scalar, NULL};
  table[DS_OP_MINIMUM_SCALAR] = (DsKernel){k_minimum_scalar, NULL};
  table[DS_OP_EQUAL_SCALAR] = (DsKernel){k_equal_scalar, NULL};
  table[DS_OP_GREATER_SCALAR] = (DsKernel){k_greater_scalar, NULL};
  table[DS_OP_LESSER_SCALAR] = (DsKernel){k_lesser_scalar, NULL};
  table[DS_OP_RELU] = (DsKernel){k_relu, NULL};
  table[DS_OP_SIGMOID] = (DsKernel){k_sigmoid, NULL};
  table[DS_OP_TANH] = (DsKernel){k_tanh, NULL};
  table[DS_OP_EXP] = (DsKernel){k_exp, NULL};
  table[DS_OP_LOG] = (DsKernel){k_log, NULL};
  table[DS_OP_SQRT] = (DsKernel){k_sqrt, NULL};
  table[DS_OP_RSQRT] = (DsKernel){k_rsqrt, NULL};
  table[DS_OP_SQUARE] = (DsKernel){k_square, NULL};
  table[DS_OP_ABS] = (DsKernel){k_abs, NULL};
  table[DS_OP_NEGATIVE] = (DsKernel){k_negative, NULL};
  table[DS_OP_RECIPROCAL] = (DsKernel){k_reciprocal, NULL};
  table[DS_OP_ERF] = (DsKernel){k_erf, NULL};
  table[DS_OP_CLIP] = (DsKernel){k_clip, NULL};
  table[DS_OP_IDENTITY] = (DsKernel){k_copy, NULL};
  table[DS_OP_BLOCK_GRAD] = (DsKernel){k_copy, NULL};
  table[DS_OP_ZEROS_LIKE] = (DsKernel){k_zeros_like, NULL};
  table[DS_OP_ONES_LIKE] = (DsKernel){k_ones_like, NULL};
  table[DS_OP_WHERE] = (DsKernel){k_where, NULL};
  table[DS_OP_ADD_N] = (DsKernel){k_add_n, NULL};
  table[DS_OP_DIV_SQRT_DIM] = (DsKernel){k_div_sqrt_dim, NULL};
}
