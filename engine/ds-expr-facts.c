/* ds-expr-facts.c: what is known about symbols: ranges, merges (union-find by binding a
 * symbol to an expression), the truth tests built on them, and the log of facts.
 *
 * Every change bumps ctx->gen, which invalidates the resolved-form and bounds caches of all
 * nodes. A merge or narrowing that fails part way restores a snapshot of the facts, so a
 * failed call leaves the context as it was.
 */
#include "ds-expr-private.h"

#include <stdlib.h>
#include <string.h>

#include "ds-error.h"

#define INF     DS_EXPR_INF
#define NEG_INF (-DS_EXPR_INF)

static char *range_string(int64_t lo, int64_t hi)
{
  GString *s = g_string_new(NULL);
  ds_expr_append_range(s, lo, hi);
  return g_string_free(s, FALSE);
}

/* ---- snapshots ---- */

typedef struct {
  guint n_states, n_ranges, n_opaque, n_log;
  DsExprSymState *states;
  DsExprRange *ranges;
  DsExprOpaque *opaque;
} Snapshot;

static void *copy_array(GArray *array)
{
  return array->len > 0 ? g_memdup2(array->data, array->len * g_array_get_element_size(array))
                        : NULL;
}

static void snapshot_take(DsExprCtx *ctx, Snapshot *s)
{
  s->n_states = ctx->states->len;
  s->n_ranges = ctx->ranges->len;
  s->n_opaque = ctx->opaque->len;
  s->n_log = ctx->log->len;
  s->states = copy_array(ctx->states);
  s->ranges = copy_array(ctx->ranges);
  s->opaque = copy_array(ctx->opaque);
}

static void restore_array(GArray *array, const void *data, guint len)
{
  g_array_set_size(array, len);
  if (len > 0)
    memcpy(array->data, data, len * g_array_get_element_size(array));
}

/* Puts the facts back as they were; caches made meanwhile die with the generation. */
static void snapshot_restore(DsExprCtx *ctx, const Snapshot *s)
{
  if (s->n_states > 0)
    memcpy(ctx->states->data, s->states, s->n_states * sizeof(DsExprSymState));
  restore_array(ctx->ranges, s->ranges, s->n_ranges);
  restore_array(ctx->opaque, s->opaque, s->n_opaque);
  g_ptr_array_set_size(ctx->log, s->n_log);
  ds_expr_ranges_reindex(ctx);
  ctx->gen++;
}

static void snapshot_free(Snapshot *s)
{
  g_free(s->states);
  g_free(s->ranges);
  g_free(s->opaque);
}

/* ---- ranges ---- */

void ds_expr_ranges_reindex(DsExprCtx *ctx)
{
  g_hash_table_remove_all(ctx->range_index);
  for (guint i = 0; i < ctx->ranges->len; i++) {
    DsExprRange *r = &g_array_index(ctx->ranges, DsExprRange, i);
    guint idx = GPOINTER_TO_UINT(g_hash_table_lookup(ctx->range_index, r->expr));
    if (idx > 0) {
      /* Two entries that merges made the same expression: the first holds both. */
      DsExprRange *first = &g_array_index(ctx->ranges, DsExprRange, idx - 1);
      first->lo = MAX(first->lo, r->lo);
      first->hi = MIN(first->hi, r->hi);
    } else {
      g_hash_table_insert(ctx->range_index, (gpointer)r->expr, GUINT_TO_POINTER(i + 1));
    }
  }
}

static int64_t sat_sub(int64_t a, int64_t b)
{
  if (a >= INF || a <= NEG_INF)
    return a;
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r))
    return b < 0 ? INF : NEG_INF;
  return MAX(r, NEG_INF);
}

/* x / a rounded down or up, for a bound x (possibly infinite) and a != 0. */
static int64_t bound_div(int64_t x, int64_t a, gboolean up)
{
  if (x >= INF || x <= NEG_INF)
    return (x > 0) == (a > 0) ? INF : NEG_INF;
  int64_t q = x / a, r = x % a;
  if (r != 0 && !up && ((r < 0) != (a < 0)))
    q--;
  if (r != 0 && up && ((r < 0) == (a < 0)))
    q++;
  return q;
}

static void set_range_error(GError **error, const char *what, int64_t lo, int64_t hi, int64_t el,
                            int64_t eh)
{
  g_autofree char *want = range_string(lo, hi), *have = range_string(el, eh);
  g_set_error(error, DS_ERROR, DS_ERROR_SHAPE, "%s cannot be in %s: it is in %s", what, want, have);
}

