/* ds-ops-tensor.c: shape manipulation, creation, indexing and reductions: attributes, shape and
 * dtype rules.
 *
 * Names, aliases and defaults follow MXNet 1.x (src/operator/tensor/matrix_op-inl.h,
 * init_op.h, broadcast_reduce_op.h, indexing_op.h, src/operator/nn/concat.cc,
 * src/operator/sequence_mask-inl.h, swapaxis-inl.h). Every shape rule computes with the
 * ds_dim_* arithmetic; constants are only read to validate attributes against them.
 *
 * The NumPy-side ops (_np_reshape, _np_squeeze, _npi_pad; src/operator/numpy) and the forms
 * ONNX's importer needs (Flatten's axis, expand_dims with several axes, slice's axes,
 * _contrib_expand, cumsum, trilu, eye_like, depth_to_space's CRD mode, SequenceReverse) follow
 * the same conventions; where they extend an MXNet op, the MXNet spelling keeps its meaning.
 */
#include <math.h>
#include <string.h>

#include "ds-attr.h"
#include "ds-error.h"
#include "ds-grad.h"
#include "ds-grads.h"
#include "ds-ops-common.h"

static const char *const data_inputs[] = {"data", NULL};
static const char *const broadcast_like_inputs[] = {"lhs", "rhs", NULL};
static const char *const sequence_mask_inputs[] = {"data", "sequence_length", NULL};
static const char *const take_inputs[] = {"a", "indices", NULL};

/* Reads a tuple attribute of at most `max` values; *n is -1 when missing or "None". */
static gboolean attr_tuple(const DsNode *node, const char *key, int64_t *values, int max, int *n,
                           GError **error)
{
  return ds_node_attr_tuple(node, key, values, max, n, error);
}

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

/* Source ops take no inputs. */
static int count_0(const void *param)
{
  (void)param;
  return 0;
}

static gboolean set_output(DsShapeCtx *ctx, DsShape *out, const DsShape *want, GError **error)
{
  return ds_shape_ctx_assign(ctx, out, want, "output", error);
}

/* ------------------------------------------------------------------------------------------ */
/* Reshape */

static gboolean parse_reshape(const DsNode *node, void *param, GError **error)
{
  DsReshapeParam *p = param;
  gboolean reverse, keep_highest;
  if (!attr_tuple(node, "shape", p->shape, DS_RESHAPE_MAX_CODES, &p->n_shape, error) ||
      !ds_node_attr_bool(node, "reverse", FALSE, &reverse, error) ||
      !attr_tuple(node, "target_shape", p->target_shape, DS_MAX_NDIM, &p->n_target_shape, error) ||
      !ds_node_attr_bool(node, "keep_highest", FALSE, &keep_highest, error))
    return FALSE;
  p->reverse = reverse;
  p->keep_highest = keep_highest;
  if (p->n_shape < 0)
    p->n_shape = 0;
  for (int i = 0; i < p->n_shape; i++)
    if (p->shape[i] < -4)
      return ds_ops_attr_invalid(node, "shape", "codes below -4 do not exist", error);
  for (int i = 0; i < p->n_target_shape; i++)
    if (p->target_shape[i] < 0)
      return ds_ops_attr_invalid(node, "target_shape", "dims must not be negative", error);
  return TRUE;
}

static gboolean push_dim(DsShapeCtx *ctx, DsDim *dims, int *n, DsDim d, GError **error)
{
  if (*n >= DS_MAX_NDIM) {
    ds_shape_ctx_set_error(ctx, error, "the reshaped tensor would have more than %d dims",
                           DS_MAX_NDIM);
    return FALSE;
  }
  dims[(*n)++] = d;
  return TRUE;
}

/* Fills `*dim` with total / known, which must divide exactly when both are constants. */
static gboolean infer_quotient(DsShapeCtx *ctx, DsDim total, DsDim known, const char *what,
                               DsDim *dim, GError **error)
{
  if (ds_dim_is_value(known, 0)) {
    ds_shape_ctx_set_error(ctx, error, "cannot infer the %s dim: the other dims multiply to 0",
                           what);
    return FALSE;
  }
  DsDim rem = ds_dim_mod(ctx, total, known);
  if (ds_dim_is_const(rem) && rem.value != 0) {
    ds_shape_ctx_set_error(ctx, error,
                           "cannot infer the %s dim: %" G_GINT64_FORMAT " elements do not "
                           "divide by %" G_GINT64_FORMAT,
                           what, total.value, known.value);
    return FALSE;
  }
  if (!ds_dim_is_value(rem, 0) && ds_dim_is_known(total) && ds_dim_is_known(known)) {
    /* Symbolic: the -1 dim is an exact division only when the facts prove it. */
    g_autofree char *t = ds_dim_to_string(total), *k = ds_dim_to_string(known);
    ds_shape_ctx_set_error(ctx, error,
                           "cannot infer the %s dim: %s is not provably a multiple of %s", what,
                           t, k);
    return FALSE;
  }
  *dim = ds_dim_floordiv(ctx, total, known);
  return TRUE;
}

/* MXNet's InferReshapeShape, codes and quirks included (a -1 or a positive code consumes an
 * input dim too, so later 0s copy the dims after it). */
static gboolean reshape_codes(DsShapeCtx *ctx, const DsReshapeParam *p, const DsShape *in,
                              DsShape *result, GError **error)
{
  int dlen = in->ndim, n_codes = p->n_shape;
  DsDim src[DS_MAX_NDIM];
  int64_t codes[DS_RESHAPE_MAX_CODES];
  for (int i = 0; i < dlen; i++)
    src[i] = in->dims[p->reverse ? dlen - 1 - i : i];
  for (int i = 0; i < n_codes; i++)
    codes[i] = p->shape[p->reverse ? n_codes - 1 - i : i];

  DsDim tmp[DS_MAX_NDIM];
  int n = 0, src_idx = 0, inf_idx = -1;
  for (int i = 0; i < n_codes; i++) {
    int64_t code = codes[i];
    if (code == 0) {
      if (src_idx >= dlen) {
        ds_shape_ctx_set_error(ctx, error,
                               "shape code 0 (copy a dim) has no input dim left to copy: "
                               "the input has rank %d",
                               dlen);
        return FALSE;
      }
      if (!push_dim(ctx, tmp, &n, src[src_idx++], error))
        return FALSE;
    } else if (code == -1) {
      if (inf_idx >= 0) {
        ds_shape_ctx_set_error(ctx, error, "shape has more than one -1 (infer) code");
        return FALSE;
      }
      inf_idx = n;
      if (!push_dim(ctx, tmp, &n, ds_dim(1), error))
        return FALSE;
      src_idx++;
    } else if (code == -2) {
      while (src_idx < dlen)
        if (!push_dim(ctx, tmp, &n, src[src_idx++], error))
          return FALSE;
    } else if (code == -3) {
      if (src_idx + 1 >= dlen) {
        ds_shape_ctx_set_error(ctx, error,
                               "shape code -3 (merge two dims) needs two input dims from dim "
                               "%d, but the input has rank %d",
                               src_idx, dlen);
        return FALSE;
      }
      DsDim merged = ds_dim_mul(ctx, src[src_idx], src[src_idx + 1]);
      src_idx += 2;
      if (!push_dim(ctx, tmp, &n, merged, error))
        return FALSE;
    } else if (code == -4) {
      if (i + 2 >= n_codes) {
        ds_shape_ctx_set_error(ctx, error,
                               "shape code -4 (split a dim) must be followed by two dims");
        return FALSE;
      }
      if (src_idx >= dlen) {
        ds_shape_ctx_set_error(ctx, error,
                               "shape code -4 (split a dim) has no input dim left to split");
        return FALSE;
      }
      DsDim d0 = src[src_idx++];
      int64_t c1 = codes[++i], c2 = codes[++i];
      if ((c1 != -1 && c1 <= 0) || (c2 != -1 && c2 <= 0) || (c1 == -1 && c2 == -1)) {
        ds_shape_ctx_set_error(ctx, error,
                               "shape code -4 splits into (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                               "): each must be positive, or one -1",
                               c1, c2);
        return FALSE;
      }
      DsDim d1 = ds_dim(c1), d2 = ds_dim(c2);
      if (c1 == -1 && !infer_quotient(ctx, d0, d2, "split", &d1, error))
        return FALSE;
      if (c2 == -1 && !infer_quotient(ctx, d0, d1, "split", &d2, error))
        return FALSE;
      DsDim prod = ds_dim_mul(ctx, d1, d2);
      if (ds_dim_is_const(prod) && ds_dim_is_const(d0) && prod.value != d0.value) {
        ds_shape_ctx_set_error(ctx, error,
                               "shape code -4 splits dim %" G_GINT64_FORMAT
                               " into (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                               "), which does not multiply back to it",
                               d0.value, d1.value, d2.value);
        return FALSE;
      }
      if (!push_dim(ctx, tmp, &n, d1, error) || !push_dim(ctx, tmp, &n, d2, error))
        return FALSE;
    } else {
      if (!push_dim(ctx, tmp, &n, ds_dim(code), error))
        return FALSE;
      src_idx++;
    }
  }

  if (inf_idx >= 0) {
    DsDim total = ds_dim_product(ctx, in, 0, dlen);
    DsShape known_part = {.ndim = n};
    memcpy(known_part.dims, tmp, sizeof(DsDim) * n);
    DsDim known = ds_dim_product(ctx, &known_part, 0, n);
    if (!infer_quotient(ctx, total, known, "-1", &tmp[inf_idx], error))
      return FALSE;
  }
  result->ndim = n;
  for (int i = 0; i < n; i++)
    result->dims[i] = tmp[p->reverse ? n - 1 - i : i];
  return TRUE;
}

/* The deprecated target_shape: one 0 is inferred; keep_highest keeps the input's first dim. */
static gboolean reshape_target(DsShapeCtx *ctx, const DsReshapeParam *p, const DsShape *in,
                               DsShape *result, GError **error)
{
  int n = p->n_target_shape, inf_idx = -1, start = p->keep_highest ? 1 : 0;
  result->ndim = n;
  for (int i = 0; i < n; i++)
    result->dims[i] = ds_dim(p->target_shape[i]);
  if (p->keep_highest && n > 0 && in->ndim > 0)
    result->dims[0] = in->dims[0];
  for (int i = start; i < n; i++) {
    if (p->target_shape[i] != 0)
      continue;
    if (inf_idx >= 0) {
      ds_shape_ctx_set_error(ctx, error, "target_shape may have only one 0 (inferred) dim");
      return FALSE;
    }
    inf_idx = i;
  }
  if (inf_idx >= 0) {
    result->dims[inf_idx] = ds_dim(1);
    DsDim known = ds_dim_product(ctx, result, 0, n);
    DsDim total = ds_dim_product(ctx, in, 0, in->ndim);
    if (!infer_quotient(ctx, total, known, "0 (inferred)", &result->dims[inf_idx], error))
      return FALSE;
  }
  return TRUE;
}

static gboolean infer_shape_reshape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                    DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsReshapeParam *p = param;
  if (in[0].ndim < 0)
    return TRUE;
  DsShape result;
  if (p->n_shape > 0) {
    if (!reshape_codes(ctx, p, &in[0], &result, error))
      return FALSE;
  } else if (p->n_target_shape > 0) {
    if (!reshape_target(ctx, p, &in[0], &result, error))
      return FALSE;
  } else {
    return TRUE; /* no target: only a known output could say anything */
  }
  DsDim in_size = ds_dim_product(ctx, &in[0], 0, in[0].ndim);
  DsDim out_size = ds_dim_product(ctx, &result, 0, result.ndim);
  if (ds_dim_is_const(in_size) && ds_dim_is_const(out_size) && in_size.value != out_size.value) {
    g_autofree char *si = ds_shape_to_string(&in[0]);
    g_autofree char *so = ds_shape_to_string(&result);
    ds_shape_ctx_set_error(ctx, error,
                           "cannot reshape %s (%" G_GINT64_FORMAT
                           " elements) into %s (%" G_GINT64_FORMAT " elements)",
                           si, in_size.value, so, out_size.value);
    return FALSE;
  }
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* _np_reshape */

