/* ds-ops-vision.c: detection and upsampling ops: attribute parsing with MXNet 1.x's defaults,
 * argument lists, and shape and dtype rules.
 *
 * Sources: src/operator/contrib/bounding_box-inl.h (BoxNMSParam, BoxNMSShape),
 * src/operator/contrib/roi_align-inl.h and roi_align.cc, src/operator/contrib/
 * adaptive_avg_pooling-inl.h, src/operator/nn/deconvolution-inl.h and deconvolution.cc.
 *
 * Shape functions use only the ds_dim_* arithmetic and the DsShapeCtx unification, so the
 * symbolic engine runs them unchanged. Constants are read only to validate them (a box width
 * too small for the attribute indices, a target shape larger than the full output); where the
 * dim is symbolic the same condition becomes a guard. Deconvolution fills its weight and bias
 * from the data as MXNet's FInferShape does, and the data's batch and channels from the output
 * and weight.
 */
#include "ds-ops-vision.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "ds-attr.h"
#include "ds-error.h"
#include "ds-grad.h"
#include "ds-grads.h"
#include "ds-op.h"
#include "ds-ops-common.h"

/* --- Helpers ------------------------------------------------------------------------------ */

static gboolean unify(DsShapeCtx *ctx, DsDim *slot, DsDim want, const char *what, GError **error)
{
  return ds_shape_ctx_unify_dim(ctx, slot, want, what, error);
}

/* A shape of rank `ndim` with every dim unknown, for slots only the rank is known of. */
static DsShape unknown_dims(int ndim)
{
  DsShape s = {.ndim = ndim};
  for (int i = 0; i < ndim; i++)
    s.dims[i] = DS_DIM_UNKNOWN;
  return s;
}

static const char *const data_inputs[] = {"data", NULL};
static const char *const names_output[] = {"output", NULL};

/* --- _contrib_box_nms --------------------------------------------------------------------- */

static const char *const box_formats[] = {"corner", "center", NULL};

static gboolean box_nms_parse(const DsNode *node, void *param, GError **error)
{
  DsBoxNMSParam *p = param;
  int in_format, out_format;
  if (!ds_ops_attr_float32(node, "overlap_thresh", 0.5, &p->overlap_thresh, error) ||
      !ds_ops_attr_float32(node, "valid_thresh", 0.0, &p->valid_thresh, error) ||
      !ds_ops_attr_int_range(node, "topk", -1, G_MININT32, G_MAXINT32, &p->topk, error) ||
      !ds_ops_attr_int_range(node, "coord_start", 2, 0, G_MAXINT32, &p->coord_start, error) ||
      !ds_ops_attr_int_range(node, "score_index", 1, 0, G_MAXINT32, &p->score_index, error) ||
      !ds_ops_attr_int_range(node, "id_index", -1, G_MININT32, G_MAXINT32, &p->id_index, error) ||
      !ds_ops_attr_int_range(node, "background_id", -1, G_MININT32, G_MAXINT32, &p->background_id,
                             error) ||
      !ds_ops_attr_opt_bool(node, "force_suppress", FALSE, &p->force_suppress, error) ||
      !ds_node_attr_enum(node, "in_format", box_formats, DS_BOX_CORNER, &in_format, error) ||
      !ds_node_attr_enum(node, "out_format", box_formats, DS_BOX_CORNER, &out_format, error))
    return FALSE;
  p->in_format = in_format;
  p->out_format = out_format;
  /* The checks of MXNet's BoxNMSShape that do not involve the box width. */
  const int64_t c0 = p->coord_start, c3 = p->coord_start + 3;
  if (p->score_index >= c0 && p->score_index <= c3)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "score_index=%" G_GINT64_FORMAT
                             " falls inside the coordinates [%" G_GINT64_FORMAT
                             ", %" G_GINT64_FORMAT "] (coord_start=%" G_GINT64_FORMAT ")",
                             p->score_index, c0, c3, c0);
  if (p->id_index >= 0) {
    if (p->id_index >= c0 && p->id_index <= c3)
      return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                               "id_index=%" G_GINT64_FORMAT
                               " falls inside the coordinates [%" G_GINT64_FORMAT
                               ", %" G_GINT64_FORMAT "] (coord_start=%" G_GINT64_FORMAT ")",
                               p->id_index, c0, c3, c0);
    if (p->id_index == p->score_index)
      return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                               "id_index=%" G_GINT64_FORMAT " is also the score_index",
                               p->id_index);
  }
  return TRUE;
}

/* The hidden second output records, for backward, which input box each output row came from. */
static int box_nms_num_outputs(const void *param)
{
  (void)param;
  return 2;
}

/* The smallest box width the attributes allow: 5 (6 with class ids), and room for every
 * index. */
static int64_t box_nms_min_width(const DsBoxNMSParam *p)
{
  int64_t need = p->id_index >= 0 ? 6 : 5;
  need = MAX(need, p->coord_start + 4);
  need = MAX(need, p->score_index + 1);
  return MAX(need, p->id_index + 1);
}

