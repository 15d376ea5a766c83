/* ds-ops-dynamic.c: ops whose output shape depends on input values: attributes, shape and
 * dtype rules.
 *
 * Names and defaults follow MXNet 1.x (src/operator/contrib/boolean_mask.cc,
 * src/operator/numpy/np_nonzero_op.cc, np_unique_op.cc, src/operator/contrib/dynamic_shape_ops
 * for dynamic_reshape). The shape-tensor sources (_zeros_shape, _ones_shape, _full_shape) and
 * _contrib_dynamic_arange are this engine's: _zeros/_ones/_full/_arange with the shape or the
 * bounds given as tensors; so are the other _contrib_dynamic_* ops (slice, expand, tile, pad,
 * squeeze, expand_dims, topk, one_hot), ONNX's ops with their parameters read at run time, and
 * _contrib_compress (numpy.compress), which is what graphs exported with dynamic shapes need.
 *
 * Every dim that only running the op can tell comes from ds_shape_ctx_unbacked_dim(), given the
 * output slot's current dim so the fixpoint's repeated calls keep the one symbol; everything
 * else (ranks, the dims that pass through) is set with the ds_dim_* arithmetic as usual.
 */
#include <string.h>

#include "ds-attr.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-grad.h"
#include "ds-grads.h"
#include "ds-ops-common.h"

static const char *const boolean_mask_inputs[] = {"data", "index", NULL};
static const char *const nonzero_inputs[] = {"x", NULL};
static const char *const shape_init_inputs[] = {"shape", NULL};
static const char *const dynamic_reshape_inputs[] = {"data", "shape", NULL};
static const char *const dynamic_arange_inputs[] = {"start", "stop", "step", NULL};
static const char *const data_inputs[] = {"data", NULL};

static gboolean attr_int32(const DsNode *node, const char *key, int64_t def, int *out,
                           GError **error)
{
  int64_t v;
  if (!ds_node_attr_int(node, key, def, &v, error))
    return FALSE;
  if (v < G_MININT32 || v > G_MAXINT32)
    return ds_ops_attr_invalid(node, key, "is out of range", error);
  *out = (int)v;
  return TRUE;
}

static gboolean set_output(DsShapeCtx *ctx, DsShape *out, const DsShape *want, GError **error)
{
  return ds_shape_ctx_assign(ctx, out, want, "output", error);
}

/* Dim `d` of an output slot as the fixpoint left it, if the slot has the rank the rule is
 * about to give it: the `current` ds_shape_ctx_unbacked_dim() needs. */
static DsDim current_dim(const DsShape *out, int ndim, int d)
{
  return out->ndim == ndim ? out->dims[d] : DS_DIM_UNKNOWN;
}

/* The length of a 1-D shape tensor, which is the output's rank: FALSE with an error when it
 * is not 1-D, is symbolic, or is too long; *n is -1 while it is not known yet. */
static gboolean shape_tensor_length(DsShapeCtx *ctx, const DsShape *shape, int *n, GError **error)
{
  *n = -1;
  if (!ds_ops_check_rank(ctx, shape, 1, "shape", "(ndim,)", error))
    return FALSE;
  if (shape->ndim < 0 || !ds_dim_is_known(shape->dims[0]))
    return TRUE;
  if (!ds_dim_is_const(shape->dims[0])) {
    g_autofree char *s = ds_shape_to_string(shape);
    ds_shape_ctx_set_error(ctx, error,
                           "the shape tensor %s must have a constant length: it is the "
                           "output's rank",
                           s);
    return FALSE;
  }
  if (shape->dims[0].value > DS_MAX_NDIM) {
    ds_shape_ctx_set_error(ctx, error,
                           "the shape tensor has %" G_GINT64_FORMAT " values: the output "
                           "would have more than %d dims",
                           shape->dims[0].value, DS_MAX_NDIM);
    return FALSE;
  }
  *n = (int)shape->dims[0].value;
  return TRUE;
}

/* A scalar bound (shape () or (1,)): FALSE with an error otherwise. */
static gboolean check_scalar(DsShapeCtx *ctx, DsShape *s, const char *what, GError **error)
{
  if (s->ndim < 0 || s->ndim == 0)
    return TRUE;
  if (s->ndim > 1) {
    g_autofree char *str = ds_shape_to_string(s);
    ds_shape_ctx_set_error(ctx, error, "%s must be a scalar, shape () or (1,), but has shape %s",
                           what, str);
    return FALSE;
  }
  return ds_shape_ctx_unify_dim(ctx, &s->dims[0], ds_dim(1), what, error);
}

/* Data and output share a dtype; the other inputs (index, shape) may have any. */
static gboolean infer_type_data_out(const DsNode *node, const void *param, DsDType *in,
                                    DsDType *out, GError **error)
{
  (void)param;
  return ds_ops_unify_dtypes(node, in, 1, out, 1, error);
}

