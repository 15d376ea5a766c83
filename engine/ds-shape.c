/* ds-shape.c: dim arithmetic and unification.
 *
 * Constants fold here. Expressions (dims with `expr != NULL`) belong to the symbolic engine;
 * until a symbolic context is attached, an expression operand yields an unknown dim, which the
 * inference driver reports as "could not infer".
 */
#include "ds-shape.h"

#include <stdarg.h>

#include "ds-error.h"
#include "ds-op.h"

struct _DsShapeCtx {
  const DsNode *node; /* the node being inferred, for messages */
};

DsShapeCtx *ds_shape_ctx_new(void) { return g_new0(DsShapeCtx, 1); }
void ds_shape_ctx_free(DsShapeCtx *ctx) { g_free(ctx); }
void ds_shape_ctx_set_node(DsShapeCtx *ctx, const DsNode *node) { ctx->node = node; }
const DsNode *ds_shape_ctx_get_node(const DsShapeCtx *ctx) { return ctx->node; }

gboolean ds_shape_is_known(const DsShape *shape)
{
  if (shape->ndim < 0)
    return FALSE;
  for (int i = 0; i < shape->ndim; i++)
    if (!ds_dim_is_known(shape->dims[i]))
      return FALSE;
  return TRUE;
}

gboolean ds_shape_get_concrete(const DsShape *shape, int64_t *dims)
{
  if (shape->ndim < 0)
    return FALSE;
  for (int i = 0; i < shape->ndim; i++) {
    if (!ds_dim_is_const(shape->dims[i]))
      return FALSE;
    dims[i] = shape->dims[i].value;
  }
  return TRUE;
}

DsShape ds_shape_from_concrete(const int64_t *dims, int ndim)
{
  DsShape s = {.ndim = ndim};
  for (int i = 0; i < ndim; i++)
    s.dims[i] = ds_dim(dims[i]);
  return s;
}

static void append_dim(GString *out, DsDim d)
{
  if (ds_dim_is_const(d))
    g_string_append_printf(out, "%" G_GINT64_FORMAT, d.value);
  else
    g_string_append_c(out, '?');
}

char *ds_shape_to_string(const DsShape *shape)
{
  if (shape->ndim < 0)
    return g_strdup("?");
  GString *out = g_string_new("(");
  for (int i = 0; i < shape->ndim; i++) {
    if (i > 0)
      g_string_append(out, ", ");
    append_dim(out, shape->dims[i]);
  }
  if (shape->ndim == 1)
    g_string_append_c(out, ',');
  g_string_append_c(out, ')');
  return g_string_free(out, FALSE);
}

static gboolean both_const(DsDim a, DsDim b) { return ds_dim_is_const(a) && ds_dim_is_const(b); }