static gboolean box_nms_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                    DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsBoxNMSParam *p = param;
  DsShape *data = &in[0];
  if (!ds_ops_assign_shape(ctx, &out[0], data, "output", error) ||
      !ds_ops_assign_shape(ctx, data, &out[0], "data", error))
    return FALSE;
  /* The record (..., N, 1) gives every dim but the width. */
  if (data->ndim < 0 && out[1].ndim >= 0) {
    *data = unknown_dims(out[1].ndim);
    for (int i = 0; i + 1 < out[1].ndim; i++)
      data->dims[i] = out[1].dims[i];
  }
  if (data->ndim < 0)
    return TRUE;
  const int nd = data->ndim;
  if (nd < 2) {
    g_autofree char *s = ds_shape_to_string(data);
    ds_shape_ctx_set_error(ctx, error,
                           "data must have at least 2 dims (..., num_boxes, box_width), but has "
                           "shape %s",
                           s);
    return FALSE;
  }
  DsDim width = data->dims[nd - 1];
  const int64_t need = box_nms_min_width(p);
  if (ds_dim_is_const(width) && width.value < need) {
    ds_shape_ctx_set_error(ctx, error,
                           "boxes have %" G_GINT64_FORMAT
                           " values, but coord_start=%" G_GINT64_FORMAT
                           ", score_index=%" G_GINT64_FORMAT ", id_index=%" G_GINT64_FORMAT
                           " need at least %" G_GINT64_FORMAT,
                           width.value, p->coord_start, p->score_index, p->id_index, need);
    return FALSE;
  }
  g_autofree char *what = g_strdup_printf("the box width is below %" G_GINT64_FORMAT
                                          ", which coord_start, score_index and id_index need",
                                          need);
  ds_shape_ctx_add_guard(ctx, width, need, what);
  for (int i = 0; i + 1 < nd && out[1].ndim == nd; i++)
    if (!unify(ctx, &data->dims[i], out[1].dims[i], "data", error))
      return FALSE;
  DsShape record = *data;
  record.dims[nd - 1] = ds_dim(1);
  if (!ds_ops_assign_shape(ctx, &out[1], &record, "output1 (the record)", error))
    return FALSE;
  return ds_ops_assign_shape(ctx, &out[0], data, "output", error);
}

/* nnvm names a multi-output op without FListOutputNames "output0", "output1". */
static const char *const box_nms_outputs[] = {"output0", "output1", NULL};
static const char *const box_nms_aliases[] = {"_contrib_box_non_maximum_suppression",
                                              "_npx_box_nms", NULL};

static const DsOpDef BOX_NMS_def = {
    .id = DS_OP_BOX_NMS,
    .name = "_contrib_box_nms",
    .aliases = box_nms_aliases,
    .param_size = sizeof(DsBoxNMSParam),
    .parse = box_nms_parse,
    .num_inputs = ds_op_count_1,
    .num_outputs = box_nms_num_outputs,
    .num_visible_outputs = ds_op_count_1,
    .input_names = data_inputs,
    .output_names = box_nms_outputs,
    .infer_shape = box_nms_infer_shape,
};

/* --- _contrib_ROIAlign -------------------------------------------------------------------- */

static gboolean roi_align_parse(const DsNode *node, void *param, GError **error)
{
  DsROIAlignParam *p = param;
  int64_t ps[DS_MAX_NDIM];
  int n;
  if (!ds_ops_attr_require(node, "pooled_size", error) ||
      !ds_node_attr_tuple(node, "pooled_size", ps, DS_MAX_NDIM, &n, error))
    return FALSE;
  if (n != 2 || ps[0] < 1 || ps[1] < 1)
    return ds_ops_attr_invalid(node, "pooled_size",
                               "must be two sizes (height, width), each at least 1", error);
  p->pooled_size[0] = ps[0];
  p->pooled_size[1] = ps[1];
  double scale;
  if (!ds_ops_attr_require(node, "spatial_scale", error) ||
      !ds_node_attr_float(node, "spatial_scale", 1.0, &scale, error))
    return FALSE;
  if (!(scale >= 0.0 && scale <= 1.0))
    return ds_ops_attr_invalid(node, "spatial_scale", "must be in [0, 1], as MXNet declares it",
                               error);
  p->spatial_scale = (float)scale;
  return ds_ops_attr_int_range(node, "sample_ratio", -1, G_MININT32, G_MAXINT32, &p->sample_ratio,
                               error) &&
         ds_ops_attr_opt_bool(node, "position_sensitive", FALSE, &p->position_sensitive, error) &&
         ds_ops_attr_opt_bool(node, "aligned", FALSE, &p->aligned, error);
}

static gboolean roi_align_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                      DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsROIAlignParam *p = param;
  DsShape *data = &in[0], *rois = &in[1];
  if (!ds_ops_check_rank(ctx, data, 4, "data", "N, C, H, W", error) ||
      !ds_ops_check_rank(ctx, rois, 2, "rois", "num_rois, 5", error) ||
      !ds_ops_check_rank(ctx, &out[0], 4, "output", "num_rois, C, pooled_h, pooled_w", error))
    return FALSE;
  const DsDim bins = ds_dim(p->pooled_size[0] * p->pooled_size[1]);

  /* The number of rois, from the rois or the output. */
  DsDim n_rois = rois->ndim == 2 ? rois->dims[0] : DS_DIM_UNKNOWN;
  if (out[0].ndim == 4 && !unify(ctx, &n_rois, out[0].dims[0], "output", error))
    return FALSE;
  DsShape r = {.ndim = 2, .dims = {n_rois, ds_dim(5)}};
  if (rois->ndim == 2 && !ds_dim_is_known(rois->dims[1]))
    rois->dims[1] = ds_dim(5);
  if (rois->ndim == 2 && ds_dim_is_const(rois->dims[1]) && rois->dims[1].value != 5) {
    g_autofree char *s = ds_shape_to_string(rois);
    ds_shape_ctx_set_error(ctx, error,
                           "rois has shape %s, but rows of 5 values [batch_index, x1, y1, x2, "
                           "y2] are expected",
                           s);
    return FALSE;
  }
  if (!ds_ops_assign_shape(ctx, rois, &r, "rois", error))
    return FALSE;

  DsDim channels = data->ndim == 4 ? data->dims[1] : DS_DIM_UNKNOWN;
  DsDim out_channels = channels;
  if (p->position_sensitive) {
    if (ds_dim_is_const(channels) && channels.value % bins.value != 0) {
      ds_shape_ctx_set_error(ctx, error,
                             "position_sensitive needs data channels divisible by pooled_size "
                             "%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT
                             ", but data has %" G_GINT64_FORMAT,
                             p->pooled_size[0], p->pooled_size[1], channels.value);
      return FALSE;
    }
    out_channels = ds_dim_floordiv(ctx, channels, bins);
  }
  DsShape o = {
      .ndim = 4,
      .dims = {n_rois, out_channels, ds_dim(p->pooled_size[0]), ds_dim(p->pooled_size[1])}};
  if (!ds_ops_assign_shape(ctx, &out[0], &o, "output", error))
    return FALSE;
  if (data->ndim == 4) {
    DsDim c = p->position_sensitive ? ds_dim_mul(ctx, out[0].dims[1], bins) : out[0].dims[1];
    if (!unify(ctx, &data->dims[1], c, "data", error))
      return FALSE;
  }
  return TRUE;
}

