/* ds-ops-elemwise.c: elementwise, broadcast and scalar ops: attributes, shape and dtype rules.
 *
 * Names, aliases and defaults follow MXNet 1.x (src/operator/tensor/elemwise_*.cc,
 * control_flow_op.cc, matrix_op.cc, contrib/transformer.cc) and, for the ops with NumPy
 * semantics (bool comparisons, broadcasting where, reductions to 0-dim results), MXNet's numpy
 * ops (src/operator/numpy/). The few ops MXNet lacks (selu and celu with parameters, shrink,
 * the ONNX reductions l1_norm, log_sum_exp...) are named after what they compute.
 */
#include "ds-grad.h"
#include "ds-grads.h"
#include "ds-ops-common.h"

#include "ds-attr.h"
#include "ds-error.h"

static const char *const binary_inputs[] = {"lhs", "rhs", NULL};
static const char *const where_inputs[] = {"condition", "x", "y", NULL};
static const char *const add_n_inputs[] = {"args", NULL};

/* --- scalar ops --- */

/* The scalar's attributes, and the op's function and side (its DS_OPS_SCALAR line), which each
 * scalar op's own parser passes. */
static gboolean parse_scalar(const DsNode *node, DsScalarParam *p, DsMathBinaryFn fn,
                             bool reverse, GError **error)
{
  gboolean is_int;
  if (!ds_node_attr_float(node, "scalar", 1.0, &p->scalar, error) ||
      !ds_node_attr_bool(node, "is_int", TRUE, &is_int, error))
    return FALSE;
  p->is_int = is_int;
  p->fn = fn;
  p->reverse = reverse;
  return TRUE;
}

static gboolean is_integer_dtype(DsDType d)
{
  return d == DS_DTYPE_UINT8 || d == DS_DTYPE_INT8 || d == DS_DTYPE_INT32 || d == DS_DTYPE_INT64;
}

/* MXNet's NumpyBinaryScalarType: an integer input with a non-integer scalar computes in
 * float64; a bool input gives int64 (or float64); otherwise the dtype passes through. */
static gboolean infer_type_scalar(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                  GError **error)
{
  const DsScalarParam *p = param;
  if (is_integer_dtype(in[0]) && !p->is_int)
    return ds_ops_assign_dtype(node, &out[0], DS_DTYPE_FLOAT64, "output", error);
  if (in[0] == DS_DTYPE_BOOL)
    return ds_ops_assign_dtype(node, &out[0], p->is_int ? DS_DTYPE_INT64 : DS_DTYPE_FLOAT64,
                               "output", error);
  if (!ds_ops_assign_dtype(node, &out[0], in[0], "output", error))
    return FALSE;
  /* Backwards only where the forward rule is the identity. */
  if (in[0] == DS_DTYPE_UNKNOWN && out[0] != DS_DTYPE_UNKNOWN && out[0] != DS_DTYPE_FLOAT64 &&
      out[0] != DS_DTYPE_INT64)
    in[0] = out[0];
  return TRUE;
}

/* --- clip --- */

static gboolean parse_clip(const DsNode *node, void *param, GError **error)
{
  DsClipParam *p = param;
  return ds_ops_attr_require(node, "a_min", error) && ds_ops_attr_require(node, "a_max", error) &&
         ds_node_attr_float(node, "a_min", 0.0, &p->a_min, error) &&
         ds_node_attr_float(node, "a_max", 0.0, &p->a_max, error);
}

/* --- add_n --- */

static gboolean parse_add_n(const DsNode *node, void *param, GError **error)
{
  DsAddNParam *p = param;
  int64_t n;
  if (!ds_ops_attr_require(node, "num_args", error) ||
      !ds_node_attr_int(node, "num_args", 0, &n, error))
    return FALSE;
  if (n < 1 || n > 4096)
    return ds_ops_attr_invalid(node, "num_args", "must be between 1 and 4096", error);
  p->num_args = (int)n;
  return TRUE;
}

static int add_n_num_inputs(const void *param)
{
  return ((const DsAddNParam *)param)->num_args;
}

/* --- where --- */

/* MXNet's WhereOpShape: x, y and the output share one shape; the condition has that shape
 * too, or is 1-D with one flag per row of x. */
static gboolean infer_shape_where(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                  DsShape *in, DsShape *out, GError **error)
{
  (void)param;
  if (!ds_ops_unify_shapes(ctx, node, &in[1], 2, out, 1, error))
    return FALSE;
  const DsShape *x = &in[1];
  DsShape *cond = &in[0];
  if (x->ndim < 0 || cond->ndim < 0)
    return TRUE;
  if (cond->ndim == x->ndim)
    return ds_ops_unify_shapes(ctx, node, in, 3, out, 1, error);
  if (cond->ndim == 1 && x->ndim >= 1) {
    GError *local = NULL;
    if (!ds_shape_ctx_unify_dim(ctx, &cond->dims[0], x->dims[0], "condition", &local)) {
      g_clear_error(&local);
      g_autofree char *sc = ds_shape_to_string(cond);
      g_autofree char *sx = ds_shape_to_string(x);
      ds_shape_ctx_set_error(ctx, error, "a 1-D condition %s must have one element per row of x %s",
                             sc, sx);
      return FALSE;
    }
    return TRUE;
  }
  g_autofree char *sc = ds_shape_to_string(cond);
  g_autofree char *sx = ds_shape_to_string(x);
  ds_shape_ctx_set_error(
      ctx, error, "condition %s must have the shape of x %s, or be 1-D with its first dim", sc, sx);
  return FALSE;
}

