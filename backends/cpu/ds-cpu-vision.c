/* ds-cpu-vision.c: CPU kernels of the vision family (float32): box_nms, ROIAlign, adaptive
 * average pooling and Deconvolution; and ONNX's Resize (_contrib_resize and its dynamic form,
 * every numeric dtype), NonMaxSuppression and GridSample (float32 and float64, positions in
 * double).
 *
 * Resize in float32 linear and cubic mode computes as ONNX Runtime's CPU kernel does, bit for
 * bit: per-axis tables of neighbours and weights built once per call in float, and its order of
 * products and sums (see ort_resize_run). Nearest mode and the other dtypes compute, for every
 * output element, each axis' taps (input positions and weights) in double as ONNX's reference
 * does, and sum over their combinations; axes left at scale 1 have a single tap. NonMaxSuppression sorts each class' candidates by score and keeps a box unless one kept
 * before overlaps it by more than the IoU threshold (ONNX Runtime's test: an empty box never
 * suppresses).
 *
 * Each follows MXNet 1.x's CPU implementation step by step where the arithmetic order is
 * observable (ROIAlign's sample positions and bilinear weights, box_nms's float IoU against a
 * float threshold), so results match MXNet's to float rounding. Deconvolution is the transpose
 * of Convolution's im2col + sgemm: one sgemm per image, group and block of input rows gives
 * the column matrix W^T x, which col2im scatters (sums) into the output.
 *
 * Scratch memory comes from the workspace: box_nms's sort indices and areas, Deconvolution's
 * column block. ROIAlign needs none: its sampling weights are computed in fixed-size chunks on
 * the stack, because their number depends on the rois' values, which the planner cannot see.
 *
 * Where MXNet's behaviour is undefined or aborts, the kernels choose: a roi whose batch index is
 * negative gives zeros (MXNet's documented intent; its kernel zeroes one element), an index past
 * the batch is DS_STATUS_OUT_OF_RANGE (MXNet reads out of bounds), an empty roi with
 * aligned=True is DS_STATUS_INVALID_ARGUMENT (MXNet's CHECK fails), and a non-finite roi
 * coordinate gives NaN.
 */
/* Keep the short zero-fill and copy loops as loops (see ds-cpu-conv.c). */
#pragma GCC optimize("no-tree-loop-distribute-patterns")

#include <cblas.h>
#include <math.h>
#include <string.h>

#include "ds-cpu-copy.h"
#include "ds-cpu-gemm.h"
#include "ds-cpu.h"

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

static int64_t round16(int64_t n)
{
  return (n + 15) / 16 * 16;
}

/* --- _contrib_box_nms --------------------------------------------------------------------- */

/* MXNet compares class ids as static_cast<int>(float). x86's conversion gives INT32_MIN for NaN
 * and out-of-range values, where C leaves them undefined; reproduce x86. */
static int32_t class_key(float v)
{
  if (!(v > -2147483648.0f && v < 2147483648.0f))
    return G_MININT32;
  return (int32_t)v;
}

/* MXNet's Intersect: the overlap of two boxes along one axis, given a box's first value on the
 * axis (`a[0]`) and its third (`a[2]`): (min, max) for corner boxes, (centre, size) for
 * center boxes. */
static float box_intersect(const float *a, const float *b, DsBoxFormat fmt)
{
  float w;
  if (fmt == DS_BOX_CORNER) {
    float left = a[0] > b[0] ? a[0] : b[0];
    float right = a[2] < b[2] ? a[2] : b[2];
    w = right - left;
  } else {
    float aw = a[2] / 2, bw = b[2] / 2;
    float al = a[0] - aw, ar = a[0] + aw, bl = b[0] - bw, br = b[0] + bw;
    float left = bl > al ? bl : al;
    float right = br < ar ? br : ar;
    w = right - left;
  }
  return w > 0 ? w : 0.0f;
}

/* MXNet's BoxArea: 0 for a box with a negative side. */
static float box_area(const float *b, DsBoxFormat fmt)
{
  float w = fmt == DS_BOX_CORNER ? b[2] - b[0] : b[2];
  float h = fmt == DS_BOX_CORNER ? b[3] - b[1] : b[3];
  return (w < 0 || h < 0) ? 0.0f : w * h;
}

typedef struct {
  const DsBoxNMSParam *p;
  const float *in;
  float *out, *record;
  int64_t n_box, width, topk;
  int32_t *order; /* 2 * n_box per batch: the candidates, and the merge sort's buffer */
  float *areas;   /* n_box per batch */
} NmsJob;

/* Stable merge sort of `n` box indices by score, highest first: ties keep index order, as
 * MXNet's std::stable_sort over boxes listed in index order does. */
static void sort_by_score(int32_t *idx, int32_t *tmp, int64_t n, const float *boxes, int64_t width,
                          int64_t score_index)
{
  int32_t *src = idx, *dst = tmp;
  for (int64_t run = 1; run < n; run *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * run) {
      int64_t mid = MIN(lo + run, n), hi = MIN(lo + 2 * run, n);
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        float si = boxes[src[i] * width + score_index], sj = boxes[src[j] * width + score_index];
        dst[k++] = sj > si ? src[j++] : src[i++];
      }
      while (i < mid)
        dst[k++] = src[i++];
      while (j < hi)
        dst[k++] = src[j++];
    }
    int32_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != idx)
    memcpy(idx, src, (size_t)n * sizeof(int32_t));
}

/* MXNet's corner_to_center / center_to_corner on one output row; like MXNet, a row whose first
 * coordinate is negative (the -1 filler rows, but also real boxes left of 0) is left as is. */
static void convert_box(float *b, DsBoxFormat to)
{
  if (b[0] < 0)
    return;
  if (to == DS_BOX_CENTER) {
    float l = b[0], t = b[1], r = b[2], bot = b[3];
    b[0] = (l + r) / 2;
    b[1] = (t + bot) / 2;
    b[2] = r - l;
    b[3] = bot - t;
  } else {
    float x = b[0], y = b[1], w = b[2] / 2, h = b[3] / 2;
    b[0] = x - w;
    b[1] = y - h;
    b[2] = x + w;
    b[3] = y + h;
  }
}

/* One batch: filter by score (and background class), sort, keep the topk best, suppress
 * greedily, and write the kept boxes in order followed by -1 rows. */
static void nms_batch(const NmsJob *job, int64_t b)
{
  const DsBoxNMSParam *p = job->p;
  const int64_t n = job->n_box, w = job->width, cs = p->coord_start;
  const float *x = job->in + b * n * w;
  float *y = job->out + b * n * w, *rec = job->record + b * n;
  int32_t *order = job->order + b * 2 * n;
  float *areas = job->areas + b * n;
  const bool has_id = p->id_index >= 0;
  const float background = (float)p->background_id;

  int64_t n_valid = 0;
  for (int64_t i = 0; i < n; i++) {
    const float *box = x + i * w;
    bool valid = box[p->score_index] > p->valid_thresh;
    if (has_id)
      valid = valid && box[p->id_index] != background;
    if (valid)
      order[n_valid++] = (int32_t)i;
  }
  sort_by_score(order, order + n, n_valid, x, w, p->score_index);
  const int64_t k_n = MIN(n_valid, job->topk);
  for (int64_t k = 0; k < k_n; k++)
    areas[k] = box_area(x + order[k] * w + cs, p->in_format);

  /* Greedy suppression in score order; a suppressed box (index -1) no longer suppresses. */
  const bool by_class = !p->force_suppress && has_id;
  for (int64_t r = 0; r < k_n; r++) {
    if (order[r] < 0)
      continue;
    const float *rb = x + order[r] * w;
    const int32_t r_class = by_class ? class_key(rb[p->id_index]) : 0;
    for (int64_t q = r + 1; q < k_n; q++) {
      if (order[q] < 0)
        continue;
      const float *qb = x + order[q] * w;
      if (by_class && class_key(qb[p->id_index]) != r_class)
        continue;
      float inter = box_intersect(rb + cs, qb + cs, p->in_format);
      inter *= box_intersect(rb + cs + 1, qb + cs + 1, p->in_format);
      float iou = inter / (areas[r] + areas[q] - inter);
      if (iou > p->overlap_thresh)
        order[q] = -1;
    }
  }

  for (int64_t i = 0; i < n * w; i++)
    y[i] = -1.0f;
  for (int64_t i = 0; i < n; i++)
    rec[i] = -1.0f;
  int64_t count = 0;
  for (int64_t k = 0; k < k_n; k++) {
    if (order[k] < 0)
      continue;
    memcpy(y + count * w, x + order[k] * w, (size_t)w * sizeof(float));
    /* The record holds the flat index over all batches, as MXNet's does. */
    rec[count] = (float)(b * n + order[k]);
    count++;
  }
  if (p->in_format != p->out_format)
    for (int64_t i = 0; i < n; i++)
      convert_box(y + i * w + cs, p->out_format);
}

static void nms_batches(void *data, int64_t begin, int64_t end)
{
  const NmsJob *job = data;
  for (int64_t b = begin; b < end; b++)
    nms_batch(job, b);
}

/* Splits box_nms's data (..., N, W) into batches, boxes and width; false if not 2-D or more. */
static bool nms_dims(const DsTensor *data, int64_t *batch, int64_t *n_box, int64_t *width)
{
  if (data->ndim < 2)
    return false;
  *batch = ds_shape_span(data->shape, 0, data->ndim - 2);
  *n_box = data->shape[data->ndim - 2];
  *width = data->shape[data->ndim - 1];
  return true;
}

/* Two int32 index lists and one float area list per box. */
static size_t box_nms_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                                const DsTensor *outputs, int n_outputs)
{
  (void)param;
  (void)n_inputs;
  (void)outputs;
  (void)n_outputs;
  int64_t batch, n_box, width;
  if (!nms_dims(&inputs[0], &batch, &n_box, &width))
    return 0;
  int64_t total = batch * n_box;
  return (size_t)(round16(2 * total) + round16(total)) * sizeof(float);
}