static const char *const roi_align_inputs[] = {"data", "rois", NULL};

static const DsOpDef ROI_ALIGN_def = {
    .id = DS_OP_ROI_ALIGN,
    .name = "_contrib_ROIAlign",
    .param_size = sizeof(DsROIAlignParam),
    .parse = roi_align_parse,
    .num_inputs = ds_op_count_2,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = roi_align_inputs,
    .output_names = names_output,
    .infer_shape = roi_align_infer_shape,
};

/* --- _contrib_AdaptiveAvgPooling2D -------------------------------------------------------- */

static gboolean adaptive_avg_pool_parse(const DsNode *node, void *param, GError **error)
{
  DsAdaptiveAvgPoolParam *p = param;
  int64_t v[DS_MAX_NDIM];
  int n;
  if (!ds_node_attr_tuple(node, "output_size", v, DS_MAX_NDIM, &n, error))
    return FALSE;
  for (int i = 0; i < n; i++)
    if (v[i] < 1)
      return ds_ops_attr_invalid(node, "output_size", "sizes must be at least 1", error);
  /* MXNet's shape rule: none (or more than two) gives 1x1, one size is square. */
  if (n == 1) {
    p->output_size[0] = p->output_size[1] = v[0];
  } else if (n == 2) {
    p->output_size[0] = v[0];
    p->output_size[1] = v[1];
  } else {
    p->output_size[0] = p->output_size[1] = 1;
  }
  return TRUE;
}

static gboolean adaptive_avg_pool_infer_shape(DsShapeCtx *ctx, const DsNode *node,
                                              const void *param, DsShape *in, DsShape *out,
                                              GError **error)
{
  (void)node;
  const DsAdaptiveAvgPoolParam *p = param;
  DsShape *data = &in[0];
  if (!ds_ops_check_rank(ctx, data, 4, "data", "N, C, H, W", error) ||
      !ds_ops_check_rank(ctx, &out[0], 4, "output", "N, C, H, W", error))
    return FALSE;
  if (data->ndim < 0 && out[0].ndim == 4)
    *data = unknown_dims(4);
  if (data->ndim < 0)
    return TRUE;
  DsShape o = {
      .ndim = 4,
      .dims = {data->dims[0], data->dims[1], ds_dim(p->output_size[0]), ds_dim(p->output_size[1])}};
  if (!ds_ops_assign_shape(ctx, &out[0], &o, "output", error))
    return FALSE;
  return unify(ctx, &data->dims[0], out[0].dims[0], "data", error) &&
         unify(ctx, &data->dims[1], out[0].dims[1], "data", error);
}

/* MXNet's AdaptiveAvgPoolOpInferType: the output takes the accumulation type, float32 for
 * float16 data; only float data is accepted. */
static gboolean adaptive_avg_pool_infer_type(const DsNode *node, const void *param, DsDType *in,
                                             DsDType *out, GError **error)
{
  (void)param;
  if (in[0] == DS_DTYPE_UNKNOWN && out[0] == DS_DTYPE_FLOAT64)
    in[0] = DS_DTYPE_FLOAT64;
  if (in[0] == DS_DTYPE_UNKNOWN)
    return TRUE;
  if (!ds_dtype_is_float(in[0]))
    return ds_ops_node_error(
        node, error, DS_ERROR_SHAPE,
        "data has dtype %s, but adaptive pooling takes float16, float32 or float64",
        ds_dtype_name(in[0]));
  DsDType want = in[0] == DS_DTYPE_FLOAT16 || in[0] == DS_DTYPE_BFLOAT16 ? DS_DTYPE_FLOAT32 : in[0];
  return ds_ops_assign_dtype(node, &out[0], want, "output", error);
}

static const DsOpDef ADAPTIVE_AVG_POOLING_2D_def = {
    .id = DS_OP_ADAPTIVE_AVG_POOLING_2D,
    .name = "_contrib_AdaptiveAvgPooling2D",
    .param_size = sizeof(DsAdaptiveAvgPoolParam),
    .parse = adaptive_avg_pool_parse,
    .num_inputs = ds_op_count_1,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = data_inputs,
    .output_names = names_output,
    .infer_shape = adaptive_avg_pool_infer_shape,
    .infer_type = adaptive_avg_pool_infer_type,
    .grad = ds_grad_adaptive_avg_pool,
};

/* --- _contrib_grid_sample ----------------------------------------------------------------- */