/* x, y and the output share a dtype; the condition may have any. */
static gboolean infer_type_where(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                 GError **error)
{
  (void)param;
  return ds_ops_unify_dtypes(node, &in[1], 2, out, 1, error);
}

/* --- broadcast_power --- */

/* The result has the base's dtype. The exponent defaults to it (MXNet's rule) but may have
 * another dtype (ONNX's Pow from opset 12: float base, integer exponent or the reverse); the
 * kernel then computes in double. */
static gboolean infer_type_power(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                 GError **error)
{
  (void)param;
  if (!ds_ops_unify_dtypes(node, in, 1, out, 1, error))
    return FALSE;
  if (in[1] == DS_DTYPE_UNKNOWN)
    in[1] = in[0];
  return TRUE;
}

/* --- NumPy comparisons, isnan... --- */

/* Both operands share a dtype; the result is bool. */
static gboolean infer_type_compare(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                   GError **error)
{
  (void)param;
  return ds_ops_unify_dtypes(node, in, 2, NULL, 0, error) &&
         ds_ops_assign_dtype(node, &out[0], DS_DTYPE_BOOL, "output", error);
}

static gboolean infer_type_bool_out(const DsNode *node, const void *param, DsDType *in,
                                    DsDType *out, GError **error)
{
  (void)param;
  (void)in;
  return ds_ops_assign_dtype(node, &out[0], DS_DTYPE_BOOL, "output", error);
}

/* --- _npi_where --- */

/* The three inputs broadcast together (NumPy's where). */
static gboolean infer_shape_np_where(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                     DsShape *in, DsShape *out, GError **error)
{
  (void)param;
  (void)node;
  DsShape xy, result;
  if (!ds_ops_broadcast_shapes(ctx, &in[1], "x", &in[2], "y", &xy, error) ||
      !ds_ops_broadcast_shapes(ctx, &in[0], "condition", &xy, "x and y", &result, error))
    return FALSE;
  if (result.ndim < 0)
    return TRUE;
  return ds_shape_ctx_assign(ctx, &out[0], &result, "output", error);
}

/* --- activations with parameters --- */

static gboolean parse_hard_sigmoid(const DsNode *node, void *param, GError **error)
{
  DsActParam *p = param;
  return ds_node_attr_float(node, "alpha", 0.2, &p->alpha, error) &&
         ds_node_attr_float(node, "beta", 0.5, &p->beta, error);
}

/* selu: gamma * (x > 0 ? x : alpha * (exp(x) - 1)), ONNX's defaults (MXNet's fixed constants
 * rounded to float); `beta` holds gamma. */
static gboolean parse_selu(const DsNode *node, void *param, GError **error)
{
  DsActParam *p = param;
  return ds_node_attr_float(node, "alpha", 1.67326319217681884765625, &p->alpha, error) &&
         ds_node_attr_float(node, "gamma", 1.05070102214813232421875, &p->beta, error);
}

/* celu and thresholded_relu: one coefficient, 1 by default. */
static gboolean parse_alpha_one(const DsNode *node, void *param, GError **error)
{
  DsActParam *p = param;
  return ds_node_attr_float(node, "alpha", 1.0, &p->alpha, error);
}

static gboolean parse_celu(const DsNode *node, void *param, GError **error)
{
  if (!parse_alpha_one(node, param, error))
    return FALSE;
  if (((DsActParam *)param)->alpha == 0.0)
    return ds_ops_attr_invalid(node, "alpha", "must not be 0 (celu divides by it)", error);
  return TRUE;
}

/* shrink: x < -lambd ? x + bias : (x > lambd ? x - bias : 0); `alpha` holds lambd, `beta` the
 * bias. */
static gboolean parse_shrink(const DsNode *node, void *param, GError **error)
{
  DsActParam *p = param;
  return ds_node_attr_float(node, "lambd", 0.5, &p->alpha, error) &&
         ds_node_attr_float(node, "bias", 0.0, &p->beta, error);
}

/* --- NumPy-style reductions --- */

static gboolean parse_np_reduce(const DsNode *node, void *param, GError **error)
{
  DsNpReduceParam *p = param;
  gboolean keepdims;
  if (!ds_ops_attr_axes(node, "axis", p->axes, &p->n_axes, error) ||
      !ds_node_attr_bool(node, "keepdims", FALSE, &keepdims, error))
    return FALSE;
  p->keepdims = keepdims;
  return TRUE;
}

/* NumPy's rule: the listed axes (all when None, none for "()") go, or stay as 1 with keepdims;
 * nothing left is a 0-dim result. */
static gboolean infer_shape_np_reduce(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                      DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsNpReduceParam *p = param;
  const DsShape *s = &in[0];
  if (s->ndim < 0)
    return TRUE;
  gboolean reduced[DS_MAX_NDIM] = {FALSE};
  for (int d = 0; d < s->ndim; d++)
    reduced[d] = p->n_axes < 0;
  for (int i = 0; i < p->n_axes; i++) {
    int axis;
    if (!ds_shape_ctx_axis(ctx, p->axes[i], s->ndim, FALSE, &axis, error))
      return FALSE;
    if (reduced[axis]) {
      ds_shape_ctx_set_error(ctx, error, "reduction axes have duplicates: axis %d", axis);
      return FALSE;
    }
    reduced[axis] = TRUE;
  }
  DsShape result = {.ndim = 0};
  for (int d = 0; d < s->ndim; d++) {
    if (p->keepdims)
      result.dims[result.ndim++] = reduced[d] ? ds_dim(1) : s->dims[d];
    else if (!reduced[d])
      result.dims[result.ndim++] = s->dims[d];
  }
  return ds_shape_ctx_assign(ctx, &out[0], &result, "output", error);
}

