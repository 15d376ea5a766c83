/* ds-cpu-conv.c: Convolution as im2col + sgemm, one product per image and group.
 *
 * Layout NC + spatial (1-D, 2-D, 3-D), weight (F, C/G, k...), bias (F,). Spatial dims are
 * normalised to three (depth, height, width) by prepending size-1 dims, so one im2col serves
 * every rank. A 1x1 (1x1x1) convolution with stride 1 and no padding reads its input as the
 * GEMM's right-hand matrix directly and needs no workspace.
 *
 * float32 only.
 */
/* Keep im2col's short zero-fill and copy loops as loops: GCC would otherwise turn them into
 * memset/memcpy calls, whose overhead dominates for the few floats of padding per row. */
#pragma GCC optimize("no-tree-loop-distribute-patterns")

#include <string.h>

#include "ds-cpu-gemm.h"
#include "ds-cpu.h"

typedef struct {
  int64_t batch, channels, filters, groups;
  int64_t in[3], out[3], kernel[3], stride[3], dilate[3], pad[3];
  int64_t in_plane, out_plane, kvol;
  bool direct; /* no im2col: the input is the GEMM operand */
} ConvGeom;

static bool conv_geom(const DsConvolutionParam *p, const DsTensor *data, const DsTensor *out,
                      ConvGeom *g)
{
  int ns = p->n_spatial;
  if (data->ndim != ns + 2 || out->ndim != ns + 2)
    return false;
  g->batch = data->shape[0];
  g->channels = data->shape[1];
  g->filters = p->num_filter;
  g->groups = p->num_group;
  if (g->groups < 1 || g->channels % g->groups != 0 || g->filters % g->groups != 0 ||
      out->shape[0] != g->batch || out->shape[1] != g->filters)
    return false;
  g->in_plane = g->out_plane = g->kvol = 1;
  g->direct = true;
  for (int i = 0; i < 3; i++) {
    int s = i - (3 - ns); /* index into the attribute tuples, < 0 for a prepended dim */
    g->in[i] = s >= 0 ? data->shape[2 + s] : 1;
    g->out[i] = s >= 0 ? out->shape[2 + s] : 1;
    g->kernel[i] = s >= 0 ? p->kernel[s] : 1;
    g->stride[i] = s >= 0 ? p->stride[s] : 1;
    g->dilate[i] = s >= 0 ? p->dilate[s] : 1;
    g->pad[i] = s >= 0 ? p->pad[s] : 0;
    int64_t dk = g->dilate[i] * (g->kernel[i] - 1) + 1;
    if (g->in[i] + 2 * g->pad[i] < dk ||
        g->out[i] != (g->in[i] + 2 * g->pad[i] - dk) / g->stride[i] + 1)
      return false;
    g->in_plane *= g->in[i];
    g->out_plane *= g->out[i];
    g->kvol *= g->kernel[i];
    if (g->kernel[i] != 1 || g->stride[i] != 1 || g->pad[i] != 0)
      g->direct = false;
  }
  return true;
}

/* Output columns per GEMM: im2col writes a k x block slice of about 2 MiB, which stays in
 * cache while the GEMM packs it, instead of streaming a whole k x out_plane matrix (7 MiB for
 * a 3x3 64-channel layer at 56x56) out and back: on this machine a GEMM reading a freshly
 * written 7 MiB operand ran 10-20% slower than on a cached one, and 2-4 MiB slices were the
 * sweet spot. Blocks are at least 256 columns, below which the GEMM's per-call cost (packing
 * the weights) shows. */
#define CONV_BLOCK_BYTES (2 * 1024 * 1024)

static int64_t conv_block_cols(int64_t k, int64_t n)
{
  int64_t cols = CONV_BLOCK_BYTES / (int64_t)sizeof(float) / (k > 0 ? k : 1);
  if (cols < 256)
    cols = 256;
  /* Even blocks: 3136 columns in 2 x 1568 rather than 2048 + 1088. */
  int64_t n_blocks = (n + cols - 1) / cols;
  if (n_blocks <= 1)
    return n;
  return (n + n_blocks - 1) / n_blocks;
}

static bool conv_padded(const ConvGeom *g)
{
  return g->pad[0] != 0 || g->pad[1] != 0 || g->pad[2] != 0;
}

/* Floats of one group's zero-padded input copy (none without padding). */
static int64_t conv_pad_floats(const ConvGeom *g)
{
  if (!conv_padded(g))
    return 0;
  int64_t n = g->channels / g->groups;
  for (int i = 0; i < 3; i++)
    n *= g->in[i] + 2 * g->pad[i];
  return n;
}

