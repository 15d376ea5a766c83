/* ds-ops-nn.c: neural-network layers and matrix products: attribute parsing with MXNet 1.x's
 * defaults, argument lists, and shape and dtype rules.
 *
 * Shape functions use only the ds_dim_* arithmetic and the DsShapeCtx unification, so the
 * symbolic engine can run them unchanged; they fill weights and states backwards from the data
 * as MXNet's FInferShape does, and fill what they can of the data from the outputs. Constant
 * dims are compared with attributes (a kernel larger than its padded input) only through
 * ds_dim_is_const().
 */
#include "ds-ops-nn.h"

#include <stdarg.h>
#include <string.h>

#include "ds-attr.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-op.h"
#include "ds-grad.h"
#include "ds-grads.h"
#include "ds-ops-common.h"

/* --- Helpers ------------------------------------------------------------------------------ */

/* An integer attribute that must be at least `min`. */
static gboolean attr_int_min(const DsNode *node, const char *key, int64_t def, int64_t min,
                             int64_t *out, GError **error)
{
  if (!ds_node_attr_int(node, key, def, out, error))
    return FALSE;
  if (*out < min)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "attribute %s=%" G_GINT64_FORMAT " must be at least %" G_GINT64_FORMAT,
                             key, *out, min);
  return TRUE;
}

/* A 32-bit int attribute (axis). */
static gboolean attr_int32(const DsNode *node, const char *key, int def, int *out, GError **error)
{
  int64_t v;
  if (!ds_node_attr_int(node, key, def, &v, error))
    return FALSE;
  if (v < G_MININT32 || v > G_MAXINT32)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "attribute %s=%" G_GINT64_FORMAT " is out of range", key, v);
  *out = (int)v;
  return TRUE;
}

static const char *const layout_names[] = {"NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC", NULL};

/* Reads `layout`: *n_spatial_out is its spatial rank (0 when absent or "None"). Channels-last
 * layouts are refused with DS_ERROR_UNSUPPORTED; `n_spatial` > 0 must match the layout. */
static gboolean attr_layout(const DsNode *node, int n_spatial, int *n_spatial_out, GError **error)
{
  *n_spatial_out = 0;
  if (ds_node_attr_is_none(node, "layout"))
    return TRUE;
  int idx;
  if (!ds_node_attr_enum(node, "layout", layout_names, 0, &idx, error))
    return FALSE;
  if (idx >= 3)
    return ds_ops_node_error(
        node, error, DS_ERROR_UNSUPPORTED,
        "layout=%s is not supported: only the channels-first layouts NCW, NCHW and "
        "NCDHW are",
        layout_names[idx]);
  if (n_spatial > 0 && idx + 1 != n_spatial)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID, "layout=%s does not fit a %d-D kernel",
                             layout_names[idx], n_spatial);
  *n_spatial_out = idx + 1;
  return TRUE;
}

/* Unifies one dim, naming `what` and both values on a mismatch. */
static gboolean unify(DsShapeCtx *ctx, DsDim *slot, DsDim want, const char *what, GError **error)
{
  return ds_shape_ctx_unify_dim(ctx, slot, want, what, error);
}

/* Two shapes that must be equal (data and output of an elementwise op): each fills the other. */
static gboolean assign_both(DsShapeCtx *ctx, DsShape *a, const char *a_what, DsShape *b,
                            const char *b_what, GError **error)
{
  return ds_ops_assign_shape(ctx, b, a, b_what, error) &&
         ds_ops_assign_shape(ctx, a, b, a_what, error);
}

static DsShape shape1(DsDim a)
{
  return (DsShape){.ndim = 1, .dims = {a}};
}
static DsShape shape2(DsDim a, DsDim b)
{
  return (DsShape){.ndim = 2, .dims = {a, b}};
}
static DsShape shape3(DsDim a, DsDim b, DsDim c)
{
  return (DsShape){.ndim = 3, .dims = {a, b, c}};
}

/* Dtype of one slot: unknown takes `want`; two known dtypes must agree. */
static gboolean assign_dtype(const DsNode *node, DsDType *slot, DsDType want, const char *what,
                             GError **error)
{
  if (want == DS_DTYPE_UNKNOWN)
    return TRUE;
  if (*slot == DS_DTYPE_UNKNOWN) {
    *slot = want;
    return TRUE;
  }
  if (*slot != want)
    return ds_ops_node_error(node, error, DS_ERROR_SHAPE, "%s has dtype %s, but %s is expected",
                             what, ds_dtype_name(*slot), ds_dtype_name(want));
  return TRUE;
}

static const char *const names_output[] = {"output", NULL};
static const char *const names_output_mask[] = {"output", "mask", NULL};

/* --- Convolution -------------------------------------------------------------------------- */

static const char *const auto_pad_names[] = {"none", "same_upper", "same_lower", NULL};

/* The padding extensions shared by Convolution and Pooling: `pad_end` (default: `pad`) and
 * `auto_pad`, which excludes explicit padding. */
static gboolean attr_pad_end(const DsNode *node, int n, const int64_t *pad, int64_t *pad_end,
                             DsAutoPad *auto_pad, GError **error)
{
  int mode;
  if (!ds_node_attr_enum(node, "auto_pad", auto_pad_names, DS_AUTO_PAD_NONE, &mode, error))
    return FALSE;
  *auto_pad = mode;
  if (ds_node_get_attr(node, "pad_end") == NULL) {
    for (int i = 0; i < n; i++)
      pad_end[i] = pad[i];
  } else if (!ds_ops_attr_spatial(node, "pad_end", n, 0, 0, pad_end, error)) {
    return FALSE;
  }
  if (*auto_pad == DS_AUTO_PAD_NONE)
    return TRUE;
  for (int i = 0; i < n; i++)
    if (pad[i] != 0 || pad_end[i] != 0)
      return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                               "auto_pad=%s computes the padding: pad and pad_end must be 0",
                               auto_pad_names[*auto_pad]);
  return TRUE;
}

static gboolean convolution_parse(const DsNode *node, void *param, GError **error)
{
  DsConvolutionParam *p = param;
  int64_t kernel[DS_MAX_NDIM];
  int nk;
  if (!ds_ops_attr_require(node, "kernel", error) ||
      !ds_node_attr_tuple(node, "kernel", kernel, DS_MAX_NDIM, &nk, error))
    return FALSE;
  if (nk < 1 || nk > DS_NN_MAX_SPATIAL)
    return ds_ops_node_error(
        node, error, nk > DS_NN_MAX_SPATIAL ? DS_ERROR_UNSUPPORTED : DS_ERROR_INVALID,
        "kernel=%s: only 1-D, 2-D and 3-D convolutions exist", ds_node_get_attr(node, "kernel"));
  p->n_spatial = nk;
  for (int i = 0; i < nk; i++) {
    if (kernel[i] < 1)
      return ds_ops_node_error(node, error, DS_ERROR_INVALID, "kernel=%s: sizes must be at least 1",
                               ds_node_get_attr(node, "kernel"));
    p->kernel[i] = kernel[i];
  }
  int layout_rank;
  if (!ds_ops_attr_spatial(node, "stride", nk, 1, 1, p->stride, error) ||
      !ds_ops_attr_spatial(node, "dilate", nk, 1, 1, p->dilate, error) ||
      !ds_ops_attr_spatial(node, "pad", nk, 0, 0, p->pad, error) ||
      !attr_pad_end(node, nk, p->pad, p->pad_end, &p->auto_pad, error) ||
      !ds_ops_attr_require(node, "num_filter", error) ||
      !attr_int_min(node, "num_filter", 0, 0, &p->num_filter, error) ||
      !attr_int_min(node, "num_group", 1, 1, &p->num_group, error) ||
      !ds_ops_attr_opt_bool(node, "no_bias", FALSE, &p->no_bias, error) ||
      !attr_layout(node, nk, &layout_rank, error))
    return FALSE;
  if (p->num_filter % p->num_group != 0)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "num_filter=%" G_GINT64_FORMAT
                             " is not a multiple of num_group=%" G_GINT64_FORMAT,
                             p->num_filter, p->num_group);
  return TRUE;
}

static int convolution_num_inputs(const void *param)
{
  return ((const DsConvolutionParam *)param)->no_bias ? 2 : 3;
}

static const char *const spatial_layouts[] = {"", "N, C, W", "N, C, H, W", "N, C, D, H, W"};

/* One spatial output dim: (x + p - d(k-1) - 1) // s + 1, or for pooling's conventions
 * floor/ceil of (x + p - k) / s + 1, or ceil((x + p) / s), where p is the padding of both ends
 * together. `eff_kernel` is the dilated kernel size. A kernel larger than the padded input is
 * an error. */
typedef enum { ROUND_FLOOR, ROUND_CEIL, ROUND_SAME } OutRounding;

static gboolean spatial_out_dim(DsShapeCtx *ctx, DsDim x, int64_t eff_kernel, int64_t pad,
                                int64_t stride, OutRounding rounding, int axis, DsDim *out,
                                GError **error)
{
  /* `pad` is the total: both ends. */
  DsDim padded = ds_dim_add(ctx, x, ds_dim(pad));
  if (ds_dim_is_const(padded) && padded.value < eff_kernel) {
    ds_shape_ctx_set_error(ctx, error,
                           "kernel size %" G_GINT64_FORMAT
                           " exceeds the input size %" G_GINT64_FORMAT
                           " padded to %" G_GINT64_FORMAT " on spatial axis %d",
                           eff_kernel, x.value, padded.value, axis);
    return FALSE;
  }
  /* A symbolic size the facts keep below the kernel (s1 <= 100 through squeezenet's 13x13
   * pool) is as wrong as a constant one; sizes the facts do not decide stay accepted. */
  DsExprCtx *exprs = ctx != NULL ? ds_shape_ctx_get_exprs(ctx) : NULL;
  if (padded.expr != NULL && exprs != NULL &&
      ds_expr_less(exprs, padded.expr, ds_expr_const(exprs, eff_kernel)) == DS_EXPR_TRUE) {
    int64_t lo, hi;
    ds_expr_bounds(exprs, padded.expr, &lo, &hi);
    g_autofree char *xs = ds_dim_to_string(x);
    g_autofree char *ps = pad > 0 ? ds_dim_to_string(padded) : NULL;
    ds_shape_ctx_set_error(ctx, error,
                           "kernel size %" G_GINT64_FORMAT " exceeds the input size %s%s%s (at "
                           "most %" G_GINT64_FORMAT " under the facts) on spatial axis %d",
                           eff_kernel, xs, ps != NULL ? " padded to " : "", ps != NULL ? ps : "",
                           hi, axis);
    return FALSE;
  }
  /* Undecided: every binding must still fit the kernel, as concrete inference requires. */
  g_autofree char *what = g_strdup_printf("kernel size %" G_GINT64_FORMAT " exceeds the padded "
                                          "input size on spatial axis %d",
                                          eff_kernel, axis);
  ds_shape_ctx_add_guard(ctx, padded, eff_kernel, what);
  if (rounding == ROUND_SAME) {
    *out = ds_dim_ceildiv(ctx, padded, ds_dim(stride));
    return TRUE;
  }
  DsDim diff = ds_dim_sub(ctx, padded, ds_dim(eff_kernel));
  DsDim q = rounding == ROUND_CEIL ? ds_dim_ceildiv(ctx, diff, ds_dim(stride))
                                   : ds_dim_floordiv(ctx, diff, ds_dim(stride));
  *out = ds_dim_add(ctx, q, ds_dim(1));
  return TRUE;
}

static gboolean convolution_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                        DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsConvolutionParam *p = param;
  const int ns = p->n_spatial, nd = ns + 2;
  DsShape *data = &in[0];
  if (!ds_ops_check_rank(ctx, data, nd, "data", spatial_layouts[ns], error) ||
      !ds_ops_check_rank(ctx, &out[0], nd, "output", spatial_layouts[ns], error))
    return FALSE;
  const DsDim groups = ds_dim(p->num_group);

  /* Channels: from the data, else from the weight (C = (C / G) * G). */
  DsDim channels = data->ndim == nd ? data->dims[1] : DS_DIM_UNKNOWN;
  if (ds_dim_is_const(channels) && !ds_dim_is_value(ds_dim_mod(ctx, channels, groups), 0)) {
    ds_shape_ctx_set_error(ctx, error,
                           "data has %" G_GINT64_FORMAT " channels, not a multiple of "
                           "num_group=%" G_GINT64_FORMAT,
                           channels.value, p->num_group);
    return FALSE;
  }
  DsShape w = {.ndim = nd};
  w.dims[0] = p->num_filter > 0 ? ds_dim(p->num_filter) : DS_DIM_UNKNOWN;
  w.dims[1] = ds_dim_floordiv(ctx, channels, groups);
  for (int i = 0; i < ns; i++)
    w.dims[2 + i] = ds_dim(p->kernel[i]);
  if (!ds_ops_assign_shape(ctx, &in[1], &w, "weight", error))
    return FALSE;
  /* The filter count: the attribute, or with num_filter=0 the weight's first dim. */
  DsDim filters = in[1].ndim == nd ? in[1].dims[0] : w.dims[0];
  if (out[0].ndim == nd && !unify(ctx, &filters, out[0].dims[1], "output", error))
    return FALSE;
  if (ds_dim_is_const(filters) && filters.value % p->num_group != 0) {
    ds_shape_ctx_set_error(ctx, error,
                           "weight has %" G_GINT64_FORMAT " filters, not a multiple of "
                           "num_group=%" G_GINT64_FORMAT,
                           filters.value, p->num_group);
    return FALSE;
  }
  if (in[1].ndim == nd && !unify(ctx, &in[1].dims[0], filters, "weight", error))
    return FALSE;
  if (!p->no_bias) {
    DsShape b = shape1(filters);
    if (!ds_ops_assign_shape(ctx, &in[2], &b, "bias", error))
      return FALSE;
  }
  if (data->ndim == nd &&
      !unify(ctx, &data->dims[1], ds_dim_mul(ctx, in[1].dims[1], groups), "data", error))
    return FALSE;

  if (data->ndim != nd)
    return TRUE;
  DsShape o = {.ndim = nd};
  o.dims[0] = data->dims[0];
  o.dims[1] = filters;
  for (int i = 0; i < ns; i++) {
    int64_t eff = p->dilate[i] * (p->kernel[i] - 1) + 1;
    if (p->auto_pad != DS_AUTO_PAD_NONE) /* the padding makes it fit */
      o.dims[2 + i] = ds_dim_ceildiv(ctx, data->dims[2 + i], ds_dim(p->stride[i]));
    else if (!spatial_out_dim(ctx, data->dims[2 + i], eff, p->pad[i] + p->pad_end[i], p->stride[i],
                              ROUND_FLOOR, i, &o.dims[2 + i], error))
      return FALSE;
  }
  if (!ds_ops_assign_shape(ctx, &out[0], &o, "output", error))
    return FALSE;
  /* Backwards as MXNet: the batch always, a spatial dim where the stride is 1. */
  if (!unify(ctx, &data->dims[0], out[0].dims[0], "data", error))
    return FALSE;
  for (int i = 0; i < ns; i++) {
    if (p->stride[i] != 1)
      continue;
    int64_t eff = p->dilate[i] * (p->kernel[i] - 1) + 1;
    DsDim x = p->auto_pad != DS_AUTO_PAD_NONE
                  ? out[0].dims[2 + i]
                  : ds_dim_sub(ctx, ds_dim_add(ctx, out[0].dims[2 + i], ds_dim(eff - 1)),
                               ds_dim(p->pad[i] + p->pad_end[i]));
    if (!unify(ctx, &data->dims[2 + i], x, "data", error))
      return FALSE;
  }
  return TRUE;
}