/* --- _contrib_dynamic_sum --- */

static gboolean parse_dynamic_sum(const DsNode *node, void *param, GError **error)
{
  DsDynamicSumParam *p = param;
  gboolean keepdims, noop;
  if (!ds_node_attr_bool(node, "keepdims", FALSE, &keepdims, error) ||
      !ds_node_attr_bool(node, "noop_with_empty_axes", FALSE, &noop, error))
    return FALSE;
  p->keepdims = keepdims;
  p->noop_with_empty_axes = noop;
  return TRUE;
}

/* The rank follows from the axes tensor's length (n axes go, or stay as 1 with keepdims); which
 * dims stay is only known once the axes are read, so they are data-dependent (unbacked), each at
 * most its input dim with keepdims. An empty axes tensor gives an exact shape. */
static gboolean infer_shape_dynamic_sum(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                        DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsDynamicSumParam *p = param;
  const DsShape *data = &in[0], *axes = &in[1];
  if (!ds_ops_check_rank(ctx, axes, 1, "axes", "(n,)", error))
    return FALSE;
  if (data->ndim < 0 || axes->ndim < 0 || !ds_dim_is_const(axes->dims[0]))
    return TRUE;
  int64_t n = axes->dims[0].value;
  if (n > data->ndim) {
    g_autofree char *s = ds_shape_to_string(data);
    ds_shape_ctx_set_error(ctx, error, "%" G_GINT64_FORMAT " axes cannot all be axes of %s", n, s);
    return FALSE;
  }
  DsShape result = {.ndim = 0};
  if (n == 0) {
    for (int d = 0; d < data->ndim; d++)
      if (p->noop_with_empty_axes || p->keepdims)
        result.dims[result.ndim++] = p->noop_with_empty_axes ? data->dims[d] : ds_dim(1);
    return ds_shape_ctx_assign(ctx, &out[0], &result, "output", error);
  }
  result.ndim = p->keepdims ? data->ndim : data->ndim - (int)n;
  for (int d = 0; d < result.ndim; d++) {
    DsDim current = out->ndim == result.ndim ? out->dims[d] : DS_DIM_UNKNOWN;
    result.dims[d] =
        ds_shape_ctx_unbacked_dim(ctx, current, p->keepdims ? data->dims[d] : DS_DIM_UNKNOWN);
  }
  return ds_shape_ctx_assign(ctx, &out[0], &result, "output", error);
}

/* The data and the result share a dtype; the axes are integers of any dtype. */
static gboolean infer_type_dynamic_sum(const DsNode *node, const void *param, DsDType *in,
                                       DsDType *out, GError **error)
{
  (void)param;
  return ds_ops_unify_dtypes(node, in, 1, out, 1, error);
}

/* --- quantize_linear, dequantize_linear, dynamic_quantize_linear --- */

static gboolean parse_quantize_linear(const DsNode *node, void *param, GError **error)
{
  int64_t axis;
  if (!ds_ops_attr_int_range(node, "axis", 1, -DS_MAX_NDIM, DS_MAX_NDIM - 1, &axis, error))
    return FALSE;
  ((DsQuantizeLinearParam *)param)->axis = (int)axis;
  return TRUE;
}

/* The output has the data's shape. The scale and the zero point hold one value (shape () or
 * (1,)) or one per slice along `axis`. */
static gboolean infer_shape_quantize_linear(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                            DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsQuantizeLinearParam *p = param;
  if (!ds_ops_unify_shapes(ctx, node, in, 1, out, 1, error))
    return FALSE;
  if (!ds_ops_assign_shape(ctx, &in[2], &in[1], "zero_point", error))
    return FALSE;
  in[1] = in[2];
  const DsShape *data = &in[0];
  DsShape *scale = &in[1];
  if (scale->ndim > 1) {
    g_autofree char *s = ds_shape_to_string(scale);
    ds_shape_ctx_set_error(ctx, error, "scale must be a scalar or 1-D, but has shape %s", s);
    return FALSE;
  }
  if (scale->ndim != 1 || data->ndim < 0 || ds_dim_is_value(scale->dims[0], 1))
    return TRUE;
  int axis;
  if (!ds_shape_ctx_axis(ctx, p->axis, data->ndim, FALSE, &axis, error))
    return FALSE;
  if (!ds_shape_ctx_unify_dim(ctx, &scale->dims[0], data->dims[axis], "scale", error))
    return FALSE;
  in[2] = *scale;
  return TRUE;
}

/* The result takes the zero point's dtype; the scale is a float. */
static gboolean infer_type_quantize_linear(const DsNode *node, const void *param, DsDType *in,
                                           DsDType *out, GError **error)
{
  (void)param;
  if (in[2] != DS_DTYPE_UNKNOWN && in[2] != DS_DTYPE_UINT8 && in[2] != DS_DTYPE_INT8)
    return ds_ops_node_error(node, error, DS_ERROR_SHAPE,
                             "the zero point must be uint8 or int8, not %s", ds_dtype_name(in[2]));
  return ds_ops_assign_dtype(node, &out[0], in[2], "output", error);
}

