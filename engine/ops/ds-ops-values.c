/* ds-ops-values.c: shape values through the ops that compute shapes (see ds-ops-values.h).
 *
 * Values are kept only for tensors of at most DS_SHAPE_VALUE_MAX elements that are 0-D or 1-D,
 * and only as far as integer arithmetic goes: a Cast to a float type ends them, as float maths
 * is not shape arithmetic. Elements are int64 constants (negative allowed) or expressions of
 * the symbols, which only a symbolic context can build; in a concrete context every dim is a
 * constant anyway.
 */
#include "ds-ops-values.h"

#include "ds-expr.h"
#include "ds-ops-common.h"
#include "ds-ops-dynamic.h"
#include "ds-ops-elemwise.h"
#include "ds-ops-index.h"
#include "ds-ops-tensor.h"

/* ------------------------------------------------------------------------------------------ */
/* Elements */

static DsShapeElem elem_from_dim(DsDim d)
{
  if (d.expr != NULL)
    return (DsShapeElem){0, d.expr};
  return d.value >= 0 ? (DsShapeElem){d.value, NULL} : DS_SHAPE_ELEM_UNKNOWN;
}

/* The dim an element gives as a size: unknown for a negative constant. */
static DsDim dim_from_elem(DsShapeElem x)
{
  if (x.e != NULL)
    return ds_dim_from_expr(x.e);
  return x.c >= 0 ? ds_dim(x.c) : DS_DIM_UNKNOWN;
}

static DsShapeElem elem_from_expr(const DsExpr *e)
{
  int64_t c;
  if (e == NULL)
    return DS_SHAPE_ELEM_UNKNOWN;
  return ds_expr_get_const(e, &c) ? (DsShapeElem){c, NULL} : (DsShapeElem){0, e};
}

typedef enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MAX, OP_MIN } Arith;

/* ONNX's integer Div truncates towards zero; shape arithmetic never divides negatives except
 * by a mistake that the run would show, so expressions use floor division (the same there). */
static gboolean arith_const(Arith op, int64_t a, int64_t b, int64_t *r)
{
  switch (op) {
  case OP_ADD: return !__builtin_add_overflow(a, b, r);
  case OP_SUB: return !__builtin_sub_overflow(a, b, r);
  case OP_MUL: return !__builtin_mul_overflow(a, b, r);
  case OP_DIV:
    if (b == 0 || (a == G_MININT64 && b == -1))
      return FALSE;
    *r = a / b;
    return TRUE;
  case OP_MAX: *r = MAX(a, b); return TRUE;
  case OP_MIN: *r = MIN(a, b); return TRUE;
  }
  return FALSE;
}

static DsShapeElem arith(DsShapeCtx *ctx, Arith op, DsShapeElem a, DsShapeElem b)
{
  if (!ds_shape_elem_is_known(a) || !ds_shape_elem_is_known(b))
    return DS_SHAPE_ELEM_UNKNOWN;
  int64_t r;
  if (a.e == NULL && b.e == NULL)
    return arith_const(op, a.c, b.c, &r) ? (DsShapeElem){r, NULL} : DS_SHAPE_ELEM_UNKNOWN;
  DsExprCtx *exprs = ds_shape_ctx_get_exprs(ctx);
  if (exprs == NULL)
    return DS_SHAPE_ELEM_UNKNOWN;
  const DsExpr *x = a.e != NULL ? a.e : ds_expr_const(exprs, a.c);
  const DsExpr *y = b.e != NULL ? b.e : ds_expr_const(exprs, b.c);
  switch (op) {
  case OP_ADD: return elem_from_expr(ds_expr_add(exprs, x, y));
  case OP_SUB: return elem_from_expr(ds_expr_sub(exprs, x, y));
  case OP_MUL: return elem_from_expr(ds_expr_mul(exprs, x, y));
  case OP_DIV: return elem_from_expr(ds_expr_floordiv(exprs, x, y));
  case OP_MAX: return elem_from_expr(ds_expr_max(exprs, x, y));
  case OP_MIN: return elem_from_expr(ds_expr_min(exprs, x, y));
  }
  return DS_SHAPE_ELEM_UNKNOWN;
}

/* ------------------------------------------------------------------------------------------ */
/* Helpers */

