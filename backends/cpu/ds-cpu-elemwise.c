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

/* Under GCC's default -ftrapping-math a select that guards float arithmetic (the clamps and
 * range blends of ds_vmath_exp, ds_vmath_erf, ds_vmath_tanh) stays a branch, and a loop with a
 * branch does not vectorise. Nothing here enables floating-point traps, so let GCC assume there are
 * none (Clang already does by default). The pragma comes before the includes: GCC does not inline
 * a function whose optimisation options differ from its caller's, and ds-cpu-vmath.h's math
 * must be inlined into the loops for them to vectorise. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif

#include <math.h>
#include <string.h>

#include "ds-cpu.h"
#include "ds-cpu-blocks.h"
#include "ds-cpu-copy.h"
#include "ds-cpu-unary.h"
#include "ds-math-binary.h"
#include "ds-cpu-vmath.h"
#include "ds-geometry-tensor.h"

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
  ds_cpu_store_block_f64(t, &cell, 0, 1, &x);
  ds_cpu_load_block_f64(t, &cell, 0, 0, 1, &back);
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

/* The functions are core/ds-math-binary.h's (DsMathBinaryFn); the comparisons also have loops
 * with bool results. */

typedef void (*BinLoop)(int64_t n, const void *a, const void *b, void *out);

typedef struct {
  BinLoop vv, vs, sv; /* both vectors; b a scalar; a a scalar */
} BinLoops;

/* Python's modulo (the result takes the divisor's sign; NumPy's np.mod) and C's remainder, for
 * floats and integers. An integer division by 0 gives 0 as NumPy does; x % -1 is 0 without
 * the MIN % -1 trap. */
static inline double mod_f64(double x, double y)
{
  double r = fmod(x, y);
  return (r != 0.0 && ((r < 0.0) != (y < 0.0))) ? r + y : r;
}

static inline float mod_f32(float x, float y)
{
  float r = fmodf(x, y);
  return (r != 0.0f && ((r < 0.0f) != (y < 0.0f))) ? r + y : r;
}

#define DEFINE_INT_MOD(P, T)                                                                       \
  static inline T P##_fmod(T x, T y)                                                               \
  {                                                                                                \
    return (y == 0 || y == -1) ? (T)0 : (T)(x % y);                                                \
  }                                                                                                \
  static inline T P##_mod(T x, T y)                                                                \
  {                                                                                                \
    T r = P##_fmod(x, y);                                                                          \
    return (r != 0 && ((r < 0) != (y < 0))) ? (T)(r + y) : r;                                      \
  }
DEFINE_INT_MOD(i32, int32_t)
DEFINE_INT_MOD(i64, int64_t)
#undef DEFINE_INT_MOD

/* Shifts by a count outside [0, 64) give 0 (NumPy's unsigned rule); the result then wraps to
 * the dtype's width when stored. The right shift of a negative number is arithmetic. */
static inline int64_t shl_i64(int64_t x, int64_t y)
{
  return (y < 0 || y >= 64) ? 0 : (int64_t)((uint64_t)x << y);
}

static inline int64_t shr_i64(int64_t x, int64_t y)
{
  if (y < 0 || y >= 64)
    return x < 0 ? -1 : 0;
  return x >> y;
}

static inline int32_t shl_i32(int32_t x, int32_t y)
{
  return (y < 0 || y >= 32) ? 0 : (int32_t)((uint32_t)x << y);
}

static inline int32_t shr_i32(int32_t x, int32_t y)
{
  if (y < 0 || y >= 32)
    return x < 0 ? -1 : 0;
  return x >> y;
}

/* Through double (the generic path, floats never reach it: the kernels refuse them). */
static inline double shl_f64(double x, double y)
{
  return (double)shl_i64(ds_cpu_saturate_i64(x), ds_cpu_saturate_i64(y));
}

static inline double shr_f64(double x, double y)
{
  return (double)shr_i64(ds_cpu_saturate_i64(x), ds_cpu_saturate_i64(y));
}

static inline double bitand_f64(double x, double y)
{
  return (double)(ds_cpu_saturate_i64(x) & ds_cpu_saturate_i64(y));
}

static inline double bitor_f64(double x, double y)
{
  return (double)(ds_cpu_saturate_i64(x) | ds_cpu_saturate_i64(y));
}