static gboolean grid_sample_parse(const DsNode *node, void *param, GError **error)
{
  /* ONNX opset 20 renames bilinear and bicubic to linear and cubic: both spellings load. */
  static const char *const modes[] = {"bilinear", "nearest", "bicubic", "linear", "cubic", NULL};
  static const char *const paddings[] = {"zeros", "border", "reflection", NULL};
  DsGridSampleParam *p = param;
  int mode, padding;
  gboolean align;
  if (!ds_node_attr_enum(node, "mode", modes, DS_GRID_BILINEAR, &mode, error) ||
      !ds_node_attr_enum(node, "padding_mode", paddings, DS_GRID_PAD_ZEROS, &padding, error) ||
      !ds_node_attr_bool(node, "align_corners", FALSE, &align, error))
    return FALSE;
  p->mode = mode == 3 ? DS_GRID_BILINEAR : mode == 4 ? DS_GRID_BICUBIC : (DsGridSampleMode)mode;
  p->padding = (DsGridSamplePadding)padding;
  p->align_corners = align;
  return TRUE;
}

static gboolean grid_sample_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                        DsShape *in, DsShape *out, GError **error)
{
  (void)node, (void)param;
  DsShape *data = &in[0], *grid = &in[1];
  if (!ds_ops_check_rank(ctx, data, 4, "data", "N, C, H, W", error) ||
      !ds_ops_check_rank(ctx, grid, 4, "grid", "N, H_out, W_out, 2", error) ||
      !ds_ops_check_rank(ctx, &out[0], 4, "output", "N, C, H_out, W_out", error))
    return FALSE;
  if (grid->ndim == 4) {
    if (!ds_dim_is_known(grid->dims[3]))
      grid->dims[3] = ds_dim(2);
    if (ds_dim_is_const(grid->dims[3]) && grid->dims[3].value != 2) {
      g_autofree char *s = ds_shape_to_string(grid);
      ds_shape_ctx_set_error(ctx, error,
                             "grid has shape %s, but its last axis must hold the 2 coordinates "
                             "(x, y)",
                             s);
      return FALSE;
    }
  }
  if (data->ndim < 0 || grid->ndim < 0)
    return TRUE;
  DsDim n = data->dims[0];
  if (!unify(ctx, &n, grid->dims[0], "grid", error))
    return FALSE;
  DsShape o = {.ndim = 4, .dims = {n, data->dims[1], grid->dims[1], grid->dims[2]}};
  return ds_ops_assign_shape(ctx, &out[0], &o, "output", error) &&
         unify(ctx, &data->dims[0], out[0].dims[0], "data", error) &&
         unify(ctx, &grid->dims[0], out[0].dims[0], "grid", error);
}

/* Float data, and a grid of the same dtype. */
static gboolean grid_sample_infer_type(const DsNode *node, const void *param, DsDType *in,
                                       DsDType *out, GError **error)
{
  (void)param;
  DsDType t = in[0] != DS_DTYPE_UNKNOWN ? in[0] : in[1] != DS_DTYPE_UNKNOWN ? in[1] : out[0];
  if (t == DS_DTYPE_UNKNOWN)
    return TRUE;
  if (t != DS_DTYPE_FLOAT32 && t != DS_DTYPE_FLOAT64)
    return ds_ops_node_error(node, error, DS_ERROR_SHAPE,
                             "data has dtype %s, but grid sampling takes float32 or float64",
                             ds_dtype_name(t));
  return ds_ops_assign_dtype(node, &in[0], t, "data", error) &&
         ds_ops_assign_dtype(node, &in[1], t, "grid", error) &&
         ds_ops_assign_dtype(node, &out[0], t, "output", error);
}

static const char *const grid_sample_inputs[] = {"data", "grid", NULL};

static const DsOpDef GRID_SAMPLE_def = {
    .id = DS_OP_GRID_SAMPLE,
    .name = "_contrib_grid_sample",
    .param_size = sizeof(DsGridSampleParam),
    .parse = grid_sample_parse,
    .num_inputs = ds_op_count_2,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = grid_sample_inputs,
    .output_names = names_output,
    .infer_shape = grid_sample_infer_shape,
    .infer_type = grid_sample_infer_type,
};

/* --- Deconvolution ------------------------------------------------------------------------ */

static const char *const deconv_layouts[] = {"NCW", "NCHW", "NCDHW", "NHWC", "NDHWC", NULL};