static const char *const convolution_inputs[] = {"data", "weight", "bias", NULL};
static const char *const convolution_aliases[] = {"_npx_convolution", NULL};

static const DsOpDef CONVOLUTION_def = {
    .id = DS_OP_CONVOLUTION,
    .name = "Convolution",
    .aliases = convolution_aliases,
    .param_size = sizeof(DsConvolutionParam),
    .parse = convolution_parse,
    .num_inputs = convolution_num_inputs,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = convolution_inputs,
    .output_names = names_output,
    .infer_shape = convolution_infer_shape,
    .grad = ds_grad_convolution,
};

/* --- Pooling ------------------------------------------------------------------------------ */

static const char *const pool_types[] = {"max", "avg", "sum", "lp", NULL};
static const char *const pool_conventions[] = {"valid", "full", "same", NULL};
static const char *const pool_indices[] = {"none", "row_major", "column_major", NULL};

static gboolean pooling_parse(const DsNode *node, void *param, GError **error)
{
  DsPoolingParam *p = param;
  int type, conv, indices;
  gboolean global;
  if (!ds_node_attr_enum(node, "pool_type", pool_types, DS_POOL_MAX, &type, error) ||
      !ds_node_attr_enum(node, "pooling_convention", pool_conventions, DS_POOL_VALID, &conv,
                         error) ||
      !ds_node_attr_enum(node, "indices", pool_indices, DS_POOL_INDICES_NONE, &indices, error) ||
      !ds_node_attr_bool(node, "global_pool", FALSE, &global, error) ||
      !ds_ops_attr_opt_bool(node, "count_include_pad", TRUE, &p->count_include_pad, error))
    return FALSE;
  p->pool_type = type;
  p->convention = conv;
  p->global_pool = global;
  p->indices = indices;
  if (p->indices != DS_POOL_INDICES_NONE && p->pool_type != DS_POOL_MAX)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "indices=%s: only max pooling outputs indices",
                             ds_node_get_attr(node, "indices"));

  int64_t kernel[DS_MAX_NDIM];
  int nk;
  if (!ds_node_attr_tuple(node, "kernel", kernel, DS_MAX_NDIM, &nk, error))
    return FALSE;
  if (nk > DS_NN_MAX_SPATIAL)
    return ds_ops_node_error(node, error, DS_ERROR_UNSUPPORTED,
                             "kernel=%s: only 1-D, 2-D and 3-D pooling exist",
                             ds_node_get_attr(node, "kernel"));
  if (nk <= 0 && !global)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "attribute 'kernel' is required unless global_pool is set");
  for (int i = 0; i < nk; i++)
    if (kernel[i] < 1)
      return ds_ops_node_error(node, error, DS_ERROR_INVALID, "kernel=%s: sizes must be at least 1",
                               ds_node_get_attr(node, "kernel"));
  int layout_rank;
  if (!attr_layout(node, nk > 0 ? nk : 0, &layout_rank, error))
    return FALSE;
  /* Without a kernel (global pooling), the layout, if any, gives the rank. */
  p->n_spatial = nk > 0 ? nk : layout_rank;
  for (int i = 0; i < DS_NN_MAX_SPATIAL; i++)
    p->kernel[i] = i < nk ? kernel[i] : 1;
  int n = p->n_spatial > 0 ? p->n_spatial : DS_NN_MAX_SPATIAL;
  if (nk > 0) {
    if (!ds_ops_attr_spatial(node, "stride", n, 1, 1, p->stride, error) ||
        !ds_ops_attr_spatial(node, "pad", n, 0, 0, p->pad, error) ||
        !ds_ops_attr_spatial(node, "dilate", n, 1, 1, p->dilate, error) ||
        !attr_pad_end(node, n, p->pad, p->pad_end, &p->auto_pad, error))
      return FALSE;
  } else {
    /* Ignored by global pooling; MXNet does not check their length either. */
    for (int i = 0; i < DS_NN_MAX_SPATIAL; i++) {
      p->stride[i] = 1;
      p->pad[i] = 0;
      p->pad_end[i] = 0;
      p->dilate[i] = 1;
    }
  }
  for (int i = 0; i < nk && p->pool_type != DS_POOL_MAX; i++)
    if (p->dilate[i] != 1)
      return ds_ops_node_error(node, error, DS_ERROR_UNSUPPORTED,
                               "dilate=%s: only max pooling supports dilation",
                               ds_node_get_attr(node, "dilate"));
  p->p_value = 1;
  if (p->pool_type == DS_POOL_LP) {
    int64_t pv;
    if (ds_node_attr_is_none(node, "p_value"))
      return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                               "lp pooling needs the attribute p_value");
    if (!ds_node_attr_int(node, "p_value", 1, &pv, error))
      return FALSE;
    if (pv < 1 || pv > 3)
      return ds_ops_node_error(
          node, error, DS_ERROR_UNSUPPORTED,
          "p_value=%" G_GINT64_FORMAT " is not supported (MXNet has 1, 2 and 3)", pv);
    p->p_value = (int)pv;
  }
  if (p->convention == DS_POOL_SAME && !global) {
    for (int i = 0; i < n; i++)
      if (p->pad[i] != 0 || p->pad_end[i] != 0)
        return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                                 "pooling_convention=same does not allow padding (pad=%s)",
                                 ds_node_get_attr(node, "pad"));
  }
  return TRUE;
}

static gboolean pooling_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                    DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsPoolingParam *p = param;
  DsShape *data = &in[0];
  if (data->ndim < 0 && out[0].ndim >= 0) {
    /* The data's rank, batch and channels come back from a known output. */
    DsShape d = {.ndim = out[0].ndim};
    for (int i = 0; i < d.ndim; i++)
      d.dims[i] = i < 2 ? out[0].dims[i] : DS_DIM_UNKNOWN;
    *data = d;
  }
  if (data->ndim < 0)
    return TRUE;
  int nd = data->ndim;
  if (nd < 3 || nd > 5) {
    g_autofree char *s = ds_shape_to_string(data);
    ds_shape_ctx_set_error(ctx, error,
                           "data must have 3, 4 or 5 dims (N, C and 1 to 3 spatial), but has "
                           "shape %s",
                           s);
    return FALSE;
  }
  if (p->convention == DS_POOL_SAME && p->auto_pad == DS_AUTO_PAD_NONE && !p->global_pool &&
      nd != 3) {
    g_autofree char *s = ds_shape_to_string(data);
    ds_shape_ctx_set_error(ctx, error,
                           "pooling_convention=same supports only 1-D data (N, C, W), as in "
                           "MXNet; data has shape %s",
                           s);
    return FALSE;
  }
  if (p->n_spatial > 0 && !p->global_pool &&
      !ds_ops_check_rank(ctx, data, p->n_spatial + 2, "data", spatial_layouts[p->n_spatial], error))
    return FALSE;
  DsShape o = {.ndim = nd};
  o.dims[0] = data->dims[0];
  o.dims[1] = data->dims[1];
  for (int i = 0; i < nd - 2; i++) {
    if (p->global_pool) {
      o.dims[2 + i] = ds_dim(1);
      continue;
    }
    if (p->auto_pad != DS_AUTO_PAD_NONE) { /* the padding makes it fit */
      o.dims[2 + i] = ds_dim_ceildiv(ctx, data->dims[2 + i], ds_dim(p->stride[i]));
      continue;
    }
    OutRounding r = p->convention == DS_POOL_VALID  ? ROUND_FLOOR
                    : p->convention == DS_POOL_FULL ? ROUND_CEIL
                                                    : ROUND_SAME;
    int64_t eff = p->dilate[i] * (p->kernel[i] - 1) + 1;
    if (!spatial_out_dim(ctx, data->dims[2 + i], eff, p->pad[i] + p->pad_end[i], p->stride[i], r, i,
                         &o.dims[2 + i], error))
      return FALSE;
  }
  if (!ds_ops_assign_shape(ctx, &out[0], &o, "output", error))
    return FALSE;
  if (p->indices != DS_POOL_INDICES_NONE &&
      !ds_ops_assign_shape(ctx, &out[1], &o, "indices", error))
    return FALSE;
  return unify(ctx, &data->dims[0], out[0].dims[0], "data", error) &&
         unify(ctx, &data->dims[1], out[0].dims[1], "data", error);
}

static int pooling_num_outputs(const void *param)
{
  return ((const DsPoolingParam *)param)->indices != DS_POOL_INDICES_NONE ? 2 : 1;
}

/* The pooled values keep the data's dtype; the indices are int64. */
static gboolean pooling_infer_type(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                   GError **error)
{
  const DsPoolingParam *p = param;
  if (!assign_dtype(node, &out[0], in[0], "output", error) ||
      !assign_dtype(node, &in[0], out[0], "data", error))
    return FALSE;
  return p->indices == DS_POOL_INDICES_NONE ||
         assign_dtype(node, &out[1], DS_DTYPE_INT64, "indices", error);
}

static const char *const pooling_aliases[] = {"_npx_pooling", NULL};
static const char *const pooling_outputs[] = {"output", "indices", NULL};

static const DsOpDef POOLING_def = {
    .id = DS_OP_POOLING,
    .name = "Pooling",
    .aliases = pooling_aliases,
    .param_size = sizeof(DsPoolingParam),
    .parse = pooling_parse,
    .num_inputs = ds_op_count_1,
    .num_outputs = pooling_num_outputs,
    .num_visible_outputs = pooling_num_outputs,
    .output_names = pooling_outputs,
    .infer_shape = pooling_infer_shape,
    .infer_type = pooling_infer_type,
    .grad = ds_grad_pooling,
};

/* _backward_Pooling (MXNet's name): the gradient of a max, average or sum pooling, (ograd,
 * data, output) -> the gradient of data, under the forward node's attributes. A max window's
 * gradient goes to its first largest element, as the forward pass picks it. */
static gboolean backward_pooling_parse(const DsNode *node, void *param, GError **error)
{
  if (!pooling_parse(node, param, error))
    return FALSE;
  const DsPoolingParam *p = param;
  if (p->pool_type == DS_POOL_LP || p->indices != DS_POOL_INDICES_NONE)
    return ds_ops_node_error(node, error, DS_ERROR_UNSUPPORTED,
                             "only max, avg and sum pooling without indices have a gradient");
  return TRUE;
}

static gboolean backward_pooling_infer_shape(DsShapeCtx *ctx, const DsNode *node,
                                             const void *param, DsShape *in, DsShape *out,
                                             GError **error)
{
  (void)param;
  DsShape grads[2] = {in[0], in[2]};
  if (!ds_ops_unify_shapes(ctx, node, grads, 2, NULL, 0, error) ||
      !ds_ops_unify_shapes(ctx, node, &in[1], 1, out, 1, error))
    return FALSE;
  in[0] = grads[0];
  in[2] = grads[1];
  return TRUE;
}

static const char *const backward_pooling_inputs[] = {"ograd", "data", "output", NULL};

static const DsOpDef BACKWARD_POOLING_def = {
    .id = DS_OP_BACKWARD_POOLING,
    .name = "_backward_Pooling",
    .param_size = sizeof(DsPoolingParam),
    .parse = backward_pooling_parse,
    .num_inputs = ds_op_count_3,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = backward_pooling_inputs,
    .infer_shape = backward_pooling_infer_shape,
};

/* --- FullyConnected ----------------------------------------------------------------------- */

static gboolean fully_connected_parse(const DsNode *node, void *param, GError **error)
{
  DsFullyConnectedParam *p = param;
  gboolean flatten;
  if (!ds_ops_attr_require(node, "num_hidden", error) ||
      !attr_int_min(node, "num_hidden", 0, 1, &p->num_hidden, error) ||
      !ds_ops_attr_opt_bool(node, "no_bias", FALSE, &p->no_bias, error) ||
      !ds_node_attr_bool(node, "flatten", TRUE, &flatten, error))
    return FALSE;
  p->flatten = flatten;
  return TRUE;
}

static int fully_connected_num_inputs(const void *param)
{
  return ((const DsFullyConnectedParam *)param)->no_bias ? 2 : 3;
}

