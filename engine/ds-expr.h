/* ds-expr.h: symbolic integer expressions for tensor dims, and the facts known about them.
 *
 * An expression is built from integer constants, named symbols, +, -, *, floor division (//),
 * modulo (%), max and min. Expressions are hash-consed in a DsExprCtx (one per graph): equal
 * expressions are one object, so pointer equality is structural equality. They are kept in a
 * canonical form:
 *   - a sum of terms `coefficient * monomial`, like terms collected, constants folded, terms in
 *     a fixed order; a monomial is a sorted product of atoms (symbols and non-polynomial nodes:
 *     //, %, max, min), so `a - a` is 0 and `b + a` is `a + b`;
 *   - `(k*a + r)//k` is `a + r//k` and `(k*a + r) % k` is `r % k` (terms whose coefficients k
 *     divides leave the division), so `(k*a)//k` is `a`;
 *   - max/min flattened, operands sorted and deduplicated (`max(a, a)` is `a`), folded when the
 *     facts decide the comparison (`max(s1, 1)` is `s1` when s1 >= 1).
 *
 * Facts: every symbol has a range [lo, hi] (hi may be DS_EXPR_INF); input dims default to
 * [1, inf). Equalities merge through union-find: merging `s4` with `s6` makes one the other's
 * representative, merging `s1` with `384` binds s1; a merged expression resolves to its
 * representative's form (ds_expr_resolve). A merge that the ranges contradict (`3` vs `s1`
 * with s1 >= 4) fails. Data-dependent sizes get unbacked symbols (`u0`) whose range is bounded
 * by an expression (`u0 in [0, s0]`).
 *
 * Memory policy: the context owns every expression and symbol it creates; pointers stay valid
 * until ds_expr_ctx_free(). A context is not thread-safe.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

typedef struct _DsExpr DsExpr;
typedef struct _DsExprCtx DsExprCtx;

#define DS_EXPR_INF G_MAXINT64

typedef enum {
  DS_EXPR_CONST,
  DS_EXPR_SYMBOL,
  DS_EXPR_ADD,      /* sum of terms (and a constant) */
  DS_EXPR_MUL,      /* coefficient times a product of atoms */
  DS_EXPR_FLOORDIV,
  DS_EXPR_MOD,
  DS_EXPR_MAX,
  DS_EXPR_MIN,
} DsExprKind;

DsExprCtx *ds_expr_ctx_new(void);
void ds_expr_ctx_free(DsExprCtx *ctx);

/* ---- building (every result is canonical and hash-consed) ---- */
const DsExpr *ds_expr_const(DsExprCtx *ctx, int64_t value);
/* The symbol called `name`, created with range [1, inf) on first use. Names are identifiers
 * ([A-Za-z_][A-Za-z0-9_]*); the same name is the same symbol. */
const DsExpr *ds_expr_symbol(DsExprCtx *ctx, const char *name);
/* A new symbol `<prefix><n>` with the lowest n not yet taken ("s0", "s1"...), range [1, inf). */
const DsExpr *ds_expr_fresh_symbol(DsExprCtx *ctx, const char *prefix);
/* A new unbacked symbol `u<n>` with range [0, upper] (`upper` may be NULL for unbounded). */
const DsExpr *ds_expr_unbacked(DsExprCtx *ctx, const DsExpr *upper);
const DsExpr *ds_expr_add(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b);
const DsExpr *ds_expr_sub(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b);
const DsExpr *ds_expr_mul(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b);
/* Python semantics (floor towards -inf). A divisor that is 0, or not known to be positive,
 * returns NULL: dims never divide by a possibly negative or zero size. */
const DsExpr *ds_expr_floordiv(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b);
const DsExpr *ds_expr_mod(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b);
const DsExpr *ds_expr_max(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b);
const DsExpr *ds_expr_min(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b);

/* ---- inspecting ---- */
DsExprKind ds_expr_get_kind(const DsExpr *e);
/* TRUE and the value if `e` is a constant. */
gboolean ds_expr_get_const(const DsExpr *e, int64_t *value);
/* For a symbol: its name (borrowed) and id (0, 1, 2... in creation order); NULL/-1 otherwise. */
const char *ds_expr_get_symbol_name(const DsExpr *e);
int ds_expr_get_symbol_id(const DsExpr *e);
gboolean ds_expr_is_unbacked(const DsExpr *e);
/* Number of symbols created so far (ids are 0..n-1), and the symbol with id `id`. */
guint ds_expr_ctx_get_n_symbols(const DsExprCtx *ctx);
const DsExpr *ds_expr_ctx_get_symbol(const DsExprCtx *ctx, guint id);
/* The expression with every merged symbol replaced by its representative's form, in
 * canonical form. Cheap when nothing changed since the last call (memoised). */
