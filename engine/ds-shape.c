/* ds-shape.c: dim arithmetic, unification and broadcasting, concrete or symbolic.
 *
 * Constants fold here without touching the expression engine. When the context carries a
 * DsExprCtx, any expression operand builds a canonical expression there, unification merges
 * (union-find) and broadcasting consults the ranges; without one, an expression operand
 * yields an unknown dim.
 */
#include "ds-shape.h"

#include <stdarg.h>

#include "ds-error.h"
#include "ds-expr.h"
#include "ds-op.h"

struct _DsShapeCtx {
  const DsNode *node; /* the node being inferred, for messages */
  DsExprCtx *exprs;   /* borrowed; NULL for concrete inference */
  GPtrArray *notes;   /* undecided broadcasts, as text */
  GPtrArray *guards;  /* DsShapeGuard*, owned */
  gboolean defer_unbacked; /* data-dependent dims stay unknown for now */
  const DsShapeValue *in_values; /* the current node's, from the graph driver, or NULL */
  DsShapeValue *out_values;
  guint n_in_values, n_out_values;
};

/* "node 'conv0' (Convolution)", the reason stored with a learned fact. */
static char *node_reason(const DsShapeCtx *ctx)
{
  if (ctx == NULL || ctx->node == NULL)
    return g_strdup("a declaration");
  return g_strdup_printf("node '%s' (%s)", ctx->node->name, ctx->node->op_name);
}

static void guard_free(gpointer data)
{
  DsShapeGuard *guard = data;
  g_free(guard->message);
  g_free(guard);
}

DsShapeCtx *ds_shape_ctx_new(void) { return ds_shape_ctx_new_symbolic(NULL); }

DsShapeCtx *ds_shape_ctx_new_symbolic(DsExprCtx *exprs)
{
  DsShapeCtx *ctx = g_new0(DsShapeCtx, 1);
  ctx->exprs = exprs;
  ctx->notes = g_ptr_array_new_with_free_func(g_free);
  ctx->guards = g_ptr_array_new_with_free_func(guard_free);
  return ctx;
}

void ds_shape_ctx_free(DsShapeCtx *ctx)
{
  if (ctx == NULL)
    return;
  g_ptr_array_unref(ctx->notes);
  g_ptr_array_unref(ctx->guards);
  g_free(ctx);
}

void ds_shape_ctx_set_node(DsShapeCtx *ctx, const DsNode *node) { ctx->node = node; }

void ds_shape_ctx_set_values(DsShapeCtx *ctx, const DsShapeValue *in, guint n_in,
                             DsShapeValue *out, guint n_out)
{
  ctx->in_values = in;
  ctx->n_in_values = in != NULL ? n_in : 0;
  ctx->out_values = out;
  ctx->n_out_values = out != NULL ? n_out : 0;
}

const DsShapeValue *ds_shape_ctx_input_value(const DsShapeCtx *ctx, guint i)
{
  if (ctx == NULL || i >= ctx->n_in_values || ctx->in_values[i].n < 0)
    return NULL;
  return &ctx->in_values[i];
}

DsShapeValue *ds_shape_ctx_output_value(DsShapeCtx *ctx, guint k)
{
  return ctx != NULL && k < ctx->n_out_values ? &ctx->out_values[k] : NULL;
}
const DsNode *ds_shape_ctx_get_node(const DsShapeCtx *ctx) { return ctx->node; }
DsExprCtx *ds_shape_ctx_get_exprs(const DsShapeCtx *ctx) { return ctx->exprs; }
GPtrArray *ds_shape_ctx_get_notes(const DsShapeCtx *ctx) { return ctx->notes; }

void ds_shape_ctx_add_note(DsShapeCtx *ctx, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  char *note = g_strdup_vprintf(format, ap);
  va_end(ap);
  if (g_ptr_array_find_with_equal_func(ctx->notes, note, g_str_equal, NULL))
    g_free(note);
  else
    g_ptr_array_add(ctx->notes, note);
}
GPtrArray *ds_shape_ctx_get_guards(const DsShapeCtx *ctx) { return ctx->guards; }

void ds_shape_ctx_add_guard(DsShapeCtx *ctx, DsDim dim, int64_t min, const char *what)
{
  if (ctx == NULL || ctx->exprs == NULL || dim.expr == NULL)
    return;
  const DsExpr *e = ds_expr_resolve(ctx->exprs, dim.expr);
  if (e == NULL ||
      ds_expr_less_equal(ctx->exprs, ds_expr_const(ctx->exprs, min), e) == DS_EXPR_TRUE)
    return;
  for (guint i = 0; i < ctx->guards->len; i++) {
    const DsShapeGuard *g = ctx->guards->pdata[i];
    if (g->expr == e && g->min == min)
      return;
  }
  DsShapeGuard *guard = g_new0(DsShapeGuard, 1);
  guard->expr = e;
  guard->min = min;
  g_autofree char *reason = node_reason(ctx);
  guard->message = g_strdup_printf("%s: %s", reason, what);
  g_ptr_array_add(ctx->guards, guard);
}