static DsStatus box_nms_run(const DsKernelCtx *ctx)
{
  const DsBoxNMSParam *p = ctx->param;
  if (!all_f32(ctx->inputs, 1) || !all_f32(ctx->outputs, 2))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *data = &ctx->inputs[0];
  int64_t batch, n_box, width;
  if (!nms_dims(data, &batch, &n_box, &width) ||
      ds_tensor_numel(&ctx->outputs[0]) != ds_tensor_numel(data) ||
      ds_tensor_numel(&ctx->outputs[1]) != batch * n_box)
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t need = MAX(MAX(p->coord_start + 4, p->score_index + 1), p->id_index + 1);
  if (width < need || batch * n_box > G_MAXINT32)
    return DS_STATUS_INVALID_ARGUMENT;
  const float *x = data->data;
  float *y = ctx->outputs[0].data, *rec = ctx->outputs[1].data;
  const int64_t topk = p->topk < 0 ? n_box : MIN(n_box, p->topk);
  if (topk < 1) {
    /* MXNet's shortcut: the input as is (no filtering, no format change), identity record. */
    memcpy(y, x, ds_tensor_nbytes(data));
    for (int64_t i = 0; i < batch * n_box; i++)
      rec[i] = (float)i;
    return DS_STATUS_OK;
  }
  const int64_t total = batch * n_box;
  if (total == 0)
    return DS_STATUS_OK;
  if (ctx->workspace == NULL)
    return DS_STATUS_INVALID_ARGUMENT;
  NmsJob job = {.p = p,
                .in = x,
                .out = y,
                .record = rec,
                .n_box = n_box,
                .width = width,
                .topk = topk,
                .order = ctx->workspace,
                .areas = (float *)ctx->workspace + round16(2 * total)};
  ds_parallel_for(ctx->pool, batch, grain_for(n_box * width * 8), nms_batches, &job);
  return DS_STATUS_OK;
}

/* --- _contrib_ROIAlign -------------------------------------------------------------------- */

/* One sampling point: its four neighbours in the plane and their bilinear weights. */
typedef struct {
  int64_t pos[4];
  float w[4];
} RoiSample;

/* Sampling points computed at a time (48 bytes each, on the stack): their weights are reused
 * for every channel, without a buffer whose size would depend on the rois' values. 1024 holds
 * every sample of a 14x14 output with 2x2 samples per bin (Mask R-CNN's setting). */
#define ROI_CHUNK 1024

/* MXNet's pre_calc_for_bilinear_interpolate for one point: clamp to the map, and no weight at
 * all more than one pixel outside (still reading pixel 0 with weight 0, as MXNet does). */
static void roi_sample(float y, float x, int64_t height, int64_t width, RoiSample *s)
{
  if (y < -1.0f || y > (float)height || x < -1.0f || x > (float)width) {
    *s = (RoiSample){{0, 0, 0, 0}, {0, 0, 0, 0}};
    return;
  }
  if (y <= 0)
    y = 0;
  if (x <= 0)
    x = 0;
  int64_t y_low = (int64_t)y, x_low = (int64_t)x, y_high, x_high;
  if (y_low >= height - 1) {
    y_high = y_low = height - 1;
    y = (float)y_low;
  } else {
    y_high = y_low + 1;
  }
  if (x_low >= width - 1) {
    x_high = x_low = width - 1;
    x = (float)x_low;
  } else {
    x_high = x_low + 1;
  }
  float ly = y - (float)y_low, lx = x - (float)x_low;
  float hy = 1.0f - ly, hx = 1.0f - lx;
  s->pos[0] = y_low * width + x_low;
  s->pos[1] = y_low * width + x_high;
  s->pos[2] = y_high * width + x_low;
  s->pos[3] = y_high * width + x_high;
  s->w[0] = hy * hx;
  s->w[1] = hy * lx;
  s->w[2] = ly * hx;
  s->w[3] = ly * lx;
}

/* One roi's geometry, as MXNet's ROIAlignForward derives it. */
typedef struct {
  int64_t batch; /* -1: skipped (negative batch index): zeros */
  bool nan;      /* a non-finite coordinate: NaN output */
  float start_h, start_w, bin_h, bin_w;
  int64_t grid_h, grid_w;
} RoiGeom;

/* Reads roi `r`. Returns DS_STATUS_OUT_OF_RANGE for a batch index past the data, and
 * DS_STATUS_INVALID_ARGUMENT for an empty aligned roi (MXNet's CHECK_GT) or a sampling grid
 * beyond int range. */
static DsStatus roi_geom(const DsROIAlignParam *p, const float *roi, int64_t n_images, RoiGeom *g)
{
  *g = (RoiGeom){.batch = -1};
  /* static_cast<int>: truncation, so (-1, 0) is image 0; NaN is negative on x86. */
  float bi = roi[0];
  if (!(bi > -1.0f))
    return DS_STATUS_OK;
  if (bi >= (float)n_images)
    return DS_STATUS_OUT_OF_RANGE;
  g->batch = (int64_t)bi;
  for (int i = 1; i < 5; i++)
    if (!isfinite(roi[i])) {
      g->nan = true;
      return DS_STATUS_OK;
    }
  const float offset = p->aligned ? 0.5f : 0.0f;
  const float scale = p->spatial_scale;
  g->start_w = roi[1] * scale - offset;
  g->start_h = roi[2] * scale - offset;
  float end_w = roi[3] * scale - offset, end_h = roi[4] * scale - offset;
  float roi_w = end_w - g->start_w, roi_h = end_h - g->start_h;
  if (p->aligned) {
    if (!(roi_w > 0.0f && roi_h > 0.0f))
      return DS_STATUS_INVALID_ARGUMENT;
  } else {
    /* Malformed rois become 1x1. */
    roi_w = roi_w > 1.0f ? roi_w : 1.0f;
    roi_h = roi_h > 1.0f ? roi_h : 1.0f;
  }
  g->bin_h = roi_h / (float)p->pooled_size[0];
  g->bin_w = roi_w / (float)p->pooled_size[1];
  if (p->sample_ratio > 0) {
    g->grid_h = g->grid_w = p->sample_ratio;
  } else {
    float gh = ceilf(roi_h / (float)p->pooled_size[0]);
    float gw = ceilf(roi_w / (float)p->pooled_size[1]);
    if (!(gh < 2147483648.0f && gw < 2147483648.0f))
      return DS_STATUS_INVALID_ARGUMENT;
    g->grid_h = (int64_t)gh;
    g->grid_w = (int64_t)gw;
  }
  return DS_STATUS_OK;
}

typedef struct {
  const DsROIAlignParam *p;
  const float *data, *rois;
  float *out;
  int64_t n_images, in_channels, out_channels, height, width;
} RoiJob;

static void roi_align_one(const RoiJob *job, int64_t r)
{
  const DsROIAlignParam *p = job->p;
  const int64_t ph_n = p->pooled_size[0], pw_n = p->pooled_size[1], bins = ph_n * pw_n;
  const int64_t plane = job->height * job->width, channels = job->out_channels;
  float *out = job->out + r * channels * bins;
  RoiGeom g;
  roi_geom(p, job->rois + r * 5, job->n_images, &g);
  if (g.batch < 0 || g.nan) {
    float v = g.batch < 0 ? 0.0f : NAN;
    for (int64_t i = 0; i < channels * bins; i++)
      out[i] = v;
    return;
  }
  const float *image = job->data + g.batch * job->in_channels * plane;
  const int64_t per_bin = g.grid_h * g.grid_w;
  const float count = (float)per_bin;
  /* Blocks of whole bins whose samples fit the buffer (all of them, for the usual sizes), or
   * one bin in chunks of samples. Within a block the channels are the outer loop, so each
   * channel's plane and output row are read and written contiguously. */
  const int64_t block_bins = MAX(1, ROI_CHUNK / per_bin);
  const int64_t chunk = MIN(per_bin, ROI_CHUNK);
  RoiSample s[ROI_CHUNK];
  for (int64_t b0 = 0; b0 < bins; b0 += block_bins) {
    const int64_t b1 = MIN(bins, b0 + block_bins);
    for (int64_t s0 = 0; s0 < per_bin; s0 += chunk) {
      const int64_t s1 = MIN(per_bin, s0 + chunk), n_s = s1 - s0;
      for (int64_t bin = b0; bin < b1; bin++) {
        const int64_t ph = bin / pw_n, pw = bin % pw_n;
        for (int64_t k = s0; k < s1; k++) {
          const int64_t iy = k / g.grid_w, ix = k % g.grid_w;
          /* MXNet's expression order: start + bin index * bin size + (i + .5) * bin / grid. */
          float y =
              g.start_h + (float)ph * g.bin_h + ((float)iy + 0.5f) * g.bin_h / (float)g.grid_h;
          float x =
              g.start_w + (float)pw * g.bin_w + ((float)ix + 0.5f) * g.bin_w / (float)g.grid_w;
          roi_sample(y, x, job->height, job->width, &s[(bin - b0) * n_s + (k - s0)]);
        }
      }
      for (int64_t c = 0; c < channels; c++) {
        float *o = out + c * bins;
        for (int64_t bin = b0; bin < b1; bin++) {
          /* Position-sensitive: each bin reads its own group of channels. */
          const float *src = image + (p->position_sensitive ? c * bins + bin : c) * plane;
          const RoiSample *sb = s + (bin - b0) * n_s;
          /* The samples in MXNet's order, continuing the sum of the previous chunks. */
          float acc = s0 == 0 ? 0.0f : o[bin];
          for (int64_t k = 0; k < n_s; k++)
            acc += sb[k].w[0] * src[sb[k].pos[0]] + sb[k].w[1] * src[sb[k].pos[1]] +
                   sb[k].w[2] * src[sb[k].pos[2]] + sb[k].w[3] * src[sb[k].pos[3]];
          o[bin] = s1 == per_bin ? acc / count : acc;
        }
      }
    }
  }
}

static void roi_align_range(void *data, int64_t begin, int64_t end)
{
  const RoiJob *job = data;
  for (int64_t r = begin; r < end; r++)
    roi_align_one(job, r);
}