static gboolean parse_np_reshape(const DsNode *node, void *param, GError **error)
{
  DsNpReshapeParam *p = param;
  if (!ds_ops_attr_require(node, "newshape", error) ||
      !attr_tuple(node, "newshape", p->newshape, DS_MAX_NDIM, &p->ndim, error))
    return FALSE;
  p->ndim = MAX(p->ndim, 0);
  const char *order = ds_node_get_attr(node, "order");
  if (order != NULL && strcmp(order, "C") != 0)
    return ds_ops_attr_invalid(node, "order", "only 'C' is supported", error);
  int n_infer = 0;
  for (int i = 0; i < p->ndim; i++) {
    if (p->newshape[i] < -1)
      return ds_ops_attr_invalid(node, "newshape", "dims must be -1 or non-negative", error);
    n_infer += p->newshape[i] == -1;
  }
  if (n_infer > 1)
    return ds_ops_attr_invalid(node, "newshape", "only one dim may be -1", error);
  return TRUE;
}

static gboolean infer_shape_np_reshape(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                       DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsNpReshapeParam *p = param;
  DsShape result = {.ndim = p->ndim};
  int inf_idx = -1;
  for (int i = 0; i < p->ndim; i++) {
    result.dims[i] = ds_dim(p->newshape[i] == -1 ? 1 : p->newshape[i]);
    if (p->newshape[i] == -1)
      inf_idx = i;
  }
  if (in[0].ndim < 0) {
    if (inf_idx >= 0)
      return TRUE;
    return set_output(ctx, &out[0], &result, error);
  }
  DsDim total = ds_dim_product(ctx, &in[0], 0, in[0].ndim);
  if (inf_idx >= 0) {
    DsDim known = ds_dim_product(ctx, &result, 0, result.ndim);
    if (!infer_quotient(ctx, total, known, "-1", &result.dims[inf_idx], error))
      return FALSE;
  }
  DsDim size = ds_dim_product(ctx, &result, 0, result.ndim);
  if (ds_dim_is_const(total) && ds_dim_is_const(size) && total.value != size.value) {
    g_autofree char *si = ds_shape_to_string(&in[0]);
    g_autofree char *so = ds_shape_to_string(&result);
    ds_shape_ctx_set_error(ctx, error,
                           "cannot reshape %s (%" G_GINT64_FORMAT " elements) into %s (%" G_GINT64_FORMAT
                           " elements)",
                           si, total.value, so, size.value);
    return FALSE;
  }
  if (!ds_shape_ctx_unify_dim(ctx, &total, size, "the element count", error))
    return FALSE;
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* Flatten */

static gboolean parse_flatten(const DsNode *node, void *param, GError **error)
{
  DsFlattenParam *p = param;
  p->has_axis = !ds_node_attr_is_none(node, "axis");
  p->axis = 1;
  return !p->has_axis || attr_int32(node, "axis", 1, &p->axis, error);
}

static gboolean infer_shape_flatten(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                    DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsFlattenParam *p = param;
  int ndim = in[0].ndim;
  if (ndim < 0)
    return TRUE;
  if (ndim == 0 && !p->has_axis) {
    ds_shape_ctx_set_error(ctx, error, "cannot flatten a 0-dim tensor");
    return FALSE;
  }
  /* A negative axis counts from the end: -1 is ndim - 1, not expand_dims' ndim. */
  int axis = p->axis < 0 ? p->axis + ndim : p->axis;
  if (axis < 0 || axis > ndim) {
    ds_shape_ctx_set_error(ctx, error, "axis %d is out of range for rank %d", p->axis, ndim);
    return FALSE;
  }
  DsShape result = {.ndim = 2};
  result.dims[0] = ds_dim_product(ctx, &in[0], 0, axis);
  result.dims[1] = ds_dim_product(ctx, &in[0], axis, ndim);
  if (!set_output(ctx, &out[0], &result, error))
    return FALSE;
  /* With one leading dim, it passes through unchanged, so a known output tells the input's. */
  if (axis == 1 && out[0].ndim == 2)
    return ds_shape_ctx_unify_dim(ctx, &in[0].dims[0], out[0].dims[0], "data", error);
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* expand_dims */

static gboolean parse_expand_dims(const DsNode *node, void *param, GError **error)
{
  DsExpandDimsParam *p = param;
  if (!ds_ops_attr_require(node, "axis", error) ||
      !attr_tuple(node, "axis", p->axes, DS_MAX_NDIM, &p->n_axes, error))
    return FALSE;
  if (p->n_axes <= 0)
    return ds_ops_attr_invalid(node, "axis", "must name at least one axis", error);
  for (int i = 0; i < p->n_axes; i++)
    if (p->axes[i] < G_MININT32 || p->axes[i] > G_MAXINT32)
      return ds_ops_attr_invalid(node, "axis", "is out of range", error);
  return TRUE;
}

/* Marks the new axes of a rank-`ondim` result; FALSE if one is out of range or repeated. */
static gboolean expand_dims_mask(DsShapeCtx *ctx, const DsExpandDimsParam *p, int ondim,
                                 gboolean *is_new, GError **error)
{
  for (int i = 0; i < ondim; i++)
    is_new[i] = FALSE;
  for (int i = 0; i < p->n_axes; i++) {
    int axis;
    if (!ds_shape_ctx_axis(ctx, p->axes[i], ondim, FALSE, &axis, error))
      return FALSE;
    if (is_new[axis]) {
      ds_shape_ctx_set_error(ctx, error, "axis %d is listed twice", axis);
      return FALSE;
    }
    is_new[axis] = TRUE;
  }
  return TRUE;
}

static gboolean infer_shape_expand_dims(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                        DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsExpandDimsParam *p = param;
  int n = p->n_axes;
  int indim = in[0].ndim >= 0 ? in[0].ndim : (out[0].ndim >= n ? out[0].ndim - n : -1);
  if (indim < 0)
    return TRUE;
  int ondim = indim + n;
  if (ondim > DS_MAX_NDIM) {
    ds_shape_ctx_set_error(ctx, error, "the result would have more than %d dims", DS_MAX_NDIM);
    return FALSE;
  }
  gboolean is_new[DS_MAX_NDIM];
  if (!expand_dims_mask(ctx, p, ondim, is_new, error))
    return FALSE;
  DsShape fwd = {.ndim = ondim};
  for (int i = 0, k = 0; i < ondim; i++)
    fwd.dims[i] = is_new[i] ? ds_dim(1) : (in[0].ndim >= 0 ? in[0].dims[k++] : DS_DIM_UNKNOWN);
  if (!set_output(ctx, &out[0], &fwd, error))
    return FALSE;
  DsShape back = {.ndim = indim};
  for (int i = 0, k = 0; i < ondim; i++)
    if (!is_new[i])
      back.dims[k++] = out[0].dims[i];
  return ds_shape_ctx_assign(ctx, &in[0], &back, "data", error);
}

/* ------------------------------------------------------------------------------------------ */
/* squeeze, _np_squeeze */

static gboolean parse_squeeze(const DsNode *node, void *param, GError **error)
{
  DsSqueezeParam *p = param;
  p->numpy = FALSE;
  return ds_ops_attr_axes(node, "axis", p->axes, &p->n_axes, error);
}

static gboolean parse_np_squeeze(const DsNode *node, void *param, GError **error)
{
  DsSqueezeParam *p = param;
  if (!ds_ops_attr_axes(node, "axis", p->axes, &p->n_axes, error))
    return FALSE;
  p->numpy = TRUE;
  return TRUE;
}

static gboolean infer_shape_squeeze(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                    DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsSqueezeParam *p = param;
  const DsShape *s = &in[0];
  if (s->ndim < 0)
    return TRUE;
  gboolean drop[DS_MAX_NDIM] = {FALSE};
  if (p->n_axes >= 0) {
    for (int i = 0; i < p->n_axes; i++) {
      int axis;
      if (!ds_shape_ctx_axis(ctx, p->axes[i], s->ndim, FALSE, &axis, error))
        return FALSE;
      if (drop[axis]) {
        ds_shape_ctx_set_error(ctx, error, "axis %d is listed twice", axis);
        return FALSE;
      }
      if (ds_dim_is_known(s->dims[axis]) && !ds_dim_is_value(s->dims[axis], 1)) {
        g_autofree char *ss = ds_shape_to_string(s);
        ds_shape_ctx_set_error(ctx, error, "cannot squeeze axis %d of %s: its size is not 1", axis,
                               ss);
        return FALSE;
      }
      drop[axis] = TRUE;
    }
  } else {
    /* Without axes, which dims go depends on their values. */
    for (int i = 0; i < s->ndim; i++) {
      if (!ds_dim_is_known(s->dims[i]))
        return TRUE;
      drop[i] = ds_dim_is_value(s->dims[i], 1);
    }
  }
  DsShape result = {.ndim = 0};
  for (int i = 0; i < s->ndim; i++)
    if (!drop[i])
      result.dims[result.ndim++] = s->dims[i];
  if (result.ndim == 0 && !p->numpy) { /* MXNet 1.x keeps one dim: (1, 1) squeezes to (1,) */
    result.ndim = 1;
    result.dims[0] = ds_dim(1);
  }
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* reshape_like */

/* Reads one optional int bound (MXNet's optional<int>: missing or "None" is absent). */
static gboolean attr_opt_int32(const DsNode *node, const char *key, bool *has, int *out,
                               GError **error)
{
  *has = !ds_node_attr_is_none(node, key);
  return !*has || attr_int32(node, key, 0, out, error);
}

static gboolean parse_reshape_like(const DsNode *node, void *param, GError **error)
{
  DsReshapeLikeParam *p = param;
  return attr_opt_int32(node, "lhs_begin", &p->has_lhs_begin, &p->lhs_begin, error) &&
         attr_opt_int32(node, "lhs_end", &p->has_lhs_end, &p->lhs_end, error) &&
         attr_opt_int32(node, "rhs_begin", &p->has_rhs_begin, &p->rhs_begin, error) &&
         attr_opt_int32(node, "rhs_end", &p->has_rhs_end, &p->rhs_end, error);
}

/* One side's [begin, end) for rank `ndim`: begin defaults to 0 and end to ndim, negatives count
 * from the end, and the range must be non-empty and inside the shape, as MXNet checks. */
static gboolean reshape_like_range(DsShapeCtx *ctx, const char *side, int ndim, bool has_begin,
                                   int begin, bool has_end, int end, int *b, int *e, GError **error)
{
  int64_t cb = has_begin ? begin : 0, ce = has_end ? end : ndim;
  if (cb < 0)
    cb += ndim;
  if (ce < 0)
    ce += ndim;
  if (cb < 0 || ce > ndim || cb >= ce) {
    ds_shape_ctx_set_error(ctx, error,
                           "%s_begin=%" G_GINT64_FORMAT ", %s_end=%" G_GINT64_FORMAT
                           " (normalised) is not a non-empty range of the %d dims of %s",
                           side, cb, side, ce, ndim, side);
    return FALSE;
  }
  *b = (int)cb;
  *e = (int)ce;
  return TRUE;
}

/* MXNet's ReshapeLikeShapeCompute: forwards only. The replaced dims and their replacement must
 * hold as many elements: checked on constants, recorded as a fact on symbols. */
static gboolean infer_shape_reshape_like(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                         DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsReshapeLikeParam *p = param;
  const DsShape *lhs = &in[0], *rhs = &in[1];
  if (lhs->ndim < 0 || rhs->ndim < 0)
    return TRUE;
  int lb, le, rb, re;
  if (!reshape_like_range(ctx, "lhs", lhs->ndim, p->has_lhs_begin, p->lhs_begin, p->has_lhs_end,
                          p->lhs_end, &lb, &le, error) ||
      !reshape_like_range(ctx, "rhs", rhs->ndim, p->has_rhs_begin, p->rhs_begin, p->has_rhs_end,
                          p->rhs_end, &rb, &re, error))
    return FALSE;
  int ndim = lhs->ndim - (le - lb) + (re - rb);
  if (ndim > DS_MAX_NDIM) {
    ds_shape_ctx_set_error(ctx, error, "the result would have %d dims, more than %d", ndim,
                           DS_MAX_NDIM);
    return FALSE;
  }
  DsDim replaced = ds_dim_product(ctx, lhs, lb, le);
  DsDim replacement = ds_dim_product(ctx, rhs, rb, re);
  if (ds_dim_is_const(replaced) && ds_dim_is_const(replacement) &&
      replaced.value != replacement.value) {
    g_autofree char *sl = ds_shape_to_string(lhs);
    g_autofree char *sr = ds_shape_to_string(rhs);
    ds_shape_ctx_set_error(ctx, error,
                           "cannot reshape dims [%d, %d) of lhs %s (%" G_GINT64_FORMAT
                           " elements) like dims [%d, %d) of rhs %s (%" G_GINT64_FORMAT
                           " elements)",
                           lb, le, sl, replaced.value, rb, re, sr, replacement.value);
    return FALSE;
  }
  if (!ds_shape_ctx_unify_dim(ctx, &replaced, replacement, "the reshaped element count", error))
    return FALSE;
  DsShape result = {.ndim = ndim};
  int k = 0;
  for (int d = 0; d < lb; d++)
    result.dims[k++] = lhs->dims[d];
  for (int d = rb; d < re; d++)
    result.dims[k++] = rhs->dims[d];
  for (int d = le; d < lhs->ndim; d++)
    result.dims[k++] = lhs->dims[d];
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* transpose, SwapAxis */

static gboolean parse_transpose(const DsNode *node, void *param, GError **error)
{
  DsTransposeParam *p = param;
  if (!ds_ops_attr_axes(node, "axes", p->axes, &p->n_axes, error))
    return FALSE;
  if (p->n_axes < 0)
    p->n_axes = 0;
  return TRUE;
}

/* The permutation for rank `ndim`: perm[i] is the input axis output axis i reads. */
static gboolean transpose_perm(DsShapeCtx *ctx, const DsTransposeParam *p, int ndim, int *perm,
                               GError **error)
{
  if (p->n_axes == 0) {
    for (int i = 0; i < ndim; i++)
      perm[i] = ndim - 1 - i;
    return TRUE;
  }
  if (p->n_axes != ndim) {
    ds_shape_ctx_set_error(ctx, error, "axes has %d entries for a tensor of rank %d", p->n_axes,
                           ndim);
    return FALSE;
  }
  gboolean seen[DS_MAX_NDIM] = {FALSE};
  for (int i = 0; i < ndim; i++) {
    if (!ds_shape_ctx_axis(ctx, p->axes[i], ndim, FALSE, &perm[i], error))
      return FALSE;
    if (seen[perm[i]]) {
      ds_shape_ctx_set_error(ctx, error, "axes is not a permutation: axis %d appears twice",
                             perm[i]);
      return FALSE;
    }
    seen[perm[i]] = TRUE;
  }
  return TRUE;
}

/* out[i] = in[perm[i]], in both directions. */
static gboolean permute_both_ways(DsShapeCtx *ctx, const int *perm, int ndim, DsShape *in,
                                  DsShape *out, GError **error)
{
  DsShape fwd = {.ndim = ndim}, back = {.ndim = ndim};
  for (int i = 0; i < ndim; i++) {
    fwd.dims[i] = in->ndim >= 0 ? in->dims[perm[i]] : DS_DIM_UNKNOWN;
    back.dims[perm[i]] = out->ndim >= 0 ? out->dims[i] : DS_DIM_UNKNOWN;
  }
  return set_output(ctx, out, &fwd, error) && ds_shape_ctx_assign(ctx, in, &back, "data", error);
}

static gboolean infer_shape_transpose(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                      DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  int ndim = in[0].ndim >= 0 ? in[0].ndim : out[0].ndim;
  if (ndim < 0)
    return TRUE;
  int perm[DS_MAX_NDIM];
  return transpose_perm(ctx, param, ndim, perm, error) &&
         permute_both_ways(ctx, perm, ndim, &in[0], &out[0], error);
}

static gboolean parse_swap_axis(const DsNode *node, void *param, GError **error)
{
  DsSwapAxisParam *p = param;
  return attr_int32(node, "dim1", 0, &p->dim1, error) &&
         attr_int32(node, "dim2", 0, &p->dim2, error);
}

static gboolean infer_shape_swap_axis(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                      DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsSwapAxisParam *p = param;
  int ndim = in[0].ndim >= 0 ? in[0].ndim : out[0].ndim;
  if (ndim < 0)
    return TRUE;
  int d1, d2, perm[DS_MAX_NDIM];
  if (!ds_shape_ctx_axis(ctx, p->dim1, ndim, FALSE, &d1, error) ||
      !ds_shape_ctx_axis(ctx, p->dim2, ndim, FALSE, &d2, error))
    return FALSE;
  for (int i = 0; i < ndim; i++)
    perm[i] = i;
  perm[d1] = d2;
  perm[d2] = d1;
  return permute_both_ways(ctx, perm, ndim, &in[0], &out[0], error);
}

/* ------------------------------------------------------------------------------------------ */
/* Concat */

static gboolean parse_concat(const DsNode *node, void *param, GError **error)
{
  DsConcatParam *p = param;
  if (!ds_ops_attr_require(node, "num_args", error) ||
      !attr_int32(node, "num_args", 0, &p->num_args, error) ||
      !attr_int32(node, "dim", 1, &p->dim, error))
    return FALSE;
  if (p->num_args < 1 || p->num_args > 4096)
    return ds_ops_attr_invalid(node, "num_args", "must be between 1 and 4096", error);
  return TRUE;
}

static int concat_num_inputs(const void *param)
{
  return ((const DsConcatParam *)param)->num_args;
}

/* MXNet's ConcatShape: every dim but `dim` is shared; along `dim` the output is the sum, and a
 * single unknown input takes what the known output leaves. */
static gboolean infer_shape_concat(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                   DsShape *in, DsShape *out, GError **error)
{
  const DsConcatParam *p = param;
  int n = p->num_args, ndim = out[0].ndim;
  char buf[16], what[48];
  for (int i = 0; i < n && ndim < 0; i++)
    ndim = in[i].ndim;
  if (ndim < 0)
    return TRUE;
  int axis;
  if (!ds_shape_ctx_axis(ctx, p->dim, ndim, FALSE, &axis, error))
    return FALSE;

  /* The shared dims, merged over everything that knows its rank. */
  DsShape common = {.ndim = ndim};
  for (int d = 0; d < ndim; d++)
    common.dims[d] = DS_DIM_UNKNOWN;
  for (int i = 0; i <= n; i++) {
    const DsShape *s = i < n ? &in[i] : &out[0];
    if (i < n)
      g_snprintf(what, sizeof what, "input '%s'", ds_ops_input_name(node, i, buf));
    else
      g_snprintf(what, sizeof what, "output");
    if (s->ndim < 0)
      continue;
    if (s->ndim != ndim) {
      g_autofree char *ss = ds_shape_to_string(s);
      ds_shape_ctx_set_error(ctx, error, "%s has rank %d (%s) where the others have rank %d", what,
                             s->ndim, ss, ndim);
      return FALSE;
    }
    for (int d = 0; d < ndim; d++) {
      if (d == axis)
        continue;
      if (!ds_shape_ctx_unify_dim(ctx, &common.dims[d], s->dims[d], what, error))
        return FALSE;
    }
  }

  /* Sum along the axis; remember a single unknown input. */
  DsDim sum = ds_dim(0);
  int unknown = -1, n_unknown = 0;
  for (int i = 0; i < n; i++) {
    if (in[i].ndim < 0 || !ds_dim_is_known(in[i].dims[axis])) {
      unknown = i;
      n_unknown++;
      continue;
    }
    sum = ds_dim_add(ctx, sum, in[i].dims[axis]);
  }
  DsShape result = common;
  result.dims[axis] = n_unknown == 0 ? sum : DS_DIM_UNKNOWN;
  if (!set_output(ctx, &out[0], &result, error))
    return FALSE;
  for (int i = 0; i < n; i++) {
    DsShape want = common;
    want.dims[axis] = in[i].ndim >= 0 ? in[i].dims[axis] : DS_DIM_UNKNOWN;
    if (n_unknown == 1 && i == unknown && ds_dim_is_known(out[0].dims[axis])) {
      DsDim rest = ds_dim_sub(ctx, out[0].dims[axis], sum);
      if (ds_dim_is_const(out[0].dims[axis]) && ds_dim_is_const(sum) &&
          sum.value > out[0].dims[axis].value) {
        ds_shape_ctx_set_error(ctx, error,
                               "the inputs already have %" G_GINT64_FORMAT " along axis %d, "
                               "more than the output's %" G_GINT64_FORMAT,
                               sum.value, axis, out[0].dims[axis].value);
        return FALSE;
      }
      want.dims[axis] = rest;
    }
    g_snprintf(what, sizeof what, "input '%s'", ds_ops_input_name(node, i, buf));
    if (!ds_shape_ctx_assign(ctx, &in[i], &want, what, error))
      return FALSE;
  }
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* broadcast_axis, broadcast_to, broadcast_like */

static gboolean parse_broadcast_axis(const DsNode *node, void *param, GError **error)
{
  DsBroadcastAxisParam *p = param;
  int n_axis, n_size;
  if (!ds_ops_attr_axes(node, "axis", p->axis, &n_axis, error) ||
      !attr_tuple(node, "size", p->size, DS_MAX_NDIM, &n_size, error))
    return FALSE;
  n_axis = MAX(n_axis, 0);
  n_size = MAX(n_size, 0);
  if (n_axis != n_size)
    return ds_ops_attr_invalid(node, "size", "must have one entry per axis", error);
  for (int i = 0; i < n_size; i++)
    if (p->size[i] < 0)
      return ds_ops_attr_invalid(node, "size", "sizes must not be negative", error);
  p->n_axes = n_axis;
  return TRUE;
}

static gboolean infer_shape_broadcast_axis(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                           DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsBroadcastAxisParam *p = param;
  int ndim = in[0].ndim >= 0 ? in[0].ndim : out[0].ndim;
  if (ndim < 0)
    return TRUE;
  gboolean is_axis[DS_MAX_NDIM] = {FALSE};
  int64_t size[DS_MAX_NDIM];
  for (int i = 0; i < p->n_axes; i++) {
    int axis;
    if (!ds_shape_ctx_axis(ctx, p->axis[i], ndim, FALSE, &axis, error))
      return FALSE;
    is_axis[axis] = TRUE;
    size[axis] = p->size[i];
  }
  DsShape fwd = {.ndim = ndim}, back = {.ndim = ndim};
  for (int d = 0; d < ndim; d++) {
    DsDim din = in[0].ndim >= 0 ? in[0].dims[d] : DS_DIM_UNKNOWN;
    DsDim dout = out[0].ndim >= 0 ? out[0].dims[d] : DS_DIM_UNKNOWN;
    if (is_axis[d]) {
      if (ds_dim_is_known(din) && !ds_dim_is_value(din, 1)) {
        g_autofree char *si = ds_shape_to_string(&in[0]);
        ds_shape_ctx_set_error(ctx, error, "cannot broadcast axis %d of %s: its size is not 1", d,
                               si);
        return FALSE;
      }
      fwd.dims[d] = ds_dim(size[d]);
      back.dims[d] = ds_dim(1);
    } else {
      fwd.dims[d] = din;
      back.dims[d] = dout;
    }
  }
  return set_output(ctx, &out[0], &fwd, error) &&
         ds_shape_ctx_assign(ctx, &in[0], &back, "data", error);
}

static gboolean parse_broadcast_to(const DsNode *node, void *param, GError **error)
{
  DsBroadcastToParam *p = param;
  if (!attr_tuple(node, "shape", p->shape, DS_MAX_NDIM, &p->ndim, error))
    return FALSE;
  p->ndim = MAX(p->ndim, 0);
  for (int i = 0; i < p->ndim; i++)
    if (p->shape[i] < 0)
      return ds_ops_attr_invalid(node, "shape", "dims must not be negative", error);
  return TRUE;
}

/* One dim of a broadcast to `target` (a known dim, or unknown to keep the input's). */
static gboolean broadcast_dim(DsShapeCtx *ctx, const DsShape *from, int d, DsDim target,
                              const char *target_text, DsDim *result, GError **error)
{
  DsDim din = from->dims[d];
  if (!ds_dim_is_known(target)) {
    *result = din;
    return TRUE;
  }
  if (ds_dim_is_known(din) && !ds_dim_is_value(din, 1)) {
    DsDim merged = din;
    GError *local = NULL;
    if (!ds_shape_ctx_unify_dim(ctx, &merged, target, "data", &local)) {
      g_clear_error(&local);
      g_autofree char *sf = ds_shape_to_string(from);
      ds_shape_ctx_set_error(ctx, error,
                             "cannot broadcast %s to %s: axis %d is neither 1 "
                             "nor the target size",
                             sf, target_text, d);
      return FALSE;
    }
  }
  *result = target;
  return TRUE;
}

static gboolean infer_shape_broadcast_to(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                         DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsBroadcastToParam *p = param;
  if (in[0].ndim < 0)
    return TRUE;
  DsShape target = {.ndim = p->ndim};
  for (int i = 0; i < p->ndim; i++)
    target.dims[i] = p->shape[i] != 0 ? ds_dim(p->shape[i]) : DS_DIM_UNKNOWN;
  g_autofree char *st = ds_shape_to_string(&target);
  if (in[0].ndim != p->ndim) {
    g_autofree char *si = ds_shape_to_string(&in[0]);
    ds_shape_ctx_set_error(ctx, error, "cannot broadcast %s to %s: the ranks differ", si, st);
    return FALSE;
  }
  DsShape result = {.ndim = p->ndim};
  for (int d = 0; d < p->ndim; d++)
    if (!broadcast_dim(ctx, &in[0], d, target.dims[d], st, &result.dims[d], error))
      return FALSE;
  if (!set_output(ctx, &out[0], &result, error))
    return FALSE;
  /* Kept dims (code 0) pass through, so the output tells the input's. */
  for (int d = 0; d < p->ndim; d++)
    if (p->shape[d] == 0 &&
        !ds_shape_ctx_unify_dim(ctx, &in[0].dims[d], out[0].dims[d], "data", error))
      return FALSE;
  return TRUE;
}

static gboolean parse_broadcast_like(const DsNode *node, void *param, GError **error)
{
  DsBroadcastLikeParam *p = param;
  if (!ds_ops_attr_axes(node, "lhs_axes", p->lhs_axes, &p->n_lhs_axes, error) ||
      !ds_ops_attr_axes(node, "rhs_axes", p->rhs_axes, &p->n_rhs_axes, error))
    return FALSE;
  if (p->n_lhs_axes >= 0 && p->n_rhs_axes >= 0) {
    if (p->n_lhs_axes != p->n_rhs_axes)
      return ds_ops_attr_invalid(node, "rhs_axes", "must have as many axes as lhs_axes", error);
    if (p->n_lhs_axes == 0)
      return ds_ops_attr_invalid(node, "lhs_axes", "an empty axes tuple is not allowed", error);
  }
  return TRUE;
}

static gboolean infer_shape_broadcast_like(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                           DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsBroadcastLikeParam *p = param;
  const DsShape *lhs = &in[0], *rhs = &in[1];
  if (lhs->ndim < 0 || rhs->ndim < 0)
    return TRUE;
  g_autofree char *srhs = ds_shape_to_string(rhs);
  DsShape result = *lhs;
  if (p->n_lhs_axes < 0 || p->n_rhs_axes < 0) {
    if (lhs->ndim != rhs->ndim) {
      g_autofree char *slhs = ds_shape_to_string(lhs);
      ds_shape_ctx_set_error(ctx, error, "lhs %s cannot broadcast like rhs %s: ranks differ", slhs,
                             srhs);
      return FALSE;
    }
    for (int d = 0; d < lhs->ndim; d++) {
      DsDim target = rhs->dims[d];
      if (!ds_dim_is_known(target)) {
        /* Unknown rhs dim: the result is lhs's unless lhs's is 1 (then it is rhs's). */
        result.dims[d] = ds_dim_is_value(lhs->dims[d], 1) ? DS_DIM_UNKNOWN : lhs->dims[d];
        continue;
      }
      if (!broadcast_dim(ctx, lhs, d, target, srhs, &result.dims[d], error))
        return FALSE;
    }
  } else {
    for (int i = 0; i < p->n_lhs_axes; i++) {
      int from, to;
      if (!ds_shape_ctx_axis(ctx, p->lhs_axes[i], lhs->ndim, FALSE, &from, error) ||
          !ds_shape_ctx_axis(ctx, p->rhs_axes[i], rhs->ndim, FALSE, &to, error))
        return FALSE;
      if (ds_dim_is_known(lhs->dims[from]) && !ds_dim_is_value(lhs->dims[from], 1)) {
        g_autofree char *slhs = ds_shape_to_string(lhs);
        ds_shape_ctx_set_error(ctx, error, "cannot broadcast axis %d of lhs %s: size is not 1",
                               from, slhs);
        return FALSE;
      }
      result.dims[from] = rhs->dims[to];
    }
  }
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* _arange, _zeros, _ones, _full */

static gboolean parse_arange(const DsNode *node, void *param, GError **error)
{
  DsArangeParam *p = param;
  gboolean infer_range;
  int64_t repeat;
  if (!ds_node_attr_float(node, "start", 0.0, &p->start, error) ||
      !ds_node_attr_float(node, "step", 1.0, &p->step, error) ||
      !ds_node_attr_int(node, "repeat", 1, &repeat, error) ||
      !ds_node_attr_bool(node, "infer_range", FALSE, &infer_range, error) ||
      !ds_node_attr_dtype(node, "dtype", DS_DTYPE_FLOAT32, &p->dtype, error))
    return FALSE;
  p->infer_range = infer_range;
  p->has_stop = !ds_node_attr_is_none(node, "stop");
  if (p->has_stop && !ds_node_attr_float(node, "stop", 0.0, &p->stop, error))
    return FALSE;
  if (!p->has_stop && !infer_range) { /* MXNet's RangeParamParser: arange(n) is [0, n) */
    p->stop = p->start;
    p->start = 0.0;
    p->has_stop = TRUE;
  }
  if (p->step == 0.0)
    return ds_ops_attr_invalid(node, "step", "must not be 0", error);
  if (repeat <= 0 || repeat > G_MAXINT32)
    return ds_ops_attr_invalid(node, "repeat", "must be positive", error);
  p->repeat = (int)repeat;
  if (p->has_stop && !(p->step > 0 ? p->start < p->stop : p->start > p->stop)) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                "node '%s' (%s): invalid range (start, stop, step) = (%g, %g, %g)", node->name,
                node->op_name, p->start, p->stop, p->step);
    return FALSE;
  }
  if (!ds_dtype_is_valid(p->dtype) || ds_dtype_is_storage_only(p->dtype) || p->dtype == DS_DTYPE_BOOL)
    return ds_ops_attr_invalid(node, "dtype", "is not a numeric dtype _arange supports", error);
  return TRUE;
}

static gboolean infer_shape_arange(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                   DsShape *in, DsShape *out, GError **error)
{
  (void)in;
  const DsArangeParam *p = param;
  if (!p->has_stop)
    return TRUE; /* infer_range: the consumers decide the length */
  /* Exactly MXNet's RangeShape: ceil in double, then times repeat. */
  double length = ceil((p->stop - p->start) / p->step) * p->repeat;
  if (!(length >= 0 && length < 9.0e15)) {
    ds_shape_ctx_set_error(ctx, error, "the range holds %g elements", length);
    return FALSE;
  }
  (void)node;
  DsShape result = {.ndim = 1, .dims = {ds_dim((int64_t)length)}};
  return set_output(ctx, &out[0], &result, error);
}

/* MXNet's RangeLikeParam: no `stop` (the length comes from the data) and an optional axis. */
static gboolean parse_arange_like(const DsNode *node, void *param, GError **error)
{
  DsArangeLikeParam *p = param;
  int64_t repeat;
  if (!ds_node_attr_float(node, "start", 0.0, &p->start, error) ||
      !ds_node_attr_float(node, "step", 1.0, &p->step, error) ||
      !ds_node_attr_int(node, "repeat", 1, &repeat, error) ||
      !ds_node_attr_dtype(node, "dtype", DS_DTYPE_FLOAT32, &p->dtype, error))
    return FALSE;
  /* MXNet only rejects repeat <= 0 in _arange's shape rule, but i / repeat needs it here. */
  if (repeat <= 0 || repeat > G_MAXINT32)
    return ds_ops_attr_invalid(node, "repeat", "must be positive", error);
  p->repeat = (int)repeat;
  p->has_axis = !ds_node_attr_is_none(node, "axis");
  if (p->has_axis && !attr_int32(node, "axis", 0, &p->axis, error))
    return FALSE;
  if (!ds_dtype_is_valid(p->dtype) || ds_dtype_is_storage_only(p->dtype) || p->dtype == DS_DTYPE_BOOL)
    return ds_ops_attr_invalid(node, "dtype", "is not a numeric dtype arange_like supports",
                               error);
  return TRUE;
}

/* MXNet's RangeLikeShape: forwards only, from the data's shape, so the length is whatever the
 * data's dim is, an expression included. */
static gboolean infer_shape_arange_like(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                        DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsArangeLikeParam *p = param;
  if (in[0].ndim < 0)
    return TRUE;
  if (!p->has_axis)
    return set_output(ctx, &out[0], &in[0], error);
  int axis;
  if (!ds_shape_ctx_axis(ctx, p->axis, in[0].ndim, FALSE, &axis, error))
    return FALSE;
  DsShape result = {.ndim = 1, .dims = {in[0].dims[axis]}};
  return set_output(ctx, &out[0], &result, error);
}

/* The output takes `dtype` whatever the data's dtype (MXNet's InitType with one input). */
static gboolean infer_type_arange_like(const DsNode *node, const void *param, DsDType *in,
                                       DsDType *out, GError **error)
{
  (void)in;
  return ds_ops_assign_dtype(node, &out[0], ((const DsArangeLikeParam *)param)->dtype, "output",
                             error);
}

static gboolean parse_init_common(const DsNode *node, DsInitParam *p, GError **error)
{
  if (!attr_tuple(node, "shape", p->shape, DS_MAX_NDIM, &p->ndim, error) ||
      !ds_node_attr_dtype(node, "dtype", DS_DTYPE_FLOAT32, &p->dtype, error))
    return FALSE;
  if (p->ndim == 0)
    p->ndim = -1; /* "()" is an unknown shape in MXNet 1.x */
  for (int i = 0; i < p->ndim; i++)
    if (p->shape[i] < -1)
      return ds_ops_attr_invalid(node, "shape", "dims must not be negative", error);
  if (ds_dtype_is_storage_only(p->dtype))
    return ds_ops_attr_invalid(node, "dtype", "is a storage type, which only Cast computes with",
                               error);
  return TRUE;
}

static gboolean parse_zeros(const DsNode *node, void *param, GError **error)
{
  DsInitParam *p = param;
  p->value = 0.0;
  return parse_init_common(node, p, error);
}

static gboolean parse_ones(const DsNode *node, void *param, GError **error)
{
  DsInitParam *p = param;
  p->value = 1.0;
  return parse_init_common(node, p, error);
}

static gboolean parse_full(const DsNode *node, void *param, GError **error)
{
  DsInitParam *p = param;
  return parse_init_common(node, p, error) && ds_ops_attr_require(node, "value", error) &&
         ds_node_attr_float(node, "value", 0.0, &p->value, error);
}

/* The declared dims unify with what the output slot already holds; 0 dims stay unknown until
 * a consumer's rule fills them (the begin states of mms_lstm_ptb are "(2, 0, 200)"). */
static gboolean infer_shape_init(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                 DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  (void)in;
  const DsInitParam *p = param;
  if (p->ndim < 0)
    return TRUE;
  DsShape declared = {.ndim = p->ndim};
  for (int i = 0; i < p->ndim; i++)
    declared.dims[i] = p->shape[i] > 0 ? ds_dim(p->shape[i]) : DS_DIM_UNKNOWN;
  return set_output(ctx, &out[0], &declared, error);
}

static gboolean infer_type_arange(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                  GError **error)
{
  (void)in;
  return ds_ops_assign_dtype(node, &out[0], ((const DsArangeParam *)param)->dtype, "output", error);
}

static gboolean infer_type_init(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                GError **error)
{
  (void)in;
  return ds_ops_assign_dtype(node, &out[0], ((const DsInitParam *)param)->dtype, "output", error);
}

/* ------------------------------------------------------------------------------------------ */
/* SequenceMask */

static gboolean parse_sequence_mask(const DsNode *node, void *param, GError **error)
{
  DsSequenceMaskParam *p = param;
  gboolean use;
  if (!ds_node_attr_bool(node, "use_sequence_length", FALSE, &use, error) ||
      !ds_node_attr_float(node, "value", 0.0, &p->value, error) ||
      !attr_int32(node, "axis", 0, &p->axis, error))
    return FALSE;
  p->use_sequence_length = use;
  if (p->axis != 0 && p->axis != 1)
    return ds_ops_attr_invalid(node, "axis", "must be 0 or 1", error);
  return TRUE;
}

static int sequence_mask_num_inputs(const void *param)
{
  return ((const DsSequenceMaskParam *)param)->use_sequence_length ? 2 : 1;
}

static gboolean infer_shape_sequence_mask(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                          DsShape *in, DsShape *out, GError **error)
{
  const DsSequenceMaskParam *p = param;
  if (!ds_ops_unify_shapes(ctx, node, in, 1, out, 1, error))
    return FALSE;
  if (in[0].ndim < 0)
    return TRUE;
  if (in[0].ndim < 2) {
    g_autofree char *s = ds_shape_to_string(&in[0]);
    ds_shape_ctx_set_error(ctx, error, "data %s must have rank 2 or more", s);
    return FALSE;
  }
  if (!p->use_sequence_length)
    return TRUE;
  /* One length per batch entry: the batch axis is the one that is not the time axis. */
  int batch_axis = p->axis == 0 ? 1 : 0;
  DsShape lengths = {.ndim = 1, .dims = {in[0].dims[batch_axis]}};
  if (!ds_shape_ctx_assign(ctx, &in[1], &lengths, "sequence_length", error))
    return FALSE;
  DsDim batch = in[1].dims[0];
  if (!ds_shape_ctx_unify_dim(ctx, &in[0].dims[batch_axis], batch, "data", error))
    return FALSE;
  out[0] = in[0];
  return TRUE;
}

/* Data and output share a dtype; the other input (SequenceMask's lengths, take's indices,
 * reshape_like's rhs) may have any. */
static gboolean infer_type_data_out(const DsNode *node, const void *param, DsDType *in,
                                    DsDType *out, GError **error)
{
  (void)param;
  return ds_ops_unify_dtypes(node, in, 1, out, 1, error);
}

/* ------------------------------------------------------------------------------------------ */
/* slice_axis, slice */

static gboolean parse_slice_axis(const DsNode *node, void *param, GError **error)
{
  DsSliceAxisParam *p = param;
  if (!ds_ops_attr_require(node, "axis", error) || !ds_ops_attr_require(node, "begin", error) ||
      !ds_ops_attr_require(node, "end", error) || !attr_int32(node, "axis", 0, &p->axis, error) ||
      !ds_node_attr_int(node, "begin", 0, &p->begin, error))
    return FALSE;
  p->has_end = !ds_node_attr_is_none(node, "end");
  return !p->has_end || ds_node_attr_int(node, "end", 0, &p->end, error);
}

/* |v| as a dim, for the "len - |v|" forms of negative indices. */
static DsDim abs_dim(int64_t v)
{
  return ds_dim(v < 0 ? -v : v);
}

static gboolean infer_shape_slice_axis(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                       DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsSliceAxisParam *p = param;
  if (in[0].ndim < 0)
    return TRUE;
  int axis;
  if (!ds_shape_ctx_axis(ctx, p->axis, in[0].ndim, FALSE, &axis, error))
    return FALSE;
  DsDim len = in[0].dims[axis];
  DsDim b = p->begin >= 0 ? ds_dim(p->begin) : ds_dim_sub(ctx, len, abs_dim(p->begin));
  DsDim e = !p->has_end   ? len
            : p->end >= 0 ? ds_dim(p->end)
                          : ds_dim_sub(ctx, len, abs_dim(p->end));
  DsDim count = ds_dim_sub(ctx, e, b);
  if (ds_dim_is_const(len)) {
    /* MXNet's GetSliceAxisParams checks, on the constant values. */
    int64_t n = len.value;
    int64_t vb = p->begin < 0 ? p->begin + n : p->begin;
    int64_t ve = !p->has_end ? n : (p->end < 0 ? p->end + n : p->end);
    if (n == 0) {
      vb = ve = 0;
      count = ds_dim(0);
    }
    if (n > 0 && (ve > n || vb < 0 || vb >= ve || ve < 0)) {
      char end_text[32] = "None";
      if (p->has_end)
        g_snprintf(end_text, sizeof end_text, "%" G_GINT64_FORMAT, p->end);
      ds_shape_ctx_set_error(ctx, error,
                             "invalid slice begin=%" G_GINT64_FORMAT ", end=%s for axis %d of "
                             "size %" G_GINT64_FORMAT,
                             p->begin, end_text, axis, n);
      return FALSE;
    }
  }
  DsShape result = in[0];
  result.dims[axis] = count;
  if (!set_output(ctx, &out[0], &result, error))
    return FALSE;
  /* The other axes pass through. */
  for (int d = 0; d < in[0].ndim; d++)
    if (d != axis && !ds_shape_ctx_unify_dim(ctx, &in[0].dims[d], out[0].dims[d], "data", error))
      return FALSE;
  return TRUE;
}

static gboolean parse_slice_tuple(const DsNode *node, const char *key, int64_t *values, int *n,
                                  GError **error)
{
  const char *text = ds_node_get_attr(node, key);
  if (text == NULL || !ds_attr_parse_tuple(text, values, DS_MAX_NDIM, DS_SLICE_NONE, n)) {
    if (text == NULL)
      return ds_ops_attr_require(node, key, error);
    return ds_ops_attr_invalid(node, key, "is not a tuple of integers or None", error);
  }
  return TRUE;
}

static gboolean parse_slice(const DsNode *node, void *param, GError **error)
{
  DsSliceParam *p = param;
  int n_end;
  if (!parse_slice_tuple(node, "begin", p->begin, &p->n_axes, error) ||
      !parse_slice_tuple(node, "end", p->end, &n_end, error))
    return FALSE;
  if (n_end != p->n_axes)
    return ds_ops_attr_invalid(node, "end", "must have as many entries as begin", error);
  p->n_step = 0;
  if (ds_node_get_attr(node, "step") != NULL &&
      !parse_slice_tuple(node, "step", p->step, &p->n_step, error))
    return FALSE;
  if (p->n_step > 0 && p->n_step != p->n_axes)
    return ds_ops_attr_invalid(node, "step", "must have as many entries as begin", error);
  for (int i = 0; i < p->n_step; i++) {
    if (p->step[i] == DS_SLICE_NONE)
      p->step[i] = 1;
    if (p->step[i] == 0)
      return ds_ops_attr_invalid(node, "step", "steps must not be 0", error);
  }
  p->has_axes = ds_node_get_attr(node, "axes") != NULL;
  if (!p->has_axes)
    return TRUE;
  int n_axes;
  if (!ds_ops_attr_axes(node, "axes", p->axes, &n_axes, error))
    return FALSE;
  if (n_axes != p->n_axes)
    return ds_ops_attr_invalid(node, "axes", "must have as many entries as begin", error);
  return TRUE;
}

/* With an `axes` attribute: every listed axis must exist and appear once. */
static gboolean check_slice_axes(DsShapeCtx *ctx, const DsSliceParam *p, int ndim,
                                 GError **error)
{
  gboolean seen[DS_MAX_NDIM] = {FALSE};
  for (int i = 0; i < p->n_axes; i++) {
    int axis;
    if (!ds_shape_ctx_axis(ctx, p->axes[i], ndim, FALSE, &axis, error))
      return FALSE;
    if (seen[axis]) {
      ds_shape_ctx_set_error(ctx, error, "axis %d is sliced twice", axis);
      return FALSE;
    }
    seen[axis] = TRUE;
  }
  return TRUE;
}

/* max(len + v, 0) for a negative v, as a dim: max(len, |v|) - |v|. */
static DsDim clamp_from_end(DsShapeCtx *ctx, DsDim len, int64_t v)
{
  DsDim a = abs_dim(v);
  return ds_dim_sub(ctx, ds_dim_max(ctx, len, a), a);
}

/* Python's slice length on an axis of length `len`, with clamping, in dim arithmetic (so it
 * also holds for symbolic lengths). Going backwards, positions are shifted up by one so they
 * stay non-negative. Must agree with ds_slice_axis_range(). */
static DsDim slice_length(DsShapeCtx *ctx, DsDim len, int64_t begin, int64_t end, int64_t step)
{
  if (step > 0) {
    DsDim b = begin == DS_SLICE_NONE ? ds_dim(0)
              : begin >= 0           ? ds_dim_min(ctx, ds_dim(begin), len)
                                     : clamp_from_end(ctx, len, begin);
    DsDim e = end == DS_SLICE_NONE ? len
              : end >= 0           ? ds_dim_min(ctx, ds_dim(end), len)
                                   : clamp_from_end(ctx, len, end);
    return ds_dim_ceildiv(ctx, ds_dim_sub(ctx, ds_dim_max(ctx, e, b), b), ds_dim(step));
  }
  DsDim b = begin == DS_SLICE_NONE ? len
            : begin >= 0           ? ds_dim_min(ctx, ds_dim(begin + 1), len)
                                   : clamp_from_end(ctx, len, begin + 1);
  DsDim e = end == DS_SLICE_NONE ? ds_dim(0)
            : end >= 0           ? ds_dim_min(ctx, ds_dim(end + 1), len)
                                 : clamp_from_end(ctx, len, end + 1);
  return ds_dim_ceildiv(ctx, ds_dim_sub(ctx, ds_dim_max(ctx, b, e), e), ds_dim(-step));
}

static gboolean infer_shape_slice(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                  DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsSliceParam *p = param;
  if (in[0].ndim < 0)
    return TRUE;
  if (p->n_axes > in[0].ndim) {
    g_autofree char *s = ds_shape_to_string(&in[0]);
    ds_shape_ctx_set_error(ctx, error, "begin slices %d axes, but the data %s has rank %d",
                           p->n_axes, s, in[0].ndim);
    return FALSE;
  }
  if (p->has_axes && !check_slice_axes(ctx, p, in[0].ndim, error))
    return FALSE;
  DsShape result = in[0];
  for (int d = 0; d < in[0].ndim; d++) {
    int i = ds_slice_entry_for_axis(p, in[0].ndim, d);
    if (i < 0)
      continue;
    int64_t step = p->n_step > 0 ? p->step[i] : 1;
    result.dims[d] = slice_length(ctx, in[0].dims[d], p->begin[i], p->end[i], step);
  }
  if (!set_output(ctx, &out[0], &result, error))
    return FALSE;
  /* The axes kept whole pass through. */
  for (int d = 0; d < in[0].ndim; d++)
    if (ds_slice_entry_for_axis(p, in[0].ndim, d) < 0 &&
        !ds_shape_ctx_unify_dim(ctx, &in[0].dims[d], out[0].dims[d], "data", error))
      return FALSE;
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* take */

static gboolean parse_take(const DsNode *node, void *param, GError **error)
{
  DsTakeParam *p = param;
  static const char *const modes[] = {"clip", "wrap", "raise", NULL};
  int mode;
  if (!attr_int32(node, "axis", 0, &p->axis, error) ||
      !ds_node_attr_enum(node, "mode", modes, DS_TAKE_CLIP, &mode, error))
    return FALSE;
  p->mode = (DsTakeMode)mode;
  return TRUE;
}

static gboolean infer_shape_take(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                 DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsTakeParam *p = param;
  const DsShape *data = &in[0], *idx = &in[1];
  if (data->ndim < 0 || idx->ndim < 0)
    return TRUE;
  if (data->ndim == 0) {
    ds_shape_ctx_set_error(ctx, error, "cannot take from a 0-dim tensor");
    return FALSE;
  }
  int axis;
  if (!ds_shape_ctx_axis(ctx, p->axis, data->ndim, FALSE, &axis, error))
    return FALSE;
  int ndim = data->ndim - 1 + idx->ndim;
  if (ndim > DS_MAX_NDIM) {
    ds_shape_ctx_set_error(ctx, error, "the result would have %d dims, more than %d", ndim,
                           DS_MAX_NDIM);
    return FALSE;
  }
  DsShape result = {.ndim = ndim};
  int k = 0;
  for (int d = 0; d < axis; d++)
    result.dims[k++] = data->dims[d];
  for (int d = 0; d < idx->ndim; d++)
    result.dims[k++] = idx->dims[d];
  for (int d = axis + 1; d < data->ndim; d++)
    result.dims[k++] = data->dims[d];
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* Cast */

static gboolean parse_cast(const DsNode *node, void *param, GError **error)
{
  DsCastParam *p = param;
  return ds_ops_attr_require(node, "dtype", error) &&
         ds_node_attr_dtype(node, "dtype", DS_DTYPE_FLOAT32, &p->dtype, error);
}

static gboolean infer_type_cast(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                GError **error)
{
  (void)in;
  return ds_ops_assign_dtype(node, &out[0], ((const DsCastParam *)param)->dtype, "output", error);
}

/* ------------------------------------------------------------------------------------------ */
/* sum, mean, max, min */

static gboolean parse_reduce(const DsNode *node, void *param, GError **error)
{
  DsReduceParam *p = param;
  gboolean keepdims, exclude;
  if (!ds_ops_attr_axes(node, "axis", p->axes, &p->n_axes, error) ||
      !ds_node_attr_bool(node, "keepdims", FALSE, &keepdims, error) ||
      !ds_node_attr_bool(node, "exclude", FALSE, &exclude, error))
    return FALSE;
  p->keepdims = keepdims;
  p->exclude = exclude;
  return TRUE;
}

/* MXNet's ReduceAxesShapeImpl. */
static gboolean infer_shape_reduce(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                   DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsReduceParam *p = param;
  const DsShape *s = &in[0];
  if (s->ndim < 0)
    return TRUE;
  DsShape result = {.ndim = 0};
  if (p->n_axes <= 0) {
    if (p->keepdims) {
      result.ndim = s->ndim;
      for (int d = 0; d < s->ndim; d++)
        result.dims[d] = ds_dim(1);
    } else {
      result.ndim = 1;
      result.dims[0] = ds_dim(1);
    }
    return set_output(ctx, &out[0], &result, error);
  }
  gboolean listed[DS_MAX_NDIM] = {FALSE};
  for (int i = 0; i < p->n_axes; i++) {
    int axis;
    if (!ds_shape_ctx_axis(ctx, p->axes[i], s->ndim, FALSE, &axis, error))
      return FALSE;
    if (listed[axis]) {
      ds_shape_ctx_set_error(ctx, error, "reduction axes have duplicates: axis %d", axis);
      return FALSE;
    }
    listed[axis] = TRUE;
  }
  for (int d = 0; d < s->ndim; d++) {
    gboolean reduced = p->exclude ? !listed[d] : listed[d];
    if (p->keepdims)
      result.dims[result.ndim++] = reduced ? ds_dim(1) : s->dims[d];
    else if (!reduced)
      result.dims[result.ndim++] = s->dims[d];
  }
  if (result.ndim == 0) {
    result.ndim = 1;
    result.dims[0] = ds_dim(1);
  }
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* _contrib_expand */

static gboolean parse_expand(const DsNode *node, void *param, GError **error)
{
  DsExpandParam *p = param;
  if (!ds_ops_attr_require(node, "shape", error) ||
      !attr_tuple(node, "shape", p->shape, DS_MAX_NDIM, &p->ndim, error))
    return FALSE;
  p->ndim = MAX(p->ndim, 0);
  for (int i = 0; i < p->ndim; i++)
    if (p->shape[i] < 0)
      return ds_ops_attr_invalid(node, "shape", "dims must not be negative", error);
  return TRUE;
}

/* NumPy broadcasting of the data's shape and the target: forwards only. */
static gboolean infer_shape_expand(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                   DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsExpandParam *p = param;
  DsShape target = ds_shape_from_concrete(p->shape, p->ndim), result;
  if (in[0].ndim < 0)
    return TRUE;
  return ds_ops_broadcast_shapes(ctx, &in[0], "data", &target, "shape", &result, error) &&
         set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* _npi_pad */

/* pad_width as MXNet writes it, ((1, 2), (0, 0)), or flat: every integer in order. */
static gboolean parse_pad_width(const DsNode *node, DsPadParam *p, GError **error)
{
  const char *text = ds_node_get_attr(node, "pad_width");
  if (text == NULL)
    return ds_ops_attr_require(node, "pad_width", error);
  g_autofree char *flat = g_strdup(text);
  for (char *c = flat; *c; c++)
    if (*c == '(' || *c == ')' || *c == '[' || *c == ']')
      *c = ' ';
  g_strstrip(flat);
  int64_t v[2 * DS_MAX_NDIM];
  int n = 0;
  if (flat[0] != '\0') {
    g_autofree char *tuple = g_strdup_printf("(%s)", flat);
    if (!ds_attr_parse_tuple(tuple, v, 2 * DS_MAX_NDIM, 0, &n))
      return ds_ops_attr_invalid(node, "pad_width", "is not a tuple of (before, after) pairs",
                                 error);
  }
  if (n % 2 != 0)
    return ds_ops_attr_invalid(node, "pad_width", "must hold (before, after) pairs", error);
  p->ndim = n / 2;
  for (int d = 0; d < p->ndim; d++) {
    p->before[d] = v[2 * d];
    p->after[d] = v[2 * d + 1];
  }
  return TRUE;
}

static gboolean parse_pad(const DsNode *node, void *param, GError **error)
{
  DsPadParam *p = param;
  static const char *const modes[] = {"constant", "edge", "reflect", NULL};
  int mode;
  if (!parse_pad_width(node, p, error) ||
      !ds_node_attr_enum(node, "mode", modes, DS_PAD_CONSTANT, &mode, error) ||
      !ds_node_attr_float(node, "constant_values", 0.0, &p->value, error))
    return FALSE;
  p->mode = (DsPadMode)mode;
  return TRUE;
}

/* Each dim grows by its before and after widths; edge and reflect need something to copy
 * from. */
static gboolean infer_shape_pad(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsPadParam *p = param;
  if (in[0].ndim < 0)
    return TRUE;
  if (in[0].ndim != p->ndim) {
    g_autofree char *s = ds_shape_to_string(&in[0]);
    ds_shape_ctx_set_error(ctx, error, "pad_width has %d pairs for data %s of rank %d", p->ndim,
                           s, in[0].ndim);
    return FALSE;
  }
  DsShape result = {.ndim = p->ndim};
  for (int d = 0; d < p->ndim; d++) {
    DsDim len = in[0].dims[d];
    int64_t grow = p->before[d] + p->after[d];
    result.dims[d] = grow >= 0 ? ds_dim_add(ctx, len, ds_dim(grow))
                               : ds_dim_sub(ctx, len, ds_dim(-grow));
    if (ds_dim_is_const(len)) {
      int64_t n = len.value, pad_max = MAX(p->before[d], p->after[d]);
      gboolean bad = n + grow < 0 || (p->mode != DS_PAD_CONSTANT && pad_max > 0 && n == 0);
      if (bad) {
        ds_shape_ctx_set_error(ctx, error,
                               "cannot pad axis %d of size %" G_GINT64_FORMAT " by (%" G_GINT64_FORMAT
                               ", %" G_GINT64_FORMAT ") in this mode",
                               d, n, p->before[d], p->after[d]);
        return FALSE;
      }
    } else if (grow < 0) {
      ds_shape_ctx_add_guard(ctx, result.dims[d], 0, "the cropped size is negative");
    }
  }
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* cumsum, trilu, eye_like */

static const char *const cumsum_inputs[] = {"data", "axis", NULL};
static const char *const trilu_inputs[] = {"data", "k", NULL};

static gboolean parse_cumsum(const DsNode *node, void *param, GError **error)
{
  DsCumsumParam *p = param;
  gboolean exclusive, reverse;
  if (!ds_node_attr_bool(node, "exclusive", FALSE, &exclusive, error) ||
      !ds_node_attr_bool(node, "reverse", FALSE, &reverse, error))
    return FALSE;
  p->exclusive = exclusive;
  p->reverse = reverse;
  return TRUE;
}

/* A scalar parameter tensor (shape () or (1,)). */
static gboolean check_scalar_input(DsShapeCtx *ctx, DsShape *s, const char *what, GError **error)
{
  if (s->ndim <= 0)
    return TRUE;
  if (s->ndim > 1 || (ds_dim_is_const(s->dims[0]) && s->dims[0].value != 1)) {
    g_autofree char *str = ds_shape_to_string(s);
    ds_shape_ctx_set_error(ctx, error, "%s must be a scalar, shape () or (1,), but has shape %s",
                           what, str);
    return FALSE;
  }
  return ds_shape_ctx_unify_dim(ctx, &s->dims[0], ds_dim(1), what, error);
}

/* The data's shape passes through; input 1 is a scalar parameter (cumsum's axis, trilu's k),
 * and the data must have at least `min_rank` dims. */
static gboolean infer_data_with_scalar(DsShapeCtx *ctx, const DsNode *node, int min_rank,
                                       DsShape *in, DsShape *out, GError **error)
{
  char buf[16];
  if (!check_scalar_input(ctx, &in[1], ds_ops_input_name(node, 1, buf), error) ||
      !ds_ops_unify_shapes(ctx, node, in, 1, out, 1, error))
    return FALSE;
  if (in[0].ndim >= 0 && in[0].ndim < min_rank) {
    g_autofree char *str = ds_shape_to_string(&in[0]);
    ds_shape_ctx_set_error(ctx, error, "data %s must have rank %d or more", str, min_rank);
    return FALSE;
  }
  return TRUE;
}

static gboolean infer_shape_cumsum(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                   DsShape *in, DsShape *out, GError **error)
{
  (void)param;
  return infer_data_with_scalar(ctx, node, 1, in, out, error);
}

static gboolean infer_shape_trilu(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                  DsShape *in, DsShape *out, GError **error)
{
  (void)param;
  return infer_data_with_scalar(ctx, node, 2, in, out, error);
}

static gboolean parse_trilu(const DsNode *node, void *param, GError **error)
{
  DsTriluParam *p = param;
  gboolean upper;
  if (!ds_node_attr_bool(node, "upper", TRUE, &upper, error))
    return FALSE;
  p->upper = upper;
  return TRUE;
}

static gboolean parse_eye_like(const DsNode *node, void *param, GError **error)
{
  DsEyeLikeParam *p = param;
  if (!ds_node_attr_int(node, "k", 0, &p->k, error))
    return FALSE;
  p->has_dtype = !ds_node_attr_is_none(node, "dtype");
  if (p->has_dtype && !ds_node_attr_dtype(node, "dtype", DS_DTYPE_FLOAT32, &p->dtype, error))
    return FALSE;
  if (p->has_dtype && ds_dtype_is_storage_only(p->dtype))
    return ds_ops_attr_invalid(node, "dtype", "is a storage type, which only Cast computes with",
                               error);
  return TRUE;
}

static gboolean infer_shape_eye_like(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                     DsShape *in, DsShape *out, GError **error)
{
  (void)param;
  if (!ds_ops_check_rank(ctx, &in[0], 2, "data", "(rows, columns)", error))
    return FALSE;
  return ds_ops_unify_shapes(ctx, node, in, 1, out, 1, error);
}

static gboolean infer_type_eye_like(const DsNode *node, const void *param, DsDType *in,
                                    DsDType *out, GError **error)
{
  const DsEyeLikeParam *p = param;
  return ds_ops_assign_dtype(node, &out[0], p->has_dtype ? p->dtype : in[0], "output", error);
}

static gboolean parse_full_like(const DsNode *node, void *param, GError **error)
{
  DsFullLikeParam *p = param;
  if (!ds_ops_attr_require(node, "fill_value", error) ||
      !ds_node_attr_float(node, "fill_value", 0.0, &p->fill_value, error))
    return FALSE;
  p->has_dtype = !ds_node_attr_is_none(node, "dtype");
  if (p->has_dtype && !ds_node_attr_dtype(node, "dtype", DS_DTYPE_FLOAT32, &p->dtype, error))
    return FALSE;
  if (p->has_dtype && ds_dtype_is_storage_only(p->dtype))
    return ds_ops_attr_invalid(node, "dtype", "is a storage type, which only Cast computes with",
                               error);
  return TRUE;
}

static gboolean infer_type_full_like(const DsNode *node, const void *param, DsDType *in,
                                     DsDType *out, GError **error)
{
  const DsFullLikeParam *p = param;
  return ds_ops_assign_dtype(node, &out[0], p->has_dtype ? p->dtype : in[0], "output", error);
}

/* ------------------------------------------------------------------------------------------ */
/* depth_to_space, space_to_depth */

static gboolean parse_depth_space(const DsNode *node, void *param, GError **error)
{
  DsDepthSpaceParam *p = param;
  static const char *const modes[] = {"DCR", "CRD", NULL};
  int mode;
  if (!ds_ops_attr_require(node, "block_size", error) ||
      !ds_ops_attr_int_range(node, "block_size", 1, 1, 1 << 20, &p->block_size, error) ||
      !ds_node_attr_enum(node, "mode", modes, 0, &mode, error))
    return FALSE;
  p->crd = mode == 1;
  return TRUE;
}

/* (N, C, H, W) to (N, C / b^2, H * b, W * b) and back; the divided dims must divide. */
static gboolean infer_shape_depth_space(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                        DsShape *in, DsShape *out, GError **error)
{
  const DsDepthSpaceParam *p = param;
  if (!ds_ops_check_rank(ctx, &in[0], 4, "data", "NCHW", error))
    return FALSE;
  if (in[0].ndim < 0)
    return TRUE;
  gboolean to_space = strcmp(node->op_name, "depth_to_space") == 0;
  DsDim b = ds_dim(p->block_size), b2 = ds_dim(p->block_size * p->block_size);
  const DsShape *s = &in[0];
  DsShape result = {.ndim = 4, .dims = {s->dims[0]}};
  DsDim divided[3] = {s->dims[1], s->dims[2], s->dims[3]};
  DsDim by[3] = {to_space ? b2 : ds_dim(1), to_space ? ds_dim(1) : b, to_space ? ds_dim(1) : b};
  for (int i = 0; i < 3; i++) {
    DsDim rem = ds_dim_mod(ctx, divided[i], by[i]);
    if (ds_dim_is_const(rem) && rem.value != 0) {
      g_autofree char *str = ds_shape_to_string(s);
      ds_shape_ctx_set_error(ctx, error, "dim %d of data %s does not divide by %" G_GINT64_FORMAT,
                             i + 1, str, by[i].value);
      return FALSE;
    }
  }
  if (to_space) {
    result.dims[1] = ds_dim_floordiv(ctx, s->dims[1], b2);
    result.dims[2] = ds_dim_mul(ctx, s->dims[2], b);
    result.dims[3] = ds_dim_mul(ctx, s->dims[3], b);
  } else {
    result.dims[1] = ds_dim_mul(ctx, s->dims[1], b2);
    result.dims[2] = ds_dim_floordiv(ctx, s->dims[2], b);
    result.dims[3] = ds_dim_floordiv(ctx, s->dims[3], b);
  }
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* SequenceReverse */

static const char *const sequence_reverse_inputs[] = {"data", "sequence_length", NULL};

static gboolean parse_sequence_reverse(const DsNode *node, void *param, GError **error)
{
  DsSequenceReverseParam *p = param;
  gboolean use;
  if (!ds_node_attr_bool(node, "use_sequence_length", FALSE, &use, error) ||
      !attr_int32(node, "axis", 0, &p->axis, error))
    return FALSE;
  p->use_sequence_length = use;
  if (p->axis != 0)
    return ds_ops_attr_invalid(node, "axis", "only 0 is supported", error);
  return TRUE;
}

static int sequence_reverse_num_inputs(const void *param)
{
  return ((const DsSequenceReverseParam *)param)->use_sequence_length ? 2 : 1;
}

static gboolean infer_shape_sequence_reverse(DsShapeCtx *ctx, const DsNode *node,
                                             const void *param, DsShape *in, DsShape *out,
                                             GError **error)
{
  const DsSequenceReverseParam *p = param;
  if (!ds_ops_unify_shapes(ctx, node, in, 1, out, 1, error))
    return FALSE;
  if (in[0].ndim < 0)
    return TRUE;
  if (in[0].ndim < 2) {
    g_autofree char *s = ds_shape_to_string(&in[0]);
    ds_shape_ctx_set_error(ctx, error, "data %s must be (time, batch, ...)", s);
    return FALSE;
  }
  if (!p->use_sequence_length)
    return TRUE;
  DsShape lengths = {.ndim = 1, .dims = {in[0].dims[1]}};
  return ds_shape_ctx_assign(ctx, &in[1], &lengths, "sequence_length", error);
}

/* ------------------------------------------------------------------------------------------ */
/* norm */

static gboolean parse_norm(const DsNode *node, void *param, GError **error)
{
  DsNormParam *p = param;
  gboolean keepdims;
  int64_t ord;
  if (!ds_ops_attr_axes(node, "axis", p->axes.axes, &p->axes.n_axes, error) ||
      !ds_node_attr_bool(node, "keepdims", FALSE, &keepdims, error) ||
      !ds_node_attr_int(node, "ord", 2, &ord, error) ||
      !ds_node_attr_dtype(node, "out_dtype", DS_DTYPE_UNKNOWN, &p->out_dtype, error))
    return FALSE;
  p->axes.keepdims = keepdims;
  if (ord != 1 && ord != 2)
    return ds_ops_attr_invalid(node, "ord", "must be 1 or 2", error);
  p->ord = (int)ord;
  return TRUE;
}

static gboolean infer_shape_norm(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                 DsShape *in, DsShape *out, GError **error)
{
  return infer_shape_reduce(ctx, node, &((const DsNormParam *)param)->axes, in, out, error);
}

/* MXNet's NormType: out_dtype when given, else the data's (both ways). */
static gboolean infer_type_norm(const DsNode *node, const void *param, DsDType *in, DsDType *out,
                                GError **error)
{
  const DsNormParam *p = param;
  if (p->out_dtype != DS_DTYPE_UNKNOWN)
    return ds_ops_assign_dtype(node, &out[0], p->out_dtype, "output", error);
  return ds_ops_unify_dtypes(node, in, 1, out, 1, error);
}

/* ------------------------------------------------------------------------------------------ */
/* Pad */

static gboolean parse_mx_pad(const DsNode *node, void *param, GError **error)
{
  DsPadParam *p = param;
  static const char *const modes[] = {"constant", "edge", "reflect", NULL};
  int mode;
  if (!ds_ops_attr_require(node, "mode", error) || !parse_pad_width(node, p, error) ||
      !ds_node_attr_enum(node, "mode", modes, DS_PAD_CONSTANT, &mode, error) ||
      !ds_node_attr_float(node, "constant_value", 0.0, &p->value, error))
    return FALSE;
  p->mode = (DsPadMode)mode;
  if (p->ndim != 4 && p->ndim != 5)
    return ds_ops_attr_invalid(node, "pad_width",
                               "must hold 8 or 10 values: only 4-D and 5-D data can be padded",
                               error);
  for (int d = 0; d < p->ndim; d++)
    if (p->before[d] < 0 || p->after[d] < 0)
      return ds_ops_attr_invalid(node, "pad_width", "must not be negative", error);
  if (p->before[0] || p->after[0] || p->before[1] || p->after[1])
    return ds_ops_attr_invalid(node, "pad_width", "must not pad the first two axes", error);
  return TRUE;
}

/* MXNet's PadProp::InferShape: 4-D or 5-D data of the pad's rank; reflect pads less than each
 * axis' length (MXNet checks the two image axes; the third of 5-D data is held to it too, as
 * its kernel would read outside the axis). */
static gboolean infer_shape_mx_pad(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                   DsShape *in, DsShape *out, GError **error)
{
  const DsPadParam *p = param;
  if (in[0].ndim >= 0 && in[0].ndim != p->ndim) {
    g_autofree char *s = ds_shape_to_string(&in[0]);
    ds_shape_ctx_set_error(ctx, error, "data %s must have rank %d to match pad_width", s,
                           p->ndim);
    return FALSE;
  }
  if (in[0].ndim >= 0 && p->mode == DS_PAD_REFLECT) {
    for (int d = 2; d < p->ndim; d++) {
      int64_t widest = MAX(p->before[d], p->after[d]);
      if (ds_dim_is_const(in[0].dims[d]) && widest > 0 && widest >= in[0].dims[d].value) {
        ds_shape_ctx_set_error(ctx, error,
                               "reflect padding of %" G_GINT64_FORMAT
                               " must be less than axis %d's size %" G_GINT64_FORMAT,
                               widest, d, in[0].dims[d].value);
        return FALSE;
      }
    }
  }
  return infer_shape_pad(ctx, node, param, in, out, error);
}

/* ------------------------------------------------------------------------------------------ */
/* SequenceLast */

static gboolean parse_sequence_last(const DsNode *node, void *param, GError **error)
{
  DsSequenceLastParam *p = param;
  gboolean use;
  if (!ds_node_attr_bool(node, "use_sequence_length", FALSE, &use, error) ||
      !attr_int32(node, "axis", 0, &p->axis, error))
    return FALSE;
  p->use_sequence_length = use;
  if (p->axis != 0 && p->axis != 1)
    return ds_ops_attr_invalid(node, "axis", "must be 0 or 1", error);
  return TRUE;
}

static int sequence_last_num_inputs(const void *param)
{
  return ((const DsSequenceLastParam *)param)->use_sequence_length ? 2 : 1;
}

/* MXNet's SequenceLastProp::InferShape: (batch, rest...) from data of rank 2 or more, and one
 * length per batch entry. */
static gboolean infer_shape_sequence_last(DsShapeCtx *ctx, const DsNode *node, const void *param,
                                          DsShape *in, DsShape *out, GError **error)
{
  (void)node;
  const DsSequenceLastParam *p = param;
  if (in[0].ndim < 0)
    return TRUE;
  if (in[0].ndim < 2) {
    g_autofree char *s = ds_shape_to_string(&in[0]);
    ds_shape_ctx_set_error(ctx, error, "data %s must have rank 2 or more", s);
    return FALSE;
  }
  DsDim batch = in[0].dims[p->axis == 0 ? 1 : 0];
  DsShape result = {.ndim = in[0].ndim - 1, .dims = {batch}};
  for (int d = 2; d < in[0].ndim; d++)
    result.dims[d - 1] = in[0].dims[d];
  if (p->use_sequence_length) {
    DsShape lengths = {.ndim = 1, .dims = {batch}};
    if (!ds_shape_ctx_assign(ctx, &in[1], &lengths, "sequence_length", error))
      return FALSE;
  }
  return set_output(ctx, &out[0], &result, error);
}

/* ------------------------------------------------------------------------------------------ */
/* Definitions */

#define DS_TENSOR_OP(ID, NAME, ALIASES, TRAITS, PARAM, PARSE, NUM_IN, INPUTS, SHAPE, TYPE, ...)    \
  static const DsOpDef ID##_def = {                                                                \
      .id = DS_OP_##ID,                                                                            \
      .name = NAME,                                                                                \
      .aliases = ALIASES,                                                                          \
      .traits = TRAITS,                                                                            \
      .param_size = PARAM,                                                                         \
      .parse = PARSE,                                                                              \
      .num_inputs = NUM_IN,                                                                        \
      .num_outputs = ds_op_count_1,                                                                \
      .num_visible_outputs = ds_op_count_1,                                                        \
      .input_names = INPUTS,                                                                       \
      .infer_shape = SHAPE,                                                                        \
      .infer_type = TYPE,                                                                          \
      __VA_ARGS__                                                                                  \
  };

static const char *const reshape_aliases[] = {"reshape", NULL};
static const char *const flatten_aliases[] = {"flatten", NULL};
static const char *const swap_axis_aliases[] = {"swapaxes", NULL};
static const char *const concat_aliases[] = {"concat", NULL};
static const char *const broadcast_axis_aliases[] = {"broadcast_axes", NULL};
static const char *const slice_aliases[] = {"crop", NULL};
static const char *const cast_aliases[] = {"cast", NULL};
static const char *const sum_aliases[] = {"sum_axis", NULL};
static const char *const max_aliases[] = {"max_axis", NULL};
static const char *const min_aliases[] = {"min_axis", NULL};
static const char *const np_reshape_aliases[] = {"_npi_reshape", NULL};
static const char *const pad_aliases[] = {"pad", NULL};

DS_TENSOR_OP(RESHAPE, "Reshape", reshape_aliases, DS_OP_TRAIT_VIEW, sizeof(DsReshapeParam),
             parse_reshape, ds_op_count_1, NULL, infer_shape_reshape, NULL,
             .grad = ds_grad_reshape)
DS_TENSOR_OP(FLATTEN, "Flatten", flatten_aliases, DS_OP_TRAIT_VIEW, sizeof(DsFlattenParam),
             parse_flatten, ds_op_count_1, NULL, infer_shape_flatten, NULL,
             .grad = ds_grad_reshape)
DS_TENSOR_OP(EXPAND_DIMS, "expand_dims", NULL, DS_OP_TRAIT_VIEW, sizeof(DsExpandDimsParam),
             parse_expand_dims, ds_op_count_1, NULL, infer_shape_expand_dims, NULL,
             .grad = ds_grad_reshape)
DS_TENSOR_OP(SQUEEZE, "squeeze", NULL, DS_OP_TRAIT_VIEW, sizeof(DsSqueezeParam), parse_squeeze,
             ds_op_count_1, NULL, infer_shape_squeeze, NULL,
             .grad = ds_grad_reshape)
/* Only lhs's bytes reach the output: rhs gives its shape, never its values or dtype. */
DS_TENSOR_OP(RESHAPE_LIKE, "reshape_like", NULL, DS_OP_TRAIT_VIEW, sizeof(DsReshapeLikeParam),
             parse_reshape_like, ds_op_count_2, broadcast_like_inputs, infer_shape_reshape_like,
             infer_type_data_out,
             .grad = ds_grad_reshape)
DS_TENSOR_OP(TRANSPOSE, "transpose", NULL, 0, sizeof(DsTransposeParam), parse_transpose,
             ds_op_count_1, NULL, infer_shape_transpose, NULL,
             .grad = ds_grad_transpose)
DS_TENSOR_OP(SWAP_AXIS, "SwapAxis", swap_axis_aliases, 0, sizeof(DsSwapAxisParam), parse_swap_axis,
             ds_op_count_1, NULL, infer_shape_swap_axis, NULL,
             .grad = ds_grad_swap_axis)
DS_TENSOR_OP(CONCAT, "Concat", concat_aliases, 0, sizeof(DsConcatParam), parse_concat,
             concat_num_inputs, data_inputs, infer_shape_concat, NULL,
             .grad = ds_grad_concat)
DS_TENSOR_OP(BROADCAST_AXIS, "broadcast_axis", broadcast_axis_aliases, 0,
             sizeof(DsBroadcastAxisParam), parse_broadcast_axis, ds_op_count_1, NULL,
             infer_shape_broadcast_axis, NULL,
             .grad = ds_grad_broadcast)
DS_TENSOR_OP(BROADCAST_TO, "broadcast_to", NULL, 0, sizeof(DsBroadcastToParam), parse_broadcast_to,
             ds_op_count_1, NULL, infer_shape_broadcast_to, NULL,
             .grad = ds_grad_broadcast)
DS_TENSOR_OP(BROADCAST_LIKE, "broadcast_like", NULL, 0, sizeof(DsBroadcastLikeParam),
             parse_broadcast_like, ds_op_count_2, broadcast_like_inputs, infer_shape_broadcast_like,
             NULL,
             .grad = ds_grad_broadcast)
DS_TENSOR_OP(ARANGE, "_arange", NULL, DS_OP_TRAIT_SOURCE, sizeof(DsArangeParam), parse_arange,
             count_0, NULL, infer_shape_arange, infer_type_arange, .grad = ds_grad_zero)
DS_TENSOR_OP(ARANGE_LIKE, "_contrib_arange_like", NULL, 0, sizeof(DsArangeLikeParam),
             parse_arange_like, ds_op_count_1, NULL, infer_shape_arange_like,
             infer_type_arange_like,
             .grad = ds_grad_zero)
DS_TENSOR_OP(ZEROS, "_zeros", NULL, DS_OP_TRAIT_SOURCE, sizeof(DsInitParam), parse_zeros, count_0,
             NULL, infer_shape_init, infer_type_init, .grad = ds_grad_zero)
DS_TENSOR_OP(ONES, "_ones", NULL, DS_OP_TRAIT_SOURCE, sizeof(DsInitParam), parse_ones, count_0,
             NULL, infer_shape_init, infer_type_init, .grad = ds_grad_zero)
DS_TENSOR_OP(FULL, "_full", NULL, DS_OP_TRAIT_SOURCE, sizeof(DsInitParam), parse_full, count_0,
             NULL, infer_shape_init, infer_type_init, .grad = ds_grad_zero)
DS_TENSOR_OP(SEQUENCE_MASK, "SequenceMask", NULL, 0, sizeof(DsSequenceMaskParam),
             parse_sequence_mask, sequence_mask_num_inputs, sequence_mask_inputs,
             infer_shape_sequence_mask, infer_type_data_out,
             .grad = ds_grad_sequence_mask)
DS_TENSOR_OP(SLICE_AXIS, "slice_axis", NULL, 0, sizeof(DsSliceAxisParam), parse_slice_axis,
             ds_op_count_1, NULL, infer_shape_slice_axis, NULL,
             .grad = ds_grad_slice_axis)
DS_TENSOR_OP(SLICE, "slice", slice_aliases, 0, sizeof(DsSliceParam), parse_slice, ds_op_count_1,
             NULL, infer_shape_slice, NULL,
             .grad = ds_grad_slice)
DS_TENSOR_OP(TAKE, "take", NULL, 0, sizeof(DsTakeParam), parse_take, ds_op_count_2, take_inputs,
             infer_shape_take, infer_type_data_out,
             .grad = ds_grad_take)
DS_TENSOR_OP(CAST, "Cast", cast_aliases, DS_OP_TRAIT_ELEMWISE, sizeof(DsCastParam), parse_cast,
             ds_op_count_1, NULL, ds_ops_infer_shape_same, infer_type_cast,
             .grad = ds_grad_cast)
DS_TENSOR_OP(SUM, "sum", sum_aliases, 0, sizeof(DsReduceParam), parse_reduce, ds_op_count_1, NULL,
             infer_shape_reduce, NULL,
             .grad = ds_grad_sum)
DS_TENSOR_OP(MEAN, "mean", NULL, 0, sizeof(DsReduceParam), parse_reduce, ds_op_count_1, NULL,
             infer_shape_reduce, NULL,
             .grad = ds_grad_mean)
DS_TENSOR_OP(MAX, "max", max_aliases, 0, sizeof(DsReduceParam), parse_reduce, ds_op_count_1, NULL,
             infer_shape_reduce, NULL,
             .grad = ds_grad_reduce)
DS_TENSOR_OP(MIN, "min", min_aliases, 0, sizeof(DsReduceParam), parse_reduce, ds_op_count_1, NULL,
             infer_shape_reduce, NULL,
             .grad = ds_grad_reduce)
DS_TENSOR_OP(NP_RESHAPE, "_np_reshape", np_reshape_aliases, DS_OP_TRAIT_VIEW,
             sizeof(DsNpReshapeParam), parse_np_reshape, ds_op_count_1, NULL,
             infer_shape_np_reshape, NULL,
             .grad = ds_grad_reshape)
DS_TENSOR_OP(NP_SQUEEZE, "_np_squeeze", NULL, DS_OP_TRAIT_VIEW, sizeof(DsSqueezeParam),
             parse_np_squeeze, ds_op_count_1, NULL, infer_shape_squeeze, NULL,
             .grad = ds_grad_reshape)
DS_TENSOR_OP(EXPAND, "_contrib_expand", NULL, 0, sizeof(DsExpandParam), parse_expand,
             ds_op_count_1, NULL, infer_shape_expand, NULL,
             .grad = ds_grad_broadcast)
DS_TENSOR_OP(PAD, "_npi_pad", NULL, 0, sizeof(DsPadParam), parse_pad, ds_op_count_1, NULL,
             infer_shape_pad, NULL,
             .grad = ds_grad_pad)
DS_TENSOR_OP(CUMSUM, "cumsum", NULL, 0, sizeof(DsCumsumParam), parse_cumsum, ds_op_count_2,
             cumsum_inputs, infer_shape_cumsum, infer_type_data_out,
             .grad = ds_grad_cumsum)
DS_TENSOR_OP(TRILU, "trilu", NULL, 0, sizeof(DsTriluParam), parse_trilu, ds_op_count_2,
             trilu_inputs, infer_shape_trilu, infer_type_data_out,
             .grad = ds_grad_self_adjoint)
DS_TENSOR_OP(EYE_LIKE, "eye_like", NULL, 0, sizeof(DsEyeLikeParam), parse_eye_like,
             ds_op_count_1, NULL, infer_shape_eye_like, infer_type_eye_like, .grad = ds_grad_zero)
DS_TENSOR_OP(DEPTH_TO_SPACE, "depth_to_space", NULL, 0, sizeof(DsDepthSpaceParam),
             parse_depth_space, ds_op_count_1, NULL, infer_shape_depth_space, NULL,
             .grad = ds_grad_depth_space)
DS_TENSOR_OP(SPACE_TO_DEPTH, "space_to_depth", NULL, 0, sizeof(DsDepthSpaceParam),
             parse_depth_space, ds_op_count_1, NULL, infer_shape_depth_space, NULL,
             .grad = ds_grad_depth_space)
/* Only the data's shape is read: the shapes are one, the dtypes need not be. */
DS_TENSOR_OP(FULL_LIKE, "_npi_full_like", NULL, 0, sizeof(DsFullLikeParam), parse_full_like,
             ds_op_count_1, NULL, ds_ops_infer_shape_same, infer_type_full_like,
             .grad = ds_grad_zero)
/* MXNet's prod, nansum and nanprod: sum's axes, keepdims and exclude; NaN counts as 0 (1). */
DS_TENSOR_OP(PROD, "prod", NULL, 0, sizeof(DsReduceParam), parse_reduce, ds_op_count_1, NULL,
             infer_shape_reduce, NULL, .grad = ds_grad_reduce)
DS_TENSOR_OP(NANSUM, "nansum", NULL, 0, sizeof(DsReduceParam), parse_reduce, ds_op_count_1, NULL,
             infer_shape_reduce, NULL, .grad = ds_grad_reduce)
DS_TENSOR_OP(NANPROD, "nanprod", NULL, 0, sizeof(DsReduceParam), parse_reduce, ds_op_count_1,
             NULL, infer_shape_reduce, NULL, .grad = ds_grad_reduce)
DS_TENSOR_OP(NORM, "norm", NULL, 0, sizeof(DsNormParam), parse_norm, ds_op_count_1, NULL,
             infer_shape_norm, infer_type_norm, .grad = ds_grad_reduce)
DS_TENSOR_OP(MX_PAD, "Pad", pad_aliases, 0, sizeof(DsPadParam), parse_mx_pad, ds_op_count_1, NULL,
             infer_shape_mx_pad, NULL,
             .grad = ds_grad_pad)
DS_TENSOR_OP(SEQUENCE_LAST, "SequenceLast", NULL, 0, sizeof(DsSequenceLastParam),
             parse_sequence_last, sequence_last_num_inputs, sequence_reverse_inputs,
             infer_shape_sequence_last, infer_type_data_out,
             .grad = ds_grad_sequence_last)
DS_TENSOR_OP(SEQUENCE_REVERSE, "SequenceReverse", NULL, 0, sizeof(DsSequenceReverseParam),
             parse_sequence_reverse, sequence_reverse_num_inputs, sequence_reverse_inputs,
             infer_shape_sequence_reverse, infer_type_data_out,
             .grad = ds_grad_self_adjoint)

void ds_ops_tensor_register(const DsOpDef **table)
{
  DS_OPS_TENSOR(DS_OP_TABLE_ENTRY)
}