/* The result takes the scale's dtype; the zero point may be any integer dtype. */
static gboolean infer_type_dequantize_linear(const DsNode *node, const void *param, DsDType *in,
                                             DsDType *out, GError **error)
{
  (void)param;
  return ds_ops_unify_dtypes(node, &in[1], 1, out, 1, error);
}

/* The quantized data, its scale and its zero point (both 0-dim). */
static gboolean infer_shape_dynamic_quantize_linear(DsShapeCtx *ctx, const DsNode *node,
                                                    const void *param, DsShape *in, DsShape *out,
                                                    GError **error)
{
  (void)param;
  if (!ds_ops_unify_shapes(ctx, node, in, 1, out, 1, error))
    return FALSE;
  DsShape scalar = {.ndim = 0};
  return ds_shape_ctx_assign(ctx, &out[1], &scalar, "scale", error) &&
         ds_shape_ctx_assign(ctx, &out[2], &scalar, "zero point", error);
}

static gboolean infer_type_dynamic_quantize_linear(const DsNode *node, const void *param,
                                                   DsDType *in, DsDType *out, GError **error)
{
  (void)param;
  return ds_ops_assign_dtype(node, &in[0], DS_DTYPE_FLOAT32, "data", error) &&
         ds_ops_assign_dtype(node, &out[0], DS_DTYPE_UINT8, "output", error) &&
         ds_ops_assign_dtype(node, &out[1], DS_DTYPE_FLOAT32, "scale", error) &&
         ds_ops_assign_dtype(node, &out[2], DS_DTYPE_UINT8, "zero point", error);
}

static int count_3(const void *param)
{
  (void)param;
  return 3;
}

/* --- _npi_argmax, _npi_argmin --- */

static gboolean parse_arg_reduce(const DsNode *node, void *param, GError **error)
{
  DsArgReduceParam *p = param;
  gboolean keepdims, last;
  int64_t axis = 0;
  p->has_axis = !ds_node_attr_is_none(node, "axis");
  if ((p->has_axis && !ds_node_attr_int(node, "axis", 0, &axis, error)) ||
      !ds_node_attr_bool(node, "keepdims", FALSE, &keepdims, error) ||
      !ds_node_attr_bool(node, "select_last_index", FALSE, &last, error))
    return FALSE;
  if (axis < -DS_MAX_NDIM || axis >= DS_MAX_NDIM)
    return ds_ops_attr_invalid(node, "axis", "is out of range for any tensor", error);
  p->axis = (int)axis;
  p->keepdims = keepdims;
  p->select_last_index = last;
  return TRUE;
}

/* The axis goes (or stays as 1 with keepdims); without an axis the input is flattened first,
 * so the result is 0-dim (all ones with keepdims). */
static gboolean infer_shape_arg_reduce(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                       DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsArgReduceParam *p = param;
  const DsShape *s = &in[0];
  if (s->ndim < 0)
    return TRUE;
  DsShape result = {.ndim = 0};
  if (!p->has_axis) {
    if (p->keepdims)
      for (int d = 0; d < s->ndim; d++)
        result.dims[result.ndim++] = ds_dim(1);
    return ds_shape_ctx_assign(ctx, &out[0], &result, "output", error);
  }
  int axis;
  if (!ds_shape_ctx_axis(ctx, p->axis, s->ndim, FALSE, &axis, error))
    return FALSE;
  if (ds_dim_is_value(s->dims[axis], 0)) {
    ds_shape_ctx_set_error(ctx, error, "cannot take the arg-extreme of an empty axis %d", axis);
    return FALSE;
  }
  for (int d = 0; d < s->ndim; d++) {
    if (d != axis)
      result.dims[result.ndim++] = s->dims[d];
    else if (p->keepdims)
      result.dims[result.ndim++] = ds_dim(1);
  }
  return ds_shape_ctx_assign(ctx, &out[0], &result, "output", error);
}

/* argmax, argmin: MXNet's ReduceAxisParam (axis None or an int, keepdims); no
 * select_last_index. */
static gboolean parse_legacy_arg_reduce(const DsNode *node, void *param, GError **error)
{
  DsArgReduceParam *p = param;
  gboolean keepdims;
  int64_t axis = 0;
  p->has_axis = !ds_node_attr_is_none(node, "axis");
  if ((p->has_axis && !ds_node_attr_int(node, "axis", 0, &axis, error)) ||
      !ds_node_attr_bool(node, "keepdims", FALSE, &keepdims, error))
    return FALSE;
  if (axis < -DS_MAX_NDIM || axis >= DS_MAX_NDIM)
    return ds_ops_attr_invalid(node, "axis", "is out of range for any tensor", error);
  p->axis = (int)axis;
  p->keepdims = keepdims;
  return TRUE;
}

/* argmax_channel has no attributes: MXNet's parser fixes axis 1 without keepdims. */
static gboolean parse_argmax_channel(const DsNode *node, void *param, GError **error)
{
  (void)node;
  (void)error;
  DsArgReduceParam *p = param;
  p->has_axis = true;
  p->axis = 1;
  return TRUE;
}

/* MXNet's ReduceAxisShapeImpl: without an axis, or for 1-D data, the result is (1,) (all ones
 * with keepdims), never 0-dim; otherwise the axis goes (or stays as 1 with keepdims). An empty
 * axis has no extreme. */