static gboolean infer_type_int64_out(const DsNode *node, const void *param, DsDType *in,
                                     DsDType *out, GError **error)
{
  (void)param;
  (void)in;
  return ds_ops_assign_dtype(node, &out[0], DS_DTYPE_INT64, "output", error);
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_boolean_mask */

static gboolean parse_boolean_mask(const DsNode *node, void *param, GError **error)
{
  DsBooleanMaskParam *p = param;
  return attr_int32(node, "axis", 0, &p->axis, error);
}

/* The data's shape with the masked axis replaced by the count of kept slices, at most the
 * axis' size. The index's length and the axis' size are one dim, filled both ways. */
static gboolean infer_shape_boolean_mask(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                         DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsBooleanMaskParam *p = param;
  DsShape *data = &in[0], *index = &in[1];
  if (!ds_ops_check_rank(ctx, index, 1, "index", "(n,)", error))
    return FALSE;
  if (data->ndim < 0)
    return TRUE;
  if (data->ndim == 0) {
    ds_shape_ctx_set_error(ctx, error, "cannot mask a 0-dim tensor: there is no axis to mask");
    return FALSE;
  }
  int axis;
  if (!ds_shape_ctx_axis(ctx, p->axis, data->ndim, FALSE, &axis, error))
    return FALSE;
  if (index->ndim == 1) {
    DsDim len = index->dims[0], size = data->dims[axis];
    if (ds_dim_is_const(len) && ds_dim_is_const(size) && len.value != size.value) {
      g_autofree char *sd = ds_shape_to_string(data);
      g_autofree char *si = ds_shape_to_string(index);
      ds_shape_ctx_set_error(ctx, error,
                             "index %s must have one entry per slice along axis %d of the data "
                             "%s",
                             si, axis, sd);
      return FALSE;
    }
    if (!ds_shape_ctx_unify_dim(ctx, &index->dims[0], data->dims[axis], "index", error) ||
        !ds_shape_ctx_unify_dim(ctx, &data->dims[axis], index->dims[0], "data", error))
      return FALSE;
  }
  DsShape result = *data;
  result.dims[axis] =
      ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], data->ndim, axis), data->dims[axis]);
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* _npx_nonzero */

/* (count, ndim): one row of coordinates per nonzero element, at most every element. */
static gboolean infer_shape_nonzero(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                    DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  if (in[0].ndim < 0)
    return TRUE;
  DsShape result = {.ndim = 2};
  DsDim size = ds_dim_product(ctx, &in[0], 0, in[0].ndim);
  result.dims[0] = ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], 2, 0), size);
  result.dims[1] = ds_dim(in[0].ndim);
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* _zeros_shape, _ones_shape, _full_shape */

static gboolean parse_shape_init_common(const DsNode *node, DsShapeInitParam *p, GError **error)
{
  if (!ds_node_attr_dtype(node, "dtype", DS_DTYPE_FLOAT32, &p->dtype, error))
    return FALSE;
  if (ds_dtype_is_storage_only(p->dtype))
    return ds_ops_attr_invalid(node, "dtype", "is a storage type, which only Cast computes with",
                               error);
  return TRUE;
}

static gboolean parse_zeros_shape(const DsNode *node, void *param, GError **error)
{
  DsShapeInitParam *p = param;
  p->value = 0.0;
  return parse_shape_init_common(node, p, error);
}

static gboolean parse_ones_shape(const DsNode *node, void *param, GError **error)
{
  DsShapeInitParam *p = param;
  p->value = 1.0;
  return parse_shape_init_common(node, p, error);
}

static gboolean parse_full_shape(const DsNode *node, void *param, GError **error)
{
  DsShapeInitParam *p = param;
  return parse_shape_init_common(node, p, error) && ds_ops_attr_require(node, "value", error) &&
         ds_node_attr_float(node, "value", 0.0, &p->value, error);
}

/* Rank = the shape tensor's length; every dim is a value read at run time, with no bound. */
static gboolean infer_shape_shape_init(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                       DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  int n;
  if (!shape_tensor_length(ctx, &in[0], &n, error))
    return FALSE;
  if (n < 0)
    return TRUE;
  DsShape result = {.ndim = n};
  for (int d = 0; d < n; d++)
    result.dims[d] = ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], n, d), DS_DIM_UNKNOWN);
  return set_output(ctx, &out[0], &result, error);
}

