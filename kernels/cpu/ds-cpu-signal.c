/* ds-cpu-signal.c: the Fourier transform (_contrib_dft) on the CPU.
 *
 * Each line along the axis is copied into a scratch line of complex doubles (cut or
 * zero-padded to the transform's length n) and transformed there, in double precision, from
 * one table of the n-th roots of unity that the whole call shares. Powers of two take an
 * iterative radix-2 FFT, O(n log n) a line; other lengths the direct sum, O(n) a bin, which at
 * the frame sizes of audio front ends (a few hundred) is still microseconds a line. The lines
 * are dealt out in up to DFT_SLOTS pieces, each with its own scratch line in the workspace.
 */
#include <math.h>
#include <string.h>

#include "ds-cpu.h"

#define DFT_SLOTS 16
/* Below this much work (complex multiply-adds) a call runs on one thread. */
#define DFT_PARALLEL_WORK 65536

typedef struct {
  const DsDftParam *p;
  int64_t outer, inner, lines; /* a line is an (outer, inner) pair */
  int64_t in_len, parts;       /* the data's size along the axis; 1 (real) or 2 (complex) */
  int64_t n, bins;             /* transform length; bins kept */
  int64_t slots;               /* pieces the lines are dealt out in */
  bool f64, fft;
  const void *x;
  void *y;
  const double *roots; /* n complex roots exp(2 pi i m / n), as (re, im) pairs */
  double *scratch;     /* slots lines of n complex values */
} DftJob;

static bool dft_geometry(const DsDftParam *p, const DsTensor *x, const DsTensor *y, DftJob *g)
{
  if (x->ndim < 2 || y->ndim != x->ndim)
    return false;
  const int last = x->ndim - 1, axis = p->axis < 0 ? p->axis + x->ndim : p->axis;
  if (axis < 0 || axis >= last)
    return false;
  g->p = p;
  g->parts = x->shape[last];
  g->in_len = x->shape[axis];
  g->n = p->length > 0 ? p->length : g->in_len;
  g->bins = p->onesided ? g->n / 2 + 1 : g->n;
  if ((g->parts != 1 && g->parts != 2) || (p->onesided && g->parts != 1) || y->shape[last] != 2 ||
      y->shape[axis] != g->bins)
    return false;
  for (int d = 0; d < last; d++)
    if (d != axis && y->shape[d] != x->shape[d])
      return false;
  g->outer = ds_shape_span(x->shape, 0, axis);
  g->inner = ds_shape_span(x->shape, axis + 1, last);
  g->lines = g->outer * g->inner;
  g->slots = MIN(DFT_SLOTS, MAX(g->lines, 1));
  g->fft = g->n > 0 && (g->n & (g->n - 1)) == 0;
  return true;
}

static size_t dft_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                            const DsTensor *outputs, int n_outputs)
{
  DftJob g;
  if (n_inputs != 1 || n_outputs != 1 || !dft_geometry(param, &inputs[0], &outputs[0], &g))
    return 0;
  return (size_t)(2 * g.n * (1 + g.slots)) * sizeof(double);
}

/* In place on n complex values (n a power of two); `sign` -1 for the forward transform. */
static void fft_radix2(double *a, int64_t n, const double *roots, double sign)
{
  for (int64_t i = 1, j = 0; i < n; i++) {
    int64_t bit = n >> 1;
    for (; j & bit; bit >>= 1)
      j ^= bit;
    j |= bit;
    if (i < j) {
      double re = a[2 * i], im = a[2 * i + 1];
      a[2 * i] = a[2 * j], a[2 * i + 1] = a[2 * j + 1];
      a[2 * j] = re, a[2 * j + 1] = im;
    }
  }
  for (int64_t len = 2; len <= n; len <<= 1) {
    const int64_t half = len / 2, step = n / len;
    for (int64_t start = 0; start < n; start += len)
      for (int64_t k = 0; k < half; k++) {
        const double wr = roots[2 * k * step], wi = sign * roots[2 * k * step + 1];
        double *u = a + 2 * (start + k), *v = a + 2 * (start + k + half);
        const double vr = v[0] * wr - v[1] * wi, vi = v[0] * wi + v[1] * wr;
        v[0] = u[0] - vr, v[1] = u[1] - vi;
        u[0] += vr, u[1] += vi;
      }
  }
}