static DsStatus roi_align_run(const DsKernelCtx *ctx)
{
  const DsROIAlignParam *p = ctx->param;
  if (!all_f32(ctx->inputs, 2) || !all_f32(ctx->outputs, 1))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *data = &ctx->inputs[0], *rois = &ctx->inputs[1], *out = &ctx->outputs[0];
  const int64_t bins = p->pooled_size[0] * p->pooled_size[1];
  if (data->ndim != 4 || rois->ndim != 2 || rois->shape[1] != 5 || out->ndim != 4)
    return DS_STATUS_INVALID_ARGUMENT;
  const int64_t in_c = data->shape[1];
  const int64_t out_c = p->position_sensitive ? in_c / bins : in_c;
  if ((p->position_sensitive && in_c % bins != 0) || out->shape[0] != rois->shape[0] ||
      out->shape[1] != out_c || out->shape[2] != p->pooled_size[0] ||
      out->shape[3] != p->pooled_size[1] || data->shape[2] < 1 || data->shape[3] < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  RoiJob job = {.p = p,
                .data = data->data,
                .rois = rois->data,
                .out = out->data,
                .n_images = data->shape[0],
                .in_channels = in_c,
                .out_channels = out_c,
                .height = data->shape[2],
                .width = data->shape[3]};
  /* Validate every roi first, so that the parallel part cannot fail. */
  int64_t max_samples = 1;
  for (int64_t r = 0; r < rois->shape[0]; r++) {
    RoiGeom g;
    DsStatus st = roi_geom(p, job.rois + r * 5, job.n_images, &g);
    if (st != DS_STATUS_OK)
      return st;
    if (g.batch >= 0 && !g.nan)
      max_samples = MAX(max_samples, g.grid_h * g.grid_w);
  }
  ds_parallel_for(ctx->pool, rois->shape[0], grain_for(out_c * bins * 4 * MIN(max_samples, 16)),
                  roi_align_range, &job);
  return DS_STATUS_OK;
}

/* --- _contrib_AdaptiveAvgPooling2D -------------------------------------------------------- */

typedef struct {
  const float *in;
  float *out;
  int64_t ih, iw, oh, ow;
} AdaptiveJob;

/* MXNet's START_IND and END_IND: floor(o * in / out) and ceil((o + 1) * in / out), here in
 * integers (MXNet divides in float, which is exact for the sizes that fit a float). */
static int64_t adaptive_start(int64_t o, int64_t out, int64_t in)
{
  return o * in / out;
}
static int64_t adaptive_end(int64_t o, int64_t out, int64_t in)
{
  return ((o + 1) * in + out - 1) / out;
}

static void adaptive_planes(void *data, int64_t begin, int64_t end)
{
  const AdaptiveJob *job = data;
  for (int64_t pl = begin; pl < end; pl++) {
    const float *x = job->in + pl * job->ih * job->iw;
    float *y = job->out + pl * job->oh * job->ow;
    for (int64_t oy = 0; oy < job->oh; oy++) {
      int64_t y0 = adaptive_start(oy, job->oh, job->ih), y1 = adaptive_end(oy, job->oh, job->ih);
      for (int64_t ox = 0; ox < job->ow; ox++) {
        int64_t x0 = adaptive_start(ox, job->ow, job->iw);
        int64_t x1 = adaptive_end(ox, job->ow, job->iw);
        float sum = 0.0f;
        for (int64_t iy = y0; iy < y1; iy++) {
          const float *restrict row = x + iy * job->iw;
          for (int64_t ix = x0; ix < x1; ix++)
            sum += row[ix];
        }
        y[oy * job->ow + ox] = sum / (float)(x1 - x0) / (float)(y1 - y0);
      }
    }
  }
}

static DsStatus adaptive_avg_pool_run(const DsKernelCtx *ctx)
{
  const DsAdaptiveAvgPoolParam *p = ctx->param;
  if (!all_f32(ctx->inputs, 1) || !all_f32(ctx->outputs, 1))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *x = &ctx->inputs[0], *y = &ctx->outputs[0];
  if (x->ndim != 4 || y->ndim != 4 || y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1] ||
      y->shape[2] != p->output_size[0] || y->shape[3] != p->output_size[1] || x->shape[2] < 1 ||
      x->shape[3] < 1)
    return DS_STATUS_INVALID_ARGUMENT;
  AdaptiveJob job = {x->data, y->data, x->shape[2], x->shape[3], y->shape[2], y->shape[3]};
  /* Every input element is read about once per window overlapping it: at most 4 times. */
  int64_t cost = MAX(job.ih * job.iw, job.oh * job.ow);
  ds_parallel_for(ctx->pool, x->shape[0] * x->shape[1], grain_for(cost), adaptive_planes, &job);
  return DS_STATUS_OK;
}

/* --- _contrib_grid_sample ----------------------------------------------------------------- */

/* Positions are computed in double, as PyTorch's grid_sampler does in the data's type; an
 * output position's taps (at most 4x4 input pixels and their weights) are found once and
 * applied to every channel. */
typedef struct {
  const DsGridSampleParam *p;
  const void *x, *grid;
  void *y;
  bool f64;
  int64_t channels, h, w, oh, ow;
} GridJob;

typedef struct {
  int n;
  int64_t offset[16]; /* into a channel plane */
  double weight[16];
} GridTaps;

static double grid_value(const void *base, bool f64, int64_t i)
{
  return f64 ? ((const double *)base)[i] : ((const float *)base)[i];
}

/* From [-1, 1] to pixel coordinates. */
static double grid_unnormalize(double coord, int64_t size, bool align_corners)
{
  return align_corners ? (coord + 1) / 2 * (double)(size - 1) : ((coord + 1) * size - 1) / 2;
}

/* Mirrors `c` into [twice_low / 2, twice_high / 2] by folding at its ends. */
static double grid_reflect(double c, double twice_low, double twice_high)
{
  if (twice_low == twice_high)
    return 0;
  const double low = twice_low / 2, span = (twice_high - twice_low) / 2;
  c = fabs(c - low);
  const double extra = fmod(c, span), flips = floor(c / span);
  return fmod(flips, 2) == 0 ? extra + low : span - extra + low;
}

/* A coordinate after the padding mode: border clamps to the image, reflection mirrors at its
 * edges (pixel centres with align_corners, outer edges without) and then clamps; zeros keeps
 * it, and reads past the edge give 0. */
static double grid_pad(double c, int64_t size, DsGridSamplePadding padding, bool align_corners)
{
  if (padding == DS_GRID_PAD_ZEROS)
    return c;
  if (padding == DS_GRID_PAD_REFLECTION)
    c = align_corners ? grid_reflect(c, 0, 2.0 * (double)(size - 1))
                      : grid_reflect(c, -1, 2.0 * (double)size - 1);
  return fmin((double)(size - 1), fmax(c, 0.0));
}

/* Adds input pixel (ix, iy) with `weight`, unless it lies outside (or the position was not a
 * number: far-away and NaN coordinates read as outside). */
static void grid_tap(GridTaps *t, const GridJob *job, double ix, double iy, double weight)
{
  if (!(ix >= 0 && ix < (double)job->w && iy >= 0 && iy < (double)job->h))
    return;
  t->offset[t->n] = (int64_t)iy * job->w + (int64_t)ix;
  t->weight[t->n] = weight;
  t->n++;
}

