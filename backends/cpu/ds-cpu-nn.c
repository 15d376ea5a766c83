/* ds-cpu-nn.c: CPU kernels of the neural-network family (float32; the matrix products and
 * Pooling also float64, and _npi_matmul and max pooling the integer dtypes).
 *
 * Matrix products go through ds_cpu_sgemm() (ds-cpu-gemm.h). The elementwise-style kernels
 * (activations, normalisations, softmax, pooling) keep their inner loops simple and
 * restrict-qualified over contiguous floats so GCC vectorises them, use the ds_vmath_*
 * functions instead of libm, and split their outer loop across the pool once the work is
 * over DS_CPU_PARALLEL_GRAIN elements. Parallel bodies never call BLAS.
 *
 * Every kernel computes in float32 and returns DS_STATUS_UNSUPPORTED for other float dtypes,
 * except Dropout, which copies any dtype (its mask may be float16, float32 or float64). Index
 * inputs take any of float32, float64, int8, uint8, int32, int64: Embedding's indices and
 * softmax's lengths.
 */
/* GCC only turns `c ? a : b * s` into a vector select when evaluating `b * s` on every lane
 * cannot raise an FP exception it would not otherwise raise; nothing here reads the FP
 * exception flags, so let it. Before any include, so the inline math gets it too. */
#pragma GCC optimize("no-trapping-math")

#include <float.h>
#include <math.h>
#include <string.h>

#include "ds-cpu-gemm.h"
#include "ds-cpu-packed-gemm.h"
#include "ds-cpu.h"
#include "ds-cpu-unary.h"
#include "ds-geometry-nn.h"
#include "ds-geometry-reduce.h"
#include "ds-geometry-tensor.h"

static bool all_f32(const DsTensor *t, int n)
{
  for (int i = 0; i < n; i++)
    if (t[i].dtype != DS_DTYPE_FLOAT32)
      return false;
  return true;
}

/* Items per parallel chunk when each item costs `cost` elements of work. */
static int64_t grain_for(int64_t cost)
{
  int64_t g = DS_CPU_PARALLEL_GRAIN / (cost > 0 ? cost : 1);
  return g < 1 ? 1 : g;
}

/* Element i of an index-like tensor as a double (Embedding indices, softmax lengths). */
static bool read_index(const DsTensor *t, int64_t i, double *out)
{
  switch (t->dtype) {
  case DS_DTYPE_FLOAT32:
    *out = ((const float *)t->data)[i];
    return true;
  case DS_DTYPE_FLOAT64:
    *out = ((const double *)t->data)[i];
    return true;
  case DS_DTYPE_INT32:
    *out = ((const int32_t *)t->data)[i];
    return true;
  case DS_DTYPE_INT64:
    *out = (double)((const int64_t *)t->data)[i];
    return true;
  case DS_DTYPE_INT8:
    *out = ((const int8_t *)t->data)[i];
    return true;
  case DS_DTYPE_UINT8:
    *out = ((const uint8_t *)t->data)[i];
    return true;
  default:
    return false;
  }
}

static bool index_dtype_ok(DsDType d)
{
  return d == DS_DTYPE_FLOAT32 || d == DS_DTYPE_FLOAT64 || d == DS_DTYPE_INT32 ||
         d == DS_DTYPE_INT64 || d == DS_DTYPE_INT8 || d == DS_DTYPE_UINT8;
}

/* Sum and max of n contiguous floats with eight independent lanes, which GCC turns into one
 * vector accumulator (a single scalar accumulator would serialise on the add latency and not
 * vectorise without -ffast-math). */
static float sum_f32(const float *restrict x, int64_t n)
{
  float acc[8] = {0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++)
      acc[j] += x[i + j];
  float s = 0.0f;
  for (; i < n; i++)
    s += x[i];
  return s + ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

static float max_f32(const float *restrict x, int64_t n)
{
  float acc[8];
  for (int j = 0; j < 8; j++)
    acc[j] = -INFINITY;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++)
      acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
  float m = -INFINITY;
  for (; i < n; i++)
    m = x[i] > m ? x[i] : m;
  for (int j = 0; j < 8; j++)
    m = acc[j] > m ? acc[j] : m;
  return m;
}

static float min_f32(const float *restrict x, int64_t n)
{
  float acc[8];
  for (int j = 0; j < 8; j++)
    acc[j] = INFINITY;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++)
      acc[j] = x[i + j] < acc[j] ? x[i + j] : acc[j];
  float m = INFINITY;
  for (; i < n; i++)
    m = x[i] < m ? x[i] : m;
  for (int j = 0; j < 8; j++)
    m = acc[j] < m ? acc[j] : m;
  return m;
}

/* Sum of (x - mean)^2 over n floats, eight lanes. */
static float sqdev_f32(const float *restrict x, int64_t n, float mean)
{
  float acc[8] = {0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; j++) {
      float d = x[i + j] - mean;
      acc[j] += d * d;
    }
  float s = 0.0f;
  for (; i < n; i++) {
    float d = x[i] - mean;
    s += d * d;
  }
  return s + ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
}

/* Splits a shape at `axis` into (outer, len, inner). */
static void split_axis(const DsTensor *t, int axis, int64_t *outer, int64_t *len, int64_t *inner)
{
  *outer = ds_shape_span(t->shape, 0, axis);
  *len = t->shape[axis];
  *inner = ds_shape_span(t->shape, axis + 1, t->ndim);
}

/* --- FullyConnected, dot, batch_dot ------------------------------------------------------ */

typedef struct {
  const float *bias;
  float *out;
  int64_t cols;
} BiasRowsJob;

static void bias_rows(void *data, int64_t begin, int64_t end)
{
  const BiasRowsJob *job = data;
  const int64_t cols = job->cols;
  for (int64_t r = begin; r < end; r++) {
    float *restrict y = job->out + r * cols;
    const float *restrict b = job->bias;
    for (int64_t j = 0; j < cols; j++)
      y[j] = b[j];
  }
}

/* C[m x n] = A[m x k] * op(B) (+ bias) through the packed path (ds-cpu-packed-gemm.h) when
 * `b` is a constant float32 matrix and the executor gave the workspace; false otherwise, and
 * the caller multiplies with BLAS. */
static bool packed_gemm(const DsKernelCtx *ctx, const DsTensor *b, bool trans_b, int64_t m,
                        int64_t n, int64_t k, const float *a, const float *bias, float *c)
{
  if (!ds_cpu_packed_sgemm_suits(m) || ctx->workspace == NULL)
    return false;
  const DsPackedMatrix *packed = ds_cpu_pack_constant(b, trans_b, k, n, trans_b ? k : n);
  if (packed == NULL)
    return false;
  ds_cpu_packed_sgemm(m, a, k, packed, bias, false, c, n, ctx->workspace, ctx->pool);
  return true;
}

static size_t fully_connected_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                                        const DsTensor *outputs, int n_outputs)
{
  const DsFullyConnectedParam *p = param;
  (void)n_inputs, (void)outputs, (void)n_outputs;
  DsGeomGemm g;
  if (inputs[0].dtype != DS_DTYPE_FLOAT32 ||
      !ds_geom_fully_connected(&inputs[0], &inputs[1], NULL, NULL, p->num_hidden, p->flatten, &g))
    return 0;
  return ds_cpu_packed_sgemm_suits(g.m) ? ds_cpu_packed_sgemm_workspace(g.m, g.k) : 0;
}

/* float64: y = x W^T, then the bias added row by row (gradient checks run in double). */
static DsStatus fully_connected_f64(const DsKernelCtx *ctx, const DsGeomGemm *g)
{
  const DsFullyConnectedParam *p = ctx->param;
  const DsTensor *x = &ctx->inputs[0], *w = &ctx->inputs[1];
  double *y = ctx->outputs[0].data;
  DsStatus st = ds_cpu_dgemm(false, true, g->m, g->n, g->k, 1.0, x->data, g->lda, w->data, g->ldb,
                             0.0, y, g->n);
  if (st != DS_STATUS_OK || p->no_bias)
    return st;
  const double *bias = ctx->inputs[2].data;
  for (int64_t i = 0; i < g->m; i++)
    for (int64_t j = 0; j < g->n; j++)
      y[i * g->n + j] += bias[j];
  return DS_STATUS_OK;
}

static DsStatus fully_connected_run(const DsKernelCtx *ctx)
{
  const DsFullyConnectedParam *p = ctx->param;
  int n_in = p->no_bias ? 2 : 3;
  bool f64 = true;
  for (int i = 0; i < n_in; i++)
    f64 = f64 && ctx->inputs[i].dtype == DS_DTYPE_FLOAT64;
  if (f64 && ctx->outputs[0].dtype == DS_DTYPE_FLOAT64) {
    DsGeomGemm g;
    if (!ds_geom_fully_connected(&ctx->inputs[0], &ctx->inputs[1],
                                 p->no_bias ? NULL : &ctx->inputs[2], &ctx->outputs[0],
                                 p->num_hidden, p->flatten, &g))
      return DS_STATUS_INVALID_ARGUMENT;
    return fully_connected_f64(ctx, &g);
  }
  if (!all_f32(ctx->inputs, n_in) || !all_f32(ctx->outputs, 1))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0], *w = &ctx->inputs[1];
  DsTensor *y = &ctx->outputs[0];
  DsGeomGemm g;
  if (!ds_geom_fully_connected(x, w, p->no_bias ? NULL : &ctx->inputs[2], y, p->num_hidden,
                               p->flatten, &g))
    return DS_STATUS_INVALID_ARGUMENT;
  const float *bias = p->no_bias ? NULL : ctx->inputs[2].data;
  if (packed_gemm(ctx, w, true, g.m, g.n, g.k, x->data, bias, y->data))
    return DS_STATUS_OK;
  float beta = 0.0f;
  if (bias != NULL) {
    BiasRowsJob job = {bias, y->data, g.n};
    ds_parallel_for(ctx->pool, g.m, grain_for(g.n), bias_rows, &job);
    beta = 1.0f;
  }
  return ds_cpu_sgemm(false, true, g.m, g.n, g.k, 1.0f, x->data, g.lda, w->data, g.ldb, beta,
                      y->data, g.n);
}

/* Both operands and the output are float32, or all float64. */
static bool gemm_dtypes(const DsTensor *a, const DsTensor *b, const DsTensor *y)
{
  return (a->dtype == DS_DTYPE_FLOAT32 || a->dtype == DS_DTYPE_FLOAT64) && b->dtype == a->dtype &&
         y->dtype == a->dtype;
}

/* C = op(A) * op(B) (beta 0) in `dtype`, float32 or float64; pointers are element-typed by it. */
static DsStatus gemm_typed(DsDType dtype, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                           const void *a, int64_t lda, const void *b, int64_t ldb, void *c,
                           int64_t ldc)
{
  if (dtype == DS_DTYPE_FLOAT64)
    return ds_cpu_dgemm(ta, tb, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
  return ds_cpu_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}

/* The packed path reads A untransposed: rows of lhs flattened to (m, k). */
static size_t dot_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                            const DsTensor *outputs, int n_outputs)
{
  const DsDotParam *p = param;
  (void)n_inputs, (void)outputs, (void)n_outputs;
  if (inputs[0].dtype != DS_DTYPE_FLOAT32 || p->transpose_a || inputs[0].ndim < 1)
    return 0;
  int64_t k = inputs[0].shape[inputs[0].ndim - 1];
  int64_t m = k > 0 ? ds_tensor_numel(&inputs[0]) / k : 0;
  return ds_cpu_packed_sgemm_suits(m) ? ds_cpu_packed_sgemm_workspace(m, k) : 0;
}

static DsStatus dot_run(const DsKernelCtx *ctx)
{
  const DsDotParam *p = ctx->param;
  const DsTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  if (!gemm_dtypes(a, b, &ctx->outputs[0]))
    return DS_STATUS_UNSUPPORTED;
  DsGeomGemm g;
  if (!ds_geom_dot(a, b, &ctx->outputs[0], p->transpose_a, p->transpose_b, &g))
    return DS_STATUS_INVALID_ARGUMENT;
  if (a->dtype == DS_DTYPE_FLOAT32 && !p->transpose_a &&
      packed_gemm(ctx, b, p->transpose_b, g.m, g.n, g.k, a->data, NULL, ctx->outputs[0].data))
    return DS_STATUS_OK;
  return gemm_typed(a->dtype, p->transpose_a, p->transpose_b, g.m, g.n, g.k, a->data, g.lda,
                    b->data, g.ldb, ctx->outputs[0].data, g.n);
}

static DsStatus batch_dot_run(const DsKernelCtx *ctx)
{
  const DsDotParam *p = ctx->param;
  const DsTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  DsTensor *y = &ctx->outputs[0];
  if (!gemm_dtypes(a, b, y))
    return DS_STATUS_UNSUPPORTED;
  DsGeomGemm g;
  if (!ds_geom_batch_dot(a, b, y, p->transpose_a, p->transpose_b, &g))
    return DS_STATUS_INVALID_ARGUMENT;
  const size_t es = ds_dtype_size(a->dtype);
  const char *pa = a->data, *pb = b->data;
  char *py = y->data;
  for (int64_t i = 0; i < g.count; i++) {
    DsStatus st = gemm_typed(
        a->dtype, p->transpose_a, p->transpose_b, g.m, g.n, g.k, pa + (size_t)(i * g.a_stride) * es,
        g.lda, pb + (size_t)(i * g.b_stride) * es, g.ldb, py + (size_t)(i * g.m * g.n) * es, g.n);
    if (st != DS_STATUS_OK)
      return st;
  }
  return DS_STATUS_OK;
}

