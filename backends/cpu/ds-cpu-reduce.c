/* ds-cpu-reduce.c: the CPU's reductions, one engine for them all: MXNet's sum, mean, max, min,
 * prod, nansum, nanprod and norm, the NumPy forms (_npi_sum, _npi_mean, _npi_max, _npi_min,
 * _npi_prod), the norms and logarithms (sum_square, l1_norm, l2_norm, log_sum, log_sum_exp),
 * _contrib_dynamic_sum, and the index reductions (_npi_argmax, _npi_argmin, and MXNet's argmax,
 * argmin and argmax_channel).
 */

/* The folds' log_sum_exp and the extremes' NaN tests are selects GCC keeps as branches under
 * its default -ftrapping-math; nothing here enables traps (see ds-cpu-elemwise.c). */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include <math.h>
#include <string.h>

#include "ds-cpu.h"
#include "ds-cpu-blocks.h"
#include "ds-geometry-reduce.h"
#include "ds-math-reduce.h"

/* ------------------------------------------------------------------------------------------ */
/* The engine
 *
 * The reductions are core/ds-math-reduce.h's (DsMathReduceFn). The input's dims are collapsed
 * (size-1 dims dropped, neighbours of the same role merged) into kept and reduced dims. When
 * the innermost dim is kept, a work unit is a block of output columns folded over every
 * reduced position, contiguous loads both ways; when it is reduced, a unit is one output
 * element folding contiguous runs, and a few long runs (a whole-array sum) are each cut into
 * RED_PARTS pieces so that every thread takes some. Floats (and the integer norms and logs)
 * accumulate in double, except float32 sums and extremes over runs, which fold in float a
 * block at a time (fold_run_f32_blocks), and float32 extremes over columns, exact in float;
 * integer sums, products and extremes accumulate in int64 (wrapping as the hardware does), so
 * every integer dtype is exact where NumPy's own result is. The order of the folds depends on
 * the shapes only, never on the thread count. */

/* Pieces a long run is cut into: a fixed number, so the sum's order does not depend on the
 * thread count. Runs are cut when they are one per output, at most RED_CUT_OUTPUTS outputs,
 * each at least DS_CPU_PARALLEL_GRAIN long: fewer outputs than threads would share. */
#define RED_PARTS 16
#define RED_CUT_OUTPUTS 8

typedef struct {
  DsMathReduceFn kind;
  DsMathReduceFn pass; /* the fold being run: log_sum_exp first finds its maxima (MAX) */
  DsDType t;
  DsDType out_t;       /* the output's dtype: the input's, except for norm's out_dtype */
  bool int_acc;
  const char *in;
  char *out;
  DsGeomReduce g;      /* kept and reduced dims, as every backend collapses them */
  bool columns;        /* the innermost input dim is kept */
  int64_t cols;        /* its length when `columns`, else 1 */
  int64_t chunk;       /* output columns per work unit when `columns` */
  double *acc;         /* one accumulator per output (workspace), or NULL */
  double *shift;       /* log_sum_exp: each output's maximum (workspace) */
  double *part_acc;    /* the pieces' accumulators, RED_PARTS per output, when runs are cut */
  int64_t *part_iacc;  /* the same for integer accumulation */
} RedJob;

static void load_i64(DsDType t, const void *base, int64_t offset, int64_t n, int64_t *restrict dst)
{
#define LOAD_I64_CASE(DT, T)                                                                       \
  case DT: {                                                                                       \
    const T *s = (const T *)base + offset;                                                         \
    for (int64_t i = 0; i < n; i++)                                                                \
      dst[i] = (int64_t)s[i];                                                                      \
    break;                                                                                         \
  }
  switch (t) {
    LOAD_I64_CASE(DS_DTYPE_INT32, int32_t)
    LOAD_I64_CASE(DS_DTYPE_INT64, int64_t)
    LOAD_I64_CASE(DS_DTYPE_INT8, int8_t)
    LOAD_I64_CASE(DS_DTYPE_UINT8, uint8_t)
  case DS_DTYPE_BOOL: {
    const uint8_t *s = (const uint8_t *)base + offset;
    for (int64_t i = 0; i < n; i++)
      dst[i] = s[i] != 0;
    break;
  }
  default:
    break;
  }
#undef LOAD_I64_CASE
}

/* Element `i` of an integer tensor set to v, wrapped to the dtype's width. */
static void store_i64(DsDType t, void *base, int64_t i, int64_t v)
{
  switch (t) {
  case DS_DTYPE_INT64:
    ((int64_t *)base)[i] = v;
    break;
  case DS_DTYPE_INT32:
    ((int32_t *)base)[i] = (int32_t)(uint32_t)(uint64_t)v;
    break;
  case DS_DTYPE_INT8:
    ((int8_t *)base)[i] = (int8_t)(uint8_t)(uint64_t)v;
    break;
  case DS_DTYPE_UINT8:
    ((uint8_t *)base)[i] = (uint8_t)(uint64_t)v;
    break;
  case DS_DTYPE_BOOL:
    ((uint8_t *)base)[i] = v != 0;
    break;
  default:
    break;
  }
}

/* The table's primitives: the folds run in double, or in int64 wrapping as the hardware
 * does (integer data, for the reductions whose INTS is EXACT). */
#define DS_M_ADD(x, y)  ((x) + (y))
#define DS_M_MUL(x, y)  ((x) * (y))
#define DS_M_DIV(x, y)  ((x) / (y))
#define DS_M_ABS        fabs
#define DS_M_LOWEST     (-INFINITY)
#define DS_M_HIGHEST    INFINITY
#define DS_M_SQRT       sqrt
#define DS_M_LOG        log
#define DS_M_EXP        exp
#define DS_M_ISFINITE   isfinite

static double red_identity_f64(DsMathReduceFn k)
{
  typedef double T;
  switch (k) {
#define IDENTITY_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH)                                    \
  case DS_MATH_RED_##ID:                                                                           \
    return IDENTITY;
    DS_MATH_REDUCE(IDENTITY_CASE)
#undef IDENTITY_CASE
  default:
    return 0.0;
  }
}

