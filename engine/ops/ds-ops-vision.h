/* ds-ops-vision.h: detection and upsampling ops: ids and parsed attributes.
 *
 * The ops of MXNet 1.x's detection models that are not plain layers: non-maximum suppression
 * (_contrib_box_nms), ROIAlign, adaptive average pooling and the transposed convolution
 * (Deconvolution). Semantics follow MXNet 1.x's CPU implementations
 * (src/operator/contrib/bounding_box-inl.h, roi_align.cc, adaptive_avg_pooling.cc,
 * src/operator/nn/deconvolution.cc), quirks included where a model could observe them.
 *
 * ONNX's Resize/Upsample (_contrib_resize, and _contrib_dynamic_resize reading its target at
 * run time) and NonMaxSuppression (_contrib_non_max_suppression) follow ONNX's operator
 * specification and its reference implementation (onnx/backend/test/case/node/resize.py);
 * GridSample (_contrib_grid_sample) follows ONNX's specification, whose test outputs are
 * PyTorch's grid_sample.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"
#include "ds-tensor.h"

#define DS_OPS_VISION(X)                                                                           \
  X(BOX_NMS, "_contrib_box_nms")                                                                   \
  X(ROI_ALIGN, "_contrib_ROIAlign")                                                                \
  X(ADAPTIVE_AVG_POOLING_2D, "_contrib_AdaptiveAvgPooling2D")                                      \
  X(DECONVOLUTION, "Deconvolution")                                                               \
  X(RESIZE, "_contrib_resize")                                                                     \
  X(DYNAMIC_RESIZE, "_contrib_dynamic_resize")                                                     \
  X(NON_MAX_SUPPRESSION, "_contrib_non_max_suppression")                                          \
  X(GRID_SAMPLE, "_contrib_grid_sample")

/* Parsed attribute structs for these ops follow; kernels read them through DsKernelCtx.param. */

typedef enum { DS_BOX_CORNER, DS_BOX_CENTER } DsBoxFormat;

/* _contrib_box_nms. Thresholds are float as in MXNet, so comparisons round as MXNet's do. Index
 * attributes are validated against each other at parse time and against the box width during
 * shape inference. */
typedef struct {
  float overlap_thresh;
  float valid_thresh;
  int64_t topk; /* < 0: every box */
  int64_t coord_start;
  int64_t score_index;
  int64_t id_index; /* < 0: no class ids */
  int64_t background_id;
  bool force_suppress;
  DsBoxFormat in_format;
  DsBoxFormat out_format;
} DsBoxNMSParam;

/* _contrib_ROIAlign. rois are (R, 5) rows [batch_index, x1, y1, x2, y2]. */
typedef struct {
  int64_t pooled_size[2]; /* (height, width) */
  float spatial_scale;
  int64_t sample_ratio; /* <= 0: adaptive, ceil(roi size / pooled size) samples per bin */
  bool position_sensitive;
  bool aligned; /* pixel centres at +0.5: coordinates shifted by -0.5, no 1x1 minimum */
} DsROIAlignParam;

/* _contrib_AdaptiveAvgPooling2D: the output's (height, width). */
typedef struct {
  int64_t output_size[2];
} DsAdaptiveAvgPoolParam;

/* Spatial dims a Deconvolution may have. MXNet's CPU implementation has 1-D and 2-D (3-D only
 * with cuDNN); 3-D here is for ONNX's ConvTranspose (volumetric decoders). */
#define DS_DECONV_MAX_SPATIAL 3

/* Deconvolution (transposed convolution), layouts NCW, NCHW and NCDHW. Tuples are expanded to
 * `n_spatial` entries with MXNet's defaults. With `has_target`, pad and adj are ignored and
 * derived from the input size (ds_deconv_pad_adj); `workspace` and `cudnn_*` are accepted and
 * ignored. */
typedef struct {
  int n_spatial;
  int64_t kernel[DS_DECONV_MAX_SPATIAL];
  int64_t stride[DS_DECONV_MAX_SPATIAL];
  int64_t dilate[DS_DECONV_MAX_SPATIAL];
  int64_t pad[DS_DECONV_MAX_SPATIAL];
  int64_t adj[DS_DECONV_MAX_SPATIAL];
  bool has_target;
  int64_t target_shape[DS_DECONV_MAX_SPATIAL];
  int64_t num_filter;
  int64_t num_group;
  bool no_bias; /* MXNet's default for Deconvolution is true */
} DsDeconvolutionParam;

/* The padding and output adjustment of spatial axis `i` for an input of `in` elements:
 * the attributes, or with a target shape MXNet's DeconvolutionParam::InferPad, which splits
 * the excess stride * (in - 1) + dilated kernel - target into pad = ceil(excess / 2) and
 * adj = excess % 2. FALSE if the target is larger than the full output (excess < 0). */
