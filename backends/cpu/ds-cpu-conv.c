/* ds-cpu-conv.c: Convolution as sgemm, one product per image (or group of images) and group.
 *
 * Layout NC + spatial (1-D, 2-D, 3-D), weight (F, C/G, k...), bias (F,). Spatial dims are
 * normalised to three (depth, height, width) by prepending size-1 dims, so one code path serves
 * every rank. The product is built one of four ways:
 *  - batched: for a batch of small outputs (Mask R-CNN's heads on 1000 ROIs of 7x7 or 14x14),
 *    several images are unrolled side by side into one column matrix for one GEMM, whose
 *    result is then scattered into the images; see conv_batch_images() and conv_batched();
 *  - direct: a 1x1 (1x1x1) convolution with stride 1 and no padding reads its input as the
 *    GEMM's right-hand matrix and needs no workspace;
 *  - shifted (stride 1): one GEMM per kernel tap, whose right-hand matrix is the (padded) input
 *    itself at an offset; see conv_shifted();
 *  - im2col: the input is unrolled into a column matrix, block by block.
 *
 * float32 only.
 */
/* Keep the short zero-fill and copy loops as loops: GCC would otherwise turn them into
 * memset/memcpy calls, whose overhead dominates for the few floats of padding per row. */
#pragma GCC optimize("no-tree-loop-distribute-patterns")

#include <cblas.h>
#include <string.h>

#include "ds-cpu-gemm.h"
#include "ds-cpu.h"
#include "ds-geometry-nn.h"

typedef struct {
  DsGeomWindow w; /* the shapes (ds-geometry-nn.h), as every backend sees them */
  /* The GEMMs' source, the padded copy (or, without padding, the input itself): depth slices of
   * src_h rows each, `row` floats apart, channels `chan` floats apart (see conv_source). */
  int64_t src_h, row, chan;
  int64_t n_wide; /* shifted path: columns of each tap's GEMM (see conv_shifted) */
  int64_t n_imgs; /* images per GEMM: > 1 on the batched path (see conv_batch_images) */
  bool shifted;
} ConvGeom;

static int64_t round16(int64_t n)
{
  return (n + 15) / 16 * 16;
}

static bool conv_padded(const ConvGeom *g)
{
  for (int i = 0; i < 3; i++)
    if (g->w.pad[i] != 0 || g->w.pad_end[i] != 0)
      return true;
  return false;
}

/* The padded source: depth and height padded in full, but consecutive rows share `overlap` of
 * their zero columns, the right padding of one row being the left padding of the next. Reads
 * reach at most in[2] + pad[2] + pad_end[2] - 1 columns into a row, so they stay on zeros, and
 * each row is only in[2] + pad[2] + pad_end[2] - overlap floats. The overlap is capped at
 * dk - 1 so that the shifted path's output rows (out[2] = in[2] + pad[2] + pad_end[2] - dk + 1
 * with stride 1) still fit in a row: for a 3x3 "same" convolution a row is in[2] + 1 floats where full padding would make
 * it in[2] + 2, which halves the shifted path's wasted columns. Without padding this is exactly
 * the input's layout, which is then read in place. */
static void conv_source(ConvGeom *g)
{
  int64_t dk = g->w.dilate[2] * (g->w.kernel[2] - 1) + 1;
  /* The overlap is a row's right padding and the next row's left padding at once, so it can be
   * no longer than either. */
  int64_t overlap = MIN(MIN(g->w.pad[2], g->w.pad_end[2]), dk - 1);
  g->src_h = g->w.in[1] + g->w.pad[1] + g->w.pad_end[1];
  g->row = g->w.in[2] + g->w.pad[2] + g->w.pad_end[2] - overlap;
  /* The last row's right padding runs `overlap` floats past the channel's last row. */
  g->chan = (g->w.in[0] + g->w.pad[0] + g->w.pad_end[0]) * g->src_h * g->row + overlap;
  g->n_wide = ((g->w.out[0] - 1) * g->src_h + g->w.out[1] - 1) * g->row + g->w.out[2];
}

/* What copying one float costs in multiply-adds, roughly: im2col writes about 4 floats per ns
 * on one core of this machine, where sgemm does about 35 multiply-adds per ns per core. */