/* --- _npi_matmul -------------------------------------------------------------------------- */

typedef struct {
  const DsGeomMatmul *g;
  DsDType dtype;
  const void *a, *b;
  void *y;
} MatmulIntJob;

/* Integer products, rows r = (product, row): sums wrap as the dtype's arithmetic would. */
#define MATMUL_INT_ROWS(T)                                                                         \
  for (int64_t r = begin; r < end; r++) {                                                          \
    int64_t i = r / g->m, row = r % g->m, am, bm;                                                  \
    ds_geom_matmul_offsets(g, i, &am, &bm);                                                        \
    const T *x = (const T *)job->a + am * g->m * g->k + row * g->k;                                \
    const T *w = (const T *)job->b + bm * g->k * g->n;                                             \
    T *out = (T *)job->y + r * g->n;                                                               \
    for (int64_t j = 0; j < g->n; j++) {                                                           \
      uint64_t acc = 0;                                                                            \
      for (int64_t p = 0; p < g->k; p++)                                                           \
        acc += (uint64_t)(int64_t)x[p] * (uint64_t)(int64_t)w[p * g->n + j];                       \
      out[j] = (T)acc;                                                                             \
    }                                                                                              \
  }

static void matmul_int_rows(void *data, int64_t begin, int64_t end)
{
  const MatmulIntJob *job = data;
  const DsGeomMatmul *g = job->g;
  switch (job->dtype) {
  case DS_DTYPE_INT32:
    MATMUL_INT_ROWS(int32_t)
    break;
  case DS_DTYPE_INT64:
    MATMUL_INT_ROWS(int64_t)
    break;
  case DS_DTYPE_INT8:
    MATMUL_INT_ROWS(int8_t)
    break;
  default:
    MATMUL_INT_ROWS(uint8_t)
    break;
  }
}

/* Only a batch against one float32 matrix (the packed path's case) needs a workspace. */
static size_t matmul_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                               const DsTensor *outputs, int n_outputs)
{
  (void)param, (void)n_inputs, (void)n_outputs;
  DsGeomMatmul g;
  if (inputs[0].dtype != DS_DTYPE_FLOAT32 ||
      !ds_geom_matmul(&inputs[0], &inputs[1], &outputs[0], &g) || !g.one_gemm)
    return 0;
  return ds_cpu_packed_sgemm_suits(g.count * g.m)
             ? ds_cpu_packed_sgemm_workspace(g.count * g.m, g.k)
             : 0;
}

static DsStatus matmul_run(const DsKernelCtx *ctx)
{
  const DsTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  DsTensor *y = &ctx->outputs[0];
  const DsDType t = a->dtype;
  if (b->dtype != t || y->dtype != t || !ds_cpu_dtype_computable(t) || t == DS_DTYPE_BOOL)
    return DS_STATUS_UNSUPPORTED;
  DsGeomMatmul g;
  if (!ds_geom_matmul(a, b, y, &g))
    return DS_STATUS_INVALID_ARGUMENT;
  if (t != DS_DTYPE_FLOAT32 && t != DS_DTYPE_FLOAT64) {
    MatmulIntJob job = {&g, t, a->data, b->data, y->data};
    ds_parallel_for(ctx->pool, g.count * g.m, grain_for(g.n * g.k), matmul_int_rows, &job);
    return DS_STATUS_OK;
  }
  /* A batch against one matrix (N-D x 2-D, the dense layers of a transformer) is one GEMM
   * over every row: the operand and the output are contiguous in that order already. */
  if (g.one_gemm) {
    if (t == DS_DTYPE_FLOAT32 &&
        packed_gemm(ctx, b, false, g.count * g.m, g.n, g.k, a->data, NULL, y->data))
      return DS_STATUS_OK;
    return gemm_typed(t, false, false, g.count * g.m, g.n, g.k, a->data, g.k, b->data, g.n, y->data,
                      g.n);
  }
  const size_t es = ds_dtype_size(t);
  for (int64_t i = 0; i < g.count; i++) {
    int64_t am, bm;
    ds_geom_matmul_offsets(&g, i, &am, &bm);
    DsStatus st = gemm_typed(t, false, false, g.m, g.n, g.k,
                             (const char *)a->data + (size_t)(am * g.m * g.k) * es, g.k,
                             (const char *)b->data + (size_t)(bm * g.k * g.n) * es, g.n,
                             (char *)y->data + (size_t)(i * g.m * g.n) * es, g.n);
    if (st != DS_STATUS_OK)
      return st;
  }
  return DS_STATUS_OK;
}

/* --- Activation, LeakyReLU ------------------------------------------------------------- */

/* Activation's and LeakyReLU's formulas are core/ds-math-unary.h's (ds-cpu-unary.c's loops). */
typedef struct {
  const float *x;
  float *y;
  DsMathUnaryFn fn;
  float slope;
} UnaryJob;

static void unary_range(void *data, int64_t begin, int64_t end)
{
  const UnaryJob *job = data;
  ds_cpu_unary_f32(job->fn, end - begin, job->x + begin, job->y + begin, job->slope, 0.0f);
}

static DsMathUnaryFn activation_fn(DsActType type)
{
  switch (type) {
  case DS_ACT_RELU:
    return DS_MATH_UN_ACT_RELU;
  case DS_ACT_SIGMOID:
    return DS_MATH_UN_ACT_SIGMOID;
  case DS_ACT_TANH:
    return DS_MATH_UN_TANH;
  case DS_ACT_SOFTRELU:
    return DS_MATH_UN_ACT_SOFTRELU;
  case DS_ACT_SOFTSIGN:
    return DS_MATH_UN_SOFTSIGN;
  case DS_ACT_LOG_SIGMOID:
    return DS_MATH_UN_ACT_LOG_SIGMOID;
  case DS_ACT_MISH:
    return DS_MATH_UN_ACT_MISH;
  }
  return DS_MATH_UN_COUNT;
}

/* Both tensors float64: the unary formulas in double, for gradient checks. */
static bool both_f64(const DsTensor *x, const DsTensor *y)
{
  return x->dtype == DS_DTYPE_FLOAT64 && y->dtype == DS_DTYPE_FLOAT64 &&
         ds_tensor_numel(x) == ds_tensor_numel(y);
}

static DsStatus activation_run(const DsKernelCtx *ctx)
{
  const DsActivationParam *p = ctx->param;
  if (both_f64(&ctx->inputs[0], &ctx->outputs[0]) && activation_fn(p->act_type) != DS_MATH_UN_COUNT) {
    ds_cpu_unary_f64(activation_fn(p->act_type), ds_tensor_numel(&ctx->inputs[0]),
                     ctx->inputs[0].data, ctx->outputs[0].data, 0.0, 0.0);
    return DS_STATUS_OK;
  }
  if (!all_f32(ctx->inputs, 1) || !all_f32(ctx->outputs, 1))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(&ctx->inputs[0]);
  DsMathUnaryFn fn = activation_fn(p->act_type);
  if (ds_tensor_numel(&ctx->outputs[0]) != n || fn == DS_MATH_UN_COUNT)
    return DS_STATUS_INVALID_ARGUMENT;
  UnaryJob job = {ctx->inputs[0].data, ctx->outputs[0].data, fn, 0.0f};
  ds_parallel_for(ctx->pool, n,
                  ds_math_unary_is_costly(fn) ? DS_CPU_MATH_GRAIN : DS_CPU_PARALLEL_GRAIN,
                  unary_range, &job);
  return DS_STATUS_OK;
}

static DsMathUnaryFn leaky_fn(DsLeakyType type)
{
  switch (type) {
  case DS_LEAKY_ELU:
    return DS_MATH_UN_LEAKY_ELU;
  case DS_LEAKY_SELU:
    return DS_MATH_UN_LEAKY_SELU;
  case DS_LEAKY_GELU:
    return DS_MATH_UN_LEAKY_GELU;
  default: /* leaky, rrelu, and prelu with one slope */
    return DS_MATH_UN_LEAKY;
  }
}

typedef struct {
  const float *x;
  const float *gamma;
  float *y;
  int64_t channels, inner;
} PreluJob;

/* Rows r = (outer index, channel): y = x > 0 ? x : x * gamma[channel]. */
static void prelu_rows(void *data, int64_t begin, int64_t end)
{
  const PreluJob *job = data;
  const int64_t inner = job->inner;
  for (int64_t r = begin; r < end; r++) {
    const float g = job->gamma[r % job->channels];
    const float *restrict x = job->x + r * inner;
    float *restrict y = job->y + r * inner;
    for (int64_t i = 0; i < inner; i++)
      y[i] = x[i] > 0.0f ? x[i] : x[i] * g;
  }
}

static DsStatus leaky_relu_run(const DsKernelCtx *ctx)
{
  const DsLeakyReLUParam *p = ctx->param;
  int n_in = p->act_type == DS_LEAKY_PRELU ? 2 : 1;
  int n_out = p->act_type == DS_LEAKY_RRELU ? 2 : 1;
  if (n_in == 1 && n_out == 1 && both_f64(&ctx->inputs[0], &ctx->outputs[0])) {
    ds_cpu_unary_f64(leaky_fn(p->act_type), ds_tensor_numel(&ctx->inputs[0]), ctx->inputs[0].data,
                     ctx->outputs[0].data, p->slope, 0.0);
    return DS_STATUS_OK;
  }
  if (!all_f32(ctx->inputs, n_in) || !all_f32(ctx->outputs, n_out))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  int64_t n = ds_tensor_numel(x);
  if (ds_tensor_numel(&ctx->outputs[0]) != n)
    return DS_STATUS_INVALID_ARGUMENT;
  float slope = (float)p->slope;
  if (p->act_type == DS_LEAKY_RRELU)
    slope = (float)((p->lower_bound + p->upper_bound) / 2.0);
  if (p->act_type == DS_LEAKY_PRELU) {
    const DsTensor *gamma = &ctx->inputs[1];
    int64_t ng = ds_tensor_numel(gamma);
    if (ng == 1) {
      slope = *(const float *)gamma->data;
    } else {
      /* MXNet lines a 1-D gamma up with axis 1 (channels), or axis 0 when axis 1 does not
       * match (its expand_shape rule). */
      int axis =
          x->ndim >= 2 && x->shape[1] == ng ? 1 : (x->ndim >= 1 && x->shape[0] == ng ? 0 : -1);
      if (axis < 0)
        return DS_STATUS_INVALID_ARGUMENT;
      PreluJob job = {x->data, gamma->data, ctx->outputs[0].data, ng,
                      ds_shape_span(x->shape, axis + 1, x->ndim)};
      int64_t rows = ds_shape_span(x->shape, 0, axis + 1);
      ds_parallel_for(ctx->pool, rows, grain_for(job.inner), prelu_rows, &job);
      return DS_STATUS_OK;
    }
  }
  UnaryJob job = {x->data, ctx->outputs[0].data, leaky_fn(p->act_type), slope};
  ds_parallel_for(ctx->pool, n, DS_CPU_PARALLEL_GRAIN, unary_range, &job);
  if (p->act_type == DS_LEAKY_RRELU) /* the mask holds the slope used: the mean at inference */
    ds_vmath_fill(ctx->outputs[1].data, ds_tensor_numel(&ctx->outputs[1]), slope);
  return DS_STATUS_OK;
}

/* --- BatchNorm, LayerNorm ----------------------------------------------------------------- */

typedef struct {
  const float *x, *mean, *scale, *beta;
  float *y;
  int64_t channels, inner;
} AffineJob;

/* y = (x - mean[c]) * scale[c] + beta[c] over rows r = (outer, c) of `inner` floats. */
static void affine_planes(void *data, int64_t begin, int64_t end)
{
  const AffineJob *job = data;
  const int64_t inner = job->inner;
  for (int64_t r = begin; r < end; r++) {
    int64_t c = r % job->channels;
    const float m = job->mean[c], s = job->scale[c], b = job->beta[c];
    const float *restrict x = job->x + r * inner;
    float *restrict y = job->y + r * inner;
    for (int64_t i = 0; i < inner; i++)
      y[i] = (x[i] - m) * s + b;
  }
}

/* The same with the channel as the innermost dim: rows of `channels` floats. */
static void affine_rows(void *data, int64_t begin, int64_t end)
{
  const AffineJob *job = data;
  const float *restrict m = job->mean, *restrict s = job->scale, *restrict b = job->beta;
  const int64_t channels = job->channels;
  for (int64_t r = begin; r < end; r++) {
    const float *restrict x = job->x + r * channels;
    float *restrict y = job->y + r * channels;
    for (int64_t c = 0; c < channels; c++)
      y[c] = (x[c] - m[c]) * s[c] + b[c];
  }
}

static size_t batch_norm_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                                   const DsTensor *outputs, int n_outputs)
{
  const DsBatchNormParam *p = param;
  int axis = ds_geom_axis(p->axis, inputs[0].ndim);
  if (axis < 0)
    return 0;
  return (size_t)inputs[0].shape[axis] * sizeof(float);
}