static gboolean infer_type_shape_init(const DsNode *node, const void *param, DsDType *in,
                                      DsDType *out, GError **error)
{
  (void)in;
  return ds_ops_assign_dtype(node, &out[0], ((const DsShapeInitParam *)param)->dtype, "output",
                             error);
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_dynamic_reshape */

static gboolean parse_dynamic_reshape(const DsNode *node, void *param, GError **error)
{
  DsDynamicReshapeParam *p = param;
  gboolean allowzero;
  if (!ds_node_attr_bool(node, "allowzero", FALSE, &allowzero, error))
    return FALSE;
  p->allowzero = allowzero;
  return TRUE;
}

/* TRUE if `size` is provably at least 1. */
static gboolean provably_positive(DsShapeCtx *ctx, DsDim size)
{
  if (ds_dim_is_const(size))
    return size.value >= 1;
  DsExprCtx *exprs = ds_shape_ctx_get_exprs(ctx);
  if (size.expr == NULL || exprs == NULL)
    return FALSE;
  int64_t lo, hi;
  ds_expr_bounds(exprs, size.expr, &lo, &hi);
  return lo >= 1;
}

/* Rank = the shape tensor's length. Each dim of a non-empty result divides its size, so the
 * data's element count bounds it; an empty data's result may have any dim besides its 0 ((0, 3)
 * to (3, 0)), so its dims are left unbounded unless the data is provably non-empty. */
static gboolean infer_shape_dynamic_reshape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                            DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  int n;
  if (!shape_tensor_length(ctx, &in[1], &n, error))
    return FALSE;
  if (n < 0 || in[0].ndim < 0)
    return TRUE;
  DsDim size = ds_dim_product(ctx, &in[0], 0, in[0].ndim);
  DsDim upper = provably_positive(ctx, size) ? size : DS_DIM_UNKNOWN;
  DsShape result = {.ndim = n};
  for (int d = 0; d < n; d++)
    result.dims[d] = ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], n, d), upper);
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_dynamic_arange */

static gboolean parse_dynamic_arange(const DsNode *node, void *param, GError **error)
{
  DsDynamicArangeParam *p = param;
  /* An explicit "None": the output takes start's dtype (ONNX's Range). */
  if (ds_node_get_attr(node, "dtype") != NULL && ds_node_attr_is_none(node, "dtype")) {
    p->dtype = DS_DTYPE_UNKNOWN;
    return TRUE;
  }
  if (!ds_node_attr_dtype(node, "dtype", DS_DTYPE_FLOAT32, &p->dtype, error))
    return FALSE;
  if (!ds_dtype_is_valid(p->dtype) || ds_dtype_is_storage_only(p->dtype) || p->dtype == DS_DTYPE_BOOL)
    return ds_ops_attr_invalid(node, "dtype", "is not a numeric dtype _arange supports", error);
  return TRUE;
}

/* (length,): the bounds are scalars; the length is only known once they are read. */
static gboolean infer_shape_dynamic_arange(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                           DsShape *in, DsShape *out, GError **error)
{
  (void)param;
  char buf[16];
  for (int i = 0; i < 3; i++)
    if (!check_scalar(ctx, &in[i], ds_ops_input_name(node, i, buf), error))
      return FALSE;
  DsShape result = {.ndim = 1};
  result.dims[0] = ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], 1, 0), DS_DIM_UNKNOWN);
  return set_output(ctx, &out[0], &result, error);
}

static gboolean infer_type_dynamic_arange(const DsNode *node, const void *param, DsDType *in,
                                          DsDType *out, GError **error)
{
  DsDType dtype = ((const DsDynamicArangeParam *)param)->dtype;
  if (dtype == DS_DTYPE_UNKNOWN)
    return ds_ops_unify_dtypes(node, in, 1, out, 1, error);
  return ds_ops_assign_dtype(node, &out[0], dtype, "output", error);
}

/* ------------------------------------------------------------------------------------------ */
/* _npi_unique */

static gboolean parse_unique(const DsNode *node, void *param, GError **error)
{
  DsUniqueParam *p = param;
  gboolean index, inverse, counts;
  if (!ds_node_attr_bool(node, "return_index", FALSE, &index, error) ||
      !ds_node_attr_bool(node, "return_inverse", FALSE, &inverse, error) ||
      !ds_node_attr_bool(node, "return_counts", FALSE, &counts, error))
    return FALSE;
  p->return_index = index;
  p->return_inverse = inverse;
  p->return_counts = counts;
  gboolean sorted;
  if (!ds_node_attr_bool(node, "sorted", TRUE, &sorted, error))
    return FALSE;
  p->sorted = sorted;
  p->has_axis = !ds_node_attr_is_none(node, "axis");
  return !p->has_axis || attr_int32(node, "axis", 0, &p->axis, error);
}

static int unique_num_outputs(const void *param)
{
  return ds_unique_num_outputs(param);
}

/* One unbacked count shared by every output that has it: the unique values' axis (or length),
 * the indices and the counts. The inverse has one entry per element (or slice). */