/* The folds in double, read straight from float32 or float64 data (or from a block of any
 * dtype converted to double): acc[i] (op)= x[i] over n columns, and one accumulator over a
 * contiguous run. Eight independent lanes keep a run's adds from waiting on each other (and let
 * GCC vectorise them) without reassociation flags; they are merged in a fixed order, so
 * results do not depend on threads (log_sum_exp, whose cost is its exp, folds one term at a
 * time). `shift` is log_sum_exp's maximum (per column, or the run's); the other folds never
 * read it. */
#define FOLD_COLS(FOLD)                                                                            \
  for (int64_t i = 0; i < n; i++) {                                                                \
    double v = x[i], a = acc[i];                                                                   \
    const double s = shift != NULL ? shift[i] : 0.0;                                               \
    (void)s;                                                                                       \
    acc[i] = (FOLD);                                                                               \
  }                                                                                                \
  break;

/* Folds the n elements of x into the double `acc` through LANES accumulators of type LT, each
 * folding every LANES-th element, then merged into acc in order. */
#define FOLD_IN_LANES(LT, LANES, IDENTITY, FOLD, MERGE, x, n)                                      \
  {                                                                                                \
    LT l[LANES];                                                                                   \
    for (int k = 0; k < LANES; k++) {                                                              \
      typedef LT T;                                                                                \
      l[k] = (T)(IDENTITY);                                                                        \
    }                                                                                              \
    int64_t i = 0;                                                                                 \
    for (; i + LANES <= (n); i += LANES)                                                           \
      for (int k = 0; k < LANES; k++) {                                                            \
        LT v = (x)[i + k], a = l[k];                                                               \
        l[k] = (FOLD);                                                                             \
      }                                                                                            \
    for (; i < (n); i++) {                                                                         \
      LT v = (x)[i], a = l[0];                                                                     \
      l[0] = (FOLD);                                                                               \
    }                                                                                              \
    for (int k = 0; k < LANES; k++) {                                                              \
      double a = acc, b = l[k];                                                                    \
      acc = (MERGE);                                                                               \
    }                                                                                              \
  }

#define FOLD_LANES(IDENTITY, FOLD, MERGE)                                                          \
  FOLD_IN_LANES(double, 8, IDENTITY, FOLD, MERGE, x, n)                                            \
  return acc;

#define FOLD_ONE_BY_ONE(FOLD)                                                                      \
  for (int64_t i = 0; i < n; i++) {                                                                \
    double v = x[i], a = acc;                                                                      \
    acc = (FOLD);                                                                                  \
  }                                                                                                \
  return acc;

#define COLS_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH)                                        \
  case DS_MATH_RED_##ID:                                                                           \
    FOLD_COLS(FOLD)
#define RUN_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH)                                         \
  case DS_MATH_RED_##ID:                                                                           \
    if (DS_MATH_RED_##ID == DS_MATH_RED_LOGSUMEXP) {                                               \
      FOLD_ONE_BY_ONE(FOLD)                                                                        \
    }                                                                                              \
    FOLD_LANES(IDENTITY, FOLD, MERGE)

#define DEFINE_FOLDS(P, TYPE)                                                                      \
  static void fold_cols_##P(DsMathReduceFn k, double *restrict acc, const TYPE *restrict x,        \
                            int64_t n, const double *restrict shift)                               \
  {                                                                                                \
    switch (k) {                                                                                   \
      DS_MATH_REDUCE(COLS_CASE)                                                                    \
    default:                                                                                       \
      break;                                                                                       \
    }                                                                                              \
  }                                                                                                \
  static double fold_run_##P(DsMathReduceFn k, double acc, const TYPE *restrict x, int64_t n,      \
                             double shift)                                                         \
  {                                                                                                \
    typedef double T;                                                                              \
    const double s = shift;                                                                        \
    (void)s;                                                                                       \
    switch (k) {                                                                                   \
      DS_MATH_REDUCE(RUN_CASE)                                                                     \
    default:                                                                                       \
      break;                                                                                       \
    }                                                                                              \
    return acc;                                                                                    \
  }
DEFINE_FOLDS(f64, double)
DEFINE_FOLDS(f32, float)
#undef DEFINE_FOLDS
#undef COLS_CASE
#undef RUN_CASE
#undef FOLD_COLS
#undef FOLD_LANES
#undef FOLD_ONE_BY_ONE

/* float32 runs of the sums and extremes at float32 speed (twice the lanes of double, no
 * conversions): sixteen float lanes fold a block of at most F32_BLOCK elements, and each
 * block joins the double accumulator. The extremes are exact in any type; a sum's rounding
 * stays that of 256-element pieces (each lane's share of a block), however long the run. */
#define F32_BLOCK 4096

/* acc[i] (op)= x[i] over n columns, in float. */
static void fold_cols_f32_in_float(DsMathReduceFn k, float *restrict acc, const float *restrict x,
                                   int64_t n)
{
#define F32_COLS_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH)                                    \
  case DS_MATH_RED_##ID:                                                                           \
    for (int64_t i = 0; i < n; i++) {                                                              \
      typedef float T;                                                                             \
      float v = x[i], a = acc[i];                                                                  \
      acc[i] = (T)(FOLD);                                                                          \
    }                                                                                              \
    return;
  const float s = 0.0f; /* log_sum_exp's shift: that reduction never folds here */
  (void)s;
  switch (k) {
    DS_MATH_REDUCE(F32_COLS_CASE)
  default:
    return;
  }
#undef F32_COLS_CASE
}

static bool folds_in_float(DsMathReduceFn k)
{
  return k == DS_MATH_RED_SUM || k == DS_MATH_RED_MEAN || k == DS_MATH_RED_MAX ||
         k == DS_MATH_RED_MIN;
}