void ds_shape_ctx_defer_unbacked(DsShapeCtx *ctx, gboolean defer)
{
  ctx->defer_unbacked = defer;
}

DsDim ds_shape_ctx_unbacked_dim(DsShapeCtx *ctx, DsDim current, DsDim upper)
{
  if (ds_dim_is_known(current))
    return current;
  if (ctx == NULL || ctx->exprs == NULL || ctx->defer_unbacked)
    return DS_DIM_UNKNOWN;
  const DsExpr *bound = NULL;
  if (upper.expr != NULL)
    bound = upper.expr;
  else if (upper.value >= 0)
    bound = ds_expr_const(ctx->exprs, upper.value);
  return (DsDim){-1, ds_expr_unbacked(ctx->exprs, bound)};
}

DsDim ds_dim_from_expr(const DsExpr *e)
{
  int64_t v;
  if (e == NULL)
    return DS_DIM_UNKNOWN;
  if (ds_expr_get_const(e, &v))
    return v >= 0 ? ds_dim(v) : DS_DIM_UNKNOWN;
  return (DsDim){-1, e};
}

/* The dim as an expression in ctx's engine; NULL if unknown or concrete mode. */
static const DsExpr *to_expr(const DsShapeCtx *ctx, DsDim d)
{
  if (ctx == NULL || ctx->exprs == NULL || !ds_dim_is_known(d))
    return NULL;
  return d.expr != NULL ? d.expr : ds_expr_const(ctx->exprs, d.value);
}

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
  if (ds_dim_is_const(d)) {
    g_string_append_printf(out, "%" G_GINT64_FORMAT, d.value);
  } else if (d.expr != NULL) {
    g_autofree char *text = ds_expr_to_string(d.expr);
    g_string_append(out, text);
  } else {
    g_string_append_c(out, '?');
  }
}