#define CONV_COPY_MACS 8
/* And what one more BLAS call costs (its setup and OpenBLAS's hand-off to its threads). */
#define CONV_CALL_MACS 100000

/* Whether the shifted path (stride 1 only) beats im2col for this geometry. It skips im2col's
 * copy of k x n floats, but each tap's GEMM also computes the n_wide - n columns that fall on
 * the padding between output rows, and it adds a weight reorder, a compaction of the output and
 * one GEMM call per tap. im2col copies one float per fg multiply-adds of the GEMM, so the
 * shifted path wins for wide images and few filters (3x3 64->64 at 56x56: 1.8% wasted columns,
 * where im2col took 11% of the single-thread time) and loses for small images with many
 * filters (3x3 256->256 at 14x14: 7% wasted, and 256 x 2304 weights to reorder). */
static bool conv_use_shifted(const ConvGeom *g)
{
  if (g->w.direct || g->w.stride[0] != 1 || g->w.stride[1] != 1 || g->w.stride[2] != 1)
    return false;
  const int64_t fg = g->w.filters / g->w.groups, k = g->w.channels / g->w.groups * g->w.kvol;
  const int64_t n = g->w.out_plane;
  int64_t im2col = CONV_COPY_MACS * k * n;
  int64_t shifted =
      (g->n_wide - n) * fg * k + CONV_COPY_MACS * fg * (k + n) + (g->w.kvol - 1) * CONV_CALL_MACS;
  return shifted < im2col;
}

/* The batched path's targets: GEMMs of at least CONV_BATCH_COLS columns where the images allow,
 * with the column matrix and the product together within CONV_BATCH_BYTES of workspace. */
#define CONV_BATCH_COLS  2048
#define CONV_BATCH_BYTES (16 * 1024 * 1024)

/* Images per GEMM, 1 for the per-image paths. A GEMM of a few dozen or hundred columns
 * (49 for a 7x7 output) runs well below BLAS's speed: here 512 x 49 x 4608 ran at half the rate
 * of the same product on 1568 columns. So a batch of small outputs is unrolled CONV_BATCH_COLS
 * columns at a time, or as many as CONV_BATCH_BYTES holds; images with outputs of more than
 * half that width already make a wide enough GEMM each. The count is evened out over the batch:
 * 1000 images in 125 GEMMs of 8, not 90 of 11 and one of 10. The direct path stays per image:
 * it reads the input in place, and copying it into a column matrix cost more than the wider
 * GEMM gained (1x1 256->80 on 200 images of 14x14 ran 15% slower batched). */
static int64_t conv_batch_images(const ConvGeom *g)
{
  const int64_t fg = g->w.filters / g->w.groups, k = g->w.channels / g->w.groups * g->w.kvol;
  const int64_t n = g->w.out_plane;
  if (g->w.direct || g->w.batch < 2 || 2 * n > CONV_BATCH_COLS)
    return 1;
  int64_t imgs = (CONV_BATCH_COLS + n - 1) / n;
  imgs = MIN(imgs, CONV_BATCH_BYTES / ((int64_t)sizeof(float) * MAX(k + fg, 1) * n));
  imgs = MIN(imgs, g->w.batch);
  if (imgs < 2)
    return 1;
  int64_t gemms = (g->w.batch + imgs - 1) / imgs;
  return (g->w.batch + gemms - 1) / gemms;
}

static bool conv_geom(const DsConvolutionParam *p, const DsTensor *data, const DsTensor *out,
                      ConvGeom *g)
{
  DsGeomWindowAttrs attrs = {
      .n_spatial = p->n_spatial, .kernel = p->kernel, .stride = p->stride, .dilate = p->dilate};
  for (int s = 0; s < MIN(p->n_spatial, data->ndim - 2); s++)
    ds_conv_axis_pads(p, s, data->shape[2 + s], &attrs.pad[s], &attrs.pad_end[s]);
  if (!ds_geom_conv(data, out, &attrs, p->num_filter, p->num_group, &g->w))
    return false;
  conv_source(g);
  g->n_imgs = conv_batch_images(g);
  g->shifted = g->n_imgs == 1 && conv_use_shifted(g);
  return true;
}

