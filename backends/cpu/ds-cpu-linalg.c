/* ds-cpu-linalg.c: the determinant (_linalg_det) on the CPU.
 *
 * Each matrix is factored by Gaussian elimination with partial pivoting, in double for float32
 * input too (the determinant is a product of n pivots, whose rounding float32 would compound).
 * The factored matrix is the one MXNet's LAPACK call sees: A's row-major bytes read
 * column-major, i.e. A transposed, which has the same determinant. So the pivot search runs
 * down a contiguous run of memory and the LU and pivot outputs hold what MXNet's getrf leaves
 * there (pivots counting from 1). A zero column below the diagonal is left as it is, as getrf
 * does, and makes the determinant 0. Float64 is factored in place in the LU output; float32 in
 * a double scratch matrix per slot of the workspace. The matrices are dealt out in up to
 * DET_SLOTS pieces when there is enough work to share.
 */
#include <math.h>
#include <string.h>

#include "ds-cpu.h"

#define DET_SLOTS 16
/* Below this many multiply-adds (about n^3 / 3 a matrix) a call runs on one thread. */
#define DET_PARALLEL_WORK 65536
/* Scratch matrices take at most this many bytes in all, whatever their count. */
#define DET_SCRATCH_BYTES ((int64_t)64 << 20)

typedef struct {
  int64_t count; /* matrices */
  int64_t n;
  int64_t slots; /* pieces the matrices are dealt out in, each with its own scratch matrix */
  bool f64;
  const void *a;
  void *det, *lu;
  int32_t *pivot;
  double *scratch; /* float32: slots matrices of n * n doubles */
} DetJob;

static bool det_geometry(const DsTensor *a, const DsTensor *det, const DsTensor *lu,
                         const DsTensor *pivot, DetJob *g)
{
  if (a->ndim < 2 || lu->ndim != a->ndim || pivot->ndim != a->ndim - 1)
    return false;
  const int rows = a->ndim - 2;
  g->n = a->shape[rows];
  if (a->shape[rows + 1] != g->n)
    return false;
  for (int d = 0; d < a->ndim; d++)
    if (lu->shape[d] != a->shape[d] || (d <= rows && pivot->shape[d] != a->shape[d]))
      return false;
  g->count = ds_shape_span(a->shape, 0, rows);
  if (ds_tensor_numel(det) != g->count)
    return false;
  const int64_t matrix = MAX(g->n * g->n, 1) * (int64_t)sizeof(double);
  g->slots = MAX(MIN(MIN(DET_SLOTS, g->count), DET_SCRATCH_BYTES / matrix), 1);
  return true;
}

static size_t det_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                            const DsTensor *outputs, int n_outputs)
{
  (void)param;
  (void)n_inputs;
  (void)n_outputs;
  DetJob g = {0};
  if (inputs[0].dtype != DS_DTYPE_FLOAT32 ||
      !det_geometry(&inputs[0], &outputs[0], &outputs[1], &outputs[2], &g))
    return 0;
  return (size_t)(g.slots * g.n * g.n) * sizeof(double);
}

/* Factors matrix `m` in `b` (its n * n values as A's bytes hold them), writes its pivots and
 * returns its determinant. Element (i, j) of the matrix factored, A^T, is b[j * n + i]: column
 * j of it is the contiguous run b[j * n .. j * n + n). */
static double det_factor(const DetJob *g, int64_t m, double *b)
{
  const int64_t n = g->n;
  int32_t *pivot = g->pivot + m * n;
  double det = 1.0;
  for (int64_t k = 0; k < n; k++) {
    const double *col = b + k * n;
    int64_t p = k;
    for (int64_t i = k + 1; i < n; i++)
      if (fabs(col[i]) > fabs(col[p]))
        p = i;
    pivot[k] = (int32_t)(p + 1);
    if (p != k) {
      det = -det;
      for (int64_t j = 0; j < n; j++) {
        double *c = b + j * n, t = c[k];
        c[k] = c[p], c[p] = t;
      }
    }
    const double u = col[k];
    det *= u;
    if (u == 0.0) /* nothing to eliminate with: the column is zero from the diagonal down */
      continue;
    double *l = b + k * n;
    for (int64_t i = k + 1; i < n; i++)
      l[i] /= u;
    for (int64_t j = k + 1; j < n; j++) {
      double *c = b + j * n;
      const double f = c[k];
      for (int64_t i = k + 1; i < n; i++)
        c[i] -= l[i] * f;
    }
  }
  return det;
}

static void det_slots(void *ctx, int64_t begin, int64_t end)
{
  const DetJob *g = ctx;
  const int64_t nn = g->n * g->n;
  for (int64_t s = begin; s < end; s++)
    for (int64_t m = s * g->count / g->slots; m < (s + 1) * g->count / g->slots; m++) {
      if (g->f64) {
        double *b = (double *)g->lu + m * nn;
        memcpy(b, (const double *)g->a + m * nn, (size_t)nn * sizeof(double));
        ((double *)g->det)[m] = det_factor(g, m, b);
      } else {
        double *b = g->scratch + s * nn;
        const float *a = (const float *)g->a + m * nn;
        for (int64_t i = 0; i < nn; i++)
          b[i] = a[i];
        ((float *)g->det)[m] = (float)det_factor(g, m, b);
        float *lu = (float *)g->lu + m * nn;
        for (int64_t i = 0; i < nn; i++)
          lu[i] = (float)b[i];
      }
    }
}

static DsStatus det_run(const DsKernelCtx *ctx)
{
  const DsTensor *a = &ctx->inputs[0], *det = &ctx->outputs[0], *lu = &ctx->outputs[1];
  const DsTensor *pivot = &ctx->outputs[2];
  if ((a->dtype != DS_DTYPE_FLOAT32 && a->dtype != DS_DTYPE_FLOAT64) || det->dtype != a->dtype ||
      lu->dtype != a->dtype || pivot->dtype != DS_DTYPE_INT32)
    return DS_STATUS_UNSUPPORTED;
  DetJob g = {0};
  if (!det_geometry(a, det, lu, pivot, &g))
    return DS_STATUS_INVALID_ARGUMENT;
  g.f64 = a->dtype == DS_DTYPE_FLOAT64;
  if (g.count == 0)
    return DS_STATUS_OK;
  if (g.n == 0) { /* the empty product: a 0 x 0 matrix has determinant 1 */
    for (int64_t m = 0; m < g.count; m++) {
      if (g.f64)
        ((double *)det->data)[m] = 1.0;
      else
        ((float *)det->data)[m] = 1.0f;
    }
    return DS_STATUS_OK;
  }
  g.a = a->data;
  g.det = det->data;
  g.lu = lu->data;
  g.pivot = pivot->data;
  g.scratch = ctx->workspace;
  const double work = (double)g.count * (double)g.n * (double)g.n * (double)g.n / 3.0;
  if (work < DET_PARALLEL_WORK)
    g.slots = 1;
  ds_parallel_for(ctx->pool, g.slots, 1, det_slots, &g);
  return DS_STATUS_OK;
}

void ds_cpu_linalg_register(DsKernel *table)
{
  table[DS_OP_LINALG_DET] = (DsKernel){det_run, det_workspace};
}