static gboolean fully_connected_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                            DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsFullyConnectedParam *p = param;
  const DsDim hidden = ds_dim(p->num_hidden);
  DsShape *data = &in[0];
  int nd = data->ndim;
  if (nd == 0) {
    ds_shape_ctx_set_error(ctx, error, "data must have at least 1 dim, but is a scalar");
    return FALSE;
  }
  /* in_features: everything after the batch when flattening, else the last dim. */
  DsDim in_features = DS_DIM_UNKNOWN;
  if (nd > 0)
    in_features = p->flatten ? ds_dim_product(ctx, data, 1, nd) : data->dims[nd - 1];
  DsShape w = shape2(hidden, in_features);
  if (!ds_ops_assign_shape(ctx, &in[1], &w, "weight", error))
    return FALSE;
  if (!p->no_bias) {
    /* MXNet also accepts a (num_hidden, 1) bias. */
    DsShape b = in[2].ndim == 2 ? shape2(hidden, ds_dim(1)) : shape1(hidden);
    if (!ds_ops_assign_shape(ctx, &in[2], &b, "bias", error))
      return FALSE;
  }
  if (nd < 0)
    return TRUE;
  /* The weight's second dim fills a single unknown feature dim of the data. */
  if (!p->flatten || nd == 2) {
    if (!unify(ctx, &data->dims[nd - 1], in[1].dims[1], "data", error))
      return FALSE;
  }
  DsShape o;
  if (p->flatten) {
    o = shape2(data->dims[0], hidden);
  } else {
    o = *data;
    o.dims[nd - 1] = hidden;
  }
  if (!ds_ops_assign_shape(ctx, &out[0], &o, "output", error))
    return FALSE;
  int lead = p->flatten ? 1 : nd - 1;
  for (int i = 0; i < lead; i++)
    if (!unify(ctx, &data->dims[i], out[0].dims[i], "data", error))
      return FALSE;
  return TRUE;
}

static const char *const fully_connected_inputs[] = {"data", "weight", "bias", NULL};
static const char *const fully_connected_aliases[] = {"_npx_fully_connected", NULL};

static const DsOpDef FULLY_CONNECTED_def = {
    .id = DS_OP_FULLY_CONNECTED,
    .name = "FullyConnected",
    .aliases = fully_connected_aliases,
    .param_size = sizeof(DsFullyConnectedParam),
    .parse = fully_connected_parse,
    .num_inputs = fully_connected_num_inputs,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = fully_connected_inputs,
    .output_names = names_output,
    .infer_shape = fully_connected_infer_shape,
    .grad = ds_grad_fully_connected,
};

/* --- BatchNorm ---------------------------------------------------------------------------- */

static gboolean batch_norm_parse(const DsNode *node, void *param, GError **error)
{
  DsBatchNormParam *p = param;
  gboolean fix_gamma, global, mean_var;
  if (!ds_node_attr_float(node, "eps", 1e-3, &p->eps, error) ||
      !ds_node_attr_float(node, "momentum", 0.9, &p->momentum, error) ||
      !ds_node_attr_bool(node, "fix_gamma", TRUE, &fix_gamma, error) ||
      !ds_node_attr_bool(node, "use_global_stats", FALSE, &global, error) ||
      !ds_node_attr_bool(node, "output_mean_var", FALSE, &mean_var, error) ||
      !attr_int32(node, "axis", 1, &p->axis, error))
    return FALSE;
  p->fix_gamma = fix_gamma;
  p->use_global_stats = global;
  p->output_mean_var = mean_var;
  if (p->eps < 0.0)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID, "eps=%g must not be negative", p->eps);
  return TRUE;
}

static int batch_norm_num_inputs(const void *param)
{
  (void)param;
  return 5;
}
static int batch_norm_visible(const void *param)
{
  return ((const DsBatchNormParam *)param)->output_mean_var ? 3 : 1;
}

static const char *const batch_norm_inputs[] = {"data",        "gamma",      "beta",
                                                "moving_mean", "moving_var", NULL};
static const char *const batch_norm_outputs[] = {"output", "mean", "var", NULL};

static gboolean batch_norm_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                       DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsBatchNormParam *p = param;
  DsShape *data = &in[0];
  if (!assign_both(ctx, data, "data", &out[0], "output", error))
    return FALSE;
  DsDim channels = DS_DIM_UNKNOWN;
  if (data->ndim >= 0) {
    int axis;
    if (!ds_shape_ctx_axis(ctx, p->axis, data->ndim, FALSE, &axis, error))
      return FALSE;
    channels = data->dims[axis];
  }
  /* Any of the per-channel vectors may know C when the data does not. */
  for (int i = 1; i < 5; i++) {
    if (in[i].ndim == 1 && !unify(ctx, &channels, in[i].dims[0], batch_norm_inputs[i], error))
      return FALSE;
  }
  for (int i = 1; i < 3; i++)
    if (out[i].ndim == 1 && !unify(ctx, &channels, out[i].dims[0], batch_norm_outputs[i], error))
      return FALSE;
  DsShape c = shape1(channels);
  for (int i = 1; i < 5; i++)
    if (!ds_ops_assign_shape(ctx, &in[i], &c, batch_norm_inputs[i], error))
      return FALSE;
  if (!ds_ops_assign_shape(ctx, &out[1], &c, "mean", error) ||
      !ds_ops_assign_shape(ctx, &out[2], &c, "var", error))
    return FALSE;
  if (data->ndim >= 0) {
    int axis;
    ds_shape_ctx_axis(ctx, p->axis, data->ndim, FALSE, &axis, NULL);
    if (!unify(ctx, &data->dims[axis], channels, "data", error) ||
        !unify(ctx, &out[0].dims[axis], channels, "output", error))
      return FALSE;
  }
  return TRUE;
}

/* Parameters and statistics are float32 for float16 data (MXNet's AccReal), else the data's
 * dtype. */
static gboolean batch_norm_infer_type(const DsNode *node, const void *param, DsDType *in,
                                      DsDType *out, GError **error)
{
  (void)param;
  if (!assign_dtype(node, &in[0], out[0], "data", error) ||
      !assign_dtype(node, &out[0], in[0], "output", error))
    return FALSE;
  if (in[0] == DS_DTYPE_UNKNOWN)
    return TRUE;
  /* Half-precision data keeps its statistics in float32, as MXNet does. */
  DsDType pd = in[0] == DS_DTYPE_FLOAT16 || in[0] == DS_DTYPE_BFLOAT16 ? DS_DTYPE_FLOAT32 : in[0];
  for (int i = 1; i < 5; i++)
    if (!assign_dtype(node, &in[i], pd, batch_norm_inputs[i], error))
      return FALSE;
  return assign_dtype(node, &out[1], pd, "mean", error) &&
         assign_dtype(node, &out[2], pd, "var", error);
}

static const char *const batch_norm_aliases[] = {"_npx_batch_norm", NULL};

static const DsOpDef BATCH_NORM_def = {
    .id = DS_OP_BATCH_NORM,
    .name = "BatchNorm",
    .aliases = batch_norm_aliases,
    .traits = DS_OP_TRAIT_MUTATES_INPUT,
    .param_size = sizeof(DsBatchNormParam),
    .parse = batch_norm_parse,
    .num_inputs = batch_norm_num_inputs,
    .num_outputs = ds_op_count_3,
    .num_visible_outputs = batch_norm_visible,
    .input_names = batch_norm_inputs,
    .output_names = batch_norm_outputs,
    .infer_shape = batch_norm_infer_shape,
    .infer_type = batch_norm_infer_type,
    .aux_input_mask = (1u << 3) | (1u << 4),
    .grad = ds_grad_batch_norm,
};

/* --- LayerNorm ---------------------------------------------------------------------------- */

static gboolean layer_norm_parse(const DsNode *node, void *param, GError **error)
{
  DsLayerNormParam *p = param;
  gboolean mean_var, trailing;
  if (!attr_int32(node, "axis", -1, &p->axis, error) ||
      !ds_node_attr_float(node, "eps", 1e-5, &p->eps, error) ||
      !ds_node_attr_bool(node, "output_mean_var", FALSE, &mean_var, error) ||
      !ds_node_attr_bool(node, "trailing_axes", FALSE, &trailing, error))
    return FALSE;
  p->output_mean_var = mean_var;
  p->trailing_axes = trailing;
  if (p->eps < 0.0)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID, "eps=%g must not be negative", p->eps);
  return TRUE;
}

static int layer_norm_visible(const void *param)
{
  return ((const DsLayerNormParam *)param)->output_mean_var ? 3 : 1;
}

static const char *const layer_norm_inputs[] = {"data", "gamma", "beta", NULL};
static const char *const layer_norm_outputs[] = {"output", "mean", "std", NULL};

/* LayerNorm with trailing_axes: gamma and beta have the shape of the normalised axes. */
static gboolean layer_norm_trailing_shape(DsShapeCtx *ctx, const DsLayerNormParam *p, DsShape *in,
                                          DsShape *out, GError **error)
{
  DsShape *data = &in[0];
  /* The normalised shape, from the data or from gamma or beta. */
  DsShape norm = {.ndim = -1};
  int axis = -1;
  if (data->ndim >= 0) {
    if (!ds_shape_ctx_axis(ctx, p->axis, data->ndim, FALSE, &axis, error))
      return FALSE;
    norm.ndim = data->ndim - axis;
    for (int i = axis; i < data->ndim; i++)
      norm.dims[i - axis] = data->dims[i];
  }
  /* Each of gamma and beta must fit it, and fills what it leaves unknown. */
  for (int i = 1; i < 3; i++) {
    if (in[i].ndim < 0)
      continue;
    if (norm.ndim >= 0 && !ds_ops_assign_shape(ctx, &in[i], &norm, layer_norm_inputs[i], error))
      return FALSE;
    norm = in[i];
  }
  if (norm.ndim >= 0 && (!ds_ops_assign_shape(ctx, &in[1], &norm, "gamma", error) ||
                         !ds_ops_assign_shape(ctx, &in[2], &norm, "beta", error)))
    return FALSE;
  if (axis < 0)
    return TRUE;
  for (int i = axis; i < data->ndim; i++)
    if (!unify(ctx, &data->dims[i], norm.dims[i - axis], "data", error) ||
        !unify(ctx, &out[0].dims[i], norm.dims[i - axis], "output", error))
      return FALSE;
  /* mean and std: the normalised axes reduced to 1. */
  DsShape moments = *data;
  for (int i = axis; i < data->ndim; i++)
    moments.dims[i] = ds_dim(1);
  return ds_ops_assign_shape(ctx, &out[1], &moments, "mean", error) &&
         ds_ops_assign_shape(ctx, &out[2], &moments, "std", error);
}

static gboolean layer_norm_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                       DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsLayerNormParam *p = param;
  DsShape *data = &in[0];
  if (!assign_both(ctx, data, "data", &out[0], "output", error))
    return FALSE;
  if (p->trailing_axes)
    return layer_norm_trailing_shape(ctx, p, in, out, error);
  DsDim len = DS_DIM_UNKNOWN;
  int axis = -1;
  if (data->ndim >= 0) {
    if (!ds_shape_ctx_axis(ctx, p->axis, data->ndim, FALSE, &axis, error))
      return FALSE;
    len = data->dims[axis];
  }
  for (int i = 1; i < 3; i++)
    if (in[i].ndim == 1 && !unify(ctx, &len, in[i].dims[0], layer_norm_inputs[i], error))
      return FALSE;
  DsShape c = shape1(len);
  if (!ds_ops_assign_shape(ctx, &in[1], &c, "gamma", error) ||
      !ds_ops_assign_shape(ctx, &in[2], &c, "beta", error))
    return FALSE;
  if (axis < 0)
    return TRUE;
  if (!unify(ctx, &data->dims[axis], len, "data", error) ||
      !unify(ctx, &out[0].dims[axis], len, "output", error))
    return FALSE;
  /* mean and std keep the data's rank with the normalised axis reduced to 1. */
  DsShape moments = *data;
  moments.dims[axis] = ds_dim(1);
  return ds_ops_assign_shape(ctx, &out[1], &moments, "mean", error) &&
         ds_ops_assign_shape(ctx, &out[2], &moments, "std", error);
}

static const char *const layer_norm_aliases[] = {"_npx_layer_norm", NULL};

static const DsOpDef LAYER_NORM_def = {
    .id = DS_OP_LAYER_NORM,
    .name = "LayerNorm",
    .aliases = layer_norm_aliases,
    .param_size = sizeof(DsLayerNormParam),
    .parse = layer_norm_parse,
    .num_inputs = ds_op_count_3,
    .num_outputs = ds_op_count_3,
    .num_visible_outputs = layer_norm_visible,
    .input_names = layer_norm_inputs,
    .output_names = layer_norm_outputs,
    .infer_shape = layer_norm_infer_shape,
    .grad = ds_grad_layer_norm,
};

/* --- Activation, LeakyReLU ------------------------------------------------------------------ */

static const char *const act_types[] = {"relu",     "sigmoid",     "tanh", "softrelu",
                                        "softsign", "log_sigmoid", "mish", NULL};

static gboolean activation_parse(const DsNode *node, void *param, GError **error)
{
  DsActivationParam *p = param;
  int t;
  if (!ds_ops_attr_require(node, "act_type", error) ||
      !ds_node_attr_enum(node, "act_type", act_types, 0, &t, error))
    return FALSE;
  p->act_type = t;
  return TRUE;
}

/* data and output share a shape (and, through every output, each other). */
static gboolean infer_shape_elementwise(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                        DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  return assign_both(ctx, &in[0], "data", &out[0], "output", error);
}

static const char *const activation_aliases[] = {"_npx_activation", NULL};

static const DsOpDef ACTIVATION_def = {
    .id = DS_OP_ACTIVATION,
    .name = "Activation",
    .aliases = activation_aliases,
    .traits = DS_OP_TRAIT_ELEMWISE,
    .param_size = sizeof(DsActivationParam),
    .parse = activation_parse,
    .num_inputs = ds_op_count_1,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .output_names = names_output,
    .infer_shape = infer_shape_elementwise,
    .grad = ds_grad_activation,
};