static gboolean infer_shape_legacy_arg_reduce(DsShapeCtx *ctx, const DsNode *node,
                                              const void *param, DsShape *in, DsShape *out,
                                              GError **error)
{
  (void)node;
  const DsArgReduceParam *p = param;
  const DsShape *s = &in[0];
  if (s->ndim < 0)
    return TRUE;
  int axis = -1;
  if (p->has_axis && !ds_shape_ctx_axis(ctx, p->axis, s->ndim, FALSE, &axis, error))
    return FALSE;
  if (axis >= 0 && ds_dim_is_value(s->dims[axis], 0)) {
    ds_shape_ctx_set_error(ctx, error, "cannot take the arg-extreme of an empty axis %d", axis);
    return FALSE;
  }
  DsShape result = {.ndim = 0};
  if (axis < 0 || s->ndim == 1) {
    result.ndim = p->keepdims ? s->ndim : 1;
    for (int d = 0; d < result.ndim; d++)
      result.dims[d] = ds_dim(1);
    return ds_shape_ctx_assign(ctx, &out[0], &result, "output", error);
  }
  for (int d = 0; d < s->ndim; d++) {
    if (d != axis)
      result.dims[result.ndim++] = s->dims[d];
    else if (p->keepdims)
      result.dims[result.ndim++] = ds_dim(1);
  }
  return ds_shape_ctx_assign(ctx, &out[0], &result, "output", error);
}

static gboolean infer_type_int64_out(const DsNode *node, const void *param, DsDType *in,
                                     DsDType *out, GError **error)
{
  (void)param;
  (void)in;
  return ds_ops_assign_dtype(node, &out[0], DS_DTYPE_INT64, "output", error);
}

/* --- definitions --- */

#define DS_BINARY_SAME_OP(ID, NAME, ...)                                                           \
  static const char *const ID##_aliases[] = {__VA_ARGS__, NULL};                                   \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .aliases = ID##_aliases,                                                                     \
      .traits = DS_OP_TRAIT_ELEMWISE,                                                              \
      .num_inputs = ds_op_count_2,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .input_names = binary_inputs,                                                                \
      .infer_shape = ds_ops_infer_shape_same,                                                      \
      .grad = ds_grad_binary,                                                                      \
  };

DS_BINARY_SAME_OP(ELEMWISE_ADD, "elemwise_add", "_add", "_plus", "_Plus")
DS_BINARY_SAME_OP(ELEMWISE_SUB, "elemwise_sub", "_sub", "_minus", "_Minus")
DS_BINARY_SAME_OP(ELEMWISE_MUL, "elemwise_mul", "_mul", "_Mul")
DS_BINARY_SAME_OP(ELEMWISE_DIV, "elemwise_div", "_div", "_Div")

/* sqrt(lhs^2 + rhs^2) of two operands of one shape (MXNet's _hypot has no alias). */
static const DsOpDef HYPOT_def = {
    .id = DS_OP_HYPOT,
    .name = "_hypot",
    .traits = DS_OP_TRAIT_ELEMWISE,
    .num_inputs = ds_op_count_2,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = binary_inputs,
    .infer_shape = ds_ops_infer_shape_same,
    .grad = ds_grad_binary,
};

#define DS_BROADCAST_OP_TYPED(ID, NAME, ALIASES, TYPE)                                             \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .aliases = ALIASES,                                                                          \
      .traits = DS_OP_TRAIT_BROADCAST,                                                             \
      .num_inputs = ds_op_count_2,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .input_names = binary_inputs,                                                                \
      .infer_shape = ds_ops_infer_shape_broadcast,                                                 \
      .infer_type = TYPE,                                                                          \
      .grad = ds_grad_binary,                                                                      \
  };
#define DS_BROADCAST_OP(ID, NAME, ALIASES) DS_BROADCAST_OP_TYPED(ID, NAME, ALIASES, NULL)

static const char *const broadcast_add_aliases[] = {"broadcast_plus", NULL};
static const char *const broadcast_sub_aliases[] = {"broadcast_minus", NULL};
/* MXNet's element-wise forms (`_maximum`, `_lesser`...) need operands of one shape, which the
 * broadcasting rule accepts as they are: one definition serves both. */
static const char *const elemwise_maximum_aliases[] = {"_maximum", "_Maximum", NULL};
static const char *const elemwise_minimum_aliases[] = {"_minimum", "_Minimum", NULL};
static const char *const elemwise_power_aliases[] = {"_power", "_Power", NULL};
static const char *const elemwise_equal_aliases[] = {"_equal", "_Equal", NULL};
static const char *const elemwise_not_equal_aliases[] = {"_not_equal", "_Not_Equal", NULL};
static const char *const elemwise_greater_aliases[] = {"_greater", "_Greater", NULL};
static const char *const elemwise_greater_equal_aliases[] = {"_greater_equal", "_Greater_Equal", NULL};
static const char *const elemwise_lesser_aliases[] = {"_lesser", "_Lesser", NULL};
static const char *const elemwise_lesser_equal_aliases[] = {"_lesser_equal", "_Lesser_Equal", NULL};
static const char *const elemwise_mod_aliases[] = {"_mod", "_Mod", NULL};
static const char *const elemwise_logical_and_aliases[] = {"_logical_and", "_Logical_And", NULL};
static const char *const elemwise_logical_or_aliases[] = {"_logical_or", "_Logical_Or", NULL};
static const char *const elemwise_logical_xor_aliases[] = {"_logical_xor", "_Logical_Xor", NULL};

