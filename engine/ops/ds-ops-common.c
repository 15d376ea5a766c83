/* ds-ops-common.c: shape and dtype rules shared by the op families. */
#include "ds-ops-common.h"

#include <stdarg.h>
#include <string.h>

#include "ds-attr.h"
#include "ds-error.h"

const char *ds_ops_input_name(const DsNode *node, int i, char buf[16])
{
  return ds_op_input_name(node->op, (int)node->n_inputs, i, buf);
}

gboolean ds_ops_broadcast_shapes(DsShapeCtx *ctx, const DsShape *a, const char *a_name,
                                 const DsShape *b, const char *b_name, DsShape *out, GError **error)
{
  if (a->ndim < 0 || b->ndim < 0) {
    *out = DS_SHAPE_UNKNOWN;
    return TRUE;
  }
  int ndim = MAX(a->ndim, b->ndim);
  DsShape result = {.ndim = ndim};
  for (int i = 0; i < ndim; i++) {
    /* Right-aligned: a missing leading dim acts as a constant 1. */
    int ia = i - (ndim - a->ndim), ib = i - (ndim - b->ndim);
    DsDim da = ia >= 0 ? a->dims[ia] : ds_dim(1);
    DsDim db = ib >= 0 ? b->dims[ib] : ds_dim(1);
    if (ds_dim_is_value(da, 1)) {
      result.dims[i] = db;
    } else if (ds_dim_is_value(db, 1)) {
      result.dims[i] = da;
    } else if (!ds_dim_is_known(da)) {
      /* da is 1 or db: either way the result is db (unknown if db is). */
      result.dims[i] = db;
    } else if (!ds_dim_is_known(db)) {
      result.dims[i] = da;
    } else if (ds_dim_is_const(da) && ds_dim_is_const(db)) {
      if (da.value != db.value) {
        g_autofree char *sa = ds_shape_to_string(a);
        g_autofree char *sb = ds_shape_to_string(b);
        ds_shape_ctx_set_error(ctx, error,
                               "%s shape %s and %s shape %s cannot be broadcast together "
                               "(%" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT " at axis %d of "
                               "the result)",
                               a_name, sa, b_name, sb, da.value, db.value, i);
        return FALSE;
      }
      result.dims[i] = da;
    } else {
      /* Symbolic dims: the facts decide (a proven 1 broadcasts, two dims proven > 1 must be
       * equal), or the result is max(a, b) with a note. */
      GError *local = NULL;
      if (!ds_shape_ctx_broadcast_dim(ctx, da, db, &result.dims[i], &local)) {
        g_autofree char *sa = ds_shape_to_string(a);
        g_autofree char *sb = ds_shape_to_string(b);
        /* local already names the node: keep its reason after ours. */
        const char *why = strstr(local->message, "): ");
        ds_shape_ctx_set_error(ctx, error,
                               "%s shape %s and %s shape %s cannot be broadcast together "
                               "(at axis %d of the result: %s)",
                               a_name, sa, b_name, sb, i, why != NULL ? why + 3 : local->message);
        g_error_free(local);
        return FALSE;
      }
    }
  }
  *out = result;
  return TRUE;
}

gboolean ds_ops_unify_shapes(DsShapeCtx *ctx, const DsNode *node, DsShape *in, int n_in,
                             DsShape *out, int n_out, GError **error)
{
  /* Merge everything into one shape, then write it back to every slot. */
  DsShape merged = DS_SHAPE_UNKNOWN;
  char buf[16];
  for (int i = 0; i < n_in + n_out; i++) {
    const DsShape *s = i < n_in ? &in[i] : &out[i - n_in];
    char what[48];
    if (i < n_in)
      g_snprintf(what, sizeof what, "input '%s'", ds_ops_input_name(node, i, buf));
    else
      g_snprintf(what, sizeof what, "output %d", i - n_in);
    GError *local = NULL;
    if (!ds_shape_ctx_assign(ctx, &merged, s, what, &local)) {
      g_clear_error(&local);
      g_autofree char *sm = ds_shape_to_string(&merged);
      g_autofree char *ss = ds_shape_to_string(s);
      ds_shape_ctx_set_error(ctx, error,
                             "all inputs and outputs must have the same shape, but %s has %s "
                             "where the others give %s",
                             what, ss, sm);
      return FALSE;
    }
  }
  if (merged.ndim < 0)
    return TRUE;
  for (int i = 0; i < n_in; i++)
    in[i] = merged;
  for (int i = 0; i < n_out; i++)
    out[i] = merged;
  return TRUE;
}