static gboolean deconvolution_parse(const DsNode *node, void *param, GError **error)
{
  DsDeconvolutionParam *p = param;
  int64_t kernel[DS_MAX_NDIM];
  int nk;
  if (!ds_ops_attr_require(node, "kernel", error) ||
      !ds_node_attr_tuple(node, "kernel", kernel, DS_MAX_NDIM, &nk, error))
    return FALSE;
  if (nk < 1 || nk > DS_DECONV_MAX_SPATIAL)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "kernel=%s: Deconvolution is 1-D, 2-D or 3-D",
                             ds_node_get_attr(node, "kernel"));
  p->n_spatial = nk;
  for (int i = 0; i < nk; i++) {
    if (kernel[i] < 1)
      return ds_ops_node_error(node, error, DS_ERROR_INVALID, "kernel=%s: sizes must be at least 1",
                               ds_node_get_attr(node, "kernel"));
    p->kernel[i] = kernel[i];
  }
  if (!ds_ops_attr_spatial(node, "stride", nk, 1, 1, p->stride, error) ||
      !ds_ops_attr_spatial(node, "dilate", nk, 1, 1, p->dilate, error) ||
      !ds_ops_attr_spatial(node, "pad", nk, 0, 0, p->pad, error) ||
      !ds_ops_attr_spatial(node, "adj", nk, 0, 0, p->adj, error) ||
      !ds_ops_attr_require(node, "num_filter", error) ||
      !ds_ops_attr_int_range(node, "num_filter", 1, 1, 100000, &p->num_filter, error) ||
      !ds_ops_attr_int_range(node, "num_group", 1, 1, G_MAXINT32, &p->num_group, error) ||
      !ds_ops_attr_opt_bool(node, "no_bias", TRUE, &p->no_bias, error))
    return FALSE;

  /* target_shape: InferPad uses it once any entry is non-zero, and then for every axis, where
   * a zero entry would give an empty output; so it is all or nothing here. */
  int64_t target[DS_MAX_NDIM];
  int nt;
  if (!ds_node_attr_tuple(node, "target_shape", target, DS_MAX_NDIM, &nt, error))
    return FALSE;
  int nonzero = 0;
  for (int i = 0; i < nt; i++) {
    if (target[i] < 0)
      return ds_ops_attr_invalid(node, "target_shape", "sizes must not be negative", error);
    nonzero += target[i] != 0;
  }
  if (nonzero > 0) {
    if (nt != nk)
      return ds_ops_node_error(
          node, error, DS_ERROR_INVALID,
          "attribute target_shape=%s has %d values, but the kernel has %d dims",
          ds_node_get_attr(node, "target_shape"), nt, nk);
    if (nonzero != nt)
      return ds_ops_attr_invalid(node, "target_shape",
                                 "mixes zero and non-zero sizes (MXNet would derive an empty "
                                 "output for the zero ones)",
                                 error);
    p->has_target = true;
    for (int i = 0; i < nk; i++)
      p->target_shape[i] = target[i];
  } else {
    for (int i = 0; i < nk; i++)
      if (p->adj[i] >= p->stride[i])
        return ds_ops_node_error(
            node, error, DS_ERROR_INVALID, "adj=%s must be smaller than stride=%s on every axis",
            ds_node_get_attr(node, "adj"),
            ds_node_get_attr(node, "stride") != NULL ? ds_node_get_attr(node, "stride") : "1");
  }
  if (p->num_filter % p->num_group != 0)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "num_filter=%" G_GINT64_FORMAT
                             " is not a multiple of num_group=%" G_GINT64_FORMAT,
                             p->num_filter, p->num_group);

  if (!ds_node_attr_is_none(node, "layout")) {
    int idx;
    if (!ds_node_attr_enum(node, "layout", deconv_layouts, 0, &idx, error))
      return FALSE;
    if (idx >= 3)
      return ds_ops_node_error(node, error, DS_ERROR_UNSUPPORTED,
                               "layout=%s is not supported: only NCW, NCHW and NCDHW are (MXNet "
                               "runs the channels-last layouts only on GPU)",
                               deconv_layouts[idx]);
    if (idx + 1 != nk)
      return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                               "layout=%s does not fit a %d-D kernel", deconv_layouts[idx], nk);
  }
  return TRUE;
}

static int deconvolution_num_inputs(const void *param)
{
  return ((const DsDeconvolutionParam *)param)->no_bias ? 2 : 3;
}

static const char *const deconv_spatial_layouts[] = {"", "N, C, W", "N, C, H, W",
                                                      "N, C, D, H, W"};

/* Output size of spatial axis `i` for input size `x`: stride * (x - 1) + dilated kernel
 * - 2 * pad + adj, or the target shape. Constant inputs are validated; symbolic ones get the
 * same conditions as guards. */
static gboolean deconv_out_dim(DsShapeCtx *ctx, const DsDeconvolutionParam *p, int i, DsDim x,
                               DsDim *out, GError **error)
{
  const int64_t s = p->stride[i], dk = p->dilate[i] * (p->kernel[i] - 1) + 1;
  if (ds_dim_is_value(x, 0)) {
    ds_shape_ctx_set_error(ctx, error, "data is empty on spatial axis %d", i);
    return FALSE;
  }
  /* stride * x + dk, so that every constant stays non-negative. */
  DsDim full_plus_s = ds_dim_add(ctx, ds_dim_mul(ctx, ds_dim(s), x), ds_dim(dk));
  if (p->has_target) {
    const int64_t t = p->target_shape[i];
    if (ds_dim_is_const(x)) {
      int64_t excess = s * (x.value - 1) + dk - t;
      if (excess < 0) {
        ds_shape_ctx_set_error(ctx, error,
                               "target_shape %" G_GINT64_FORMAT " exceeds the full output size "
                               "%" G_GINT64_FORMAT " of input size %" G_GINT64_FORMAT
                               " on spatial axis %d",
                               t, t + excess, x.value, i);
        return FALSE;
      }
      if (excess % 2 > s - 1) {
        ds_shape_ctx_set_error(ctx, error,
                               "target_shape %" G_GINT64_FORMAT " needs adj 1 on spatial axis %d "
                               "(input size %" G_GINT64_FORMAT "), which stride %" G_GINT64_FORMAT
                               " does not allow",
                               t, i, x.value, s);
        return FALSE;
      }
    }
    g_autofree char *what = g_strdup_printf("target_shape %" G_GINT64_FORMAT " exceeds the full "
                                            "output size on spatial axis %d",
                                            t, i);
    ds_shape_ctx_add_guard(ctx, full_plus_s, t + s, what);
    *out = ds_dim(t);
    return TRUE;
  }
  const int64_t pad = p->pad[i], adj = p->adj[i];
  if (ds_dim_is_const(x) && s * (x.value - 1) + dk - 2 * pad + adj < 1) {
    ds_shape_ctx_set_error(ctx, error,
                           "pad %" G_GINT64_FORMAT " leaves no output on spatial axis %d: input "
                           "size %" G_GINT64_FORMAT " gives %" G_GINT64_FORMAT,
                           pad, i, x.value, s * (x.value - 1) + dk - 2 * pad + adj);
    return FALSE;
  }
  /* (s * x + dk + adj) - (s + 2 * pad). */
  DsDim o = ds_dim_sub(ctx, ds_dim_add(ctx, full_plus_s, ds_dim(adj)), ds_dim(s + 2 * pad));
  g_autofree char *what =
      g_strdup_printf("pad %" G_GINT64_FORMAT " leaves no output on spatial axis %d", pad, i);
  ds_shape_ctx_add_guard(ctx, o, 1, what);
  *out = o;
  return TRUE;
}