/* The element count of a 0-D or 1-D shape small enough to hold a value, else -1. */
static int value_length(const DsShape *s)
{
  if (s->ndim == 0)
    return 1;
  if (s->ndim == 1 && ds_dim_is_const(s->dims[0]) && s->dims[0].value <= DS_SHAPE_VALUE_MAX)
    return (int)s->dims[0].value;
  return -1;
}

/* Sets output `k`'s value, when the driver keeps values and `v` fits the output's shape. */
static void set_value(DsShapeCtx *ctx, guint k, const DsShape *out, const DsShapeValue *v)
{
  DsShapeValue *slot = ds_shape_ctx_output_value(ctx, k);
  if (slot != NULL && v->n >= 0 && value_length(&out[k]) == v->n)
    *slot = *v;
}

static gboolean is_integer_dtype(DsDType d)
{
  return d == DS_DTYPE_INT32 || d == DS_DTYPE_INT64 || d == DS_DTYPE_INT8 || d == DS_DTYPE_UINT8;
}

/* Which arithmetic a binary or scalar op does on shape values, if any. */
static gboolean binary_arith(DsOpId id, Arith *op)
{
  switch (id) {
  case DS_OP_ELEMWISE_ADD:
  case DS_OP_BROADCAST_ADD: *op = OP_ADD; return TRUE;
  case DS_OP_ELEMWISE_SUB:
  case DS_OP_BROADCAST_SUB: *op = OP_SUB; return TRUE;
  case DS_OP_ELEMWISE_MUL:
  case DS_OP_BROADCAST_MUL: *op = OP_MUL; return TRUE;
  case DS_OP_ELEMWISE_DIV:
  case DS_OP_BROADCAST_DIV: *op = OP_DIV; return TRUE;
  case DS_OP_BROADCAST_MAXIMUM: *op = OP_MAX; return TRUE;
  case DS_OP_BROADCAST_MINIMUM: *op = OP_MIN; return TRUE;
  default: return FALSE;
  }
}

static gboolean scalar_arith(DsOpId id, Arith *op, gboolean *reverse)
{
  *reverse = FALSE;
  switch (id) {
  case DS_OP_PLUS_SCALAR: *op = OP_ADD; return TRUE;
  case DS_OP_MINUS_SCALAR: *op = OP_SUB; return TRUE;
  case DS_OP_RMINUS_SCALAR: *op = OP_SUB; *reverse = TRUE; return TRUE;
  case DS_OP_MUL_SCALAR: *op = OP_MUL; return TRUE;
  case DS_OP_DIV_SCALAR: *op = OP_DIV; return TRUE;
  case DS_OP_MAXIMUM_SCALAR: *op = OP_MAX; return TRUE;
  case DS_OP_MINIMUM_SCALAR: *op = OP_MIN; return TRUE;
  default: return FALSE;
  }
}

/* Python's slice of `n` elements: [begin, end) with `step`, DS_SLICE_NONE for a default. */
static void slice_value(const DsShapeValue *in, int64_t begin, int64_t end, int64_t step,
                        DsShapeValue *out)
{
  int64_t n = in->n;
  out->n = -1;
  if (step == 0)
    return;
  if (begin == DS_SLICE_NONE)
    begin = step > 0 ? 0 : n - 1;
  else if (begin < 0)
    begin = MAX(begin + n, step > 0 ? 0 : -1);
  else
    begin = MIN(begin, step > 0 ? n : n - 1);
  if (end == DS_SLICE_NONE)
    end = step > 0 ? n : -1;
  else if (end < 0)
    end = MAX(end + n, step > 0 ? 0 : -1);
  else
    end = MIN(end, step > 0 ? n : n - 1);
  out->n = 0;
  for (int64_t i = begin; step > 0 ? i < end : i > end; i += step)
    out->x[out->n++] = in->x[i];
}

/* ------------------------------------------------------------------------------------------ */
/* Producers */