/* Intersects a symbol's own range with [lo, hi]. */
static gboolean narrow_symbol(DsExprCtx *ctx, const DsExprSym *sym, int64_t lo, int64_t hi,
                              const char *reason, GError **error)
{
  int64_t el, eh;
  ds_expr_symbol_range(ctx, sym, &el, &eh);
  if (MAX(lo, el) > MIN(hi, eh)) {
    set_range_error(error, sym->name, lo, hi, el, eh);
    return FALSE;
  }
  DsExprSymState *st = ds_expr_state(ctx, sym);
  if (lo >= 1)
    st->lo_default = FALSE; /* a fact says so now: an empty dim would break it */
  if (lo <= el && eh <= hi)
    return TRUE;
  st->lo = MAX(st->lo, lo);
  st->hi = MIN(st->hi, hi);
  ctx->gen++;
  ds_expr_log_add(ctx, DS_EXPR_LOG_SYMBOL_RANGE, (guint)sym->id, NULL, reason);
  return TRUE;
}

/* Records that resolved expression `e` lies in [lo, hi]: a check for a constant, the
 * symbol's range for `a*t + b`, an expression range otherwise. */
static gboolean narrow_expr(DsExprCtx *ctx, const DsExpr *e, int64_t lo, int64_t hi,
                            const char *reason, GError **error)
{
  const DsExpr *t;
  int64_t v, a, b, el, eh;
  if (ds_expr_get_const(e, &v)) {
    if (v >= lo && v <= hi)
      return TRUE;
    g_autofree char *want = range_string(lo, hi);
    g_set_error(error, DS_ERROR, DS_ERROR_SHAPE, "%" G_GINT64_FORMAT " is not in %s", v, want);
    return FALSE;
  }
  if (ds_expr_get_linear(e, &t, &a, &b)) {
    int64_t x = sat_sub(lo, b), y = sat_sub(hi, b);
    int64_t tlo = a > 0 ? bound_div(x, a, TRUE) : bound_div(y, a, TRUE);
    int64_t thi = a > 0 ? bound_div(y, a, FALSE) : bound_div(x, a, FALSE);
    return narrow_symbol(ctx, t->sym, tlo, thi, reason, error);
  }
  ds_expr_bounds_raw(ctx, e, &el, &eh);
  if (MAX(lo, el) > MIN(hi, eh)) {
    g_autofree char *text = ds_expr_to_string(e);
    set_range_error(error, text, lo, hi, el, eh);
    return FALSE;
  }
  if (lo <= el && eh <= hi)
    return TRUE;
  guint idx = GPOINTER_TO_UINT(g_hash_table_lookup(ctx->range_index, e));
  if (idx > 0) {
    DsExprRange *r = &g_array_index(ctx->ranges, DsExprRange, idx - 1);
    r->lo = MAX(r->lo, lo);
    r->hi = MIN(r->hi, hi);
  } else {
    DsExprRange r = {e, MAX(lo, el), MIN(hi, eh)};
    g_array_append_val(ctx->ranges, r);
    idx = ctx->ranges->len;
    g_hash_table_insert(ctx->range_index, (gpointer)e, GUINT_TO_POINTER(idx));
  }
  ctx->gen++;
  ds_expr_log_add(ctx, DS_EXPR_LOG_EXPR_RANGE, idx - 1, NULL, reason);
  return TRUE;
}

/* FALSE if some expression range is now empty given the symbols' ranges. */
static gboolean check_ranges(DsExprCtx *ctx, GError **error)
{
  for (guint i = 0; i < ctx->ranges->len; i++) {
    DsExprRange r = g_array_index(ctx->ranges, DsExprRange, i);
    int64_t lo, hi;
    ds_expr_bounds_raw(ctx, r.expr, &lo, &hi);
    if (lo > hi) {
      g_autofree char *text = ds_expr_to_string(r.expr);
      int64_t el, eh;
      /* The range the expression's operands give, without the fact that contradicts it. */
      g_hash_table_remove_all(ctx->range_index);
      ctx->gen++;
      ds_expr_bounds_raw(ctx, r.expr, &el, &eh);
      ds_expr_ranges_reindex(ctx);
      ctx->gen++;
      set_range_error(error, text, r.lo, r.hi, el, eh);
      return FALSE;
    }
  }
  return TRUE;
}

/* After a merge: expression ranges move to their new resolved forms; those that became a
 * constant or `a*t + b` turn into checks and symbol ranges. */
