/* ds-shape.h: dims and shapes, for concrete and symbolic inference alike.
 *
 * A DsDim is either a constant (`expr == NULL`, `value >= 0`), unknown (`expr == NULL`,
 * `value < 0`), or a symbolic expression (`expr != NULL`, never a constant; see ds-expr.h). Shape functions are
 * written once against the ds_dim_* arithmetic below, which folds constants and builds
 * expressions when a symbolic context is active, so one function serves both the concrete
 * executor and the symbolic shape engine.
 *
 * A DsShape with ndim < 0 is an unknown rank.
 */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "ds-graph.h"
#include "ds-tensor.h"

typedef struct _DsExpr DsExpr;
typedef struct _DsExprCtx DsExprCtx;

typedef struct {
  int64_t value;
  const DsExpr *expr;
} DsDim;

typedef struct {
  int ndim;
  DsDim dims[DS_MAX_NDIM];
} DsShape;

#define DS_DIM_UNKNOWN ((DsDim){-1, NULL})
#define DS_SHAPE_UNKNOWN ((DsShape){.ndim = -1})

static inline DsDim ds_dim(int64_t value) { return (DsDim){value, NULL}; }
static inline gboolean ds_dim_is_const(DsDim d) { return d.expr == NULL && d.value >= 0; }
static inline gboolean ds_dim_is_known(DsDim d) { return d.expr != NULL || d.value >= 0; }
static inline gboolean ds_dim_is_value(DsDim d, int64_t v) { return d.expr == NULL && d.value == v; }

/* TRUE if the rank and every dim are known. */
gboolean ds_shape_is_known(const DsShape *shape);
/* TRUE if known and every dim is a constant; then fills `dims` (DS_MAX_NDIM slots). */
gboolean ds_shape_get_concrete(const DsShape *shape, int64_t *dims);
DsShape ds_shape_from_concrete(const int64_t *dims, int ndim);
/* "(1, 3, 224, 224)", "(s0, 10*s1)"; unknown dims print as "?". Expressions print as stored:
 * resolve them first (ds_graph_shapes_resolve) to see merged forms. Caller frees. */
char *ds_shape_to_string(const DsShape *shape);
char *ds_dim_to_string(DsDim d);
/* A dim for an expression: a plain constant when it folds to one. NULL gives unknown. */
DsDim ds_dim_from_expr(const DsExpr *e);

/* The contents of a small integer tensor that a shape is computed from: Shape's output, the
 * dims a Gather or Slice takes from it, their Concat into a Reshape target. Exporters build
 * targets that way (Shape -> Cast -> Slice -> Concat -> Reshape), so inference follows the
 * values through such chains instead of giving up on data it cannot see. An element is a
 * constant, which may be negative (-1 in a Reshape target), or an expression of the symbols
 * (`e`); an element nothing determined is DS_SHAPE_ELEM_UNKNOWN. `n` counts the elements (the
 * entry's shape says whether it is 0-D or 1-D); n < 0 when nothing is known. */
typedef struct {
  int64_t c;
  const DsExpr *e;
} DsShapeElem;

#define DS_SHAPE_ELEM_UNKNOWN ((DsShapeElem){G_MININT64, NULL})
#define DS_SHAPE_VALUE_MAX DS_MAX_NDIM

typedef struct {
  int n;
  DsShapeElem x[DS_SHAPE_VALUE_MAX];
} DsShapeValue;

#define DS_SHAPE_VALUE_UNKNOWN ((DsShapeValue){.n = -1})

static inline gboolean ds_shape_elem_is_known(DsShapeElem x)
{
  return x.e != NULL || x.c != G_MININT64;
}

/* The inference context: which node is being inferred (for messages), and, once the symbolic
 * engine is active, its expression table and facts. */
typedef struct _DsShapeCtx DsShapeCtx;

DsShapeCtx *ds_shape_ctx_new(void);
/* A context whose dims may be expressions in `exprs` (borrowed; must outlive the context). */
DsShapeCtx *ds_shape_ctx_new_symbolic(DsExprCtx *exprs);
/* The expression engine, or NULL for concrete inference. */
DsExprCtx *ds_shape_ctx_get_exprs(const DsShapeCtx *ctx);
/* Notes on what inference could not decide (a broadcast, which branch runs), as text
 * (borrowed). */
GPtrArray *ds_shape_ctx_get_notes(const DsShapeCtx *ctx);
/* Adds a note, once: inference reruns every node until nothing changes. */
void ds_shape_ctx_add_note(DsShapeCtx *ctx, const char *format, ...) G_GNUC_PRINTF(2, 3);

/* A guard: a condition `expr >= min` an op needs but the facts do not prove (a kernel no
 * larger than its padded input). Evaluating shapes for a binding checks every guard, so a
 * size concrete inference would refuse is refused there too. */
typedef struct {
  const DsExpr *expr;
  int64_t min;
  char *message; /* "node 'pool3' (Pooling): kernel size 13 exceeds the input size" */
} DsShapeGuard;

/* Records a guard for the current node, unless the facts already prove it or an identical
 * one exists. Without an expression engine (concrete inference) it does nothing. */
