/* ds-ops-index.c: repetition, reordering, splitting, sorting and gathering: attributes, shape
 * and dtype rules.
 *
 * Names, aliases and defaults follow MXNet 1.x (src/operator/tensor/matrix_op-inl.h for
 * repeat, tile, reverse, stack and slice_like; src/operator/slice_channel-inl.h;
 * ordering_op-inl.h for argsort; indexing_op.h for gather_nd; elemwise_unary_op_basic.cc for
 * shape_array and size_array; topk). take_along_axis, put_along_axis, batch_gather_nd and
 * scatter_nd_update are ONNX's GatherElements, ScatterElements, GatherND and ScatterND with
 * NumPy-style names. Every shape rule computes with the ds_dim_* arithmetic, so it
 * serves symbolic dims too; constants are only read to validate attributes against them.
 */
#include <string.h>

#include "ds-attr.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-grad.h"
#include "ds-grads.h"
#include "ds-ops-common.h"

static const char *const data_inputs[] = {"data", NULL};
static const char *const slice_like_inputs[] = {"data", "shape_like", NULL};
static const char *const gather_nd_inputs[] = {"data", "indices", NULL};

/* Bounds on variadic counts: a malformed file must not make inference allocate without limit. */
#define MAX_VARIADIC 4096

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

/* Data and output share a dtype; the other inputs (shape_like, indices) may have any. */
static gboolean infer_type_data_out(const DsNode *node, const void *param, DsDType *in,
                                    DsDType *out, GError **error)
{
  (void)param;
  return ds_ops_unify_dtypes(node, in, 1, out, 1, error);
}

/* shape_array and size_array always answer in int64, whatever the data's dtype. */
static gboolean infer_type_int64_out(const DsNode *node, const void *param, DsDType *in,
                                     DsDType *out, GError **error)
{
  (void)param;
  (void)in;
  return ds_ops_assign_dtype(node, &out[0], DS_DTYPE_INT64, "output", error);
}

/* ------------------------------------------------------------------------------------------ */
/* repeat */

static gboolean parse_repeat(const DsNode *node, void *param, GError **error)
{
  DsRepeatParam *p = param;
  if (!ds_ops_attr_require(node, "repeats", error) ||
      !attr_int32(node, "repeats", 1, &p->repeats, error))
    return FALSE;
  if (p->repeats < 0)
    return ds_ops_attr_invalid(node, "repeats", "must not be negative", error);
  p->has_axis = !ds_node_attr_is_none(node, "axis");
  return !p->has_axis || attr_int32(node, "axis", 0, &p->axis, error);
}