gboolean ds_ops_infer_shape_same(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                 DsShape *in, DsShape *out, GError **error)
{
  int n_out = node->op != NULL ? node->op->num_outputs(param) : 1;
  return ds_ops_unify_shapes(ctx, node, in, (int)node->n_inputs, out, n_out, error);
}

gboolean ds_ops_infer_shape_broadcast(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                      DsShape *in, DsShape *out, GError **error)
{
  (void)param;
  char buf0[16], buf1[16];
  DsShape result;
  if (!ds_ops_broadcast_shapes(ctx, &in[0], ds_ops_input_name(node, 0, buf0), &in[1],
                               ds_ops_input_name(node, 1, buf1), &result, error))
    return FALSE;
  return ds_shape_ctx_assign(ctx, &out[0], &result, "output", error);
}

gboolean ds_ops_assign_dtype(const DsNode *node, DsDType *slot, DsDType want, const char *what,
                             GError **error)
{
  if (want == DS_DTYPE_UNKNOWN)
    return TRUE;
  if (*slot == DS_DTYPE_UNKNOWN) {
    *slot = want;
    return TRUE;
  }
  if (*slot != want) {
    g_set_error(error, DS_ERROR, DS_ERROR_SHAPE, "node '%s' (%s): %s: dtype %s vs %s", node->name,
                node->op_name, what, ds_dtype_name(*slot), ds_dtype_name(want));
    return FALSE;
  }
  return TRUE;
}

gboolean ds_ops_unify_dtypes(const DsNode *node, DsDType *in, int n_in, DsDType *out, int n_out,
                             GError **error)
{
  DsDType known = DS_DTYPE_UNKNOWN;
  char buf[16];
  for (int i = 0; i < n_in + n_out; i++) {
    DsDType d = i < n_in ? in[i] : out[i - n_in];
    if (d == DS_DTYPE_UNKNOWN)
      continue;
    if (known != DS_DTYPE_UNKNOWN && d != known) {
      char what[48];
      if (i < n_in)
        g_snprintf(what, sizeof what, "input '%s'", ds_ops_input_name(node, i, buf));
      else
        g_snprintf(what, sizeof what, "output %d", i - n_in);
      g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                  "node '%s' (%s): %s has dtype %s where the others have %s", node->name,
                  node->op_name, what, ds_dtype_name(d), ds_dtype_name(known));
      return FALSE;
    }
    known = d;
  }
  if (known == DS_DTYPE_UNKNOWN)
    return TRUE;
  for (int i = 0; i < n_in; i++)
    in[i] = known;
  for (int i = 0; i < n_out; i++)
    out[i] = known;
  return TRUE;
}

gboolean ds_ops_attr_axes(const DsNode *node, const char *key, int64_t *axes, int *n_out,
                          GError **error)
{
  return ds_node_attr_tuple(node, key, axes, DS_MAX_NDIM, n_out, error);
}

gboolean ds_ops_attr_require(const DsNode *node, const char *key, GError **error)
{
  /* Present is enough: some required attributes take "None" as a value (slice_axis's end). */
  if (ds_node_get_attr(node, key) != NULL)
    return TRUE;
  g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
              "node '%s' (%s): required attribute '%s' is missing", node->name, node->op_name, key);
  return FALSE;
}