static DsStatus batch_norm_run(const DsKernelCtx *ctx)
{
  const DsBatchNormParam *p = ctx->param;
  if (!all_f32(ctx->inputs, 5) || !all_f32(ctx->outputs, 3))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  DsGeomAxis ax;
  if (!ds_geom_axis_split(x, p->axis, false, &ax) || !ds_geom_same_shape(x, &ctx->outputs[0]))
    return DS_STATUS_INVALID_ARGUMENT;
  const int64_t outer = ax.outer, channels = ax.len, inner = ax.inner;
  for (int i = 1; i < 5; i++)
    if (ds_tensor_numel(&ctx->inputs[i]) != channels)
      return DS_STATUS_INVALID_ARGUMENT;
  if (channels > 0 && ctx->workspace == NULL)
    return DS_STATUS_INVALID_ARGUMENT;
  const float *gamma = ctx->inputs[1].data, *mean = ctx->inputs[3].data, *var = ctx->inputs[4].data;
  float *scale = ctx->workspace;
  /* Inference normalises with the moving statistics, whatever use_global_stats says. */
  for (int64_t c = 0; c < channels; c++) {
    float g = p->fix_gamma ? 1.0f : gamma[c];
    scale[c] = g / sqrtf(var[c] + (float)p->eps);
  }
  AffineJob job = {x->data,  mean, scale, ctx->inputs[2].data, ctx->outputs[0].data,
                   channels, inner};
  if (inner == 1)
    ds_parallel_for(ctx->pool, outer, grain_for(channels), affine_rows, &job);
  else
    ds_parallel_for(ctx->pool, outer * channels, grain_for(inner), affine_planes, &job);
  /* The hidden mean and var outputs report the statistics used: the moving ones. */
  for (int i = 1; i < 3; i++) {
    if (ds_tensor_numel(&ctx->outputs[i]) != channels)
      return DS_STATUS_INVALID_ARGUMENT;
    memcpy(ctx->outputs[i].data, ctx->inputs[i + 2].data, (size_t)channels * sizeof(float));
  }
  return DS_STATUS_OK;
}

typedef struct {
  const float *x, *gamma, *beta;
  float *y, *mean, *std;
  int64_t len, inner;
  float eps;
} LayerNormJob;

/* Normalises rows of `len` contiguous floats (axis is the last dim). */
static void layer_norm_rows(void *data, int64_t begin, int64_t end)
{
  const LayerNormJob *job = data;
  const int64_t len = job->len;
  const float *restrict g = job->gamma, *restrict b = job->beta;
  for (int64_t r = begin; r < end; r++) {
    const float *restrict x = job->x + r * len;
    float *restrict y = job->y + r * len;
    float mean = sum_f32(x, len) / (float)len;
    float var = sqdev_f32(x, len, mean) / (float)len;
    float std = sqrtf(var + job->eps);
    float rstd = 1.0f / std;
    for (int64_t i = 0; i < len; i++)
      y[i] = (x[i] - mean) * rstd * g[i] + b[i];
    if (job->mean != NULL)
      job->mean[r] = mean;
    if (job->std != NULL)
      job->std[r] = std;
  }
}

#define LN_BLOCK 64

/* The axis is not last: outer index o, block of `inner` positions; statistics run down the
 * axis with the inner positions as vector lanes. */
static void layer_norm_strided(void *data, int64_t begin, int64_t end)
{
  const LayerNormJob *job = data;
  const int64_t len = job->len, inner = job->inner;
  const int64_t blocks = (inner + LN_BLOCK - 1) / LN_BLOCK;
  for (int64_t t = begin; t < end; t++) {
    int64_t o = t / blocks, i0 = (t % blocks) * LN_BLOCK;
    int64_t nb = inner - i0 < LN_BLOCK ? inner - i0 : LN_BLOCK;
    const float *x = job->x + o * len * inner + i0;
    float *y = job->y + o * len * inner + i0;
    float mean[LN_BLOCK], rstd[LN_BLOCK], std[LN_BLOCK];
    for (int64_t i = 0; i < nb; i++)
      mean[i] = 0.0f;
    for (int64_t k = 0; k < len; k++) {
      const float *restrict row = x + k * inner;
      for (int64_t i = 0; i < nb; i++)
        mean[i] += row[i];
    }
    for (int64_t i = 0; i < nb; i++) {
      mean[i] /= (float)len;
      rstd[i] = 0.0f;
    }
    for (int64_t k = 0; k < len; k++) {
      const float *restrict row = x + k * inner;
      for (int64_t i = 0; i < nb; i++) {
        float d = row[i] - mean[i];
        rstd[i] += d * d;
      }
    }
    for (int64_t i = 0; i < nb; i++) {
      std[i] = sqrtf(rstd[i] / (float)len + job->eps);
      rstd[i] = 1.0f / std[i];
    }
    for (int64_t k = 0; k < len; k++) {
      const float *restrict row = x + k * inner;
      float *restrict out = y + k * inner;
      const float gk = job->gamma[k], bk = job->beta[k];
      for (int64_t i = 0; i < nb; i++)
        out[i] = (row[i] - mean[i]) * rstd[i] * gk + bk;
    }
    for (int64_t i = 0; i < nb; i++) {
      if (job->mean != NULL)
        job->mean[o * inner + i0 + i] = mean[i];
      if (job->std != NULL)
        job->std[o * inner + i0 + i] = std[i];
    }
  }
}

/* float64, one position at a time, two passes (gradient checks run in double). */
static void layer_norm_f64(const DsKernelCtx *ctx, int64_t outer, int64_t len, int64_t inner,
                           double eps)
{
  const double *x = ctx->inputs[0].data, *gamma = ctx->inputs[1].data, *beta = ctx->inputs[2].data;
  double *y = ctx->outputs[0].data, *mean_out = ctx->outputs[1].data, *std_out = ctx->outputs[2].data;
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t i = 0; i < inner; i++) {
      const int64_t base = o * len * inner + i;
      double mean = 0.0, var = 0.0;
      for (int64_t k = 0; k < len; k++)
        mean += x[base + k * inner];
      mean /= (double)len;
      for (int64_t k = 0; k < len; k++)
        var += (x[base + k * inner] - mean) * (x[base + k * inner] - mean);
      double std = sqrt(var / (double)len + eps);
      for (int64_t k = 0; k < len; k++)
        y[base + k * inner] = (x[base + k * inner] - mean) / std * gamma[k] + beta[k];
      mean_out[o * inner + i] = mean;
      std_out[o * inner + i] = std;
    }
  }
}

static DsStatus layer_norm_run(const DsKernelCtx *ctx)
{
  const DsLayerNormParam *p = ctx->param;
  bool f64 = true;
  for (int i = 0; i < 3; i++)
    f64 = f64 && ctx->inputs[i].dtype == DS_DTYPE_FLOAT64 && ctx->outputs[i].dtype == DS_DTYPE_FLOAT64;
  if (!f64 && (!all_f32(ctx->inputs, 3) || !all_f32(ctx->outputs, 3)))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  DsGeomAxis ax;
  if (!ds_geom_axis_split(x, p->axis, p->trailing_axes, &ax) ||
      !ds_geom_same_shape(x, &ctx->outputs[0]))
    return DS_STATUS_INVALID_ARGUMENT;
  const int64_t outer = ax.outer, len = ax.len, inner = ax.inner;
  if (ds_tensor_numel(&ctx->inputs[1]) != len || ds_tensor_numel(&ctx->inputs[2]) != len)
    return DS_STATUS_INVALID_ARGUMENT;
  for (int i = 1; i < 3; i++)
    if (ds_tensor_numel(&ctx->outputs[i]) != outer * inner)
      return DS_STATUS_INVALID_ARGUMENT;
  if (len == 0)
    return DS_STATUS_OK;
  if (f64) {
    layer_norm_f64(ctx, outer, len, inner, p->eps);
    return DS_STATUS_OK;
  }
  LayerNormJob job = {x->data,
                      ctx->inputs[1].data,
                      ctx->inputs[2].data,
                      ctx->outputs[0].data,
                      ctx->outputs[1].data,
                      ctx->outputs[2].data,
                      len,
                      inner,
                      (float)p->eps};
  if (inner == 1) {
    ds_parallel_for(ctx->pool, outer, grain_for(len), layer_norm_rows, &job);
  } else {
    int64_t blocks = (inner + LN_BLOCK - 1) / LN_BLOCK;
    ds_parallel_for(ctx->pool, outer * blocks, grain_for(len * LN_BLOCK), layer_norm_strided, &job);
  }
  return DS_STATUS_OK;
}

/* --- InstanceNorm, LRN ------------------------------------------------------------------- */

typedef struct {
  const float *x, *gamma, *beta;
  float *y;
  int64_t channels, plane;
  float eps;
} InstanceNormJob;

/* Planes p = (image, channel), each normalised by its own statistics. */
static void instance_norm_planes(void *data, int64_t begin, int64_t end)
{
  const InstanceNormJob *job = data;
  const int64_t n = job->plane;
  for (int64_t pl = begin; pl < end; pl++) {
    const float *restrict x = job->x + pl * n;
    float *restrict y = job->y + pl * n;
    int64_t c = pl % job->channels;
    float mean = sum_f32(x, n) / (float)n;
    float var = sqdev_f32(x, n, mean) / (float)n;
    float scale = job->gamma[c] / sqrtf(var + job->eps), shift = job->beta[c] - mean * scale;
    for (int64_t i = 0; i < n; i++)
      y[i] = x[i] * scale + shift;
  }
}

static DsStatus instance_norm_run(const DsKernelCtx *ctx)
{
  const DsInstanceNormParam *p = ctx->param;
  if (!all_f32(ctx->inputs, 3) || !all_f32(ctx->outputs, 1))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  if (x->ndim < 3 || !ds_geom_same_shape(x, &ctx->outputs[0]))
    return DS_STATUS_INVALID_ARGUMENT;
  const int64_t channels = x->shape[1];
  if (ds_tensor_numel(&ctx->inputs[1]) != channels || ds_tensor_numel(&ctx->inputs[2]) != channels)
    return DS_STATUS_INVALID_ARGUMENT;
  InstanceNormJob job = {x->data,
                         ctx->inputs[1].data,
                         ctx->inputs[2].data,
                         ctx->outputs[0].data,
                         channels,
                         ds_shape_span(x->shape, 2, x->ndim),
                         (float)p->eps};
  if (job.plane == 0)
    return DS_STATUS_OK;
  ds_parallel_for(ctx->pool, x->shape[0] * channels, grain_for(job.plane), instance_norm_planes,
                  &job);
  return DS_STATUS_OK;
}

typedef struct {
  const float *x;
  float *y, *norm; /* norm may be NULL */
  int64_t channels, inner;
  int64_t before, after; /* the window: channels c - before to c + after */
  float knorm, alpha_n, beta;
} LRNJob;

/* Rows r = (image, channel) of `inner` floats: the sum of squares over the window of channel
 * rows, then the scaling. */
static void lrn_rows(void *data, int64_t begin, int64_t end)
{
  const LRNJob *job = data;
  const int64_t inner = job->inner;
  for (int64_t r = begin; r < end; r++) {
    int64_t img = r / job->channels, c = r % job->channels;
    int64_t c0 = MAX(c - job->before, 0), c1 = MIN(c + job->after, job->channels - 1);
    float *restrict y = job->y + r * inner;
    for (int64_t i = 0; i < inner; i++)
      y[i] = 0.0f;
    for (int64_t cc = c0; cc <= c1; cc++) {
      const float *restrict xc = job->x + (img * job->channels + cc) * inner;
      for (int64_t i = 0; i < inner; i++)
        y[i] += xc[i] * xc[i];
    }
    const float *restrict x = job->x + r * inner;
    for (int64_t i = 0; i < inner; i++) {
      float nrm = job->knorm + job->alpha_n * y[i];
      if (job->norm != NULL)
        job->norm[r * inner + i] = nrm;
      y[i] = x[i] * powf(nrm, -job->beta);
    }
  }
}

static DsStatus lrn_run(const DsKernelCtx *ctx)
{
  const DsLRNParam *p = ctx->param;
  if (!all_f32(ctx->inputs, 1) || !all_f32(ctx->outputs, 2))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  if (x->ndim < 2 || !ds_geom_same_shape(x, &ctx->outputs[0]) ||
      !ds_geom_same_shape(x, &ctx->outputs[1]))
    return DS_STATUS_INVALID_ARGUMENT;
  LRNJob job = {x->data,
                ctx->outputs[0].data,
                ctx->outputs[1].data,
                x->shape[1],
                ds_shape_span(x->shape, 2, x->ndim),
                (p->nsize - 1) / 2,
                p->nsize / 2,
                (float)p->knorm,
                (float)(p->alpha / (double)p->nsize),
                (float)p->beta};
  int64_t rows = x->shape[0] * x->shape[1];
  ds_parallel_for(ctx->pool, rows, grain_for(job.inner * p->nsize), lrn_rows, &job);
  return DS_STATUS_OK;
}

/* --- _contrib_hardmax ------------------------------------------------------------------------ */

typedef struct {
  const void *x;
  void *y;
  DsDType dtype;
  int64_t len, inner;
} HardmaxJob;

/* Lines (outer index, inner position) along the axis: 1 at the first maximum (NumPy's argmax:
 * the first NaN, if any, counts as the maximum). */
#define HARDMAX_LINES(T)                                                                           \
  for (int64_t t = begin; t < end; t++) {                                                          \
    int64_t o = t / job->inner, i = t % job->inner;                                                \
    const T *x = (const T *)job->x + o * job->len * job->inner + i;                                \
    T *y = (T *)job->y + o * job->len * job->inner + i;                                            \
    int64_t best = 0;                                                                              \
    for (int64_t k = 1; k < job->len && x[best * job->inner] == x[best * job->inner]; k++)         \
      if (x[k * job->inner] > x[best * job->inner] || x[k * job->inner] != x[k * job->inner])      \
        best = k;                                                                                  \
    for (int64_t k = 0; k < job->len; k++)                                                         \
      y[k * job->inner] = k == best ? (T)1 : (T)0;                                                 \
  }

