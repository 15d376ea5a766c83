/* ds-ops-signal.c: attribute parsing and shape and dtype rules of the Fourier transforms. */
#include "ds-ops-signal.h"

#include "ds-attr.h"
#include "ds-error.h"
#include "ds-op.h"
#include "ds-ops-common.h"

static const char *const names_output[] = {"output", NULL};

/* --- _contrib_dft ------------------------------------------------------------------------- */

static gboolean dft_parse(const DsNode *node, void *param, GError **error)
{
  DsDftParam *p = param;
  int64_t axis, length;
  gboolean inverse, onesided;
  if (!ds_ops_attr_int_range(node, "axis", 1, -DS_MAX_NDIM, DS_MAX_NDIM - 1, &axis, error) ||
      !ds_ops_attr_int_range(node, "length", 0, 0, G_MAXINT32, &length, error) ||
      !ds_node_attr_bool(node, "inverse", FALSE, &inverse, error) ||
      !ds_node_attr_bool(node, "onesided", FALSE, &onesided, error))
    return FALSE;
  if (inverse && onesided)
    return ds_ops_attr_invalid(node, "onesided", "an inverse transform gives every bin", error);
  p->axis = (int)axis;
  p->length = length;
  p->inverse = inverse;
  p->onesided = onesided;
  return TRUE;
}

static gboolean dft_infer_shape(DsShapeCtx *ctx, const DsNode *node, const void *param, DsShape *in,
                                DsShape *out, GError **error)
{
  (void)node;
  const DsDftParam *p = param;
  const DsShape *x = &in[0];
  if (x->ndim < 0)
    return TRUE;
  g_autofree char *s = ds_shape_to_string(x);
  if (x->ndim < 2) {
    ds_shape_ctx_set_error(ctx, error,
                           "data %s needs an axis to transform and a last axis of 1 (real) or 2 "
                           "(complex) values",
                           s);
    return FALSE;
  }
  const int last = x->ndim - 1, axis = p->axis < 0 ? p->axis + x->ndim : p->axis;
  if (axis < 0 || axis >= last) {
    ds_shape_ctx_set_error(ctx, error,
                           "axis %d is not one of data %s's axes before its last (the real "
                           "and imaginary parts)",
                           p->axis, s);
    return FALSE;
  }
  const DsDim parts = x->dims[last];
  if (ds_dim_is_const(parts) && parts.value != 1 && parts.value != 2) {
    ds_shape_ctx_set_error(ctx, error,
                           "data %s must end in an axis of 1 (real) or 2 (complex) values", s);
    return FALSE;
  }
  if (p->onesided && ds_dim_is_value(parts, 2)) {
    ds_shape_ctx_set_error(ctx, error,
                           "data %s is complex, but a one-sided transform takes real data", s);
    return FALSE;
  }
  DsShape o = *x;
  DsDim n = p->length > 0 ? ds_dim(p->length) : x->dims[axis];
  if (p->onesided)
    n = ds_dim_add(ctx, ds_dim_floordiv(ctx, n, ds_dim(2)), ds_dim(1));
  o.dims[axis] = n;
  o.dims[last] = ds_dim(2);
  return ds_ops_assign_shape(ctx, &out[0], &o, "output", error);
}

static gboolean dft_infer_type(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                               GError **error)
{
  (void)param;
  DsDType t = in[0] != DS_DTYPE_UNKNOWN ? in[0] : out[0];
  if (t == DS_DTYPE_UNKNOWN)
    return TRUE;
  if (t != DS_DTYPE_FLOAT32 && t != DS_DTYPE_FLOAT64)
    return ds_ops_node_error(node, error, DS_ERROR_SHAPE,
                             "data has dtype %s, but a Fourier transform takes float32 or float64",
                             ds_dtype_name(t));
  return ds_ops_assign_dtype(node, &in[0], t, "data", error) &&
         ds_ops_assign_dtype(node, &out[0], t, "output", error);
}

static const DsOpDef DFT_def = {
    .id = DS_OP_DFT,
    .name = "_contrib_dft",
    .param_size = sizeof(DsDftParam),
    .parse = dft_parse,
    .num_inputs = ds_op_count_1,
    .num_outputs = ds_op_count_1,
    .num_visible_outputs = ds_op_count_1,
    .output_names = names_output,
    .infer_shape = dft_infer_shape,
    .infer_type = dft_infer_type,
};

void ds_ops_signal_register(const DsOpDef **table)
{
  DS_OPS_SIGNAL(DS_OP_TABLE_ENTRY)
}