void ds_shape_ctx_add_guard(DsShapeCtx *ctx, DsDim dim, int64_t min, const char *what);
/* The guards learned so far (DsShapeGuard*; borrowed). */
GPtrArray *ds_shape_ctx_get_guards(const DsShapeCtx *ctx);
void ds_shape_ctx_free(DsShapeCtx *ctx);
void ds_shape_ctx_set_node(DsShapeCtx *ctx, const DsNode *node);
const DsNode *ds_shape_ctx_get_node(const DsShapeCtx *ctx);

/* Shape values (DsShapeValue) of the node being inferred, which the graph driver hands over:
 * `in` and `out` hold one per input and output (`out` is written back after the node's rules).
 * NULL detaches them (a rule called alone sees none). */
void ds_shape_ctx_set_values(DsShapeCtx *ctx, const DsShapeValue *in, guint n_in,
                             DsShapeValue *out, guint n_out);
/* Input `i`'s value, or NULL when it is not known. */
const DsShapeValue *ds_shape_ctx_input_value(const DsShapeCtx *ctx, guint i);
/* Where output `k`'s value goes, or NULL when the driver keeps none. */
DsShapeValue *ds_shape_ctx_output_value(DsShapeCtx *ctx, guint k);

/* A data-dependent dim (boolean_mask's count, unique's size). `current` when it is already
 * known: the inference fixpoint calls shape functions again, and the symbol must be made once.
 * Otherwise, in a symbolic context, a fresh unbacked symbol `u<n>` with range [0, upper]
 * (unbounded when `upper` is unknown), which the dynamic executor binds once the op has run;
 * in a concrete context, unknown: only running the op tells. */
DsDim ds_shape_ctx_unbacked_dim(DsShapeCtx *ctx, DsDim current, DsDim upper);
/* While deferred, ds_shape_ctx_unbacked_dim() leaves data-dependent dims unknown: a first
 * pass can learn every input dim (and symbolize the ones nothing fixes) before unbacked
 * symbols are made, so their upper bounds can name those symbols. */
void ds_shape_ctx_defer_unbacked(DsShapeCtx *ctx, gboolean defer);

/* Arithmetic. An unknown operand gives an unknown result. Floor division and modulo follow
 * Python (round towards negative infinity); a zero divisor gives unknown. */
DsDim ds_dim_add(DsShapeCtx *ctx, DsDim a, DsDim b);
DsDim ds_dim_sub(DsShapeCtx *ctx, DsDim a, DsDim b);
DsDim ds_dim_mul(DsShapeCtx *ctx, DsDim a, DsDim b);
DsDim ds_dim_floordiv(DsShapeCtx *ctx, DsDim a, DsDim b);
DsDim ds_dim_ceildiv(DsShapeCtx *ctx, DsDim a, DsDim b);
DsDim ds_dim_mod(DsShapeCtx *ctx, DsDim a, DsDim b);
DsDim ds_dim_max(DsShapeCtx *ctx, DsDim a, DsDim b);
DsDim ds_dim_min(DsShapeCtx *ctx, DsDim a, DsDim b);
/* TRUE if b provably divides a (the remainder folds to 0). */
gboolean ds_dim_divides(DsShapeCtx *ctx, DsDim a, DsDim b);
/* Product of dims [from, to) of a shape. */
DsDim ds_dim_product(DsShapeCtx *ctx, const DsShape *shape, int from, int to);

/* Unifies `*slot` with `want`: an unknown slot takes `want`; two known dims must be equal
 * (the symbolic engine records the equality instead where it cannot decide). On a mismatch
 * the error names the node, its op, `what` ("weight", "input 1"...) and both values. */
gboolean ds_shape_ctx_unify_dim(DsShapeCtx *ctx, DsDim *slot, DsDim want, const char *what,
                                GError **error);
/* Unifies a whole shape, rank included; an unknown-rank slot takes `want`. */
gboolean ds_shape_ctx_assign(DsShapeCtx *ctx, DsShape *slot, const DsShape *want,
                             const char *what, GError **error);

/* NumPy broadcasting of one pair of dims: a 1 broadcasts; equal dims stay; two dims the facts
 * prove > 1 must be equal (and are merged); an undecided symbol against a dim proven > 1 is
 * taken to equal it (merged, the fact naming the node), not to be a broadcasting 1; two
 * undecided dims give max(a, b) and a note saying why. Different constants are an error. */
gboolean ds_shape_ctx_broadcast_dim(DsShapeCtx *ctx, DsDim a, DsDim b, DsDim *out,
                                    GError **error);

/* A DS_ERROR_SHAPE error prefixed with the node being inferred:
 * "node 'conv0' (Convolution): <message>". */
void ds_shape_ctx_set_error(DsShapeCtx *ctx, GError **error, const char *format, ...)
  G_GNUC_PRINTF(3, 4);

/* Normalises a possibly negative axis for rank `ndim`; FALSE (with an error naming the node) if
 * it is out of range. `allow_end` accepts ndim itself (expand_dims). */
gboolean ds_shape_ctx_axis(DsShapeCtx *ctx, int64_t axis, int ndim, gboolean allow_end,
                           int *out, GError **error);