gboolean ds_ops_attr_invalid(const DsNode *node, const char *key, const char *reason,
                             GError **error)
{
  const char *value = ds_node_get_attr(node, key);
  g_set_error(error, DS_ERROR, DS_ERROR_INVALID, "node '%s' (%s): attribute %s='%s': %s",
              node->name, node->op_name, key, value != NULL ? value : "", reason);
  return FALSE;
}

gboolean ds_ops_node_error(const DsNode *node, GError **error, int code, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  g_autofree char *msg = g_strdup_vprintf(format, args);
  va_end(args);
  g_set_error(error, DS_ERROR, code, "node '%s' (%s): %s", node->name, node->op_name, msg);
  return FALSE;
}

gboolean ds_ops_attr_int_range(const DsNode *node, const char *key, int64_t def, int64_t min,
                               int64_t max, int64_t *out, GError **error)
{
  if (!ds_node_attr_int(node, key, def, out, error))
    return FALSE;
  if (*out < min || *out > max)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "attribute %s=%" G_GINT64_FORMAT " is outside [%" G_GINT64_FORMAT
                             ", %" G_GINT64_FORMAT "]",
                             key, *out, min, max);
  return TRUE;
}

gboolean ds_ops_attr_float32(const DsNode *node, const char *key, double def, float *out,
                             GError **error)
{
  double v;
  if (!ds_node_attr_float(node, key, def, &v, error))
    return FALSE;
  *out = (float)v;
  return TRUE;
}

gboolean ds_ops_attr_opt_bool(const DsNode *node, const char *key, gboolean def, bool *out,
                              GError **error)
{
  gboolean v = def;
  if (!ds_node_attr_is_none(node, key) && !ds_node_attr_bool(node, key, def, &v, error))
    return FALSE;
  *out = v;
  return TRUE;
}

gboolean ds_ops_attr_spatial(const DsNode *node, const char *key, int n, int64_t def, int64_t min,
                             int64_t *out, GError **error)
{
  int64_t v[DS_MAX_NDIM];
  int k;
  if (!ds_node_attr_tuple(node, key, v, DS_MAX_NDIM, &k, error))
    return FALSE;
  if (k <= 0) {
    for (int i = 0; i < n; i++)
      out[i] = def;
    return TRUE;
  }
  const char *text = ds_node_get_attr(node, key);
  if (k != n)
    return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                             "attribute %s=%s has %d values, but the kernel has %d dims", key, text,
                             k, n);
  for (int i = 0; i < n; i++) {
    if (v[i] < min)
      return ds_ops_node_error(node, error, DS_ERROR_INVALID,
                               "attribute %s=%s: every value must be at least %" G_GINT64_FORMAT,
                               key, text, min);
    out[i] = v[i];
  }
  return TRUE;
}

gboolean ds_ops_assign_shape(DsShapeCtx *ctx, DsShape *slot, const DsShape *want, const char *what,
                             GError **error)
{
  GError *local = NULL;
  if (ds_shape_ctx_assign(ctx, slot, want, what, &local))
    return TRUE;
  g_clear_error(&local);
  g_autofree char *have = ds_shape_to_string(slot);
  g_autofree char *expect = ds_shape_to_string(want);
  ds_shape_ctx_set_error(ctx, error, "%s has shape %s, but %s is expected", what, have, expect);
  return FALSE;
}

gboolean ds_ops_check_rank(DsShapeCtx *ctx, const DsShape *s, int ndim, const char *what,
                           const char *layout, GError **error)
{
  if (s->ndim < 0 || s->ndim == ndim)
    return TRUE;
  g_autofree char *str = ds_shape_to_string(s);
  ds_shape_ctx_set_error(ctx, error, "%s must have %d dims (%s), but has shape %s", what, ndim,
                         layout, str);
  return FALSE;
}