static inline double bitxor_f64(double x, double y)
{
  return (double)(ds_cpu_saturate_i64(x) ^ ds_cpu_saturate_i64(y));
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

/* Powers, with the square that normalisation layers ask for (x ** 2) as one multiply: libm
 * rounds x * x correctly too, so the bits are the same, and with a scalar exponent the loop is
 * unswitched into a vectorised one instead of a libm call per element (a LayerNorm exported
 * from PyTorch spent a fifth of its time in powf). */
static inline float pow_f32(float x, float y) { return y == 2.0f ? x * x : powf(x, y); }
static inline double pow_f64(double x, double y) { return y == 2.0 ? x * x : pow(x, y); }

/* A TRUTH function's value stored in the operands' type. */
#define BIN_VALUE_ARITH(T, E) (E)
#define BIN_VALUE_TRUTH(T, E) ((T)(E))

/* Each function of the table, for each computed type, as three loops. */
#define DEFINE_BIN_TYPE(P, T) DS_MATH_BINARY(DEFINE_BIN_##P)
#define DEFINE_BIN_f32(ID, KIND, EXPR)                                                             \
  DEFINE_BIN_LOOPS(f32_##ID, float, BIN_VALUE_##KIND(float, EXPR))
#define DEFINE_BIN_f64(ID, KIND, EXPR)                                                             \
  DEFINE_BIN_LOOPS(f64_##ID, double, BIN_VALUE_##KIND(double, EXPR))
#define DEFINE_BIN_i32(ID, KIND, EXPR)                                                             \
  DEFINE_BIN_LOOPS(i32_##ID, int32_t, BIN_VALUE_##KIND(int32_t, EXPR))
#define DEFINE_BIN_i64(ID, KIND, EXPR)                                                             \
  DEFINE_BIN_LOOPS(i64_##ID, int64_t, BIN_VALUE_##KIND(int64_t, EXPR))

/* float32 and float64: IEEE arithmetic; the shifts (which the kernels refuse for floats) through
 * int64. */
#define DS_M_ADD(x, y) ((x) + (y))
#define DS_M_SUB(x, y) ((x) - (y))
#define DS_M_MUL(x, y) ((x) * (y))
#define DS_M_DIV(x, y) ((x) / (y))
#define DS_M_POW       pow_f32
#define DS_M_MOD       mod_f32
#define DS_M_FMOD      fmodf
#define DS_M_SHL(x, y) ((float)shl_f64(x, y))
#define DS_M_SHR(x, y) ((float)shr_f64(x, y))
#define DS_M_BITAND(x, y) ((float)bitand_f64(x, y))
#define DS_M_BITOR(x, y)  ((float)bitor_f64(x, y))
#define DS_M_BITXOR(x, y) ((float)bitxor_f64(x, y))
#define DS_M_HYPOT        hypotf
DEFINE_BIN_TYPE(f32, float)
#undef DS_M_HYPOT
#undef DS_M_POW
#undef DS_M_MOD
#undef DS_M_FMOD
#undef DS_M_SHL
#undef DS_M_SHR
#undef DS_M_BITAND
#undef DS_M_BITOR
#undef DS_M_BITXOR
#define DS_M_POW  pow_f64
#define DS_M_MOD  mod_f64
#define DS_M_FMOD fmod
#define DS_M_SHL  shl_f64
#define DS_M_SHR  shr_f64
#define DS_M_BITAND bitand_f64
#define DS_M_BITOR  bitor_f64
#define DS_M_BITXOR bitxor_f64
#define DS_M_HYPOT  hypot
DEFINE_BIN_TYPE(f64, double)
#undef DS_M_HYPOT
#undef DS_M_ADD
#undef DS_M_SUB
#undef DS_M_MUL
#undef DS_M_DIV
#undef DS_M_POW
#undef DS_M_MOD
#undef DS_M_FMOD
#undef DS_M_SHL
#undef DS_M_SHR
#undef DS_M_BITAND
#undef DS_M_BITOR
#undef DS_M_BITXOR

/* Integers: adds and multiplies wrap (through uint64; the low bits are the narrower type's
 * wrapped result), divisions, remainders and shifts per width; powers go through double and
 * saturate. */
#define DS_M_ADD(x, y) ((__typeof__(x))((uint64_t)(x) + (uint64_t)(y)))
#define DS_M_SUB(x, y) ((__typeof__(x))((uint64_t)(x) - (uint64_t)(y)))
#define DS_M_MUL(x, y) ((__typeof__(x))((uint64_t)(x) * (uint64_t)(y)))
#define DS_M_POW(x, y) ((__typeof__(x))ds_cpu_saturate_i64(pow((double)(x), (double)(y))))
#define INT_BY_WIDTH(x, F32, F64) _Generic((x), int32_t: F32, int64_t: F64)
#define DS_M_DIV(x, y)  INT_BY_WIDTH(x, ds_cpu_div_i32, ds_cpu_div_i64)(x, y)
#define DS_M_MOD(x, y)  INT_BY_WIDTH(x, i32_mod, i64_mod)(x, y)
#define DS_M_FMOD(x, y) INT_BY_WIDTH(x, i32_fmod, i64_fmod)(x, y)
#define DS_M_SHL(x, y)  INT_BY_WIDTH(x, shl_i32, shl_i64)(x, y)
#define DS_M_SHR(x, y)  INT_BY_WIDTH(x, shr_i32, shr_i64)(x, y)
#define DS_M_BITAND(x, y) ((x) & (y))
#define DS_M_BITOR(x, y)  ((x) | (y))
#define DS_M_BITXOR(x, y) ((x) ^ (y))
#define DS_M_HYPOT(x, y) ((__typeof__(x))ds_cpu_saturate_i64(hypot((double)(x), (double)(y))))
DEFINE_BIN_TYPE(i32, int32_t)
DEFINE_BIN_TYPE(i64, int64_t)
#undef DS_M_HYPOT
#undef DS_M_ADD
#undef DS_M_SUB
#undef DS_M_MUL
#undef DS_M_DIV
#undef DS_M_POW
#undef DS_M_MOD
#undef DS_M_FMOD
#undef DS_M_SHL
#undef DS_M_SHR
#undef DS_M_BITAND
#undef DS_M_BITOR
#undef DS_M_BITXOR
#undef INT_BY_WIDTH
#undef DEFINE_BIN_TYPE
#undef DEFINE_BIN_f32
#undef DEFINE_BIN_f64
#undef DEFINE_BIN_i32
#undef DEFINE_BIN_i64
#undef BIN_VALUE_ARITH
#undef BIN_VALUE_TRUTH

#define LOOPS(P, OP)                                                                               \
  {                                                                                                \
    P##_##OP##_vv, P##_##OP##_vs, P##_##OP##_sv                                                    \
  }
#define LOOPS_f32(ID, KIND, EXPR) [DS_MATH_BIN_##ID] = LOOPS(f32, ID),
#define LOOPS_f64(ID, KIND, EXPR) [DS_MATH_BIN_##ID] = LOOPS(f64, ID),
#define LOOPS_i32(ID, KIND, EXPR) [DS_MATH_BIN_##ID] = LOOPS(i32, ID),
#define LOOPS_i64(ID, KIND, EXPR) [DS_MATH_BIN_##ID] = LOOPS(i64, ID),
static const BinLoops bin_loops[TY_COUNT][DS_MATH_BIN_COUNT] = {
    [TY_F32] = {DS_MATH_BINARY(LOOPS_f32)},
    [TY_F64] = {DS_MATH_BINARY(LOOPS_f64)},
    [TY_I32] = {DS_MATH_BINARY(LOOPS_i32)},
    [TY_I64] = {DS_MATH_BINARY(LOOPS_i64)},
};
#undef LOOPS_f32
#undef LOOPS_f64
#undef LOOPS_i32
#undef LOOPS_i64

/* Comparisons with bool (0/1 byte) results, for the NumPy-style ops: operands of type T. */
#define DEFINE_CMP_LOOPS(NAME, T, EXPR)                                                            \
  static void NAME##_vv(int64_t n, const void *pa, const void *pb, void *po)                       \
  {                                                                                                \
    const T *restrict a = pa;                                                                      \
    const T *restrict b = pb;                                                                      \
    uint8_t *restrict o = po;                                                                      \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T x = a[i], y = b[i];                                                                        \
      o[i] = (uint8_t)(EXPR);                                                                      \
    }                                                                                              \
  }                                                                                                \
  static void NAME##_vs(int64_t n, const void *pa, const void *pb, void *po)                       \
  {                                                                                                \
    const T *restrict a = pa;                                                                      \
    const T y = *(const T *)pb;                                                                    \
    uint8_t *restrict o = po;                                                                      \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T x = a[i];                                                                                  \
      o[i] = (uint8_t)(EXPR);                                                                      \
    }                                                                                              \
  }                                                                                                \
  static void NAME##_sv(int64_t n, const void *pa, const void *pb, void *po)                       \
  {                                                                                                \
    const T x = *(const T *)pa;                                                                    \
    const T *restrict b = pb;                                                                      \
    uint8_t *restrict o = po;                                                                      \
    for (int64_t i = 0; i < n; i++) {                                                              \
      T y = b[i];                                                                                  \
      o[i] = (uint8_t)(EXPR);                                                                      \
    }                                                                                              \
  }

#define DEFINE_CMP_TYPE(P, T)                                                                      \
  DEFINE_CMP_LOOPS(P##_ceq, T, x == y)                                                             \
  DEFINE_CMP_LOOPS(P##_cne, T, x != y)                                                             \
  DEFINE_CMP_LOOPS(P##_cgt, T, x > y)                                                              \
  DEFINE_CMP_LOOPS(P##_cge, T, x >= y)                                                             \
  DEFINE_CMP_LOOPS(P##_clt, T, x < y)                                                              \
  DEFINE_CMP_LOOPS(P##_cle, T, x <= y)

DEFINE_CMP_TYPE(f32, float)
DEFINE_CMP_TYPE(f64, double)
DEFINE_CMP_TYPE(i32, int32_t)
DEFINE_CMP_TYPE(i64, int64_t)
DEFINE_CMP_TYPE(u8, uint8_t)
DEFINE_CMP_TYPE(i8, int8_t)

/* Indexed by the operand dtype's code, then DS_MATH_BIN_EQ..DS_MATH_BIN_LE. Bool compares as
 * its bytes. */
#define CMP_LOOPS(P)                                                                               \
  {                                                                                                \
    LOOPS(P, ceq), LOOPS(P, cne), LOOPS(P, cgt), LOOPS(P, cge), LOOPS(P, clt), LOOPS(P, cle)       \
  }
static const BinLoops cmp_loops[DS_DTYPE_COUNT][DS_MATH_BIN_LE - DS_MATH_BIN_EQ + 1] = {
    [DS_DTYPE_FLOAT32] = CMP_LOOPS(f32), [DS_DTYPE_FLOAT64] = CMP_LOOPS(f64),
    [DS_DTYPE_INT32] = CMP_LOOPS(i32),   [DS_DTYPE_INT64] = CMP_LOOPS(i64),
    [DS_DTYPE_UINT8] = CMP_LOOPS(u8),    [DS_DTYPE_INT8] = CMP_LOOPS(i8),
    [DS_DTYPE_BOOL] = CMP_LOOPS(u8),
};
#undef CMP_LOOPS
#undef LOOPS

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
  double xa[DS_CPU_BLOCK], xb[DS_CPU_BLOCK], xo[DS_CPU_BLOCK];
  for (int64_t done = 0; done < n; done += DS_CPU_BLOCK) {
    int64_t m = MIN(DS_CPU_BLOCK, n - done);
    ds_cpu_load_block_f64(job->ta, job->a, oa + (va ? done : 0), va ? 1 : 0, va ? m : 1, xa);
    ds_cpu_load_block_f64(job->tb, job->b, ob + (vb ? done : 0), vb ? 1 : 0, vb ? m : 1, xb);
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
    ds_cpu_store_block_f64(job->to, job->o, oo + done, m, xo);
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
static DsStatus bin_select(BinJob *job, DsMathBinaryFn op, DsDType ta, DsDType tb, DsDType to)
{
  if (!ds_cpu_dtype_computable(ta) || !ds_cpu_dtype_computable(tb) || !ds_cpu_dtype_computable(to))
    return DS_STATUS_UNSUPPORTED;
  int ty = typed_index(to);
  job->typed = (ty >= 0 && ta == to && tb == to) ? &bin_loops[ty][op] : NULL;
  if (ds_math_binary_is_compare(op) && to == DS_DTYPE_BOOL && ta == tb &&
      !ds_dtype_is_storage_only(ta))
    job->typed = &cmp_loops[ta][op - DS_MATH_BIN_EQ];
  job->f64 = &bin_loops[TY_F64][op];
  job->ta = ta;
  job->tb = tb;
  job->to = to;
  job->ea = ds_dtype_size(ta);
  job->eb = ds_dtype_size(tb);
  job->eo = ds_dtype_size(to);
  return DS_STATUS_OK;
}

/* What a binary op allows of its dtypes. */
typedef enum {
  DT_SAME,     /* operands and result share one dtype */
  DT_LHS,      /* the result has lhs's dtype, rhs any (broadcast_power) */
  DT_BOOL,     /* the operands share a dtype, the result is bool (_npi_equal...) */
  DT_INTEGER,  /* DT_SAME, integer dtypes only (the shifts) */
} DtRule;

static DsStatus run_binary_rule(const DsKernelCtx *ctx, DsMathBinaryFn op, DtRule rule)
{
  const DsTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  DsTensor *out = &ctx->outputs[0];
  bool ok;
  switch (rule) {
  case DT_LHS:
    ok = a->dtype == out->dtype;
    break;
  case DT_BOOL:
    ok = a->dtype == b->dtype && out->dtype == DS_DTYPE_BOOL;
    break;
  default:
    ok = a->dtype == out->dtype && b->dtype == out->dtype;
    break;
  }
  if (!ok)
    return DS_STATUS_INVALID_ARGUMENT;
  if (rule == DT_INTEGER && (ds_dtype_is_float(out->dtype) || out->dtype == DS_DTYPE_BOOL))
    return DS_STATUS_UNSUPPORTED;
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
static DsStatus run_scalar_value(const DsKernelCtx *ctx, DsMathBinaryFn op, double scalar,
                                 bool reverse)
{
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
  ds_cpu_store_block_f64(ts, &cell, 0, 1, &value);

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

/* Every scalar op: its function and side come parsed with the scalar (DS_OPS_SCALAR). */
static DsStatus k_scalar(const DsKernelCtx *ctx)
{
  const DsScalarParam *p = ctx->param;
  return run_scalar_value(ctx, p->fn, p->scalar, p->reverse);
}

/* One kernel per op of DS_OPS_BINARY: its function under its dtype rule. */
#define BINARY_KERNEL(ID, NAME, FN, RULE)                                                          \
  static DsStatus k_binary_##ID(const DsKernelCtx *ctx)                                            \
  {                                                                                                \
    return run_binary_rule(ctx, DS_MATH_BIN_##FN, DT_##RULE);                                      \
  }
DS_OPS_BINARY(BINARY_KERNEL)
#undef BINARY_KERNEL

/* _contrib_div_sqrt_dim: x / sqrt(last dim), the root taken in double as MXNet does. */
static DsStatus k_div_sqrt_dim(const DsKernelCtx *ctx)
{
  if (ctx->inputs[0].ndim < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *x = &ctx->inputs[0];
  return run_scalar_value(ctx, DS_MATH_BIN_DIV, sqrt((double)x->shape[x->ndim - 1]), false);
}

/* ------------------------------------------------------------------------------------------ */
/* Unary math (ds-cpu-unary.c's loops over core/ds-math-unary.h's formulas); dtypes other than
 * float32 and float64 go through float64 in blocks. */

typedef struct {
  DsMathUnaryFn fn;
  DsDType ti, to;
  const char *in;
  char *out;
  double a, b; /* clip's bounds, or an activation's two coefficients (alpha, beta) */
} UnJob;

static void unary_worker(void *ctx, int64_t begin, int64_t end)
{
  const UnJob *job = ctx;
  if (job->ti == DS_DTYPE_FLOAT32 && job->to == DS_DTYPE_FLOAT32) {
    ds_cpu_unary_f32(job->fn, end - begin, (const float *)job->in + begin,
                     (float *)job->out + begin, (float)job->a, (float)job->b);
    return;
  }
  if (job->ti == DS_DTYPE_FLOAT64 && job->to == DS_DTYPE_FLOAT64) {
    ds_cpu_unary_f64(job->fn, end - begin, (const double *)job->in + begin,
                     (double *)job->out + begin, job->a, job->b);
    return;
  }
  double x[DS_CPU_BLOCK], y[DS_CPU_BLOCK];
  for (int64_t i = begin; i < end; i += DS_CPU_BLOCK) {
    int64_t m = MIN(DS_CPU_BLOCK, end - i);
    ds_cpu_load_block_f64(job->ti, job->in, i, 1, m, x);
    ds_cpu_unary_f64(job->fn, m, x, y, job->a, job->b);
    ds_cpu_store_block_f64(job->to, job->out, i, m, y);
  }
}

static DsStatus run_unary(const DsKernelCtx *ctx, DsMathUnaryFn fn, double a, double b)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (!ds_cpu_dtype_computable(in->dtype) || !ds_cpu_dtype_computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(in);
  if (n != ds_tensor_numel(out) || in->dtype != out->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  UnJob job = {fn, in->dtype, out->dtype, in->data, out->data, a, b};
  ds_parallel_for(ctx->pool, n,
                  ds_math_unary_is_costly(fn) ? DS_CPU_MATH_GRAIN : DS_CPU_PARALLEL_GRAIN,
                  unary_worker, &job);
  return DS_STATUS_OK;
}

/* The three ways a unary op takes its coefficients (the table's COEF column). */
static DsStatus run_unary_NONE(const DsKernelCtx *ctx, DsMathUnaryFn fn)
{
  return run_unary(ctx, fn, 0, 0);
}

/* clip: the bounds take the data's dtype, as MXNet compares against DType(a_min). */
static DsStatus run_unary_CLIP(const DsKernelCtx *ctx, DsMathUnaryFn fn)
{
  const DsClipParam *p = ctx->param;
  DsDType t = ctx->inputs[0].dtype;
  if (t == DS_DTYPE_FLOAT64 || !ds_cpu_dtype_computable(t))
    return run_unary(ctx, fn, p->a_min, p->a_max);
  return run_unary(ctx, fn, round_trip(t, p->a_min), round_trip(t, p->a_max));
}

/* The activations with coefficients: float dtypes only (their formulas mean nothing in
 * integers). */
static DsStatus run_unary_ACT(const DsKernelCtx *ctx, DsMathUnaryFn fn)
{
  const DsActParam *p = ctx->param;
  DsDType t = ctx->inputs[0].dtype;
  if (t != DS_DTYPE_FLOAT32 && t != DS_DTYPE_FLOAT64)
    return DS_STATUS_UNSUPPORTED;
  return run_unary(ctx, fn, p->alpha, p->beta);
}

/* One kernel per op of the table, registered under the op of the same id. */
#define UNARY_KERNEL(ID, COST, COEF, EXPR)                                                         \
  static DsStatus k_unary_##ID(const DsKernelCtx *ctx)                                             \
  {                                                                                                \
    return run_unary_##COEF(ctx, DS_MATH_UN_##ID);                                                 \
  }
DS_MATH_UNARY(UNARY_KERNEL)
#undef UNARY_KERNEL

/* ------------------------------------------------------------------------------------------ */
/* isnan, isinf, isposinf, isneginf: bool results */

typedef enum { PRED_NAN, PRED_INF, PRED_POSINF, PRED_NEGINF } Pred;

typedef struct {
  Pred pred;
  DsDType t;
  const char *in;
  uint8_t *out;
} PredJob;

#define PRED_LOOP(T)                                                                               \
  {                                                                                                \
    const T *restrict x = (const T *)job->in + begin;                                              \
    uint8_t *restrict o = job->out + begin;                                                        \
    int64_t n = end - begin;                                                                       \
    const T inf = (T)INFINITY;                                                                     \
    switch (job->pred) {                                                                           \
    case PRED_NAN:                                                                                 \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = x[i] != x[i];                                                                       \
      break;                                                                                       \
    case PRED_INF:                                                                                 \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = x[i] == inf || x[i] == -inf;                                                        \
      break;                                                                                       \
    case PRED_POSINF:                                                                              \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = x[i] == inf;                                                                        \
      break;                                                                                       \
    case PRED_NEGINF:                                                                              \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = x[i] == -inf;                                                                       \
      break;                                                                                       \
    }                                                                                              \
  }

static void pred_worker(void *ctx, int64_t begin, int64_t end)
{
  const PredJob *job = ctx;
  if (job->t == DS_DTYPE_FLOAT32)
    PRED_LOOP(float)
  else if (job->t == DS_DTYPE_FLOAT64)
    PRED_LOOP(double)
  else /* integers are never NaN or infinite */
    memset(job->out + begin, 0, (size_t)(end - begin));
}
#undef PRED_LOOP

static DsStatus run_predicate(const DsKernelCtx *ctx, Pred pred)
{
  const DsTensor *in = &ctx->inputs[0];
  DsTensor *out = &ctx->outputs[0];
  if (!ds_cpu_dtype_computable(in->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(in);
  if (out->dtype != DS_DTYPE_BOOL || ds_tensor_numel(out) != n)
    return DS_STATUS_INVALID_ARGUMENT;
  PredJob job = {pred, in->dtype, in->data, out->data};
  ds_parallel_for(ctx->pool, n, DS_CPU_PARALLEL_GRAIN, pred_worker, &job);
  return DS_STATUS_OK;
}

static DsStatus k_isnan(const DsKernelCtx *ctx)
{
  return run_predicate(ctx, PRED_NAN);
}
static DsStatus k_isinf(const DsKernelCtx *ctx)
{
  return run_predicate(ctx, PRED_INF);
}
static DsStatus k_isposinf(const DsKernelCtx *ctx)
{
  return run_predicate(ctx, PRED_POSINF);
}
static DsStatus k_isneginf(const DsKernelCtx *ctx)
{
  return run_predicate(ctx, PRED_NEGINF);
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
  DsTensor *out = &ctx->outputs[0];
  if (!ds_cpu_dtype_computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  FillJob job = {.out = out->data, .es = ds_dtype_size(out->dtype), .cell = 0};
  ds_cpu_store_block_f64(out->dtype, &job.cell, 0, 1, &value);
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
  uint8_t mask[DS_CPU_BLOCK];
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
  for (int64_t i = begin; i < end; i += DS_CPU_BLOCK) {
    int64_t m = MIN(DS_CPU_BLOCK, end - i);
    size_t off = (size_t)i * job->es;
    cond_mask(job->tc, job->cond, i, m, mask);
    sel(m, mask, job->x + off, job->y + off, job->out + off);
  }
}

static DsStatus k_where(const DsKernelCtx *ctx)
{
  const DsTensor *c = &ctx->inputs[0], *x = &ctx->inputs[1], *y = &ctx->inputs[2];
  DsTensor *out = &ctx->outputs[0];
  if (x->dtype != out->dtype || y->dtype != out->dtype || !ds_dtype_is_valid(c->dtype))
    return DS_STATUS_INVALID_ARGUMENT;
  if (ds_dtype_is_storage_only(c->dtype) || ds_dtype_is_storage_only(out->dtype))
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
/* _npi_where: condition, x and y broadcast together */

typedef struct {
  DsGeomBcast plan; /* condition, x, y */
  DsDType tc;
  size_t es;
  const char *cond, *x, *y;
  char *out;
  int64_t inner, chunk; /* the innermost dim's length; elements per work unit */
} NpWhereJob;

/* x and y each walk (stride 1) or stay (stride 0): four loops with the strides known, so each
 * vectorises. */
#define DEFINE_SELECT_STRIDED(NAME, T)                                                             \
  static void NAME(int64_t n, const uint8_t *restrict m, const void *px, int64_t sx,               \
                   const void *py, int64_t sy, void *po)                                           \
  {                                                                                                \
    const T *restrict x = px;                                                                      \
    const T *restrict y = py;                                                                      \
    T *restrict o = po;                                                                            \
    if (sx != 0 && sy != 0) {                                                                      \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = m[i] ? x[i] : y[i];                                                                 \
    } else if (sx != 0) {                                                                          \
      const T yv = y[0];                                                                           \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = m[i] ? x[i] : yv;                                                                   \
    } else if (sy != 0) {                                                                          \
      const T xv = x[0];                                                                           \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = m[i] ? xv : y[i];                                                                   \
    } else {                                                                                       \
      const T xv = x[0], yv = y[0];                                                                \
      for (int64_t i = 0; i < n; i++)                                                              \
        o[i] = m[i] ? xv : yv;                                                                     \
    }                                                                                              \
  }
DEFINE_SELECT_STRIDED(select_strided_1, uint8_t)
DEFINE_SELECT_STRIDED(select_strided_2, uint16_t)
DEFINE_SELECT_STRIDED(select_strided_4, uint32_t)
DEFINE_SELECT_STRIDED(select_strided_8, uint64_t)
#undef DEFINE_SELECT_STRIDED

/* Work units [begin, end): `chunk` consecutive output elements inside one row. */
static void np_where_worker(void *ctx, int64_t begin, int64_t end)
{
  const NpWhereJob *job = ctx;
  const DsGeomBcast *p = &job->plan;
  int last = p->ndim - 1;
  int64_t per_row = (job->inner + job->chunk - 1) / job->chunk;
  void (*sel)(int64_t, const uint8_t *restrict, const void *, int64_t, const void *, int64_t,
              void *) = job->es == 1   ? select_strided_1
                        : job->es == 2 ? select_strided_2
                        : job->es == 4 ? select_strided_4
                                       : select_strided_8;
  uint8_t mask[DS_CPU_BLOCK];
  for (int64_t u = begin; u < end; u++) {
    int64_t row = u / per_row, col = (u % per_row) * job->chunk;
    int64_t n = MIN(job->chunk, job->inner - col);
    int64_t off[3];
    for (int k = 0; k < 3; k++)
      off[k] = col * p->stride[k][last];
    int64_t rest = row;
    for (int d = last - 1; d >= 0; d--) {
      int64_t c = rest % p->shape[d];
      rest /= p->shape[d];
      for (int k = 0; k < 3; k++)
        off[k] += c * p->stride[k][d];
    }
    int64_t sc = p->stride[0][last], sx = p->stride[1][last], sy = p->stride[2][last];
    int64_t oo = row * job->inner + col;
    for (int64_t done = 0; done < n; done += DS_CPU_BLOCK) {
      int64_t m = MIN(DS_CPU_BLOCK, n - done);
      if (sc != 0) {
        cond_mask(job->tc, job->cond, off[0] + done, m, mask);
      } else {
        cond_mask(job->tc, job->cond, off[0], 1, mask);
        memset(mask + 1, mask[0], (size_t)(m - 1));
      }
      sel(m, mask, job->x + (size_t)(off[1] + done * sx) * job->es, sx,
          job->y + (size_t)(off[2] + done * sy) * job->es, sy,
          job->out + (size_t)(oo + done) * job->es);
    }
  }
}

static DsStatus k_np_where(const DsKernelCtx *ctx)
{
  const DsTensor *c = &ctx->inputs[0], *x = &ctx->inputs[1], *y = &ctx->inputs[2];
  DsTensor *out = &ctx->outputs[0];
  if (x->dtype != out->dtype || y->dtype != out->dtype || !ds_dtype_is_valid(c->dtype))
    return DS_STATUS_INVALID_ARGUMENT;
  if (ds_dtype_is_storage_only(c->dtype))
    return DS_STATUS_UNSUPPORTED;
  NpWhereJob job = {.tc = c->dtype,
                    .es = ds_dtype_size(out->dtype),
                    .cond = c->data,
                    .x = x->data,
                    .y = y->data,
                    .out = out->data};
  const DsTensor *ops[3] = {c, x, y};
  if (!ds_geom_broadcast(ops, 3, out, &job.plan))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t numel = ds_tensor_numel(out);
  if (numel == 0)
    return DS_STATUS_OK;
  job.inner = job.plan.shape[job.plan.ndim - 1];
  job.chunk = MAX(1, MIN(job.inner, (int64_t)DS_CPU_PARALLEL_GRAIN / 4));
  int64_t per_row = (job.inner + job.chunk - 1) / job.chunk;
  ds_parallel_for(ctx->pool, (numel / job.inner) * per_row,
                  MAX(1, (int64_t)DS_CPU_PARALLEL_GRAIN / job.chunk), np_where_worker, &job);
  return DS_STATUS_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* quantize_linear, dequantize_linear, dynamic_quantize_linear (ONNX's quantization) */

typedef struct {
  DsDType tx, ts, tz, to;
  const char *x, *scale, *zp;
  char *out;
  int64_t channels, inner; /* per-axis: element i uses (i / inner) % channels; else 1, 1 */
  double lo, hi;           /* quantize: the output dtype's range */
} QuantJob;

/* float32 data with a float32 scale computes in float, as ONNX's reference (NumPy float32
 * arithmetic) does, so ties round the same way; other dtypes compute in double. */
static void quantize_worker(void *ctx, int64_t begin, int64_t end)
{
  const QuantJob *job = ctx;
  bool f32 = job->tx == DS_DTYPE_FLOAT32 && job->ts == DS_DTYPE_FLOAT32;
  for (int64_t i = begin; i < end; i++) {
    int64_t c = (i / job->inner) % job->channels;
    double zp = ds_cpu_load_f64(job->tz, job->zp, c), q;
    if (f32)
      q = (double)rintf(((const float *)job->x)[i] / ((const float *)job->scale)[c]) + zp;
    else
      q = rint(ds_cpu_load_f64(job->tx, job->x, i) / ds_cpu_load_f64(job->ts, job->scale, c)) + zp;
    q = q < job->lo ? job->lo : (q > job->hi ? job->hi : q); /* NaN stays, stored as 0 */
    ds_cpu_store_f64(job->to, job->out + i * (int64_t)ds_dtype_size(job->to), q);
  }
}

static void dequantize_worker(void *ctx, int64_t begin, int64_t end)
{
  const QuantJob *job = ctx;
  for (int64_t i = begin; i < end; i++) {
    int64_t c = (i / job->inner) % job->channels;
    double v = ds_cpu_load_f64(job->tx, job->x, i) - ds_cpu_load_f64(job->tz, job->zp, c);
    if (job->to == DS_DTYPE_FLOAT32)
      ((float *)job->out)[i] = (float)v * ((const float *)job->scale)[c];
    else
      ds_cpu_store_f64(job->to, job->out + i * (int64_t)ds_dtype_size(job->to),
                       v * ds_cpu_load_f64(job->ts, job->scale, c));
  }
}

/* Checks the operands and sets the job's per-axis layout. */
static DsStatus quant_prepare(const DsKernelCtx *ctx, QuantJob *job)
{
  const DsQuantizeLinearParam *p = ctx->param;
  const DsTensor *x = &ctx->inputs[0], *s = &ctx->inputs[1], *z = &ctx->inputs[2];
  DsTensor *out = &ctx->outputs[0];
  if (!ds_cpu_dtype_computable(x->dtype) || !ds_cpu_dtype_computable(s->dtype) ||
      !ds_cpu_dtype_computable(z->dtype) || !ds_cpu_dtype_computable(out->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(x), ns = ds_tensor_numel(s);
  if (ds_tensor_numel(out) != n || ds_tensor_numel(z) != ns || s->ndim > 1 || ns < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  *job = (QuantJob){x->dtype, s->dtype,  z->dtype, out->dtype, x->data, s->data,
                    z->data,  out->data, 1,        1,          0,       0};
  if (ns > 1) {
    int axis = p->axis < 0 ? p->axis + x->ndim : p->axis;
    if (axis < 0 || axis >= x->ndim || x->shape[axis] != ns)
      return DS_STATUS_INVALID_ARGUMENT;
    job->channels = ns;
    job->inner = ds_shape_span(x->shape, axis + 1, x->ndim);
  }
  return DS_STATUS_OK;
}

static DsStatus k_quantize_linear(const DsKernelCtx *ctx)
{
  QuantJob job;
  DsStatus st = quant_prepare(ctx, &job);
  if (st != DS_STATUS_OK)
    return st;
  if (job.to != DS_DTYPE_UINT8 && job.to != DS_DTYPE_INT8)
    return DS_STATUS_UNSUPPORTED;
  job.lo = job.to == DS_DTYPE_UINT8 ? 0 : -128;
  job.hi = job.to == DS_DTYPE_UINT8 ? 255 : 127;
  ds_parallel_for(ctx->pool, ds_tensor_numel(&ctx->inputs[0]), DS_CPU_PARALLEL_GRAIN / 4,
                  quantize_worker, &job);
  return DS_STATUS_OK;
}

static DsStatus k_dequantize_linear(const DsKernelCtx *ctx)
{
  QuantJob job;
  DsStatus st = quant_prepare(ctx, &job);
  if (st != DS_STATUS_OK)
    return st;
  if (!ds_dtype_is_float(job.to) || job.to != job.ts)
    return DS_STATUS_INVALID_ARGUMENT;
  ds_parallel_for(ctx->pool, ds_tensor_numel(&ctx->inputs[0]), DS_CPU_PARALLEL_GRAIN / 4,
                  dequantize_worker, &job);
  return DS_STATUS_OK;
}

/* dynamic_quantize_linear: the range's partial minima and maxima over RANGE_PARTS fixed pieces,
 * then the quantization with the scale and zero point they give. */
#define RANGE_PARTS 16

typedef struct {
  const float *x;
  int64_t n;
  float lo[RANGE_PARTS], hi[RANGE_PARTS];
  float scale, zp;
  uint8_t *out;
} DynQuantJob;

static void dyn_range_worker(void *ctx, int64_t begin, int64_t end)
{
  DynQuantJob *job = ctx;
  for (int64_t u = begin; u < end; u++) {
    const float *x = job->x + job->n * u / RANGE_PARTS;
    int64_t m = job->n * (u + 1) / RANGE_PARTS - job->n * u / RANGE_PARTS;
    float lo = 0.0f, hi = 0.0f; /* the range always includes 0 */
    for (int64_t i = 0; i < m; i++) {
      lo = x[i] < lo ? x[i] : lo;
      hi = x[i] > hi ? x[i] : hi;
    }
    job->lo[u] = lo;
    job->hi[u] = hi;
  }
}

static void dyn_quantize_worker(void *ctx, int64_t begin, int64_t end)
{
  const DynQuantJob *job = ctx;
  for (int64_t i = begin; i < end; i++) {
    float q = rintf(job->x[i] / job->scale) + job->zp;
    q = q < 0.0f ? 0.0f : (q > 255.0f ? 255.0f : q);
    job->out[i] = q == q ? (uint8_t)q : 0;
  }
}

static DsStatus k_dynamic_quantize_linear(const DsKernelCtx *ctx)
{
  const DsTensor *x = &ctx->inputs[0];
  DsTensor *y = &ctx->outputs[0], *scale = &ctx->outputs[1], *zp = &ctx->outputs[2];
  if (x->dtype != DS_DTYPE_FLOAT32)
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(x);
  if (y->dtype != DS_DTYPE_UINT8 || ds_tensor_numel(y) != n || scale->dtype != DS_DTYPE_FLOAT32 ||
      ds_tensor_numel(scale) != 1 || zp->dtype != DS_DTYPE_UINT8 || ds_tensor_numel(zp) != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  DynQuantJob job = {.x = x->data, .n = n, .out = y->data};
  ds_parallel_for(ctx->pool, RANGE_PARTS, n >= (int64_t)DS_CPU_PARALLEL_GRAIN ? 1 : RANGE_PARTS,
                  dyn_range_worker, &job);
  float lo = 0.0f, hi = 0.0f;
  for (int u = 0; u < RANGE_PARTS; u++) {
    lo = job.lo[u] < lo ? job.lo[u] : lo;
    hi = job.hi[u] > hi ? job.hi[u] : hi;
  }
  /* ONNX's formulas in float32: an all-zero input has scale 0, whose zero point and data
   * quantize to 0 (0 / 0 is NaN, stored as 0). */
  job.scale = (hi - lo) / 255.0f;
  float zpf = rintf((0.0f - lo) / job.scale);
  zpf = zpf < 0.0f ? 0.0f : (zpf > 255.0f ? 255.0f : zpf);
  job.zp = zpf == zpf ? zpf : 0.0f;
  *(float *)scale->data = job.scale;
  *(uint8_t *)zp->data = (uint8_t)job.zp;
  ds_parallel_for(ctx->pool, n, DS_CPU_PARALLEL_GRAIN / 4, dyn_quantize_worker, &job);
  return DS_STATUS_OK;
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
  double acc[DS_CPU_BLOCK], x[DS_CPU_BLOCK];
  for (int64_t i = begin; i < end; i += DS_CPU_BLOCK) {
    int64_t m = MIN(DS_CPU_BLOCK, end - i);
    ds_cpu_load_block_f64(t, job->inputs[0].data, i, 1, m, acc);
    for (int k = 1; k < job->n_inputs; k++) {
      ds_cpu_load_block_f64(t, job->inputs[k].data, i, 1, m, x);
      for (int64_t j = 0; j < m; j++)
        acc[j] += x[j];
    }
    ds_cpu_store_block_f64(t, job->out->data, i, m, acc);
  }
}

static DsStatus k_add_n(const DsKernelCtx *ctx)
{
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
#define BINARY_REGISTER(ID, NAME, FN, RULE) table[DS_OP_##ID] = (DsKernel){k_binary_##ID, NULL};
  DS_OPS_BINARY(BINARY_REGISTER)
#undef BINARY_REGISTER
#define SCALAR_REGISTER(ID, NAME, ALIAS, FN, REVERSE) table[DS_OP_##ID] = (DsKernel){k_scalar, NULL};
  DS_OPS_SCALAR(SCALAR_REGISTER)
#undef SCALAR_REGISTER
#define UNARY_REGISTER(ID, COST, COEF, EXPR) table[DS_OP_##ID] = (DsKernel){k_unary_##ID, NULL};
  DS_MATH_UNARY(UNARY_REGISTER)
#undef UNARY_REGISTER
  table[DS_OP_IDENTITY] = (DsKernel){k_copy, NULL};
  table[DS_OP_BLOCK_GRAD] = (DsKernel){k_copy, NULL};
  table[DS_OP_ZEROS_LIKE] = (DsKernel){k_zeros_like, NULL};
  table[DS_OP_ONES_LIKE] = (DsKernel){k_ones_like, NULL};
  table[DS_OP_WHERE] = (DsKernel){k_where, NULL};
  table[DS_OP_ADD_N] = (DsKernel){k_add_n, NULL};
  table[DS_OP_DIV_SQRT_DIM] = (DsKernel){k_div_sqrt_dim, NULL};
  table[DS_OP_NP_WHERE] = (DsKernel){k_np_where, NULL};
  table[DS_OP_ISNAN] = (DsKernel){k_isnan, NULL};
  table[DS_OP_ISINF] = (DsKernel){k_isinf, NULL};
  table[DS_OP_ISPOSINF] = (DsKernel){k_isposinf, NULL};
  table[DS_OP_ISNEGINF] = (DsKernel){k_isneginf, NULL};
  table[DS_OP_QUANTIZE_LINEAR] = (DsKernel){k_quantize_linear, NULL};
  table[DS_OP_DEQUANTIZE_LINEAR] = (DsKernel){k_dequantize_linear, NULL};
  table[DS_OP_DYNAMIC_QUANTIZE_LINEAR] = (DsKernel){k_dynamic_quantize_linear, NULL};
}