static void propagate_binary(DsShapeCtx *ctx, Arith op, const DsShape *in, const DsShape *out)
{
  const DsShapeValue *a = ds_shape_ctx_input_value(ctx, 0), *b = ds_shape_ctx_input_value(ctx, 1);
  if (a == NULL || b == NULL || value_length(&in[0]) != a->n || value_length(&in[1]) != b->n)
    return;
  int n = MAX(a->n, b->n);
  if ((a->n != n && a->n != 1) || (b->n != n && b->n != 1))
    return;
  DsShapeValue r = {.n = n};
  for (int i = 0; i < n; i++)
    r.x[i] = arith(ctx, op, a->x[a->n == 1 ? 0 : i], b->x[b->n == 1 ? 0 : i]);
  set_value(ctx, 0, out, &r);
}

static void propagate_scalar(DsShapeCtx *ctx, const DsNode *node, Arith op, gboolean reverse,
                             const DsShape *out)
{
  const DsScalarParam *p = node->param;
  const DsShapeValue *a = ds_shape_ctx_input_value(ctx, 0);
  double s = p->scalar;
  if (a == NULL || s != (double)(int64_t)s)
    return;
  DsShapeElem k = {(int64_t)s, NULL};
  DsShapeValue r = {.n = a->n};
  for (int i = 0; i < a->n; i++)
    r.x[i] = reverse ? arith(ctx, op, k, a->x[i]) : arith(ctx, op, a->x[i], k);
  set_value(ctx, 0, out, &r);
}

static void propagate_take(DsShapeCtx *ctx, const DsNode *node, const DsShape *in,
                           const DsShape *out)
{
  const DsTakeParam *p = node->param;
  const DsShapeValue *data = ds_shape_ctx_input_value(ctx, 0);
  const DsShapeValue *idx = ds_shape_ctx_input_value(ctx, 1);
  if (data == NULL || idx == NULL || in[0].ndim != 1 || (p->axis != 0 && p->axis != -1))
    return;
  DsShapeValue r = {.n = idx->n};
  for (int i = 0; i < idx->n; i++) {
    int64_t k = idx->x[i].c;
    if (idx->x[i].e != NULL || !ds_shape_elem_is_known(idx->x[i]))
      return;
    if (k < 0)
      k += data->n; /* ONNX's Gather counts a negative index from the end */
    if (k < 0 || k >= data->n)
      return;
    r.x[i] = data->x[k];
  }
  set_value(ctx, 0, out, &r);
}

static void propagate_concat(DsShapeCtx *ctx, const DsNode *node, const DsShape *in,
                             const DsShape *out)
{
  const DsConcatParam *p = node->param;
  if (out[0].ndim != 1 || (p->dim != 0 && p->dim != -1))
    return;
  DsShapeValue r = {.n = 0};
  for (guint i = 0; i < node->n_inputs; i++) {
    int len = value_length(&in[i]);
    if (len < 0 || in[i].ndim != 1 || r.n + len > DS_SHAPE_VALUE_MAX)
      return;
    const DsShapeValue *v = ds_shape_ctx_input_value(ctx, i);
    for (int k = 0; k < len; k++)
      r.x[r.n++] = v != NULL ? v->x[k] : DS_SHAPE_ELEM_UNKNOWN;
  }
  set_value(ctx, 0, out, &r);
}

/* An op that only reshapes or retypes its values (Unsqueeze of a scalar, Squeeze of a single
 * element, a Cast between integer types): the same elements. */
static void propagate_same(DsShapeCtx *ctx, const DsShape *out)
{
  const DsShapeValue *a = ds_shape_ctx_input_value(ctx, 0);
  if (a != NULL)
    set_value(ctx, 0, out, a);
}