DS_BROADCAST_OP(BROADCAST_ADD, "broadcast_add", broadcast_add_aliases)
DS_BROADCAST_OP(BROADCAST_SUB, "broadcast_sub", broadcast_sub_aliases)
DS_BROADCAST_OP(BROADCAST_MUL, "broadcast_mul", NULL)
DS_BROADCAST_OP(BROADCAST_DIV, "broadcast_div", NULL)
DS_BROADCAST_OP(BROADCAST_MAXIMUM, "broadcast_maximum", elemwise_maximum_aliases)
DS_BROADCAST_OP(BROADCAST_MINIMUM, "broadcast_minimum", elemwise_minimum_aliases)
DS_BROADCAST_OP_TYPED(BROADCAST_POWER, "broadcast_power", elemwise_power_aliases, infer_type_power)
DS_BROADCAST_OP(BROADCAST_EQUAL, "broadcast_equal", elemwise_equal_aliases)
DS_BROADCAST_OP(BROADCAST_NOT_EQUAL, "broadcast_not_equal", elemwise_not_equal_aliases)
DS_BROADCAST_OP(BROADCAST_GREATER, "broadcast_greater", elemwise_greater_aliases)
DS_BROADCAST_OP(BROADCAST_GREATER_EQUAL, "broadcast_greater_equal", elemwise_greater_equal_aliases)
DS_BROADCAST_OP(BROADCAST_LESSER, "broadcast_lesser", elemwise_lesser_aliases)
DS_BROADCAST_OP(BROADCAST_LESSER_EQUAL, "broadcast_lesser_equal", elemwise_lesser_equal_aliases)

/* Python's modulo (the sign of the divisor) and C's fmod (the sign of the dividend). */
static const char *const broadcast_fmod_aliases[] = {"broadcast_fmod", NULL};
DS_BROADCAST_OP(BROADCAST_MOD, "broadcast_mod", elemwise_mod_aliases)
DS_BROADCAST_OP(BROADCAST_FMOD, "_npi_fmod", broadcast_fmod_aliases)
/* MXNet's logical ops give 0/1 in the operands' dtype (bool for bool operands). */
DS_BROADCAST_OP(BROADCAST_LOGICAL_AND, "broadcast_logical_and", elemwise_logical_and_aliases)
DS_BROADCAST_OP(BROADCAST_LOGICAL_OR, "broadcast_logical_or", elemwise_logical_or_aliases)
DS_BROADCAST_OP(BROADCAST_LOGICAL_XOR, "broadcast_logical_xor", elemwise_logical_xor_aliases)
/* lhs < 0 ? lhs * rhs : lhs, the slope broadcasting against the data (ONNX's PRelu; MXNet's
 * LeakyReLU(prelu) only lines a 1-D slope up with the channel axis). */
DS_BROADCAST_OP(BROADCAST_PRELU, "broadcast_prelu", NULL)
/* Integer dtypes only; a shift by the bit width or more gives 0, as NumPy does for unsigned
 * types. Then NumPy's bitwise_and, bitwise_or and bitwise_xor. */
DS_BROADCAST_OP(BITWISE_LEFT_SHIFT, "_npi_bitwise_left_shift", NULL)
DS_BROADCAST_OP(BITWISE_RIGHT_SHIFT, "_npi_bitwise_right_shift", NULL)
DS_BROADCAST_OP(BITWISE_AND, "_npi_bitwise_and", NULL)
DS_BROADCAST_OP(BITWISE_OR, "_npi_bitwise_or", NULL)
DS_BROADCAST_OP(BITWISE_XOR, "_npi_bitwise_xor", NULL)
/* NumPy's comparisons: bool results. */
DS_BROADCAST_OP_TYPED(NP_EQUAL, "_npi_equal", NULL, infer_type_compare)
DS_BROADCAST_OP_TYPED(NP_NOT_EQUAL, "_npi_not_equal", NULL, infer_type_compare)
DS_BROADCAST_OP_TYPED(NP_GREATER, "_npi_greater", NULL, infer_type_compare)
DS_BROADCAST_OP_TYPED(NP_GREATER_EQUAL, "_npi_greater_equal", NULL, infer_type_compare)
DS_BROADCAST_OP_TYPED(NP_LESS, "_npi_less", NULL, infer_type_compare)
DS_BROADCAST_OP_TYPED(NP_LESS_EQUAL, "_npi_less_equal", NULL, infer_type_compare)
/* sqrt(lhs^2 + rhs^2); integers truncate, as MXNet's cast of the float result does. */
DS_BROADCAST_OP(BROADCAST_HYPOT, "broadcast_hypot", NULL)

#define DS_SCALAR_OP(ID, NAME, ALIAS, FN, REVERSE)                                                 \
  static gboolean parse_##ID(const DsNode *node, void *param, GError **error)                      \
  {                                                                                                \
    return parse_scalar(node, param, DS_MATH_BIN_##FN, REVERSE, error);                            \
  }                                                                                                \
  static const char *const ID##_aliases[] = {ALIAS, NULL};                                         \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .aliases = ID##_aliases,                                                                     \
      .traits = DS_OP_TRAIT_ELEMWISE,                                                              \
      .param_size = sizeof(DsScalarParam),                                                         \
      .parse = parse_##ID,                                                                         \
      .num_inputs = ds_op_count_1,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .infer_shape = ds_ops_infer_shape_same,                                                      \
      .infer_type = infer_type_scalar,                                                             \
      .grad = ds_grad_scalar_op,                                                                   \
  };

DS_OPS_SCALAR(DS_SCALAR_OP)