static gboolean deconvolution_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                          DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsDeconvolutionParam *p = param;
  const int ns = p->n_spatial, nd = ns + 2;
  DsShape *data = &in[0];
  if (!ds_ops_check_rank(ctx, data, nd, "data", deconv_spatial_layouts[ns], error) ||
      !ds_ops_check_rank(ctx, &in[1], nd, "weight", "C, num_filter / num_group, kernel...",
                         error) ||
      !ds_ops_check_rank(ctx, &out[0], nd, "output", deconv_spatial_layouts[ns], error))
    return FALSE;
  if (data->ndim < 0 && (in[1].ndim == nd || out[0].ndim == nd))
    *data = unknown_dims(nd);
  /* Channels: from the data, else from the weight's first dim. */
  DsDim channels = data->ndim == nd ? data->dims[1] : DS_DIM_UNKNOWN;
  if (in[1].ndim == nd && !unify(ctx, &channels, in[1].dims[0], "weight", error))
    return FALSE;
  if (ds_dim_is_const(channels) && channels.value % p->num_group != 0) {
    ds_shape_ctx_set_error(ctx, error,
                           "data has %" G_GINT64_FORMAT " channels, not a multiple of "
                           "num_group=%" G_GINT64_FORMAT,
                           channels.value, p->num_group);
    return FALSE;
  }
  DsShape w = {.ndim = nd};
  w.dims[0] = channels;
  w.dims[1] = ds_dim(p->num_filter / p->num_group);
  for (int i = 0; i < ns; i++)
    w.dims[2 + i] = ds_dim(p->kernel[i]);
  if (!ds_ops_assign_shape(ctx, &in[1], &w, "weight", error))
    return FALSE;
  if (!p->no_bias) {
    DsShape b = {.ndim = 1, .dims = {ds_dim(p->num_filter)}};
    if (!ds_ops_assign_shape(ctx, &in[2], &b, "bias", error))
      return FALSE;
  }
  if (data->ndim != nd)
    return TRUE;
  if (!unify(ctx, &data->dims[1], in[1].dims[0], "data", error))
    return FALSE;

  DsShape o = {.ndim = nd};
  o.dims[0] = data->dims[0];
  o.dims[1] = ds_dim(p->num_filter);
  for (int i = 0; i < ns; i++)
    if (!deconv_out_dim(ctx, p, i, data->dims[2 + i], &o.dims[2 + i], error))
      return FALSE;
  if (!ds_ops_assign_shape(ctx, &out[0], &o, "output", error))
    return FALSE;
  /* Backwards: the batch always; a spatial dim where stride 1 makes the size invertible,
   * x = out + 1 + 2 * pad - dilated kernel - adj. */
  if (!unify(ctx, &data->dims[0], out[0].dims[0], "data", error))
    return FALSE;
  for (int i = 0; i < ns && !p->has_target; i++) {
    if (p->stride[i] != 1)
      continue;
    const int64_t dk = p->dilate[i] * (p->kernel[i] - 1) + 1;
    DsDim x = ds_dim_sub(ctx, ds_dim_add(ctx, out[0].dims[2 + i], ds_dim(1 + 2 * p->pad[i])),
                         ds_dim(dk + p->adj[i]));
    if (!unify(ctx, &data->dims[2 + i], x, "data", error))
      return FALSE;
  }
  return TRUE;
}

static const char *const deconvolution_inputs[] = {"data", "weight", "bias", NULL};
static const char *const deconvolution_aliases[] = {"_npx_deconvolution", NULL};

static const DsOpDef DECONVOLUTION_def = {
    .id = DS_OP_DECONVOLUTION,
    .name = "Deconvolution",
    .aliases = deconvolution_aliases,
    .param_size = sizeof(DsDeconvolutionParam),
    .parse = deconvolution_parse,
    .num_inputs = deconvolution_num_inputs,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = deconvolution_inputs,
    .output_names = names_output,
    .infer_shape = deconvolution_infer_shape,
    .grad = ds_grad_deconvolution,
};

/* --- _contrib_resize, _contrib_dynamic_resize -------------------------------------------- */

/* A tuple of floats, "(1.0, 2.5)"; *n is -1 when the key is missing. */
static gboolean attr_float_tuple(const DsNode *node, const char *key, double *out, int max,
                                 int *n, GError **error)
{
  *n = -1;
  const char *text = ds_node_get_attr(node, key);
  if (text == NULL)
    return TRUE;
  g_autofree char *inner = g_strdup(text);
  g_strstrip(inner);
  gsize len = strlen(inner);
  if (len >= 2 && (inner[0] == '(' || inner[0] == '[') &&
      (inner[len - 1] == ')' || inner[len - 1] == ']')) {
    inner[len - 1] = '\0';
    memmove(inner, inner + 1, len - 1);
  }
  g_auto(GStrv) parts = g_strsplit(inner, ",", -1);
  int k = 0;
  for (int i = 0; parts[i] != NULL; i++) {
    g_strstrip(parts[i]);
    if (parts[i][0] == '\0' && parts[i + 1] == NULL)
      break; /* "(2.0,)" */
    if (k >= max || !ds_attr_parse_float(parts[i], &out[k]))
      return ds_ops_attr_invalid(node, key, "is not a tuple of numbers", error);
    k++;
  }
  *n = k;
  return TRUE;
}