/* Keys' cubic convolution weights (a = -0.75) for the four neighbours of fraction t. */
static void grid_cubic_weights(double t, double w[4])
{
  const double a = -0.75;
  const double near1 = t, near2 = 1 - t;
  w[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
  w[1] = ((a + 2) * near1 - (a + 3)) * near1 * near1 + 1;
  w[2] = ((a + 2) * near2 - (a + 3)) * near2 * near2 + 1;
  w[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

static void grid_taps(const GridJob *job, double gx, double gy, GridTaps *t)
{
  const DsGridSampleParam *p = job->p;
  const bool align = p->align_corners;
  t->n = 0;
  double x = grid_unnormalize(gx, job->w, align), y = grid_unnormalize(gy, job->h, align);
  if (!(fabs(x) < 1e15 && fabs(y) < 1e15))
    return; /* NaN or beyond any image: nothing to read, even with padding */
  if (p->mode == DS_GRID_BICUBIC) {
    /* The neighbourhood of the unpadded position; each neighbour is padded on its own. */
    const double x0 = floor(x), y0 = floor(y);
    double wx[4], wy[4];
    grid_cubic_weights(x - x0, wx);
    grid_cubic_weights(y - y0, wy);
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < 4; j++)
        grid_tap(t, job, grid_pad(x0 - 1 + j, job->w, p->padding, align),
                 grid_pad(y0 - 1 + i, job->h, p->padding, align), wx[j] * wy[i]);
    return;
  }
  x = grid_pad(x, job->w, p->padding, align);
  y = grid_pad(y, job->h, p->padding, align);
  if (p->mode == DS_GRID_NEAREST) {
    grid_tap(t, job, nearbyint(x), nearbyint(y), 1.0); /* halves to even, as PyTorch */
    return;
  }
  const double x0 = floor(x), y0 = floor(y), tx = x - x0, ty = y - y0;
  grid_tap(t, job, x0, y0, (1 - tx) * (1 - ty));
  grid_tap(t, job, x0 + 1, y0, tx * (1 - ty));
  grid_tap(t, job, x0, y0 + 1, (1 - tx) * ty);
  grid_tap(t, job, x0 + 1, y0 + 1, tx * ty);
}

/* Output rows [begin, end) of every image: row r is image r / oh, output row r % oh. */
static void grid_rows(void *data, int64_t begin, int64_t end)
{
  const GridJob *job = data;
  const int64_t plane = job->h * job->w, out_plane = job->oh * job->ow;
  for (int64_t r = begin; r < end; r++) {
    const int64_t n = r / job->oh, oy = r % job->oh;
    for (int64_t ox = 0; ox < job->ow; ox++) {
      const int64_t g = ((n * job->oh + oy) * job->ow + ox) * 2;
      GridTaps taps;
      grid_taps(job, grid_value(job->grid, job->f64, g), grid_value(job->grid, job->f64, g + 1),
                &taps);
      for (int64_t c = 0; c < job->channels; c++) {
        const int64_t in_base = (n * job->channels + c) * plane;
        double sum = 0;
        for (int k = 0; k < taps.n; k++)
          sum += taps.weight[k] * grid_value(job->x, job->f64, in_base + taps.offset[k]);
        const int64_t o = (n * job->channels + c) * out_plane + oy * job->ow + ox;
        if (job->f64)
          ((double *)job->y)[o] = sum;
        else
          ((float *)job->y)[o] = (float)sum;
      }
    }
  }
}

static DsStatus grid_sample_run(const DsKernelCtx *ctx)
{
  const DsTensor *x = &ctx->inputs[0], *grid = &ctx->inputs[1], *y = &ctx->outputs[0];
  if ((x->dtype != DS_DTYPE_FLOAT32 && x->dtype != DS_DTYPE_FLOAT64) ||
      grid->dtype != x->dtype || y->dtype != x->dtype)
    return DS_STATUS_UNSUPPORTED;
  if (x->ndim != 4 || grid->ndim != 4 || y->ndim != 4 || grid->shape[3] != 2 ||
      grid->shape[0] != x->shape[0] || y->shape[0] != x->shape[0] || y->shape[1] != x->shape[1] ||
      y->shape[2] != grid->shape[1] || y->shape[3] != grid->shape[2])
    return DS_STATUS_INVALID_ARGUMENT;
  GridJob job = {ctx->param, x->data,      grid->data,  y->data,    x->dtype == DS_DTYPE_FLOAT64,
                 x->shape[1], x->shape[2], x->shape[3], y->shape[2], y->shape[3]};
  if (ds_tensor_numel(y) == 0)
    return DS_STATUS_OK;
  const DsGridSampleParam *p = ctx->param;
  const int64_t taps = p->mode == DS_GRID_BICUBIC ? 16 : p->mode == DS_GRID_NEAREST ? 1 : 4;
  ds_parallel_for(ctx->pool, y->shape[0] * job.oh, grain_for(job.ow * (job.channels * taps + 16)),
                  grid_rows, &job);
  return DS_STATUS_OK;
}

/* --- Deconvolution ------------------------------------------------------------------------ */

/* Three spatial axes always: 1-D and 2-D have a depth (and height) of 1 in front. The input's
 * rows are its (depth, height) pairs, in order, of `in[2]` values each. `pad` is the effective
 * padding (from target_shape when set). */
typedef struct {
  int64_t batch, channels, filters, groups;
  int64_t in[3], out[3], kernel[3], stride[3], dilate[3], pad[3];
  int64_t in_plane, out_plane, kvol;
  int64_t rows;       /* in[0] * in[1] */
  int64_t block_rows; /* input rows per column block */
} DeconvGeom;

/* Column block size, as for Convolution's im2col blocks (ds-cpu-conv.c): about 2 MiB, which
 * stays in cache between the sgemm that writes it and the col2im that reads it. */
#define DECONV_BLOCK_BYTES (2 * 1024 * 1024)

static bool deconv_geom(const DsDeconvolutionParam *p, const DsTensor *data, const DsTensor *out,
                        DeconvGeom *g)
{
  const int ns = p->n_spatial;
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
  for (int i = 0; i < 3; i++) {
    int s = i - (3 - ns); /* index into the attribute tuples, < 0 for a prepended axis */
    g->in[i] = s >= 0 ? data->shape[2 + s] : 1;
    g->out[i] = s >= 0 ? out->shape[2 + s] : 1;
    g->kernel[i] = s >= 0 ? p->kernel[s] : 1;
    g->stride[i] = s >= 0 ? p->stride[s] : 1;
    g->dilate[i] = s >= 0 ? p->dilate[s] : 1;
    int64_t pad = 0, adj = 0;
    if (s >= 0 && !ds_deconv_pad_adj(p, s, g->in[i], &pad, &adj))
      return false;
    g->pad[i] = pad;
    int64_t dk = g->dilate[i] * (g->kernel[i] - 1) + 1;
    if (g->in[i] < 1 || g->out[i] != g->stride[i] * (g->in[i] - 1) + dk - 2 * pad + adj)
      return false;
    g->in_plane *= g->in[i];
    g->out_plane *= g->out[i];
    g->kvol *= g->kernel[i];
  }
  const int64_t m = g->filters / g->groups * g->kvol;
  g->rows = g->in[0] * g->in[1];
  int64_t rows = DECONV_BLOCK_BYTES / (int64_t)sizeof(float) / MAX(m * g->in[2], 1);
  g->block_rows = MAX(1, MIN(rows, g->rows));
  return true;
}

/* One column block: (filters / groups * kernel volume) rows of block_rows * width columns. */
static size_t deconv_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                               const DsTensor *outputs, int n_outputs)
{
  DeconvGeom g;
  if (!deconv_geom(param, &inputs[0], &outputs[0], &g))
    return 0;
  int64_t m = g.filters / g.groups * g.kvol;
  return (size_t)(m * g.block_rows * g.in[2]) * sizeof(float);
}

typedef struct {
  const DeconvGeom *g;
  const float *bias; /* the group's first filter's bias, or NULL */
  float *dst;        /* the group's first output plane */
} DeconvFillJob;

static void deconv_fill(void *data, int64_t begin, int64_t end)
{
  const DeconvFillJob *job = data;
  for (int64_t f = begin; f < end; f++)
    ds_vmath_fill(job->dst + f * job->g->out_plane, job->g->out_plane,
                  job->bias != NULL ? job->bias[f] : 0.0f);
}

typedef struct {
  const DeconvGeom *g;
  const float *col; /* (fg * kvol) x ((r1 - r0) * in[2]) */
  float *dst;       /* the group's first output plane */
  int64_t r0, r1;   /* the input rows of this block */
} Col2imJob;

/* Scatters the column block into filters [begin, end): column (iz, iy, ix) of row
 * (f, kz, ky, kx) lands on output (i * stride - pad + k * dilate) on each axis. Each filter owns
 * its output plane, so filters split across threads without conflicts. */
static void col2im_filters(void *data, int64_t begin, int64_t end)
{
  const Col2imJob *job = data;
  const DeconvGeom *g = job->g;
  const int64_t iw = g->in[2], ow = g->out[2], oh = g->out[1], od = g->out[0];
  const int64_t sw = g->stride[2];
  const int64_t ncols = (job->r1 - job->r0) * iw;
  for (int64_t f = begin; f < end; f++) {
    float *plane = job->dst + f * g->out_plane;
    for (int64_t t = 0; t < g->kvol; t++) {
      const int64_t kx = t % g->kernel[2], ky = t / g->kernel[2] % g->kernel[1];
      const int64_t kz = t / (g->kernel[2] * g->kernel[1]);
      const float *crow = job->col + (f * g->kvol + t) * ncols;
      /* ox = ix * sw + off lies in [0, ow) for ix in [ix0, ix1). */
      const int64_t off = kx * g->dilate[2] - g->pad[2];
      const int64_t ix0 = off >= 0 ? 0 : (-off + sw - 1) / sw;
      const int64_t last = ow - 1 - off;
      const int64_t ix1 = last < 0 ? 0 : MIN(iw, last / sw + 1);
      if (ix0 >= ix1)
        continue;
      for (int64_t r = job->r0; r < job->r1; r++) {
        const int64_t iz = r / g->in[1], iy = r % g->in[1];
        const int64_t oz = iz * g->stride[0] - g->pad[0] + kz * g->dilate[0];
        const int64_t oy = iy * g->stride[1] - g->pad[1] + ky * g->dilate[1];
        if (oz < 0 || oz >= od || oy < 0 || oy >= oh)
          continue;
        const float *restrict s = crow + (r - job->r0) * iw;
        float *restrict d = plane + (oz * oh + oy) * ow + off;
        if (sw == 1) {
          for (int64_t ix = ix0; ix < ix1; ix++)
            d[ix] += s[ix];
        } else {
          for (int64_t ix = ix0; ix < ix1; ix++)
            d[ix * sw] += s[ix];
        }
      }
    }
  }
}

/* The copies around the GEMMs use the pool only while BLAS is single-threaded: threaded
 * OpenBLAS keeps its workers spinning after each call (see ds-cpu-conv.c). */
static void deconv_copy_for(DsThreadPool *pool, bool blas_threaded, int64_t n, int64_t grain,
                            DsParallelFn fn, void *ctx)
{
  if (blas_threaded)
    fn(ctx, 0, n);
  else
    ds_parallel_for(pool, n, grain, fn, ctx);
}

static DsStatus deconv_run(const DsKernelCtx *ctx)
{
  const DsDeconvolutionParam *p = ctx->param;
  const int n_in = p->no_bias ? 2 : 3;
  if (!all_f32(ctx->inputs, n_in) || !all_f32(ctx->outputs, 1))
    return DS_STATUS_UNSUPPORTED;
  const DsTensor *data = &ctx->inputs[0], *weight = &ctx->inputs[1];
  const DsTensor *bias = p->no_bias ? NULL : &ctx->inputs[2];
  DeconvGeom g;
  if (!deconv_geom(p, data, &ctx->outputs[0], &g))
    return DS_STATUS_INVALID_ARGUMENT;
  const int64_t cg = g.channels / g.groups, fg = g.filters / g.groups, m = fg * g.kvol;
  if (ds_tensor_numel(weight) != g.channels * m ||
      (bias != NULL && ds_tensor_numel(bias) != g.filters))
    return DS_STATUS_INVALID_ARGUMENT;
  if (ctx->workspace == NULL &&
      deconv_workspace(p, ctx->inputs, ctx->n_inputs, ctx->outputs, ctx->n_outputs) > 0)
    return DS_STATUS_INVALID_ARGUMENT;

  const bool blas_threaded = openblas_get_num_threads() > 1;
  const float *x = data->data, *w = weight->data;
  float *y = ctx->outputs[0].data, *col = ctx->workspace;
  for (int64_t img = 0; img < g.batch; img++) {
    for (int64_t grp = 0; grp < g.groups; grp++) {
      float *dst = y + (img * g.filters + grp * fg) * g.out_plane;
      DeconvFillJob fill = {&g, bias != NULL ? (const float *)bias->data + grp * fg : NULL, dst};
      deconv_copy_for(ctx->pool, blas_threaded, fg, grain_for(g.out_plane), deconv_fill, &fill);
      const float *src = x + (img * g.channels + grp * cg) * g.in_plane;
      /* The group's weights are cg rows of m = fg * kvol: col = W_g^T * x_g. */
      const float *wg = w + grp * cg * m;
      for (int64_t r0 = 0; r0 < g.rows; r0 += g.block_rows) {
        const int64_t r1 = MIN(g.rows, r0 + g.block_rows), ncols = (r1 - r0) * g.in[2];
        DsStatus st = ds_cpu_sgemm(true, false, m, ncols, cg, 1.0f, wg, m, src + r0 * g.in[2],
                                   g.in_plane, 0.0f, col, ncols);
        if (st != DS_STATUS_OK)
          return st;
        Col2imJob job = {&g, col, dst, r0, r1};
        deconv_copy_for(ctx->pool, blas_threaded, fg, grain_for(g.kvol * ncols), col2im_filters,
                        &job);
      }
    }
  }
  return DS_STATUS_OK;
}

/* --- _contrib_resize, _contrib_dynamic_resize --------------------------------------------- */

/* One axis' mapping: `scale` as the coordinate formulas use it (the given factor, or out / in
 * for sizes), the output extent ONNX's reference uses for align_corners (scale * in, not
 * floored), and the roi. */
typedef struct {
  int64_t in, out;
  double scale, out_f, roi_start, roi_end;
} ResizeAxis;

typedef struct {
  const DsResizeParam *p;
  int ndim;
  ResizeAxis axis[DS_MAX_NDIM];
  int64_t istride[DS_MAX_NDIM];
  DsDType t;
  const void *in;
  void *out;
} ResizeJob;

/* Up to four input positions and weights along one axis; `outside` for a tf_crop_and_resize
 * position past the input. */
typedef struct {
  int n;
  int64_t idx[4];
  double w[4];
  bool outside;
} Taps;

/* The input coordinate output index `o` maps to. */
static double resize_coord(const DsResizeParam *p, const ResizeAxis *a, int64_t o)
{
  double x = (double)o, in = (double)a->in;
  switch (p->coord) {
  case DS_RESIZE_ASYMMETRIC:
    return x / a->scale;
  case DS_RESIZE_ALIGN_CORNERS:
    return a->out_f == 1.0 ? 0.0 : x * (in - 1) / (a->out_f - 1);
  case DS_RESIZE_PYTORCH_HALF_PIXEL:
    return a->out_f > 1.0 ? (x + 0.5) / a->scale - 0.5 : -0.5;
  case DS_RESIZE_TF_HALF_PIXEL_FOR_NEAREST:
    return (x + 0.5) / a->scale;
  case DS_RESIZE_TF_CROP_AND_RESIZE: {
    double extent = (a->roi_end - a->roi_start) * (in - 1);
    double c = a->out_f == 1.0 ? extent / 2 : x * extent / (a->out_f - 1);
    return c + a->roi_start * (in - 1);
  }
  default: /* half_pixel */
    return (x + 0.5) / a->scale - 0.5;
  }
}

/* The same in float, for nearest: ONNX Runtime maps nearest positions in float, and the
 * half-way positions its rounding rules decide come out differently in double (half_pixel at
 * scale 0.7: (3 + 0.5) / 0.7f is 5.0f, 4.5 rounded down to 4, but 5.0000000851 in double,
 * rounded to 5). */
static double resize_coord_float(const DsResizeParam *p, const ResizeAxis *a, int64_t o)
{
  float x = (float)o, in = (float)a->in, scale = (float)a->scale, out = (float)a->out_f;
  switch (p->coord) {
  case DS_RESIZE_ASYMMETRIC:
    return x / scale;
  case DS_RESIZE_ALIGN_CORNERS:
    return out == 1.0f ? 0.0f : x * (in - 1) / (out - 1);
  case DS_RESIZE_PYTORCH_HALF_PIXEL:
    return out > 1.0f ? (x + 0.5f) / scale - 0.5f : -0.5f;
  case DS_RESIZE_TF_HALF_PIXEL_FOR_NEAREST:
    return (x + 0.5f) / scale;
  case DS_RESIZE_TF_CROP_AND_RESIZE:
    return resize_coord(p, a, o);
  default: /* half_pixel */
    return (x + 0.5f) / scale - 0.5f;
  }
}

/* Keys' cubic convolution weight at distance `d` (0 <= d <= 2). */
static double cubic_weight(double d, double A)
{
  if (d <= 1)
    return ((A + 2) * d - (A + 3)) * d * d + 1;
  return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A;
}

/* The taps of output index `o` as ONNX's reference finds them: around x, the nearest
 * neighbours, preferring the left one (an integer x counts as ratio 1 from x - 1). */
static void resize_taps(const DsResizeParam *p, const ResizeAxis *a, int64_t o, Taps *t)
{
  double x = p->mode == DS_RESIZE_NEAREST ? resize_coord_float(p, a, o) : resize_coord(p, a, o);
  t->n = 0;
  t->outside = p->coord == DS_RESIZE_TF_CROP_AND_RESIZE && (x < 0 || x > (double)(a->in - 1));
  if (t->outside)
    return;
  double fl = floor(x);
  int64_t base = (int64_t)fl;
  double ratio = x - fl;
  if (ratio == 0) {
    base -= 1;
    ratio = 1;
  }
  double w[4];
  int64_t first;
  int n;
  switch (p->mode) {
  case DS_RESIZE_NEAREST: {
    bool right;
    switch (p->nearest) {
    case DS_RESIZE_ROUND_PREFER_CEIL:
      right = ratio >= 0.5;
      break;
    case DS_RESIZE_FLOOR:
      right = ratio == 1;
      break;
    case DS_RESIZE_CEIL:
      right = true;
      break;
    default:
      right = ratio > 0.5;
      break;
    }
    n = 1;
    first = base + (right ? 1 : 0);
    w[0] = 1;
    break;
  }
  case DS_RESIZE_LINEAR:
    n = 2;
    first = base;
    w[0] = 1 - ratio;
    w[1] = ratio;
    break;
  default:
    n = 4;
    first = base - 1;
    w[0] = cubic_weight(ratio + 1, p->cubic_coeff_a);
    w[1] = cubic_weight(ratio, p->cubic_coeff_a);
    w[2] = cubic_weight(1 - ratio, p->cubic_coeff_a);
    w[3] = cubic_weight(2 - ratio, p->cubic_coeff_a);
    break;
  }
  if (p->exclude_outside && n > 1) {
    double sum = 0;
    for (int k = 0; k < n; k++) {
      if (first + k < 0 || first + k >= a->in)
        w[k] = 0;
      sum += w[k];
    }
    for (int k = 0; k < n && sum != 0; k++)
      w[k] /= sum;
  }
  /* Neighbours past an edge read the edge element; zero weights are dropped. */
  for (int k = 0; k < n; k++) {
    if (w[k] == 0)
      continue;
    int64_t i = first + k;
    t->idx[t->n] = i < 0 ? 0 : (i >= a->in ? a->in - 1 : i);
    t->w[t->n++] = w[k];
  }
}

static void resize_worker(void *ctx, int64_t begin, int64_t end)
{
  const ResizeJob *job = ctx;
  const DsResizeParam *p = job->p;
  int nd = job->ndim;
  Taps taps[DS_MAX_NDIM];
  size_t es = ds_dtype_size(job->t);
  for (int64_t u = begin; u < end; u++) {
    int64_t rest = u;
    bool outside = false;
    for (int d = nd - 1; d >= 0; d--) {
      resize_taps(p, &job->axis[d], rest % job->axis[d].out, &taps[d]);
      rest /= job->axis[d].out;
      outside |= taps[d].outside || taps[d].n == 0;
    }
    double acc = p->extrapolation_value;
    if (!outside) {
      /* Every combination of the axes' taps, in an odometer. */
      int k[DS_MAX_NDIM] = {0};
      acc = 0;
      for (;;) {
        int64_t off = 0;
        double w = 1;
        for (int d = 0; d < nd; d++) {
          off += taps[d].idx[k[d]] * job->istride[d];
          w *= taps[d].w[k[d]];
        }
        acc += w * ds_cpu_load_f64(job->t, job->in, off);
        int d = nd - 1;
        while (d >= 0 && ++k[d] == taps[d].n)
          k[d--] = 0;
        if (d < 0)
          break;
      }
    }
    if (job->t == DS_DTYPE_FLOAT32 || job->t == DS_DTYPE_FLOAT64)
      ds_cpu_store_f64(job->t, (char *)job->out + (size_t)u * es, acc);
    else /* integer data rounds to the nearest value */
      ds_cpu_store_f64(job->t, (char *)job->out + (size_t)u * es, nearbyint(acc));
  }
}

/* Linear and cubic float32 resizing in ONNX Runtime's arithmetic. Its CPU kernel maps output
 * positions to input coordinates in float, builds per-axis tables of neighbours and weights
 * once per call, and sums the weighted neighbours in a fixed order; the last bit of its results
 * depends on each of these steps, and a DynamicQuantizeLinear after a Resize turns one-ulp
 * differences into whole quantization steps. So float32 linear and cubic follow it step by
 * step (GCC must not fuse the products and sums into FMAs here, as the rest of the backend
 * lets it):
 *
 * - coordinates in float, per mode as ONNX Runtime writes them; an axis at scale 1 maps o to o;
 *   align_corners keeps ONNX's scale * in for the output length when scales are given (ONNX's
 *   own tests check it; ONNX Runtime uses the floored dim there);
 * - linear: the coordinate clamped to [0, in - 1], neighbours i1 = trunc, i2 = min(i1 + 1,
 *   in - 1), weights d1 = |x - i1| for i2 and d2 = |x - i2| for i1 (0.5 each when i1 == i2);
 *   each term's weight is the innermost axis' weight times the next axis' ... times the
 *   outermost's, and the terms are added left to right, the outermost axis' neighbour slowest;
 * - cubic: Keys' coefficients of s = x - floor(x) in float; the innermost axis sums
 *   (c / sum) * X from 0, each outer axis sums (inner * c) / sum from 0 (sum is 1 unless
 *   exclude_outside zeroes the coefficients of neighbours outside the input);
 * - which axes are interpolated is ONNX Runtime's choice: both of a 2-D input, H and W of a
 *   4-D NCHW (scales 1, 1, h, w) or NHWC (1, h, w, 1) input, all three of a 3-D input, the last
 *   three of a 5-D (1, 1, d, h, w); the others it refuses, and here any axis whose size or
 *   scale changes is interpolated, in the same order;
 * - an output shaped like its input is a copy. */
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

/* One output position's neighbours along one axis. */
typedef struct {
  int64_t off[4]; /* input offsets (index times the axis' stride), clamped to the axis */
  float w[4];     /* linear: d2, d1; cubic: the coefficients (0 outside with exclude_outside) */
  float wq[4];    /* cubic: w / sum, as the innermost axis applies them */
  float sum;      /* cubic: the coefficients' sum */
  bool outside;   /* tf_crop_and_resize: the coordinate lies outside the input */
} ResizeTap;

typedef struct {
  int64_t in, out, stride;
  float scale, out_len, align_len, roi_start, roi_end;
  bool interp;          /* resampled; otherwise out == in and o reads o */
  const ResizeTap *tab; /* out taps, or NULL: computed where needed */
} OrtAxis;

typedef struct {
  const DsResizeParam *p;
  int ndim, n_interp;
  int interp[DS_MAX_NDIM]; /* the interpolated axes, outermost first */
  OrtAxis axis[DS_MAX_NDIM];
  float extrapolation;
  const float *in;
  float *out;
} OrtResizeJob;

/* The input coordinate of output position `o`, in float as ONNX Runtime computes it. */
static float ort_coord(DsResizeCoord coord, const OrtAxis *a, float x)
{
  float in = (float)a->in;
  switch (coord) {
  case DS_RESIZE_ASYMMETRIC:
    return x / a->scale;
  case DS_RESIZE_ALIGN_CORNERS:
    return a->align_len == 1 ? 0 : x * (in - 1) / (a->align_len - 1);
  case DS_RESIZE_PYTORCH_HALF_PIXEL:
    return a->out_len > 1 ? (x + 0.5f) / a->scale - 0.5f : 0.0f;
  case DS_RESIZE_TF_HALF_PIXEL_FOR_NEAREST:
    return (x + 0.5f) / a->scale;
  case DS_RESIZE_TF_CROP_AND_RESIZE:
    if (a->out_len > 1)
      return a->roi_start * (in - 1) +
             (x * (a->roi_end - a->roi_start) * (in - 1)) / (a->out_len - 1);
    /* ONNX Runtime takes the middle in double here. */
    return (float)(0.5 * (double)(a->roi_start + a->roi_end) * (double)(in - 1));
  default: /* half_pixel */
    return ((x + 0.5f) / a->scale) - 0.5f;
  }
}

/* Keys' four coefficients at fraction s, in ONNX Runtime's float expression order. */
static void ort_cubic_coeffs(float s, float A, float c[4])
{
  float t = fabsf(s);
  float u = t + 1, v = 1 - t, w = 2 - t;
  c[0] = ((A * u - 5 * A) * u + 8 * A) * u - 4 * A;
  c[1] = ((A + 2) * t - (A + 3)) * t * t + 1;
  c[2] = ((A + 2) * v - (A + 3)) * v * v + 1;
  c[3] = ((A * w - 5 * A) * w + 8 * A) * w - 4 * A;
}

static void ort_tap(const DsResizeParam *p, const OrtAxis *a, int64_t o, ResizeTap *t)
{
  float x = a->scale == 1.0f ? (float)o : ort_coord(p->coord, a, (float)o);
  float last = (float)(a->in - 1);
  t->outside = p->coord == DS_RESIZE_TF_CROP_AND_RESIZE && (x < 0 || x > last);
  if (p->mode == DS_RESIZE_LINEAR) {
    /* std::max(0, std::min(x, last)), NaN included */
    float v = last < x ? last : x;
    v = 0 < v ? v : 0;
    int64_t i1 = MIN((int64_t)v, a->in - 1), i2 = MIN(i1 + 1, a->in - 1);
    float d1 = fabsf(v - (float)i1), d2 = fabsf(v - (float)i2);
    if (i1 == i2)
      d1 = d2 = 0.5f;
    t->off[0] = i1 * a->stride;
    t->off[1] = i2 * a->stride;
    t->w[0] = d2;
    t->w[1] = d1;
    return;
  }
  float fl = floorf(x);
  int64_t base = (int64_t)fl;
  float c[4];
  ort_cubic_coeffs(x - (float)base, (float)p->cubic_coeff_a, c);
  float sum = 1;
  if (p->exclude_outside) {
    sum = 0;
    for (int k = 0; k < 4; k++) {
      int64_t i = base - 1 + k;
      if (i < 0 || i >= a->in)
        c[k] = 0;
      sum += c[k];
    }
  }
  for (int k = 0; k < 4; k++) {
    int64_t i = base - 1 + k;
    t->off[k] = (i < 0 ? 0 : (i >= a->in ? a->in - 1 : i)) * a->stride;
    t->w[k] = c[k];
    t->wq[k] = c[k] / sum;
  }
  t->sum = sum;
}

/* Axis `a`'s taps at `o`: from its table, or computed into `tmp`. */
static inline const ResizeTap *ort_tap_at(const OrtResizeJob *job, const OrtAxis *a, int64_t o,
                                          ResizeTap *tmp)
{
  if (a->tab != NULL)
    return &a->tab[o];
  ort_tap(job->p, a, o, tmp);
  return tmp;
}

/* Linear: the 2^n terms over the interpolated axes' taps `t` (outermost first), from input
 * offset `base`. */
static float ort_linear_at(const float *in, int n, const ResizeTap *const *t, int64_t base)
{
  float acc = 0;
  for (int combo = 0; combo < (1 << n); combo++) {
    int64_t off = base;
    for (int j = 0; j < n; j++)
      off += t[j]->off[(combo >> (n - 1 - j)) & 1];
    float coef = t[n - 1]->w[combo & 1];
    for (int j = n - 2; j >= 0; j--)
      coef *= t[j]->w[(combo >> (n - 1 - j)) & 1];
    float term = coef * in[off];
    acc = combo == 0 ? term : acc + term;
  }
  return acc;
}

/* Cubic: the sum over axis j's four taps of the sums within (innermost: (c / sum) * X). */
static float ort_cubic_at(const float *in, int n, const ResizeTap *const *t, int j, int64_t base)
{
  float acc = 0;
  if (j == n - 1) {
    for (int k = 0; k < 4; k++)
      acc += t[j]->wq[k] * in[base + t[j]->off[k]];
    return acc;
  }
  for (int k = 0; k < 4; k++)
    acc += ort_cubic_at(in, n, t, j + 1, base + t[j]->off[k]) * t[j]->w[k] / t[j]->sum;
  return acc;
}

/* 2-D bilinear along a row whose last axis is interpolated: ty holds the row's taps. */
static void ort_bilinear_row(const OrtResizeJob *job, const ResizeTap *ty, int64_t base,
                             float *dst)
{
  const OrtAxis *ax = &job->axis[job->ndim - 1];
  const float *r1 = job->in + base + ty->off[0], *r2 = job->in + base + ty->off[1];
  float dy2 = ty->w[0], dy1 = ty->w[1];
  ResizeTap tmp;
  for (int64_t x = 0; x < ax->out; x++) {
    const ResizeTap *tx = ort_tap_at(job, ax, x, &tmp);
    if (tx->outside) {
      dst[x] = job->extrapolation;
      continue;
    }
    float dx2 = tx->w[0], dx1 = tx->w[1];
    int64_t x1 = tx->off[0], x2 = tx->off[1];
    dst[x] = dx2 * dy2 * r1[x1] + dx1 * dy2 * r1[x2] + dx2 * dy1 * r2[x1] + dx1 * dy1 * r2[x2];
  }
}

static void ort_resize_rows(void *ctx, int64_t begin, int64_t end)
{
  const OrtResizeJob *job = ctx;
  int nd = job->ndim, n = job->n_interp;
  const OrtAxis *last = &job->axis[nd - 1];
  bool last_interp = last->interp;
  ResizeTap tmp[DS_MAX_NDIM];
  const ResizeTap *t[DS_MAX_NDIM];
  for (int64_t row = begin; row < end; row++) {
    float *dst = job->out + row * last->out;
    /* The row's outer coordinates: their offsets, and the taps of the interpolated ones. */
    int64_t rest = row, base = 0;
    bool outside = false;
    int j = last_interp ? n - 2 : n - 1;
    for (int d = nd - 2; d >= 0; d--) {
      const OrtAxis *a = &job->axis[d];
      int64_t o = rest % a->out;
      rest /= a->out;
      if (!a->interp) {
        base += o * a->stride;
        continue;
      }
      t[j] = ort_tap_at(job, a, o, &tmp[j]);
      outside |= t[j]->outside;
      j--;
    }
    if (outside) {
      for (int64_t x = 0; x < last->out; x++)
        dst[x] = job->extrapolation;
      continue;
    }
    if (job->p->mode == DS_RESIZE_LINEAR && last_interp && n == 2) {
      ort_bilinear_row(job, t[0], base, dst);
      continue;
    }
    for (int64_t x = 0; x < last->out; x++) {
      int64_t off = base;
      if (last_interp) {
        t[n - 1] = ort_tap_at(job, last, x, &tmp[n - 1]);
        if (t[n - 1]->outside) {
          dst[x] = job->extrapolation;
          continue;
        }
      } else {
        off += x;
      }
      dst[x] = job->p->mode == DS_RESIZE_LINEAR ? ort_linear_at(job->in, n, t, off)
                                                 : ort_cubic_at(job->in, n, t, 0, off);
    }
  }
}

#pragma GCC pop_options

/* The axes ONNX Runtime interpolates for this layout (see above); false when every output dim
 * equals its input dim. */
static bool ort_choose_axes(OrtResizeJob *job)
{
  int nd = job->ndim;
  OrtAxis *a = job->axis;
  bool same = true, pick[DS_MAX_NDIM] = {false};
  for (int d = 0; d < nd; d++)
    same &= a[d].in == a[d].out;
  if (same)
    return false;
  /* Axes a layout leaves alone must keep their size (tf_crop_and_resize's roi may shrink them
   * by the spec's shape rule; then every changed axis is interpolated instead). */
#define KEPT(d) (a[d].scale == 1.0f && a[d].in == a[d].out)
  bool linear = job->p->mode == DS_RESIZE_LINEAR;
  if (nd == 2 || (linear && nd == 3)) {
    for (int d = 0; d < nd; d++)
      pick[d] = true;
  } else if (nd == 4 && KEPT(0) && KEPT(1)) {
    pick[2] = pick[3] = true;
  } else if (linear && nd == 4 && KEPT(0) && KEPT(3)) {
    pick[1] = pick[2] = true;
  } else if (linear && nd == 5 && KEPT(0) && KEPT(1)) {
    pick[2] = pick[3] = pick[4] = true;
  } else {
    for (int d = 0; d < nd; d++)
      pick[d] = !KEPT(d);
  }
#undef KEPT
  job->n_interp = 0;
  for (int d = 0; d < nd; d++) {
    a[d].interp = pick[d];
    if (pick[d])
      job->interp[job->n_interp++] = d;
  }
  return true;
}

/* Room for the taps of every output position of every axis (the interpolated ones use it). */
static size_t ort_table_bytes(const DsTensor *out)
{
  size_t n = 0;
  for (int d = 0; d < out->ndim; d++)
    n += (size_t)MAX(out->shape[d], 0);
  return n * sizeof(ResizeTap);
}

/* Small tables of the dynamic form, whose output size the planner cannot see, live on the
 * stack; larger ones are computed where needed. */
#define ORT_STACK_TAPS 256

/* `tables`: ort_table_bytes(out) bytes for the taps, or NULL. */
static DsStatus ort_resize_run(const DsKernelCtx *ctx, const DsResizeParam *p, DsTensor *out,
                               const double *scales, const double *roi, ResizeTap *tables)
{
  const DsTensor *in = &ctx->inputs[0];
  int nd = in->ndim;
  OrtResizeJob job = {.p = p, .ndim = nd, .in = in->data, .out = out->data,
                      .extrapolation = (float)p->extrapolation_value};
  int64_t stride = 1;
  for (int d = nd - 1; d >= 0; d--) {
    OrtAxis *a = &job.axis[d];
    a->in = in->shape[d];
    a->out = out->shape[d];
    a->stride = stride;
    stride *= a->in;
    if (a->out > 0 && a->in == 0)
      return DS_STATUS_INVALID_ARGUMENT;
    /* ONNX Runtime's scales are float; from sizes it divides in float. */
    a->scale = scales != NULL ? (float)scales[d]
                              : (a->in > 0 ? (float)a->out / (float)a->in : 1.0f);
    if (!(a->scale > 0))
      return DS_STATUS_INVALID_ARGUMENT;
    a->out_len = (float)a->out;
    a->align_len = scales != NULL ? (float)(scales[d] * (double)a->in) : a->out_len;
    a->roi_start = roi != NULL ? (float)roi[d] : 0;
    a->roi_end = roi != NULL ? (float)roi[nd + d] : 1;
  }
  int64_t n = ds_tensor_numel(out);
  if (n == 0)
    return DS_STATUS_OK;
  if (!ort_choose_axes(&job)) {
    memcpy(out->data, in->data, (size_t)n * sizeof(float));
    return DS_STATUS_OK;
  }
  int64_t n_taps = 0;
  for (int j = 0; j < job.n_interp; j++)
    n_taps += job.axis[job.interp[j]].out;
  ResizeTap stack_tables[ORT_STACK_TAPS];
  if (tables == NULL && n_taps <= ORT_STACK_TAPS)
    tables = stack_tables;
  if (tables != NULL) {
    ResizeTap *space = tables;
    for (int j = 0; j < job.n_interp; j++) {
      OrtAxis *a = &job.axis[job.interp[j]];
      for (int64_t o = 0; o < a->out; o++)
        ort_tap(p, a, o, &space[o]);
      a->tab = space;
      space += a->out;
    }
  }
  int64_t rows = n / job.axis[nd - 1].out;
  int64_t taps = p->mode == DS_RESIZE_CUBIC ? 4 : 2, cost = job.axis[nd - 1].out;
  for (int j = 0; j < job.n_interp; j++)
    cost *= taps;
  ds_parallel_for(ctx->pool, rows, grain_for(cost), ort_resize_rows, &job);
  return DS_STATUS_OK;
}

/* Nearest resizing: each output element is one input element (or the extrapolation value
 * outside a tf_crop_and_resize roi), so one table per axis of the input index each output index
 * takes, made once per call, turns every output row into a gather, copied as bytes whatever the
 * dtype (int64 values pass exactly, not through double). */
typedef struct {
  const ResizeJob *job;
  const int64_t *idx[DS_MAX_NDIM]; /* per axis: the input index of each output index, -1 outside */
  int64_t rows;                    /* output rows: every axis but the last */
  size_t es;
} NearestJob;

static void nearest_rows(void *data, int64_t begin, int64_t end)
{
  const NearestJob *nj = data;
  const ResizeJob *job = nj->job;
  const int nd = job->ndim;
  const int64_t width = job->axis[nd - 1].out;
  const int64_t *last = nj->idx[nd - 1];
  const size_t es = nj->es;
  /* The extrapolation value in the data's dtype (integers round to the nearest value). */
  char fill[16];
  double value = job->p->extrapolation_value;
  bool is_float = job->t == DS_DTYPE_FLOAT32 || job->t == DS_DTYPE_FLOAT64;
  ds_cpu_store_f64(job->t, fill, is_float ? value : nearbyint(value));
  uint32_t fill4 = 0;
  memcpy(&fill4, fill, MIN(es, sizeof fill4));
  for (int64_t r = begin; r < end; r++) {
    int64_t rest = r, base = 0;
    bool outside = false;
    for (int d = nd - 2; d >= 0; d--) {
      int64_t i = nj->idx[d][rest % job->axis[d].out];
      rest /= job->axis[d].out;
      outside |= i < 0;
      base += i * job->istride[d];
    }
    char *dst = (char *)job->out + (size_t)(r * width) * es;
    if (es == 4 && !outside) {
      const uint32_t *src = (const uint32_t *)job->in + base;
      uint32_t *d4 = (uint32_t *)dst;
      for (int64_t x = 0; x < width; x++)
        d4[x] = last[x] >= 0 ? src[last[x]] : fill4;
      continue;
    }
    for (int64_t x = 0; x < width; x++) {
      const void *from = outside || last[x] < 0
                             ? (const void *)fill
                             : (const char *)job->in + (size_t)(base + last[x]) * es;
      memcpy(dst + (size_t)x * es, from, es);
    }
  }
}

static DsStatus nearest_run(const DsKernelCtx *ctx, const ResizeJob *job)
{
  const int nd = job->ndim;
  int64_t total = 0;
  for (int d = 0; d < nd; d++)
    total += job->axis[d].out;
  g_autofree int64_t *space = g_new(int64_t, MAX(total, 1));
  NearestJob nj = {.job = job, .rows = 1, .es = ds_dtype_size(job->t)};
  int64_t *at = space;
  for (int d = 0; d < nd; d++) {
    for (int64_t o = 0; o < job->axis[d].out; o++) {
      Taps t;
      resize_taps(job->p, &job->axis[d], o, &t);
      at[o] = t.outside || t.n == 0 ? -1 : t.idx[0];
    }
    nj.idx[d] = at;
    at += job->axis[d].out;
    if (d < nd - 1)
      nj.rows *= job->axis[d].out;
  }
  ds_parallel_for(ctx->pool, nj.rows, grain_for(job->axis[nd - 1].out), nearest_rows, &nj);
  return DS_STATUS_OK;
}

/* Resamples inputs[0] into `out` (shaped) with per-axis scales (NULL: out / in) and roi (NULL:
 * the whole input); `tables` is room for float32's tap tables (ort_table_bytes), or NULL. */
static DsStatus resize_run(const DsKernelCtx *ctx, const DsResizeParam *p, DsTensor *out,
                           const double *scales, const double *roi, void *tables)
{
  const DsTensor *in = &ctx->inputs[0];
  int nd = in->ndim;
  if (out->ndim != nd || out->dtype != in->dtype)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(in->dtype) || in->dtype == DS_DTYPE_BOOL)
    return DS_STATUS_UNSUPPORTED;
  if (in->dtype == DS_DTYPE_FLOAT32 && p->mode != DS_RESIZE_NEAREST && nd > 0)
    return ort_resize_run(ctx, p, out, scales, roi, tables);
  ResizeJob job = {.p = p, .ndim = nd, .t = in->dtype, .in = in->data, .out = out->data};
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    ResizeAxis *a = &job.axis[d];
    a->in = in->shape[d];
    a->out = out->shape[d];
    a->roi_start = roi != NULL ? roi[d] : 0;
    a->roi_end = roi != NULL ? roi[nd + d] : 1;
    a->scale = scales != NULL ? scales[d] : (a->in > 0 ? (double)a->out / (double)a->in : 1);
    a->out_f = scales != NULL ? scales[d] * (double)a->in : (double)a->out;
    if (a->out > 0 && a->in == 0)
      return DS_STATUS_INVALID_ARGUMENT;
    if (!(a->scale > 0))
      return DS_STATUS_INVALID_ARGUMENT;
    job.istride[d] = s;
    s *= a->in;
  }
  int64_t n = ds_tensor_numel(out);
  if (n == 0)
    return DS_STATUS_OK;
  if (p->mode == DS_RESIZE_NEAREST && nd > 0)
    return nearest_run(ctx, &job);
  int64_t cost = p->mode == DS_RESIZE_CUBIC ? 64 : (p->mode == DS_RESIZE_LINEAR ? 16 : 4);
  ds_parallel_for(ctx->pool, n, grain_for(cost), resize_worker, &job);
  return DS_STATUS_OK;
}