static gboolean recheck_ranges(DsExprCtx *ctx, const char *reason, GError **error)
{
  if (ctx->ranges->len == 0)
    return TRUE;
  for (guint i = 0; i < ctx->ranges->len; i++) {
    DsExprRange r = g_array_index(ctx->ranges, DsExprRange, i);
    const DsExpr *e = ds_expr_resolve(ctx, r.expr), *t;
    int64_t a, b;
    if (e == NULL)
      continue;
    g_array_index(ctx->ranges, DsExprRange, i).expr = e;
    if ((ds_expr_get_const(e, &a) || ds_expr_get_linear(e, &t, &a, &b)) &&
        !narrow_expr(ctx, e, r.lo, r.hi, reason, error))
      return FALSE;
  }
  ds_expr_ranges_reindex(ctx);
  ctx->gen++;
  return check_ranges(ctx, error);
}

gboolean ds_expr_narrow_with_reason(DsExprCtx *ctx, const DsExpr *e, int64_t lo, int64_t hi,
                                    const char *reason, GError **error)
{
  const DsExpr *r = ds_expr_resolve(ctx, e);
  if (e == NULL || r == NULL || lo > hi) {
    g_autofree char *want = range_string(lo, hi);
    g_set_error(error, DS_ERROR, DS_ERROR_SHAPE, "cannot narrow %s to %s",
                e == NULL ? "a missing expression" : "this expression", want);
    return FALSE;
  }
  Snapshot snap;
  snapshot_take(ctx, &snap);
  gboolean ok = TRUE;
  if (e->kind == DS_EXPR_SYMBOL)
    ok = narrow_symbol(ctx, e->sym, lo, hi, reason, error);
  if (ok && r != e) {
    ok = narrow_expr(ctx, r, lo, hi, reason, error);
    if (!ok && e->kind == DS_EXPR_SYMBOL) {
      g_autofree char *text = ds_expr_to_string(r);
      g_prefix_error(error, "%s == %s: ", e->sym->name, text);
    }
  }
  if (ok && r == e && e->kind != DS_EXPR_SYMBOL)
    ok = narrow_expr(ctx, r, lo, hi, reason, error);
  if (ok)
    ok = check_ranges(ctx, error);
  if (!ok)
    snapshot_restore(ctx, &snap);
  snapshot_free(&snap);
  return ok;
}

gboolean ds_expr_ctx_narrow_range(DsExprCtx *ctx, const DsExpr *symbol, int64_t lo, int64_t hi,
                                  GError **error)
{
  return ds_expr_narrow_with_reason(ctx, symbol, lo, hi, NULL, error);
}

gboolean ds_expr_ctx_allow_empty(DsExprCtx *ctx, const DsExpr *symbol)
{
  if (symbol == NULL || symbol->kind != DS_EXPR_SYMBOL)
    return FALSE;
  DsExprSymState *st = ds_expr_state(ctx, symbol->sym);
  if (st->lo == 0)
    return TRUE;
  if (!st->lo_default || st->binding != NULL)
    return FALSE;
  st->lo = 0;
  ctx->gen++;
  ds_expr_log_add(ctx, DS_EXPR_LOG_SYMBOL_RANGE, (guint)symbol->sym->id, NULL, NULL);
  return TRUE;
}

void ds_expr_ctx_get_range(DsExprCtx *ctx, const DsExpr *symbol, int64_t *lo, int64_t *hi)
{
  if (symbol != NULL && symbol->kind == DS_EXPR_SYMBOL)
    ds_expr_symbol_range(ctx, symbol->sym, lo, hi);
  else
    ds_expr_bounds(ctx, symbol, lo, hi);
}

/* ---- merges ---- */

static void collect_symbols(const DsExpr *e, GPtrArray *syms)
{
  if (e->kind == DS_EXPR_SYMBOL) {
    for (guint i = 0; i < syms->len; i++)
      if (g_ptr_array_index(syms, i) == e)
        return;
    g_ptr_array_add(syms, (gpointer)e);
    return;
  }
  for (guint i = 0; i < e->n_ops; i++)
    collect_symbols(e->ops[i], syms);
}

static int symbol_id_cmp(gconstpointer pa, gconstpointer pb)
{
  const DsExpr *a = *(const DsExpr *const *)pa, *b = *(const DsExpr *const *)pb;
  return a->sym->id - b->sym->id;
}