static gboolean infer_shape_unique(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                   DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsUniqueParam *p = param;
  const DsShape *data = &in[0];
  if (data->ndim < 0)
    return TRUE;
  DsShape first;
  DsDim len;
  int at;
  if (p->has_axis) {
    if (data->ndim == 0) {
      ds_shape_ctx_set_error(ctx, error, "a 0-dim tensor has no axis to find unique slices on");
      return FALSE;
    }
    if (!ds_shape_ctx_axis(ctx, p->axis, data->ndim, FALSE, &at, error))
      return FALSE;
    first = *data;
    len = data->dims[at];
  } else {
    at = 0;
    first = (DsShape){.ndim = 1};
    len = ds_dim_product(ctx, data, 0, data->ndim);
  }
  DsDim count = ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], first.ndim, at), len);
  first.dims[at] = count;
  if (!ds_shape_ctx_assign(ctx, &out[0], &first, "unique", error))
    return FALSE;
  DsShape per_unique = {.ndim = 1, .dims = {count}};
  DsShape per_element = {.ndim = 1, .dims = {len}};
  int k = 1;
  if (p->return_index && !ds_shape_ctx_assign(ctx, &out[k++], &per_unique, "indices", error))
    return FALSE;
  if (p->return_inverse && !ds_shape_ctx_assign(ctx, &out[k++], &per_element, "inverse", error))
    return FALSE;
  if (p->return_counts && !ds_shape_ctx_assign(ctx, &out[k++], &per_unique, "counts", error))
    return FALSE;
  return TRUE;
}

static gboolean infer_type_unique(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                  GError **error)
{
  int n = ds_unique_num_outputs(param);
  if (!ds_ops_unify_dtypes(node, in, 1, out, 1, error))
    return FALSE;
  for (int k = 1; k < n; k++)
    if (!ds_ops_assign_dtype(node, &out[k], DS_DTYPE_INT64, "output", error))
      return FALSE;
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_dynamic_slice */

/* Named for the full form; without use_axes the steps come fourth. */
static const char *const dynamic_slice_inputs[] = {"data", "starts", "ends", "axes", "steps",
                                                   NULL};

static gboolean parse_dynamic_slice(const DsNode *node, void *param, GError **error)
{
  DsDynamicSliceParam *p = param;
  gboolean use_axes, use_steps;
  if (!ds_ops_attr_axes(node, "axes", p->axes, &p->n_axes, error) ||
      !ds_node_attr_bool(node, "use_axes", FALSE, &use_axes, error) ||
      !ds_node_attr_bool(node, "use_steps", FALSE, &use_steps, error))
    return FALSE;
  p->use_axes = use_axes;
  p->use_steps = use_steps;
  if (p->use_axes && p->n_axes >= 0)
    return ds_ops_attr_invalid(node, "use_axes", "cannot be set with an axes attribute", error);
  return TRUE;
}

static int dynamic_slice_num_inputs(const void *param)
{
  const DsDynamicSliceParam *p = param;
  return 3 + (p->use_axes ? 1 : 0) + (p->use_steps ? 1 : 0);
}

/* Every bound is a 1-D tensor of one length (the number of sliced axes). */
static gboolean check_bound_vectors(DsShapeCtx *ctx, const DsNode *node, DsShape *in, int from,
                                    int to, DsDim *n, GError **error)
{
  char buf[16];
  *n = DS_DIM_UNKNOWN;
  for (int i = from; i < to; i++) {
    const char *what = ds_ops_input_name(node, i, buf);
    if (!ds_ops_check_rank(ctx, &in[i], 1, what, "(n,)", error))
      return FALSE;
    if (in[i].ndim == 1 && !ds_shape_ctx_unify_dim(ctx, n, in[i].dims[0], what, error))
      return FALSE;
  }
  for (int i = from; i < to; i++)
    if (in[i].ndim == 1 && !ds_shape_ctx_unify_dim(ctx, &in[i].dims[0], *n, "bounds", error))
      return FALSE;
  return TRUE;
}

/* The data's rank; each sliced axis gets an unbacked length of at most its size. Which axes are
 * sliced is known from the axes attribute, or from the bounds' length without axes. */
static gboolean infer_shape_dynamic_slice(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                          DsShape *in, DsShape *out, GError **error)
{
  const DsDynamicSliceParam *p = param;
  int n_in = dynamic_slice_num_inputs(p);
  DsDim n;
  if (!check_bound_vectors(ctx, node, in, 1, n_in, &n, error))
    return FALSE;
  const DsShape *data = &in[0];
  if (data->ndim < 0)
    return TRUE;
  gboolean sliced[DS_MAX_NDIM] = {FALSE};
  if (p->n_axes >= 0) {
    if (!ds_shape_ctx_unify_dim(ctx, &n, ds_dim(p->n_axes), "the axes attribute", error))
      return FALSE;
    for (int i = 0; i < p->n_axes; i++) {
      int axis;
      if (!ds_shape_ctx_axis(ctx, p->axes[i], data->ndim, FALSE, &axis, error))
        return FALSE;
      sliced[axis] = TRUE;
    }
  } else if (!p->use_axes && ds_dim_is_const(n)) {
    if (n.value > data->ndim) {
      g_autofree char *sd = ds_shape_to_string(data);
      ds_shape_ctx_set_error(ctx, error, "%" G_GINT64_FORMAT " axes are sliced of data %s",
                             n.value, sd);
      return FALSE;
    }
    for (int i = 0; i < n.value; i++)
      sliced[i] = TRUE;
  } else {
    for (int d = 0; d < data->ndim; d++)
      sliced[d] = TRUE;
  }
  DsShape result = *data;
  for (int d = 0; d < data->ndim; d++)
    if (sliced[d])
      result.dims[d] = ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], data->ndim, d),
                                                 data->dims[d]);
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_dynamic_expand, _contrib_dynamic_tile, _contrib_dynamic_pad */