static double fold_run_f32_blocks(DsMathReduceFn k, double acc, const float *restrict x,
                                  int64_t n)
{
#define F32_BLOCK_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH)                                   \
  case DS_MATH_RED_##ID:                                                                           \
    for (int64_t start = 0; start < n; start += F32_BLOCK) {                                       \
      const float *restrict xb = x + start;                                                        \
      int64_t m = MIN(F32_BLOCK, n - start);                                                       \
      FOLD_IN_LANES(float, 16, IDENTITY, FOLD, MERGE, xb, m)                                       \
    }                                                                                              \
    return acc;
  const float s = 0.0f; /* log_sum_exp's shift: that reduction never folds here */
  (void)s;
  switch (k) {
    DS_MATH_REDUCE(F32_BLOCK_CASE)
  default:
    return acc;
  }
#undef F32_BLOCK_CASE
}
#undef FOLD_IN_LANES

/* Two partial accumulators joined, in double. */
static double red_merge_f64(DsMathReduceFn k, double a, double b)
{
  switch (k) {
#define MERGE_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH)                                       \
  case DS_MATH_RED_##ID:                                                                           \
    return MERGE;
    DS_MATH_REDUCE(MERGE_CASE)
#undef MERGE_CASE
  default:
    return a;
  }
}

/* The finished result in double (floats, and the integer norms and logarithms). */
static double red_finish_f64(DsMathReduceFn k, double a, int64_t n, double shift)
{
  typedef double T;
  const double s = shift;
  (void)s;
  switch (k) {
#define FINISH_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH)                                      \
  case DS_MATH_RED_##ID:                                                                           \
    return FINISH;
    DS_MATH_REDUCE(FINISH_CASE)
#undef FINISH_CASE
  default:
    return a;
  }
}

/* Integer accumulation, wrapping through uint64. */
#undef DS_M_ADD
#undef DS_M_MUL
#undef DS_M_DIV
#undef DS_M_ABS
#undef DS_M_LOWEST
#undef DS_M_HIGHEST
#define DS_M_ADD(x, y) ((int64_t)((uint64_t)(x) + (uint64_t)(y)))
#define DS_M_MUL(x, y) ((int64_t)((uint64_t)(x) * (uint64_t)(y)))
#define DS_M_DIV       ds_cpu_div_i64
#define DS_M_ABS(x)    ((int64_t)((x) < 0 ? 0u - (uint64_t)(x) : (uint64_t)(x)))
#define DS_M_LOWEST    INT64_MIN
#define DS_M_HIGHEST   INT64_MAX

/* The reductions whose INTS is EXACT, on int64; the others never accumulate in integers. */
#define INT_CASE_EXACT(ID, BODY)                                                                   \
  case DS_MATH_RED_##ID:                                                                           \
    return BODY;
#define INT_CASE_NONE(ID, BODY)

static int64_t red_identity_i64(DsMathReduceFn k)
{
  typedef int64_t T;
  switch (k) {
#define IDENTITY_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH) INT_CASE_##INTS(ID, IDENTITY)
    DS_MATH_REDUCE(IDENTITY_CASE)
#undef IDENTITY_CASE
  default:
    return 0;
  }
}

static inline int64_t fold_i64(DsMathReduceFn k, int64_t a, int64_t v)
{
  switch (k) {
#define FOLD_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH) INT_CASE_##INTS(ID, FOLD)
    DS_MATH_REDUCE(FOLD_CASE)
#undef FOLD_CASE
  default:
    return a;
  }
}

static int64_t red_merge_i64(DsMathReduceFn k, int64_t a, int64_t b)
{
  switch (k) {
#define MERGE_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH) INT_CASE_##INTS(ID, MERGE)
    DS_MATH_REDUCE(MERGE_CASE)
#undef MERGE_CASE
  default:
    return a;
  }
}

static int64_t red_finish_i64(DsMathReduceFn k, int64_t a, int64_t n)
{
  typedef int64_t T;
  switch (k) {
#define FINISH_CASE(ID, INTS, IDENTITY, FOLD, MERGE, FINISH) INT_CASE_##INTS(ID, FINISH)
    DS_MATH_REDUCE(FINISH_CASE)
#undef FINISH_CASE
  default:
    return a;
  }
}
#undef INT_CASE_EXACT
#undef INT_CASE_NONE
#undef DS_M_ADD
#undef DS_M_MUL
#undef DS_M_DIV
#undef DS_M_ABS
#undef DS_M_LOWEST
#undef DS_M_HIGHEST
#undef DS_M_SQRT
#undef DS_M_LOG
#undef DS_M_EXP
#undef DS_M_ISFINITE

/* Input offset of output row `row` (the kept dims but the innermost column dim), or of output
 * element `row` when the innermost dim is reduced. */
static int64_t red_kept_offset(const RedJob *job, int64_t row)
{
  int64_t off = 0;
  int last = job->columns ? job->g.nk - 2 : job->g.nk - 1;
  for (int d = last; d >= 0; d--) {
    off += (row % job->g.kshape[d]) * job->g.kstride[d];
    row /= job->g.kshape[d];
  }
  return off;
}

/* Input offset of reduced position `r` over the reduced dims [0, nr_used). */
static int64_t red_reduced_offset(const RedJob *job, int64_t r, int nr_used)
{
  int64_t off = 0;
  for (int d = nr_used - 1; d >= 0; d--) {
    off += (r % job->g.rshape[d]) * job->g.rstride[d];
    r /= job->g.rshape[d];
  }
  return off;
}

/* Finishes outputs [o, o + n) from their accumulators (log_sum_exp's first pass keeps its
 * maxima instead). */
