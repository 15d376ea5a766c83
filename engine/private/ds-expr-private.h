/* ds-expr-private.h: the representation shared by the expression module's four files, which
 * call one way, lowest first: ds-expr-print.c (printing, names), ds-expr.c (building,
 * canonical forms, bounds, evaluation, the log), ds-expr-facts.c (ranges, merges, facts) and
 * ds-expr-parse.c (parsing, assumptions). Nothing outside those files includes it.
 *
 * Node layout by kind (`ops`, `coefs` and `value`):
 *   CONST     value
 *   SYMBOL    sym (name, id); no operands
 *   ADD       ops[i] = monomials (atoms or unit MUL nodes), coefs[i] their nonzero
 *             coefficients, in monomial order; value = the constant term
 *   MUL       ops[i] = atoms in atom order, coefs[i] = their exponents (>= 1); value = the
 *             coefficient (nonzero); `mono` = the same product with coefficient 1
 *   FLOORDIV  ops = {numerator, divisor}
 *   MOD       ops = {numerator, divisor}
 *   MAX, MIN  ops = two or more operands in expression order
 * An atom is a SYMBOL, FLOORDIV, MOD, MAX or MIN node; a monomial is an atom or a MUL node
 * with coefficient 1 and degree >= 2.
 */
#pragma once

#include "ds-expr.h"

/* Limits that keep a hostile or runaway expression from exhausting time or memory: a builder
 * that would exceed one returns NULL (ctx->fail = DS_EXPR_FAIL_TOO_LARGE). */
#define DS_EXPR_MAX_TERMS   1024       /* terms in one sum */
#define DS_EXPR_MAX_DEGREE  64         /* total degree of one monomial */
#define DS_EXPR_MAX_PRODUCT (1 << 16)  /* term pairs expanded by one multiplication */
#define DS_EXPR_MAX_MINMAX  256        /* operands of one max or min */
#define DS_EXPR_MAX_SIZE    (1u << 16) /* nodes in the printed tree of one expression */

/* Why the last builder returned NULL, for the parser's messages. */
typedef enum {
  DS_EXPR_FAIL_NONE,
  DS_EXPR_FAIL_OVERFLOW,  /* a coefficient or constant left int64 */
  DS_EXPR_FAIL_DIVISOR,   /* a divisor that is 0 or not known to be positive */
  DS_EXPR_FAIL_TOO_LARGE, /* one of the limits above */
} DsExprFail;

/* What never changes about a symbol. */
typedef struct {
  char *name;
  int id;
  gboolean unbacked;
  const DsExpr *upper; /* unbacked: the expression bounding it from above, or NULL */
  const DsExpr *node;
} DsExprSym;

/* What the facts say about a symbol; copied whole by a merge so a failure can roll back. */
typedef struct {
  int64_t lo, hi;        /* its own range, before merges and unbacked upper bounds */
  const DsExpr *binding; /* what it was merged into, NULL for a representative */
  gboolean lo_default;   /* lo is still the 1 a named dim starts with, which no fact set */
} DsExprSymState;

struct _DsExpr {
  DsExprKind kind;
  guint32 n_ops;
  guint32 serial; /* creation order, for hashing */
  guint32 hash;
  guint32 size;    /* nodes of the printed tree, saturated above DS_EXPR_MAX_SIZE */
  int32_t degree;  /* total degree for monomials and MUL nodes, 1 for other atoms */
  guint64 symmask; /* bit (id % 64) set for every symbol inside: a quick occurs check */
  int64_t value;
  const DsExpr **ops;
  int64_t *coefs;
  const DsExpr *mono;
  DsExprSym *sym;
  /* Caches, valid while their generation is the context's. */
  const DsExpr *resolved;
  guint64 resolved_gen;
  int64_t lo, hi;
  guint64 bounds_gen;
};

/* An expression known to lie in [lo, hi] that is not a single symbol (s0*s1 in [8, 4096]). */
typedef struct {
  const DsExpr *expr; /* in resolved form as of the last merge */
  int64_t lo, hi;
} DsExprRange;

/* An equality that no symbol could be solved from; retried after each merge. */
typedef struct {
  const DsExpr *a, *b;
  guint fact; /* its entry in the log */
  gboolean solved;
} DsExprOpaque;

typedef enum {
  DS_EXPR_LOG_EQUAL,        /* text: "s6 == s4" */
  DS_EXPR_LOG_SYMBOL_RANGE, /* index: a symbol id whose range narrowed */
  DS_EXPR_LOG_EXPR_RANGE,   /* index: an entry of ctx->ranges */
} DsExprLogKind;

typedef struct {
  DsExprLogKind kind;
  guint index;
  char *text;
  char *reason;
} DsExprLogEntry;