static DsStatus resize_static_run(const DsKernelCtx *ctx)
{
  const DsResizeParam *p = ctx->param;
  int n = p->n_scales >= 0 ? p->n_scales : p->n_sizes;
  if (ctx->inputs[0].ndim != n)
    return DS_STATUS_INVALID_ARGUMENT;
  return resize_run(ctx, p, &ctx->outputs[0], p->n_scales >= 0 ? p->scales : NULL,
                    p->n_roi > 0 ? p->roi : NULL, ctx->workspace);
}

/* Float32 linear and cubic's tap tables (see ort_resize_run). */
static size_t resize_static_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                                      const DsTensor *outputs, int n_outputs)
{
  (void)n_inputs;
  (void)n_outputs;
  const DsResizeParam *p = param;
  if (inputs[0].dtype != DS_DTYPE_FLOAT32 || p->mode == DS_RESIZE_NEAREST)
    return 0;
  return ort_table_bytes(&outputs[0]);
}

/* A 1-D tensor's values as doubles, at most `max`. */
static DsStatus read_doubles(const DsTensor *t, double *out, int max, int *n)
{
  if (t->ndim != 1 || t->shape[0] > max)
    return DS_STATUS_INVALID_ARGUMENT;
  if (!ds_cpu_dtype_computable(t->dtype))
    return DS_STATUS_UNSUPPORTED;
  *n = (int)t->shape[0];
  for (int i = 0; i < *n; i++)
    out[i] = ds_cpu_load_f64(t->dtype, t->data, i);
  return DS_STATUS_OK;
}

