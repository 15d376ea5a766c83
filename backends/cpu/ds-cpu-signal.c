/* ds-cpu-signal.c: the Fourier transform (_contrib_dft) on the CPU.
 *
 * Each line along the axis is copied into a scratch line of complex doubles (cut or
 * zero-padded to the transform's length n) and transformed there in double precision, in
 * O(n log n) for every n. A forward transform of real data of even length is done as a complex
 * one of length n / 2 (even values as real parts, odd ones as imaginary parts), then split.
 * Powers of two go through an iterative radix-2 FFT, other lengths through
 * Bluestein's chirp-z transform, which writes the DFT as a convolution with a chirp and does the
 * convolution with radix-2 FFTs of a power of two m >= 2n - 1. What depends on n alone (the
 * roots of unity of m, the chirp, the chirp filter's spectrum) is computed once a call, in the
 * workspace. The lines are dealt out in up to DFT_SLOTS pieces, each with its own scratch line.
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
  int64_t c;                   /* complex transform length: n, or n / 2 for real_half */
  int64_t m;                   /* FFT length: c, or Bluestein's power of two >= 2c - 1 */
  int64_t line;                /* complex values in a scratch line: max(n, m) */
  int64_t slots;               /* pieces the lines are dealt out in */
  bool f64, bluestein;
  bool real_half; /* a forward transform of real data of even length, as one of half length */
  const void *x;
  void *y;
  double *roots;   /* m complex roots exp(2 pi i j / m), as (re, im) pairs */
  double *chirp;   /* Bluestein: n values exp(sign pi i j^2 / n) */
  double *filter;  /* Bluestein: the FFT of the conjugate chirp, m values */
  double *half;    /* real_half: exp(-2 pi i k / n) for k <= n / 2 */
  double *scratch; /* slots lines of m complex values */
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
  g->real_half = g->parts == 1 && !p->inverse && g->n >= 2 && g->n % 2 == 0;
  g->c = g->real_half ? g->n / 2 : g->n;
  g->bluestein = (g->c & (g->c - 1)) != 0;
  for (g->m = 1; g->bluestein ? g->m < 2 * g->c - 1 : g->m < g->c;)
    g->m *= 2;
  g->line = MAX(g->m, g->n);
  return true;
}