static void hardmax_lines(void *data, int64_t begin, int64_t end)
{
  const HardmaxJob *job = data;
  if (job->dtype == DS_DTYPE_FLOAT64)
    HARDMAX_LINES(double)
  else
    HARDMAX_LINES(float)
}

static DsStatus hardmax_run(const DsKernelCtx *ctx)
{
  const DsHardmaxParam *p = ctx->param;
  const DsTensor *x = &ctx->inputs[0];
  DsTensor *y = &ctx->outputs[0];
  if ((x->dtype != DS_DTYPE_FLOAT32 && x->dtype != DS_DTYPE_FLOAT64) || y->dtype != x->dtype)
    return DS_STATUS_UNSUPPORTED;
  DsGeomAxis ax;
  if (!ds_geom_axis_split(x, p->axis, p->trailing_axes, &ax) || !ds_geom_same_shape(x, y))
    return DS_STATUS_INVALID_ARGUMENT;
  HardmaxJob job = {x->data, y->data, x->dtype, ax.len, ax.inner};
  if (job.len == 0)
    return DS_STATUS_OK;
  ds_parallel_for(ctx->pool, ax.outer * job.inner, grain_for(job.len), hardmax_lines, &job);
  return DS_STATUS_OK;
}

/* --- Pooling ------------------------------------------------------------------------------ */

typedef struct {
  const float *x;
  float *y;
  DsGeomWindow w;
  bool dilated; /* some dilate > 1: only the direct path handles it */
  DsPoolType type;
  int p_value;
  bool count_include_pad;
} PoolJob;

static int64_t ceil_div(int64_t a, int64_t b)
{
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}
static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
  return v < lo ? lo : v > hi ? hi : v;
}

/* MXNet's divisor for one dim of an avg window starting at `start`: the window clipped to the
 * padded input when padding counts, to the input itself otherwise. Can be <= 0 for a window
 * past the end (the "full" convention), as in MXNet. `pad_end` is the padding after the input. */
static int64_t pool_extent(int64_t start, int64_t k, int64_t size, int64_t pad_end, bool with_pad)
{
  int64_t end = MIN(start + k, size + pad_end);
  if (with_pad)
    return end - start;
  return MIN(end, size) - MAX(start, 0);
}

/* Folds one input element into an accumulator: max, or a sum of x, x^2 or x^3 (lp). */
#define POOL_FOLD(type, p, acc, v)                                                                 \
  ((type) == DS_POOL_MAX ? ((v) > (acc) ? (v) : (acc))                                             \
   : (p) == 2            ? (acc) + (v) * (v)                                                       \
   : (p) == 3            ? (acc) + (v) * (v) * (v)                                                 \
                         : (acc) + (v))

/* Scratch floats for one vertically reduced input row segment (on the worker's stack). */
#define POOL_SCRATCH 2048

/* The last pass over an output row: avg divides by MXNet's window size, lp takes the root. */
static void pool_finish_row(const PoolJob *job, float *restrict acc, int64_t od, int64_t oh)
{
  const int64_t ow_n = job->w.out[2], sw = job->w.stride[2];
  if (job->type == DS_POOL_AVG) {
    int64_t dh = pool_extent(od * job->w.stride[0] - job->w.pad[0], job->w.kernel[0], job->w.in[0],
                             job->w.pad_end[0], job->count_include_pad) *
                 pool_extent(oh * job->w.stride[1] - job->w.pad[1], job->w.kernel[1], job->w.in[1],
                             job->w.pad_end[1], job->count_include_pad);
    for (int64_t ow = 0; ow < ow_n; ow++) {
      int64_t dw = pool_extent(ow * sw - job->w.pad[2], job->w.kernel[2], job->w.in[2],
                               job->w.pad_end[2], job->count_include_pad);
      acc[ow] = acc[ow] / (float)(dh * dw);
    }
  } else if (job->type == DS_POOL_LP && job->p_value == 2) {
    for (int64_t ow = 0; ow < ow_n; ow++)
      acc[ow] = sqrtf(acc[ow]);
  } else if (job->type == DS_POOL_LP && job->p_value == 3) {
    for (int64_t ow = 0; ow < ow_n; ow++)
      acc[ow] = cbrtf(acc[ow]);
  }
}

/* One output row (fixed od, oh) of one plane. Max, sum and the lp sums are separable, so the
 * window reduces in two vectorised passes: down the valid (kd, kh) input rows into a scratch
 * row (contiguous loads), then across kw with the stride. Output columns go in chunks whose
 * input span fits the scratch row. Windows clip to the input as MXNet's pool.h clips them. */
static void pool_row(const PoolJob *job, const float *plane, float *restrict acc, int64_t od,
                     int64_t oh)
{
  const int64_t ow_n = job->w.out[2], w_n = job->w.in[2], sw = job->w.stride[2];
  const int64_t kw_n = job->w.kernel[2], pw = job->w.pad[2];
  const DsPoolType type = job->type;
  const int pv = job->type == DS_POOL_LP ? job->p_value : 1;
  const float init = type == DS_POOL_MAX ? -FLT_MAX : 0.0f;
  const float *rows[POOL_SCRATCH / 8];
  int n_rows = 0;
  for (int64_t kd = 0; kd < job->w.kernel[0]; kd++) {
    int64_t id = od * job->w.stride[0] - job->w.pad[0] + kd;
    if (id < 0 || id >= job->w.in[0])
      continue;
    for (int64_t kh = 0; kh < job->w.kernel[1]; kh++) {
      int64_t ih = oh * job->w.stride[1] - job->w.pad[1] + kh;
      if (ih >= 0 && ih < job->w.in[1])
        rows[n_rows++] = plane + (id * job->w.in[1] + ih) * w_n;
    }
  }
  float v[POOL_SCRATCH];
  /* Outputs per chunk: (chunk - 1) * sw + kw_n input columns must fit the scratch row. */
  const int64_t chunk = (POOL_SCRATCH - kw_n) / sw + 1;
  for (int64_t c0 = 0; c0 < ow_n; c0 += chunk) {
    int64_t c1 = MIN(ow_n, c0 + chunk);
    int64_t lo = MAX(0, c0 * sw - pw), hi = MIN(w_n, (c1 - 1) * sw - pw + kw_n);
    int64_t span = MAX(hi - lo, 0);
    float *restrict vr = v;
    for (int64_t i = 0; i < span; i++)
      vr[i] = init;
    for (int r = 0; r < n_rows; r++) {
      const float *restrict x = rows[r] + lo;
      if (type == DS_POOL_MAX) {
        for (int64_t i = 0; i < span; i++)
          vr[i] = x[i] > vr[i] ? x[i] : vr[i];
      } else if (pv == 2) {
        for (int64_t i = 0; i < span; i++)
          vr[i] += x[i] * x[i];
      } else if (pv == 3) {
        for (int64_t i = 0; i < span; i++)
          vr[i] += x[i] * x[i] * x[i];
      } else {
        for (int64_t i = 0; i < span; i++)
          vr[i] += x[i];
      }
    }
    for (int64_t ow = c0; ow < c1; ow++)
      acc[ow] = init;
    for (int64_t kw = 0; kw < kw_n; kw++) {
      /* Output columns whose input column ow * sw - pw + kw lies in [lo, hi). */
      int64_t off = kw - pw - lo;
      int64_t a = clamp64(ceil_div(-off, sw), c0, c1), b = clamp64(ceil_div(span - off, sw), a, c1);
      /* Constant strides for the common cases: GCC vectorises those with shuffles, a
       * variable stride only with slow gathers. */
      const float *restrict vv = vr + a * sw + off; /* in the row by the choice of a */
      float *restrict ac = acc + a;
      const int64_t m = b - a;
      if (type == DS_POOL_MAX && sw == 1) {
        for (int64_t j = 0; j < m; j++)
          ac[j] = vv[j] > ac[j] ? vv[j] : ac[j];
      } else if (type == DS_POOL_MAX && sw == 2) {
        for (int64_t j = 0; j < m; j++)
          ac[j] = vv[2 * j] > ac[j] ? vv[2 * j] : ac[j];
      } else if (type == DS_POOL_MAX) {
        for (int64_t j = 0; j < m; j++)
          ac[j] = vv[j * sw] > ac[j] ? vv[j * sw] : ac[j];
      } else if (sw == 1) {
        for (int64_t j = 0; j < m; j++)
          ac[j] += vv[j];
      } else if (sw == 2) {
        for (int64_t j = 0; j < m; j++)
          ac[j] += vv[2 * j];
      } else {
        for (int64_t j = 0; j < m; j++)
          ac[j] += vv[j * sw];
      }
    }
  }
  pool_finish_row(job, acc, od, oh);
}

/* Kernels wider than the scratch row, and dilated ones, fold every element of every window
 * directly. */
static void pool_row_direct(const PoolJob *job, const float *plane, float *restrict acc, int64_t od,
                            int64_t oh)
{
  const int64_t ow_n = job->w.out[2], dw = job->w.dilate[2];
  const int pv = job->type == DS_POOL_LP ? job->p_value : 1;
  for (int64_t ow = 0; ow < ow_n; ow++) {
    float a = job->type == DS_POOL_MAX ? -FLT_MAX : 0.0f;
    for (int64_t kd = 0; kd < job->w.kernel[0]; kd++) {
      int64_t id = od * job->w.stride[0] - job->w.pad[0] + kd * job->w.dilate[0];
      for (int64_t kh = 0; kh < job->w.kernel[1]; kh++) {
        int64_t ih = oh * job->w.stride[1] - job->w.pad[1] + kh * job->w.dilate[1];
        if (id < 0 || id >= job->w.in[0] || ih < 0 || ih >= job->w.in[1])
          continue;
        const float *row = plane + (id * job->w.in[1] + ih) * job->w.in[2];
        int64_t w0 = ow * job->w.stride[2] - job->w.pad[2];
        for (int64_t kw = 0; kw < job->w.kernel[2]; kw++) {
          int64_t iw = w0 + kw * dw;
          if (iw >= 0 && iw < job->w.in[2])
            a = POOL_FOLD(job->type, pv, a, row[iw]);
        }
      }
    }
    acc[ow] = a;
  }
  pool_finish_row(job, acc, od, oh);
}

static void pool_planes(void *data, int64_t begin, int64_t end)
{
  const PoolJob *job = data;
  /* The separable path keeps row pointers and a scratch row on the stack. */
  bool direct = job->dilated || job->w.kernel[2] > POOL_SCRATCH / 2 ||
                job->w.kernel[0] * job->w.kernel[1] > POOL_SCRATCH / 8;
  for (int64_t pl = begin; pl < end; pl++) {
    const float *plane = job->x + pl * job->w.in_plane;
    float *out = job->y + pl * job->w.out_plane;
    for (int64_t od = 0; od < job->w.out[0]; od++)
      for (int64_t oh = 0; oh < job->w.out[1]; oh++) {
        float *row = out + (od * job->w.out[1] + oh) * job->w.out[2];
        if (direct)
          pool_row_direct(job, plane, row, od, oh);
        else
          pool_row(job, plane, row, od, oh);
      }
  }
}

/* Global pooling: one reduction per contiguous plane. */
static void pool_global_planes(void *data, int64_t begin, int64_t end)
{
  const PoolJob *job = data;
  const int64_t n = job->w.in_plane;
  for (int64_t pl = begin; pl < end; pl++) {
    const float *restrict x = job->x + pl * n;
    float r;
    switch (job->type) {
    case DS_POOL_MAX:
      r = n > 0 ? max_f32(x, n) : -FLT_MAX;
      r = r < -FLT_MAX ? -FLT_MAX : r; /* MXNet starts from the lowest finite float */
      break;
    case DS_POOL_AVG:
      r = sum_f32(x, n) / (float)n;
      break;
    case DS_POOL_LP:
      if (job->p_value == 2) {
        float acc[8] = {0};
        int64_t i = 0;
        for (; i + 8 <= n; i += 8)
          for (int j = 0; j < 8; j++)
            acc[j] += x[i + j] * x[i + j];
        float s = 0.0f;
        for (; i < n; i++)
          s += x[i] * x[i];
        for (int j = 0; j < 8; j++)
          s += acc[j];
        r = sqrtf(s);
        break;
      } else if (job->p_value == 3) {
        float s = 0.0f;
        for (int64_t i = 0; i < n; i++)
          s += x[i] * x[i] * x[i];
        r = cbrtf(s);
        break;
      }
      r = sum_f32(x, n);
      break;
    default:
      r = sum_f32(x, n);
      break;
    }
    job->y[pl] = r;
  }
}

/* Pooling in the other dtypes: float64 for every pool type, the integer dtypes for max.
 * Every window folds directly, as pool_row_direct does; max compares in the dtype (exact for
 * int64), the sums accumulate in double. */
typedef struct {
  const PoolJob *job; /* geometry; its float pointers are unused */
  DsDType dtype;
  const void *x;
  void *y;
} PoolAnyJob;