#define DS_UNARY_OP(ID, NAME, ALIASES, TRAITS, GRAD)                                               \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .aliases = ALIASES,                                                                          \
      .traits = TRAITS,                                                                            \
      .num_inputs = ds_op_count_1,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .infer_shape = ds_ops_infer_shape_same,                                                      \
      .grad = GRAD,                                                                                \
  };

static const char *const copy_aliases[] = {"identity", NULL};
static const char *const block_grad_aliases[] = {"stop_gradient", NULL};

DS_UNARY_OP(IDENTITY, "_copy", copy_aliases, DS_OP_TRAIT_ELEMWISE | DS_OP_TRAIT_VIEW,
            ds_grad_identity)
DS_UNARY_OP(BLOCK_GRAD, "BlockGrad", block_grad_aliases, DS_OP_TRAIT_ELEMWISE | DS_OP_TRAIT_VIEW,
            ds_grad_zero)
DS_UNARY_OP(ZEROS_LIKE, "zeros_like", NULL, DS_OP_TRAIT_ELEMWISE, ds_grad_zero)
DS_UNARY_OP(ONES_LIKE, "ones_like", NULL, DS_OP_TRAIT_ELEMWISE, ds_grad_zero)
DS_UNARY_OP(DIV_SQRT_DIM, "_contrib_div_sqrt_dim", NULL, DS_OP_TRAIT_ELEMWISE,
            ds_grad_div_sqrt_dim)

/* The unary math ops (rint rounds half to even, ONNX's Round; MXNet's round goes half away from
 * zero. logical_not gives 0/1 in the input's dtype, as MXNet's). */
#define DS_UNARY_MATH_OP(ID, NAME) DS_UNARY_OP(ID, NAME, NULL, DS_OP_TRAIT_ELEMWISE, ds_grad_unary_math)
DS_OPS_UNARY_MATH(DS_UNARY_MATH_OP)
#undef DS_UNARY_MATH_OP

#define DS_ACT_OP(ID, NAME, PARSE)                                                                 \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .traits = DS_OP_TRAIT_ELEMWISE,                                                              \
      .param_size = sizeof(DsActParam),                                                            \
      .parse = PARSE,                                                                              \
      .num_inputs = ds_op_count_1,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .infer_shape = ds_ops_infer_shape_same,                                                      \
      .grad = ds_grad_act_param,                                                                   \
  };

/* max(0, min(1, alpha * x + beta)) */
DS_ACT_OP(HARD_SIGMOID, "hard_sigmoid", parse_hard_sigmoid)
DS_ACT_OP(SELU, "selu", parse_selu)
/* max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) */
DS_ACT_OP(CELU, "celu", parse_celu)
/* x > alpha ? x : 0 */
DS_ACT_OP(THRESHOLDED_RELU, "thresholded_relu", parse_alpha_one)
DS_ACT_OP(SHRINK, "shrink", parse_shrink)

#define DS_PREDICATE_OP(ID, NAME)                                                                  \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .traits = DS_OP_TRAIT_ELEMWISE,                                                              \
      .num_inputs = ds_op_count_1,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .infer_shape = ds_ops_infer_shape_same,                                                      \
      .infer_type = infer_type_bool_out,                                                           \
      .grad = ds_grad_zero,                                                                        \
  };

/* NumPy's float predicates, bool results (false for every integer). */
DS_PREDICATE_OP(ISNAN, "_npi_isnan")
DS_PREDICATE_OP(ISINF, "_npi_isinf")
DS_PREDICATE_OP(ISPOSINF, "_npi_isposinf")
DS_PREDICATE_OP(ISNEGINF, "_npi_isneginf")

#define DS_NP_REDUCE_OP(ID, NAME, GRAD)                                                            \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .param_size = sizeof(DsNpReduceParam),                                                       \
      .parse = parse_np_reduce,                                                                    \
      .num_inputs = ds_op_count_1,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .infer_shape = infer_shape_np_reduce,                                                        \
      .grad = GRAD,                                                                                \
  };

/* The result keeps the input's dtype (integer means truncate, as NumPy's mean cast back). */
DS_NP_REDUCE_OP(NP_SUM, "_npi_sum", ds_grad_sum)
DS_NP_REDUCE_OP(NP_MEAN, "_npi_mean", ds_grad_mean)
DS_NP_REDUCE_OP(NP_MAX, "_npi_max", ds_grad_reduce)
DS_NP_REDUCE_OP(NP_MIN, "_npi_min", ds_grad_reduce)
DS_NP_REDUCE_OP(NP_PROD, "_npi_prod", ds_grad_reduce)
/* sum(x^2), sum(|x|), sqrt(sum(x^2)), log(sum(x)), log(sum(exp(x))) (computed stably). */
DS_NP_REDUCE_OP(SUM_SQUARE, "sum_square", ds_grad_reduce)
DS_NP_REDUCE_OP(L1_NORM, "l1_norm", ds_grad_reduce)
DS_NP_REDUCE_OP(L2_NORM, "l2_norm", ds_grad_reduce)
DS_NP_REDUCE_OP(LOG_SUM, "log_sum", ds_grad_reduce)
DS_NP_REDUCE_OP(LOG_SUM_EXP, "log_sum_exp", ds_grad_reduce)