static gboolean resize_parse_common(const DsNode *node, DsResizeParam *p, GError **error)
{
  static const char *const modes[] = {"nearest", "linear", "cubic", NULL};
  static const char *const coords[] = {"half_pixel",         "asymmetric",
                                       "align_corners",      "pytorch_half_pixel",
                                       "tf_half_pixel_for_nearest", "tf_crop_and_resize", NULL};
  static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor",
                                        "ceil", NULL};
  int mode, coord, near;
  gboolean exclude;
  if (!ds_node_attr_enum(node, "mode", modes, DS_RESIZE_NEAREST, &mode, error) ||
      !ds_node_attr_enum(node, "coordinate_transformation_mode", coords, DS_RESIZE_HALF_PIXEL,
                         &coord, error) ||
      !ds_node_attr_enum(node, "nearest_mode", nearest, DS_RESIZE_ROUND_PREFER_FLOOR, &near,
                         error) ||
      !ds_node_attr_float(node, "cubic_coeff_a", -0.75, &p->cubic_coeff_a, error) ||
      !ds_node_attr_bool(node, "exclude_outside", FALSE, &exclude, error) ||
      !ds_node_attr_float(node, "extrapolation_value", 0.0, &p->extrapolation_value, error))
    return FALSE;
  p->mode = (DsResizeMode)mode;
  p->coord = (DsResizeCoord)coord;
  p->nearest = (DsResizeNearest)near;
  p->exclude_outside = exclude;
  p->n_scales = p->n_sizes = p->n_roi = -1;
  return TRUE;
}

static gboolean resize_parse(const DsNode *node, void *param, GError **error)
{
  DsResizeParam *p = param;
  if (!resize_parse_common(node, p, error) ||
      !attr_float_tuple(node, "scales", p->scales, DS_MAX_NDIM, &p->n_scales, error) ||
      !ds_node_attr_tuple(node, "sizes", p->sizes, DS_MAX_NDIM, &p->n_sizes, error) ||
      !attr_float_tuple(node, "roi", p->roi, 2 * DS_MAX_NDIM, &p->n_roi, error))
    return FALSE;
  if ((p->n_scales >= 0) == (p->n_sizes >= 0))
    return ds_ops_attr_invalid(node, "scales", "exactly one of scales and sizes must be given",
                               error);
  for (int i = 0; i < p->n_scales; i++)
    if (!(p->scales[i] > 0 && p->scales[i] < 1e9))
      return ds_ops_attr_invalid(node, "scales", "scales must be positive", error);
  for (int i = 0; i < p->n_sizes; i++)
    if (p->sizes[i] < 0)
      return ds_ops_attr_invalid(node, "sizes", "sizes must not be negative", error);
  if (p->coord == DS_RESIZE_TF_CROP_AND_RESIZE) {
    int n = p->n_scales >= 0 ? p->n_scales : p->n_sizes;
    if (p->n_roi != 2 * n)
      return ds_ops_attr_invalid(node, "roi", "tf_crop_and_resize needs a start and an end per "
                                 "axis", error);
  }
  return TRUE;
}

static gboolean dynamic_resize_parse(const DsNode *node, void *param, GError **error)
{
  DsResizeParam *p = param;
  gboolean use_sizes;
  if (!resize_parse_common(node, p, error) ||
      !ds_node_attr_bool(node, "use_sizes", FALSE, &use_sizes, error))
    return FALSE;
  p->use_sizes = use_sizes;
  return TRUE;
}

/* floor(dim * factor) in dim arithmetic where the factor allows it (a whole multiple or a
 * whole divisor), else only for a constant dim; unknown otherwise. A constant dim is scaled
 * as ONNX Runtime does, in float (the scales are float32): 10 * 0.7f is 7.0000001f there, 7
 * rows, where the double product 6.99999988 would floor to 6. */
static DsDim scaled_dim(DsShapeCtx *ctx, DsDim dim, double factor)
{
  if (ds_dim_is_const(dim))
    return ds_dim((int64_t)floorf((float)dim.value * (float)factor));
  if (factor >= 1 && factor == floor(factor))
    return ds_dim_mul(ctx, dim, ds_dim((int64_t)factor));
  double inv = 1.0 / factor;
  if (inv == floor(inv) && inv < 1e9)
    return ds_dim_floordiv(ctx, dim, ds_dim((int64_t)inv));
  return DS_DIM_UNKNOWN;
}

static gboolean resize_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                   DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsResizeParam *p = param;
  int n = p->n_sizes >= 0 ? p->n_sizes : p->n_scales;
  if (!ds_ops_check_rank(ctx, &in[0], n, "data", "one dim per scale or size", error))
    return FALSE;
  if (in[0].ndim < 0 && p->n_sizes < 0)
    return TRUE;
  DsShape result = {.ndim = n};
  for (int d = 0; d < n; d++) {
    if (p->n_sizes >= 0) {
      result.dims[d] = ds_dim(p->sizes[d]);
      continue;
    }
    double factor = p->scales[d];
    if (p->coord == DS_RESIZE_TF_CROP_AND_RESIZE)
      factor *= p->roi[n + d] - p->roi[d];
    result.dims[d] = factor == 1.0 ? in[0].dims[d] : scaled_dim(ctx, in[0].dims[d], factor);
  }
  return ds_ops_assign_shape(ctx, &out[0], &result, "output", error);
}

static const char *const dynamic_resize_inputs[] = {"data", "roi", "target", NULL};

/* The data's rank; every dim comes from the target read at run time. */
static gboolean dynamic_resize_infer_shape(DsShapeCtx *ctx, const DsNode *node,
                                           const void *param, DsShape *in, DsShape *out,
                                           GError **error)
{
  (void)node;
  (void)param;
  if (!ds_ops_check_rank(ctx, &in[1], 1, "roi", "(2 * ndim,) or (0,)", error) ||
      !ds_ops_check_rank(ctx, &in[2], 1, "target", "(ndim,)", error))
    return FALSE;
  if (in[0].ndim < 0)
    return TRUE;
  if (in[2].ndim == 1 && !unify(ctx, &in[2].dims[0], ds_dim(in[0].ndim), "target", error))
    return FALSE;
  DsShape result = {.ndim = in[0].ndim};
  for (int d = 0; d < in[0].ndim; d++)
    result.dims[d] = ds_shape_ctx_unbacked_dim(
        ctx, out[0].ndim == in[0].ndim ? out[0].dims[d] : DS_DIM_UNKNOWN, DS_DIM_UNKNOWN);
  return ds_ops_assign_shape(ctx, &out[0], &result, "output", error);
}