static DsStatus dynamic_resize_run(const DsKernelCtx *ctx)
{
  const DsResizeParam *p = ctx->param;
  const DsTensor *in = &ctx->inputs[0];
  int nd = in->ndim, n_roi, n_target;
  double roi[2 * DS_MAX_NDIM], target[DS_MAX_NDIM];
  DsStatus st = read_doubles(&ctx->inputs[1], roi, 2 * DS_MAX_NDIM, &n_roi);
  if (st == DS_STATUS_OK)
    st = read_doubles(&ctx->inputs[2], target, DS_MAX_NDIM, &n_target);
  if (st != DS_STATUS_OK)
    return st;
  bool crop = p->coord == DS_RESIZE_TF_CROP_AND_RESIZE;
  if (n_target != nd || (crop && n_roi != 2 * nd))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t dims[DS_MAX_NDIM] = {0};
  for (int d = 0; d < nd; d++) {
    double v = target[d];
    if (p->use_sizes) {
      if (!(v >= 0 && v < 9.0e15) || v != floor(v))
        return DS_STATUS_INVALID_ARGUMENT;
      dims[d] = (int64_t)v;
    } else {
      double extent = crop ? roi[nd + d] - roi[d] : 1;
      double size = floor((double)in->shape[d] * extent * v);
      if (!(v > 0 && size >= 0 && size < 9.0e15))
        return DS_STATUS_INVALID_ARGUMENT;
      dims[d] = (int64_t)size;
    }
  }
  st = ds_kernel_prepare_output(ctx, 0, in->dtype, nd, dims);
  if (st != DS_STATUS_OK)
    return st;
  return resize_run(ctx, p, &ctx->outputs[0], p->use_sizes ? NULL : target, crop ? roi : NULL,
                    NULL);
}