static void red_store(const RedJob *job, int64_t o, const double *acc_f, const int64_t *acc_i,
                      int64_t n)
{
  if (job->pass == DS_MATH_RED_MAX && job->kind == DS_MATH_RED_LOGSUMEXP) {
    memmove(job->shift + o, acc_f, (size_t)n * sizeof(double));
    return;
  }
  if (acc_i != NULL) {
    /* Integer results wrap to the output's width, as the hardware's own sums do (and int64
     * ones would lose digits through a double). */
    for (int64_t i = 0; i < n; i++)
      store_i64(job->out_t, job->out, o + i, red_finish_i64(job->kind, acc_i[i], job->g.count));
    return;
  }
  double y[DS_CPU_BLOCK];
  for (int64_t done = 0; done < n; done += DS_CPU_BLOCK) {
    int64_t m = MIN(DS_CPU_BLOCK, n - done);
    for (int64_t i = 0; i < m; i++) {
      int64_t k = done + i;
      y[i] = red_finish_f64(job->kind, acc_f[k], job->g.count,
                            job->shift ? job->shift[o + k] : 0.0);
    }
    ds_cpu_store_block_f64(job->out_t, job->out, o + done, m, y);
  }
}

/* Folds the m columns at input offset `off` into the accumulators. */
static void red_fold_cols(const RedJob *job, int64_t off, int64_t o, int64_t m, double *acc,
                          int64_t *iacc)
{
  const double *shift = job->pass == DS_MATH_RED_LOGSUMEXP ? job->shift + o : NULL;
  if (job->t == DS_DTYPE_FLOAT32) {
    fold_cols_f32(job->pass, acc, (const float *)job->in + off, m, shift);
    return;
  }
  if (job->t == DS_DTYPE_FLOAT64) {
    fold_cols_f64(job->pass, acc, (const double *)job->in + off, m, shift);
    return;
  }
  double x[DS_CPU_BLOCK];
  int64_t ix[DS_CPU_BLOCK];
  for (int64_t done = 0; done < m; done += DS_CPU_BLOCK) {
    int64_t b = MIN(DS_CPU_BLOCK, m - done);
    if (job->int_acc) {
      load_i64(job->t, job->in, off + done, b, ix);
      for (int64_t i = 0; i < b; i++)
        iacc[done + i] = fold_i64(job->pass, iacc[done + i], ix[i]);
    } else {
      ds_cpu_load_block_f64(job->t, job->in, off + done, 1, b, x);
      fold_cols_f64(job->pass, acc + done, x, b, shift != NULL ? shift + done : NULL);
    }
  }
}

/* Units of output columns: (row, chunk of `chunk` columns), each folding its columns over every
 * reduced position. The accumulators are the workspace's (one per output), or a stack block
 * when there is none (chunk is then at most DS_CPU_BLOCK). */
static void red_cols_worker(void *ctx, int64_t begin, int64_t end)
{
  const RedJob *job = ctx;
  int64_t chunks = (job->cols + job->chunk - 1) / job->chunk;
  double stack_acc[DS_CPU_BLOCK];
  int64_t stack_iacc[DS_CPU_BLOCK];
  /* float32 extremes are exact in float: they fold straight into the output. */
  bool f32_extreme = job->t == DS_DTYPE_FLOAT32 && job->out_t == job->t &&
                     job->kind == job->pass &&
                     (job->pass == DS_MATH_RED_MAX || job->pass == DS_MATH_RED_MIN);
  for (int64_t u = begin; u < end; u++) {
    int64_t row = u / chunks, c0 = (u % chunks) * job->chunk;
    int64_t m = MIN(job->chunk, job->cols - c0);
    int64_t base = red_kept_offset(job, row) + c0;
    int64_t o = row * job->cols + c0;
    if (f32_extreme) {
      float *y = (float *)job->out + o;
      for (int64_t i = 0; i < m; i++)
        y[i] = (float)red_identity_f64(job->pass);
      for (int64_t r = 0; r < job->g.count; r++)
        fold_cols_f32_in_float(job->pass, y,
                               (const float *)job->in + base + red_reduced_offset(job, r, job->g.nr),
                               m);
      continue;
    }
    double *acc = job->acc != NULL ? job->acc + o : stack_acc;
    int64_t *iacc = job->acc != NULL ? (int64_t *)job->acc + o : stack_iacc;
    if (job->int_acc) {
      for (int64_t i = 0; i < m; i++)
        iacc[i] = red_identity_i64(job->pass);
    } else {
      for (int64_t i = 0; i < m; i++)
        acc[i] = red_identity_f64(job->pass);
    }
    for (int64_t r = 0; r < job->g.count; r++)
      red_fold_cols(job, base + red_reduced_offset(job, r, job->g.nr), o, m, acc, iacc);
    red_store(job, o, job->int_acc ? NULL : acc, job->int_acc ? iacc : NULL, m);
  }
}

/* Folds the contiguous run of n elements at input offset `off` into *acc (or *iacc). */
static void red_fold_run(const RedJob *job, int64_t off, int64_t n, double shift, double *acc,
                         int64_t *iacc)
{
  if (job->t == DS_DTYPE_FLOAT32) {
    const float *x = (const float *)job->in + off;
    *acc = folds_in_float(job->pass) ? fold_run_f32_blocks(job->pass, *acc, x, n)
                                     : fold_run_f32(job->pass, *acc, x, n, shift);
    return;
  }
  if (job->t == DS_DTYPE_FLOAT64) {
    *acc = fold_run_f64(job->pass, *acc, (const double *)job->in + off, n, shift);
    return;
  }
  double x[DS_CPU_BLOCK];
  int64_t ix[DS_CPU_BLOCK];
  for (int64_t done = 0; done < n; done += DS_CPU_BLOCK) {
    int64_t m = MIN(DS_CPU_BLOCK, n - done);
    if (job->int_acc) {
      load_i64(job->t, job->in, off + done, m, ix);
      for (int64_t i = 0; i < m; i++)
        *iacc = fold_i64(job->pass, *iacc, ix[i]);
    } else {
      ds_cpu_load_block_f64(job->t, job->in, off + done, 1, m, x);
      *acc = fold_run_f64(job->pass, *acc, x, m, shift);
    }
  }
}