/* Output columns per im2col GEMM: im2col writes a k x block slice of about 2 MiB, which stays
 * in cache while the GEMM packs it, instead of streaming a whole k x out_plane matrix (7 MiB for
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

/* Floats of one group's padded source copy (none without padding). */
static int64_t conv_pad_floats(const ConvGeom *g)
{
  return conv_padded(g) ? g->w.channels / g->w.groups * g->chan : 0;
}

/* The workspace holds, each part rounded to 16 floats so that the next stays 64-byte aligned:
 * the padded copy of one group's input (of one image), then either the batched path's column
 * matrix and product, or one im2col column block, or the group's weights reordered tap by tap
 * and the shifted path's product on its wide grid. */
static size_t conv_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                             const DsTensor *outputs, int n_outputs)
{
  ConvGeom g;
  /* No images (a detector's head with no regions), nothing to run. */
  if (!conv_geom(param, &inputs[0], &outputs[0], &g) || g.w.batch == 0 || g.w.direct)
    return 0;
  int64_t fg = g.w.filters / g.w.groups, k = g.w.channels / g.w.groups * g.w.kvol;
  int64_t floats = round16(conv_pad_floats(&g));
  if (g.n_imgs > 1)
    floats += round16(k * g.n_imgs * g.w.out_plane) + fg * g.n_imgs * g.w.out_plane;
  else if (g.shifted)
    floats += round16(fg * k) + fg * g.n_wide;
  else
    floats += k * conv_block_cols(k, g.w.out_plane);
  return (size_t)floats * sizeof(float);
}

typedef struct {
  const ConvGeom *g;
  const float *src; /* the group's first input channel of one image */
  float *dst;       /* the padded copy */
} PadJob;

/* Copies channels [begin, end) into the padded layout of conv_source(), writing each of its
 * floats once, so that the GEMMs and im2col need no bounds checks. */
static void pad_channels(void *data, int64_t begin, int64_t end)
{
  const PadJob *job = data;
  const ConvGeom *g = job->g;
  const int64_t rows = (g->w.in[0] + g->w.pad[0] + g->w.pad_end[0]) * g->src_h, row_n = g->row;
  const int64_t w_n = g->w.in[2], pw = g->w.pad[2];
  for (int64_t c = begin; c < end; c++) {
    const float *plane = job->src + c * g->w.in_plane;
    float *out = job->dst + c * g->chan;
    for (int64_t r = 0; r < rows; r++) {
      float *restrict d = out + r * row_n;
      int64_t iz = r / g->src_h - g->w.pad[0], iy = r % g->src_h - g->w.pad[1];
      if (iz < 0 || iz >= g->w.in[0] || iy < 0 || iy >= g->w.in[1]) {
        for (int64_t x = 0; x < row_n; x++)
          d[x] = 0.0f;
        continue;
      }
      const float *restrict s = plane + (iz * g->w.in[1] + iy) * w_n;
      for (int64_t x = 0; x < pw; x++)
        d[x] = 0.0f;
      for (int64_t x = 0; x < w_n; x++)
        d[pw + x] = s[x];
      for (int64_t x = pw + w_n; x < row_n; x++)
        d[x] = 0.0f;
    }
    for (int64_t x = rows * row_n; x < g->chan; x++)
      out[x] = 0.0f;
  }
}

typedef struct {
  const ConvGeom *g;
  const float *src; /* the group's first input channel: padded copy or the input itself */
  float *col;       /* (channels/groups * kvol) x (p1 - p0), rows ld floats apart */
  int64_t p0, p1;   /* the output positions (flattened od, oh, ow) of this block */
  int64_t ld;
} Im2colJob;

/* Copies n_vec whole 8-float vectors: with the inner count fixed, each is one vector load and
 * store, where a loop over an arbitrary count also needs a remainder loop and its tests. */
static inline void copy_vectors(float *restrict d, const float *restrict s, int64_t n_vec)
{
  for (int64_t v = 0; v < n_vec; v++)
    for (int64_t i = 0; i < 8; i++)
      d[8 * v + i] = s[8 * v + i];
}

/* Fills the col rows of tap groups [begin, end) for output positions [p0, p1). A tap group
 * is (channel, kd, kh) and owns kernel[2] consecutive rows, one per kw; row (channel, kd, kh,
 * kw) holds, for each output position, the input element that tap multiplies. The source is
 * padded, so each output row is one plain (strided) copy per kw, and the position bookkeeping
 * is shared by the kw rows: with rows of a few dozen floats, that bookkeeping is what costs. */