static const char *const leaky_types[] = {"leaky", "prelu", "rrelu", "elu", "selu", "gelu", NULL};

static gboolean leaky_relu_parse(const DsNode *node, void *param, GError **error)
{
  DsLeakyReLUParam *p = param;
  int t;
  if (!ds_node_attr_enum(node, "act_type", leaky_types, DS_LEAKY_LEAKY, &t, error) ||
      !ds_node_attr_float(node, "slope", 0.25, &p->slope, error) ||
      !ds_node_attr_float(node, "lower_bound", 0.125, &p->lower_bound, error) ||
      !ds_node_attr_float(node, "upper_bound", 0.334, &p->upper_bound, error))
    return FALSE;
  p->act_type = t;
  return TRUE;
}

static int leaky_relu_num_inputs(const void *param)
{
  return ((const DsLeakyReLUParam *)param)->act_type == DS_LEAKY_PRELU ? 2 : 1;
}

static int leaky_relu_num_outputs(const void *param)
{
  return ((const DsLeakyReLUParam *)param)->act_type == DS_LEAKY_RRELU ? 2 : 1;
}

static gboolean leaky_relu_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                       DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsLeakyReLUParam *p = param;
  DsShape *data = &in[0];
  if (!assign_both(ctx, data, "data", &out[0], "output", error))
    return FALSE;
  if (p->act_type == DS_LEAKY_RRELU && !assign_both(ctx, data, "data", &out[1], "mask", error))
    return FALSE;
  if (p->act_type != DS_LEAKY_PRELU || data->ndim < 0)
    return TRUE;
  /* gamma: one slope per channel (axis 1), or a single shared one. */
  DsShape *gamma = &in[1];
  if (gamma->ndim < 0) {
    if (data->ndim < 2) {
      ds_shape_ctx_set_error(ctx, error,
                             "prelu needs data with a channel axis (at least 2 "
                             "dims) to size gamma");
      return FALSE;
    }
    *gamma = shape1(data->dims[1]);
    return TRUE;
  }
  if (gamma->ndim == 1) {
    DsDim g = gamma->dims[0];
    if (!ds_dim_is_const(g) || g.value == 1)
      return TRUE;
    bool fits = (data->ndim >= 2 && ds_dim_is_value(data->dims[1], g.value)) ||
                ds_dim_is_value(data->dims[0], g.value) ||
                (data->ndim >= 2 && !ds_dim_is_const(data->dims[1]));
    if (fits)
      return TRUE;
  }
  g_autofree char *gs = ds_shape_to_string(gamma);
  g_autofree char *ds = ds_shape_to_string(data);
  ds_shape_ctx_set_error(ctx, error,
                         "gamma of shape %s does not broadcast to data %s (prelu takes one "
                         "slope per channel or a single one)",
                         gs, ds);
  return FALSE;
}

static const char *const leaky_relu_inputs[] = {"data", "gamma", NULL};
static const char *const leaky_relu_aliases[] = {"_npx_leaky_relu", NULL};

static const DsOpDef LEAKY_RELU_def = {
    .id = DS_OP_LEAKY_RELU,
    .name = "LeakyReLU",
    .aliases = leaky_relu_aliases,
    .param_size = sizeof(DsLeakyReLUParam),
    .parse = leaky_relu_parse,
    .num_inputs = leaky_relu_num_inputs,
    .num_outputs = leaky_relu_num_outputs,
    .num_visible_outputs = ds_op_count_1,
    .input_names = leaky_relu_inputs,
    .output_names = names_output_mask,
    .infer_shape = leaky_relu_infer_shape,
    .grad = ds_grad_leaky_relu,
};

/* --- softmax, log_softmax, SoftmaxOutput ---------------------------------------------------- */

static gboolean softmax_parse(const DsNode *node, void *param, GError **error)
{
  DsSoftmaxParam *p = param;
  gboolean trailing;
  if (!attr_int32(node, "axis", -1, &p->axis, error) ||
      !ds_node_attr_float(node, "temperature", 1.0, &p->temperature, error) ||
      !ds_node_attr_dtype(node, "dtype", DS_DTYPE_UNKNOWN, &p->dtype, error) ||
      !ds_ops_attr_opt_bool(node, "use_length", FALSE, &p->use_length, error) ||
      !ds_node_attr_bool(node, "trailing_axes", FALSE, &trailing, error))
    return FALSE;
  p->trailing_axes = trailing;
  if (p->trailing_axes && p->use_length)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "use_length and trailing_axes cannot be combined");
  if (p->temperature == 0.0)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID, "temperature must not be 0");
  if (p->dtype != DS_DTYPE_UNKNOWN && !ds_dtype_is_float(p->dtype))
    return ds_ops_node_error(node, error, DS_ERROR_INVALID, "dtype=%s is not a float type",
                             ds_dtype_name(p->dtype));
  return TRUE;
}

static int softmax_num_inputs(const void *param)
{
  return ((const DsSoftmaxParam *)param)->use_length ? 2 : 1;
}

static gboolean softmax_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                    DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsSoftmaxParam *p = param;
  DsShape *data = &in[0];
  if (!assign_both(ctx, data, "data", &out[0], "output", error))
    return FALSE;
  if (data->ndim < 0)
    return TRUE;
  int axis;
  if (!ds_shape_ctx_axis(ctx, p->axis, data->ndim, FALSE, &axis, error))
    return FALSE;
  if (!p->use_length)
    return TRUE;
  /* length: one entry per row along the axis, i.e. the data's shape without the axis. */
  DsShape len = {.ndim = data->ndim - 1};
  for (int i = 0, j = 0; i < data->ndim; i++)
    if (i != axis)
      len.dims[j++] = data->dims[i];
  if (!ds_ops_assign_shape(ctx, &in[1], &len, "length", error))
    return FALSE;
  for (int i = 0, j = 0; i < data->ndim; i++)
    if (i != axis && !unify(ctx, &data->dims[i], in[1].dims[j++], "data", error))
      return FALSE;
  return TRUE;
}

/* The output takes `dtype` when given, else the data's; the length input is left alone (any
 * integer or float type). */
static gboolean softmax_infer_type(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                   GError **error)
{
  const DsSoftmaxParam *p = param;
  if (p->dtype != DS_DTYPE_UNKNOWN) {
    if (!assign_dtype(node, &out[0], p->dtype, "output", error))
      return FALSE;
    if (in[0] == DS_DTYPE_UNKNOWN)
      in[0] = p->dtype;
    return TRUE;
  }
  return assign_dtype(node, &out[0], in[0], "output", error) &&
         assign_dtype(node, &in[0], out[0], "data", error);
}

static const char *const softmax_inputs[] = {"data", "length", NULL};
static const char *const softmax_aliases[] = {"_npx_softmax", NULL};
static const char *const log_softmax_aliases[] = {"_npx_log_softmax", NULL};

static const DsOpDef SOFTMAX_def = {
    .id = DS_OP_SOFTMAX,
    .name = "softmax",
    .aliases = softmax_aliases,
    .param_size = sizeof(DsSoftmaxParam),
    .parse = softmax_parse,
    .num_inputs = softmax_num_inputs,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = softmax_inputs,
    .output_names = names_output,
    .infer_shape = softmax_infer_shape,
    .infer_type = softmax_infer_type,
    .grad = ds_grad_softmax,
};

static const DsOpDef LOG_SOFTMAX_def = {
    .id = DS_OP_LOG_SOFTMAX,
    .name = "log_softmax",
    .aliases = log_softmax_aliases,
    .param_size = sizeof(DsSoftmaxParam),
    .parse = softmax_parse,
    .num_inputs = softmax_num_inputs,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = softmax_inputs,
    .output_names = names_output,
    .infer_shape = softmax_infer_shape,
    .infer_type = softmax_infer_type,
    .grad = ds_grad_log_softmax,
};

/* softmin: softmax's attributes without the length input. */
static gboolean softmin_parse(const DsNode *node, void *param, GError **error)
{
  if (!softmax_parse(node, param, error))
    return FALSE;
  const DsSoftmaxParam *p = param;
  if (p->use_length || p->trailing_axes)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "softmin takes neither use_length nor trailing_axes");
  return TRUE;
}

static const DsOpDef SOFTMIN_def = {
    .id = DS_OP_SOFTMIN,
    .name = "softmin",
    .param_size = sizeof(DsSoftmaxParam),
    .parse = softmin_parse,
    .num_inputs = ds_op_count_1,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .output_names = names_output,
    .infer_shape = softmax_infer_shape,
    .infer_type = softmax_infer_type,
    .grad = ds_grad_softmax,
};

/* SoftmaxActivation: its mode becomes softmax's axis (see DsSoftmaxParam). */
static gboolean softmax_activation_parse(const DsNode *node, void *param, GError **error)
{
  static const char *const modes[] = {"instance", "channel", NULL};
  DsSoftmaxParam *p = param;
  int mode;
  if (!ds_node_attr_enum(node, "mode", modes, 0, &mode, error))
    return FALSE;
  p->axis = mode == 0 ? -1 : 1;
  p->temperature = 1.0;
  p->dtype = DS_DTYPE_UNKNOWN;
  return TRUE;
}

static gboolean softmax_activation_infer_shape(DsShapeCtx *ctx, const DsNode *node,
                                               const void *param, DsShape *in, DsShape *out,
                                               GError **error)
{
  const DsSoftmaxParam *p = param;
  if (p->axis == 1 && in[0].ndim >= 0 && in[0].ndim < 3) {
    g_autofree char *s = ds_shape_to_string(&in[0]);
    ds_shape_ctx_set_error(ctx, error, "mode=channel needs data of rank 3 or more, not %s", s);
    return FALSE;
  }
  return softmax_infer_shape(ctx, node, param, in, out, error);
}

static const DsOpDef SOFTMAX_ACTIVATION_def = {
    .id = DS_OP_SOFTMAX_ACTIVATION,
    .name = "SoftmaxActivation",
    .param_size = sizeof(DsSoftmaxParam),
    .parse = softmax_activation_parse,
    .num_inputs = ds_op_count_1,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .output_names = names_output,
    .infer_shape = softmax_activation_infer_shape,
    .grad = ds_grad_softmax,
};

/* --- L2Normalization -------------------------------------------------------------------- */

static gboolean l2_normalization_parse(const DsNode *node, void *param, GError **error)
{
  static const char *const modes[] = {"instance", "channel", "spatial", NULL};
  DsL2NormalizationParam *p = param;
  int mode;
  if (!ds_ops_attr_float32(node, "eps", 1e-10, &p->eps, error) ||
      !ds_node_attr_enum(node, "mode", modes, DS_L2NORM_INSTANCE, &mode, error))
    return FALSE;
  p->mode = (DsL2NormMode)mode;
  return TRUE;
}

static int count_2_outputs_1_visible(const void *param)
{
  (void)param;
  return 2;
}

/* MXNet's L2NormalizationProp::InferShape: the output is the data's shape; the norms are
 * (N,) (instance), the data's shape with axis 1 of size 1 (channel), or (N, C) (spatial). */
static gboolean l2_normalization_infer_shape(DsShapeCtx *ctx, const DsNode *node,
                                             const void *param, DsShape *in, DsShape *out,
                                             GError **error)
{
  (void)node;
  const DsL2NormalizationParam *p = param;
  DsShape *data = &in[0];
  if (!assign_both(ctx, data, "data", &out[0], "output", error))
    return FALSE;
  if (data->ndim < 0)
    return TRUE;
  if (data->ndim < 1 || (p->mode != DS_L2NORM_INSTANCE && data->ndim < 3)) {
    g_autofree char *s = ds_shape_to_string(data);
    ds_shape_ctx_set_error(ctx, error, "data %s has too few dims for this mode", s);
    return FALSE;
  }
  DsShape norm;
  if (p->mode == DS_L2NORM_INSTANCE) {
    norm = shape1(data->dims[0]);
  } else if (p->mode == DS_L2NORM_CHANNEL) {
    norm = *data;
    norm.dims[1] = ds_dim(1);
  } else {
    norm = shape2(data->dims[0], data->dims[1]);
  }
  return ds_ops_assign_shape(ctx, &out[1], &norm, "norm", error);
}

static const char *const names_output_norm[] = {"output", "norm", NULL};

static const DsOpDef L2_NORMALIZATION_def = {
    .id = DS_OP_L2_NORMALIZATION,
    .name = "L2Normalization",
    .param_size = sizeof(DsL2NormalizationParam),
    .parse = l2_normalization_parse,
    .num_inputs = ds_op_count_1,
    .num_outputs = count_2_outputs_1_visible,
    .num_visible_outputs = ds_op_count_1,
    .output_names = names_output_norm,
    .infer_shape = l2_normalization_infer_shape,
    .grad = ds_grad_l2_normalization,
};

/* --- UpSampling ------------------------------------------------------------------------- */

static gboolean upsampling_parse(const DsNode *node, void *param, GError **error)
{
  static const char *const types[] = {"nearest", "bilinear", NULL};
  static const char *const input_modes[] = {"concat", "sum", NULL};
  DsUpSamplingParam *p = param;
  int64_t scale, num_filter, num_args, workspace;
  int type, input_mode;
  if (!ds_ops_attr_require(node, "scale", error) ||
      !ds_ops_attr_require(node, "sample_type", error) ||
      !ds_ops_attr_require(node, "num_args", error) ||
      !ds_ops_attr_int_range(node, "scale", 1, 1, G_MAXINT32, &scale, error) ||
      !ds_ops_attr_int_range(node, "num_filter", 0, 0, G_MAXINT32, &num_filter, error) ||
      !ds_node_attr_enum(node, "sample_type", types, 0, &type, error) ||
      !ds_node_attr_enum(node, "multi_input_mode", input_modes, 0, &input_mode, error) ||
      !ds_ops_attr_int_range(node, "num_args", 1, 1, 1024, &num_args, error) ||
      !ds_ops_attr_int_range(node, "workspace", 512, 0, G_MAXINT64, &workspace, error))
    return FALSE;
  p->scale = (int)scale;
  p->num_filter = (int)num_filter;
  p->sample_type = (DsUpSampleType)type;
  p->num_args = (int)num_args;
  p->sum = input_mode == 1;
  if (p->sample_type == DS_UPSAMPLE_BILINEAR && p->num_args != 2)
    return ds_ops_attr_invalid(node, "num_args", "must be 2 (data and weight) for bilinear",
                               error);
  return TRUE;
}