static const char *const dynamic_expand_inputs[] = {"data", "shape", NULL};
static const char *const dynamic_tile_inputs[] = {"data", "reps", NULL};
static const char *const dynamic_pad_inputs[] = {"data", "pads", "value", NULL};

/* Rank max(data's, the shape's length). A data dim that is a constant other than 1 is the
 * result's dim whatever the shape says (the shape's value must be 1 or that dim); the others
 * come from the shape's values. */
static gboolean infer_shape_dynamic_expand(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                           DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  int n;
  if (!shape_tensor_length(ctx, &in[1], &n, error))
    return FALSE;
  if (n < 0 || in[0].ndim < 0)
    return TRUE;
  int ndim = MAX(n, in[0].ndim), lead = ndim - in[0].ndim;
  DsShape result = {.ndim = ndim};
  for (int d = 0; d < ndim; d++) {
    DsDim din = d >= lead ? in[0].dims[d - lead] : ds_dim(1);
    if (ds_dim_is_const(din) && din.value != 1)
      result.dims[d] = din;
    else
      result.dims[d] = ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], ndim, d),
                                                 DS_DIM_UNKNOWN);
  }
  return set_output(ctx, &out[0], &result, error);
}

/* The data's rank (the reps' length must match it); every dim read at run time. */
static gboolean infer_shape_dynamic_tile(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                         DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  int n;
  if (!shape_tensor_length(ctx, &in[1], &n, error))
    return FALSE;
  if (in[0].ndim < 0)
    return TRUE;
  if (n >= 0 && n != in[0].ndim) {
    g_autofree char *s = ds_shape_to_string(&in[0]);
    ds_shape_ctx_set_error(ctx, error, "reps has %d entries for data %s", n, s);
    return FALSE;
  }
  DsShape result = {.ndim = in[0].ndim};
  for (int d = 0; d < in[0].ndim; d++)
    result.dims[d] = ds_dim_is_value(in[0].dims[d], 0)
                         ? ds_dim(0)
                         : ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], in[0].ndim, d),
                                                     DS_DIM_UNKNOWN);
  return set_output(ctx, &out[0], &result, error);
}

static gboolean parse_dynamic_pad(const DsNode *node, void *param, GError **error)
{
  DsDynamicPadParam *p = param;
  static const char *const modes[] = {"constant", "edge", "reflect", NULL};
  int mode;
  if (!ds_node_attr_enum(node, "mode", modes, DS_PAD_CONSTANT, &mode, error))
    return FALSE;
  p->mode = (DsPadMode)mode;
  return TRUE;
}

/* The data's rank (pads holds two widths per axis); every dim read at run time. */
static gboolean infer_shape_dynamic_pad(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                        DsShape *in, DsShape *out, GError **error)
{
  (void)param;
  char buf[16];
  if (!ds_ops_check_rank(ctx, &in[1], 1, "pads", "(2 * ndim,)", error) ||
      !check_scalar(ctx, &in[2], ds_ops_input_name(node, 2, buf), error))
    return FALSE;
  if (in[0].ndim < 0)
    return TRUE;
  if (in[1].ndim == 1 && !ds_shape_ctx_unify_dim(ctx, &in[1].dims[0], ds_dim(2 * in[0].ndim),
                                                 "pads", error))
    return FALSE;
  DsShape result = {.ndim = in[0].ndim};
  for (int d = 0; d < in[0].ndim; d++)
    result.dims[d] =
        ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], in[0].ndim, d), DS_DIM_UNKNOWN);
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_dynamic_squeeze, _contrib_dynamic_expand_dims */

static const char *const dynamic_axes_inputs[] = {"data", "axes", NULL};

/* The rank is the data's less (squeeze) or plus the axes' count; every dim is one of the
 * data's or 1, but which only running tells. */