/* --- _contrib_non_max_suppression --------------------------------------------------------- */

/* Box i of `b` as (ymin, xmin, ymax, xmax). */
static void nms_box(const float *b, int64_t i, bool center, float *o)
{
  const float *v = b + i * 4;
  if (center) {
    o[0] = v[1] - v[3] / 2;
    o[1] = v[0] - v[2] / 2;
    o[2] = v[1] + v[3] / 2;
    o[3] = v[0] + v[2] / 2;
    return;
  }
  o[0] = MIN(v[0], v[2]);
  o[1] = MIN(v[1], v[3]);
  o[2] = MAX(v[0], v[2]);
  o[3] = MAX(v[1], v[3]);
}

/* Whether boxes i and j overlap by more than `threshold` (ONNX Runtime's SuppressByIOU: an
 * empty box never suppresses). */
static bool nms_suppresses(const float *boxes, int64_t i, int64_t j, bool center, float threshold)
{
  float a[4], b[4];
  nms_box(boxes, i, center, a);
  nms_box(boxes, j, center, b);
  float iw = MIN(a[3], b[3]) - MAX(a[1], b[1]), ih = MIN(a[2], b[2]) - MAX(a[0], b[0]);
  if (iw <= 0 || ih <= 0)
    return false;
  float inter = iw * ih;
  float area_a = (a[2] - a[0]) * (a[3] - a[1]), area_b = (b[2] - b[0]) * (b[3] - b[1]);
  if (area_a <= 0 || area_b <= 0)
    return false;
  return inter / (area_a + area_b - inter) > threshold;
}