static size_t conv_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                             const DsTensor *outputs, int n_outputs)
{
  ConvGeom g;
  if (n_inputs < 2 || n_outputs < 1 || !conv_geom(param, &inputs[0], &outputs[0], &g) || g.direct)
    return 0;
  int64_t k = g.channels / g.groups * g.kvol;
  /* The padded copy first, rounded to 16 floats so the column block stays 64-byte aligned. */
  int64_t pad = (conv_pad_floats(&g) + 15) / 16 * 16;
  return (size_t)(pad + k * conv_block_cols(k, g.out_plane)) * sizeof(float);
}

typedef struct {
  const ConvGeom *g;
  const float *src; /* the group's first input channel of one image */
  float *dst;       /* the padded copy */
  int64_t pd[3];    /* padded dims */
} PadJob;

/* Copies channels [begin, end) into the zero-padded layout, so that im2col needs no bounds
 * checks. */
static void pad_channels(void *data, int64_t begin, int64_t end)
{
  const PadJob *job = data;
  const ConvGeom *g = job->g;
  const int64_t dp = job->pd[0], hp = job->pd[1], wp = job->pd[2];
  const int64_t w_n = g->in[2], pw = g->pad[2];
  for (int64_t c = begin; c < end; c++) {
    const float *plane = job->src + c * g->in_plane;
    float *out = job->dst + c * dp * hp * wp;
    for (int64_t z = 0; z < dp; z++) {
      for (int64_t y = 0; y < hp; y++) {
        float *restrict d = out + (z * hp + y) * wp;
        int64_t iz = z - g->pad[0], iy = y - g->pad[1];
        if (iz < 0 || iz >= g->in[0] || iy < 0 || iy >= g->in[1]) {
          for (int64_t x = 0; x < wp; x++)
            d[x] = 0.0f;
          continue;
        }
        const float *restrict s = plane + (iz * g->in[1] + iy) * w_n;
        for (int64_t x = 0; x < pw; x++)
          d[x] = 0.0f;
        for (int64_t x = 0; x < w_n; x++)
          d[pw + x] = s[x];
        for (int64_t x = pw + w_n; x < wp; x++)
          d[x] = 0.0f;
      }
    }
  }
}

typedef struct {
  const ConvGeom *g;
  const float *src; /* the group's first input channel: padded copy or the input itself */
  int64_t sd[3];    /* its dims (padded when there is padding) */
  float *col;       /* (channels/groups * kvol) x (p1 - p0) */
  int64_t p0, p1;   /* the output positions (flattened od, oh, ow) of this block */
} Im2colJob;

/* Fills the col rows of tap groups [begin, end) for output positions [p0, p1). A tap group
 * is (channel, kd, kh) and owns kernel[2] consecutive rows, one per kw; row (channel, kd, kh,
 * kw) holds, for each output position, the input element that tap multiplies. The source is
 * padded, so each output row is one plain (strided) copy per kw, and the position bookkeeping
 * is shared by the kw rows: with rows of a few dozen floats, that bookkeeping is what costs. */
static void im2col_tap_groups(void *data, int64_t begin, int64_t end)
{
  const Im2colJob *job = data;
  const ConvGeom *g = job->g;
  const int64_t kh_n = g->kernel[1], kw_n = g->kernel[2];
  const int64_t oh_n = g->out[1], ow_n = g->out[2];
  const int64_t hp = job->sd[1], wp = job->sd[2], plane = job->sd[0] * hp * wp;
  const int64_t sd = g->stride[0], sh = g->stride[1], sw = g->stride[2], dw = g->dilate[2];
  const int64_t width = job->p1 - job->p0;
  const int64_t od0 = job->p0 / (oh_n * ow_n), oh0 = job->p0 / ow_n % oh_n, ow0 = job->p0 % ow_n;
  for (int64_t t = begin; t < end; t++) {
    int64_t kh = t % kh_n, kd = (t / kh_n) % g->kernel[0], c = t / (kh_n * g->kernel[0]);
    const float *base = job->src + c * plane + (kd * g->dilate[0] * hp + kh * g->dilate[1]) * wp;
    float *dst = job->col + t * kw_n * width;
    int64_t od = od0, oh = oh0, ow = ow0;
    for (int64_t pos = job->p0; pos < job->p1;) {
      int64_t cnt = MIN(ow_n - ow, job->p1 - pos);
      const float *row = base + (od * sd * hp + oh * sh) * wp + ow * sw;
      for (int64_t kw = 0; kw < kw_n; kw++) {
        const float *restrict s = row + kw * dw;
        float *restrict d = dst + kw * width;
        /* Constant strides for the common cases: GCC vectorises those with shuffles, a
         * variable stride only with slow gathers. */
        if (sw == 1) {
          for (int64_t i = 0; i < cnt; i++)
            d[i] = s[i];
        } else if (sw == 2) {
          for (int64_t i = 0; i < cnt; i++)
            d[i] = s[2 * i];
        } else {
          for (int64_t i = 0; i < cnt; i++)
            d[i] = s[i * sw];
        }
      }
      dst += cnt;
      pos += cnt;
      ow = 0;
      if (++oh == oh_n) {
        oh = 0;
        od++;
      }
    }
  }
}