static int upsampling_num_inputs(const void *param)
{
  const DsUpSamplingParam *p = param;
  return p->sample_type == DS_UPSAMPLE_BILINEAR ? 2 : p->num_args;
}

/* MXNet's UpSamplingShape. nearest: every input NCHW, each dividing the output's size (the first
 * input's times scale) by one factor for both axes; the channels add up (concat) or agree
 * (sum). bilinear: the weight is (C, 1, k, k) and the channels num_filter. */
static gboolean upsampling_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                       DsShape *in, DsShape *out, GError **error)
{
  const DsUpSamplingParam *p = param;
  int n_in = upsampling_num_inputs(p);
  DsDim scale = ds_dim(p->scale);
  for (int i = 0; i < (p->sample_type == DS_UPSAMPLE_NEAREST ? n_in : 1); i++)
    if (!ds_ops_check_rank(ctx, &in[i], 4, ds_op_input_name(node->op, n_in, i, (char[16]){0}),
                           "(batch, channel, y, x)", error))
      return FALSE;
  const DsShape *data = &in[0];
  if (data->ndim < 0)
    return TRUE;
  DsShape result = {.ndim = 4,
                    .dims = {data->dims[0], data->dims[1], ds_dim_mul(ctx, data->dims[2], scale),
                             ds_dim_mul(ctx, data->dims[3], scale)}};
  if (p->sample_type == DS_UPSAMPLE_BILINEAR) {
    if (ds_dim_is_const(data->dims[1]) && data->dims[1].value != p->num_filter) {
      ds_shape_ctx_set_error(ctx, error,
                             "bilinear needs num_filter=%d to equal the %" G_GINT64_FORMAT
                             " channels of the data",
                             p->num_filter, data->dims[1].value);
      return FALSE;
    }
    int64_t k = 2 * (int64_t)p->scale - p->scale % 2;
    DsShape weight = {.ndim = 4, .dims = {data->dims[1], ds_dim(1), ds_dim(k), ds_dim(k)}};
    if (!ds_ops_assign_shape(ctx, &in[1], &weight, "weight", error))
      return FALSE;
    return ds_ops_assign_shape(ctx, &out[0], &result, "output", error);
  }
  DsDim channels = ds_dim(0);
  for (int i = 0; i < n_in; i++) {
    DsShape *s = &in[i];
    if (s->ndim < 0)
      return TRUE; /* the channels stay unknown until every input is known */
    if (i > 0 && !unify(ctx, &s->dims[0], data->dims[0], "batch", error))
      return FALSE;
    for (int d = 2; d < 4; d++) {
      DsDim o = result.dims[d], h = s->dims[d];
      if (ds_dim_is_const(o) && ds_dim_is_const(h) && (h.value == 0 || o.value % h.value != 0)) {
        ds_shape_ctx_set_error(ctx, error,
                               "input %d's size %" G_GINT64_FORMAT
                               " does not divide the output's %" G_GINT64_FORMAT " on axis %d",
                               i, h.value, o.value, d);
        return FALSE;
      }
    }
    /* MXNet scales each input by the height's factor alone: the width's must match it. */
    DsDim fy = ds_dim_floordiv(ctx, result.dims[2], s->dims[2]);
    DsDim fx = ds_dim_floordiv(ctx, result.dims[3], s->dims[3]);
    if (ds_dim_is_const(fy) && ds_dim_is_const(fx) && fy.value != fx.value) {
      ds_shape_ctx_set_error(ctx, error,
                             "input %d is scaled by %" G_GINT64_FORMAT " in y but %" G_GINT64_FORMAT
                             " in x",
                             i, fy.value, fx.value);
      return FALSE;
    }
    if (p->sum) {
      if (i > 0 && !unify(ctx, &s->dims[1], data->dims[1], "channels", error))
        return FALSE;
    } else {
      channels = ds_dim_add(ctx, channels, s->dims[1]);
    }
  }
  if (!p->sum)
    result.dims[1] = channels;
  return ds_ops_assign_shape(ctx, &out[0], &result, "output", error);
}

static const DsOpDef UPSAMPLING_def = {
    .id = DS_OP_UPSAMPLING,
    .name = "UpSampling",
    .param_size = sizeof(DsUpSamplingParam),
    .parse = upsampling_parse,
    .num_inputs = upsampling_num_inputs,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .output_names = names_output,
    .infer_shape = upsampling_infer_shape,
    .grad = ds_grad_upsampling,
};

static const char *const normalizations[] = {"null", "batch", "valid", NULL};

static gboolean softmax_output_parse(const DsNode *node, void *param, GError **error)
{
  DsSoftmaxOutputParam *p = param;
  gboolean multi, ignore, preserve, out_grad;
  int norm;
  if (!ds_node_attr_float(node, "grad_scale", 1.0, &p->grad_scale, error) ||
      !ds_node_attr_float(node, "ignore_label", -1.0, &p->ignore_label, error) ||
      !ds_node_attr_bool(node, "multi_output", FALSE, &multi, error) ||
      !ds_node_attr_bool(node, "use_ignore", FALSE, &ignore, error) ||
      !ds_node_attr_bool(node, "preserve_shape", FALSE, &preserve, error) ||
      !ds_node_attr_enum(node, "normalization", normalizations, 0, &norm, error) ||
      !ds_node_attr_bool(node, "out_grad", FALSE, &out_grad, error) ||
      !ds_node_attr_float(node, "smooth_alpha", 0.0, &p->smooth_alpha, error))
    return FALSE;
  p->multi_output = multi;
  p->use_ignore = ignore;
  p->preserve_shape = preserve;
  p->normalization = norm;
  p->out_grad = out_grad;
  return TRUE;
}

static gboolean shapes_may_equal(DsShapeCtx *ctx, const DsShape *a, const DsShape *b)
{
  DsShape tmp = *a;
  GError *local = NULL;
  gboolean ok = ds_shape_ctx_assign(ctx, &tmp, b, "label", &local);
  g_clear_error(&local);
  return ok;
}

static gboolean softmax_output_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                           DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsSoftmaxOutputParam *p = param;
  DsShape *data = &in[0], *label = &in[1];
  if (!assign_both(ctx, data, "data", &out[0], "output", error))
    return FALSE;
  int nd = data->ndim;
  if (nd < 0)
    return TRUE;
  if (nd < 1 || (p->multi_output && nd < 2)) {
    g_autofree char *s = ds_shape_to_string(data);
    ds_shape_ctx_set_error(ctx, error, "data of shape %s has too few dims%s", s,
                           p->multi_output ? " for multi_output (needs N, C, ...)" : "");
    return FALSE;
  }
  /* A label of the data's own shape holds probabilities: accepted as is. */
  if (label->ndim == nd && shapes_may_equal(ctx, label, data) &&
      !(p->multi_output && ds_dim_is_value(label->dims[1], 1)))
    return ds_ops_assign_shape(ctx, label, data, "label", error);
  if (!p->multi_output) {
    DsShape l = {.ndim = nd - 1};
    for (int i = 0; i < nd - 1; i++)
      l.dims[i] = data->dims[i];
    return ds_ops_assign_shape(ctx, label, &l, "label", error);
  }
  /* multi_output: (N, prod(spatial)), (N, spatial...), or (N, 1, spatial...). */
  DsShape l1 = shape2(data->dims[0], ds_dim_product(ctx, data, 2, nd));
  DsShape l2 = {.ndim = nd - 1};
  l2.dims[0] = data->dims[0];
  for (int i = 2; i < nd; i++)
    l2.dims[i - 1] = data->dims[i];
  DsShape l3 = *data;
  l3.dims[1] = ds_dim(1);
  if (label->ndim < 0)
    return ds_ops_assign_shape(ctx, label, &l1, "label", error);
  if (label->ndim == 2 && shapes_may_equal(ctx, label, &l1))
    return ds_ops_assign_shape(ctx, label, &l1, "label", error);
  if (label->ndim == nd - 1 && shapes_may_equal(ctx, label, &l2))
    return ds_ops_assign_shape(ctx, label, &l2, "label", error);
  if (label->ndim == nd && shapes_may_equal(ctx, label, &l3))
    return ds_ops_assign_shape(ctx, label, &l3, "label", error);
  g_autofree char *ls = ds_shape_to_string(label);
  g_autofree char *s1 = ds_shape_to_string(&l1);
  g_autofree char *s2 = ds_shape_to_string(&l2);
  ds_shape_ctx_set_error(ctx, error, "label has shape %s, but %s or %s is expected", ls, s1, s2);
  return FALSE;
}

static const char *const softmax_output_inputs[] = {"data", "label", NULL};
static const char *const softmax_output_aliases[] = {"Softmax", NULL};

static const DsOpDef SOFTMAX_OUTPUT_def = {
    .id = DS_OP_SOFTMAX_OUTPUT,
    .name = "SoftmaxOutput",
    .aliases = softmax_output_aliases,
    .param_size = sizeof(DsSoftmaxOutputParam),
    .parse = softmax_output_parse,
    .num_inputs = ds_op_count_2,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = softmax_output_inputs,
    .output_names = names_output,
    .infer_shape = softmax_output_infer_shape,
    .grad = ds_grad_softmax_output,
};

/* --- Dropout ------------------------------------------------------------------------------ */

static const char *const dropout_modes[] = {"training", "always", NULL};

static gboolean dropout_parse(const DsNode *node, void *param, GError **error)
{
  DsDropoutParam *p = param;
  int mode;
  if (!ds_node_attr_float(node, "p", 0.5, &p->p, error) ||
      !ds_node_attr_enum(node, "mode", dropout_modes, DS_DROPOUT_TRAINING, &mode, error) ||
      !ds_node_attr_tuple(node, "axes", p->axes, DS_MAX_NDIM, &p->n_axes, error))
    return FALSE;
  p->mode = mode;
  if (p->n_axes < 0)
    p->n_axes = 0;
  if (p->p < 0.0 || p->p > 1.0)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID, "p=%g must be in [0, 1]", p->p);
  return TRUE;
}

static gboolean dropout_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                    DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsDropoutParam *p = param;
  if (!assign_both(ctx, &in[0], "data", &out[0], "output", error))
    return FALSE;
  if (in[0].ndim < 0)
    return TRUE;
  /* The mask has the data's shape with the shared `axes` reduced to 1. */
  DsShape mask = in[0];
  for (int i = 0; i < p->n_axes; i++) {
    int axis;
    if (!ds_shape_ctx_axis(ctx, p->axes[i], mask.ndim, FALSE, &axis, error))
      return FALSE;
    mask.dims[axis] = ds_dim(1);
  }
  return ds_ops_assign_shape(ctx, &out[1], &mask, "mask", error);
}

static const char *const dropout_aliases[] = {"_npx_dropout", NULL};

static const DsOpDef DROPOUT_def = {
    .id = DS_OP_DROPOUT,
    .name = "Dropout",
    .aliases = dropout_aliases,
    .param_size = sizeof(DsDropoutParam),
    .parse = dropout_parse,
    .num_inputs = ds_op_count_1,
    .num_outputs = ds_op_count_2,
    .num_visible_outputs = ds_op_count_1,
    .output_names = names_output_mask,
    .infer_shape = dropout_infer_shape,
    .grad = ds_grad_dropout,
};

/* --- Embedding ---------------------------------------------------------------------------- */

static gboolean embedding_parse(const DsNode *node, void *param, GError **error)
{
  DsEmbeddingParam *p = param;
  gboolean sparse;
  if (!ds_ops_attr_require(node, "input_dim", error) ||
      !ds_ops_attr_require(node, "output_dim", error) ||
      !attr_int_min(node, "input_dim", 0, 1, &p->input_dim, error) ||
      !attr_int_min(node, "output_dim", 0, 1, &p->output_dim, error) ||
      !ds_node_attr_dtype(node, "dtype", DS_DTYPE_FLOAT32, &p->dtype, error) ||
      !ds_node_attr_bool(node, "sparse_grad", FALSE, &sparse, error))
    return FALSE;
  p->sparse_grad = sparse;
  return TRUE;
}

static gboolean embedding_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                      DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsEmbeddingParam *p = param;
  DsShape w = shape2(ds_dim(p->input_dim), ds_dim(p->output_dim));
  if (!ds_ops_assign_shape(ctx, &in[1], &w, "weight", error))
    return FALSE;
  DsShape *data = &in[0];
  if (data->ndim < 0 && out[0].ndim >= 1) {
    /* The indices are the output without its last dim. */
    DsShape d = {.ndim = out[0].ndim - 1};
    for (int i = 0; i < d.ndim; i++)
      d.dims[i] = out[0].dims[i];
    *data = d;
  }
  if (data->ndim < 0)
    return TRUE;
  if (data->ndim + 1 > DS_MAX_NDIM) {
    ds_shape_ctx_set_error(ctx, error, "data has %d dims; the output would exceed %d", data->ndim,
                           DS_MAX_NDIM);
    return FALSE;
  }
  DsShape o = *data;
  o.ndim = data->ndim + 1;
  o.dims[data->ndim] = ds_dim(p->output_dim);
  if (!ds_ops_assign_shape(ctx, &out[0], &o, "output", error))
    return FALSE;
  for (int i = 0; i < data->ndim; i++)
    if (!unify(ctx, &data->dims[i], out[0].dims[i], "data", error))
      return FALSE;
  return TRUE;
}

/* weight and output take `dtype`; the indices keep theirs. */
static gboolean embedding_infer_type(const DsNode *node, const void *param, DsDType *in,
                                     DsDType *out, GError **error)
{
  const DsEmbeddingParam *p = param;
  return assign_dtype(node, &in[1], p->dtype, "weight", error) &&
         assign_dtype(node, &out[0], p->dtype, "output", error);
}