char *ds_dim_to_string(DsDim d)
{
  GString *out = g_string_new(NULL);
  append_dim(out, d);
  return g_string_free(out, FALSE);
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

typedef const DsExpr *(*ExprOp)(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b);

/* The symbolic path of a binary op: both operands as expressions, or unknown. */
static DsDim symbolic(DsShapeCtx *ctx, ExprOp op, DsDim a, DsDim b)
{
  const DsExpr *x = to_expr(ctx, a), *y = to_expr(ctx, b);
  if (x == NULL || y == NULL)
    return DS_DIM_UNKNOWN;
  return ds_dim_from_expr(op(ctx->exprs, x, y));
}

DsDim ds_dim_add(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  if (both_const(a, b))
    return ds_dim(a.value + b.value);
  return symbolic(ctx, ds_expr_add, a, b);
}

DsDim ds_dim_sub(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  /* A negative constant is not a size: callers check it (a kernel bigger than its input). */
  if (both_const(a, b))
    return a.value >= b.value ? ds_dim(a.value - b.value) : DS_DIM_UNKNOWN;
  return symbolic(ctx, ds_expr_sub, a, b);
}

DsDim ds_dim_mul(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  if (ds_dim_is_value(a, 0) || ds_dim_is_value(b, 0))
    return ds_dim(0);
  if (both_const(a, b))
    return a.value <= G_MAXINT64 / MAX(b.value, 1) ? ds_dim(a.value * b.value) : DS_DIM_UNKNOWN;
  return symbolic(ctx, ds_expr_mul, a, b);
}

DsDim ds_dim_floordiv(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  if (ds_dim_is_value(b, 0))
    return DS_DIM_UNKNOWN;
  if (both_const(a, b))
    return ds_dim(floordiv64(a.value, b.value));
  return symbolic(ctx, ds_expr_floordiv, a, b);
}

DsDim ds_dim_ceildiv(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  if (ds_dim_is_value(b, 0))
    return DS_DIM_UNKNOWN;
  if (both_const(a, b))
    return ds_dim(-floordiv64(-a.value, b.value));
  /* (a + b - 1) // b reads better than -((-a) // b) and is the same for b > 0. */
  return ds_dim_floordiv(ctx, ds_dim_sub(ctx, ds_dim_add(ctx, a, b), ds_dim(1)), b);
}

DsDim ds_dim_mod(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  if (ds_dim_is_value(b, 0))
    return DS_DIM_UNKNOWN;
  if (both_const(a, b))
    return ds_dim(a.value - b.value * floordiv64(a.value, b.value));
  return symbolic(ctx, ds_expr_mod, a, b);
}

DsDim ds_dim_max(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  if (both_const(a, b))
    return ds_dim(MAX(a.value, b.value));
  return symbolic(ctx, ds_expr_max, a, b);
}

DsDim ds_dim_min(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  if (both_const(a, b))
    return ds_dim(MIN(a.value, b.value));
  return symbolic(ctx, ds_expr_min, a, b);
}

gboolean ds_dim_divides(DsShapeCtx *ctx, DsDim a, DsDim b)
{
  DsDim rem = ds_dim_mod(ctx, a, b);
  return ds_dim_is_value(rem, 0);
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
  if (both_const(*slot, want)) {
    if (slot->value != want.value) {
      ds_shape_ctx_set_error(ctx, error, "%s: dim %" G_GINT64_FORMAT " vs %" G_GINT64_FORMAT,
                             what, slot->value, want.value);
      return FALSE;
    }
    return TRUE;
  }
  const DsExpr *x = to_expr(ctx, *slot), *y = to_expr(ctx, want);
  if (x == NULL || y == NULL)
    return TRUE; /* concrete inference cannot compare expressions: leave them */
  g_autofree char *reason = node_reason(ctx);
  GError *local = NULL;
  if (!ds_expr_ctx_merge(ctx->exprs, x, y, reason, &local)) {
    ds_shape_ctx_set_error(ctx, error, "%s: %s", what, local->message);
    g_error_free(local);
    return FALSE;
  }
  *slot = ds_dim_from_expr(ds_expr_resolve(ctx->exprs, x));
  return TRUE;
}

/* TRUE if the facts prove d >= 2. */
static gboolean known_above_one(DsShapeCtx *ctx, const DsExpr *d)
{
  int64_t lo, hi;
  ds_expr_bounds(ctx->exprs, d, &lo, &hi);
  return lo >= 2;
}

static gboolean known_one(DsShapeCtx *ctx, const DsExpr *d)
{
  int64_t lo, hi;
  ds_expr_bounds(ctx->exprs, d, &lo, &hi);
  return lo == 1 && hi == 1;
}

gboolean ds_shape_ctx_broadcast_dim(DsShapeCtx *ctx, DsDim a, DsDim b, DsDim *out,
                                    GError **error)
{
  if (ds_dim_is_value(a, 1) || !ds_dim_is_known(a)) {
    *out = b; /* an unknown a is 1 or b: either way the result is b */
    return TRUE;
  }
  if (ds_dim_is_value(b, 1) || !ds_dim_is_known(b)) {
    *out = a;
    return TRUE;
  }
  if (both_const(a, b)) {
    if (a.value != b.value) {
      ds_shape_ctx_set_error(ctx, error,
                             "%" G_GINT64_FORMAT " and %" G_GINT64_FORMAT " cannot broadcast",
                             a.value, b.value);
      return FALSE;
    }
    *out = a;
    return TRUE;
  }
  const DsExpr *x = to_expr(ctx, a), *y = to_expr(ctx, b);
  if (x == NULL || y == NULL) {
    *out = DS_DIM_UNKNOWN;
    return TRUE;
  }
  x = ds_expr_resolve(ctx->exprs, x);
  y = ds_expr_resolve(ctx->exprs, y);
  if (x == y) {
    *out = a;
    return TRUE;
  }
  if (known_one(ctx, x) || known_one(ctx, y)) {
    *out = ds_dim_from_expr(known_one(ctx, x) ? y : x);
    return TRUE;
  }
  gboolean x_big = known_above_one(ctx, x), y_big = known_above_one(ctx, y);
  if (x_big && y_big) {
    /* Neither can be the 1 that broadcasts, so they must be equal. */
    DsDim merged = a;
    if (!ds_shape_ctx_unify_dim(ctx, &merged, b, "broadcast", error))
      return FALSE;
    *out = merged;
    return TRUE;
  }
  g_autofree char *xs = ds_expr_to_string(x), *ys = ds_expr_to_string(y);
  g_autofree char *reason = node_reason(ctx);
  if (x_big || y_big) {
    /* The other is 1 or equal to it. As PyTorch's and MindSpore's symbolic shapes do, take a
     * symbolic dim to be the equal one, not a broadcasting 1 (a size-1 dim is declared as 1):
     * so bert's `(s0, s1)` input learns s1 == 384 here. If the facts rule equality out, the
     * other must be the 1, and the result is the big one either way. */
    DsDim merged = x_big ? a : b;
    GError *local = NULL;
    if (!ds_shape_ctx_unify_dim(ctx, &merged, x_big ? b : a, "broadcast", &local))
      g_clear_error(&local);
    *out = ds_dim_from_expr(ds_expr_resolve(ctx->exprs, x_big ? x : y));
    return TRUE;
  }
  *out = ds_dim_from_expr(ds_expr_max(ctx->exprs, x, y));
  ds_shape_ctx_add_note(ctx,
                        "%s: broadcast of %s and %s is undecided, so the result is max(%s, %s) "
                        "(assume either > 1 to decide)",
                        reason, xs, ys, xs, ys);
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