/* "a vs b: <why>" where `d` = a - b is a nonzero constant or kept from 0 by the ranges. */
static void set_contradiction(DsExprCtx *ctx, GError **error, const DsExpr *a, const DsExpr *b,
                              const DsExpr *d)
{
  g_autofree char *sa = ds_expr_to_string(a), *sb = ds_expr_to_string(b);
  GString *why = g_string_new(NULL);
  int64_t v, lo, hi;
  if (ds_expr_get_const(d, &v)) {
    guint64 mag = v < 0 ? (guint64)(-(v + 1)) + 1 : (guint64)v;
    g_string_append_printf(why, "they differ by %" G_GUINT64_FORMAT, mag);
  } else {
    GPtrArray *syms = g_ptr_array_new();
    collect_symbols(d, syms);
    g_ptr_array_sort(syms, symbol_id_cmp);
    if (syms->len > 0 && syms->len <= 4) {
      for (guint i = 0; i < syms->len; i++) {
        const DsExpr *s = g_ptr_array_index(syms, i);
        ds_expr_symbol_range(ctx, s->sym, &lo, &hi);
        g_string_append_printf(why, "%s%s is in ", i > 0 ? ", " : "", s->sym->name);
        ds_expr_append_range(why, lo, hi);
      }
    } else {
      g_autofree char *sd = ds_expr_to_string(d);
      ds_expr_bounds_raw(ctx, d, &lo, &hi);
      g_string_append_printf(why, "their difference %s is in ", sd);
      ds_expr_append_range(why, lo, hi);
    }
    g_ptr_array_unref(syms);
  }
  g_set_error(error, DS_ERROR, DS_ERROR_SHAPE, "%s vs %s: %s", sa, sb, why->str);
  g_string_free(why, TRUE);
}

/* TRUE if an unsolved opaque equality says d == 0. */
static gboolean opaque_matches(DsExprCtx *ctx, const DsExpr *d)
{
  for (guint i = 0; i < ctx->opaque->len; i++) {
    DsExprOpaque o = g_array_index(ctx->opaque, DsExprOpaque, i);
    if (o.solved)
      continue;
    const DsExpr *od = ds_expr_sub(ctx, o.a, o.b);
    int64_t v;
    if (od != NULL && (od == d || (ds_expr_get_const(ds_expr_add(ctx, od, d), &v) && v == 0)))
      return TRUE;
  }
  return FALSE;
}

static gboolean merge_internal(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b, const char *reason,
                               gboolean *pending, GError **error);

/* Retries the opaque equalities after a merge: one may now be solvable or contradicted. */
static gboolean recheck_opaque(DsExprCtx *ctx, GError **error)
{
  for (guint i = 0; i < ctx->opaque->len; i++) {
    DsExprOpaque o = g_array_index(ctx->opaque, DsExprOpaque, i);
    if (o.solved)
      continue;
    /* Marked solved first so the merges it causes do not retry it. */
    g_array_index(ctx->opaque, DsExprOpaque, i).solved = TRUE;
    gboolean pending = FALSE;
    const char *reason = ((DsExprLogEntry *)g_ptr_array_index(ctx->log, o.fact))->reason;
    if (!merge_internal(ctx, o.a, o.b, reason, &pending, error))
      return FALSE;
    if (pending)
      g_array_index(ctx->opaque, DsExprOpaque, i).solved = FALSE;
  }
  return TRUE;
}

/* Binds symbol t to `value` (from a == b), moving t's range onto `value`. */
static gboolean bind(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b, const DsExpr *t,
                     const DsExpr *value, const char *reason, GError **error)
{
  int64_t lo, hi, v;
  g_autofree char *sa = ds_expr_to_string(a), *sb = ds_expr_to_string(b);
  ds_expr_symbol_range(ctx, t->sym, &lo, &hi);
  if (ds_expr_get_const(value, &v) && (v < lo || v > hi)) {
    g_autofree char *range = range_string(lo, hi);
    g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                "%s vs %s: %s would be %" G_GINT64_FORMAT ", but it is in %s", sa, sb, t->sym->name,
                v, range);
    return FALSE;
  }
  ds_expr_state(ctx, t->sym)->binding = value;
  ctx->gen++;
  g_autofree char *text = ds_expr_to_string(value);
  ds_expr_log_add(ctx, DS_EXPR_LOG_EQUAL, 0, g_strdup_printf("%s == %s", t->sym->name, text),
                  reason);
  const DsExpr *r = ds_expr_resolve(ctx, value);
  if (r != NULL &&
      (!narrow_expr(ctx, r, lo, hi, reason, error) || !recheck_ranges(ctx, reason, error))) {
    g_prefix_error(error, "%s vs %s: ", sa, sb);
    return FALSE;
  }
  /* Substituting can push a coefficient out of int64 or an expression past the size limits:
   * every symbol must keep a resolved form. */
  for (guint i = 0; i < ctx->symbols->len && r != NULL; i++) {
    const DsExprSym *sym = g_ptr_array_index(ctx->symbols, i);
    if (ds_expr_resolve(ctx, sym->node) == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                  "%s vs %s: %s would overflow int64 or grow too large", sa, sb, sym->name);
      return FALSE;
    }
  }
  if (r == NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                "%s vs %s: %s == %s overflows int64 or grows too large", sa, sb, t->sym->name,
                text);
    return FALSE;
  }
  return recheck_opaque(ctx, error);
}