gboolean ds_op_values_propagate(DsShapeCtx *ctx, const DsNode *node, const DsShape *in,
                                const DsShape *out, GError **error)
{
  (void)error;
  if (ds_shape_ctx_output_value(ctx, 0) == NULL)
    return TRUE;
  DsOpId id = node->op->id;
  Arith op;
  gboolean reverse;
  if (binary_arith(id, &op)) {
    propagate_binary(ctx, op, in, out);
    return TRUE;
  }
  if (scalar_arith(id, &op, &reverse)) {
    propagate_scalar(ctx, node, op, reverse, out);
    return TRUE;
  }
  switch (id) {
  case DS_OP_SHAPE_ARRAY: {
    if (in[0].ndim < 0 || in[0].ndim > DS_SHAPE_VALUE_MAX)
      break;
    DsShapeValue r = {.n = in[0].ndim};
    for (int d = 0; d < in[0].ndim; d++)
      r.x[d] = elem_from_dim(in[0].dims[d]);
    set_value(ctx, 0, out, &r);
    break;
  }
  case DS_OP_SIZE_ARRAY: {
    if (in[0].ndim < 0)
      break;
    DsShapeValue r = {.n = 1, .x = {elem_from_dim(ds_dim_product(ctx, &in[0], 0, in[0].ndim))}};
    set_value(ctx, 0, out, &r);
    break;
  }
  case DS_OP_CAST:
    if (is_integer_dtype(((const DsCastParam *)node->param)->dtype))
      propagate_same(ctx, out);
    break;
  case DS_OP_EXPAND_DIMS:
  case DS_OP_SQUEEZE:
  case DS_OP_NP_RESHAPE:
  case DS_OP_RESHAPE:
    propagate_same(ctx, out);
    break;
  case DS_OP_SLICE_AXIS: {
    const DsSliceAxisParam *p = node->param;
    const DsShapeValue *a = ds_shape_ctx_input_value(ctx, 0);
    if (a == NULL || in[0].ndim != 1 || (p->axis != 0 && p->axis != -1))
      break;
    DsShapeValue r;
    slice_value(a, p->begin, p->has_end ? p->end : DS_SLICE_NONE, 1, &r);
    set_value(ctx, 0, out, &r);
    break;
  }
  case DS_OP_SLICE: {
    const DsSliceParam *p = node->param;
    const DsShapeValue *a = ds_shape_ctx_input_value(ctx, 0);
    if (a == NULL || in[0].ndim != 1 || p->n_axes != 1 ||
        (p->has_axes && p->axes[0] != 0 && p->axes[0] != -1))
      break;
    DsShapeValue r;
    slice_value(a, p->begin[0], p->end[0], p->n_step > 0 ? p->step[0] : 1, &r);
    set_value(ctx, 0, out, &r);
    break;
  }
  case DS_OP_TAKE:
    propagate_take(ctx, node, in, out);
    break;
  case DS_OP_CONCAT:
    propagate_concat(ctx, node, in, out);
    break;
  default:
    break;
  }
  return TRUE;
}

/* ------------------------------------------------------------------------------------------ */
/* Consumers */

/* A shape from the value of a 1-D shape tensor, each element a size (unknown where it is not
 * a known non-negative size). FALSE when no value is known. */
static gboolean shape_from_value(DsShapeCtx *ctx, guint input, const DsShape *in, DsShape *shape)
{
  const DsShapeValue *v = ds_shape_ctx_input_value(ctx, input);
  if (v == NULL || in[input].ndim != 1 || v->n > DS_MAX_NDIM)
    return FALSE;
  shape->ndim = v->n;
  for (int d = 0; d < v->n; d++)
    shape->dims[d] = dim_from_elem(v->x[d]);
  return TRUE;
}

/* ONNX's Reshape codes on a computed target: 0 copies the data's dim at that position (unless
 * allowzero), -1 takes what the other dims leave of the data's size. */
static gboolean reshape_shape(DsShapeCtx *ctx, const DsNode *node, DsShape *in, DsShape *out,
                              GError **error)
{
  const DsDynamicReshapeParam *p = node->param;
  const DsShapeValue *v = ds_shape_ctx_input_value(ctx, 1);
  if (v == NULL || in[1].ndim != 1 || v->n > DS_MAX_NDIM || in[0].ndim < 0)
    return TRUE;
  DsShape want = {.ndim = v->n};
  int infer_at = -1;
  for (int d = 0; d < v->n; d++) {
    DsShapeElem x = v->x[d];
    if (x.e == NULL && x.c == 0 && !p->allowzero)
      want.dims[d] = d < in[0].ndim ? in[0].dims[d] : DS_DIM_UNKNOWN;
    else if (x.e == NULL && x.c == -1 && infer_at < 0)
      infer_at = d;
    else
      want.dims[d] = dim_from_elem(x);
  }
  if (infer_at >= 0) {
    want.dims[infer_at] = DS_DIM_UNKNOWN;
    DsDim rest = ds_dim(1);
    for (int d = 0; d < v->n; d++)
      if (d != infer_at)
        rest = ds_dim_mul(ctx, rest, want.dims[d]);
    DsDim size = ds_dim_product(ctx, &in[0], 0, in[0].ndim);
    if (ds_dim_is_known(rest) && ds_dim_is_known(size) && !ds_dim_is_value(rest, 0) &&
        ds_dim_divides(ctx, size, rest))
      want.dims[infer_at] = ds_dim_floordiv(ctx, size, rest);
  }
  return ds_ops_assign_shape(ctx, &out[0], &want, "output", error);
}