#define POOL_ANY_MAX(T, LOWEST)                                                                    \
  {                                                                                                \
    T best = LOWEST;                                                                               \
    const T *px = (const T *)any->x + pl * job->w.in_plane;                                        \
    for (int64_t kd = 0; kd < job->w.kernel[0]; kd++)                                              \
      for (int64_t kh = 0; kh < job->w.kernel[1]; kh++)                                            \
        for (int64_t kw = 0; kw < job->w.kernel[2]; kw++) {                                        \
          int64_t id = o[0] * job->w.stride[0] - job->w.pad[0] + kd * job->w.dilate[0];            \
          int64_t ih = o[1] * job->w.stride[1] - job->w.pad[1] + kh * job->w.dilate[1];            \
          int64_t iw = o[2] * job->w.stride[2] - job->w.pad[2] + kw * job->w.dilate[2];            \
          if (id < 0 || id >= job->w.in[0] || ih < 0 || ih >= job->w.in[1] || iw < 0 ||            \
              iw >= job->w.in[2])                                                                  \
            continue;                                                                              \
          T v = px[(id * job->w.in[1] + ih) * job->w.in[2] + iw];                                  \
          best = v > best ? v : best;                                                              \
        }                                                                                          \
    ((T *)any->y)[pl * job->w.out_plane + opos] = best;                                            \
  }

/* The sum (of x, x^2 or x^3 for lp) of one float64 window, finished as pool_finish_row does. */
static double pool_any_sum(const PoolJob *job, const double *px, const int64_t *o)
{
  double acc = 0.0;
  for (int64_t kd = 0; kd < job->w.kernel[0]; kd++)
    for (int64_t kh = 0; kh < job->w.kernel[1]; kh++)
      for (int64_t kw = 0; kw < job->w.kernel[2]; kw++) {
        int64_t id = o[0] * job->w.stride[0] - job->w.pad[0] + kd;
        int64_t ih = o[1] * job->w.stride[1] - job->w.pad[1] + kh;
        int64_t iw = o[2] * job->w.stride[2] - job->w.pad[2] + kw;
        if (id < 0 || id >= job->w.in[0] || ih < 0 || ih >= job->w.in[1] || iw < 0 ||
            iw >= job->w.in[2])
          continue;
        double v = px[(id * job->w.in[1] + ih) * job->w.in[2] + iw];
        acc += job->type != DS_POOL_LP || job->p_value == 1 ? v
               : job->p_value == 2                          ? v * v
                                                            : v * v * v;
      }
  if (job->type == DS_POOL_AVG) {
    int64_t div = 1;
    for (int i = 0; i < 3; i++)
      div *= pool_extent(o[i] * job->w.stride[i] - job->w.pad[i], job->w.kernel[i], job->w.in[i],
                         job->w.pad_end[i], job->count_include_pad);
    return acc / (double)div;
  }
  if (job->type == DS_POOL_LP)
    return job->p_value == 2 ? sqrt(acc) : job->p_value == 3 ? cbrt(acc) : acc;
  return acc;
}

static void pool_any_planes(void *data, int64_t begin, int64_t end)
{
  const PoolAnyJob *any = data;
  const PoolJob *job = any->job;
  for (int64_t pl = begin; pl < end; pl++)
    for (int64_t opos = 0; opos < job->w.out_plane; opos++) {
      const int64_t o[3] = {opos / (job->w.out[1] * job->w.out[2]),
                            opos / job->w.out[2] % job->w.out[1], opos % job->w.out[2]};
      if (job->type != DS_POOL_MAX) { /* float64 */
        ((double *)any->y)[pl * job->w.out_plane + opos] =
            pool_any_sum(job, (const double *)any->x + pl * job->w.in_plane, o);
        continue;
      }
      switch (any->dtype) {
      case DS_DTYPE_FLOAT64:
        POOL_ANY_MAX(double, -DBL_MAX)
        break;
      case DS_DTYPE_INT8:
        POOL_ANY_MAX(int8_t, INT8_MIN)
        break;
      case DS_DTYPE_UINT8:
        POOL_ANY_MAX(uint8_t, 0)
        break;
      case DS_DTYPE_INT32:
        POOL_ANY_MAX(int32_t, INT32_MIN)
        break;
      default:
        POOL_ANY_MAX(int64_t, INT64_MIN)
        break;
      }
    }
}

/* Max pooling with indices, in every dtype max pooling takes: each window is scanned in order
 * and the first maximum wins (a strict comparison, as ONNX Runtime's MaxPool). The index is the
 * plane's offset plus the position in the plane, row- or column-major. */
typedef struct {
  const PoolJob *job;
  DsDType dtype;
  const void *x;
  void *y;
  int64_t *indices;
  bool column_major;
} PoolIndicesJob;

/* The position of (id, ih, iw) within a plane in the job's storage order. */
static int64_t pool_plane_position(const PoolIndicesJob *ij, int64_t id, int64_t ih, int64_t iw)
{
  const DsGeomWindow *w = &ij->job->w;
  if (ij->column_major)
    return id + w->in[0] * (ih + w->in[1] * iw);
  return (id * w->in[1] + ih) * w->in[2] + iw;
}

#define POOL_INDICES_MAX(T, LOWEST)                                                                \
  {                                                                                                \
    const T *px = (const T *)ij->x + pl * w->in_plane;                                             \
    T best = LOWEST;                                                                               \
    int64_t at = -1;                                                                               \
    for (int64_t kd = 0; kd < w->kernel[0]; kd++)                                                  \
      for (int64_t kh = 0; kh < w->kernel[1]; kh++)                                                \
        for (int64_t kw = 0; kw < w->kernel[2]; kw++) {                                            \
          int64_t id = o[0] * w->stride[0] - w->pad[0] + kd * w->dilate[0];                        \
          int64_t ih = o[1] * w->stride[1] - w->pad[1] + kh * w->dilate[1];                        \
          int64_t iw = o[2] * w->stride[2] - w->pad[2] + kw * w->dilate[2];                        \
          if (id < 0 || id >= w->in[0] || ih < 0 || ih >= w->in[1] || iw < 0 || iw >= w->in[2])    \
            continue;                                                                              \
          T v = px[(id * w->in[1] + ih) * w->in[2] + iw];                                          \
          if (at < 0 || v > best) {                                                                \
            best = v;                                                                              \
            at = pool_plane_position(ij, id, ih, iw);                                              \
          }                                                                                        \
        }                                                                                          \
    ((T *)ij->y)[pl * w->out_plane + opos] = best;                                                 \
    /* A window wholly in the padding has no element: MXNet's lowest value, index -1. */           \
    ij->indices[pl * w->out_plane + opos] = at < 0 ? -1 : pl * w->in_plane + at;                   \
  }

static void pool_indices_planes(void *data, int64_t begin, int64_t end)
{
  const PoolIndicesJob *ij = data;
  const DsGeomWindow *w = &ij->job->w;
  for (int64_t pl = begin; pl < end; pl++)
    for (int64_t opos = 0; opos < w->out_plane; opos++) {
      const int64_t o[3] = {opos / (w->out[1] * w->out[2]), opos / w->out[2] % w->out[1],
                            opos % w->out[2]};
      switch (ij->dtype) {
      case DS_DTYPE_FLOAT32:
        POOL_INDICES_MAX(float, -FLT_MAX)
        break;
      case DS_DTYPE_FLOAT64:
        POOL_INDICES_MAX(double, -DBL_MAX)
        break;
      case DS_DTYPE_INT8:
        POOL_INDICES_MAX(int8_t, INT8_MIN)
        break;
      case DS_DTYPE_UINT8:
        POOL_INDICES_MAX(uint8_t, 0)
        break;
      case DS_DTYPE_INT32:
        POOL_INDICES_MAX(int32_t, INT32_MIN)
        break;
      default:
        POOL_INDICES_MAX(int64_t, INT64_MIN)
        break;
      }
    }
}

static bool pool_any_dtype(DsPoolType type, DsDType t)
{
  if (t == DS_DTYPE_FLOAT64)
    return true;
  return type == DS_POOL_MAX &&
         (t == DS_DTYPE_INT8 || t == DS_DTYPE_UINT8 || t == DS_DTYPE_INT32 || t == DS_DTYPE_INT64);
}

static DsStatus pooling_run(const DsKernelCtx *ctx)
{
  const DsPoolingParam *p = ctx->param;
  const DsTensor *x = &ctx->inputs[0];
  DsTensor *y = &ctx->outputs[0];
  const bool with_indices = p->indices != DS_POOL_INDICES_NONE;
  if (with_indices && ctx->outputs[1].dtype != DS_DTYPE_INT64)
    return DS_STATUS_INVALID_ARGUMENT;
  const bool f32 = all_f32(ctx->inputs, 1) && all_f32(ctx->outputs, 1);
  if (!f32 && (y->dtype != x->dtype || !pool_any_dtype(p->pool_type, x->dtype)))
    return DS_STATUS_UNSUPPORTED;
  DsGeomWindowAttrs attrs = {
      .n_spatial = p->n_spatial, .kernel = p->kernel, .stride = p->stride, .dilate = p->dilate};
  for (int s = 0; s < MIN(p->n_spatial, x->ndim - 2); s++)
    ds_pool_axis_pads(p, s, x->shape[2 + s], &attrs.pad[s], &attrs.pad_end[s]);
  PoolJob job = {.x = x->data,
                 .y = y->data,
                 .type = p->pool_type,
                 .p_value = p->pool_type == DS_POOL_LP ? p->p_value : 1,
                 .count_include_pad = p->count_include_pad};
  if (!ds_geom_pool(x, y, &attrs, p->global_pool, &job.w))
    return DS_STATUS_INVALID_ARGUMENT;
  for (int i = 0; i < DS_GEOM_SPATIAL; i++)
    job.dilated |= job.w.dilate[i] != 1;
  if (job.p_value < 1 || job.p_value > 3)
    return DS_STATUS_UNSUPPORTED;
  int64_t planes = x->shape[0] * x->shape[1];
  if (with_indices) {
    PoolIndicesJob ij = {&job,
                         x->dtype,
                         x->data,
                         y->data,
                         ctx->outputs[1].data,
                         p->indices == DS_POOL_INDICES_COLUMN_MAJOR};
    int64_t cost = job.w.out_plane * job.w.kernel[0] * job.w.kernel[1] * job.w.kernel[2];
    ds_parallel_for(ctx->pool, planes, grain_for(MAX(cost, job.w.in_plane)), pool_indices_planes,
                    &ij);
    return DS_STATUS_OK;
  }
  if (!f32) {
    PoolAnyJob any = {&job, x->dtype, x->data, y->data};
    int64_t cost = job.w.out_plane * job.w.kernel[0] * job.w.kernel[1] * job.w.kernel[2];
    ds_parallel_for(ctx->pool, planes, grain_for(MAX(cost, job.w.in_plane)), pool_any_planes, &any);
    return DS_STATUS_OK;
  }
  if (p->global_pool) {
    ds_parallel_for(ctx->pool, planes, grain_for(job.w.in_plane), pool_global_planes, &job);
  } else {
    int64_t cost = job.w.out_plane * job.w.kernel[0] * job.w.kernel[1] * job.w.kernel[2];
    ds_parallel_for(ctx->pool, planes, grain_for(MAX(cost, job.w.in_plane)), pool_planes, &job);
  }
  return DS_STATUS_OK;
}

/* --- _backward_Pooling --------------------------------------------------------------------- */

/* The gradient of one (image, channel) plane of a pooling: each output's gradient goes back to
 * the element a max window picked (the first largest, as the forward pass keeps), or spread
 * over an average's or a sum's window; float32 or float64, accumulated in double. */
typedef struct {
  DsGeomWindow w;
  DsPoolType type;
  bool count_include_pad;
  DsDType dtype;
  const void *g, *x;
  void *dx;
} PoolBackJob;

static void pool_backward_planes(void *data, int64_t begin, int64_t end)
{
  const PoolBackJob *job = data;
  const DsGeomWindow *w = &job->w;
  double acc[POOL_SCRATCH];
  for (int64_t pl = begin; pl < end; pl++) {
    /* a plane of dx in double: on the stack when it fits, else written through */
    bool on_stack = w->in_plane <= POOL_SCRATCH;
    double *dx = on_stack ? acc : g_new0(double, w->in_plane);
    if (on_stack)
      memset(dx, 0, sizeof(double) * (size_t)w->in_plane);
    const int64_t in0 = pl * w->in_plane, out0 = pl * w->out_plane;
    int64_t o[3];
    for (o[0] = 0; o[0] < w->out[0]; o[0]++)
      for (o[1] = 0; o[1] < w->out[1]; o[1]++)
        for (o[2] = 0; o[2] < w->out[2]; o[2]++) {
          int64_t opos = (o[0] * w->out[1] + o[1]) * w->out[2] + o[2];
          double g = ds_tensor_load_f64(job->dtype, job->g, out0 + opos);
          bool max = job->type == DS_POOL_MAX;
          int64_t best_at = -1;
          double best = -INFINITY;
          double div = 1.0;
          if (job->type == DS_POOL_AVG)
            for (int i = 0; i < 3; i++)
              div *= (double)pool_extent(o[i] * w->stride[i] - w->pad[i], w->kernel[i], w->in[i],
                                         w->pad_end[i], job->count_include_pad);
          for (int64_t kd = 0; kd < w->kernel[0]; kd++)
            for (int64_t kh = 0; kh < w->kernel[1]; kh++)
              for (int64_t kw = 0; kw < w->kernel[2]; kw++) {
                int64_t step[3] = {kd, kh, kw}, at[3];
                bool inside = true;
                for (int i = 0; i < 3; i++) {
                  at[i] = o[i] * w->stride[i] - w->pad[i] + step[i] * (max ? w->dilate[i] : 1);
                  inside = inside && at[i] >= 0 && at[i] < w->in[i];
                }
                if (!inside)
                  continue;
                int64_t ipos = (at[0] * w->in[1] + at[1]) * w->in[2] + at[2];
                if (max) {
                  double v = ds_tensor_load_f64(job->dtype, job->x, in0 + ipos);
                  if (best_at < 0 || v > best) {
                    best = v;
                    best_at = ipos;
                  }
                } else {
                  dx[ipos] += g / div;
                }
              }
          if (max && best_at >= 0)
            dx[best_at] += g;
        }
    for (int64_t i = 0; i < w->in_plane; i++) {
      if (job->dtype == DS_DTYPE_FLOAT64)
        ((double *)job->dx)[in0 + i] = dx[i];
      else
        ((float *)job->dx)[in0 + i] = (float)dx[i];
    }
    if (!on_stack)
      g_free(dx);
  }
}