/* Insertion into a sorted run: higher score first, then the lower index. */
static bool nms_before(const float *scores, int64_t a, int64_t b)
{
  return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
}

/* Stable merge sort of candidate positions by score. */
static void nms_sort(const float *scores, int64_t *idx, int64_t *tmp, int64_t n)
{
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = MIN(n, lo + width), hi = MIN(n, lo + 2 * width), i = lo, j = mid, o = lo;
      while (i < mid && j < hi)
        tmp[o++] = nms_before(scores, idx[j], idx[i]) ? idx[j++] : idx[i++];
      while (i < mid)
        tmp[o++] = idx[i++];
      while (j < hi)
        tmp[o++] = idx[j++];
    }
    memcpy(idx, tmp, (size_t)n * sizeof(int64_t));
  }
}

static size_t nms_workspace(const void *param, const DsTensor *inputs, int n_inputs,
                            const DsTensor *outputs, int n_outputs)
{
  (void)param;
  (void)n_inputs;
  (void)outputs;
  (void)n_outputs;
  if (inputs[1].ndim != 3)
    return 0;
  /* Candidates and the sort's second array per class, plus every selected box index. */
  int64_t n = inputs[1].shape[2];
  return (2 * (size_t)n + (size_t)ds_tensor_numel(&inputs[1])) * sizeof(int64_t);
}

/* A scalar parameter as a double. */
static bool nms_scalar(const DsTensor *t, double *v)
{
  if (t->ndim > 1 || ds_tensor_numel(t) != 1 || !ds_cpu_dtype_computable(t->dtype))
    return false;
  *v = ds_cpu_load_f64(t->dtype, t->data, 0);
  return true;
}

static DsStatus nms_run(const DsKernelCtx *ctx)
{
  const DsNonMaxSuppressionParam *p = ctx->param;
  const DsTensor *boxes = &ctx->inputs[0], *scores = &ctx->inputs[1];
  if (!all_f32(ctx->inputs, 2))
    return DS_STATUS_UNSUPPORTED;
  double max_out, iou, score_min;
  if (boxes->ndim != 3 || scores->ndim != 3 || boxes->shape[2] != 4 ||
      boxes->shape[0] != scores->shape[0] || boxes->shape[1] != scores->shape[2] ||
      !nms_scalar(&ctx->inputs[2], &max_out) || !nms_scalar(&ctx->inputs[3], &iou) ||
      !nms_scalar(&ctx->inputs[4], &score_min))
    return DS_STATUS_INVALID_ARGUMENT;
  int64_t B = scores->shape[0], C = scores->shape[1], N = scores->shape[2];
  int64_t limit = max_out <= 0 ? 0 : (max_out >= (double)N ? N : (int64_t)max_out);
  int64_t *cand = ctx->workspace, *tmp = cand + N, *chosen = tmp + N, n_chosen = 0;
  if (B * C * N > 0 && cand == NULL)
    return DS_STATUS_NO_MEMORY;
  /* Selections are kept as flat (batch * C + class) * N + box, then written out. */
  for (int64_t b = 0; b < B && limit > 0; b++) {
    const float *bx = (const float *)boxes->data + b * N * 4;
    for (int64_t c = 0; c < C; c++) {
      const float *sc = (const float *)scores->data + (b * C + c) * N;
      int64_t n = 0;
      for (int64_t i = 0; i < N; i++)
        if (sc[i] > score_min)
          cand[n++] = i;
      nms_sort(sc, cand, tmp, n);
      int64_t first = n_chosen;
      for (int64_t k = 0; k < n && n_chosen - first < limit; k++) {
        bool keep = true;
        for (int64_t j = first; j < n_chosen && keep; j++)
          keep = !nms_suppresses(bx, chosen[j] % N, cand[k], p->center_point_box, (float)iou);
        if (keep)
          chosen[n_chosen++] = (b * C + c) * N + cand[k];
      }
    }
  }
  int64_t shape[2] = {n_chosen, 3};
  DsStatus st = ds_kernel_prepare_output(ctx, 0, DS_DTYPE_INT64, 2, shape);
  if (st != DS_STATUS_OK)
    return st;
  int64_t *out = ctx->outputs[0].data;
  for (int64_t k = 0; k < n_chosen; k++) {
    out[3 * k] = chosen[k] / N / C;
    out[3 * k + 1] = chosen[k] / N % C;
    out[3 * k + 2] = chosen[k] % N;
  }
  return DS_STATUS_OK;
}

void ds_cpu_vision_register(DsKernel *table)
{
  table[DS_OP_BOX_NMS] = (DsKernel){box_nms_run, box_nms_workspace};
  table[DS_OP_ROI_ALIGN] = (DsKernel){roi_align_run, NULL};
  table[DS_OP_ADAPTIVE_AVG_POOLING_2D] = (DsKernel){adaptive_avg_pool_run, NULL};
  table[DS_OP_DECONVOLUTION] = (DsKernel){deconv_run, deconv_workspace};
  table[DS_OP_RESIZE] = (DsKernel){resize_static_run, resize_static_workspace};
  table[DS_OP_DYNAMIC_RESIZE] = (DsKernel){dynamic_resize_run, NULL};
  table[DS_OP_NON_MAX_SUPPRESSION] = (DsKernel){nms_run, nms_workspace};
  table[DS_OP_GRID_SAMPLE] = (DsKernel){grid_sample_run, NULL};
}