static size_t dft_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                            const DsTensor *outputs, int n_outputs)
{
  DftJob g;
  if (!dft_geometry(param, &inputs[0], &outputs[0], &g))
    return 0;
  const int64_t doubles = 2 * (g.m + g.line * g.slots) + (g.bluestein ? 2 * (g.c + g.m) : 0) +
                          (g.real_half ? 2 * (g.n / 2 + 1) : 0);
  return (size_t)doubles * sizeof(double);
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

/* (a + bi)(c + di) into a. */
static inline void cmul(double *a, double c, double d)
{
  const double re = a[0] * c - a[1] * d, im = a[0] * d + a[1] * c;
  a[0] = re, a[1] = im;
}

/* Bluestein: X[k] = chirp[k] * sum_j (x[j] chirp[j]) conj(chirp[k - j]), the sum a circular
 * convolution of length m done as FFT, product with the filter's spectrum, inverse FFT. */
static void bluestein(const DftJob *g, double *a)
{
  for (int64_t j = 0; j < g->c; j++)
    cmul(a + 2 * j, g->chirp[2 * j], g->chirp[2 * j + 1]);
  memset(a + 2 * g->c, 0, (size_t)(2 * (g->m - g->c)) * sizeof(double));
  fft_radix2(a, g->m, g->roots, -1.0);
  for (int64_t j = 0; j < g->m; j++)
    cmul(a + 2 * j, g->filter[2 * j], g->filter[2 * j + 1]);
  fft_radix2(a, g->m, g->roots, 1.0);
  for (int64_t k = 0; k < g->c; k++) {
    cmul(a + 2 * k, g->chirp[2 * k], g->chirp[2 * k + 1]);
    a[2 * k] /= (double)g->m, a[2 * k + 1] /= (double)g->m;
  }
}

/* The chirp and its filter's spectrum, for `sign` -1 (forward) or 1. j^2 is reduced modulo 2n
 * before the angle is formed, so long lines keep full precision. */
static void bluestein_tables(DftJob *g, double sign)
{
  for (int64_t j = 0; j < g->c; j++) {
    const double angle = sign * M_PI * (double)((j * j) % (2 * g->c)) / (double)g->c;
    g->chirp[2 * j] = cos(angle), g->chirp[2 * j + 1] = sin(angle);
  }
  memset(g->filter, 0, (size_t)(2 * g->m) * sizeof(double));
  for (int64_t j = 0; j < g->c; j++) {
    double *lo = g->filter + 2 * j, *hi = g->filter + 2 * ((g->m - j) % g->m);
    lo[0] = hi[0] = g->chirp[2 * j];
    lo[1] = hi[1] = -g->chirp[2 * j + 1];
  }
  fft_radix2(g->filter, g->m, g->roots, -1.0);
}

/* Bin k of real data from Z, the transform of its even values plus i times its odd values:
 * X[k] = E[k] + W^k O[k], E and O the transforms of the even and odd values, which Z holds
 * as E = (Z[k] + conj Z[c - k]) / 2 and O = (Z[k] - conj Z[c - k]) / 2i; bins past n / 2 are
 * the conjugates of their mirror. */
static void real_bin(const DftJob *g, const double *z, int64_t k, double *re, double *im)
{
  const int64_t kk = k <= g->n / 2 ? k : g->n - k, i1 = kk % g->c, i2 = (g->c - i1) % g->c;
  const double zr1 = z[2 * i1], zi1 = z[2 * i1 + 1], zr2 = z[2 * i2], zi2 = -z[2 * i2 + 1];
  const double er = (zr1 + zr2) / 2, ei = (zi1 + zi2) / 2;
  const double orr = (zi1 - zi2) / 2, oi = (zr2 - zr1) / 2;
  const double wr = g->half[2 * kk], wi = g->half[2 * kk + 1];
  *re = er + wr * orr - wi * oi;
  *im = ei + wr * oi + wi * orr;
  if (k != kk)
    *im = -*im;
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
  const double scale = g->p->inverse ? 1.0 / g->n : 1.0;
  if (g->real_half) /* z[j] = x[2j] + i x[2j + 1], in place: reads stay ahead of writes */
    for (int64_t j = 0; j < g->c; j++)
      a[2 * j] = a[4 * j], a[2 * j + 1] = a[4 * j + 2];
  if (g->bluestein)
    bluestein(g, a);
  else
    fft_radix2(a, g->c, g->roots, g->p->inverse ? 1.0 : -1.0);
  for (int64_t k = 0; k < g->bins; k++) {
    double re = a[2 * k], im = a[2 * k + 1];
    if (g->real_half)
      real_bin(g, a, k, &re, &im);
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
    double *a = g->scratch + 2 * g->line * s;
    for (int64_t line = s * g->lines / g->slots; line < (s + 1) * g->lines / g->slots; line++)
      dft_line(g, line, a);
  }
}

static DsStatus dft_run(const DsKernelCtx *ctx)
{
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
  g.roots = ctx->workspace;
  for (int64_t j = 0; j < g.m; j++) {
    g.roots[2 * j] = cos(2.0 * M_PI * (double)j / (double)g.m);
    g.roots[2 * j + 1] = sin(2.0 * M_PI * (double)j / (double)g.m);
  }
  g.scratch = g.roots + 2 * g.m;
  double *tables = g.scratch + 2 * g.line * g.slots;
  if (g.bluestein) {
    g.chirp = tables;
    g.filter = g.chirp + 2 * g.c;
    tables = g.filter + 2 * g.m;
    bluestein_tables(&g, g.p->inverse ? 1.0 : -1.0);
  }
  if (g.real_half) {
    g.half = tables;
    for (int64_t k = 0; k <= g.n / 2; k++) {
      g.half[2 * k] = cos(2.0 * M_PI * (double)k / (double)g.n);
      g.half[2 * k + 1] = -sin(2.0 * M_PI * (double)k / (double)g.n);
    }
  }
  g.f64 = x->dtype == DS_DTYPE_FLOAT64;
  g.x = x->data;
  g.y = y->data;
  const double work = (double)g.lines * (double)g.m * (log2((double)g.m) + 1);
  if (work < DFT_PARALLEL_WORK)
    g.slots = 1;
  ds_parallel_for(ctx->pool, g.slots, 1, dft_slots, &g);
  return DS_STATUS_OK;
}

void ds_cpu_signal_register(DsKernel *table)
{
  table[DS_OP_DFT] = (DsKernel){dft_run, dft_workspace};
}