static const char *const embedding_inputs[] = {"data", "weight", NULL};
static const char *const embedding_aliases[] = {"_npx_embedding", NULL};

static const DsOpDef EMBEDDING_def = {
    .id = DS_OP_EMBEDDING,
    .name = "Embedding",
    .aliases = embedding_aliases,
    .param_size = sizeof(DsEmbeddingParam),
    .parse = embedding_parse,
    .num_inputs = ds_op_count_2,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = embedding_inputs,
    .output_names = names_output,
    .infer_shape = embedding_infer_shape,
    .infer_type = embedding_infer_type,
    .grad = ds_grad_embedding,
};

/* --- dot, batch_dot ----------------------------------------------------------------------- */

static gboolean dot_parse(const DsNode *node, void *param, GError **error)
{
  DsDotParam *p = param;
  gboolean ta, tb;
  if (!ds_node_attr_bool(node, "transpose_a", FALSE, &ta, error) ||
      !ds_node_attr_bool(node, "transpose_b", FALSE, &tb, error))
    return FALSE;
  p->transpose_a = ta;
  p->transpose_b = tb;
  return TRUE;
}

static gboolean dot_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param, DsShape *in,
                                DsShape *out, GError **error)
{
  (void)node;
  const DsDotParam *p = param;
  DsShape *l = &in[0], *r = &in[1];
  if (l->ndim < 0 || r->ndim < 0)
    return TRUE;
  if (l->ndim == 0 || r->ndim == 0) {
    ds_shape_ctx_set_error(ctx, error, "dot needs arrays of at least 1 dim");
    return FALSE;
  }
  if (l->ndim == 1 && r->ndim == 1) {
    if (p->transpose_a || p->transpose_b) {
      ds_shape_ctx_set_error(ctx, error,
                             "cannot transpose vectors (transpose_a=%d, "
                             "transpose_b=%d)",
                             p->transpose_a, p->transpose_b);
      return FALSE;
    }
    if (!unify(ctx, &l->dims[0], r->dims[0], "lhs", error) ||
        !unify(ctx, &r->dims[0], l->dims[0], "rhs", error))
      return FALSE;
    DsShape o = shape1(ds_dim(1));
    return ds_ops_assign_shape(ctx, &out[0], &o, "output", error);
  }
  /* The contracted dims: lhs's last (first when transposed), rhs's first (last). */
  int lk = p->transpose_a ? 0 : l->ndim - 1;
  int rk = p->transpose_b ? r->ndim - 1 : 0;
  GError *local = NULL;
  DsDim k = l->dims[lk];
  if (!unify(ctx, &k, r->dims[rk], "rhs", &local)) {
    g_clear_error(&local);
    g_autofree char *ls = ds_shape_to_string(l);
    g_autofree char *rs = ds_shape_to_string(r);
    ds_shape_ctx_set_error(ctx, error,
                           "lhs %s and rhs %s do not multiply (transpose_a=%d, transpose_b=%d): "
                           "contracted dims %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT,
                           ls, rs, p->transpose_a, p->transpose_b, l->dims[lk].value,
                           r->dims[rk].value);
    return FALSE;
  }
  l->dims[lk] = k;
  r->dims[rk] = k;
  DsShape o = {.ndim = 0};
  if (l->ndim > 1)
    for (int i = 0; i < l->ndim; i++)
      if (i != lk)
        o.dims[o.ndim++] = l->dims[i];
  if (r->ndim > 1)
    for (int i = 0; i < r->ndim; i++)
      if (i != rk) {
        if (o.ndim >= DS_MAX_NDIM) {
          ds_shape_ctx_set_error(ctx, error, "the output would have more than %d dims",
                                 DS_MAX_NDIM);
          return FALSE;
        }
        o.dims[o.ndim++] = r->dims[i];
      }
  return ds_ops_assign_shape(ctx, &out[0], &o, "output", error);
}

static gboolean batch_dot_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                      DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsDotParam *p = param;
  DsShape *l = &in[0], *r = &in[1];
  if (l->ndim < 0 || r->ndim < 0)
    return TRUE;
  int nd = l->ndim;
  if (nd < 3 || r->ndim != nd) {
    g_autofree char *ls = ds_shape_to_string(l);
    g_autofree char *rs = ds_shape_to_string(r);
    ds_shape_ctx_set_error(ctx, error,
                           "lhs %s and rhs %s must have the same rank, at least 3 (batch..., "
                           "rows, cols)",
                           ls, rs);
    return FALSE;
  }
  DsShape o = {.ndim = nd};
  for (int i = 0; i < nd - 2; i++) {
    GError *local = NULL;
    if (!unify(ctx, &l->dims[i], r->dims[i], "lhs", &local) ||
        !unify(ctx, &r->dims[i], l->dims[i], "rhs", &local)) {
      g_clear_error(&local);
      g_autofree char *ls = ds_shape_to_string(l);
      g_autofree char *rs = ds_shape_to_string(r);
      ds_shape_ctx_set_error(ctx, error, "lhs %s and rhs %s differ in batch dim %d", ls, rs, i);
      return FALSE;
    }
    o.dims[i] = l->dims[i];
  }
  int lm = p->transpose_a ? nd - 1 : nd - 2, lk = p->transpose_a ? nd - 2 : nd - 1;
  int rn = p->transpose_b ? nd - 2 : nd - 1, rk = p->transpose_b ? nd - 1 : nd - 2;
  GError *local = NULL;
  DsDim k = l->dims[lk];
  if (!unify(ctx, &k, r->dims[rk], "rhs", &local)) {
    g_clear_error(&local);
    g_autofree char *ls = ds_shape_to_string(l);
    g_autofree char *rs = ds_shape_to_string(r);
    ds_shape_ctx_set_error(ctx, error,
                           "lhs %s and rhs %s do not multiply (transpose_a=%d, transpose_b=%d)", ls,
                           rs, p->transpose_a, p->transpose_b);
    return FALSE;
  }
  l->dims[lk] = k;
  r->dims[rk] = k;
  o.dims[nd - 2] = l->dims[lm];
  o.dims[nd - 1] = r->dims[rn];
  if (!ds_ops_assign_shape(ctx, &out[0], &o, "output", error))
    return FALSE;
  /* Rows and cols flow back from a known output. */
  for (int i = 0; i < nd - 2; i++)
    if (!unify(ctx, &l->dims[i], out[0].dims[i], "lhs", error) ||
        !unify(ctx, &r->dims[i], out[0].dims[i], "rhs", error))
      return FALSE;
  return unify(ctx, &l->dims[lm], out[0].dims[nd - 2], "lhs", error) &&
         unify(ctx, &r->dims[rn], out[0].dims[nd - 1], "rhs", error);
}

static const char *const dot_inputs[] = {"lhs", "rhs", NULL};

static const DsOpDef DOT_def = {
    .id = DS_OP_DOT,
    .name = "dot",
    .param_size = sizeof(DsDotParam),
    .parse = dot_parse,
    .num_inputs = ds_op_count_2,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = dot_inputs,
    .output_names = names_output,
    .infer_shape = dot_infer_shape,
    .grad = ds_grad_dot,
};

static const DsOpDef BATCH_DOT_def = {
    .id = DS_OP_BATCH_DOT,
    .name = "batch_dot",
    .param_size = sizeof(DsDotParam),
    .parse = dot_parse,
    .num_inputs = ds_op_count_2,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = dot_inputs,
    .output_names = names_output,
    .infer_shape = batch_dot_infer_shape,
    .grad = ds_grad_batch_dot,
};

/* --- RNN ---------------------------------------------------------------------------------- */

static const char *const rnn_modes[] = {"rnn_relu", "rnn_tanh", "lstm", "gru", NULL};

static gboolean rnn_parse(const DsNode *node, void *param, GError **error)
{
  DsRNNParam *p = param;
  int mode;
  gboolean bidir, state_outputs, clip_nan;
  bool use_len;
  if (!ds_ops_attr_require(node, "state_size", error) ||
      !ds_ops_attr_require(node, "num_layers", error) ||
      !ds_ops_attr_require(node, "mode", error) ||
      !attr_int_min(node, "state_size", 0, 1, &p->state_size, error) ||
      !attr_int_min(node, "num_layers", 0, 1, &p->num_layers, error) ||
      !ds_node_attr_bool(node, "bidirectional", FALSE, &bidir, error) ||
      !ds_node_attr_enum(node, "mode", rnn_modes, DS_RNN_LSTM, &mode, error) ||
      !ds_node_attr_float(node, "p", 0.0, &p->p, error) ||
      !ds_node_attr_bool(node, "state_outputs", FALSE, &state_outputs, error) ||
      !ds_node_attr_bool(node, "lstm_state_clip_nan", FALSE, &clip_nan, error) ||
      !ds_ops_attr_opt_bool(node, "use_sequence_length", FALSE, &use_len, error))
    return FALSE;
  p->bidirectional = bidir;
  p->mode = mode;
  p->state_outputs = state_outputs;
  p->use_sequence_length = use_len;
  if (p->p < 0.0 || p->p > 1.0)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID, "p=%g must be in [0, 1]", p->p);
  if (!ds_node_attr_is_none(node, "projection_size"))
    return ds_ops_node_error(node, error, DS_ERROR_UNSUPPORTED,
                             "projection_size=%s is not supported",
                             ds_node_get_attr(node, "projection_size"));
  if (!ds_node_attr_is_none(node, "lstm_state_clip_min") ||
      !ds_node_attr_is_none(node, "lstm_state_clip_max") || clip_nan)
    return ds_ops_node_error(node, error, DS_ERROR_UNSUPPORTED,
                             "LSTM state clipping (lstm_state_clip_min/max/nan) is not supported");
  return TRUE;
}

static int rnn_num_inputs(const void *param)
{
  const DsRNNParam *p = param;
  return 3 + (p->mode == DS_RNN_LSTM) + (p->use_sequence_length ? 1 : 0);
}

static int rnn_num_outputs(const void *param)
{
  const DsRNNParam *p = param;
  return p->state_outputs ? (p->mode == DS_RNN_LSTM ? 3 : 2) : 1;
}

static gboolean rnn_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param, DsShape *in,
                                DsShape *out, GError **error)
{
  (void)node;
  const DsRNNParam *p = param;
  const bool lstm = p->mode == DS_RNN_LSTM;
  const int64_t dirs = p->bidirectional ? 2 : 1;
  const int n_out = rnn_num_outputs(p);
  const int len_idx = lstm ? 4 : 3;
  DsShape *data = &in[0];
  if (!ds_ops_check_rank(ctx, data, 3, "data", "T, N, C", error) ||
      !ds_ops_check_rank(ctx, &out[0], 3, "output", "T, N, C", error))
    return FALSE;
  const DsDim layers_dirs = ds_dim(p->num_layers * dirs), hidden = ds_dim(p->state_size);

  /* The batch size, from whichever of data, states, lengths and outputs knows it. */
  DsDim batch = data->ndim == 3 ? data->dims[1] : DS_DIM_UNKNOWN;
  const char *const state_names[] = {"state", "state_cell"};
  for (int i = 0; i < (lstm ? 2 : 1); i++)
    if (in[2 + i].ndim == 3 && !unify(ctx, &batch, in[2 + i].dims[1], state_names[i], error))
      return FALSE;
  if (p->use_sequence_length && in[len_idx].ndim == 1 &&
      !unify(ctx, &batch, in[len_idx].dims[0], "sequence_length", error))
    return FALSE;
  if (out[0].ndim == 3 && !unify(ctx, &batch, out[0].dims[1], "output", error))
    return FALSE;

  DsShape state = shape3(layers_dirs, batch, hidden);
  for (int i = 0; i < (lstm ? 2 : 1); i++)
    if (!ds_ops_assign_shape(ctx, &in[2 + i], &state, state_names[i], error))
      return FALSE;
  if (p->use_sequence_length) {
    DsShape l = shape1(batch);
    if (!ds_ops_assign_shape(ctx, &in[len_idx], &l, "sequence_length", error))
      return FALSE;
  }
  const char *const out_names[] = {"output", "state_output", "statecell_output"};
  for (int i = 1; i < n_out; i++)
    if (!ds_ops_assign_shape(ctx, &out[i], &state, out_names[i], error))
      return FALSE;

  if (data->ndim == 3 && !unify(ctx, &data->dims[1], batch, "data", error))
    return FALSE;
  DsDim steps = data->ndim == 3 ? data->dims[0] : DS_DIM_UNKNOWN;
  if (out[0].ndim == 3 && !unify(ctx, &steps, out[0].dims[0], "output", error))
    return FALSE;
  DsShape o = shape3(steps, batch, ds_dim(dirs * p->state_size));
  if (!ds_ops_assign_shape(ctx, &out[0], &o, "output", error))
    return FALSE;
  if (data->ndim != 3)
    return TRUE;
  if (!unify(ctx, &data->dims[0], steps, "data", error))
    return FALSE;

  /* MXNet's GetRnnParamSize: per direction, G*H rows of weights over (input + H) columns and
   * two bias vectors of G*H; layer 0 reads the data's C, later layers D*H. */
  const DsDim gh = ds_dim(ds_rnn_n_gates(p->mode) * p->state_size);
  const DsDim per_dir_extra = ds_dim(p->state_size + 2); /* H recurrent cols + 2 biases */
  DsDim first = ds_dim_mul(ctx, ds_dim_add(ctx, data->dims[2], per_dir_extra), gh);
  DsDim rest =
      ds_dim((dirs * p->state_size + p->state_size + 2) * ds_rnn_n_gates(p->mode) * p->state_size);
  DsDim size = ds_dim_mul(
      ctx, ds_dim_add(ctx, first, ds_dim_mul(ctx, ds_dim(p->num_layers - 1), rest)), ds_dim(dirs));
  DsShape params = shape1(size);
  return ds_ops_assign_shape(ctx, &in[1], &params, "parameters", error);
}