typedef struct {
  guint32 hash;
  DsExpr *node;
} DsExprSlot;

struct _DsExprCtx {
  /* Interned non-symbol nodes: open addressing with linear probing, hash next to pointer so a
   * probe costs one cache line; at most half full. */
  DsExprSlot *slots;
  gsize slot_mask;
  gsize n_nodes;
  GPtrArray *chunks; /* arena memory for nodes */
  char *arena_ptr;
  gsize arena_left;
  guint32 next_serial;
  guint64 gen; /* bumped by every change of the facts */
  DsExprFail fail;

  GPtrArray *symbols;      /* DsExprSym*, by id */
  GArray *states;          /* DsExprSymState, by id */
  GHashTable *names;       /* name -> DsExprSym* */
  GHashTable *prefix_next; /* prefix -> next number to try for ds_expr_fresh_symbol */
  gboolean *visiting;      /* per symbol id: its unbacked bound is being computed */
  guint visiting_len;

  GArray *ranges;              /* DsExprRange */
  GHashTable *range_index;     /* DsExprRange.expr -> index + 1 */
  GArray *opaque;              /* DsExprOpaque */
  GPtrArray *log;              /* DsExprLogEntry*, in the order learned */
  const DsExpr **small_consts; /* interned constants -64..1023, filled on first use */
};

/* ---- ds-expr.c ---- */
/* The mutable facts about a symbol (a pointer into ctx->states: valid until a symbol is
 * created). */
DsExprSymState *ds_expr_state(DsExprCtx *ctx, const DsExprSym *sym);
/* A node's range under the current facts (memoised per generation); `e` resolved. */
void ds_expr_bounds_raw(DsExprCtx *ctx, const DsExpr *e, int64_t *lo, int64_t *hi);
/* The symbol's range as the facts give it: its own range, the unbacked upper bound, and the
 * bounds of what it was merged into. */
void ds_expr_symbol_range(DsExprCtx *ctx, const DsExprSym *sym, int64_t *lo, int64_t *hi);
/* TRUE if `e` is `a*t + b` for a representative symbol t. */
gboolean ds_expr_get_linear(const DsExpr *e, const DsExpr **t, int64_t *a, int64_t *b);
/* TRUE if symbol `t` occurs anywhere in `e`. */
gboolean ds_expr_contains(const DsExpr *e, const DsExpr *t);
/* Solves `d == 0` for one symbol: the newest symbol s with d = k*s + rest, s not in rest and
 * k dividing rest; sets *sym and *value (= -rest/k). FALSE if there is none. */
gboolean ds_expr_solve(DsExprCtx *ctx, const DsExpr *d, const DsExpr **sym, const DsExpr **value);
/* TRUE if x is an unbacked symbol whose upper bound is provably <= y (< y when strict):
 * what interval arithmetic alone cannot see (`u0 <= s0` for u0 in [0, s0]). */
gboolean ds_expr_unbacked_below(DsExprCtx *ctx, const DsExpr *x, const DsExpr *y, gboolean strict);
/* a + b for interval bounds, saturating at +-DS_EXPR_INF: a lower bound (`round_down`) treats
 * only -DS_EXPR_INF as infinite, an upper bound only +DS_EXPR_INF. */
int64_t ds_expr_sat_add(int64_t a, int64_t b, gboolean round_down);
/* Python's // and % on int64; FALSE on a zero divisor or overflow. */
gboolean ds_expr_py_floordiv(int64_t a, int64_t b, int64_t *out);
gboolean ds_expr_py_mod(int64_t a, int64_t b, int64_t *out);

/* Frees a DsExprLogEntry: the free function of ctx->log. */
void ds_expr_log_free(gpointer entry);
/* Appends a fact to the log; takes `text`, copies `reason`. */
void ds_expr_log_add(DsExprCtx *ctx, DsExprLogKind kind, guint index, char *text,
                     const char *reason);

/* ---- ds-expr-facts.c ---- */
/* Rebuilds ctx->range_index from ctx->ranges. */
void ds_expr_ranges_reindex(DsExprCtx *ctx);
/* ds_expr_ctx_narrow_range with the reason to record. */
gboolean ds_expr_narrow_with_reason(DsExprCtx *ctx, const DsExpr *e, int64_t lo, int64_t hi,
                                    const char *reason, GError **error);

/* ---- ds-expr-print.c ---- */
/* Appends the text of a range: "[8, 4096]", "[8, inf)". */
void ds_expr_append_range(GString *out, int64_t lo, int64_t hi);
/* True if `name` is a valid symbol name: an identifier other than max and min. */
gboolean ds_expr_is_valid_name(const char *name);