/* An element read as an int64 constant, or FALSE. */
static gboolean elem_const(DsShapeElem x, int64_t *c)
{
  if (x.e != NULL || !ds_shape_elem_is_known(x))
    return FALSE;
  *c = x.c;
  return TRUE;
}

/* Bounds this large stand for "to the end" (exporters write INT64_MAX or INT32_MAX). */
#define SLICE_TO_END ((int64_t)1 << 31)

/* One slice bound of a step-1 slice of a dim `d`, clamped into [0, d] as Python does; unknown
 * where the facts cannot say. */
static DsDim slice_bound(DsShapeCtx *ctx, DsShapeElem b, DsDim d)
{
  int64_t c;
  if (elem_const(b, &c)) {
    if (c >= SLICE_TO_END)
      return d;
    if (ds_dim_is_const(d))
      return ds_dim(c < 0 ? MAX(c + d.value, 0) : MIN(c, d.value));
    if (c >= 0)
      return ds_dim_min(ctx, ds_dim(c), d);
    /* -k from the end of a dim the facts only know symbolically: d - k when d >= k. */
    DsDim k = ds_dim(-c);
    return ds_dim_max(ctx, ds_dim_sub(ctx, d, k), ds_dim(0));
  }
  if (b.e == NULL)
    return DS_DIM_UNKNOWN;
  return ds_dim_min(ctx, dim_from_elem(b), d); /* an expression bound is a size, >= 0 */
}

/* ONNX's Slice with bounds computed at run time: the dims the values decide, for unit steps. */
static gboolean dynamic_slice_shape(DsShapeCtx *ctx, const DsNode *node, DsShape *in,
                                    DsShape *out, GError **error)
{
  const DsDynamicSliceParam *p = node->param;
  const DsShapeValue *starts = ds_shape_ctx_input_value(ctx, 1);
  const DsShapeValue *ends = ds_shape_ctx_input_value(ctx, 2);
  guint next = 3;
  const DsShapeValue *axes = NULL, *steps = NULL;
  if (p->use_axes)
    axes = ds_shape_ctx_input_value(ctx, next++);
  if (p->use_steps)
    steps = ds_shape_ctx_input_value(ctx, next);
  if (starts == NULL || ends == NULL || starts->n != ends->n || in[0].ndim < 0 ||
      (p->use_axes && p->n_axes < 0 && axes == NULL) || (p->use_steps && steps == NULL))
    return TRUE;
  DsShape want = in[0];
  for (int i = 0; i < starts->n; i++) {
    int64_t axis = i, step = 1;
    if (p->n_axes >= 0) {
      if (i >= p->n_axes)
        return TRUE;
      axis = p->axes[i];
    } else if (axes != NULL && (i >= axes->n || !elem_const(axes->x[i], &axis))) {
      return TRUE;
    }
    if (steps != NULL && (i >= steps->n || !elem_const(steps->x[i], &step)))
      return TRUE;
    if (axis < 0)
      axis += in[0].ndim;
    if (axis < 0 || axis >= in[0].ndim || step != 1)
      return TRUE; /* the op's own rule says what is wrong, or leaves it to the run */
    DsDim d = in[0].dims[axis];
    DsDim b = slice_bound(ctx, starts->x[i], d), e = slice_bound(ctx, ends->x[i], d);
    DsDim len = DS_DIM_UNKNOWN;
    if (ds_dim_is_const(b) && ds_dim_is_const(e))
      len = ds_dim(MAX(e.value - b.value, 0));
    else if (ds_dim_is_known(b) && ds_dim_is_known(e))
      len = ds_dim_max(ctx, ds_dim_sub(ctx, e, b), ds_dim(0));
    want.dims[axis] = len;
  }
  return ds_ops_assign_shape(ctx, &out[0], &want, "output", error);
}