const DsExpr *ds_expr_resolve(DsExprCtx *ctx, const DsExpr *e);

/* ---- facts ---- */
/* Narrows a symbol's range (intersection). A range left empty is a contradiction: FALSE with
 * a DS_ERROR_SHAPE error naming the symbol and both ranges. */
gboolean ds_expr_ctx_narrow_range(DsExprCtx *ctx, const DsExpr *symbol, int64_t lo, int64_t hi,
                                  GError **error);
/* A named dim starts in [1, inf): most dims are never empty, and simplifications read better
 * for it. A KV cache's prefill has past_seq = 0, so an assumption or binding that asks for 0
 * lowers that default lower bound to 0 through this call. FALSE when a fact set the lower
 * bound (a kernel no larger than its input, an assumption 's >= 1') or the symbol was merged
 * into another: those keep their range. TRUE when 0 is now in range. */
gboolean ds_expr_ctx_allow_empty(DsExprCtx *ctx, const DsExpr *symbol);
/* The symbol's current range (after merges). */
void ds_expr_ctx_get_range(DsExprCtx *ctx, const DsExpr *symbol, int64_t *lo, int64_t *hi);
/* Bounds of any expression from its symbols' ranges (interval arithmetic; may be loose). */
void ds_expr_bounds(DsExprCtx *ctx, const DsExpr *e, int64_t *lo, int64_t *hi);

typedef enum {
  DS_EXPR_UNKNOWN = 0,
  DS_EXPR_TRUE,
  DS_EXPR_FALSE,
} DsExprTruth;
/* Decides a == b, a < b, a <= b from canonical forms and ranges. */
DsExprTruth ds_expr_equal(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b);
DsExprTruth ds_expr_less(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b);
DsExprTruth ds_expr_less_equal(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b);

/* Records a == b. Solves for a symbol when one side minus the other is `±s + rest` (s := ∓rest)
 * or `k*s + rest` with k dividing rest; otherwise keeps the equality as an opaque fact. Returns
 * FALSE with a DS_ERROR_SHAPE error when the facts contradict it (different constants, or a
 * difference the ranges keep away from 0); the message gives both expressions and the range
 * that rules it out. `reason` (e.g. "node 'dot3' (batch_dot)") is stored with the fact. */
gboolean ds_expr_ctx_merge(DsExprCtx *ctx, const DsExpr *a, const DsExpr *b, const char *reason,
                           GError **error);

/* Parses and applies an assumption: "s1>=8", "s1 > 1", "s1<=4096", "s1==2*s2", "s1 in [1, 4096]".
 * Errors (DS_ERROR_INPUT) name the text and what is wrong. */
gboolean ds_expr_ctx_assume(DsExprCtx *ctx, const char *text, GError **error);

/* One learned fact, for display: "s6 == s4", "s1 == 384", "s1 in [8, inf)" ... */
typedef struct {
  char *text;   /* Python-readable where possible: "s1 == 384" */
  char *reason; /* who forced it, or NULL */
} DsExprFact;
/* Every equality (with its reason) and every non-default range, in the order learned.
 * Caller frees with ds_expr_facts_free(). */
GPtrArray *ds_expr_ctx_list_facts(DsExprCtx *ctx);
void ds_expr_facts_free(GPtrArray *facts);

/* ---- text ---- */
/* People's syntax, which Python's eval also reads given the symbols and max/min:
 * "10*s1", "max(s1, s2)", "(s0 - 3)//2 + 1", "s0*s1 + 4". Caller frees. */
char *ds_expr_to_string(const DsExpr *e);
/* Parses that syntax (integers, identifiers, + - * // %, unary -, parentheses, max(...) and
 * min(...) with two or more arguments). Unknown names become symbols. Errors
 * (DS_ERROR_PARSE) give the offset and what was expected. */
const DsExpr *ds_expr_parse(DsExprCtx *ctx, const char *text, GError **error);

/* ---- evaluation ---- */
/* Values indexed by symbol id; `bound[id]` says which are set. Fails (FALSE) if a needed
 * symbol is unbound or a division by zero / overflow occurs. Resolves merges first. */
gboolean ds_expr_eval(DsExprCtx *ctx, const DsExpr *e, const int64_t *values,
                      const gboolean *bound, int64_t *out);