/* MXNet's RepeatOpShape: forwards only. */
static gboolean infer_shape_repeat(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                   DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsRepeatParam *p = param;
  DsShape result = {.ndim = 1, .dims = {ds_dim(0)}};
  if (in[0].ndim < 0)
    /* Zero repeats give (0,) whatever the input; otherwise its shape is needed. */
    return p->repeats == 0 ? set_output(ctx, &out[0], &result, error) : TRUE;
  int axis = 0;
  if (p->has_axis && !ds_shape_ctx_axis(ctx, p->axis, in[0].ndim, FALSE, &axis, error))
    return FALSE;
  if (p->repeats == 0)
    return set_output(ctx, &out[0], &result, error);
  if (p->has_axis) {
    result = in[0];
    result.dims[axis] = ds_dim_mul(ctx, in[0].dims[axis], ds_dim(p->repeats));
  } else {
    DsDim size = ds_dim_product(ctx, &in[0], 0, in[0].ndim);
    result.dims[0] = ds_dim_mul(ctx, size, ds_dim(p->repeats));
  }
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* tile */

static gboolean parse_tile(const DsNode *node, void *param, GError **error)
{
  DsTileParam *p = param;
  if (!ds_ops_attr_require(node, "reps", error) ||
      !ds_node_attr_tuple(node, "reps", p->reps, DS_MAX_NDIM, &p->n_reps, error))
    return FALSE;
  p->n_reps = MAX(p->n_reps, 0);
  for (int i = 0; i < p->n_reps; i++)
    if (p->reps[i] < 0)
      return ds_ops_attr_invalid(node, "reps", "repetitions must not be negative", error);
  return TRUE;
}

/* MXNet's TileOpShape: the shape and reps right-aligned, the shorter padded with 1s. */
static gboolean infer_shape_tile(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                 DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsTileParam *p = param;
  if (in[0].ndim < 0)
    return TRUE;
  if (p->n_reps == 0)
    return set_output(ctx, &out[0], &in[0], error);
  int ndim = MAX(in[0].ndim, p->n_reps);
  DsShape result = {.ndim = ndim};
  for (int i = 0; i < ndim; i++) {
    int i1 = i - (ndim - in[0].ndim), i2 = i - (ndim - p->n_reps);
    if (i1 >= 0 && i2 >= 0)
      result.dims[i] = ds_dim_mul(ctx, in[0].dims[i1], ds_dim(p->reps[i2]));
    else if (i1 >= 0)
      result.dims[i] = in[0].dims[i1];
    else
      result.dims[i] = ds_dim(p->reps[i2]);
  }
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* reverse */

static gboolean parse_reverse(const DsNode *node, void *param, GError **error)
{
  DsReverseParam *p = param;
  if (!ds_ops_attr_require(node, "axis", error) ||
      !ds_ops_attr_axes(node, "axis", p->axes, &p->n_axes, error))
    return FALSE;
  if (p->n_axes < 0)
    return ds_ops_attr_invalid(node, "axis", "must list the axes to reverse", error);
  return TRUE;
}

/* MXNet's ElemwiseShape<1, 1>, in both directions, plus a range check of the axes. */
static gboolean infer_shape_reverse(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                    DsShape *in, DsShape *out, GError **error)
{
  const DsReverseParam *p = param;
  if (!ds_ops_unify_shapes(ctx, node, in, 1, out, 1, error))
    return FALSE;
  for (int i = 0; i < p->n_axes && in[0].ndim >= 0; i++) {
    int axis;
    if (!ds_shape_ctx_axis(ctx, p->axes[i], in[0].ndim, FALSE, &axis, error))
      return FALSE;
  }
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* stack */

static gboolean parse_stack(const DsNode *node, void *param, GError **error)
{
  DsStackParam *p = param;
  if (!ds_ops_attr_require(node, "num_args", error) ||
      !attr_int32(node, "num_args", 0, &p->num_args, error) ||
      !attr_int32(node, "axis", 0, &p->axis, error))
    return FALSE;
  if (p->num_args < 1 || p->num_args > MAX_VARIADIC)
    return ds_ops_attr_invalid(node, "num_args", "must be between 1 and 4096", error);
  return TRUE;
}

static int stack_num_inputs(const void *param)
{
  return ((const DsStackParam *)param)->num_args;
}

/* MXNet's StackOpShape: the inputs share one shape and the output inserts num_args at the
 * axis. The inputs' shared shape is also written back to each input and read from a known
 * output, since every input must have it. */
static gboolean infer_shape_stack(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                  DsShape *in, DsShape *out, GError **error)
{
  const DsStackParam *p = param;
  int n = p->num_args, ndim = -1;
  char buf[16], what[48];
  for (int i = 0; i < n && ndim < 0; i++)
    ndim = in[i].ndim;
  if (ndim < 0 && out[0].ndim >= 1)
    ndim = out[0].ndim - 1;
  if (ndim < 0)
    return TRUE;
  if (ndim + 1 > DS_MAX_NDIM) {
    ds_shape_ctx_set_error(ctx, error, "the stacked result would have more than %d dims",
                           DS_MAX_NDIM);
    return FALSE;
  }
  int axis;
  if (!ds_shape_ctx_axis(ctx, p->axis, ndim + 1, FALSE, &axis, error))
    return FALSE;

  DsShape common = {.ndim = ndim};
  for (int d = 0; d < ndim; d++)
    common.dims[d] = DS_DIM_UNKNOWN;
  for (int i = 0; i < n; i++) {
    if (in[i].ndim < 0)
      continue;
    g_snprintf(what, sizeof what, "input '%s'", ds_ops_input_name(node, i, buf));
    if (in[i].ndim != ndim) {
      g_autofree char *s = ds_shape_to_string(&in[i]);
      ds_shape_ctx_set_error(ctx, error, "%s has rank %d (%s) where the others have rank %d", what,
                             in[i].ndim, s, ndim);
      return FALSE;
    }
    for (int d = 0; d < ndim; d++)
      if (!ds_shape_ctx_unify_dim(ctx, &common.dims[d], in[i].dims[d], what, error))
        return FALSE;
  }
  if (out[0].ndim >= 0) {
    if (out[0].ndim != ndim + 1) {
      g_autofree char *s = ds_shape_to_string(&out[0]);
      ds_shape_ctx_set_error(ctx, error, "the output %s should have rank %d", s, ndim + 1);
      return FALSE;
    }
    for (int d = 0; d < ndim; d++)
      if (!ds_shape_ctx_unify_dim(ctx, &common.dims[d], out[0].dims[d < axis ? d : d + 1], "output",
                                  error))
        return FALSE;
  }
  DsShape result = {.ndim = ndim + 1};
  for (int d = 0; d <= ndim; d++)
    result.dims[d] = d == axis ? ds_dim(n) : common.dims[d < axis ? d : d - 1];
  if (!set_output(ctx, &out[0], &result, error))
    return FALSE;
  for (int i = 0; i < n; i++) {
    g_snprintf(what, sizeof what, "input '%s'", ds_ops_input_name(node, i, buf));
    if (!ds_shape_ctx_assign(ctx, &in[i], &common, what, error))
      return FALSE;
  }
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* SliceChannel */

static gboolean parse_slice_channel(const DsNode *node, void *param, GError **error)
{
  DsSliceChannelParam *p = param;
  gboolean squeeze;
  if (!ds_ops_attr_require(node, "num_outputs", error) ||
      !attr_int32(node, "num_outputs", 1, &p->num_outputs, error) ||
      !attr_int32(node, "axis", 1, &p->axis, error) ||
      !ds_node_attr_bool(node, "squeeze_axis", FALSE, &squeeze, error))
    return FALSE;
  p->squeeze_axis = squeeze;
  if (p->num_outputs < 1 || p->num_outputs > MAX_VARIADIC)
    return ds_ops_attr_invalid(node, "num_outputs", "must be between 1 and 4096", error);
  return TRUE;
}

static int slice_channel_num_outputs(const void *param)
{
  return ((const DsSliceChannelParam *)param)->num_outputs;
}

/* MXNet's SliceChannelProp::InferShape: every output is the data with the axis divided by
 * num_outputs (or dropped with squeeze_axis), and the outputs give the data back. */
static gboolean infer_shape_slice_channel(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                          DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsSliceChannelParam *p = param;
  int n = p->num_outputs, squeeze = p->squeeze_axis ? 1 : 0, ndim = in[0].ndim;
  char what[32];
  for (int k = 0; k < n && ndim < 0; k++)
    if (out[k].ndim >= 0)
      ndim = out[k].ndim + squeeze;
  if (ndim < 0)
    return TRUE;
  if (ndim == 0) {
    ds_shape_ctx_set_error(ctx, error, "cannot split a 0-dim tensor");
    return FALSE;
  }
  int axis;
  if (!ds_shape_ctx_axis(ctx, p->axis, ndim, FALSE, &axis, error))
    return FALSE;

  DsDim part = DS_DIM_UNKNOWN;
  if (in[0].ndim >= 0 && ds_dim_is_known(in[0].dims[axis])) {
    DsDim len = in[0].dims[axis];
    g_autofree char *s = ds_shape_to_string(&in[0]);
    if (ds_dim_is_const(len) && len.value % n != 0) {
      ds_shape_ctx_set_error(ctx, error,
                             "cannot split axis %d of the data %s into num_outputs=%d equal "
                             "parts: %" G_GINT64_FORMAT " is not a multiple of %d",
                             axis, s, n, len.value, n);
      return FALSE;
    }
    if (p->squeeze_axis) {
      if (ds_dim_is_const(len) && len.value != n) {
        ds_shape_ctx_set_error(ctx, error,
                               "squeeze_axis needs axis %d of the data %s to have size "
                               "num_outputs=%d, not %" G_GINT64_FORMAT,
                               axis, s, n, len.value);
        return FALSE;
      }
      /* A symbolic size must then be num_outputs: the engine records it. */
      if (!ds_shape_ctx_unify_dim(ctx, &in[0].dims[axis], ds_dim(n), "data", error))
        return FALSE;
      part = ds_dim(1);
    } else if (ds_dim_divides(ctx, len, ds_dim(n))) {
      part = ds_dim_floordiv(ctx, len, ds_dim(n));
    } else {
      g_autofree char *ls = ds_dim_to_string(len);
      ds_shape_ctx_set_error(ctx, error,
                             "cannot split axis %d of the data %s into num_outputs=%d equal "
                             "parts: %s is not provably a multiple of %d",
                             axis, s, n, ls, n);
      return FALSE;
    }
  }

  DsShape fwd = {.ndim = ndim - squeeze};
  for (int d = 0, k = 0; d < ndim; d++) {
    if (d == axis && squeeze)
      continue;
    fwd.dims[k++] = d == axis ? part : (in[0].ndim >= 0 ? in[0].dims[d] : DS_DIM_UNKNOWN);
  }
  /* The outputs are all alike: what any of them knows holds for all. */
  for (int k = 0; k < n; k++) {
    g_snprintf(what, sizeof what, "output %d", k);
    if (out[k].ndim >= 0 && !ds_shape_ctx_assign(ctx, &fwd, &out[k], what, error))
      return FALSE;
  }
  for (int k = 0; k < n; k++) {
    g_snprintf(what, sizeof what, "output %d", k);
    if (!ds_shape_ctx_assign(ctx, &out[k], &fwd, what, error))
      return FALSE;
  }
  /* Backwards, as MXNet does: the parts give the data's shape. */
  DsShape back = {.ndim = ndim};
  for (int d = 0; d < ndim; d++) {
    if (d == axis)
      back.dims[d] = squeeze ? ds_dim(n) : ds_dim_mul(ctx, fwd.dims[d], ds_dim(n));
    else
      back.dims[d] = fwd.dims[d < axis || !squeeze ? d : d - 1];
  }
  return ds_shape_ctx_assign(ctx, &in[0], &back, "data", error);
}

/* ------------------------------------------------------------------------------------------ */
/* slice_like */

static gboolean parse_slice_like(const DsNode *node, void *param, GError **error)
{
  DsSliceLikeParam *p = param;
  if (!ds_ops_attr_axes(node, "axes", p->axes, &p->n_axes, error))
    return FALSE;
  p->n_axes = MAX(p->n_axes, 0);
  return TRUE;
}

/* shape_like's size on an axis must not exceed the data's: checked on constants, refused when
 * the facts prove it too large, and guarded when they cannot tell. */
static gboolean slice_like_fits(DsShapeCtx *ctx, const DsShape *data, const DsShape *like, int axis,
                                GError **error)
{
  DsDim have = data->dims[axis], want = like->dims[axis];
  if (!ds_dim_is_known(have) || !ds_dim_is_known(want))
    return TRUE;
  DsDim spare = ds_dim_sub(ctx, have, want);
  DsExprCtx *exprs = ds_shape_ctx_get_exprs(ctx);
  gboolean too_big = !ds_dim_is_known(spare); /* a negative constant */
  if (!too_big && spare.expr != NULL && exprs != NULL)
    too_big = ds_expr_less(exprs, spare.expr, ds_expr_const(exprs, 0)) == DS_EXPR_TRUE;
  if (too_big) {
    g_autofree char *sd = ds_shape_to_string(data);
    g_autofree char *sl = ds_shape_to_string(like);
    ds_shape_ctx_set_error(ctx, error,
                           "shape_like %s is larger than the data %s on axis %d: slice_like "
                           "can only shrink",
                           sl, sd, axis);
    return FALSE;
  }
  g_autofree char *guard = g_strdup_printf("shape_like is larger than the data on axis %d", axis);
  ds_shape_ctx_add_guard(ctx, spare, 0, guard);
  return TRUE;
}

/* MXNet's SliceLikeShape: forwards only. */
static gboolean infer_shape_slice_like(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                       DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsSliceLikeParam *p = param;
  const DsShape *data = &in[0], *like = &in[1];
  if (data->ndim < 0 || like->ndim < 0)
    return TRUE;
  DsShape result = *data;
  if (p->n_axes == 0) {
    if (data->ndim != like->ndim) {
      g_autofree char *sd = ds_shape_to_string(data);
      g_autofree char *sl = ds_shape_to_string(like);
      ds_shape_ctx_set_error(ctx, error,
                             "with axes=() the data %s and shape_like %s must have the same "
                             "rank",
                             sd, sl);
      return FALSE;
    }
    for (int d = 0; d < data->ndim; d++) {
      if (!slice_like_fits(ctx, data, like, d, error))
        return FALSE;
      result.dims[d] = like->dims[d];
    }
    return set_output(ctx, &out[0], &result, error);
  }
  for (int i = 0; i < p->n_axes; i++) {
    int axis;
    if (!ds_shape_ctx_axis(ctx, p->axes[i], data->ndim, FALSE, &axis, error))
      return FALSE;
    if (axis >= like->ndim) {
      g_autofree char *sl = ds_shape_to_string(like);
      ds_shape_ctx_set_error(ctx, error, "axis %d is past the last axis of shape_like %s", axis,
                             sl);
      return FALSE;
    }
    if (!slice_like_fits(ctx, data, like, axis, error))
      return FALSE;
    result.dims[axis] = like->dims[axis];
  }
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* argsort */

static gboolean parse_argsort(const DsNode *node, void *param, GError **error)
{
  DsArgsortParam *p = param;
  gboolean ascend;
  /* A missing axis is MXNet's default -1; only an explicit None flattens. */
  p->has_axis = ds_node_get_attr(node, "axis") == NULL || !ds_node_attr_is_none(node, "axis");
  if ((p->has_axis && !attr_int32(node, "axis", -1, &p->axis, error)) ||
      !ds_node_attr_bool(node, "is_ascend", TRUE, &ascend, error) ||
      !ds_node_attr_dtype(node, "dtype", DS_DTYPE_FLOAT32, &p->dtype, error))
    return FALSE;
  p->is_ascend = ascend;
  if (ds_dtype_is_storage_only(p->dtype))
    return ds_ops_attr_invalid(node, "dtype", "is a storage type, which only Cast computes with",
                               error);
  if (ds_index_dtype_capacity(p->dtype) == 0)
    return ds_ops_attr_invalid(node, "dtype",
                               "must be one of uint8, int32, int64, float32, float64", error);
  return TRUE;
}

/* MXNet's ArgSortShape: the data's shape along an axis, the flattened size without one, and
 * (1,) for a 0-dim input. The indices must fit the output dtype, as MXNet checks. */
static gboolean infer_shape_argsort(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                    DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsArgsortParam *p = param;
  if (in[0].ndim < 0)
    return TRUE;
  DsShape result = {.ndim = 1, .dims = {ds_dim(1)}};
  DsDim count = ds_dim(1);
  if (in[0].ndim > 0 && p->has_axis) {
    int axis;
    if (!ds_shape_ctx_axis(ctx, p->axis, in[0].ndim, FALSE, &axis, error))
      return FALSE;
    result = in[0];
    count = in[0].dims[axis];
  } else if (in[0].ndim > 0) {
    count = ds_dim_product(ctx, &in[0], 0, in[0].ndim);
    result.dims[0] = count;
  }
  int64_t capacity = ds_index_dtype_capacity(p->dtype);
  if (ds_dim_is_const(count) && count.value > capacity) {
    ds_shape_ctx_set_error(ctx, error,
                           "%" G_GINT64_FORMAT " positions to sort: %s indices hold at most "
                           "%" G_GINT64_FORMAT " exactly",
                           count.value, ds_dtype_name(p->dtype), capacity);
    return FALSE;
  }
  return set_output(ctx, &out[0], &result, error);
}

static gboolean infer_type_argsort(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                   GError **error)
{
  (void)in;
  return ds_ops_assign_dtype(node, &out[0], ((const DsArgsortParam *)param)->dtype, "output",
                             error);
}

/* ------------------------------------------------------------------------------------------ */
/* gather_nd */

/* MXNet's GatherNDShape: indices.shape[0] = M axes are indexed; the output is
 * indices.shape[1:] + data.shape[M:]. M must be a constant, since the output's rank depends on
 * it. */
static gboolean infer_shape_gather_nd(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                      DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  const DsShape *data = &in[0], *idx = &in[1];
  if (data->ndim < 0 || idx->ndim < 0)
    return TRUE;
  if (idx->ndim < 2) {
    g_autofree char *si = ds_shape_to_string(idx);
    ds_shape_ctx_set_error(
        ctx, error, "indices %s must have at least 2 dims: (indexed axes, positions...)", si);
    return FALSE;
  }
  DsDim m_dim = idx->dims[0];
  if (!ds_dim_is_const(m_dim))
    return TRUE;
  int64_t m = m_dim.value;
  if (m < 1 || m > data->ndim) {
    g_autofree char *sd = ds_shape_to_string(data);
    g_autofree char *si = ds_shape_to_string(idx);
    ds_shape_ctx_set_error(ctx, error,
                           "indices %s index %" G_GINT64_FORMAT " axes, but the data %s has "
                           "rank %d",
                           si, m, sd, data->ndim);
    return FALSE;
  }
  int ndim = idx->ndim - 1 + data->ndim - (int)m;
  if (ndim > DS_MAX_NDIM) {
    ds_shape_ctx_set_error(ctx, error, "the result would have %d dims, more than %d", ndim,
                           DS_MAX_NDIM);
    return FALSE;
  }
  DsShape result = {.ndim = ndim};
  int k = 0;
  for (int d = 1; d < idx->ndim; d++)
    result.dims[k++] = idx->dims[d];
  for (int d = (int)m; d < data->ndim; d++)
    result.dims[k++] = data->dims[d];
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* shape_array, size_array */

/* (ndim,): only the data's rank is needed; its dims are the output's values, not its shape. */
static gboolean infer_shape_shape_array(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                        DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  if (in[0].ndim < 0)
    return TRUE;
  DsShape result = {.ndim = 1, .dims = {ds_dim(in[0].ndim)}};
  return set_output(ctx, &out[0], &result, error);
}

static gboolean infer_shape_size_array(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                       DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  (void)in;
  DsShape result = {.ndim = 1, .dims = {ds_dim(1)}};
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* take_along_axis, put_along_axis */

static const char *const along_axis_inputs[] = {"data", "indices", NULL};
static const char *const put_along_axis_inputs[] = {"data", "indices", "updates", NULL};
static const char *const scatter_nd_inputs[] = {"data", "indices", "updates", NULL};

static gboolean parse_reduction(const DsNode *node, DsScatterReduction *out, GError **error)
{
  static const char *const choices[] = {"none", "add", "mul", "max", "min", NULL};
  int r;
  if (!ds_node_attr_enum(node, "reduction", choices, DS_SCATTER_NONE, &r, error))
    return FALSE;
  *out = (DsScatterReduction)r;
  return TRUE;
}

static gboolean parse_take_along_axis(const DsNode *node, void *param, GError **error)
{
  DsTakeAlongAxisParam *p = param;
  return attr_int32(node, "axis", 0, &p->axis, error);
}

static gboolean parse_put_along_axis(const DsNode *node, void *param, GError **error)
{
  DsPutAlongAxisParam *p = param;
  return attr_int32(node, "axis", 0, &p->axis, error) &&
         parse_reduction(node, &p->reduction, error);
}

/* Data and indices share a rank (at least 1); the axis must exist. */
static gboolean check_along_axis(DsShapeCtx *ctx, int axis, const DsShape *data,
                                 const DsShape *indices, GError **error)
{
  if (data->ndim < 0 || indices->ndim < 0)
    return TRUE;
  if (data->ndim != indices->ndim || data->ndim == 0) {
    g_autofree char *sd = ds_shape_to_string(data), *si = ds_shape_to_string(indices);
    ds_shape_ctx_set_error(ctx, error,
                           "indices %s must have the rank of the data %s (at least 1)", si, sd);
    return FALSE;
  }
  int a;
  return ds_shape_ctx_axis(ctx, axis, data->ndim, FALSE, &a, error);
}

static gboolean infer_shape_take_along_axis(DsShapeCtx *ctx, const DsNode *node,
                                            const void *param, DsShape *in, DsShape *out,
                                            GError **error)
{
  (void)node;
  const DsTakeAlongAxisParam *p = param;
  if (!check_along_axis(ctx, p->axis, &in[0], &in[1], error))
    return FALSE;
  if (in[1].ndim < 0)
    return TRUE;
  return set_output(ctx, &out[0], &in[1], error) &&
         ds_shape_ctx_assign(ctx, &in[1], &out[0], "indices", error);
}

static gboolean infer_shape_put_along_axis(DsShapeCtx *ctx, const DsNode *node,
                                           const void *param, DsShape *in, DsShape *out,
                                           GError **error)
{
  (void)node;
  const DsPutAlongAxisParam *p = param;
  if (!check_along_axis(ctx, p->axis, &in[0], &in[1], error) ||
      !ds_shape_ctx_assign(ctx, &in[2], &in[1], "updates", error) ||
      !ds_shape_ctx_assign(ctx, &in[1], &in[2], "indices", error))
    return FALSE;
  if (in[0].ndim < 0)
    return TRUE;
  return set_output(ctx, &out[0], &in[0], error) &&
         ds_shape_ctx_assign(ctx, &in[0], &out[0], "data", error);
}

/* Data, updates and output share a dtype; the indices may have any integer one. */
static gboolean infer_type_scatter(const DsNode *node, const void *param, DsDType *in,
                                   DsDType *out, GError **error)
{
  (void)param;
  return ds_ops_assign_dtype(node, &in[2], in[0], "updates", error) &&
         ds_ops_assign_dtype(node, &in[0], in[2], "data", error) &&
         ds_ops_unify_dtypes(node, in, 1, out, 1, error);
}

/* ------------------------------------------------------------------------------------------ */
/* batch_gather_nd, scatter_nd_update */

static gboolean parse_batch_gather_nd(const DsNode *node, void *param, GError **error)
{
  DsBatchGatherNdParam *p = param;
  if (!attr_int32(node, "batch_dims", 0, &p->batch_dims, error))
    return FALSE;
  if (p->batch_dims < 0)
    return ds_ops_attr_invalid(node, "batch_dims", "must not be negative", error);
  return TRUE;
}

static gboolean parse_scatter_nd(const DsNode *node, void *param, GError **error)
{
  DsScatterNdParam *p = param;
  return parse_reduction(node, &p->reduction, error);
}

/* The tuple length k of indices (its last dim, a constant) checked against the data: FALSE
 * with an error, or *k = -1 while unknown. */
static gboolean index_tuple_length(DsShapeCtx *ctx, int batch_dims, const DsShape *data,
                                   const DsShape *indices, int64_t *k, GError **error)
{
  *k = -1;
  if (data->ndim < 0 || indices->ndim < 0)
    return TRUE;
  g_autofree char *sd = ds_shape_to_string(data), *si = ds_shape_to_string(indices);
  if (indices->ndim < 1 || indices->ndim <= batch_dims || data->ndim < batch_dims) {
    ds_shape_ctx_set_error(ctx, error,
                           "indices %s need a tuple axis after %d batch axes, with data %s", si,
                           batch_dims, sd);
    return FALSE;
  }
  DsDim last = indices->dims[indices->ndim - 1];
  if (!ds_dim_is_known(last))
    return TRUE;
  if (!ds_dim_is_const(last) || last.value > data->ndim - batch_dims) {
    ds_shape_ctx_set_error(ctx, error,
                           "the index tuples of %s must have a constant length of at most %d "
                           "(data %s)",
                           si, data->ndim - batch_dims, sd);
    return FALSE;
  }
  *k = last.value;
  return TRUE;
}

static gboolean infer_shape_batch_gather_nd(DsShapeCtx *ctx, const DsNode *node,
                                            const void *param, DsShape *in, DsShape *out,
                                            GError **error)
{
  (void)node;
  const DsBatchGatherNdParam *p = param;
  int64_t k;
  if (!index_tuple_length(ctx, p->batch_dims, &in[0], &in[1], &k, error))
    return FALSE;
  if (k < 0)
    return TRUE;
  for (int d = 0; d < p->batch_dims; d++)
    if (!ds_shape_ctx_unify_dim(ctx, &in[1].dims[d], in[0].dims[d], "indices", error) ||
        !ds_shape_ctx_unify_dim(ctx, &in[0].dims[d], in[1].dims[d], "data", error))
      return FALSE;
  int ndim = in[1].ndim - 1 + in[0].ndim - p->batch_dims - (int)k;
  if (ndim > DS_MAX_NDIM) {
    ds_shape_ctx_set_error(ctx, error, "the result would have %d dims, more than %d", ndim,
                           DS_MAX_NDIM);
    return FALSE;
  }
  DsShape result = {.ndim = 0};
  for (int d = 0; d < in[1].ndim - 1; d++)
    result.dims[result.ndim++] = in[1].dims[d];
  for (int d = p->batch_dims + (int)k; d < in[0].ndim; d++)
    result.dims[result.ndim++] = in[0].dims[d];
  return set_output(ctx, &out[0], &result, error);
}

static gboolean infer_shape_scatter_nd(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                       DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  int64_t k;
  if (!index_tuple_length(ctx, 0, &in[0], &in[1], &k, error))
    return FALSE;
  if (k >= 0) {
    DsShape updates = {.ndim = 0};
    for (int d = 0; d < in[1].ndim - 1; d++)
      updates.dims[updates.ndim++] = in[1].dims[d];
    for (int d = (int)k; d < in[0].ndim; d++) {
      if (updates.ndim >= DS_MAX_NDIM) {
        ds_shape_ctx_set_error(ctx, error, "updates would have more than %d dims", DS_MAX_NDIM);
        return FALSE;
      }
      updates.dims[updates.ndim++] = in[0].dims[d];
    }
    if (!ds_shape_ctx_assign(ctx, &in[2], &updates, "updates", error))
      return FALSE;
  }
  if (in[0].ndim < 0)
    return TRUE;
  return set_output(ctx, &out[0], &in[0], error) &&
         ds_shape_ctx_assign(ctx, &in[0], &out[0], "data", error);
}

/* ------------------------------------------------------------------------------------------ */
/* topk */

static gboolean parse_topk(const DsNode *node, void *param, GError **error)
{
  DsTopkParam *p = param;
  static const char *const returns[] = {"value", "indices", "mask", "both", NULL};
  int ret;
  gboolean ascend;
  p->has_axis = !ds_node_attr_is_none(node, "axis") || ds_node_get_attr(node, "axis") == NULL;
  if ((p->has_axis && !attr_int32(node, "axis", -1, &p->axis, error)) ||
      !ds_node_attr_int(node, "k", 1, &p->k, error) ||
      !ds_node_attr_enum(node, "ret_typ", returns, DS_TOPK_INDICES, &ret, error) ||
      !ds_node_attr_bool(node, "is_ascend", FALSE, &ascend, error) ||
      !ds_node_attr_dtype(node, "dtype", DS_DTYPE_FLOAT32, &p->dtype, error))
    return FALSE;
  p->ret_typ = (DsTopkReturn)ret;
  p->is_ascend = ascend;
  if (ds_index_dtype_capacity(p->dtype) == 0)
    return ds_ops_attr_invalid(node, "dtype", "cannot hold indices", error);
  return TRUE;
}

static int topk_num_outputs(const void *param)
{
  return ds_topk_num_outputs(param);
}

static gboolean infer_shape_topk(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                 DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsTopkParam *p = param;
  const DsShape *s = &in[0];
  if (s->ndim < 0)
    return TRUE;
  if (p->ret_typ == DS_TOPK_MASK)
    return set_output(ctx, &out[0], s, error);
  DsShape result;
  int axis = 0;
  if (p->has_axis) {
    if (s->ndim == 0) {
      ds_shape_ctx_set_error(ctx, error, "a 0-dim tensor has no axis to select along");
      return FALSE;
    }
    if (!ds_shape_ctx_axis(ctx, p->axis, s->ndim, FALSE, &axis, error))
      return FALSE;
    result = *s;
  } else {
    result = (DsShape){.ndim = 1, .dims = {ds_dim_product(ctx, s, 0, s->ndim)}};
  }
  DsDim len = result.dims[axis];
  if (p->k >= 1) {
    if (ds_dim_is_const(len) && len.value < p->k) {
      g_autofree char *str = ds_shape_to_string(s);
      ds_shape_ctx_set_error(ctx, error,
                             "k=%" G_GINT64_FORMAT " is more than the %" G_GINT64_FORMAT
                             " elements along the axis of %s",
                             p->k, len.value, str);
      return FALSE;
    }
    ds_shape_ctx_add_guard(ctx, ds_dim_sub(ctx, len, ds_dim(p->k)), 0,
                           "k is more than the elements along the axis");
    result.dims[axis] = ds_dim(p->k);
  }
  for (int i = 0; i < ds_topk_num_outputs(p); i++)
    if (!set_output(ctx, &out[i], &result, error))
      return FALSE;
  return TRUE;
}

static gboolean infer_type_topk(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                GError **error)
{
  const DsTopkParam *p = param;
  switch (p->ret_typ) {
  case DS_TOPK_VALUE:
  case DS_TOPK_MASK:
    return ds_ops_unify_dtypes(node, in, 1, out, 1, error);
  case DS_TOPK_INDICES:
    return ds_ops_assign_dtype(node, &out[0], p->dtype, "indices", error);
  default:
    return ds_ops_unify_dtypes(node, in, 1, out, 1, error) &&
           ds_ops_assign_dtype(node, &out[1], p->dtype, "indices", error);
  }
}

/* ------------------------------------------------------------------------------------------ */
/* Definitions */

/* ------------------------------------------------------------------------------------------ */
/* one_hot */

static gboolean parse_one_hot(const DsNode *node, void *param, GError **error)
{
  DsOneHotParam *p = param;
  if (!ds_ops_attr_require(node, "depth", error) ||
      !ds_ops_attr_int_range(node, "depth", 0, 0, G_MAXINT64, &p->depth, error) ||
      !ds_node_attr_float(node, "on_value", 1.0, &p->on_value, error) ||
      !ds_node_attr_float(node, "off_value", 0.0, &p->off_value, error) ||
      !ds_node_attr_dtype(node, "dtype", DS_DTYPE_FLOAT32, &p->dtype, error))
    return FALSE;
  return TRUE;
}

static gboolean infer_shape_one_hot(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                    DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsOneHotParam *p = param;
  if (in[0].ndim < 0)
    return TRUE;
  if (in[0].ndim + 1 > DS_MAX_NDIM) {
    ds_shape_ctx_set_error(ctx, error, "indices of rank %d leave no room for the depth axis",
                           in[0].ndim);
    return FALSE;
  }
  DsShape result = in[0];
  result.dims[result.ndim++] = ds_dim(p->depth);
  return set_output(ctx, &out[0], &result, error);
}

static gboolean infer_type_one_hot(const DsNode *node, const void *param, DsDType *in,
                                   DsDType *out, GError **error)
{
  (void)in;
  return ds_ops_assign_dtype(node, &out[0], ((const DsOneHotParam *)param)->dtype, "output",
                             error);
}

/* ------------------------------------------------------------------------------------------ */
/* pick */

static const char *const one_hot_inputs[] = {"indices", NULL};
static const char *const one_hot_aliases[] = {"_npx_one_hot", NULL};
static const char *const pick_inputs[] = {"data", "index", NULL};
static const char *const pick_aliases[] = {"choose_element_0index", "_npx_pick", NULL};

static gboolean parse_pick(const DsNode *node, void *param, GError **error)
{
  static const char *const modes[] = {"wrap", "clip", NULL};
  DsPickParam *p = param;
  gboolean keepdims;
  int mode;
  const char *axis = ds_node_get_attr(node, "axis");
  if (axis != NULL && ds_node_attr_is_none(node, "axis"))
    return ds_ops_attr_invalid(node, "axis", "must be an int: pick has no axis=None", error);
  if (!attr_int32(node, "axis", -1, &p->axis, error) ||
      !ds_node_attr_bool(node, "keepdims", FALSE, &keepdims, error) ||
      !ds_node_attr_enum(node, "mode", modes, DS_PICK_CLIP, &mode, error))
    return FALSE;
  p->keepdims = keepdims;
  p->mode = (DsPickMode)mode;
  return TRUE;
}

/* MXNet's ReduceAxisShapeImpl for one axis: it goes, or stays as 1 (keepdims); 1-D data gives
 * (1,). */
static DsShape pick_reduced_shape(const DsShape *s, int axis, gboolean keepdims)
{
  DsShape r = {.ndim = 0};
  if (s->ndim == 1) {
    r.ndim = 1;
    r.dims[0] = ds_dim(1);
    return r;
  }
  for (int d = 0; d < s->ndim; d++) {
    if (d != axis)
      r.dims[r.ndim++] = s->dims[d];
    else if (keepdims)
      r.dims[r.ndim++] = ds_dim(1);
  }
  return r;
}

/* MXNet's PickOpShape: the output drops the axis (or keeps it as 1); the index has that shape
 * too, keepdims-style when its rank is the data's. */
static gboolean infer_shape_pick(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                 DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsPickParam *p = param;
  if (in[0].ndim < 0)
    return TRUE;
  int axis;
  if (!ds_shape_ctx_axis(ctx, p->axis, in[0].ndim, FALSE, &axis, error))
    return FALSE;
  DsShape result = pick_reduced_shape(&in[0], axis, p->keepdims);
  if (!set_output(ctx, &out[0], &result, error))
    return FALSE;
  if (in[1].ndim < 0)
    return TRUE;
  DsShape index = pick_reduced_shape(&in[0], axis, in[1].ndim == in[0].ndim);
  return ds_shape_ctx_assign(ctx, &in[1], &index, "index", error);
}

#define DS_INDEX_OP(ID, NAME, ALIASES, PARAM, PARSE, NUM_IN, NUM_OUT, INPUTS, SHAPE, TYPE, ...)    \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .aliases = ALIASES,                                                                          \
      .traits = 0,                                                                                 \
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

static const char *const reverse_aliases[] = {"flip", NULL};
static const char *const slice_channel_aliases[] = {"split", NULL};

DS_INDEX_OP(REPEAT, "repeat", NULL, sizeof(DsRepeatParam), parse_repeat, ds_op_count_1,
            ds_op_count_1, NULL, infer_shape_repeat, NULL,
            .grad = ds_grad_repeat)
DS_INDEX_OP(TILE, "tile", NULL, sizeof(DsTileParam), parse_tile, ds_op_count_1, ds_op_count_1, NULL,
            infer_shape_tile, NULL,
            .grad = ds_grad_tile)
DS_INDEX_OP(REVERSE, "reverse", reverse_aliases, sizeof(DsReverseParam), parse_reverse,
            ds_op_count_1, ds_op_count_1, NULL, infer_shape_reverse, NULL,
            .grad = ds_grad_self_adjoint)
DS_INDEX_OP(STACK, "stack", NULL, sizeof(DsStackParam), parse_stack, stack_num_inputs,
            ds_op_count_1, data_inputs, infer_shape_stack, NULL,
             .grad = ds_grad_stack)
/* Every part is visible; with no output names the outputs are output0, output1... */
DS_INDEX_OP(SLICE_CHANNEL, "SliceChannel", slice_channel_aliases, sizeof(DsSliceChannelParam),
            parse_slice_channel, ds_op_count_1, slice_channel_num_outputs, NULL,
            infer_shape_slice_channel, NULL,
             .grad = ds_grad_slice_channel)
DS_INDEX_OP(SLICE_LIKE, "slice_like", NULL, sizeof(DsSliceLikeParam), parse_slice_like,
            ds_op_count_2, ds_op_count_1, slice_like_inputs, infer_shape_slice_like,
            infer_type_data_out,
            .grad = ds_grad_slice_like)
DS_INDEX_OP(ARGSORT, "argsort", NULL, sizeof(DsArgsortParam), parse_argsort, ds_op_count_1,
            ds_op_count_1, NULL, infer_shape_argsort, infer_type_argsort, .grad = ds_grad_zero)
DS_INDEX_OP(GATHER_ND, "gather_nd", NULL, 0, NULL, ds_op_count_2, ds_op_count_1, gather_nd_inputs,
            infer_shape_gather_nd, infer_type_data_out,
            .grad = ds_grad_gather_nd)
DS_INDEX_OP(SHAPE_ARRAY, "shape_array", NULL, 0, NULL, ds_op_count_1, ds_op_count_1, NULL,
            infer_shape_shape_array, infer_type_int64_out,
             .grad = ds_grad_zero)
DS_INDEX_OP(SIZE_ARRAY, "size_array", NULL, 0, NULL, ds_op_count_1, ds_op_count_1, NULL,
            infer_shape_size_array, infer_type_int64_out, .grad = ds_grad_zero)
DS_INDEX_OP(TAKE_ALONG_AXIS, "take_along_axis", NULL, sizeof(DsTakeAlongAxisParam),
            parse_take_along_axis, ds_op_count_2, ds_op_count_1, along_axis_inputs,
            infer_shape_take_along_axis, infer_type_data_out,
            .grad = ds_grad_take_along_axis)
DS_INDEX_OP(PUT_ALONG_AXIS, "put_along_axis", NULL, sizeof(DsPutAlongAxisParam),
            parse_put_along_axis, ds_op_count_3, ds_op_count_1, put_along_axis_inputs,
            infer_shape_put_along_axis, infer_type_scatter,
            .grad = ds_grad_scatter)
DS_INDEX_OP(BATCH_GATHER_ND, "batch_gather_nd", NULL, sizeof(DsBatchGatherNdParam),
            parse_batch_gather_nd, ds_op_count_2, ds_op_count_1, gather_nd_inputs,
            infer_shape_batch_gather_nd, infer_type_data_out,
            .grad = ds_grad_gather_nd)
DS_INDEX_OP(SCATTER_ND_UPDATE, "scatter_nd_update", NULL, sizeof(DsScatterNdParam),
            parse_scatter_nd, ds_op_count_3, ds_op_count_1, scatter_nd_inputs,
            infer_shape_scatter_nd, infer_type_scatter,
            .grad = ds_grad_scatter)
DS_INDEX_OP(TOPK, "topk", NULL, sizeof(DsTopkParam), parse_topk, ds_op_count_1, topk_num_outputs,
            NULL, infer_shape_topk, infer_type_topk,
            .grad = ds_grad_topk)

DS_INDEX_OP(ONE_HOT, "one_hot", one_hot_aliases, sizeof(DsOneHotParam), parse_one_hot,
            ds_op_count_1, ds_op_count_1, one_hot_inputs, infer_shape_one_hot, infer_type_one_hot,
             .grad = ds_grad_zero)
/* The output takes the data's dtype; the index may have any. */
DS_INDEX_OP(PICK, "pick", pick_aliases, sizeof(DsPickParam), parse_pick, ds_op_count_2,
            ds_op_count_1, pick_inputs, infer_shape_pick, infer_type_data_out,
            .grad = ds_grad_take_along_axis)

void ds_ops_index_register(const DsOpDef **table)
{
  DS_OPS_INDEX(DS_OP_TABLE_ENTRY)
}