typedef struct {
  const float *bias; /* the group's first filter's bias */
  float *out;        /* the group's first output channel */
  int64_t plane;
} BiasJob;

static void fill_bias_rows(void *data, int64_t begin, int64_t end)
{
  const BiasJob *job = data;
  for (int64_t f = begin; f < end; f++)
    ds_vmath_fill(job->out + f * job->plane, job->plane, job->bias[f]);
}

static DsStatus conv_run(const DsKernelCtx *ctx)
{
  const DsConvolutionParam *p = ctx->param;
  int n_in = p->no_bias ? 2 : 3;
  if (ctx->n_inputs < n_in || ctx->n_outputs < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  const DsTensor *data = &ctx->inputs[0], *weight = &ctx->inputs[1];
  const DsTensor *bias = p->no_bias ? NULL : &ctx->inputs[2];
  DsTensor *out = &ctx->outputs[0];
  if (data->dtype != DS_DTYPE_FLOAT32 || weight->dtype != DS_DTYPE_FLOAT32 ||
      out->dtype != DS_DTYPE_FLOAT32 || (bias != NULL && bias->dtype != DS_DTYPE_FLOAT32))
    return DS_STATUS_UNSUPPORTED;
  ConvGeom g;
  if (!conv_geom(p, data, out, &g))
    return DS_STATUS_INVALID_ARGUMENT;
  const int64_t cg = g.channels / g.groups, fg = g.filters / g.groups;
  const int64_t k = cg * g.kvol, n = g.out_plane;
  if (ds_tensor_numel(weight) != g.filters * k ||
      (bias != NULL && ds_tensor_numel(bias) != g.filters))
    return DS_STATUS_INVALID_ARGUMENT;
  if (!g.direct && ctx->workspace == NULL && k * n > 0)
    return DS_STATUS_INVALID_ARGUMENT;

  const float *x = data->data, *w = weight->data;
  float *y = out->data;
  const int64_t block = g.direct ? n : conv_block_cols(k, n);
  float *col = g.direct ? NULL : (float *)ctx->workspace + (conv_pad_floats(&g) + 15) / 16 * 16;
  /* Each tap group of a block is kernel[2] * block floats; split groups across threads once
   * there is enough. */
  const int64_t group_grain = MAX(1, DS_CPU_PARALLEL_GRAIN / MAX(block * g.kernel[2], 1));
  for (int64_t img = 0; img < g.batch; img++) {
    for (int64_t grp = 0; grp < g.groups; grp++) {
      const float *src = x + (img * g.channels + grp * cg) * g.in_plane;
      float *dst = y + (img * g.filters + grp * fg) * n;
      float beta = 0.0f;
      if (bias != NULL) {
        BiasJob job = {(const float *)bias->data + grp * fg, dst, n};
        ds_parallel_for(ctx->pool, fg, MAX(1, DS_CPU_PARALLEL_GRAIN / MAX(n, 1)), fill_bias_rows,
                        &job);
        beta = 1.0f;
      }
      if (g.direct) {
        DsStatus st =
            ds_cpu_sgemm(false, false, fg, n, k, 1.0f, w + grp * fg * k, k, src, n, beta, dst, n);
        if (st != DS_STATUS_OK)
          return st;
        continue;
      }
      Im2colJob job = {&g, src, {g.in[0], g.in[1], g.in[2]}, col, 0, 0};
      if (conv_padded(&g)) {
        PadJob pad = {&g, src, ctx->workspace, {0}};
        for (int i = 0; i < 3; i++)
          pad.pd[i] = job.sd[i] = g.in[i] + 2 * g.pad[i];
        ds_parallel_for(ctx->pool, cg, MAX(1, DS_CPU_PARALLEL_GRAIN / MAX(g.in_plane, 1)),
                        pad_channels, &pad);
        job.src = ctx->workspace;
      }
      for (int64_t p0 = 0; p0 < n; p0 += block) {
        job.p0 = p0;
        job.p1 = MIN(n, p0 + block);
        ds_parallel_for(ctx->pool, k / g.kernel[2], group_grain, im2col_tap_groups, &job);
        DsStatus st = ds_cpu_sgemm(false, false, fg, job.p1 - p0, k, 1.0f, w + grp * fg * k, k, col,
                                   job.p1 - p0, beta, dst + p0, n);
        if (st != DS_STATUS_OK)
          return st;
      }
    }
  }
  return DS_STATUS_OK;
}

const DsKernel ds_cpu_convolution_kernel = {conv_run, conv_workspace};