/* Units of single outputs, each folding contiguous runs of the innermost (reduced) dim. */
static void red_rows_worker(void *ctx, int64_t begin, int64_t end)
{
  const RedJob *job = ctx;
  int64_t len = job->g.rshape[job->g.nr - 1];
  int64_t runs = job->g.count / len;
  for (int64_t o = begin; o < end; o++) {
    int64_t base = red_kept_offset(job, o);
    double acc = red_identity_f64(job->pass);
    int64_t iacc = red_identity_i64(job->pass);
    double shift = job->pass == DS_MATH_RED_LOGSUMEXP ? job->shift[o] : 0.0;
    for (int64_t r = 0; r < runs; r++)
      red_fold_run(job, base + red_reduced_offset(job, r, job->g.nr - 1), len, shift, &acc,
                   &iacc);
    red_store(job, o, job->int_acc ? NULL : &acc, job->int_acc ? &iacc : NULL, 1);
  }
}

/* Outputs that each reduce one long run (job->part_acc set): unit u folds piece u % RED_PARTS
 * of output u / RED_PARTS's run into its own accumulator. */
static void red_parts_worker(void *ctx, int64_t begin, int64_t end)
{
  const RedJob *job = ctx;
  int64_t len = job->g.count;
  for (int64_t u = begin; u < end; u++) {
    int64_t o = u / RED_PARTS, piece = u % RED_PARTS;
    int64_t a = len * piece / RED_PARTS, b = len * (piece + 1) / RED_PARTS;
    double shift = job->pass == DS_MATH_RED_LOGSUMEXP ? job->shift[o] : 0.0;
    job->part_acc[u] = red_identity_f64(job->pass);
    job->part_iacc[u] = red_identity_i64(job->pass);
    red_fold_run(job, red_kept_offset(job, o) + a, b - a, shift, &job->part_acc[u],
                 &job->part_iacc[u]);
  }
}

/* Joins each output's pieces, in order, and stores the outputs. */
static void red_merge_parts(const RedJob *job)
{
  for (int64_t o = 0; o < job->g.n_out; o++) {
    double acc = red_identity_f64(job->pass);
    int64_t iacc = red_identity_i64(job->pass);
    for (int64_t u = o * RED_PARTS; u < (o + 1) * RED_PARTS; u++) {
      acc = red_merge_f64(job->pass, acc, job->part_acc[u]);
      iacc = red_merge_i64(job->pass, iacc, job->part_iacc[u]);
    }
    red_store(job, o, job->int_acc ? NULL : &acc, job->int_acc ? &iacc : NULL, 1);
  }
}

/* An accumulator per output (8 bytes, double or int64), and log_sum_exp's maxima. */
static size_t reduce_workspace_for(const DsTensor *out, bool lse)
{
  return (size_t)ds_tensor_numel(out) * sizeof(double) * (lse ? 2 : 1);
}

static size_t reduce_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                               const DsTensor *outputs, int n_outputs)
{
  (void)param;
  (void)inputs;
  (void)n_inputs;
  return n_outputs >= 1 ? reduce_workspace_for(&outputs[0], false) : 0;
}

static size_t log_sum_exp_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                                    const DsTensor *outputs, int n_outputs)
{
  (void)param;
  (void)inputs;
  (void)n_inputs;
  return n_outputs >= 1 ? reduce_workspace_for(&outputs[0], true) : 0;
}

/* Columns below which splitting a row costs more in broken streaming than threads give back. */
#define RED_MIN_CHUNK 1024

static void red_run_pass(RedJob *job, DsMathReduceFn pass, DsThreadPool *pool)
{
  job->pass = pass;
  int64_t work = MAX(1, job->g.count);
  if (job->columns) {
    /* Whole rows of the kept columns, so reading each reduced position streams through memory;
     * a row is split only when there are too few rows to go round. Without a workspace the
     * stack block bounds a unit. */
    int64_t rows = job->g.n_out / MAX(1, job->cols);
    job->chunk = job->acc != NULL ? job->cols : MIN(job->cols, DS_CPU_BLOCK);
    if (job->acc != NULL && rows < 8 && job->cols >= 2 * RED_MIN_CHUNK)
      job->chunk = MAX(RED_MIN_CHUNK, (job->cols + 7) / 8);
    int64_t units = rows * ((job->cols + job->chunk - 1) / job->chunk);
    ds_parallel_for(pool, units, MAX(1, (int64_t)DS_CPU_PARALLEL_GRAIN / (work * job->chunk)),
                    red_cols_worker, job);
  } else if (job->part_acc != NULL) {
    int64_t piece = MAX(1, work / RED_PARTS);
    ds_parallel_for(pool, job->g.n_out * RED_PARTS, MAX(1, (int64_t)DS_CPU_PARALLEL_GRAIN / piece),
                    red_parts_worker, job);
    red_merge_parts(job);
  } else {
    ds_parallel_for(pool, job->g.n_out, MAX(1, (int64_t)DS_CPU_PARALLEL_GRAIN / work),
                    red_rows_worker, job);
  }
}

/* Whether a reduction of a single element gives that element (a sum, not a norm). */
static bool reduce_of_one_is_itself(DsMathReduceFn kind)
{
  return kind == DS_MATH_RED_SUM || kind == DS_MATH_RED_MEAN || kind == DS_MATH_RED_MAX ||
         kind == DS_MATH_RED_MIN || kind == DS_MATH_RED_PROD;
}