/* data, parameters, states and outputs share the data's dtype; sequence_length keeps its own. */
static gboolean rnn_infer_type(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                               GError **error)
{
  const DsRNNParam *p = param;
  int n_float_in = p->mode == DS_RNN_LSTM ? 4 : 3;
  int n_out = rnn_num_outputs(p);
  char buf[16];
  DsDType d = in[0];
  for (int i = 1; i < n_float_in && d == DS_DTYPE_UNKNOWN; i++)
    d = in[i];
  for (int i = 0; i < n_out && d == DS_DTYPE_UNKNOWN; i++)
    d = out[i];
  for (int i = 0; i < n_float_in; i++)
    if (!assign_dtype(node, &in[i], d, ds_op_input_name(node->op, n_float_in, i, buf), error))
      return FALSE;
  for (int i = 0; i < n_out; i++)
    if (!assign_dtype(node, &out[i], d, "output", error))
      return FALSE;
  return TRUE;
}

static const char *const rnn_inputs[] = {"data",       "parameters",      "state",
                                         "state_cell", "sequence_length", NULL};
static const char *const rnn_outputs[] = {"output", "state_output", "statecell_output", NULL};
static const char *const rnn_aliases[] = {"_npx_rnn", NULL};

static const DsOpDef RNN_def = {
    .id = DS_OP_RNN,
    .name = "RNN",
    .aliases = rnn_aliases,
    .param_size = sizeof(DsRNNParam),
    .parse = rnn_parse,
    .num_inputs = rnn_num_inputs,
    .num_outputs = rnn_num_outputs,
    .num_visible_outputs = rnn_num_outputs,
    .input_names = rnn_inputs,
    .output_names = rnn_outputs,
    .infer_shape = rnn_infer_shape,
    .infer_type = rnn_infer_type,
};

/* --- _npi_matmul -------------------------------------------------------------------------- */

/* NumPy's matmul: a 1-D lhs is a row (1, K) and a 1-D rhs a column (K, 1), their unit dim
 * dropped from the output; the dims before the last two are batch dims and broadcast. */
static gboolean matmul_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                   DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  DsShape *l = &in[0], *r = &in[1];
  if (l->ndim < 0 || r->ndim < 0)
    return TRUE;
  if (l->ndim == 0 || r->ndim == 0) {
    ds_shape_ctx_set_error(ctx, error, "matmul needs arrays of at least 1 dim, not scalars");
    return FALSE;
  }
  const int lk = l->ndim - 1, rk = r->ndim == 1 ? 0 : r->ndim - 2;
  GError *local = NULL;
  DsDim k = l->dims[lk];
  if (!unify(ctx, &k, r->dims[rk], "rhs", &local)) {
    g_clear_error(&local);
    g_autofree char *ls = ds_shape_to_string(l);
    g_autofree char *rs = ds_shape_to_string(r);
    ds_shape_ctx_set_error(ctx, error,
                           "lhs %s and rhs %s do not multiply: contracted dims %" G_GINT64_FORMAT
                           " and %" G_GINT64_FORMAT,
                           ls, rs, l->dims[lk].value, r->dims[rk].value);
    return FALSE;
  }
  l->dims[lk] = k;
  r->dims[rk] = k;
  DsShape lb = {.ndim = MAX(l->ndim - 2, 0)}, rb = {.ndim = MAX(r->ndim - 2, 0)};
  for (int i = 0; i < lb.ndim; i++)
    lb.dims[i] = l->dims[i];
  for (int i = 0; i < rb.ndim; i++)
    rb.dims[i] = r->dims[i];
  DsShape o;
  if (!ds_ops_broadcast_shapes(ctx, &lb, "lhs", &rb, "rhs", &o, error))
    return FALSE;
  if (l->ndim > 1)
    o.dims[o.ndim++] = l->dims[l->ndim - 2];
  if (r->ndim > 1)
    o.dims[o.ndim++] = r->dims[r->ndim - 1];
  if (!ds_ops_assign_shape(ctx, &out[0], &o, "output", error))
    return FALSE;
  /* Rows and columns flow back from a known output. */
  if (l->ndim > 1 && r->ndim > 1)
    return unify(ctx, &l->dims[l->ndim - 2], out[0].dims[o.ndim - 2], "lhs", error) &&
           unify(ctx, &r->dims[r->ndim - 1], out[0].dims[o.ndim - 1], "rhs", error);
  return TRUE;
}

static const char *const matmul_inputs[] = {"a", "b", NULL};
static const char *const matmul_aliases[] = {"matmul", NULL};

static const DsOpDef MATMUL_def = {
    .id = DS_OP_MATMUL,
    .name = "_npi_matmul",
    .aliases = matmul_aliases,
    .num_inputs = ds_op_count_2,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = matmul_inputs,
    .output_names = names_output,
    .infer_shape = matmul_infer_shape,
    .grad = ds_grad_matmul,
};

/* --- InstanceNorm ------------------------------------------------------------------------- */

static gboolean instance_norm_parse(const DsNode *node, void *param, GError **error)
{
  DsInstanceNormParam *p = param;
  if (!ds_node_attr_float(node, "eps", 1e-3, &p->eps, error))
    return FALSE;
  if (p->eps < 0.0)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID, "eps=%g must not be negative", p->eps);
  return TRUE;
}

/* Data (N, C, spatial...) and output share a shape; gamma and beta are (C,). */
static gboolean instance_norm_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                          DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  DsShape *data = &in[0];
  if (!assign_both(ctx, data, "data", &out[0], "output", error))
    return FALSE;
  if (data->ndim >= 0 && data->ndim < 3) {
    g_autofree char *s = ds_shape_to_string(data);
    ds_shape_ctx_set_error(
        ctx, error, "data must have at least 3 dims (N, C, spatial...), but has shape %s", s);
    return FALSE;
  }
  DsDim channels = data->ndim >= 3 ? data->dims[1] : DS_DIM_UNKNOWN;
  const char *const names[] = {"data", "gamma", "beta"};
  for (int i = 1; i < 3; i++)
    if (in[i].ndim == 1 && !unify(ctx, &channels, in[i].dims[0], names[i], error))
      return FALSE;
  DsShape c = shape1(channels);
  if (!ds_ops_assign_shape(ctx, &in[1], &c, "gamma", error) ||
      !ds_ops_assign_shape(ctx, &in[2], &c, "beta", error))
    return FALSE;
  if (data->ndim < 3)
    return TRUE;
  return unify(ctx, &data->dims[1], channels, "data", error) &&
         unify(ctx, &out[0].dims[1], channels, "output", error);
}

static const char *const instance_norm_inputs[] = {"data", "gamma", "beta", NULL};

static const DsOpDef INSTANCE_NORM_def = {
    .id = DS_OP_INSTANCE_NORM,
    .name = "InstanceNorm",
    .param_size = sizeof(DsInstanceNormParam),
    .parse = instance_norm_parse,
    .num_inputs = ds_op_count_3,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = instance_norm_inputs,
    .output_names = names_output,
    .infer_shape = instance_norm_infer_shape,
    .grad = ds_grad_instance_norm,
};

/* --- LRN ---------------------------------------------------------------------------------- */

static gboolean lrn_parse(const DsNode *node, void *param, GError **error)
{
  DsLRNParam *p = param;
  if (!ds_node_attr_float(node, "alpha", 1e-4, &p->alpha, error) ||
      !ds_node_attr_float(node, "beta", 0.75, &p->beta, error) ||
      !ds_node_attr_float(node, "knorm", 2.0, &p->knorm, error) ||
      !ds_ops_attr_require(node, "nsize", error) ||
      !attr_int_min(node, "nsize", 0, 1, &p->nsize, error))
    return FALSE;
  return TRUE;
}

/* Data (N, C, ...), output and MXNet's hidden tmp_norm share a shape. */
static gboolean lrn_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param, DsShape *in,
                                DsShape *out, GError **error)
{
  (void)node;
  (void)param;
  if (!assign_both(ctx, &in[0], "data", &out[0], "output", error) ||
      !assign_both(ctx, &in[0], "data", &out[1], "tmp_norm", error))
    return FALSE;
  if (in[0].ndim >= 0 && in[0].ndim < 2) {
    g_autofree char *s = ds_shape_to_string(&in[0]);
    ds_shape_ctx_set_error(ctx, error,
                           "data must have at least 2 dims (N, C, ...), but has "
                           "shape %s",
                           s);
    return FALSE;
  }
  return TRUE;
}

static const char *const lrn_outputs[] = {"output", "tmp_norm", NULL};

static const DsOpDef LRN_def = {
    .id = DS_OP_LRN,
    .name = "LRN",
    .param_size = sizeof(DsLRNParam),
    .parse = lrn_parse,
    .num_inputs = ds_op_count_1,
    .num_outputs = ds_op_count_2,
    .num_visible_outputs = ds_op_count_1,
    .output_names = lrn_outputs,
    .infer_shape = lrn_infer_shape,
    .grad = ds_grad_lrn,
};

/* --- _contrib_hardmax ----------------------------------------------------------------------- */

static gboolean hardmax_parse(const DsNode *node, void *param, GError **error)
{
  DsHardmaxParam *p = param;
  gboolean trailing;
  if (!attr_int32(node, "axis", -1, &p->axis, error) ||
      !ds_node_attr_bool(node, "trailing_axes", FALSE, &trailing, error))
    return FALSE;
  p->trailing_axes = trailing;
  return TRUE;
}

static gboolean hardmax_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                    DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsHardmaxParam *p = param;
  if (!assign_both(ctx, &in[0], "data", &out[0], "output", error))
    return FALSE;
  int axis;
  return in[0].ndim < 0 || ds_shape_ctx_axis(ctx, p->axis, in[0].ndim, FALSE, &axis, error);
}

static const DsOpDef HARDMAX_def = {
    .id = DS_OP_HARDMAX,
    .name = "_contrib_hardmax",
    .param_size = sizeof(DsHardmaxParam),
    .parse = hardmax_parse,
    .num_inputs = ds_op_count_1,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .output_names = names_output,
    .infer_shape = hardmax_infer_shape,
    .grad = ds_grad_zero, /* constant almost everywhere */
};

/* --- _contrib_RecurrentLayer -------------------------------------------------------------- */

static const char *const rnn_directions[] = {"forward", "reverse", "bidirectional", NULL};
static const char *const rnn_layouts[] = {"TNC", "NTC", NULL};

static gboolean recurrent_layer_parse(const DsNode *node, void *param, GError **error)
{
  DsRecurrentLayerParam *p = param;
  int mode, direction, layout;
  gboolean before_reset;
  if (!ds_ops_attr_require(node, "mode", error) ||
      !ds_ops_attr_require(node, "state_size", error) ||
      !ds_node_attr_enum(node, "mode", rnn_modes, DS_RNN_LSTM, &mode, error) ||
      !attr_int_min(node, "state_size", 0, 1, &p->state_size, error) ||
      !ds_node_attr_enum(node, "direction", rnn_directions, DS_RNN_FORWARD, &direction, error) ||
      !ds_node_attr_enum(node, "layout", rnn_layouts, 0, &layout, error) ||
      !ds_node_attr_bool(node, "linear_before_reset", FALSE, &before_reset, error) ||
      !ds_ops_attr_opt_bool(node, "use_bias", FALSE, &p->use_bias, error) ||
      !ds_ops_attr_opt_bool(node, "use_sequence_length", FALSE, &p->use_sequence_length, error) ||
      !ds_ops_attr_opt_bool(node, "use_initial_h", FALSE, &p->use_initial_h, error) ||
      !ds_ops_attr_opt_bool(node, "use_initial_c", FALSE, &p->use_initial_c, error) ||
      !ds_ops_attr_opt_bool(node, "use_peephole", FALSE, &p->use_peephole, error))
    return FALSE;
  p->mode = mode;
  p->direction = direction;
  p->batch_first = layout == 1;
  p->linear_before_reset = before_reset;
  p->clip = 0.0;
  if (!ds_node_attr_is_none(node, "clip")) {
    if (!ds_node_attr_float(node, "clip", 0.0, &p->clip, error))
      return FALSE;
    if (!(p->clip > 0.0))
      return ds_ops_node_error(node, error, DS_ERROR_INVALID, "clip=%s must be positive",
                               ds_node_get_attr(node, "clip"));
  }
  if (p->mode != DS_RNN_LSTM && (p->use_initial_c || p->use_peephole))
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "use_initial_c and use_peephole need mode=lstm");
  return TRUE;
}

/* Input slots in order; a flag off leaves its input out. */
typedef struct {
  int bias, length, init_h, init_c, peephole, count;
} RecurrentInputs;

static RecurrentInputs recurrent_inputs(const DsRecurrentLayerParam *p)
{
  RecurrentInputs r = {-1, -1, -1, -1, -1, 3};
  if (p->use_bias)
    r.bias = r.count++;
  if (p->use_sequence_length)
    r.length = r.count++;
  if (p->use_initial_h)
    r.init_h = r.count++;
  if (p->use_initial_c)
    r.init_c = r.count++;
  if (p->use_peephole)
    r.peephole = r.count++;
  return r;
}

static int recurrent_layer_num_inputs(const void *param)
{
  return recurrent_inputs(param).count;
}

static int recurrent_layer_num_outputs(const void *param)
{
  return ((const DsRecurrentLayerParam *)param)->mode == DS_RNN_LSTM ? 3 : 2;
}