static gboolean infer_shape_dynamic_axes(DsShapeCtx *ctx, DsShape *in, DsShape *out,
                                         gboolean squeeze, GError **error)
{
  int n;
  if (!shape_tensor_length(ctx, &in[1], &n, error))
    return FALSE;
  if (n < 0 || in[0].ndim < 0)
    return TRUE;
  int ndim = squeeze ? in[0].ndim - n : in[0].ndim + n;
  if (ndim < 0 || ndim > DS_MAX_NDIM) {
    g_autofree char *s = ds_shape_to_string(&in[0]);
    ds_shape_ctx_set_error(ctx, error, "%d axes cannot be %s data %s", n,
                           squeeze ? "squeezed from" : "added to", s);
    return FALSE;
  }
  DsShape result = {.ndim = ndim};
  for (int d = 0; d < ndim; d++)
    result.dims[d] = ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], ndim, d), DS_DIM_UNKNOWN);
  return set_output(ctx, &out[0], &result, error);
}

static gboolean infer_shape_dynamic_squeeze(DsShapeCtx *ctx, const DsNode *node,
                                            const void *param, DsShape *in, DsShape *out,
                                            GError **error)
{
  (void)node;
  (void)param;
  return infer_shape_dynamic_axes(ctx, in, out, TRUE, error);
}

static gboolean infer_shape_dynamic_expand_dims(DsShapeCtx *ctx, const DsNode *node,
                                                const void *param, DsShape *in, DsShape *out,
                                                GError **error)
{
  (void)node;
  (void)param;
  return infer_shape_dynamic_axes(ctx, in, out, FALSE, error);
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_dynamic_topk */

static const char *const dynamic_topk_inputs[] = {"data", "k", NULL};
static const char *const dynamic_one_hot_inputs[] = {"indices", "depth", "values", NULL};
static const char *const compress_inputs[] = {"data", "condition", NULL};

static gboolean parse_dynamic_topk(const DsNode *node, void *param, GError **error)
{
  DsDynamicTopkParam *p = param;
  gboolean ascend;
  if (!attr_int32(node, "axis", -1, &p->axis, error) ||
      !ds_node_attr_bool(node, "is_ascend", FALSE, &ascend, error) ||
      !ds_node_attr_dtype(node, "dtype", DS_DTYPE_INT64, &p->dtype, error))
    return FALSE;
  p->is_ascend = ascend;
  if (p->dtype != DS_DTYPE_INT64 && p->dtype != DS_DTYPE_INT32 && p->dtype != DS_DTYPE_FLOAT32 &&
      p->dtype != DS_DTYPE_FLOAT64)
    return ds_ops_attr_invalid(node, "dtype", "cannot hold indices", error);
  return TRUE;
}

/* The data's shape with the axis' length read at run time (at most the axis' size). */
static gboolean infer_shape_dynamic_topk(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                         DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsDynamicTopkParam *p = param;
  if (!check_scalar(ctx, &in[1], "k", error))
    return FALSE;
  if (in[0].ndim < 0)
    return TRUE;
  if (in[0].ndim == 0) {
    ds_shape_ctx_set_error(ctx, error, "a 0-dim tensor has no axis to select along");
    return FALSE;
  }
  int axis;
  if (!ds_shape_ctx_axis(ctx, p->axis, in[0].ndim, FALSE, &axis, error))
    return FALSE;
  DsShape result = in[0];
  result.dims[axis] =
      ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], in[0].ndim, axis), in[0].dims[axis]);
  return set_output(ctx, &out[0], &result, error) && set_output(ctx, &out[1], &out[0], error);
}

static gboolean infer_type_dynamic_topk(const DsNode *node, const void *param, DsDType *in,
                                        DsDType *out, GError **error)
{
  const DsDynamicTopkParam *p = param;
  return ds_ops_unify_dtypes(node, in, 1, out, 1, error) &&
         ds_ops_assign_dtype(node, &out[1], p->dtype, "indices", error);
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_dynamic_one_hot */

static gboolean parse_dynamic_one_hot(const DsNode *node, void *param, GError **error)
{
  DsDynamicOneHotParam *p = param;
  return attr_int32(node, "axis", -1, &p->axis, error);
}

/* The indices' shape with a new axis whose length (depth) is read at run time. */
static gboolean infer_shape_dynamic_one_hot(DsShapeCtx *ctx, const DsNode *node,
                                            const void *param, DsShape *in, DsShape *out,
                                            GError **error)
{
  (void)node;
  const DsDynamicOneHotParam *p = param;
  if (!check_scalar(ctx, &in[1], "depth", error) ||
      !ds_ops_check_rank(ctx, &in[2], 1, "values", "(2,)", error))
    return FALSE;
  if (in[2].ndim == 1 && !ds_shape_ctx_unify_dim(ctx, &in[2].dims[0], ds_dim(2), "values", error))
    return FALSE;
  if (in[0].ndim < 0)
    return TRUE;
  int ndim = in[0].ndim + 1, axis;
  if (ndim > DS_MAX_NDIM) {
    ds_shape_ctx_set_error(ctx, error, "the result would have more than %d dims", DS_MAX_NDIM);
    return FALSE;
  }
  if (!ds_shape_ctx_axis(ctx, p->axis, ndim, FALSE, &axis, error))
    return FALSE;
  DsShape result = {.ndim = ndim};
  for (int d = 0, k = 0; d < ndim; d++)
    result.dims[d] = d == axis ? ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], ndim, d),
                                                           DS_DIM_UNKNOWN)
                               : in[0].dims[k++];
  return set_output(ctx, &out[0], &result, error);
}