/* Records a == b. With `pending` (retrying an opaque fact), an equality that stays unsolved
 * sets *pending instead of being recorded again. */
static gboolean merge_internal(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b, const char *reason,
                               gboolean *pending, GError **error)
{
  const DsExpr *ra = ds_expr_resolve(ctx, a), *rb = ds_expr_resolve(ctx, b), *t, *value;
  if (ra == NULL || rb == NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_SHAPE, "the expressions are too large to compare");
    return FALSE;
  }
  if (ra == rb)
    return TRUE;
  const DsExpr *d = ds_expr_sub(ctx, ra, rb);
  if (d != NULL) {
    int64_t v, lo, hi;
    if (ds_expr_get_const(d, &v)) {
      if (v == 0)
        return TRUE;
      set_contradiction(ctx, error, ra, rb, d);
      return FALSE;
    }
    ds_expr_bounds_raw(ctx, d, &lo, &hi);
    if (lo > 0 || hi < 0) {
      set_contradiction(ctx, error, ra, rb, d);
      return FALSE;
    }
    if (pending == NULL && opaque_matches(ctx, d))
      return TRUE;
    if (ds_expr_solve(ctx, d, &t, &value))
      return bind(ctx, ra, rb, t, value, reason, error);
  }
  if (pending != NULL) {
    *pending = TRUE;
    return TRUE;
  }
  g_autofree char *sa = ds_expr_to_string(ra), *sb = ds_expr_to_string(rb);
  DsExprOpaque o = {ra, rb, ctx->log->len, FALSE};
  ds_expr_log_add(ctx, DS_EXPR_LOG_EQUAL, 0, g_strdup_printf("%s == %s", sa, sb), reason);
  g_array_append_val(ctx->opaque, o);
  return TRUE;
}

gboolean ds_expr_ctx_merge(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b, const char *reason,
                           GError **error)
{
  if (a == NULL || b == NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_SHAPE, "cannot merge an expression that was not built");
    return FALSE;
  }
  if (ds_expr_resolve(ctx, a) == ds_expr_resolve(ctx, b) && ds_expr_resolve(ctx, a) != NULL)
    return TRUE;
  Snapshot snap;
  snapshot_take(ctx, &snap);
  gboolean ok = merge_internal(ctx, a, b, reason, NULL, error);
  if (!ok)
    snapshot_restore(ctx, &snap);
  snapshot_free(&snap);
  return ok;
}

/* ---- truth ---- */

DsExprTruth ds_expr_equal(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b)
{
  const DsExpr *ra = ds_expr_resolve(ctx, a), *rb = ds_expr_resolve(ctx, b);
  if (ra == NULL || rb == NULL)
    return DS_EXPR_UNKNOWN;
  if (ra == rb)
    return DS_EXPR_TRUE;
  const DsExpr *d = ds_expr_sub(ctx, ra, rb);
  int64_t lo, hi;
  if (d == NULL)
    return DS_EXPR_UNKNOWN;
  ds_expr_bounds_raw(ctx, d, &lo, &hi);
  if (lo > 0 || hi < 0)
    return DS_EXPR_FALSE;
  if (lo == 0 && hi == 0)
    return DS_EXPR_TRUE;
  return opaque_matches(ctx, d) ? DS_EXPR_TRUE : DS_EXPR_UNKNOWN;
}