static gboolean recurrent_layer_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                            DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsRecurrentLayerParam *p = param;
  const RecurrentInputs slots = recurrent_inputs(p);
  const bool bf = p->batch_first;
  const char *layout = bf ? "N, T, C" : "T, N, C";
  const DsDim dirs = ds_dim(ds_recurrent_dirs(p)), hidden = ds_dim(p->state_size);
  const DsDim gh = ds_dim(ds_rnn_n_gates(p->mode) * p->state_size);
  DsShape *data = &in[0];
  if (!ds_ops_check_rank(ctx, data, 3, "data", layout, error) ||
      !ds_ops_check_rank(ctx, &out[0], 4, "output", bf ? "N, T, D, H" : "T, D, N, H", error))
    return FALSE;
  const int t_axis = bf ? 1 : 0, n_axis = bf ? 0 : 1;

  /* Steps, batch and input size, from whichever input or output knows them. */
  DsDim steps = data->ndim == 3 ? data->dims[t_axis] : DS_DIM_UNKNOWN;
  DsDim batch = data->ndim == 3 ? data->dims[n_axis] : DS_DIM_UNKNOWN;
  DsDim input = data->ndim == 3 ? data->dims[2] : DS_DIM_UNKNOWN;
  if (in[1].ndim == 3 && !unify(ctx, &input, in[1].dims[2], "W", error))
    return FALSE;
  if (out[0].ndim == 4 && (!unify(ctx, &steps, out[0].dims[bf ? 1 : 0], "output", error) ||
                           !unify(ctx, &batch, out[0].dims[bf ? 0 : 2], "output", error)))
    return FALSE;
  const int state_slots[] = {slots.init_h, slots.init_c};
  const char *const state_names[] = {"initial_h", "initial_c"};
  for (int i = 0; i < 2; i++)
    if (state_slots[i] >= 0 && in[state_slots[i]].ndim == 3 &&
        !unify(ctx, &batch, in[state_slots[i]].dims[bf ? 0 : 1], state_names[i], error))
      return FALSE;
  if (slots.length >= 0 && in[slots.length].ndim == 1 &&
      !unify(ctx, &batch, in[slots.length].dims[0], "sequence_length", error))
    return FALSE;

  DsShape w = shape3(dirs, gh, input), r = shape3(dirs, gh, hidden);
  if (!ds_ops_assign_shape(ctx, &in[1], &w, "W", error) ||
      !ds_ops_assign_shape(ctx, &in[2], &r, "R", error))
    return FALSE;
  if (slots.bias >= 0) {
    DsShape b = shape2(dirs, ds_dim(2 * ds_rnn_n_gates(p->mode) * p->state_size));
    if (!ds_ops_assign_shape(ctx, &in[slots.bias], &b, "B", error))
      return FALSE;
  }
  if (slots.length >= 0) {
    DsShape l = shape1(batch);
    if (!ds_ops_assign_shape(ctx, &in[slots.length], &l, "sequence_length", error))
      return FALSE;
  }
  if (slots.peephole >= 0) {
    DsShape pp = shape2(dirs, ds_dim(3 * p->state_size));
    if (!ds_ops_assign_shape(ctx, &in[slots.peephole], &pp, "P", error))
      return FALSE;
  }
  DsShape state = bf ? shape3(batch, dirs, hidden) : shape3(dirs, batch, hidden);
  for (int i = 0; i < 2; i++)
    if (state_slots[i] >= 0 &&
        !ds_ops_assign_shape(ctx, &in[state_slots[i]], &state, state_names[i], error))
      return FALSE;
  const char *const out_names[] = {"Y", "Y_h", "Y_c"};
  for (int i = 1; i < recurrent_layer_num_outputs(p); i++)
    if (!ds_ops_assign_shape(ctx, &out[i], &state, out_names[i], error))
      return FALSE;
  DsShape y = {.ndim = 4};
  y.dims[0] = bf ? batch : steps;
  y.dims[1] = bf ? steps : dirs;
  y.dims[2] = bf ? dirs : batch;
  y.dims[3] = hidden;
  if (!ds_ops_assign_shape(ctx, &out[0], &y, "Y", error))
    return FALSE;
  DsShape x = {.ndim = 3};
  x.dims[t_axis] = steps;
  x.dims[n_axis] = batch;
  x.dims[2] = input;
  return ds_ops_assign_shape(ctx, data, &x, "data", error);
}

/* Every input and output shares the data's float dtype, except sequence_length, an integer
 * vector of its own dtype. */
static gboolean recurrent_layer_infer_type(const DsNode *node, const void *param, DsDType *in,
                                           DsDType *out, GError **error)
{
  const DsRecurrentLayerParam *p = param;
  const RecurrentInputs slots = recurrent_inputs(p);
  const int n_out = recurrent_layer_num_outputs(p);
  DsDType d = DS_DTYPE_UNKNOWN;
  for (int i = 0; i < slots.count && d == DS_DTYPE_UNKNOWN; i++)
    if (i != slots.length)
      d = in[i];
  for (int i = 0; i < n_out && d == DS_DTYPE_UNKNOWN; i++)
    d = out[i];
  char buf[16];
  for (int i = 0; i < slots.count; i++)
    if (i != slots.length &&
        !assign_dtype(node, &in[i], d, ds_op_input_name(node->op, slots.count, i, buf), error))
      return FALSE;
  for (int i = 0; i < n_out; i++)
    if (!assign_dtype(node, &out[i], d, "output", error))
      return FALSE;
  if (slots.length >= 0 && in[slots.length] != DS_DTYPE_UNKNOWN &&
      (ds_dtype_is_float(in[slots.length]) || in[slots.length] == DS_DTYPE_BOOL))
    return ds_ops_node_error(node, error, DS_ERROR_SHAPE,
                             "sequence_length has dtype %s, but an integer dtype is expected",
                             ds_dtype_name(in[slots.length]));
  return TRUE;
}

static const char *const recurrent_layer_outputs[] = {"Y", "Y_h", "Y_c", NULL};

static const DsOpDef RECURRENT_LAYER_def = {
    .id = DS_OP_RECURRENT_LAYER,
    .name = "_contrib_RecurrentLayer",
    .param_size = sizeof(DsRecurrentLayerParam),
    .parse = recurrent_layer_parse,
    .num_inputs = recurrent_layer_num_inputs,
    .num_outputs = recurrent_layer_num_outputs,
    .num_visible_outputs = recurrent_layer_num_outputs,
    .output_names = recurrent_layer_outputs,
    .infer_shape = recurrent_layer_infer_shape,
    .infer_type = recurrent_layer_infer_type,
};

/* --- _npi_einsum -------------------------------------------------------------------------- */

static int einsum_letter(char c)
{
  if (c >= 'a' && c <= 'z')
    return c - 'a';
  if (c >= 'A' && c <= 'Z')
    return 26 + (c - 'A');
  return -1;
}

/* One term of the subscripts, spaces ignored. */
static gboolean einsum_parse_term(const DsNode *node, const char *text, gsize len, DsEinsumTerm *t,
                                  GError **error)
{
  t->n = 0;
  gboolean ellipsis = FALSE;
  for (gsize i = 0; i < len; i++) {
    char c = text[i];
    if (c == ' ')
      continue;
    if (t->n >= DS_MAX_NDIM + 1)
      return ds_ops_node_error(node, error, DS_ERROR_UNSUPPORTED,
                               "subscripts: a term has more than %d dims", DS_MAX_NDIM);
    if (c == '.') {
      if (ellipsis || i + 2 >= len || text[i + 1] != '.' || text[i + 2] != '.')
        return ds_ops_attr_invalid(node, "subscripts", "has a misplaced '.' or two ellipses",
                                   error);
      ellipsis = TRUE;
      t->labels[t->n++] = DS_EINSUM_ELLIPSIS;
      i += 2;
      continue;
    }
    int l = einsum_letter(c);
    if (l < 0)
      return ds_ops_attr_invalid(node, "subscripts", "has a character that is not a letter", error);
    t->labels[t->n++] = (int8_t)l;
  }
  return TRUE;
}

/* The implicit output: the ellipsis if any term has one, then the labels used exactly once, in
 * ASCII order (uppercase first). */
static void einsum_implicit_output(DsEinsumParam *p)
{
  int count[DS_EINSUM_LETTERS] = {0};
  gboolean ellipsis = FALSE;
  for (int k = 0; k < p->num_args; k++)
    for (int i = 0; i < p->in[k].n; i++) {
      if (p->in[k].labels[i] == DS_EINSUM_ELLIPSIS)
        ellipsis = TRUE;
      else
        count[p->in[k].labels[i]]++;
    }
  p->out.n = 0;
  if (ellipsis)
    p->out.labels[p->out.n++] = DS_EINSUM_ELLIPSIS;
  for (int l = 26; l < 52; l++) /* A-Z */
    if (count[l] == 1 && p->out.n < DS_MAX_NDIM + 1)
      p->out.labels[p->out.n++] = (int8_t)l;
  for (int l = 0; l < 26; l++) /* a-z */
    if (count[l] == 1 && p->out.n < DS_MAX_NDIM + 1)
      p->out.labels[p->out.n++] = (int8_t)l;
}

static gboolean einsum_parse(const DsNode *node, void *param, GError **error)
{
  DsEinsumParam *p = param;
  int64_t num_args, optimize;
  if (!ds_ops_attr_require(node, "subscripts", error) ||
      !ds_ops_attr_int_range(node, "num_args", 1, 1, DS_EINSUM_MAX_OPERANDS, &num_args, error) ||
      !ds_node_attr_int(node, "optimize", 0, &optimize, error))
    return FALSE;
  p->num_args = (int)num_args;
  const char *text = ds_node_get_attr(node, "subscripts");
  const char *arrow = strstr(text, "->");
  gsize lhs_len = arrow != NULL ? (gsize)(arrow - text) : strlen(text);
  int terms = 1;
  for (gsize i = 0; i < lhs_len; i++)
    terms += text[i] == ',';
  if (terms != p->num_args)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "subscripts=%s has %d terms, but num_args=%d", text, terms,
                             p->num_args);
  gsize start = 0;
  for (int k = 0; k < p->num_args; k++) {
    const char *comma = memchr(text + start, ',', lhs_len - start);
    gsize end = comma != NULL ? (gsize)(comma - text) : lhs_len;
    if (!einsum_parse_term(node, text + start, end - start, &p->in[k], error))
      return FALSE;
    start = end + 1;
  }
  if (arrow == NULL) {
    einsum_implicit_output(p);
    return TRUE;
  }
  if (!einsum_parse_term(node, arrow + 2, strlen(arrow + 2), &p->out, error))
    return FALSE;
  /* Output labels appear once and come from the inputs. */
  for (int i = 0; i < p->out.n; i++) {
    int l = p->out.labels[i];
    gboolean found = FALSE;
    for (int j = 0; j < i; j++)
      if (p->out.labels[j] == l)
        return ds_ops_attr_invalid(node, "subscripts", "repeats a label of the output", error);
    for (int a = 0; a < p->num_args && !found; a++)
      for (int j = 0; j < p->in[a].n && !found; j++)
        found = p->in[a].labels[j] == l;
    if (!found)
      return ds_ops_attr_invalid(node, "subscripts",
                                 "has an output label (or ellipsis) no input has", error);
  }
  return TRUE;
}

static int einsum_num_inputs(const void *param)
{
  return ((const DsEinsumParam *)param)->num_args;
}

static gboolean einsum_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                   DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsEinsumParam *p = param;
  int ranks[DS_EINSUM_MAX_OPERANDS];
  for (int k = 0; k < p->num_args; k++) {
    if (in[k].ndim < 0)
      return TRUE;
    ranks[k] = in[k].ndim;
  }
  const int total_ell = ds_einsum_ellipsis_rank(p, ranks);
  DsDim dims[DS_EINSUM_MAX_LABELS];
  for (int l = 0; l < DS_EINSUM_MAX_LABELS; l++)
    dims[l] = l >= DS_EINSUM_LETTERS ? ds_dim(1) : DS_DIM_UNKNOWN;
  for (int k = 0; k < p->num_args; k++) {
    int labels[DS_MAX_NDIM];
    if (ds_einsum_expand_term(&p->in[k], ranks[k], total_ell, labels) != ranks[k]) {
      g_autofree char *s = ds_shape_to_string(&in[k]);
      ds_shape_ctx_set_error(ctx, error,
                             "operand %d of shape %s does not fit its subscripts "
                             "term",
                             k, s);
      return FALSE;
    }
    for (int i = 0; i < ranks[k]; i++) {
      int l = labels[i];
      if (l >= DS_EINSUM_LETTERS) { /* ellipsis dims broadcast */
        if (!ds_shape_ctx_broadcast_dim(ctx, dims[l], in[k].dims[i], &dims[l], error))
          return FALSE;
      } else if (!unify(ctx, &dims[l], in[k].dims[i], "operand", error)) {
        return FALSE;
      }
    }
  }
  /* Letter dims flow between the operands (an ellipsis dim might be a broadcasting 1). */
  for (int k = 0; k < p->num_args; k++) {
    int labels[DS_MAX_NDIM];
    ds_einsum_expand_term(&p->in[k], ranks[k], total_ell, labels);
    for (int i = 0; i < ranks[k]; i++)
      if (labels[i] < DS_EINSUM_LETTERS &&
          !unify(ctx, &in[k].dims[i], dims[labels[i]], "operand", error))
        return FALSE;
  }
  int labels[DS_MAX_NDIM];
  int n = ds_einsum_expand_term(&p->out, -1, total_ell, labels);
  if (n < 0) {
    ds_shape_ctx_set_error(ctx, error, "the output would have more than %d dims", DS_MAX_NDIM);
    return FALSE;
  }
  DsShape o = {.ndim = n};
  for (int i = 0; i < n; i++)
    o.dims[i] = dims[labels[i]];
  return ds_ops_assign_shape(ctx, &out[0], &o, "output", error);
}

static const char *const einsum_inputs[] = {"data", NULL};
static const char *const einsum_aliases[] = {"einsum", NULL};

static const DsOpDef EINSUM_def = {
    .id = DS_OP_EINSUM,
    .name = "_npi_einsum",
    .aliases = einsum_aliases,
    .param_size = sizeof(DsEinsumParam),
    .parse = einsum_parse,
    .num_inputs = einsum_num_inputs,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = einsum_inputs,
    .output_names = names_output,
    .infer_shape = einsum_infer_shape,
};

void ds_ops_nn_register(const DsOpDef **table)
{
  DS_OPS_NN(DS_OP_TABLE_ENTRY)
}