/* Reduces input 0 over the axes `mask` marks into output 0 (already shaped). */
static DsStatus reduce_masked(const DsKernelCtx *ctx, DsMathReduceFn kind, const bool *mask)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (in->dtype != out->dtype && kind != DS_MATH_RED_L1 && kind != DS_MATH_RED_L2)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(in->dtype) || !ds_cpu_dtype_computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  RedJob job = {
      .kind = kind, .t = in->dtype, .out_t = out->dtype, .in = in->data, .out = out->data};
  /* A norm into another dtype (norm's out_dtype) accumulates in double. */
  job.int_acc = !ds_dtype_is_float(in->dtype) && in->dtype == out->dtype &&
                kind != DS_MATH_RED_L2 && kind != DS_MATH_RED_LOGSUM &&
                kind != DS_MATH_RED_LOGSUMEXP;
  ds_geom_reduce(in, mask, &job.g);
  if (ds_tensor_numel(out) != job.g.n_out)
    return DS_STATUS_INVALID_ARGUMENT;
  job.columns = job.g.inner_kept;
  job.cols = job.columns && job.g.nk > 0 ? job.g.kshape[job.g.nk - 1] : 1;
  if (job.g.n_out == 0)
    return DS_STATUS_OK;
  if (job.g.count == 1 && reduce_of_one_is_itself(kind) && in->dtype == out->dtype) {
    /* Every reduced dim has length 1: the output is the input, in order (-0.0 stays -0.0). */
    if (in->data != out->data)
      memcpy(out->data, in->data, (size_t)job.g.n_out * ds_dtype_size(in->dtype));
    return DS_STATUS_OK;
  }
  if (job.g.count == 0) {
    /* Nothing to fold: every output is the finished identity (0 sums, NaN means, -inf
     * log-sums, the extremes' infinities). */
    double id = red_finish_f64(kind, red_identity_f64(kind), 0, -INFINITY);
    int64_t iid = red_finish_i64(kind, red_identity_i64(kind), 0);
    for (int64_t o = 0; o < job.g.n_out; o++) {
      if (job.int_acc)
        store_i64(job.out_t, job.out, o, iid);
      else
        ds_cpu_store_block_f64(job.out_t, job.out, o, 1, &id);
    }
    return DS_STATUS_OK;
  }
  /* _contrib_dynamic_sum has no workspace (its output size is not known in advance): it folds
   * in stack blocks. */
  job.acc = ctx->workspace;
  double part_acc[RED_CUT_OUTPUTS * RED_PARTS];
  int64_t part_iacc[RED_CUT_OUTPUTS * RED_PARTS];
  if (!job.columns && job.g.nr == 1 && job.g.n_out <= RED_CUT_OUTPUTS &&
      job.g.count >= DS_CPU_PARALLEL_GRAIN) {
    job.part_acc = part_acc;
    job.part_iacc = part_iacc;
  }
  if (kind == DS_MATH_RED_LOGSUMEXP) {
    if (ctx->workspace == NULL)
      return DS_STATUS_INVALID_ARGUMENT;
    job.shift = job.acc + job.g.n_out;
    red_run_pass(&job, DS_MATH_RED_MAX, ctx->pool);
  }
  red_run_pass(&job, kind, ctx->pool);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* The kernels: each op's axes as a mask, then the engine */

/* MXNet's sum, mean, max and min: axis, keepdims and exclude. */
static DsStatus run_mx_reduce(const DsKernelCtx *ctx, DsMathReduceFn kind)
{
  bool mask[DS_MAX_NDIM];
  if (!ds_reduce_axes_mask(ctx->param, ctx->inputs[0].ndim, mask))
    return DS_STATUS_INVALID_ARGUMENT;
  return reduce_masked(ctx, kind, mask);
}

/* MXNet's norm: its axes as sum's, then the L1 or L2 fold. */
static DsStatus k_norm(const DsKernelCtx *ctx)
{
  const DsNormParam *p = ctx->param;
  bool mask[DS_MAX_NDIM];
  if (!ds_reduce_axes_mask(&p->axes, ctx->inputs[0].ndim, mask))
    return DS_STATUS_INVALID_ARGUMENT;
  return reduce_masked(ctx, p->ord == 1 ? DS_MATH_RED_L1 : DS_MATH_RED_L2, mask);
}

/* The NumPy forms and the norms: axis and keepdims. */
static DsStatus run_np_reduce(const DsKernelCtx *ctx, DsMathReduceFn kind)
{
  bool mask[DS_MAX_NDIM];
  if (!ds_np_reduce_axes_mask(ctx->param, ctx->inputs[0].ndim, mask))
    return DS_STATUS_INVALID_ARGUMENT;
  return reduce_masked(ctx, kind, mask);
}

#define REDUCE_KERNEL(NAME, RUN, KIND)                                                             \
  static DsStatus NAME(const DsKernelCtx *ctx)                                                     \
  {                                                                                                \
    return RUN(ctx, KIND);                                                                         \
  }
REDUCE_KERNEL(k_sum, run_mx_reduce, DS_MATH_RED_SUM)
REDUCE_KERNEL(k_mean, run_mx_reduce, DS_MATH_RED_MEAN)
REDUCE_KERNEL(k_max, run_mx_reduce, DS_MATH_RED_MAX)
REDUCE_KERNEL(k_min, run_mx_reduce, DS_MATH_RED_MIN)
REDUCE_KERNEL(k_prod, run_mx_reduce, DS_MATH_RED_PROD)
REDUCE_KERNEL(k_nansum, run_mx_reduce, DS_MATH_RED_NANSUM)
REDUCE_KERNEL(k_nanprod, run_mx_reduce, DS_MATH_RED_NANPROD)
REDUCE_KERNEL(k_np_sum, run_np_reduce, DS_MATH_RED_SUM)
REDUCE_KERNEL(k_np_mean, run_np_reduce, DS_MATH_RED_MEAN)
REDUCE_KERNEL(k_np_max, run_np_reduce, DS_MATH_RED_MAX)
REDUCE_KERNEL(k_np_min, run_np_reduce, DS_MATH_RED_MIN)
REDUCE_KERNEL(k_np_prod, run_np_reduce, DS_MATH_RED_PROD)
REDUCE_KERNEL(k_sum_square, run_np_reduce, DS_MATH_RED_SUMSQ)
REDUCE_KERNEL(k_l1_norm, run_np_reduce, DS_MATH_RED_L1)
REDUCE_KERNEL(k_l2_norm, run_np_reduce, DS_MATH_RED_L2)
REDUCE_KERNEL(k_log_sum, run_np_reduce, DS_MATH_RED_LOGSUM)
REDUCE_KERNEL(k_log_sum_exp, run_np_reduce, DS_MATH_RED_LOGSUMEXP)
#undef REDUCE_KERNEL