static void im2col_tap_groups(void *data, int64_t begin, int64_t end)
{
  const Im2colJob *job = data;
  const ConvGeom *g = job->g;
  const int64_t kh_n = g->w.kernel[1], kw_n = g->w.kernel[2];
  const int64_t oh_n = g->w.out[1], ow_n = g->w.out[2];
  const int64_t hp = g->src_h, row_n = g->row;
  const int64_t sd = g->w.stride[0], sh = g->w.stride[1], sw = g->w.stride[2], dw = g->w.dilate[2];
  const int64_t ld = job->ld;
  const int64_t od0 = job->p0 / (oh_n * ow_n), oh0 = job->p0 / ow_n % oh_n, ow0 = job->p0 % ow_n;
  for (int64_t t = begin; t < end; t++) {
    int64_t kh = t % kh_n, kd = (t / kh_n) % g->w.kernel[0], c = t / (kh_n * g->w.kernel[0]);
    const float *base =
        job->src + c * g->chan + (kd * g->w.dilate[0] * hp + kh * g->w.dilate[1]) * row_n;
    float *dst = job->col + t * kw_n * ld;
    int64_t od = od0, oh = oh0, ow = ow0;
    for (int64_t pos = job->p0; pos < job->p1;) {
      int64_t cnt = MIN(ow_n - ow, job->p1 - pos);
      const float *row = base + (od * sd * hp + oh * sh) * row_n + ow * sw;
      /* With stride 1, whole vectors: 1.3 to 1.7 times as fast as exact copies for 7 to 28
       * columns. The floats past the output row land where the block's next positions go and
       * are overwritten next, so this needs room for them in the block (on the batched path,
       * in the image's own columns); their reads stay in the source, whose rows (row_n) are at
       * least as long as an output row. */
      int64_t n_vec = (cnt + 7) / 8;
      if (sw == 1 && 8 * n_vec <= job->p1 - pos) {
        for (int64_t kw = 0; kw < kw_n; kw++)
          copy_vectors(dst + kw * ld, row + kw * dw, n_vec);
      } else {
        for (int64_t kw = 0; kw < kw_n; kw++) {
          const float *restrict s = row + kw * dw;
          float *restrict d = dst + kw * ld;
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

typedef struct {
  const ConvGeom *g;
  const float *w; /* the group's weights, fg x (cg x kvol) */
  float *dst;     /* kvol x fg x cg */
  int64_t fg, cg;
} ReorderJob;

/* Reorders filters [begin, end) of the group's weights tap-major: one fg x cg matrix per tap. */
static void reorder_filters(void *data, int64_t begin, int64_t end)
{
  const ReorderJob *job = data;
  const int64_t kvol = job->g->w.kvol, fg = job->fg, cg = job->cg;
  for (int64_t f = begin; f < end; f++) {
    const float *restrict s = job->w + f * cg * kvol;
    for (int64_t t = 0; t < kvol; t++) {
      float *restrict d = job->dst + (t * fg + f) * cg;
      for (int64_t c = 0; c < cg; c++)
        d[c] = s[c * kvol + t];
    }
  }
}

typedef struct {
  const ConvGeom *g;
  const float *wide; /* fg x n_wide */
  const float *bias; /* the group's first filter's bias, or NULL */
  float *dst;        /* the group's first output channel */
} CompactJob;

/* Copies filters [begin, end) from the wide grid into the output, adding the bias. */
static void compact_filters(void *data, int64_t begin, int64_t end)
{
  const CompactJob *job = data;
  const ConvGeom *g = job->g;
  const int64_t ow_n = g->w.out[2];
  for (int64_t f = begin; f < end; f++) {
    float b = job->bias != NULL ? job->bias[f] : 0.0f;
    float *restrict d = job->dst + f * g->w.out_plane;
    for (int64_t od = 0; od < g->w.out[0]; od++) {
      for (int64_t oh = 0; oh < g->w.out[1]; oh++) {
        const float *restrict s = job->wide + f * g->n_wide + (od * g->src_h + oh) * g->row;
        for (int64_t ow = 0; ow < ow_n; ow++)
          d[ow] = s[ow] + b;
        d += ow_n;
      }
    }
  }
}

typedef struct {
  const float *prod; /* the batched GEMM's product: fg rows of ld, image i at i * plane */
  const float *bias; /* the group's first filter's bias, or NULL */
  float *dst;        /* the first image's group's first output channel */
  int64_t fg, ld, plane, img_stride;
} ScatterJob;

/* Copies rows [begin, end), (image, filter) pairs, from the product into the output, adding the
 * bias: the output is written in order, and each read is one image's columns of a filter row. */
static void scatter_rows(void *data, int64_t begin, int64_t end)
{
  const ScatterJob *job = data;
  const int64_t plane = job->plane;
  for (int64_t r = begin; r < end; r++) {
    int64_t img = r / job->fg, f = r % job->fg;
    float b = job->bias != NULL ? job->bias[f] : 0.0f;
    const float *restrict s = job->prod + f * job->ld + img * plane;
    float *restrict d = job->dst + img * job->img_stride + f * plane;
    for (int64_t i = 0; i < plane; i++)
      d[i] = s[i] + b;
  }
}

/* The copies around the GEMMs run on the pool only while BLAS is single-threaded. Threaded
 * OpenBLAS keeps its workers spinning on the cores for a while after each call (2^28 cycles),
 * so a pool job between two GEMMs finds no idle core: on this 2-core machine the pool's worker
 * was then woken on the caller's own core, and a split im2col took three times as long as the
 * caller alone. For the same reason the GEMMs are not split across the pool with
 * single-threaded BLAS: right after any threaded BLAS call (a FullyConnected layer, or the
 * bench's reference sgemm) both halves ran one after the other on one core. */
static void conv_copy_for(DsThreadPool *pool, bool blas_threaded, int64_t n, int64_t grain,
                          DsParallelFn fn, void *ctx)
{
  if (blas_threaded)
    fn(ctx, 0, n);
  else
    ds_parallel_for(pool, n, grain, fn, ctx);
}

/* The shifted path, for stride 1. On the source's own grid, output position (od, oh, ow) is
 * p = (od * src_h + oh) * row + ow, and tap (kd, kh, kw) reads the source at p plus a fixed
 * offset, (kd * dilate * src_h + kh * dilate) * row + kw * dilate, in every channel. So the
 * tap's im2col rows are the source channels themselves, shifted, and
 *   wide[fg x n_wide] = sum over taps of W_tap[fg x cg] * source[cg x n_wide, at the offset]
 * with the channel stride as the row stride: kvol GEMMs and no column matrix. The wide grid
 * also holds positions that are not outputs, those with ow >= out[2] (and in 3-D the rows with
 * oh >= out[1]), which straddle the padding; the compaction into the output drops them. The
 * last tap's last channel ends exactly at the end of the source, so no read leaves it. */
static DsStatus conv_shifted(const DsKernelCtx *ctx, const ConvGeom *g, bool blas_threaded)
{
  const DsConvolutionParam *p = ctx->param;
  const int64_t cg = g->w.channels / g->w.groups, fg = g->w.filters / g->w.groups;
  const int64_t k = cg * g->w.kvol, n = g->w.out_plane;
  const float *x = ctx->inputs[0].data, *w = ctx->inputs[1].data;
  const float *bias = p->no_bias ? NULL : ctx->inputs[2].data;
  float *pad_buf = ctx->workspace;
  float *w_taps = pad_buf + round16(conv_pad_floats(g));
  float *wide = w_taps + round16(fg * k);
  for (int64_t grp = 0; grp < g->w.groups; grp++) {
    ReorderJob reorder = {g, w + grp * fg * k, w_taps, fg, cg};
    conv_copy_for(ctx->pool, blas_threaded, fg, DS_CPU_PARALLEL_GRAIN / MAX(k, 1), reorder_filters,
                  &reorder);
    for (int64_t img = 0; img < g->w.batch; img++) {
      const float *src = x + (img * g->w.channels + grp * cg) * g->w.in_plane;
      if (conv_padded(g)) {
        PadJob pad = {g, src, pad_buf};
        conv_copy_for(ctx->pool, blas_threaded, cg, DS_CPU_PARALLEL_GRAIN / MAX(g->chan, 1),
                      pad_channels, &pad);
        src = pad_buf;
      }
      for (int64_t t = 0; t < g->w.kvol; t++) {
        int64_t kw = t % g->w.kernel[2], kh = t / g->w.kernel[2] % g->w.kernel[1];
        int64_t kd = t / (g->w.kernel[2] * g->w.kernel[1]);
        int64_t offset =
            (kd * g->w.dilate[0] * g->src_h + kh * g->w.dilate[1]) * g->row + kw * g->w.dilate[2];
        DsStatus st = ds_cpu_sgemm(false, false, fg, g->n_wide, cg, 1.0f, w_taps + t * fg * cg, cg,
                                   src + offset, g->chan, t == 0 ? 0.0f : 1.0f, wide, g->n_wide);
        if (st != DS_STATUS_OK)
          return st;
      }
      CompactJob compact = {g, wide, bias != NULL ? bias + grp * fg : NULL,
                            (float *)ctx->outputs[0].data + (img * g->w.filters + grp * fg) * n};
      conv_copy_for(ctx->pool, blas_threaded, fg, DS_CPU_PARALLEL_GRAIN / MAX(n, 1),
                    compact_filters, &compact);
    }
  }
  return DS_STATUS_OK;
}

/* The batched path: per group, n_imgs images are unrolled side by side into one column matrix,
 * image i in columns [i * out_plane, (i + 1) * out_plane), so that one GEMM computes all their
 * outputs, filter-major (fg x n_imgs * out_plane), and a scatter puts each image's block in its
 * place. The scatter, one float per k multiply-adds, costs little next to the GEMM. */
static DsStatus conv_batched(const DsKernelCtx *ctx, const ConvGeom *g, bool blas_threaded)
{
  const DsConvolutionParam *p = ctx->param;
  const int64_t cg = g->w.channels / g->w.groups, fg = g->w.filters / g->w.groups;
  const int64_t k = cg * g->w.kvol, n = g->w.out_plane, cols = g->n_imgs * n;
  const float *x = ctx->inputs[0].data, *w = ctx->inputs[1].data;
  const float *bias = p->no_bias ? NULL : ctx->inputs[2].data;
  float *y = ctx->outputs[0].data;
  float *pad_buf = ctx->workspace;
  float *col = pad_buf + round16(conv_pad_floats(g));
  float *prod = col + round16(k * cols);
  const int64_t group_grain = DS_CPU_PARALLEL_GRAIN / MAX(n * g->w.kernel[2], 1);
  for (int64_t grp = 0; grp < g->w.groups; grp++) {
    for (int64_t img0 = 0; img0 < g->w.batch; img0 += g->n_imgs) {
      const int64_t imgs = MIN(g->n_imgs, g->w.batch - img0);
      for (int64_t i = 0; i < imgs; i++) {
        const float *src = x + ((img0 + i) * g->w.channels + grp * cg) * g->w.in_plane;
        if (conv_padded(g)) {
          PadJob pad = {g, src, pad_buf};
          conv_copy_for(ctx->pool, blas_threaded, cg, DS_CPU_PARALLEL_GRAIN / MAX(g->chan, 1),
                        pad_channels, &pad);
          src = pad_buf;
        }
        Im2colJob job = {g, src, col + i * n, 0, n, cols};
        conv_copy_for(ctx->pool, blas_threaded, k / g->w.kernel[2], group_grain, im2col_tap_groups,
                      &job);
      }
      DsStatus st = ds_cpu_sgemm(false, false, fg, imgs * n, k, 1.0f, w + grp * fg * k, k, col,
                                 cols, 0.0f, prod, cols);
      if (st != DS_STATUS_OK)
        return st;
      float *dst = y + (img0 * g->w.filters + grp * fg) * n;
      const float *b = bias != NULL ? bias + grp * fg : NULL;
      ScatterJob scatter = {prod, b, dst, fg, cols, n, g->w.filters * n};
      conv_copy_for(ctx->pool, blas_threaded, imgs * fg, DS_CPU_PARALLEL_GRAIN / MAX(n, 1),
                    scatter_rows, &scatter);
    }
  }
  return DS_STATUS_OK;
}

/* The direct and im2col paths. */
static DsStatus conv_im2col(const DsKernelCtx *ctx, const ConvGeom *g, bool blas_threaded)
{
  const DsConvolutionParam *p = ctx->param;
  const int64_t cg = g->w.channels / g->w.groups, fg = g->w.filters / g->w.groups;
  const int64_t k = cg * g->w.kvol, n = g->w.out_plane;
  const float *x = ctx->inputs[0].data, *w = ctx->inputs[1].data;
  const float *bias = p->no_bias ? NULL : ctx->inputs[2].data;
  float *y = ctx->outputs[0].data;
  const int64_t block = g->w.direct ? n : conv_block_cols(k, n);
  float *col = g->w.direct ? NULL : (float *)ctx->workspace + round16(conv_pad_floats(g));
  /* Each tap group of a block is kernel[2] * block floats; split groups across threads once
   * there is enough. */
  const int64_t group_grain = DS_CPU_PARALLEL_GRAIN / MAX(block * g->w.kernel[2], 1);
  for (int64_t img = 0; img < g->w.batch; img++) {
    for (int64_t grp = 0; grp < g->w.groups; grp++) {
      const float *src = x + (img * g->w.channels + grp * cg) * g->w.in_plane;
      float *dst = y + (img * g->w.filters + grp * fg) * n;
      float beta = 0.0f;
      if (bias != NULL) {
        BiasJob job = {bias + grp * fg, dst, n};
        conv_copy_for(ctx->pool, blas_threaded, fg, DS_CPU_PARALLEL_GRAIN / MAX(n, 1),
                      fill_bias_rows, &job);
        beta = 1.0f;
      }
      if (g->w.direct) {
        DsStatus st =
            ds_cpu_sgemm(false, false, fg, n, k, 1.0f, w + grp * fg * k, k, src, n, beta, dst, n);
        if (st != DS_STATUS_OK)
          return st;
        continue;
      }
      Im2colJob job = {g, src, col, 0, 0, 0};
      if (conv_padded(g)) {
        PadJob pad = {g, src, ctx->workspace};
        conv_copy_for(ctx->pool, blas_threaded, cg, DS_CPU_PARALLEL_GRAIN / MAX(g->chan, 1),
                      pad_channels, &pad);
        job.src = ctx->workspace;
      }
      for (int64_t p0 = 0; p0 < n; p0 += block) {
        job.p0 = p0;
        job.p1 = MIN(n, p0 + block);
        job.ld = job.p1 - p0;
        conv_copy_for(ctx->pool, blas_threaded, k / g->w.kernel[2], group_grain, im2col_tap_groups,
                      &job);
        DsStatus st = ds_cpu_sgemm(false, false, fg, job.p1 - p0, k, 1.0f, w + grp * fg * k, k, col,
                                   job.p1 - p0, beta, dst + p0, n);
        if (st != DS_STATUS_OK)
          return st;
      }
    }
  }
  return DS_STATUS_OK;
}

static DsStatus conv_run(const DsKernelCtx *ctx)
{
  const DsConvolutionParam *p = ctx->param;
  const DsTensor *data = &ctx->inputs[0], *weight = &ctx->inputs[1];
  const DsTensor *bias = p->no_bias ? NULL : &ctx->inputs[2];
  DsTensor *out = &ctx->outputs[0];
  if (data->dtype != DS_DTYPE_FLOAT32 || weight->dtype != DS_DTYPE_FLOAT32 ||
      out->dtype != DS_DTYPE_FLOAT32 || (bias != NULL && bias->dtype != DS_DTYPE_FLOAT32))
    return DS_STATUS_UNSUPPORTED;
  ConvGeom g;
  if (!conv_geom(p, data, out, &g))
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_geom_conv_weights(&g.w, weight, bias))
    return DS_STATUS_INVALID_ARGUMENT;
  if (ctx->workspace == NULL &&
      conv_workspace(p, ctx->inputs, ctx->n_inputs, ctx->outputs, ctx->n_outputs) > 0)
    return DS_STATUS_INVALID_ARGUMENT;

  const bool blas_threaded = openblas_get_num_threads() > 1;
  if (g.n_imgs > 1)
    return conv_batched(ctx, &g, blas_threaded);
  return g.shifted ? conv_shifted(ctx, &g, blas_threaded) : conv_im2col(ctx, &g, blas_threaded);
}

const DsKernel ds_cpu_convolution_kernel = {conv_run, conv_workspace};