static inline bool ds_deconv_pad_adj(const DsDeconvolutionParam *p, int i, int64_t in, int64_t *pad,
                                     int64_t *adj)
{
  if (!p->has_target) {
    *pad = p->pad[i];
    *adj = p->adj[i];
    return true;
  }
  int64_t excess =
      p->stride[i] * (in - 1) + p->dilate[i] * (p->kernel[i] - 1) + 1 - p->target_shape[i];
  if (excess < 0)
    return false;
  *adj = excess % 2;
  *pad = (excess + 1) / 2;
  return true;
}

/* ---- _contrib_resize, _contrib_dynamic_resize: ONNX's Resize (and Upsample). ---------------- */

typedef enum { DS_RESIZE_NEAREST, DS_RESIZE_LINEAR, DS_RESIZE_CUBIC } DsResizeMode;

/* How an output coordinate maps to an input one (ONNX's coordinate_transformation_mode). */
typedef enum {
  DS_RESIZE_HALF_PIXEL,
  DS_RESIZE_ASYMMETRIC,
  DS_RESIZE_ALIGN_CORNERS,
  DS_RESIZE_PYTORCH_HALF_PIXEL,
  DS_RESIZE_TF_HALF_PIXEL_FOR_NEAREST,
  DS_RESIZE_TF_CROP_AND_RESIZE,
} DsResizeCoord;

typedef enum {
  DS_RESIZE_ROUND_PREFER_FLOOR,
  DS_RESIZE_ROUND_PREFER_CEIL,
  DS_RESIZE_FLOOR,
  DS_RESIZE_CEIL,
} DsResizeNearest;

/* Every axis is resampled separably: nearest picks one input element, linear interpolates
 * between two and cubic between four (Keys' kernel with cubic_coeff_a), neighbours past the
 * edge reading the edge element (exclude_outside: weighted 0, the rest renormalised). With
 * tf_crop_and_resize the axes cover [roi start, roi end] of the input (roi holds every axis'
 * start, then every axis' end, as fractions), and an output element whose position falls
 * outside the input is extrapolation_value.
 *
 * _contrib_resize has its target as attributes: `sizes` (the output's shape) or `scales` (one
 * factor per axis: the output dim is floor(dim * scale), times the roi's extent with
 * tf_crop_and_resize). _contrib_dynamic_resize(data, roi, target) reads them from tensors: the
 * roi (float, 2 * ndim values, or empty) and the target, scales (float) or, with use_sizes,
 * sizes (integer). */
typedef struct {
  DsResizeMode mode;
  DsResizeCoord coord;
  DsResizeNearest nearest;
  double cubic_coeff_a;
  bool exclude_outside;
  double extrapolation_value;
  int n_scales; /* -1: none (sizes or dynamic) */
  double scales[DS_MAX_NDIM];
  int n_sizes; /* -1: none */
  int64_t sizes[DS_MAX_NDIM];
  int n_roi; /* -1: none */
  double roi[2 * DS_MAX_NDIM];
  bool use_sizes; /* _contrib_dynamic_resize: the target holds sizes */
} DsResizeParam;

/* _contrib_non_max_suppression(boxes, scores, max_output_boxes_per_class, iou_threshold,
 * score_threshold): ONNX's NonMaxSuppression. boxes (batch, n, 4) are [y1, x1, y2, x2] (any
 * two opposite corners) or, with center_point_box, [x_center, y_center, width, height]; scores
 * are (batch, classes, n); the other three are scalars. For each batch and class, boxes scoring
 * above score_threshold are taken best first (equal scores: the lower index first), each one
 * dropped whose IoU with one already taken exceeds iou_threshold, up to
 * max_output_boxes_per_class. The output is (selected, 3) int64 rows [batch, class, box]. */
typedef struct {
  bool center_point_box;
} DsNonMaxSuppressionParam;

typedef enum { DS_GRID_BILINEAR, DS_GRID_NEAREST, DS_GRID_BICUBIC } DsGridSampleMode;
typedef enum { DS_GRID_PAD_ZEROS, DS_GRID_PAD_BORDER, DS_GRID_PAD_REFLECTION } DsGridSamplePadding;

/* _contrib_grid_sample(data, grid): ONNX's GridSample (opset 16). data is (N, C, H, W); grid is
 * (N, H_out, W_out, 2), each position's (x, y) in [-1, 1] across the width and the height; the
 * output (N, C, H_out, W_out) samples data there. With align_corners -1 and 1 are the centres
 * of the corner pixels, without it their outer edges. Positions outside read zeros, the border
 * pixels (border) or the image mirrored at its edges (reflection); bicubic uses Keys' kernel
 * with a = -0.75 on 4x4 neighbours, each padded the same way. */
typedef struct {
  DsGridSampleMode mode;
  DsGridSamplePadding padding;
  bool align_corners;
} DsGridSampleParam;