/* ONNX's Range with scalar bounds: max(0, ceil((stop - start) / step)) values, for a constant
 * positive step. */
static gboolean dynamic_arange_shape(DsShapeCtx *ctx, DsShape *out, GError **error)
{
  const DsShapeValue *start = ds_shape_ctx_input_value(ctx, 0);
  const DsShapeValue *stop = ds_shape_ctx_input_value(ctx, 1);
  const DsShapeValue *step = ds_shape_ctx_input_value(ctx, 2);
  int64_t k;
  if (start == NULL || stop == NULL || step == NULL || start->n != 1 || stop->n != 1 ||
      step->n != 1 || !elem_const(step->x[0], &k) || k <= 0)
    return TRUE;
  DsShapeElem span = arith(ctx, OP_SUB, stop->x[0], start->x[0]);
  int64_t c;
  DsDim len;
  if (elem_const(span, &c))
    len = ds_dim(c <= 0 ? 0 : (c + k - 1) / k);
  else if (span.e != NULL)
    len = ds_dim_max(ctx, ds_dim_ceildiv(ctx, dim_from_elem(span), ds_dim(k)), ds_dim(0));
  else
    return TRUE;
  DsShape want = {.ndim = 1, .dims = {len}};
  return ds_ops_assign_shape(ctx, &out[0], &want, "output", error);
}

/* ONNX's Tile with repeats computed at run time: each dim times its repeat. */
static gboolean dynamic_tile_shape(DsShapeCtx *ctx, DsShape *in, DsShape *out, GError **error)
{
  const DsShapeValue *reps = ds_shape_ctx_input_value(ctx, 1);
  if (reps == NULL || in[0].ndim < 0 || reps->n != in[0].ndim)
    return TRUE;
  DsShape want = {.ndim = in[0].ndim};
  for (int d = 0; d < in[0].ndim; d++)
    want.dims[d] = ds_dim_mul(ctx, in[0].dims[d], dim_from_elem(reps->x[d]));
  return ds_ops_assign_shape(ctx, &out[0], &want, "output", error);
}

gboolean ds_op_values_shape(DsShapeCtx *ctx, const DsNode *node, DsShape *in, DsShape *out,
                            GError **error)
{
  DsShape want;
  switch (node->op->id) {
  case DS_OP_DYNAMIC_RESHAPE:
    return reshape_shape(ctx, node, in, out, error);
  case DS_OP_DYNAMIC_SLICE:
    return dynamic_slice_shape(ctx, node, in, out, error);
  case DS_OP_DYNAMIC_ARANGE:
    return dynamic_arange_shape(ctx, out, error);
  case DS_OP_DYNAMIC_TILE:
    return dynamic_tile_shape(ctx, in, out, error);
  case DS_OP_ZEROS_SHAPE:
  case DS_OP_ONES_SHAPE:
  case DS_OP_FULL_SHAPE:
    if (!shape_from_value(ctx, 0, in, &want))
      return TRUE;
    return ds_ops_assign_shape(ctx, &out[0], &want, "output", error);
  case DS_OP_DYNAMIC_EXPAND: {
    /* NumPy broadcasting of the data against the target, right-aligned. */
    if (!shape_from_value(ctx, 1, in, &want) || in[0].ndim < 0)
      return TRUE;
    int ndim = MAX(want.ndim, in[0].ndim);
    DsShape result = {.ndim = ndim};
    for (int d = 0; d < ndim; d++) {
      int a = d - (ndim - in[0].ndim), b = d - (ndim - want.ndim);
      DsDim x = a >= 0 ? in[0].dims[a] : ds_dim(1), y = b >= 0 ? want.dims[b] : ds_dim(1);
      if (!ds_dim_is_known(x) || !ds_dim_is_known(y)) {
        result.dims[d] = DS_DIM_UNKNOWN;
        continue;
      }
      if (!ds_shape_ctx_broadcast_dim(ctx, x, y, &result.dims[d], error))
        return FALSE;
    }
    return ds_ops_assign_shape(ctx, &out[0], &result, "output", error);
  }
  default:
    return TRUE;
  }
}