static DsStatus backward_pooling_run(const DsKernelCtx *ctx)
{
  const DsPoolingParam *p = ctx->param;
  const DsTensor *g = &ctx->inputs[0], *x = &ctx->inputs[1], *y = &ctx->inputs[2];
  DsTensor *dx = &ctx->outputs[0];
  DsDType t = x->dtype;
  if ((t != DS_DTYPE_FLOAT32 && t != DS_DTYPE_FLOAT64) || g->dtype != t || dx->dtype != t ||
      p->pool_type == DS_POOL_LP)
    return DS_STATUS_UNSUPPORTED;
  DsGeomWindowAttrs attrs = {
      .n_spatial = p->n_spatial, .kernel = p->kernel, .stride = p->stride, .dilate = p->dilate};
  for (int s = 0; s < MIN(p->n_spatial, x->ndim - 2); s++)
    ds_pool_axis_pads(p, s, x->shape[2 + s], &attrs.pad[s], &attrs.pad_end[s]);
  PoolBackJob job = {.type = p->pool_type,
                     .count_include_pad = p->count_include_pad,
                     .dtype = t,
                     .g = g->data,
                     .x = x->data,
                     .dx = dx->data};
  if (!ds_geom_pool(x, y, &attrs, p->global_pool, &job.w) || !ds_geom_same_shape(x, dx) ||
      ds_tensor_numel(g) != ds_tensor_numel(y))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t planes = x->shape[0] * x->shape[1];
  int64_t cost = job.w.out_plane * job.w.kernel[0] * job.w.kernel[1] * job.w.kernel[2];
  ds_parallel_for(ctx->pool, planes, grain_for(MAX(cost, job.w.in_plane)), pool_backward_planes,
                  &job);
  return DS_STATUS_OK;
}

/* --- softmax, log_softmax, SoftmaxOutput ------------------------------------------------- */

typedef struct {
  const float *x;
  float *y;
  int64_t outer, len, inner;
  float temperature;
  bool log;
  const DsTensor *length; /* NULL: every row is `len` long */
  /* softmin, softmax of -x: the shift is each row's minimum and `temperature` is negated, so
   * every exponent (x - min) / -t is at most 0, as softmax's (x - max) / t is. */
  bool negate;
} SoftmaxJob;

/* Valid length of row `i`: MXNet reads it as an integer; we clamp it to [0, len] so that a
 * bad length cannot read or write outside the row. */
static int64_t softmax_row_len(const SoftmaxJob *job, int64_t i)
{
  if (job->length == NULL)
    return job->len;
  double v = 0.0;
  read_index(job->length, i, &v);
  if (!(v > 0.0))
    return 0;
  return v >= (double)job->len ? job->len : (int64_t)v;
}

static void softmax_rows(void *data, int64_t begin, int64_t end)
{
  const SoftmaxJob *job = data;
  const float t = job->temperature;
  const int64_t len = job->len;
  for (int64_t r = begin; r < end; r++) {
    const float *restrict x = job->x + r * len;
    float *restrict y = job->y + r * len;
    int64_t n = softmax_row_len(job, r);
    float m = job->negate ? min_f32(x, n) : max_f32(x, n);
    if (t == 1.0f) {
      for (int64_t i = 0; i < n; i++)
        y[i] = ds_vmath_exp(x[i] - m);
    } else {
      for (int64_t i = 0; i < n; i++)
        y[i] = ds_vmath_exp((x[i] - m) / t);
    }
    float s = sum_f32(y, n);
    if (job->log) {
      float ls = logf(s);
      for (int64_t i = 0; i < n; i++)
        y[i] = (x[i] - m) / t - ls;
    } else {
      float inv = 1.0f / s;
      for (int64_t i = 0; i < n; i++)
        y[i] *= inv;
    }
    for (int64_t i = n; i < len; i++)
      y[i] = 0.0f;
  }
}

#define SM_BLOCK 64

/* Softmax along a non-last axis: outer index o and a block of inner positions as lanes. */
static void softmax_strided(void *data, int64_t begin, int64_t end)
{
  const SoftmaxJob *job = data;
  const int64_t len = job->len, inner = job->inner;
  const int64_t blocks = (inner + SM_BLOCK - 1) / SM_BLOCK;
  const float t = job->temperature;
  for (int64_t task = begin; task < end; task++) {
    int64_t o = task / blocks, i0 = (task % blocks) * SM_BLOCK;
    int64_t nb = inner - i0 < SM_BLOCK ? inner - i0 : SM_BLOCK;
    const float *x = job->x + o * len * inner + i0;
    float *y = job->y + o * len * inner + i0;
    float m[SM_BLOCK], s[SM_BLOCK];
    int64_t n[SM_BLOCK];
    for (int64_t i = 0; i < nb; i++) {
      m[i] = job->negate ? INFINITY : -INFINITY;
      s[i] = 0.0f;
      n[i] = softmax_row_len(job, o * inner + i0 + i);
    }
    for (int64_t k = 0; k < len; k++) {
      const float *restrict row = x + k * inner;
      if (job->negate) {
        for (int64_t i = 0; i < nb; i++)
          m[i] = (k < n[i] && row[i] < m[i]) ? row[i] : m[i];
      } else {
        for (int64_t i = 0; i < nb; i++)
          m[i] = (k < n[i] && row[i] > m[i]) ? row[i] : m[i];
      }
    }
    for (int64_t k = 0; k < len; k++) {
      const float *restrict row = x + k * inner;
      float *restrict out = y + k * inner;
      for (int64_t i = 0; i < nb; i++) {
        float e = ds_vmath_exp((row[i] - m[i]) / t);
        e = k < n[i] ? e : 0.0f;
        out[i] = e;
        s[i] += e;
      }
    }
    for (int64_t i = 0; i < nb; i++)
      s[i] = job->log ? logf(s[i]) : 1.0f / s[i];
    for (int64_t k = 0; k < len; k++) {
      const float *restrict row = x + k * inner;
      float *restrict out = y + k * inner;
      if (job->log) {
        for (int64_t i = 0; i < nb; i++)
          out[i] = k < n[i] ? (row[i] - m[i]) / t - s[i] : 0.0f;
      } else {
        for (int64_t i = 0; i < nb; i++)
          out[i] = k < n[i] ? out[i] * s[i] : 0.0f;
      }
    }
  }
}

static void softmax_dispatch(const DsKernelCtx *ctx, SoftmaxJob *job)
{
  if (job->len == 0)
    return;
  if (job->inner == 1) {
    ds_parallel_for(ctx->pool, job->outer, grain_for(job->len), softmax_rows, job);
  } else {
    int64_t blocks = (job->inner + SM_BLOCK - 1) / SM_BLOCK;
    ds_parallel_for(ctx->pool, job->outer * blocks, grain_for(job->len * SM_BLOCK), softmax_strided,
                    job);
  }
}

/* float64 without lengths, one position at a time (gradient checks run in double). */
static void softmax_f64(const DsGeomAxis *ax, const double *x, double *y, double t,
                        bool take_log, bool negate)
{
  const int64_t len = ax->len, inner = ax->inner;
  if (negate)
    t = -t;
  for (int64_t o = 0; o < ax->outer; o++) {
    for (int64_t i = 0; i < inner; i++) {
      const double *row = x + o * len * inner + i;
      double *out = y + o * len * inner + i;
      double m = row[0];
      for (int64_t k = 1; k < len; k++)
        m = negate ? fmin(m, row[k * inner]) : fmax(m, row[k * inner]);
      double s = 0.0;
      for (int64_t k = 0; k < len; k++)
        s += exp((row[k * inner] - m) / t);
      for (int64_t k = 0; k < len; k++)
        out[k * inner] =
            take_log ? (row[k * inner] - m) / t - log(s) : exp((row[k * inner] - m) / t) / s;
    }
  }
}

static DsStatus softmax_common(const DsKernelCtx *ctx, bool log, bool negate)
{
  const DsSoftmaxParam *p = ctx->param;
  if (!p->use_length && both_f64(&ctx->inputs[0], &ctx->outputs[0])) {
    DsGeomAxis ax;
    if (!ds_geom_axis_split(&ctx->inputs[0], p->axis, p->trailing_axes, &ax))
      return DS_STATUS_INVALID_ARGUMENT;
    if (ax.len > 0)
      softmax_f64(&ax, ctx->inputs[0].data, ctx->outputs[0].data, p->temperature, log, negate);
    return DS_STATUS_OK;
  }
  if (!all_f32(ctx->inputs, 1) || !all_f32(ctx->outputs, 1))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  DsGeomAxis ax;
  if (!ds_geom_axis_split(x, p->axis, p->trailing_axes, &ax) ||
      !ds_geom_same_shape(x, &ctx->outputs[0]))
    return DS_STATUS_INVALID_ARGUMENT;
  SoftmaxJob job = {x->data,  ctx->outputs[0].data,  ax.outer, ax.len,
                    ax.inner, (float)p->temperature, log,      NULL, negate};
  if (negate)
    job.temperature = -job.temperature;
  if (p->use_length) {
    job.length = &ctx->inputs[1];
    if (!index_dtype_ok(job.length->dtype))
      return DS_STATUS_UNSUPPORTED;
    if (ds_tensor_numel(job.length) != job.outer * job.inner)
      return DS_STATUS_INVALID_ARGUMENT;
  }
  softmax_dispatch(ctx, &job);
  return DS_STATUS_OK;
}

static DsStatus softmax_run(const DsKernelCtx *ctx)
{
  return softmax_common(ctx, false, false);
}
static DsStatus log_softmax_run(const DsKernelCtx *ctx)
{
  return softmax_common(ctx, true, false);
}
static DsStatus softmin_run(const DsKernelCtx *ctx)
{
  return softmax_common(ctx, false, true);
}

static DsStatus softmax_output_run(const DsKernelCtx *ctx)
{
  const DsSoftmaxOutputParam *p = ctx->param;
  bool f64 = both_f64(&ctx->inputs[0], &ctx->outputs[0]);
  if (!f64 && (!all_f32(ctx->inputs, 1) || !all_f32(ctx->outputs, 1)))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  if (x->ndim < 1 || !ds_geom_same_shape(x, &ctx->outputs[0]))
    return DS_STATUS_INVALID_ARGUMENT;
  /* The label (input 1) only matters for the gradient. */
  DsGeomAxis ax = {.inner = 1};
  int64_t numel = ds_tensor_numel(x);
  if (p->multi_output) { /* softmax over axis 1 of (n, k, rest) */
    if (x->ndim < 2)
      return DS_STATUS_INVALID_ARGUMENT;
    split_axis(x, 1, &ax.outer, &ax.len, &ax.inner);
  } else if (p->preserve_shape) { /* over the last axis */
    split_axis(x, x->ndim - 1, &ax.outer, &ax.len, &ax.inner);
  } else { /* over everything but the first axis */
    ax.outer = x->shape[0];
    ax.len = ax.outer > 0 ? numel / ax.outer : 0;
  }
  if (f64) {
    if (ax.len > 0)
      softmax_f64(&ax, x->data, ctx->outputs[0].data, 1.0, false, false);
    return DS_STATUS_OK;
  }
  SoftmaxJob job = {x->data, ctx->outputs[0].data, ax.outer, ax.len, ax.inner, 1.0f, false, NULL,
                    false};
  softmax_dispatch(ctx, &job);
  return DS_STATUS_OK;
}

/* --- L2Normalization ---------------------------------------------------------------------- */

/* Each (o, i) of the data seen as (outer, len, inner) is divided by the norm of its `len`
 * values, sqrt(sum(x^2) + eps), which the second output keeps (in (o, i) order, the order of
 * MXNet's norm shapes). Sums in double, the division in float (MXNet's is all float). */