/* Data and output share a dtype; roi and target may have any. */
static gboolean data_out_type(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                              GError **error)
{
  (void)param;
  return ds_ops_unify_dtypes(node, in, 1, out, 1, error);
}

static const DsOpDef RESIZE_def = {
    .id = DS_OP_RESIZE,
    .name = "_contrib_resize",
    .param_size = sizeof(DsResizeParam),
    .parse = resize_parse,
    .num_inputs = ds_op_count_1,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = data_inputs,
    .output_names = names_output,
    .infer_shape = resize_infer_shape,
    .grad = ds_grad_resize,
};

static const DsOpDef DYNAMIC_RESIZE_def = {
    .id = DS_OP_DYNAMIC_RESIZE,
    .name = "_contrib_dynamic_resize",
    .traits = DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_SHAPE_INPUT,
    .param_size = sizeof(DsResizeParam),
    .parse = dynamic_resize_parse,
    .num_inputs = ds_op_count_3,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = dynamic_resize_inputs,
    .output_names = names_output,
    .infer_shape = dynamic_resize_infer_shape,
    .infer_type = data_out_type,
};

/* --- _contrib_non_max_suppression --------------------------------------------------------- */

static const char *const nms_inputs[] = {"boxes", "scores", "max_output_boxes_per_class",
                                         "iou_threshold", "score_threshold", NULL};
static const char *const nms_outputs[] = {"selected_indices", NULL};

static gboolean nms_parse(const DsNode *node, void *param, GError **error)
{
  DsNonMaxSuppressionParam *p = param;
  gboolean center;
  if (!ds_node_attr_bool(node, "center_point_box", FALSE, &center, error))
    return FALSE;
  p->center_point_box = center;
  return TRUE;
}

/* A scalar input: shape () or (1,). */
static gboolean check_scalar(DsShapeCtx *ctx, DsShape *s, const char *what, GError **error)
{
  if (s->ndim <= 0)
    return TRUE;
  if (s->ndim > 1) {
    g_autofree char *str = ds_shape_to_string(s);
    ds_shape_ctx_set_error(ctx, error, "%s must be a scalar, but has shape %s", what, str);
    return FALSE;
  }
  return unify(ctx, &s->dims[0], ds_dim(1), what, error);
}

/* (selected, 3): at most batch * classes * min(boxes, max per class), which only running can
 * tell; boxes and scores share the batch and box count. */
static gboolean nms_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                DsShape *in, DsShape *out, GError **error)
{
  (void)param;
  DsShape *boxes = &in[0], *scores = &in[1];
  if (!ds_ops_check_rank(ctx, boxes, 3, "boxes", "(batch, boxes, 4)", error) ||
      !ds_ops_check_rank(ctx, scores, 3, "scores", "(batch, classes, boxes)", error))
    return FALSE;
  for (int i = 2; i < 5; i++)
    if (!check_scalar(ctx, &in[i], nms_inputs[i], error))
      return FALSE;
  if (boxes->ndim == 3 && !unify(ctx, &boxes->dims[2], ds_dim(4), "boxes", error))
    return FALSE;
  if (boxes->ndim == 3 && scores->ndim == 3 &&
      (!unify(ctx, &scores->dims[0], boxes->dims[0], "scores", error) ||
       !unify(ctx, &boxes->dims[0], scores->dims[0], "boxes", error) ||
       !unify(ctx, &scores->dims[2], boxes->dims[1], "scores", error) ||
       !unify(ctx, &boxes->dims[1], scores->dims[2], "boxes", error)))
    return FALSE;
  (void)node;
  DsDim upper = scores->ndim == 3 ? ds_dim_product(ctx, scores, 0, 3) : DS_DIM_UNKNOWN;
  DsShape result = {.ndim = 2};
  result.dims[0] = ds_shape_ctx_unbacked_dim(
      ctx, out[0].ndim == 2 ? out[0].dims[0] : DS_DIM_UNKNOWN, upper);
  result.dims[1] = ds_dim(3);
  return ds_ops_assign_shape(ctx, &out[0], &result, "output", error);
}

static gboolean nms_infer_type(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                               GError **error)
{
  (void)param;
  return ds_ops_assign_dtype(node, &in[1], in[0], "scores", error) &&
         ds_ops_assign_dtype(node, &in[0], in[1], "boxes", error) &&
         ds_ops_assign_dtype(node, &out[0], DS_DTYPE_INT64, "output", error);
}

static int count_5(const void *param)
{
  (void)param;
  return 5;
}

static const DsOpDef NON_MAX_SUPPRESSION_def = {
    .id = DS_OP_NON_MAX_SUPPRESSION,
    .name = "_contrib_non_max_suppression",
    .traits = DS_OP_TRAIT_DYNAMIC_SHAPE,
    .param_size = sizeof(DsNonMaxSuppressionParam),
    .parse = nms_parse,
    .num_inputs = count_5,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = nms_inputs,
    .output_names = nms_outputs,
    .infer_shape = nms_infer_shape,
    .infer_type = nms_infer_type,
    .grad = ds_grad_zero,
};

void ds_ops_vision_register(const DsOpDef **table)
{
  DS_OPS_VISION(DS_OP_TABLE_ENTRY)
}