/* Bin k of the n values in `a`, straight from the definition. */
static void dft_direct_bin(const double *a, int64_t n, int64_t k, const double *roots, double sign,
                           double *re, double *im)
{
  double sr = 0, si = 0;
  for (int64_t j = 0, m = 0; j < n; j++) {
    const double wr = roots[2 * m], wi = sign * roots[2 * m + 1];
    sr += a[2 * j] * wr - a[2 * j + 1] * wi;
    si += a[2 * j] * wi + a[2 * j + 1] * wr;
    m += k;
    if (m >= n)
      m -= n;
  }
  *re = sr, *im = si;
}

static void dft_line(const DftJob *g, int64_t line, double *a)
{
  const int64_t o = line / g->inner, i = line % g->inner, used = MIN(g->in_len, g->n);
  for (int64_t j = 0; j < used; j++) {
    const int64_t e = ((o * g->in_len + j) * g->inner + i) * g->parts;
    const double re = g->f64 ? ((const double *)g->x)[e] : ((const float *)g->x)[e];
    const double im = g->parts == 1 ? 0
                      : g->f64      ? ((const double *)g->x)[e + 1]
                                    : ((const float *)g->x)[e + 1];
    a[2 * j] = re, a[2 * j + 1] = im;
  }
  memset(a + 2 * used, 0, (size_t)(2 * (g->n - used)) * sizeof(double));
  const double sign = g->p->inverse ? 1.0 : -1.0, scale = g->p->inverse ? 1.0 / g->n : 1.0;
  if (g->fft)
    fft_radix2(a, g->n, g->roots, sign);
  for (int64_t k = 0; k < g->bins; k++) {
    double re = a[2 * k], im = a[2 * k + 1];
    if (!g->fft)
      dft_direct_bin(a, g->n, k, g->roots, sign, &re, &im);
    const int64_t e = ((o * g->bins + k) * g->inner + i) * 2;
    if (g->f64) {
      ((double *)g->y)[e] = re * scale, ((double *)g->y)[e + 1] = im * scale;
    } else {
      ((float *)g->y)[e] = (float)(re * scale), ((float *)g->y)[e + 1] = (float)(im * scale);
    }
  }
}

static void dft_slots(void *ctx, int64_t begin, int64_t end)
{
  const DftJob *g = ctx;
  for (int64_t s = begin; s < end; s++) {
    double *a = g->scratch + 2 * g->n * s;
    for (int64_t line = s * g->lines / g->slots; line < (s + 1) * g->lines / g->slots; line++)
      dft_line(g, line, a);
  }
}

static DsStatus dft_run(const DsKernelCtx *ctx)
{
  if (ctx->n_inputs != 1 || ctx->n_outputs != 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *x = &ctx->inputs[0], *y = &ctx->outputs[0];
  if ((x->dtype != DS_DTYPE_FLOAT32 && x->dtype != DS_DTYPE_FLOAT64) || y->dtype != x->dtype)
    return DS_STATUS_UNSUPPORTED;
  DftJob g;
  if (!dft_geometry(ctx->param, x, y, &g))
    return DS_STATUS_INVALID_ARGUMENT;
  if (ds_tensor_numel(y) == 0)
    return DS_STATUS_OK;
  if (g.n == 0) { /* an empty line: its one one-sided bin is an empty sum */
    memset(y->data, 0, ds_tensor_nbytes(y));
    return DS_STATUS_OK;
  }
  double *roots = ctx->workspace;
  for (int64_t m = 0; m < g.n; m++) {
    roots[2 * m] = cos(2.0 * M_PI * (double)m / (double)g.n);
    roots[2 * m + 1] = sin(2.0 * M_PI * (double)m / (double)g.n);
  }
  g.roots = roots;
  g.scratch = roots + 2 * g.n;
  g.f64 = x->dtype == DS_DTYPE_FLOAT64;
  g.x = x->data;
  g.y = y->data;
  const double log_n = g.fft ? log2((double)g.n) + 1 : (double)g.bins;
  const double work = (double)g.lines * (double)g.n * log_n;
  if (work < DFT_PARALLEL_WORK)
    g.slots = 1;
  ds_parallel_for(ctx->pool, g.slots, 1, dft_slots, &g);
  return DS_STATUS_OK;
}

void ds_cpu_signal_register(DsKernel *table)
{
  table[DS_OP_DFT] = (DsKernel){dft_run, dft_workspace};
}