static DsStatus l2_normalization_run(const DsKernelCtx *ctx)
{
  const DsL2NormalizationParam *p = ctx->param;
  if (!all_f32(ctx->inputs, 1) || !all_f32(ctx->outputs, 2))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  if (x->ndim < (p->mode == DS_L2NORM_INSTANCE ? 1 : 3) ||
      !ds_geom_same_shape(x, &ctx->outputs[0]))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t outer, len, inner;
  if (p->mode == DS_L2NORM_INSTANCE) {
    outer = x->shape[0], len = ds_shape_span(x->shape, 1, x->ndim), inner = 1;
  } else if (p->mode == DS_L2NORM_CHANNEL) {
    split_axis(x, 1, &outer, &len, &inner);
  } else {
    outer = x->shape[0] * x->shape[1], len = ds_shape_span(x->shape, 2, x->ndim), inner = 1;
  }
  if (ds_tensor_numel(&ctx->outputs[1]) != outer * inner)
    return DS_STATUS_INVALID_ARGUMENT;
  const float *in = x->data;
  float *out = ctx->outputs[0].data, *norm = ctx->outputs[1].data;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const float *row = in + o * len * inner + i;
      double ss = 0.0;
      for (int64_t k = 0; k < len; k++)
        ss += (double)row[k * inner] * row[k * inner];
      float n = sqrtf((float)ss + p->eps);
      norm[o * inner + i] = n;
      for (int64_t k = 0; k < len; k++)
        out[o * len * inner + i + k * inner] = row[k * inner] / n;
    }
  return DS_STATUS_OK;
}

/* --- UpSampling --------------------------------------------------------------------------- */

/* nearest: output (y, x) of input i reads its (y / f, x / f), f the output's height over the
 * input's; inputs go one after another along the channels, or add up (sum). */
static DsStatus upsampling_nearest_run(const DsKernelCtx *ctx, const DsUpSamplingParam *p)
{
  DsTensor *out = &ctx->outputs[0];
  if (!all_f32(ctx->inputs, p->num_args) || !all_f32(ctx->outputs, 1) || out->ndim != 4)
    return DS_STATUS_UNSUPPORTED;
  const int64_t N = out->shape[0], C = out->shape[1], OH = out->shape[2], OW = out->shape[3];
  if (ds_tensor_numel(out) == 0)
    return DS_STATUS_OK;
  float *y = out->data;
  int64_t c0 = 0;
  for (int a = 0; a < p->num_args; a++) {
    const DsTensor *x = &ctx->inputs[a];
    if (x->ndim != 4 || x->shape[0] != N)
      return DS_STATUS_INVALID_ARGUMENT;
    const int64_t c = x->shape[1], h = x->shape[2], w = x->shape[3];
    if (h == 0 || w == 0 || OH % h != 0 || OW != w * (OH / h) || (p->sum ? c != C : c0 + c > C))
      return DS_STATUS_INVALID_ARGUMENT;
    const int64_t f = OH / h;
    const float *in = x->data;
    for (int64_t n = 0; n < N; n++)
      for (int64_t k = 0; k < c; k++) {
        const float *plane = in + (n * c + k) * h * w;
        float *dst = y + (n * C + (p->sum ? k : c0 + k)) * OH * OW;
        for (int64_t oy = 0; oy < OH; oy++)
          for (int64_t ox = 0; ox < OW; ox++) {
            float v = plane[(oy / f) * w + ox / f];
            dst[oy * OW + ox] = p->sum && a > 0 ? dst[oy * OW + ox] + v : v;
          }
      }
    c0 += c;
  }
  return DS_STATUS_OK;
}

/* bilinear: MXNet's Deconvolution with one (k, k) filter per channel (num_group = channels),
 * stride `scale`, pad ceil((scale - 1) / 2), no bias: each input pixel adds its value times
 * the filter into the output window it maps to. */
static DsStatus upsampling_bilinear_run(const DsKernelCtx *ctx, const DsUpSamplingParam *p)
{
  const DsTensor *x = &ctx->inputs[0], *weight = &ctx->inputs[1];
  DsTensor *out = &ctx->outputs[0];
  if (!all_f32(ctx->inputs, 2) || !all_f32(ctx->outputs, 1))
    return DS_STATUS_UNSUPPORTED;
  const int64_t s = p->scale, k = 2 * s - s % 2, pad = s / 2; /* ceil((s - 1) / 2) */
  if (x->ndim != 4 || out->ndim != 4)
    return DS_STATUS_INVALID_ARGUMENT;
  const int64_t N = x->shape[0], C = x->shape[1], H = x->shape[2], W = x->shape[3];
  const int64_t OH = out->shape[2], OW = out->shape[3];
  if (out->shape[0] != N || out->shape[1] != C || OH != H * s || OW != W * s ||
      ds_tensor_numel(weight) != C * k * k)
    return DS_STATUS_INVALID_ARGUMENT;
  const float *in = x->data, *wt = weight->data;
  float *y = out->data;
  memset(y, 0, (size_t)ds_tensor_numel(out) * sizeof(float));
  for (int64_t n = 0; n < N; n++)
    for (int64_t c = 0; c < C; c++) {
      const float *plane = in + (n * C + c) * H * W, *filter = wt + c * k * k;
      float *dst = y + (n * C + c) * OH * OW;
      for (int64_t iy = 0; iy < H; iy++)
        for (int64_t ix = 0; ix < W; ix++) {
          float v = plane[iy * W + ix];
          for (int64_t ky = 0; ky < k; ky++) {
            int64_t oy = iy * s - pad + ky;
            if (oy < 0 || oy >= OH)
              continue;
            for (int64_t kx = 0; kx < k; kx++) {
              int64_t ox = ix * s - pad + kx;
              if (ox >= 0 && ox < OW)
                dst[oy * OW + ox] += v * filter[ky * k + kx];
            }
          }
        }
    }
  return DS_STATUS_OK;
}

static DsStatus upsampling_run(const DsKernelCtx *ctx)
{
  const DsUpSamplingParam *p = ctx->param;
  return p->sample_type == DS_UPSAMPLE_NEAREST ? upsampling_nearest_run(ctx, p)
                                               : upsampling_bilinear_run(ctx, p);
}

/* --- Dropout, Embedding ------------------------------------------------------------------- */

typedef struct {
  const char *src;
  char *dst;
  int64_t bytes;
} CopyJob;

#define COPY_CHUNK 65536

/* Copies chunks [begin, end) of COPY_CHUNK bytes. */
static void copy_chunks(void *data, int64_t begin, int64_t end)
{
  const CopyJob *job = data;
  int64_t from = begin * COPY_CHUNK, to = MIN(end * COPY_CHUNK, job->bytes);
  memcpy(job->dst + from, job->src + from, (size_t)(to - from));
}

typedef struct {
  float *y;
  float value;
} FillJob;

static void fill_range(void *data, int64_t begin, int64_t end)
{
  const FillJob *job = data;
  ds_vmath_fill(job->y + begin, end - begin, job->value);
}

static DsStatus dropout_run(const DsKernelCtx *ctx)
{
  const DsDropoutParam *p = ctx->param;
  /* mode='always' drops at random even at inference: not reproducible, not supported. */
  if (p->mode == DS_DROPOUT_ALWAYS && p->p > 0.0)
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0];
  DsTensor *y = &ctx->outputs[0];
  if (!ds_geom_same_shape(x, y) || x->dtype != y->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  if (y->data != x->data) {
    /* Large copies split across threads (a 384x384 attention map per head in BERT). */
    CopyJob copy = {x->data, y->data, (int64_t)ds_tensor_nbytes(x)};
    ds_parallel_for(ctx->pool, (copy.bytes + COPY_CHUNK - 1) / COPY_CHUNK,
                    DS_CPU_PARALLEL_GRAIN * (int64_t)sizeof(float) / COPY_CHUNK, copy_chunks,
                    &copy);
  }
  /* MXNet leaves the mask unwritten at inference; we fill it with 1, the scale that makes
   * output = data * mask hold, as it does for a training mask. */
  DsTensor *mask = &ctx->outputs[1];
  int64_t n = ds_tensor_numel(mask);
  switch (mask->dtype) {
  case DS_DTYPE_FLOAT32: {
    FillJob fill = {mask->data, 1.0f};
    ds_parallel_for(ctx->pool, n, DS_CPU_PARALLEL_GRAIN, fill_range, &fill);
    break;
  }
  case DS_DTYPE_FLOAT64:
    for (int64_t i = 0; i < n; i++)
      ((double *)mask->data)[i] = 1.0;
    break;
  case DS_DTYPE_FLOAT16: /* 1.0 in IEEE half precision */
    for (int64_t i = 0; i < n; i++)
      ((uint16_t *)mask->data)[i] = 0x3c00;
    break;
  default:
    return DS_STATUS_UNSUPPORTED;
  }
  return DS_STATUS_OK;
}

typedef struct {
  const DsTensor *indices;
  const char *weight;
  char *out;
  int64_t input_dim, output_dim;
  size_t row_bytes;
} EmbeddingJob;

static void embedding_rows(void *data, int64_t begin, int64_t end)
{
  const EmbeddingJob *job = data;
  for (int64_t i = begin; i < end; i++) {
    double v = 0.0;
    read_index(job->indices, i, &v);
    /* MXNet's Embedding truncates the index to an integer and clips it to [0, input_dim). */
    int64_t row = !(v > 0.0) ? 0 : v >= (double)job->input_dim ? job->input_dim - 1 : (int64_t)v;
    memcpy(job->out + i * job->row_bytes, job->weight + row * job->row_bytes, job->row_bytes);
  }
}

static DsStatus embedding_run(const DsKernelCtx *ctx)
{
  const DsEmbeddingParam *p = ctx->param;
  const DsTensor *idx = &ctx->inputs[0], *w = &ctx->inputs[1];
  DsTensor *y = &ctx->outputs[0];
  if ((w->dtype != DS_DTYPE_FLOAT32 && w->dtype != DS_DTYPE_FLOAT64) || y->dtype != w->dtype ||
      !index_dtype_ok(idx->dtype))
    return DS_STATUS_UNSUPPORTED;
  int64_t n = ds_tensor_numel(idx);
  if (ds_tensor_numel(w) != p->input_dim * p->output_dim ||
      ds_tensor_numel(y) != n * p->output_dim || (p->input_dim == 0 && n > 0))
    return DS_STATUS_INVALID_ARGUMENT;
  EmbeddingJob job = {idx, w->data, y->data, p->input_dim, p->output_dim,
                      (size_t)p->output_dim * ds_dtype_size(w->dtype)};
  ds_parallel_for(ctx->pool, n, grain_for(p->output_dim), embedding_rows, &job);
  return DS_STATUS_OK;
}

/* --- _npi_einsum -------------------------------------------------------------------------- */

/* An einsum resolved for concrete shapes: each label's size, the output's labels, the labels
 * summed over, and per operand each label's stride (the sum of the strides of the axes it
 * labels, a repeated label reading a diagonal; 0 where an ellipsis dim broadcasts). */
typedef struct {
  int n_ops;
  int64_t size[DS_EINSUM_MAX_LABELS];
  bool used[DS_EINSUM_MAX_LABELS];
  int out[DS_MAX_NDIM], n_out;
  int sum[DS_EINSUM_MAX_LABELS], n_sum;
  int64_t stride[DS_EINSUM_MAX_OPERANDS][DS_EINSUM_MAX_LABELS];
  int labels[DS_EINSUM_MAX_OPERANDS][DS_MAX_NDIM];
  int rank[DS_EINSUM_MAX_OPERANDS];
} EinsumPlan;

static bool einsum_plan(const DsEinsumParam *p, const DsTensor *in, const DsTensor *y,
                        EinsumPlan *e)
{
  memset(e, 0, sizeof *e);
  e->n_ops = p->num_args;
  int ranks[DS_EINSUM_MAX_OPERANDS];
  for (int k = 0; k < p->num_args; k++)
    ranks[k] = in[k].ndim;
  const int total_ell = ds_einsum_ellipsis_rank(p, ranks);
  for (int l = 0; l < DS_EINSUM_MAX_LABELS; l++)
    e->size[l] = 1;
  for (int k = 0; k < p->num_args; k++) {
    e->rank[k] = ds_einsum_expand_term(&p->in[k], ranks[k], total_ell, e->labels[k]);
    if (e->rank[k] != ranks[k])
      return false;
    for (int i = 0; i < ranks[k]; i++) {
      int l = e->labels[k][i];
      int64_t d = in[k].shape[i];
      /* Only ellipsis dims broadcast (a 1 against any size). */
      if (e->used[l] && e->size[l] != d && !(l >= DS_EINSUM_LETTERS && (d == 1 || e->size[l] == 1)))
        return false;
      if (!e->used[l] || e->size[l] == 1)
        e->size[l] = d;
      e->used[l] = true;
    }
  }
  e->n_out = ds_einsum_expand_term(&p->out, -1, total_ell, e->out);
  if (e->n_out < 0 || e->n_out != y->ndim)
    return false;
  bool in_out[DS_EINSUM_MAX_LABELS] = {false};
  for (int i = 0; i < e->n_out; i++) {
    if (y->shape[i] != e->size[e->out[i]])
      return false;
    in_out[e->out[i]] = true;
  }
  for (int l = 0; l < DS_EINSUM_MAX_LABELS; l++)
    if (e->used[l] && !in_out[l])
      e->sum[e->n_sum++] = l;
  for (int k = 0; k < p->num_args; k++) {
    int64_t st = 1;
    for (int i = ranks[k] - 1; i >= 0; i--) {
      int l = e->labels[k][i];
      if (!(in[k].shape[i] == 1 && e->size[l] != 1))
        e->stride[k][l] += st;
      st *= in[k].shape[i];
    }
  }
  return true;
}

/* Copies the strided elements of `src` over the index space `dims` (n dims, row-major order)
 * into contiguous `dst`. */