/* _contrib_dynamic_sum: the axes are read first (whole numbers, negative counting from the
 * end, no repeats), then the output is shaped and allocated. */
static DsStatus k_dynamic_sum(const DsKernelCtx *ctx)
{
  const DsDynamicSumParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0], *axes = &ctx->inputs[1];
  if (axes->ndim != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(axes->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = axes->shape[0];
  bool mask[DS_MAX_NDIM];
  for (int d = 0; d < in->ndim; d++)
    mask[d] = n == 0 && !p->noop_with_empty_axes;
  for (int64_t i = 0; i < n; i++) {
    double v = ds_cpu_load_f64(axes->dtype, axes->data, i);
    if (v != floor(v) || v < -in->ndim || v >= in->ndim)
      return DS_STATUS_INVALID_ARGUMENT;
    int a = (int)v < 0 ? (int)v + in->ndim : (int)v;
    if (mask[a])
      return DS_STATUS_INVALID_ARGUMENT;
    mask[a] = true;
  }
  int64_t shape[DS_MAX_NDIM];
  int ndim = 0;
  for (int d = 0; d < in->ndim; d++)
    if (p->keepdims || !mask[d])
      shape[ndim++] = mask[d] ? 1 : in->shape[d];
  DsStatus status = ds_kernel_prepare_output(ctx, 0, in->dtype, ndim, shape);
  if (status != DS_STATUS_OK)
    return status;
  return reduce_masked(ctx, DS_MATH_RED_SUM, mask);
}

/* ------------------------------------------------------------------------------------------ */
/* _npi_argmax, _npi_argmin */

typedef struct {
  bool is_max, last;
  DsDType t;
  bool ints; /* compare as int64 (exact for every integer dtype) */
  const char *in;
  DsDType out_t; /* int64 (NumPy's forms), or the input's dtype (MXNet's legacy argmax) */
  char *out;
  int64_t len, inner; /* the reduced axis' length; elements after it */
} ArgJob;

/* Indices [o, o + m) of the output, from int64 positions. */
static void arg_store(const ArgJob *job, int64_t o, const int64_t *idx, int64_t m)
{
  if (job->out_t == DS_DTYPE_INT64) {
    memcpy((int64_t *)job->out + o, idx, (size_t)m * sizeof(int64_t));
    return;
  }
  double y[DS_CPU_BLOCK];
  for (int64_t i = 0; i < m; i++)
    y[i] = (double)idx[i];
  ds_cpu_store_block_f64(job->out_t, job->out, o, m, y);
}

/* Whether x replaces the current extreme b: NaN beats every number (NumPy's rule: the first
 * NaN, or the last one with select_last_index); ties go to the first (or last) index. */
#define ARG_BETTER(x, b, IS_MAX, LAST)                                                             \
  ((LAST) ? ((x) != (x) || ((IS_MAX) ? (x) >= (b) : (x) <= (b)))                                   \
          : (((x) != (x) && (b) == (b)) || ((IS_MAX) ? (x) > (b) : (x) < (b))))

#define DEFINE_ARG_SCAN(NAME, T, LOAD)                                                             \
  static void NAME(const ArgJob *job, int64_t base, int64_t m, int64_t *restrict idx)              \
  {                                                                                                \
    T best[DS_CPU_BLOCK], x[DS_CPU_BLOCK];                                                                       \
    LOAD;                                                                                          \
    for (int64_t i = 0; i < m; i++) {                                                              \
      best[i] = x[i];                                                                              \
      idx[i] = 0;                                                                                  \
    }                                                                                              \
    for (int64_t j = 1; j < job->len; j++) {                                                       \
      base += job->inner;                                                                          \
      LOAD;                                                                                        \
      for (int64_t i = 0; i < m; i++) {                                                            \
        if (ARG_BETTER(x[i], best[i], job->is_max, job->last)) {                                   \
          best[i] = x[i];                                                                          \
          idx[i] = j;                                                                              \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
  }
DEFINE_ARG_SCAN(arg_scan_f64, double, ds_cpu_load_block_f64(job->t, job->in, base, 1, m, x))
DEFINE_ARG_SCAN(arg_scan_i64, int64_t, load_i64(job->t, job->in, base, m, x))
#undef DEFINE_ARG_SCAN

/* Units (outer index, block of DS_CPU_BLOCK inner columns), each scanning the axis for its columns.
 * With inner 1 a unit scans one contiguous run element by element through blocks of 1: slow
 * for long runs, so those go through arg_run below instead. */
static void arg_cols_worker(void *ctx, int64_t begin, int64_t end)
{
  const ArgJob *job = ctx;
  int64_t blocks = (job->inner + DS_CPU_BLOCK - 1) / DS_CPU_BLOCK;
  for (int64_t u = begin; u < end; u++) {
    int64_t outer = u / blocks, c0 = (u % blocks) * DS_CPU_BLOCK;
    int64_t m = MIN(DS_CPU_BLOCK, job->inner - c0);
    int64_t base = outer * job->len * job->inner + c0;
    int64_t idx[DS_CPU_BLOCK];
    if (job->ints)
      arg_scan_i64(job, base, m, idx);
    else
      arg_scan_f64(job, base, m, idx);
    arg_store(job, outer * job->inner + c0, idx, m);
  }
}

#define DEFINE_ARG_RUN(NAME, T, LOAD)                                                              \
  static int64_t NAME(const ArgJob *job, int64_t base)                                             \
  {                                                                                                \
    T x[DS_CPU_BLOCK], best = 0;                                                                          \
    int64_t at = 0;                                                                                \
    for (int64_t done = 0; done < job->len; done += DS_CPU_BLOCK) {                                       \
      int64_t m = MIN(DS_CPU_BLOCK, job->len - done);                                                     \
      LOAD;                                                                                        \
      for (int64_t i = 0; i < m; i++) {                                                            \
        if ((done == 0 && i == 0) || ARG_BETTER(x[i], best, job->is_max, job->last)) {             \
          best = x[i];                                                                             \
          at = done + i;                                                                           \
        }                                                                                          \
      }                                                                                            \
    }                                                                                              \
    return at;                                                                                     \
  }
DEFINE_ARG_RUN(arg_run_f64, double, ds_cpu_load_block_f64(job->t, job->in, base + done, 1, m, x))
DEFINE_ARG_RUN(arg_run_i64, int64_t, load_i64(job->t, job->in, base + done, m, x))
#undef DEFINE_ARG_RUN
#undef ARG_BETTER

/* Units of single outputs when the axis is innermost. */
static void arg_rows_worker(void *ctx, int64_t begin, int64_t end)
{
  const ArgJob *job = ctx;
  for (int64_t o = begin; o < end; o++) {
    int64_t at = job->ints ? arg_run_i64(job, o * job->len) : arg_run_f64(job, o * job->len);
    arg_store(job, o, &at, 1);
  }
}

/* `legacy`: MXNet's argmax and argmin, whose indices take the input's dtype. */
static DsStatus run_arg_reduce(const DsKernelCtx *ctx, bool is_max, bool legacy)
{
  const DsArgReduceParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (out->dtype != (legacy ? in->dtype : DS_DTYPE_INT64))
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(in->dtype))
    return DS_STATUS_UNSUPPORTED;
  ArgJob job = {.is_max = is_max,
                .last = p->select_last_index,
                .t = in->dtype,
                .ints = !ds_dtype_is_float(in->dtype),
                .in = in->data,
                .out_t = out->dtype,
                .out = out->data};
  int64_t outer = 1;
  if (p->has_axis) {
    int axis = p->axis < 0 ? p->axis + in->ndim : p->axis;
    if (axis < 0 || axis >= in->ndim)
      return DS_STATUS_INVALID_ARGUMENT;
    outer = ds_shape_span(in->shape, 0, axis);
    job.len = in->shape[axis];
    job.inner = ds_shape_span(in->shape, axis + 1, in->ndim);
  } else {
    job.len = ds_tensor_numel(in);
    job.inner = 1;
  }
  if (ds_tensor_numel(out) != outer * job.inner)
    return DS_STATUS_INVALID_ARGUMENT;
  if (outer * job.inner == 0)
    return DS_STATUS_OK;
  if (job.len == 0)
    return DS_STATUS_INVALID_ARGUMENT; /* no extreme of nothing */
  if (job.inner == 1) {
    ds_parallel_for(ctx->pool, outer, MAX(1, (int64_t)DS_CPU_PARALLEL_GRAIN / job.len),
                    arg_rows_worker, &job);
  } else {
    int64_t blocks = (job.inner + DS_CPU_BLOCK - 1) / DS_CPU_BLOCK;
    ds_parallel_for(ctx->pool, outer * blocks,
                    MAX(1, (int64_t)DS_CPU_PARALLEL_GRAIN / (job.len * DS_CPU_BLOCK)), arg_cols_worker,
                    &job);
  }
  return DS_STATUS_OK;
}

static DsStatus k_np_argmax(const DsKernelCtx *ctx)
{
  return run_arg_reduce(ctx, true, false);
}
static DsStatus k_np_argmin(const DsKernelCtx *ctx)
{
  return run_arg_reduce(ctx, false, false);
}
static DsStatus k_argmax(const DsKernelCtx *ctx)
{
  return run_arg_reduce(ctx, true, true);
}
static DsStatus k_argmin(const DsKernelCtx *ctx)
{
  return run_arg_reduce(ctx, false, true);
}

/* ------------------------------------------------------------------------------------------ */

void ds_cpu_reduce_register(DsKernel *table)
{
  table[DS_OP_SUM] = (DsKernel){k_sum, reduce_workspace};
  table[DS_OP_MEAN] = (DsKernel){k_mean, reduce_workspace};
  table[DS_OP_MAX] = (DsKernel){k_max, reduce_workspace};
  table[DS_OP_MIN] = (DsKernel){k_min, reduce_workspace};
  table[DS_OP_PROD] = (DsKernel){k_prod, reduce_workspace};
  table[DS_OP_NANSUM] = (DsKernel){k_nansum, reduce_workspace};
  table[DS_OP_NANPROD] = (DsKernel){k_nanprod, reduce_workspace};
  table[DS_OP_NORM] = (DsKernel){k_norm, reduce_workspace};
  table[DS_OP_NP_SUM] = (DsKernel){k_np_sum, reduce_workspace};
  table[DS_OP_NP_MEAN] = (DsKernel){k_np_mean, reduce_workspace};
  table[DS_OP_NP_MAX] = (DsKernel){k_np_max, reduce_workspace};
  table[DS_OP_NP_MIN] = (DsKernel){k_np_min, reduce_workspace};
  table[DS_OP_NP_PROD] = (DsKernel){k_np_prod, reduce_workspace};
  table[DS_OP_SUM_SQUARE] = (DsKernel){k_sum_square, reduce_workspace};
  table[DS_OP_L1_NORM] = (DsKernel){k_l1_norm, reduce_workspace};
  table[DS_OP_L2_NORM] = (DsKernel){k_l2_norm, reduce_workspace};
  table[DS_OP_LOG_SUM] = (DsKernel){k_log_sum, reduce_workspace};
  table[DS_OP_LOG_SUM_EXP] = (DsKernel){k_log_sum_exp, log_sum_exp_workspace};
  table[DS_OP_DYNAMIC_SUM] = (DsKernel){k_dynamic_sum, NULL};
  table[DS_OP_NP_ARGMAX] = (DsKernel){k_np_argmax, NULL};
  table[DS_OP_NP_ARGMIN] = (DsKernel){k_np_argmin, NULL};
  table[DS_OP_ARGMAX] = (DsKernel){k_argmax, NULL};
  table[DS_OP_ARGMIN] = (DsKernel){k_argmin, NULL};
  table[DS_OP_ARGMAX_CHANNEL] = (DsKernel){k_argmax, NULL};
}