/* Decides 0 < b - a (strict) or 0 <= b - a. */
static DsExprTruth compare(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b, gboolean strict)
{
  const DsExpr *ra = ds_expr_resolve(ctx, a), *rb = ds_expr_resolve(ctx, b);
  if (ra != NULL && rb != NULL && ds_expr_unbacked_below(ctx, ra, rb, strict))
    return DS_EXPR_TRUE;
  const DsExpr *d = ds_expr_sub(ctx, b, a);
  if (d == NULL)
    return DS_EXPR_UNKNOWN;
  int64_t lo, hi;
  ds_expr_bounds_raw(ctx, d, &lo, &hi);
  if (strict ? lo >= 1 : lo >= 0)
    return DS_EXPR_TRUE;
  if (strict ? hi <= 0 : hi < 0)
    return DS_EXPR_FALSE;
  return DS_EXPR_UNKNOWN;
}

DsExprTruth ds_expr_less(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b)
{
  return compare(ctx, a, b, TRUE);
}

DsExprTruth ds_expr_less_equal(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b)
{
  return compare(ctx, a, b, FALSE);
}

/* ---- listing ---- */

static void fact_free(gpointer p)
{
  DsExprFact *fact = p;
  g_free(fact->text);
  g_free(fact->reason);
  g_free(fact);
}

static char *symbol_range_text(DsExprCtx *ctx, const DsExprSym *sym)
{
  const DsExprSymState *st = ds_expr_state(ctx, sym);
  GString *s = g_string_new(sym->name);
  g_string_append(s, " in ");
  if (sym->upper != NULL) {
    const DsExpr *upper = ds_expr_resolve(ctx, sym->upper);
    g_autofree char *text = ds_expr_to_string(upper != NULL ? upper : sym->upper);
    g_string_append_printf(s, "[%" G_GINT64_FORMAT ", ", st->lo);
    if (st->hi >= INF)
      g_string_append_printf(s, "%s]", text);
    else
      g_string_append_printf(s, "min(%s, %" G_GINT64_FORMAT ")]", text, st->hi);
  } else {
    ds_expr_append_range(s, st->lo, st->hi);
  }
  return g_string_free(s, FALSE);
}

static char *expr_range_text(DsExprCtx *ctx, const DsExprRange *r)
{
  const DsExpr *e = ds_expr_resolve(ctx, r->expr);
  g_autofree char *text = ds_expr_to_string(e != NULL ? e : r->expr);
  GString *s = g_string_new(text);
  g_string_append(s, " in ");
  ds_expr_append_range(s, r->lo, r->hi);
  return g_string_free(s, FALSE);
}

GPtrArray *ds_expr_ctx_list_facts(DsExprCtx *ctx)
{
  GPtrArray *facts = g_ptr_array_new_with_free_func(fact_free);
  guint n = ctx->log->len;
  gboolean *done = g_new0(gboolean, n);
  for (guint i = 0; i < n; i++) {
    if (done[i])
      continue;
    const DsExprLogEntry *entry = g_ptr_array_index(ctx->log, i);
    DsExprFact *fact = g_new0(DsExprFact, 1);
    g_ptr_array_add(facts, fact);
    if (entry->kind == DS_EXPR_LOG_EQUAL) {
      fact->text = g_strdup(entry->text);
      fact->reason = g_strdup(entry->reason);
      continue;
    }
    /* One line per symbol or expression: its range now, at the place it was first narrowed,
     * with every distinct reason that narrowed it. */
    GPtrArray *reasons = g_ptr_array_new();
    for (guint j = i; j < n; j++) {
      const DsExprLogEntry *other = g_ptr_array_index(ctx->log, j);
      if (other->kind != entry->kind || other->index != entry->index)
        continue;
      done[j] = TRUE;
      gboolean seen = other->reason == NULL;
      for (guint k = 0; k < reasons->len && !seen; k++)
        seen = strcmp(g_ptr_array_index(reasons, k), other->reason) == 0;
      if (!seen)
        g_ptr_array_add(reasons, other->reason);
    }
    g_ptr_array_add(reasons, NULL);
    fact->reason = reasons->len > 1 ? g_strjoinv("; ", (char **)reasons->pdata) : NULL;
    g_ptr_array_unref(reasons);
    if (entry->kind == DS_EXPR_LOG_SYMBOL_RANGE)
      fact->text = symbol_range_text(ctx, g_ptr_array_index(ctx->symbols, entry->index));
    else
      fact->text = expr_range_text(ctx, &g_array_index(ctx->ranges, DsExprRange, entry->index));
  }
  g_free(done);
  return facts;
}

void ds_expr_facts_free(GPtrArray *facts)
{
  if (facts != NULL)
    g_ptr_array_unref(facts);
}