static int64_t floordiv64(int64_t a, int64_t b)
{
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

DsDim ds_dim_add(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  (void)ctx;
  return both_const(a, b) ? ds_dim(a.value + b.value) : DS_DIM_UNKNOWN;
}

DsDim ds_dim_sub(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  (void)ctx;
  /* A negative result is not a size: callers check it (a kernel bigger than its input). */
  return both_const(a, b) && a.value >= b.value ? ds_dim(a.value - b.value) : DS_DIM_UNKNOWN;
}

DsDim ds_dim_mul(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  (void)ctx;
  if (ds_dim_is_value(a, 0) || ds_dim_is_value(b, 0))
    return ds_dim(0);
  if (!both_const(a, b) || a.value > G_MAXINT64 / b.value)
    return DS_DIM_UNKNOWN;
  return ds_dim(a.value * b.value);
}

DsDim ds_dim_floordiv(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  (void)ctx;
  if (!both_const(a, b) || b.value == 0)
    return DS_DIM_UNKNOWN;
  return ds_dim(floordiv64(a.value, b.value));
}

DsDim ds_dim_ceildiv(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  (void)ctx;
  if (!both_const(a, b) || b.value == 0)
    return DS_DIM_UNKNOWN;
  return ds_dim(-floordiv64(-a.value, b.value));
}

DsDim ds_dim_mod(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  (void)ctx;
  if (!both_const(a, b) || b.value == 0)
    return DS_DIM_UNKNOWN;
  return ds_dim(a.value - b.value * floordiv64(a.value, b.value));
}

DsDim ds_dim_max(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  (void)ctx;
  return both_const(a, b) ? ds_dim(MAX(a.value, b.value)) : DS_DIM_UNKNOWN;
}

DsDim ds_dim_min(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  (void)ctx;
  return both_const(a, b) ? ds_dim(MIN(a.value, b.value)) : DS_DIM_UNKNOWN;
}

DsDim ds_dim_product(DsShapeCtx *ctx, const DsShape *shape, int from, int to)
{
  DsDim p = ds_dim(1);
  for (int i = from; i < to; i++)
    p = ds_dim_mul(ctx, p, shape->dims[i]);
  return p;
}

void ds_shape_ctx_set_error(DsShapeCtx *ctx, GError **error, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  g_autofree char *msg = g_strdup_vprintf(format, args);
  va_end(args);
  if (ctx != NULL && ctx->node != NULL)
    g_set_error(error, DS_ERROR, DS_ERROR_SHAPE, "node '%s' (%s): %s", ctx->node->name,
                ctx->node->op_name, msg);
  else
    g_set_error_literal(error, DS_ERROR, DS_ERROR_SHAPE, msg);
}

gboolean ds_shape_ctx_unify_dim(DsShapeCtx *ctx, DsDim *slot, DsDim want, const char *what,
                                GError **error)
{
  if (!ds_dim_is_known(want))
    return TRUE;
  if (!ds_dim_is_known(*slot)) {
    *slot = want;
    return TRUE;
  }
  if (both_const(*slot, want) && slot->value != want.value) {
    ds_shape_ctx_set_error(ctx, error, "%s: dim %" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT,
                           what, slot->value, want.value);
    return FALSE;
  }
  return TRUE;
}

gboolean ds_shape_ctx_assign(DsShapeCtx *ctx, DsShape *slot, const DsShape *want,
                             const char *what, GError **error)
{
  if (want->ndim < 0)
    return TRUE;
  if (slot->ndim < 0) {
    *slot = *want;
    return TRUE;
  }
  if (slot->ndim != want->ndim) {
    g_autofree char *a = ds_shape_to_string(slot);
    g_autofree char *b = ds_shape_to_string(want);
    ds_shape_ctx_set_error(ctx, error, "%s: shape %s vs %s (rank %d vs %d)", what, a, b,
                           slot->ndim, want->ndim);
    return FALSE;
  }
  DsShape merged = *slot;
  for (int i = 0; i < want->ndim; i++) {
    GError *local = NULL;
    if (!ds_shape_ctx_unify_dim(ctx, &merged.dims[i], want->dims[i], what, &local)) {
      g_clear_error(&local);
      g_autofree char *a = ds_shape_to_string(slot);
      g_autofree char *b = ds_shape_to_string(want);
      ds_shape_ctx_set_error(ctx, error, "%s: shape %s vs %s", what, a, b);
      return FALSE;
    }
  }
  *slot = merged;
  return TRUE;
}

gboolean ds_shape_ctx_axis(DsShapeCtx *ctx, int64_t axis, int ndim, gboolean allow_end,
                           int *out, GError **error)
{
  int64_t limit = allow_end ? ndim + 1 : ndim;
  int64_t a = axis < 0 ? axis + limit : axis;
  if (a < 0 || a >= limit) {
    ds_shape_ctx_set_error(ctx, error, "axis %" G_GINT64_FORMAT " is out of range for rank %d",
                           axis, ndim);
    return FALSE;
  }
  *out = (int)a;
  return TRUE;
}