#define DS_ARG_REDUCE_OP(ID, NAME)                                                                 \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .param_size = sizeof(DsArgReduceParam),                                                      \
      .parse = parse_arg_reduce,                                                                   \
      .num_inputs = ds_op_count_1,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .infer_shape = infer_shape_arg_reduce,                                                       \
      .infer_type = infer_type_int64_out,                                                          \
      .grad = ds_grad_zero,                                                                        \
  };

DS_ARG_REDUCE_OP(NP_ARGMAX, "_npi_argmax")
DS_ARG_REDUCE_OP(NP_ARGMIN, "_npi_argmin")

/* The legacy forms keep the input's dtype for the indices (NULL infer_type). */
#define DS_LEGACY_ARG_REDUCE_OP(ID, NAME, PARSE)                                                   \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .param_size = sizeof(DsArgReduceParam),                                                      \
      .parse = PARSE,                                                                              \
      .num_inputs = ds_op_count_1,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .infer_shape = infer_shape_legacy_arg_reduce,                                                \
      .grad = ds_grad_zero,                                                                        \
  };

DS_LEGACY_ARG_REDUCE_OP(ARGMAX, "argmax", parse_legacy_arg_reduce)
DS_LEGACY_ARG_REDUCE_OP(ARGMIN, "argmin", parse_legacy_arg_reduce)
DS_LEGACY_ARG_REDUCE_OP(ARGMAX_CHANNEL, "argmax_channel", parse_argmax_channel)

static const DsOpDef CLIP_def = {
    .id = DS_OP_CLIP,
    .name = "clip",
    .traits = DS_OP_TRAIT_ELEMWISE,
    .param_size = sizeof(DsClipParam),
    .parse = parse_clip,
    .num_inputs = ds_op_count_1,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .infer_shape = ds_ops_infer_shape_same,
    .grad = ds_grad_clip,
};

static const DsOpDef WHERE_def = {
    .id = DS_OP_WHERE,
    .name = "where",
    .num_inputs = ds_op_count_3,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = where_inputs,
    .infer_shape = infer_shape_where,
    .infer_type = infer_type_where,
    .grad = ds_grad_where,
};

static const char *const np_where_inputs[] = {"condition", "x", "y", NULL};
/* The condition may have any dtype (nonzero is true); x, y and the output share one. */
static const DsOpDef NP_WHERE_def = {
    .id = DS_OP_NP_WHERE,
    .name = "_npi_where",
    .traits = DS_OP_TRAIT_BROADCAST,
    .num_inputs = ds_op_count_3,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = np_where_inputs,
    .infer_shape = infer_shape_np_where,
    .infer_type = infer_type_where,
    .grad = ds_grad_np_where,
};

static const char *const dynamic_sum_inputs[] = {"data", "axes", NULL};
static const DsOpDef DYNAMIC_SUM_def = {
    .id = DS_OP_DYNAMIC_SUM,
    .name = "_contrib_dynamic_sum",
    .traits = DS_OP_TRAIT_DYNAMIC_SHAPE | DS_OP_TRAIT_SHAPE_INPUT,
    .param_size = sizeof(DsDynamicSumParam),
    .parse = parse_dynamic_sum,
    .num_inputs = ds_op_count_2,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = dynamic_sum_inputs,
    .infer_shape = infer_shape_dynamic_sum,
    .infer_type = infer_type_dynamic_sum,
};

static const char *const quantize_inputs[] = {"data", "scale", "zero_point", NULL};
static const char *const dynamic_quantize_outputs[] = {"output", "scale", "zero_point", NULL};

#define DS_QUANTIZE_OP(ID, NAME, TYPE)                                                             \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .param_size = sizeof(DsQuantizeLinearParam),                                                 \
      .parse = parse_quantize_linear,                                                              \
      .num_inputs = ds_op_count_3,                                                                 \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .input_names = quantize_inputs,                                                              \
      .infer_shape = infer_shape_quantize_linear,                                                  \
      .infer_type = TYPE,                                                                          \
  };
DS_QUANTIZE_OP(QUANTIZE_LINEAR, "quantize_linear", infer_type_quantize_linear)
DS_QUANTIZE_OP(DEQUANTIZE_LINEAR, "dequantize_linear", infer_type_dequantize_linear)

/* ONNX's DynamicQuantizeLinear: uint8 data with the scale and zero point that map
 * [min(0, min(x)), max(0, max(x))] onto [0, 255]. */
static const DsOpDef DYNAMIC_QUANTIZE_LINEAR_def = {
    .id = DS_OP_DYNAMIC_QUANTIZE_LINEAR,
    .name = "dynamic_quantize_linear",
    .num_inputs = ds_op_count_1,
    .num_outputs = count_3,
    .num_visible_outputs = count_3,
    .output_names = dynamic_quantize_outputs,
    .infer_shape = infer_shape_dynamic_quantize_linear,
    .infer_type = infer_type_dynamic_quantize_linear,
};

static const char *const add_n_aliases[] = {"ElementWiseSum", NULL};
static const DsOpDef ADD_N_def = {
    .id = DS_OP_ADD_N,
    .name = "add_n",
    .aliases = add_n_aliases,
    .traits = DS_OP_TRAIT_ELEMWISE,
    .param_size = sizeof(DsAddNParam),
    .parse = parse_add_n,
    .num_inputs = add_n_num_inputs,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .input_names = add_n_inputs,
    .infer_shape = ds_ops_infer_shape_same,
    .grad = ds_grad_add_n,
};

void ds_ops_elemwise_register(const DsOpDef **table)
{
  DS_OPS_ELEMWISE(DS_OP_TABLE_ENTRY)
}