static void einsum_gather(size_t es, const char *src, const int64_t *dims, const int64_t *strides,
                          int n, char *dst)
{
  int64_t total = ds_shape_span(dims, 0, n), idx[DS_EINSUM_MAX_LABELS] = {0}, off = 0;
  for (int64_t i = 0; i < total; i++) {
    memcpy(dst + (size_t)i * es, src + (size_t)off * es, es);
    for (int d = n - 1; d >= 0; d--) {
      off += strides[d];
      if (++idx[d] < dims[d])
        break;
      off -= strides[d] * dims[d];
      idx[d] = 0;
    }
  }
}

/* The two-operand contractions BLAS can run: every label in both operands (a batch label if
 * the output has it, else contracted) or in one operand and the output, none repeated. The
 * operands are gathered into (batch, M, K) and (batch, K, N), multiplied, and the product
 * gathered into the output's order. */
typedef struct {
  int batch[DS_EINSUM_MAX_LABELS], nb, m[DS_EINSUM_MAX_LABELS], nm, n[DS_EINSUM_MAX_LABELS], nn;
  int k[DS_EINSUM_MAX_LABELS], nk;
  int64_t bt, mt, nt, kt;
} EinsumGemm;

static bool einsum_gemm_plan(const EinsumPlan *e, EinsumGemm *g)
{
  if (e->n_ops != 2)
    return false;
  memset(g, 0, sizeof *g);
  bool in_out[DS_EINSUM_MAX_LABELS] = {false};
  for (int i = 0; i < e->n_out; i++)
    in_out[e->out[i]] = true;
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < e->rank[k]; i++)
      for (int j = 0; j < i; j++)
        if (e->labels[k][i] == e->labels[k][j])
          return false;
  for (int l = 0; l < DS_EINSUM_MAX_LABELS; l++) {
    if (!e->used[l])
      continue;
    bool in_a = false, in_b = false;
    for (int i = 0; i < e->rank[0]; i++)
      in_a |= e->labels[0][i] == l;
    for (int i = 0; i < e->rank[1]; i++)
      in_b |= e->labels[1][i] == l;
    if (in_a && in_b)
      (in_out[l] ? g->batch : g->k)[in_out[l] ? g->nb++ : g->nk++] = l;
    else if (in_out[l])
      (in_a ? g->m : g->n)[in_a ? g->nm++ : g->nn++] = l;
    else
      return false; /* summed in one operand only */
  }
  g->bt = g->mt = g->nt = g->kt = 1;
  for (int i = 0; i < g->nb; i++)
    g->bt *= e->size[g->batch[i]];
  for (int i = 0; i < g->nm; i++)
    g->mt *= e->size[g->m[i]];
  for (int i = 0; i < g->nn; i++)
    g->nt *= e->size[g->n[i]];
  for (int i = 0; i < g->nk; i++)
    g->kt *= e->size[g->k[i]];
  return true;
}

static size_t einsum_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                               const DsTensor *outputs, int n_outputs)
{
  const DsEinsumParam *p = param;
  EinsumPlan e;
  EinsumGemm g;
  if ((inputs[0].dtype != DS_DTYPE_FLOAT32 && inputs[0].dtype != DS_DTYPE_FLOAT64) ||
      !einsum_plan(p, inputs, &outputs[0], &e) || !einsum_gemm_plan(&e, &g))
    return 0;
  int64_t n = g.bt * (g.mt * g.kt + g.kt * g.nt + g.mt * g.nt);
  return (size_t)n * ds_dtype_size(inputs[0].dtype);
}

/* The index space and strides that gather operand k's labels in the order of the groups `ls`
 * (of `counts` labels each). */
static void einsum_pack(const EinsumPlan *e, int k, const int *const *ls, const int *counts,
                        int n_groups, int64_t *dims, int64_t *strides, int *n)
{
  *n = 0;
  for (int grp = 0; grp < n_groups; grp++)
    for (int i = 0; i < counts[grp]; i++) {
      int l = ls[grp][i];
      dims[*n] = e->size[l];
      strides[(*n)++] = e->stride[k][l];
    }
}

static DsStatus einsum_gemm_run(const DsKernelCtx *ctx, const EinsumPlan *e, const EinsumGemm *g)
{
  const DsTensor *a = &ctx->inputs[0], *b = &ctx->inputs[1];
  DsTensor *y = &ctx->outputs[0];
  const size_t es = ds_dtype_size(a->dtype);
  char *pa = ctx->workspace, *pb = pa + (size_t)(g->bt * g->mt * g->kt) * es;
  char *pc = pb + (size_t)(g->bt * g->kt * g->nt) * es;
  int64_t dims[DS_EINSUM_MAX_LABELS], strides[DS_EINSUM_MAX_LABELS];
  int n;
  const int *a_groups[] = {g->batch, g->m, g->k}, *b_groups[] = {g->batch, g->k, g->n};
  const int a_counts[] = {g->nb, g->nm, g->nk}, b_counts[] = {g->nb, g->nk, g->nn};
  einsum_pack(e, 0, a_groups, a_counts, 3, dims, strides, &n);
  einsum_gather(es, a->data, dims, strides, n, pa);
  einsum_pack(e, 1, b_groups, b_counts, 3, dims, strides, &n);
  einsum_gather(es, b->data, dims, strides, n, pb);
  for (int64_t i = 0; i < g->bt; i++) {
    DsStatus st = gemm_typed(
        a->dtype, false, false, g->mt, g->nt, g->kt, pa + (size_t)(i * g->mt * g->kt) * es, g->kt,
        pb + (size_t)(i * g->kt * g->nt) * es, g->nt, pc + (size_t)(i * g->mt * g->nt) * es, g->nt);
    if (st != DS_STATUS_OK)
      return st;
  }
  /* The product's stride for each label: (batch, M, N) row-major. */
  int64_t c_stride[DS_EINSUM_MAX_LABELS] = {0}, st = 1;
  const int *c_groups[] = {g->n, g->m, g->batch};
  const int c_counts[] = {g->nn, g->nm, g->nb};
  for (int grp = 0; grp < 3; grp++)
    for (int i = c_counts[grp] - 1; i >= 0; i--) {
      c_stride[c_groups[grp][i]] = st;
      st *= e->size[c_groups[grp][i]];
    }
  for (int i = 0; i < e->n_out; i++) {
    dims[i] = e->size[e->out[i]];
    strides[i] = c_stride[e->out[i]];
  }
  einsum_gather(es, pc, dims, strides, e->n_out, y->data);
  return DS_STATUS_OK;
}

typedef struct {
  const EinsumPlan *e;
  DsDType dtype;
  const void *in[DS_EINSUM_MAX_OPERANDS];
  void *y;
} EinsumJob;

/* Output elements [begin, end): each a sum over the summed labels of the operands' product, in
 * double for the floats and in wrapping 64-bit arithmetic for the integers. */
#define EINSUM_ELEMENTS(T, ACC)                                                                    \
  for (int64_t o = begin; o < end; o++) {                                                          \
    int64_t base[DS_EINSUM_MAX_OPERANDS] = {0}, rem = o;                                           \
    for (int i = e->n_out - 1; i >= 0; i--) {                                                      \
      int l = e->out[i];                                                                           \
      int64_t idx = rem % e->size[l];                                                              \
      rem /= e->size[l];                                                                           \
      for (int k = 0; k < e->n_ops; k++)                                                           \
        base[k] += idx * e->stride[k][l];                                                          \
    }                                                                                              \
    ACC acc = 0;                                                                                   \
    int64_t idx[DS_EINSUM_MAX_LABELS] = {0}, off[DS_EINSUM_MAX_OPERANDS] = {0};                    \
    for (int64_t s = 0; s < total; s++) {                                                          \
      ACC prod = 1;                                                                                \
      for (int k = 0; k < e->n_ops; k++)                                                           \
        prod *= (ACC)((const T *)job->in[k])[base[k] + off[k]];                                    \
      acc += prod;                                                                                 \
      for (int d = e->n_sum - 1; d >= 0; d--) {                                                    \
        int l = e->sum[d];                                                                         \
        for (int k = 0; k < e->n_ops; k++)                                                         \
          off[k] += e->stride[k][l];                                                               \
        if (++idx[d] < e->size[l])                                                                 \
          break;                                                                                   \
        for (int k = 0; k < e->n_ops; k++)                                                         \
          off[k] -= e->stride[k][l] * e->size[l];                                                  \
        idx[d] = 0;                                                                                \
      }                                                                                            \
    }                                                                                              \
    ((T *)job->y)[o] = (T)acc;                                                                     \
  }

static void einsum_elements(void *data, int64_t begin, int64_t end)
{
  const EinsumJob *job = data;
  const EinsumPlan *e = job->e;
  int64_t total = 1;
  for (int d = 0; d < e->n_sum; d++)
    total *= e->size[e->sum[d]];
  switch (job->dtype) {
  case DS_DTYPE_FLOAT32:
    EINSUM_ELEMENTS(float, double)
    break;
  case DS_DTYPE_FLOAT64:
    EINSUM_ELEMENTS(double, double)
    break;
  case DS_DTYPE_INT32:
    EINSUM_ELEMENTS(int32_t, uint64_t)
    break;
  case DS_DTYPE_INT64:
    EINSUM_ELEMENTS(int64_t, uint64_t)
    break;
  case DS_DTYPE_INT8:
    EINSUM_ELEMENTS(int8_t, uint64_t)
    break;
  default:
    EINSUM_ELEMENTS(uint8_t, uint64_t)
    break;
  }
}

static DsStatus einsum_run(const DsKernelCtx *ctx)
{
  const DsEinsumParam *p = ctx->param;
  const DsDType t = ctx->inputs[0].dtype;
  for (int k = 0; k < p->num_args; k++)
    if (ctx->inputs[k].dtype != t)
      return DS_STATUS_UNSUPPORTED;
  if (ctx->outputs[0].dtype != t || !ds_cpu_dtype_computable(t) || t == DS_DTYPE_BOOL)
    return DS_STATUS_UNSUPPORTED;
  EinsumPlan e;
  EinsumGemm g;
  if (!einsum_plan(p, ctx->inputs, &ctx->outputs[0], &e))
    return DS_STATUS_INVALID_ARGUMENT;
  if ((t == DS_DTYPE_FLOAT32 || t == DS_DTYPE_FLOAT64) && einsum_gemm_plan(&e, &g)) {
    if (ctx->workspace == NULL && g.bt * (g.mt * g.kt + g.kt * g.nt + g.mt * g.nt) > 0)
      return DS_STATUS_INVALID_ARGUMENT;
    return einsum_gemm_run(ctx, &e, &g);
  }
  EinsumJob job = {&e, t, {NULL}, ctx->outputs[0].data};
  for (int k = 0; k < p->num_args; k++)
    job.in[k] = ctx->inputs[k].data;
  int64_t total = 1;
  for (int d = 0; d < e.n_sum; d++)
    total *= e.size[e.sum[d]];
  ds_parallel_for(ctx->pool, ds_tensor_numel(&ctx->outputs[0]), grain_for(total * e.n_ops),
                  einsum_elements, &job);
  return DS_STATUS_OK;
}

void ds_cpu_nn_register(DsKernel *table)
{
  table[DS_OP_CONVOLUTION] = ds_cpu_convolution_kernel;
  table[DS_OP_POOLING] = (DsKernel){pooling_run, NULL};
  table[DS_OP_BACKWARD_POOLING] = (DsKernel){backward_pooling_run, NULL};
  table[DS_OP_FULLY_CONNECTED] = (DsKernel){fully_connected_run, fully_connected_workspace};
  table[DS_OP_BATCH_NORM] = (DsKernel){batch_norm_run, batch_norm_workspace};
  table[DS_OP_LAYER_NORM] = (DsKernel){layer_norm_run, NULL};
  table[DS_OP_ACTIVATION] = (DsKernel){activation_run, NULL};
  table[DS_OP_LEAKY_RELU] = (DsKernel){leaky_relu_run, NULL};
  table[DS_OP_SOFTMAX] = (DsKernel){softmax_run, NULL};
  table[DS_OP_LOG_SOFTMAX] = (DsKernel){log_softmax_run, NULL};
  table[DS_OP_SOFTMAX_OUTPUT] = (DsKernel){softmax_output_run, NULL};
  table[DS_OP_SOFTMIN] = (DsKernel){softmin_run, NULL};
  table[DS_OP_SOFTMAX_ACTIVATION] = (DsKernel){softmax_run, NULL};
  table[DS_OP_L2_NORMALIZATION] = (DsKernel){l2_normalization_run, NULL};
  table[DS_OP_UPSAMPLING] = (DsKernel){upsampling_run, NULL};
  table[DS_OP_DROPOUT] = (DsKernel){dropout_run, NULL};
  table[DS_OP_EMBEDDING] = (DsKernel){embedding_run, NULL};
  table[DS_OP_DOT] = (DsKernel){dot_run, dot_workspace};
  table[DS_OP_BATCH_DOT] = (DsKernel){batch_dot_run, NULL};
  table[DS_OP_RNN] = ds_cpu_rnn_kernel;
  table[DS_OP_MATMUL] = (DsKernel){matmul_run, matmul_workspace};
  table[DS_OP_INSTANCE_NORM] = (DsKernel){instance_norm_run, NULL};
  table[DS_OP_LRN] = (DsKernel){lrn_run, NULL};
  table[DS_OP_HARDMAX] = (DsKernel){hardmax_run, NULL};
  table[DS_OP_RECURRENT_LAYER] = ds_cpu_recurrent_layer_kernel;
  table[DS_OP_EINSUM] = (DsKernel){einsum_run, einsum_workspace};
}