/* The output has the values' dtype. */
static gboolean infer_type_dynamic_one_hot(const DsNode *node, const void *param, DsDType *in,
                                           DsDType *out, GError **error)
{
  (void)param;
  return ds_ops_assign_dtype(node, &out[0], in[2], "output", error) &&
         ds_ops_assign_dtype(node, &in[2], out[0], "values", error);
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_compress */

static gboolean parse_compress(const DsNode *node, void *param, GError **error)
{
  DsCompressParam *p = param;
  p->has_axis = !ds_node_attr_is_none(node, "axis");
  return !p->has_axis || attr_int32(node, "axis", 0, &p->axis, error);
}

/* The data's shape with the axis' length counted at run time (at most its size); without an
 * axis, 1-D of at most every element. */
static gboolean infer_shape_compress(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                     DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsCompressParam *p = param;
  if (!ds_ops_check_rank(ctx, &in[1], 1, "condition", "(n,)", error))
    return FALSE;
  const DsShape *data = &in[0];
  if (data->ndim < 0)
    return TRUE;
  DsShape result;
  int axis = 0;
  if (p->has_axis) {
    if (data->ndim == 0) {
      ds_shape_ctx_set_error(ctx, error, "a 0-dim tensor has no axis to compress");
      return FALSE;
    }
    if (!ds_shape_ctx_axis(ctx, p->axis, data->ndim, FALSE, &axis, error))
      return FALSE;
    result = *data;
  } else {
    result = (DsShape){.ndim = 1, .dims = {ds_dim_product(ctx, data, 0, data->ndim)}};
  }
  result.dims[axis] =
      ds_shape_ctx_unbacked_dim(ctx, current_dim(&out[0], result.ndim, axis), result.dims[axis]);
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* Definitions */

#define DYN             DS_OP_TRAIT_DYNAMIC_SHAPE
#define DYN_SHAPE_INPUT (DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_SHAPE_INPUT)

#define DS_DYNAMIC_OP(ID, NAME, TRAITS, PARAM, PARSE, NUM_IN, NUM_OUT, INPUTS, SHAPE, TYPE, ...)   \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .aliases = NULL,                                                                             \
      .traits = TRAITS,                                                                            \
      .param_size = PARAM,                                                                         \
      .parse = PARSE,                                                                              \
      .num_inputs = NUM_IN,                                                                        \
      .num_outputs = NUM_OUT,                                                                      \
      .num_visible_outputs = NUM_OUT,                                                              \
      .input_names = INPUTS,                                                                       \
      .infer_shape = SHAPE,                                                                        \
      .infer_type = TYPE,                                                                          \
      __VA_ARGS__                                                                                  \
  };

DS_DYNAMIC_OP(BOOLEAN_MASK, "_contrib_boolean_mask", DYN, sizeof(DsBooleanMaskParam),
              parse_boolean_mask, ds_op_count_2, ds_op_count_1, boolean_mask_inputs,
              infer_shape_boolean_mask, infer_type_data_out,
              .grad = ds_grad_boolean_mask)
DS_DYNAMIC_OP(NONZERO, "_npx_nonzero", DYN, 0, NULL, ds_op_count_1, ds_op_count_1, nonzero_inputs,
              infer_shape_nonzero, infer_type_int64_out, .grad = ds_grad_zero)
DS_DYNAMIC_OP(ZEROS_SHAPE, "_zeros_shape", DYN_SHAPE_INPUT, sizeof(DsShapeInitParam),
              parse_zeros_shape, ds_op_count_1, ds_op_count_1, shape_init_inputs,
              infer_shape_shape_init, infer_type_shape_init, .grad = ds_grad_zero)
DS_DYNAMIC_OP(ONES_SHAPE, "_ones_shape", DYN_SHAPE_INPUT, sizeof(DsShapeInitParam),
              parse_ones_shape, ds_op_count_1, ds_op_count_1, shape_init_inputs,
              infer_shape_shape_init, infer_type_shape_init, .grad = ds_grad_zero)
DS_DYNAMIC_OP(FULL_SHAPE, "_full_shape", DYN_SHAPE_INPUT, sizeof(DsShapeInitParam),
              parse_full_shape, ds_op_count_1, ds_op_count_1, shape_init_inputs,
              infer_shape_shape_init, infer_type_shape_init, .grad = ds_grad_zero)
DS_DYNAMIC_OP(DYNAMIC_RESHAPE, "_contrib_dynamic_reshape", DYN_SHAPE_INPUT,
              sizeof(DsDynamicReshapeParam), parse_dynamic_reshape, ds_op_count_2, ds_op_count_1,
              dynamic_reshape_inputs, infer_shape_dynamic_reshape, infer_type_data_out,
              .grad = ds_grad_reshape)
DS_DYNAMIC_OP(DYNAMIC_ARANGE, "_contrib_dynamic_arange", DYN, sizeof(DsDynamicArangeParam),
              parse_dynamic_arange, ds_op_count_3, ds_op_count_1, dynamic_arange_inputs,
              infer_shape_dynamic_arange, infer_type_dynamic_arange, .grad = ds_grad_zero)
DS_DYNAMIC_OP(UNIQUE, "_npi_unique", DYN, sizeof(DsUniqueParam), parse_unique, ds_op_count_1,
              unique_num_outputs, data_inputs, infer_shape_unique, infer_type_unique)
DS_DYNAMIC_OP(DYNAMIC_SLICE, "_contrib_dynamic_slice", DYN_SHAPE_INPUT,
              sizeof(DsDynamicSliceParam), parse_dynamic_slice, dynamic_slice_num_inputs,
              ds_op_count_1, dynamic_slice_inputs, infer_shape_dynamic_slice,
              infer_type_data_out)
DS_DYNAMIC_OP(DYNAMIC_EXPAND, "_contrib_dynamic_expand", DYN_SHAPE_INPUT, 0, NULL, ds_op_count_2,
              ds_op_count_1, dynamic_expand_inputs, infer_shape_dynamic_expand,
              infer_type_data_out,
              .grad = ds_grad_broadcast)
DS_DYNAMIC_OP(DYNAMIC_TILE, "_contrib_dynamic_tile", DYN_SHAPE_INPUT, 0, NULL, ds_op_count_2,
              ds_op_count_1, dynamic_tile_inputs, infer_shape_dynamic_tile, infer_type_data_out)
DS_DYNAMIC_OP(DYNAMIC_PAD, "_contrib_dynamic_pad", DYN_SHAPE_INPUT, sizeof(DsDynamicPadParam),
              parse_dynamic_pad, ds_op_count_3, ds_op_count_1, dynamic_pad_inputs,
              infer_shape_dynamic_pad, infer_type_data_out)
DS_DYNAMIC_OP(DYNAMIC_SQUEEZE, "_contrib_dynamic_squeeze", DYN_SHAPE_INPUT, 0, NULL, ds_op_count_2,
              ds_op_count_1, dynamic_axes_inputs, infer_shape_dynamic_squeeze,
              infer_type_data_out,
              .grad = ds_grad_reshape)
DS_DYNAMIC_OP(DYNAMIC_EXPAND_DIMS, "_contrib_dynamic_expand_dims", DYN_SHAPE_INPUT, 0, NULL,
              ds_op_count_2, ds_op_count_1, dynamic_axes_inputs, infer_shape_dynamic_expand_dims,
              infer_type_data_out,
              .grad = ds_grad_reshape)
DS_DYNAMIC_OP(DYNAMIC_TOPK, "_contrib_dynamic_topk", DYN, sizeof(DsDynamicTopkParam),
              parse_dynamic_topk, ds_op_count_2, ds_op_count_2, dynamic_topk_inputs,
              infer_shape_dynamic_topk, infer_type_dynamic_topk)
DS_DYNAMIC_OP(DYNAMIC_ONE_HOT, "_contrib_dynamic_one_hot", DYN, sizeof(DsDynamicOneHotParam),
              parse_dynamic_one_hot, ds_op_count_3, ds_op_count_1, dynamic_one_hot_inputs,
              infer_shape_dynamic_one_hot, infer_type_dynamic_one_hot,
              .grad = ds_grad_zero)
DS_DYNAMIC_OP(COMPRESS, "_contrib_compress", DYN, sizeof(DsCompressParam), parse_compress,
              ds_op_count_2, ds_op_count_1, compress_inputs, infer_shape_compress,
              infer_type_data_out,
              .grad = ds_grad_boolean_mask)

void ds_ops_dynamic_register(const DsOpDef **table)
{
  DS_OPS_DYNAMIC(DS_OP_TABLE_ENTRY)
}
