/* ds-onnx-ops-tensor.c: ONNX's tensor manipulation, indexing, shape tensors and data-dependent
 * ops.
 *
 * A parameter given as a tensor (a shape, axes, pads, k, repeats...) becomes an attribute of a
 * static engine op when it is a constant; computed at run time, it feeds a dynamic-shape op
 * (`_contrib_dynamic_*`, `_full_shape`, `_contrib_dynamic_arange`) that reads it when it runs.
 * Parameters that only change values, not shapes (CumSum's axis, Trilu's k, OneHot's values),
 * stay tensor inputs either way.
 *
 * The importer folds shape arithmetic on known values (ds-onnx-fold.c) before a translator
 * runs; Reshape, Slice and Transpose of small integer constants, which it leaves, fold here
 * (PyTorch's Pad builds its pads with them), and a ConstantOfShape of a Shape becomes a static
 * fill of the shaped tensor's shape.
 */
#include "ds-onnx-translate.h"

#include <math.h>
#include <string.h>

#include "ds-op.h"

/* The most values a folded or attribute-bound integer tensor may hold. */
#define MAX_INTS 64
/* Folding a Range or ConstantOfShape into a weight is worth it up to this many elements. */
#define MAX_FOLD_ELEMENTS 4096

/* ---- Emitting ------------------------------------------------------------------------------ */

/* Attribute key/value pairs collected before emitting. */
typedef struct {
  const char *keys[16];
  const char *values[16];
  guint n;
} Attrs;

static void attr_set(Attrs *a, const char *key, const char *value)
{
  g_assert(a->n < G_N_ELEMENTS(a->keys));
  a->keys[a->n] = key;
  a->values[a->n++] = value;
}

static DsNode *emit(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, const char *suffix,
                    const DsEntry *in, guint n_in, const Attrs *a, GError **error)
{
  static const Attrs none = {.n = 0};
  if (a == NULL)
    a = &none;
  return ds_onnx_emitv(b, node, op, suffix, in, n_in, a->keys, a->values, a->n, error);
}

/* Emits the node's one engine op and binds every ONNX output to its outputs. */
static gboolean emit_bind(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op,
                          const DsEntry *in, guint n_in, const Attrs *a, GError **error)
{
  DsNode *n = emit(b, node, op, NULL, in, n_in, a, error);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

/* The entries of inputs [0, n) (each must be present). */
static gboolean inputs(DsOnnxBuilder *b, const DsOnnxNode *node, guint n, DsEntry *out,
                       GError **error)
{
  for (guint i = 0; i < n; i++)
    if (!ds_onnx_input(b, node, i, &out[i], error))
      return FALSE;
  return TRUE;
}

static const char *fmt_int(DsOnnxBuilder *b, gint64 v)
{
  return ds_onnx_printf(b, "%" G_GINT64_FORMAT, v);
}

/* ---- Constant inputs ----------------------------------------------------------------------- */

/* Input `i`'s values when it is a constant integer tensor of at most MAX_INTS elements: their
 * count; -1 when the input is absent or computed; -2 when it is a constant of another kind. */
static int input_ints(DsOnnxBuilder *b, const DsOnnxNode *node, guint i, gint64 *out)
{
  const DsNDArray *c = ds_onnx_input_const(b, node, i);
  if (c == NULL)
    return -1;
  int n = ds_onnx_const_ints(c, out, MAX_INTS);
  return n < 0 ? -2 : n;
}

typedef enum {
  PARAM_ABSENT,   /* neither the attribute nor the input is given */
  PARAM_CONST,    /* known now: the values were copied */
  PARAM_COMPUTED, /* an input computed at run time */
} ParamKind;

/* The integer list a node takes as attribute `name` before opset `input_from` and as input
 * `index` from then on: what it is, and its values (*n of them) when known. FALSE with an error
 * when it is malformed or too long. */
static gboolean int_param(DsOnnxBuilder *b, const DsOnnxNode *node, const char *name,
                          gint64 input_from, guint index, gint64 *out, int *n, ParamKind *kind,
                          GError **error)
{
  *n = 0;
  if (ds_onnx_opset(b) < input_from) {
    *n = ds_onnx_attr_ints(node, name, out, MAX_INTS);
    *kind = *n < 0 ? PARAM_ABSENT : PARAM_CONST;
  } else if (!ds_onnx_has_input(node, index)) {
    *kind = PARAM_ABSENT;
  } else {
    *n = input_ints(b, node, index, out);
    *kind = *n == -1 ? PARAM_COMPUTED : PARAM_CONST;
    if (*n == -2)
      return ds_onnx_invalid(error, "%s must be an integer tensor", name);
  }
  if (*n > MAX_INTS)
    return ds_onnx_unsupported(error, "%s has more than %d values", name, MAX_INTS);
  *n = MAX(*n, 0);
  return TRUE;
}

/* Input `i` when it is a small integer constant (a shape computation's value), for folding. */
static const DsNDArray *small_int_const(DsOnnxBuilder *b, const DsOnnxNode *node, guint i)
{
  const DsNDArray *c = ds_onnx_input_const(b, node, i);
  if (c == NULL || (c->view.dtype != DS_DTYPE_INT64 && c->view.dtype != DS_DTYPE_INT32) ||
      ds_tensor_numel(&c->view) > MAX_FOLD_ELEMENTS)
    return NULL;
  return c;
}

/* Binds output 0 to a new constant of `c`'s dtype and the given shape, element k of which is
 * element src[k] of `c` (src NULL: the same order). */
static gboolean set_folded(DsOnnxBuilder *b, const DsOnnxNode *node, const DsNDArray *c, int ndim,
                           const int64_t *dims, const int64_t *src, GError **error)
{
  DsNDArray *a = ds_ndarray_new(c->view.dtype, ndim, dims, node->outputs[0], error);
  if (a == NULL)
    return FALSE;
  size_t es = ds_dtype_size(c->view.dtype);
  int64_t n = ds_tensor_numel(&a->view);
  for (int64_t k = 0; k < n; k++)
    memcpy((char *)a->view.data + (size_t)k * es,
           (const char *)c->view.data + (size_t)(src != NULL ? src[k] : k) * es, es);
  return ds_onnx_set_output_const(b, node, 0, a, error);
}

/* The source element of each output element of a strided view of `c`: output dims `dims`,
 * starting at element `base`, `stride[d]` elements apart along output axis d. */
static int64_t *strided_sources(int ndim, const int64_t *dims, int64_t base, const int64_t *stride)
{
  int64_t n = 1;
  for (int d = 0; d < ndim; d++)
    n *= dims[d];
  int64_t *src = g_new(int64_t, MAX(n, 1)), idx[DS_MAX_NDIM] = {0};
  for (int64_t k = 0; k < n; k++) {
    int64_t off = base;
    for (int d = 0; d < ndim; d++)
      off += idx[d] * stride[d];
    src[k] = off;
    for (int d = ndim - 1; d >= 0; d--) {
      if (++idx[d] < dims[d])
        break;
      idx[d] = 0;
    }
  }
  return src;
}

/* ---- Shape, Size ----------------------------------------------------------------------------- */

static gboolean translate_shape(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  gboolean has_start = ds_onnx_has_attr(node, "start"), has_end = ds_onnx_has_attr(node, "end");
  gint64 start = ds_onnx_attr_int(node, "start", 0), end = ds_onnx_attr_int(node, "end", 0);
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  if (!has_start && !has_end)
    return emit_bind(b, node, "shape_array", &x, 1, NULL, error);
  DsNode *shape = emit(b, node, "shape_array", "shape", &x, 1, NULL, error);
  if (shape == NULL)
    return FALSE;
  /* start and end clamp as Python's slices do, which is slice's rule. */
  Attrs a = {.n = 0};
  attr_set(&a, "begin", ds_onnx_printf(b, "(%" G_GINT64_FORMAT ",)", start));
  attr_set(&a, "end", has_end ? ds_onnx_printf(b, "(%" G_GINT64_FORMAT ",)", end) : "(None,)");
  DsEntry s = ds_onnx_entry(shape, 0);
  return emit_bind(b, node, "slice", &s, 1, &a, error);
}

static gboolean translate_size(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  /* size_array answers (1,); ONNX's Size is a scalar. */
  DsNode *size = emit(b, node, "size_array", "size", &x, 1, NULL, error);
  if (size == NULL)
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "newshape", "()");
  DsEntry s = ds_onnx_entry(size, 0);
  return emit_bind(b, node, "_np_reshape", &s, 1, &a, error);
}

/* ---- Reshape, Flatten, Transpose, Squeeze, Unsqueeze ----------------------------------------- */

/* ONNX's Reshape target for known input dims: 0 copies (unless allowzero), -1 infers. */
static gboolean fold_reshape_dims(const gint64 *shape, int n, gboolean allowzero, gint64 size,
                                  const int64_t *in_dims, int in_rank, gint64 *dims)
{
  gint64 known = 1;
  int infer_at = -1;
  for (int d = 0; d < n; d++) {
    if (shape[d] == -1) {
      if (infer_at >= 0)
        return FALSE;
      infer_at = d;
      continue;
    }
    if (shape[d] < -1 || (shape[d] == 0 && !allowzero && d >= in_rank))
      return FALSE;
    dims[d] = shape[d] == 0 && !allowzero ? in_dims[d] : shape[d];
    known *= dims[d];
  }
  if (infer_at >= 0) {
    if (known == 0 || size % known != 0)
      return FALSE;
    dims[infer_at] = size / known;
    known = size;
  }
  return known == size;
}

static gboolean translate_reshape(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  gint64 shape[MAX_INTS];
  gboolean allowzero = ds_onnx_attr_int(node, "allowzero", 0) != 0;
  int n;
  ParamKind kind;
  if (!int_param(b, node, "shape", 5, 1, shape, &n, &kind, error))
    return FALSE;
  if (kind == PARAM_ABSENT)
    return ds_onnx_invalid(error, "the target shape is missing");
  if (n > DS_MAX_NDIM)
    return ds_onnx_unsupported(error, "a target of %d dims is more than %d", n, DS_MAX_NDIM);
  DsEntry in[2];
  if (!ds_onnx_input(b, node, 0, &in[0], error))
    return FALSE;
  if (kind == PARAM_COMPUTED) {
    if (!ds_onnx_input(b, node, 1, &in[1], error))
      return FALSE;
    Attrs a = {.n = 0};
    if (allowzero)
      attr_set(&a, "allowzero", "1");
    return emit_bind(b, node, "_contrib_dynamic_reshape", in, 2, &a, error);
  }
  gboolean has_zero = FALSE;
  for (int d = 0; d < n; d++) {
    if (shape[d] < -1)
      return ds_onnx_invalid(error, "shape value %" G_GINT64_FORMAT " is invalid", shape[d]);
    has_zero |= shape[d] == 0;
  }
  const DsNDArray *c = small_int_const(b, node, 0);
  gint64 dims[DS_MAX_NDIM];
  if (c != NULL && fold_reshape_dims(shape, n, allowzero, ds_tensor_numel(&c->view), c->view.shape,
                                     c->view.ndim, dims)) {
    int64_t d64[DS_MAX_NDIM];
    for (int d = 0; d < n; d++)
      d64[d] = dims[d];
    return set_folded(b, node, c, n, d64, NULL, error);
  }
  Attrs a = {.n = 0};
  if (has_zero && !allowzero) {
    /* MXNet's codes agree with ONNX's here: 0 copies the dim at its position, -1 infers. */
    attr_set(&a, "shape", ds_onnx_fmt_ints(b, shape, n));
    return emit_bind(b, node, "Reshape", in, 1, &a, error);
  }
  attr_set(&a, "newshape", n == 0 ? "()" : ds_onnx_fmt_ints(b, shape, n));
  return emit_bind(b, node, "_np_reshape", in, 1, &a, error);
}

static gboolean translate_flatten(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "axis", fmt_int(b, ds_onnx_attr_int(node, "axis", 1)));
  return emit_bind(b, node, "Flatten", &x, 1, &a, error);
}

static gboolean translate_transpose(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry x;
  gint64 perm[DS_MAX_NDIM + 1];
  int n = ds_onnx_attr_ints(node, "perm", perm, DS_MAX_NDIM + 1);
  if (n > DS_MAX_NDIM)
    return ds_onnx_unsupported(error, "perm has %d axes, more than %d", n, DS_MAX_NDIM);
  const DsNDArray *c = small_int_const(b, node, 0);
  if (c != NULL && (n < 0 || n == c->view.ndim)) {
    int nd = c->view.ndim;
    int64_t dims[DS_MAX_NDIM], stride[DS_MAX_NDIM], in_stride[DS_MAX_NDIM], s = 1;
    for (int d = nd - 1; d >= 0; d--) {
      in_stride[d] = s;
      s *= c->view.shape[d];
    }
    gboolean seen[DS_MAX_NDIM] = {FALSE};
    for (int d = 0; d < nd; d++) {
      gint64 from = n < 0 ? nd - 1 - d : perm[d];
      if (from < 0 || from >= nd || seen[from])
        return ds_onnx_invalid(error, "perm is not a permutation");
      seen[from] = TRUE;
      dims[d] = c->view.shape[from];
      stride[d] = in_stride[from];
    }
    g_autofree int64_t *src = strided_sources(nd, dims, 0, stride);
    return set_folded(b, node, c, nd, dims, src, error);
  }
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  Attrs a = {.n = 0};
  /* Without perm, transpose's empty axes reverse them, as ONNX's default does. */
  attr_set(&a, "axes", n > 0 ? ds_onnx_fmt_ints(b, perm, n) : "()");
  return emit_bind(b, node, "transpose", &x, 1, &a, error);
}

/* Squeeze and Unsqueeze: the axes are an attribute before opset 13, an input from then on. */
static gboolean translate_squeeze_like(DsOnnxBuilder *b, const DsOnnxNode *node, gboolean squeeze,
                                       GError **error)
{
  gint64 axes[MAX_INTS];
  int n;
  ParamKind kind;
  if (!int_param(b, node, "axes", 13, 1, axes, &n, &kind, error))
    return FALSE;
  if (!squeeze && (kind == PARAM_ABSENT || (kind == PARAM_CONST && n == 0)))
    return ds_onnx_invalid(error, "axes are required");
  if (n > DS_MAX_NDIM)
    return ds_onnx_invalid(error, "%d axes are more than a tensor has", n);
  DsEntry in[2];
  if (!ds_onnx_input(b, node, 0, &in[0], error))
    return FALSE;
  if (kind == PARAM_COMPUTED) {
    if (!ds_onnx_input(b, node, 1, &in[1], error))
      return FALSE;
    return emit_bind(b, node, squeeze ? "_contrib_dynamic_squeeze" : "_contrib_dynamic_expand_dims",
                     in, 2, NULL, error);
  }
  Attrs a = {.n = 0};
  if (kind == PARAM_CONST) {
    if (n == 0) /* Squeeze with empty axes: nothing to squeeze */
      return emit_bind(b, node, "_copy", in, 1, NULL, error);
    attr_set(&a, "axis", ds_onnx_fmt_ints(b, axes, n));
  }
  return emit_bind(b, node, squeeze ? "_np_squeeze" : "expand_dims", in, 1, &a, error);
}

static gboolean translate_squeeze(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return translate_squeeze_like(b, node, TRUE, error);
}

static gboolean translate_unsqueeze(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return translate_squeeze_like(b, node, FALSE, error);
}

/* ---- Concat, Split ------------------------------------------------------------------------- */

static gboolean translate_concat(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  guint n = (guint)node->n_inputs;
  if (n == 0)
    return ds_onnx_invalid(error, "Concat needs at least one input");
  if (!ds_onnx_has_attr(node, "axis"))
    return ds_onnx_invalid(error, "the axis attribute is required");
  gint64 axis = ds_onnx_attr_int(node, "axis", 0);
  g_autofree DsEntry *in = g_new(DsEntry, n);
  if (!inputs(b, node, n, in, error))
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "num_args", fmt_int(b, n));
  attr_set(&a, "dim", fmt_int(b, axis));
  return emit_bind(b, node, "Concat", in, n, &a, error);
}

/* Output i of a Split whose part sizes are computed: a dynamic slice between the running sums
 * of the sizes. */
static gboolean split_computed(DsOnnxBuilder *b, const DsOnnxNode *node, DsEntry x, gint64 axis,
                               GError **error)
{
  DsEntry in[3], sizes, zero = ds_onnx_add_scalar(b, "split_axis", DS_DTYPE_INT64, 0, FALSE);
  if (!ds_onnx_input(b, node, 1, &sizes, error))
    return FALSE;
  DsEntry cs_in[2] = {sizes, zero};
  DsNode *ends = emit(b, node, "cumsum", "ends", cs_in, 2, NULL, error);
  if (ends == NULL)
    return FALSE;
  Attrs ex = {.n = 0};
  attr_set(&ex, "exclusive", "1");
  DsNode *starts = emit(b, node, "cumsum", "starts", cs_in, 2, &ex, error);
  if (starts == NULL)
    return FALSE;
  for (guint i = 0; i < node->n_outputs; i++) {
    if (node->outputs[i][0] == '\0')
      continue;
    Attrs one = {.n = 0};
    attr_set(&one, "begin", ds_onnx_printf(b, "(%u,)", i));
    attr_set(&one, "end", ds_onnx_printf(b, "(%u,)", i + 1));
    DsEntry e = ds_onnx_entry(ends, 0), s = ds_onnx_entry(starts, 0);
    DsNode *si = emit(b, node, "slice", ds_onnx_printf(b, "start%u", i), &s, 1, &one, error);
    DsNode *ei = emit(b, node, "slice", ds_onnx_printf(b, "end%u", i), &e, 1, &one, error);
    if (si == NULL || ei == NULL)
      return FALSE;
    in[0] = x;
    in[1] = ds_onnx_entry(si, 0);
    in[2] = ds_onnx_entry(ei, 0);
    Attrs a = {.n = 0};
    attr_set(&a, "axes", ds_onnx_printf(b, "(%" G_GINT64_FORMAT ",)", axis));
    DsNode *part =
        emit(b, node, "_contrib_dynamic_slice", ds_onnx_printf(b, "part%u", i), in, 3, &a, error);
    if (part == NULL || !ds_onnx_set_output(b, node, i, ds_onnx_entry(part, 0), error))
      return FALSE;
  }
  return TRUE;
}

/* Split-18 without sizes: `num_outputs` parts, each ceil(dim / num_outputs) long but the last,
 * which is smaller when the axis does not divide evenly. With the axis' length known the sizes
 * are made here (PARAM_CONST); otherwise equal parts are left to SliceChannel, which refuses
 * an uneven split when it runs. */
static gboolean split_18_sizes(DsOnnxBuilder *b, const DsOnnxNode *node, gint64 axis,
                               guint n_out, gint64 *split, int *n, ParamKind *kind, GError **error)
{
  gint64 parts = ds_onnx_attr_int(node, "num_outputs", 0);
  if (parts != (gint64)n_out)
    return ds_onnx_invalid(error, "num_outputs is %" G_GINT64_FORMAT " for %u outputs", parts,
                           n_out);
  gint64 dims[DS_MAX_NDIM];
  int rank;
  if (n_out > MAX_INTS || !ds_onnx_value_static_shape(b, node->inputs[0], dims, &rank))
    return TRUE;
  gint64 a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    return ds_onnx_invalid(error, "axis %" G_GINT64_FORMAT " is out of range for rank %d", axis,
                           rank);
  gint64 chunk = (dims[a] + parts - 1) / parts, left = dims[a];
  for (guint i = 0; i < n_out; i++) {
    split[i] = MIN(chunk, left);
    left -= split[i];
  }
  *n = (int)n_out;
  *kind = PARAM_CONST;
  return TRUE;
}

static gboolean translate_split(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  gint64 axis = ds_onnx_attr_int(node, "axis", 0), split[MAX_INTS];
  guint n_out = (guint)node->n_outputs;
  int n;
  ParamKind kind;
  if (!int_param(b, node, "split", 13, 1, split, &n, &kind, error))
    return FALSE;
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  if (kind == PARAM_COMPUTED)
    return split_computed(b, node, x, axis, error);
  if (kind == PARAM_ABSENT && ds_onnx_opset(b) >= 18 &&
      !split_18_sizes(b, node, axis, n_out, split, &n, &kind, error))
    return FALSE;
  Attrs a = {.n = 0};
  if (kind == PARAM_ABSENT) {
    /* Equal parts: one SliceChannel. */
    attr_set(&a, "num_outputs", fmt_int(b, n_out));
    attr_set(&a, "axis", fmt_int(b, axis));
    return emit_bind(b, node, "SliceChannel", &x, 1, &a, error);
  }
  if ((guint)n != n_out)
    return ds_onnx_invalid(error, "split has %d sizes for %u outputs", n, n_out);
  gint64 at = 0;
  for (guint i = 0; i < n_out; i++) {
    if (split[i] < 0)
      return ds_onnx_invalid(error, "split sizes must not be negative");
    Attrs s = {.n = 0};
    attr_set(&s, "begin", ds_onnx_printf(b, "(%" G_GINT64_FORMAT ",)", at));
    attr_set(&s, "end", ds_onnx_printf(b, "(%" G_GINT64_FORMAT ",)", at + split[i]));
    attr_set(&s, "axes", ds_onnx_printf(b, "(%" G_GINT64_FORMAT ",)", axis));
    at += split[i];
    if (node->outputs[i][0] == '\0')
      continue;
    DsNode *part = emit(b, node, "slice", ds_onnx_printf(b, "part%u", i), &x, 1, &s, error);
    if (part == NULL || !ds_onnx_set_output(b, node, i, ds_onnx_entry(part, 0), error))
      return FALSE;
  }
  return TRUE;
}

/* ---- Tile, Expand ---------------------------------------------------------------------------- */

/* An op whose second input is a shape-like vector: a static op with it as attribute `key` when
 * it is a constant, else the dynamic op reading it. */
static gboolean vector_param_op(DsOnnxBuilder *b, const DsOnnxNode *node, const char *name,
                                const char *static_op, const char *key, const char *dynamic_op,
                                GError **error)
{
  gint64 v[MAX_INTS];
  int n = input_ints(b, node, 1, v);
  if (n == -2)
    return ds_onnx_invalid(error, "%s must be an integer tensor of at most %d values", name,
                           MAX_INTS);
  if (n > DS_MAX_NDIM)
    return ds_onnx_unsupported(error, "%s has %d values, more than %d dims", name, n, DS_MAX_NDIM);
  DsEntry in[2];
  if (!ds_onnx_input(b, node, 0, &in[0], error))
    return FALSE;
  if (n == -1) {
    if (!ds_onnx_input(b, node, 1, &in[1], error))
      return FALSE;
    return emit_bind(b, node, dynamic_op, in, 2, NULL, error);
  }
  for (int i = 0; i < n; i++)
    if (v[i] < 0)
      return ds_onnx_invalid(error, "%s value %" G_GINT64_FORMAT " is negative", name, v[i]);
  Attrs a = {.n = 0};
  attr_set(&a, key, ds_onnx_fmt_ints(b, v, n));
  return emit_bind(b, node, static_op, in, 1, &a, error);
}

static gboolean translate_tile(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return vector_param_op(b, node, "repeats", "tile", "reps", "_contrib_dynamic_tile", error);
}

static gboolean translate_expand(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return vector_param_op(b, node, "shape", "_contrib_expand", "shape", "_contrib_dynamic_expand",
                         error);
}

/* ---- Slice ----------------------------------------------------------------------------------- */

/* A bound as slice's attributes hold it: INT64_MIN there means None, so it moves up by one,
 * which clamps to the same place. */
static gint64 slice_bound(gint64 v)
{
  return v == G_MININT64 ? G_MININT64 + 1 : v;
}

/* Folds a slice of a small integer constant. */
static gboolean fold_slice(DsOnnxBuilder *b, const DsOnnxNode *node, const DsNDArray *c,
                           const gint64 *starts, const gint64 *ends, const gint64 *axes,
                           const gint64 *steps, int n, GError **error)
{
  int nd = c->view.ndim;
  int64_t dims[DS_MAX_NDIM], stride[DS_MAX_NDIM], base = 0, s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    dims[d] = c->view.shape[d];
    stride[d] = s;
    s *= c->view.shape[d];
  }
  for (int i = 0; i < n; i++) {
    gint64 axis = axes[i] < 0 ? axes[i] + nd : axes[i];
    if (axis < 0 || axis >= nd)
      return ds_onnx_invalid(error, "axis %" G_GINT64_FORMAT " is out of range", axes[i]);
    int64_t first, count;
    ds_slice_axis_range(c->view.shape[axis], slice_bound(starts[i]), slice_bound(ends[i]), steps[i],
                        &first, &count);
    base += count > 0 ? first * stride[axis] : 0;
    stride[axis] *= steps[i];
    dims[axis] = count;
  }
  g_autofree int64_t *src = strided_sources(nd, dims, base, stride);
  return set_folded(b, node, c, nd, dims, src, error);
}

/* A Slice's parameters: each list's values when known (n* >= 0; -1: computed or absent) and
 * whether axes and steps are given at all. Absent axes and steps get their defaults. */
typedef struct {
  gint64 starts[MAX_INTS], ends[MAX_INTS], axes[MAX_INTS], steps[MAX_INTS];
  int ns, ne, na, nt;
  gboolean axes_given, steps_given;
} SliceParams;

static gboolean read_slice_params(DsOnnxBuilder *b, const DsOnnxNode *node, SliceParams *p,
                                  GError **error)
{
  p->nt = -1;
  if (ds_onnx_opset(b) < 10) {
    p->ns = ds_onnx_attr_ints(node, "starts", p->starts, MAX_INTS);
    p->ne = ds_onnx_attr_ints(node, "ends", p->ends, MAX_INTS);
    p->na = ds_onnx_attr_ints(node, "axes", p->axes, MAX_INTS);
    if (p->ns < 0 || p->ne < 0)
      return ds_onnx_invalid(error, "starts and ends are required");
  } else {
    p->ns = input_ints(b, node, 1, p->starts);
    p->ne = input_ints(b, node, 2, p->ends);
    p->na = input_ints(b, node, 3, p->axes);
    p->nt = input_ints(b, node, 4, p->steps);
  }
  const int n[4] = {p->ns, p->ne, p->na, p->nt};
  for (int i = 0; i < 4; i++)
    if (n[i] > DS_MAX_NDIM || n[i] == -2)
      return ds_onnx_invalid(error,
                             "starts, ends, axes and steps must be integer tensors of at "
                             "most %d values",
                             DS_MAX_NDIM);
  if (p->ns >= 0 && p->ne >= 0 && p->ns != p->ne)
    return ds_onnx_invalid(error, "starts has %d values and ends %d", p->ns, p->ne);
  p->axes_given = ds_onnx_opset(b) < 10 ? p->na >= 0 : ds_onnx_has_input(node, 3);
  p->steps_given = ds_onnx_opset(b) >= 10 && ds_onnx_has_input(node, 4);
  if (!p->axes_given) {
    p->na = p->ns;
    for (int i = 0; i < MAX(p->ns, 0); i++)
      p->axes[i] = i;
  }
  if (!p->steps_given) {
    p->nt = p->ns;
    for (int i = 0; i < MAX(p->ns, 0); i++)
      p->steps[i] = 1;
  }
  return TRUE;
}

/* Every parameter known: slice with the axes as an attribute. */
static gboolean slice_static(DsOnnxBuilder *b, const DsOnnxNode *node, const SliceParams *p,
                             DsEntry x, GError **error)
{
  if (p->ns == 0)
    return emit_bind(b, node, "_copy", &x, 1, NULL, error);
  gint64 begin[DS_MAX_NDIM], end[DS_MAX_NDIM];
  for (int i = 0; i < p->ns; i++) {
    begin[i] = slice_bound(p->starts[i]);
    end[i] = slice_bound(p->ends[i]);
  }
  Attrs a = {.n = 0};
  attr_set(&a, "begin", ds_onnx_fmt_ints(b, begin, p->ns));
  attr_set(&a, "end", ds_onnx_fmt_ints(b, end, p->ns));
  attr_set(&a, "step", ds_onnx_fmt_ints(b, p->steps, p->ns));
  attr_set(&a, "axes", ds_onnx_fmt_ints(b, p->axes, p->ns));
  return emit_bind(b, node, "slice", &x, 1, &a, error);
}

/* Computed bounds: the dynamic slice, with constant axes as an attribute so that the dims it
 * keeps stay known to inference. */
static gboolean slice_dynamic(DsOnnxBuilder *b, const DsOnnxNode *node, const SliceParams *p,
                              DsEntry x, GError **error)
{
  DsEntry in[5] = {x};
  guint n_in = 3;
  if (!ds_onnx_input(b, node, 1, &in[1], error) || !ds_onnx_input(b, node, 2, &in[2], error))
    return FALSE;
  Attrs a = {.n = 0};
  if (p->axes_given && p->na >= 0) {
    attr_set(&a, "axes", ds_onnx_fmt_ints(b, p->axes, p->na));
  } else if (p->axes_given) {
    if (!ds_onnx_input(b, node, 3, &in[n_in++], error))
      return FALSE;
    attr_set(&a, "use_axes", "1");
  }
  if (p->steps_given) {
    if (!ds_onnx_input(b, node, 4, &in[n_in++], error))
      return FALSE;
    attr_set(&a, "use_steps", "1");
  }
  return emit_bind(b, node, "_contrib_dynamic_slice", in, n_in, &a, error);
}

static gboolean translate_slice(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  SliceParams p;
  if (!read_slice_params(b, node, &p, error))
    return FALSE;
  gboolean all_const = p.ns >= 0 && p.ne >= 0 && p.na == p.ns && p.nt == p.ns;
  if (all_const) {
    for (int i = 0; i < p.nt; i++)
      if (p.steps[i] == 0)
        return ds_onnx_invalid(error, "steps must not be 0");
    const DsNDArray *c = small_int_const(b, node, 0);
    if (c != NULL)
      return fold_slice(b, node, c, p.starts, p.ends, p.axes, p.steps, p.ns, error);
  }
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  if (all_const)
    return slice_static(b, node, &p, x, error);
  if (ds_onnx_opset(b) < 10)
    return ds_onnx_invalid(error, "starts, ends and axes attributes must agree");
  return slice_dynamic(b, node, &p, x, error);
}

/* ---- Gather and scatter ---------------------------------------------------------------------- */

static gboolean translate_gather(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  gint64 axis = ds_onnx_attr_int(node, "axis", 0);
  DsEntry in[2];
  if (!inputs(b, node, 2, in, error))
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "axis", fmt_int(b, axis));
  /* wrap maps ONNX's negative indices (counted from the end) to their element. */
  attr_set(&a, "mode", "wrap");
  return emit_bind(b, node, "take", in, 2, &a, error);
}

/* An op taking the node's inputs as they are, with one optional int attribute carried over. */
static gboolean same_inputs(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, guint n,
                            const char *onnx_attr, const char *key, gint64 fallback, GError **error)
{
  DsEntry in[3];
  if (!inputs(b, node, n, in, error))
    return FALSE;
  Attrs a = {.n = 0};
  if (onnx_attr != NULL)
    attr_set(&a, key, fmt_int(b, ds_onnx_attr_int(node, onnx_attr, fallback)));
  return emit_bind(b, node, op, in, n, &a, error);
}

static gboolean translate_gather_elements(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return same_inputs(b, node, "take_along_axis", 2, "axis", "axis", 0, error);
}

static gboolean translate_gather_nd(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return same_inputs(b, node, "batch_gather_nd", 2, "batch_dims", "batch_dims", 0, error);
}

/* ScatterND and ScatterElements: `reduction` (opset 16) carries over; max and min come with
 * opset 18, beyond what is imported, but the ops have them. */
static gboolean scatter(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, gboolean has_axis,
                        GError **error)
{
  const char *reduction = ds_onnx_attr_string(node, "reduction", "none");
  if (strcmp(reduction, "none") != 0 && strcmp(reduction, "add") != 0 &&
      strcmp(reduction, "mul") != 0 && strcmp(reduction, "max") != 0 &&
      strcmp(reduction, "min") != 0)
    return ds_onnx_unsupported(error, "reduction '%s' is not supported", reduction);
  DsEntry in[3];
  if (!inputs(b, node, 3, in, error))
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "reduction", reduction);
  if (has_axis)
    attr_set(&a, "axis", fmt_int(b, ds_onnx_attr_int(node, "axis", 0)));
  return emit_bind(b, node, op, in, 3, &a, error);
}

static gboolean translate_scatter_nd(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return scatter(b, node, "scatter_nd_update", FALSE, error);
}

static gboolean translate_scatter_elements(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return scatter(b, node, "put_along_axis", TRUE, error);
}

/* ---- Pad ------------------------------------------------------------------------------------- */

/* Pad-18's `axes` input: the n pads given are the begins and ends of those axes only; they
 * become the pads of every axis (0 for the others). */
static gboolean pads_for_axes(DsOnnxBuilder *b, const DsOnnxNode *node, ParamKind kind,
                              gint64 *pads, int *n, GError **error)
{
  const DsNDArray *c = ds_onnx_input_const(b, node, 3);
  int rank = ds_onnx_input_rank(b, node, 0);
  if (c == NULL || kind != PARAM_CONST || rank < 0)
    return ds_onnx_unsupported(error, "axes or pads computed at run time, or an input of "
                                      "unknown rank, with axes");
  gint64 axes[DS_MAX_NDIM], full[2 * DS_MAX_NDIM] = {0};
  gboolean seen[DS_MAX_NDIM] = {FALSE};
  int n_axes = ds_onnx_const_ints(c, axes, DS_MAX_NDIM);
  if (n_axes < 0 || *n != 2 * n_axes)
    return ds_onnx_invalid(error, "pads has %d values for %d axes", *n, n_axes);
  for (int i = 0; i < n_axes; i++) {
    gint64 a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank || seen[a])
      return ds_onnx_invalid(error, "axes[%d] = %" G_GINT64_FORMAT " is out of range or repeated "
                             "for rank %d", i, axes[i], rank);
    seen[a] = TRUE;
    full[a] = pads[i];
    full[rank + a] = pads[n_axes + i];
  }
  memcpy(pads, full, sizeof(gint64) * 2 * (gsize)rank);
  *n = 2 * rank;
  return TRUE;
}

static gboolean translate_pad(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  const char *mode = ds_onnx_attr_string(node, "mode", "constant");
  if (strcmp(mode, "constant") != 0 && strcmp(mode, "edge") != 0 && strcmp(mode, "reflect") != 0)
    return ds_onnx_unsupported(error, "mode '%s' is not supported", mode);
  gint64 pads[MAX_INTS];
  double value = 0.0;
  gboolean value_const = TRUE;
  int n;
  ParamKind kind;
  if (!int_param(b, node, "pads", 11, 1, pads, &n, &kind, error))
    return FALSE;
  if (kind == PARAM_ABSENT)
    return ds_onnx_invalid(error, "pads are required");
  if (ds_onnx_has_input(node, 3) && !pads_for_axes(b, node, kind, pads, &n, error))
    return FALSE;
  if (ds_onnx_opset(b) < 11) {
    value = ds_onnx_attr_float(node, "value", 0.0f);
  } else if (ds_onnx_has_input(node, 2)) {
    const DsNDArray *c = ds_onnx_input_const(b, node, 2);
    value_const = c != NULL && ds_onnx_const_scalar(c, &value);
  }
  DsEntry in[3];
  if (!ds_onnx_input(b, node, 0, &in[0], error))
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "mode", mode);
  if (kind == PARAM_CONST && value_const) {
    if (n % 2 != 0 || n / 2 > DS_MAX_NDIM)
      return ds_onnx_invalid(error, "pads has %d values, not two per axis", n);
    g_autoptr(GString) w = g_string_new("(");
    for (int d = 0; d < n / 2; d++)
      g_string_append_printf(w, "%s(%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", d ? ", " : "",
                             pads[d], pads[n / 2 + d]);
    g_string_append(w, ")");
    attr_set(&a, "pad_width", ds_onnx_printf(b, "%s", w->str));
    attr_set(&a, "constant_values", ds_onnx_fmt_float(b, value));
    return emit_bind(b, node, "_npi_pad", in, 1, &a, error);
  }
  /* Computed widths or value: both as tensors. */
  if (kind == PARAM_COMPUTED) {
    if (!ds_onnx_input(b, node, 1, &in[1], error))
      return FALSE;
  } else {
    in[1] = ds_onnx_add_ints(b, "pads", pads, n, FALSE);
  }
  if (!ds_onnx_input_or_scalar(b, node, 2, "pad_value", DS_DTYPE_FLOAT64, value, &in[2], error))
    return FALSE;
  return emit_bind(b, node, "_contrib_dynamic_pad", in, 3, &a, error);
}

/* ---- ConstantOfShape, Range, EyeLike, OneHot, Trilu, CumSum ---------------------------------- */

/* ConstantOfShape's `value` (a one-element tensor; float32 0 by default). */
static DsNDArray *constant_value(const DsOnnxNode *node, GError **error)
{
  const DsOnnxAttribute *attr = ds_onnx_node_find_attribute(node, "value");
  if (attr == NULL || attr->type != DS_ONNX_ATTR_TENSOR) {
    int64_t one = 1;
    return ds_ndarray_new(DS_DTYPE_FLOAT32, 1, &one, "value", error);
  }
  DsNDArray *v = ds_onnx_widen_storage(
      ds_onnx_tensor_to_ndarray(attr->t, NULL, "ConstantOfShape value", error), error);
  if (v != NULL && ds_tensor_numel(&v->view) != 1) {
    ds_ndarray_free(v);
    ds_onnx_invalid(error, "value must hold one element");
    return NULL;
  }
  return v;
}

static gboolean translate_constant_of_shape(DsOnnxBuilder *b, const DsOnnxNode *node,
                                            GError **error)
{
  GError *local = NULL;
  g_autoptr(DsNDArray) v = constant_value(node, &local);
  if (v == NULL) {
    /* An element type the engine lacks is a form it cannot run. */
    if (g_error_matches(local, DS_ERROR, DS_ERROR_UNSUPPORTED)) {
      ds_onnx_unsupported(error, "%s", local->message);
      g_error_free(local);
      return FALSE;
    }
    g_propagate_error(error, local);
    return FALSE;
  }
  DsDType dtype = v->view.dtype;
  double value = 0.0;
  ds_onnx_const_scalar(v, &value);
  if (dtype == DS_DTYPE_INT64 && fabs(value) > 9007199254740992.0)
    return ds_onnx_unsupported(error, "an int64 value beyond 2^53 is not supported");
  gint64 shape[MAX_INTS];
  int n = input_ints(b, node, 0, shape);
  if (n == -2 || n > DS_MAX_NDIM)
    return ds_onnx_invalid(error, "the shape must be an integer vector of at most %d values",
                           DS_MAX_NDIM);
  Attrs a = {.n = 0};
  attr_set(&a, "dtype", ds_dtype_name(dtype));
  attr_set(&a, "value", ds_onnx_fmt_float(b, value));
  if (n == -1) {
    DsEntry s, source;
    if (!ds_onnx_input(b, node, 0, &s, error))
      return FALSE;
    /* ConstantOfShape(Shape(v)) (PyTorch's expand pattern) has v's shape: a static op. */
    if (ds_onnx_shape_source(b, s, &source)) {
      Attrs like = {.n = 0};
      attr_set(&like, "fill_value", ds_onnx_fmt_float(b, value));
      attr_set(&like, "dtype", ds_dtype_name(dtype));
      return emit_bind(b, node, "_npi_full_like", &source, 1, &like, error);
    }
    return emit_bind(b, node, "_full_shape", &s, 1, &a, error);
  }
  gint64 numel = 1;
  for (int d = 0; d < n; d++) {
    if (shape[d] < 0)
      return ds_onnx_invalid(error, "dim %" G_GINT64_FORMAT " is negative", shape[d]);
    numel *= shape[d];
  }
  /* _full reads a 0 dim as unknown (MXNet's convention): empty or small results are folded. */
  if (numel <= MAX_FOLD_ELEMENTS || n == 0) {
    int64_t dims[DS_MAX_NDIM];
    for (int d = 0; d < n; d++)
      dims[d] = shape[d];
    DsNDArray *out = ds_ndarray_new(dtype, n, dims, node->outputs[0], error);
    if (out == NULL)
      return FALSE;
    size_t es = ds_dtype_size(dtype);
    for (gint64 i = 0; i < numel; i++)
      memcpy((char *)out->view.data + (size_t)i * es, v->view.data, es);
    return ds_onnx_set_output_const(b, node, 0, out, error);
  }
  attr_set(&a, "shape", ds_onnx_fmt_ints(b, shape, n));
  return emit_bind(b, node, "_full", NULL, 0, &a, error);
}

/* Range with constant bounds: the values in the bounds' dtype, computed as ONNX says
 * (start + i * delta, in that type), folded or produced by _arange. */
static gboolean range_const(DsOnnxBuilder *b, const DsOnnxNode *node, DsDType dtype,
                            const double *v, GError **error)
{
  double start = v[0], limit = v[1], delta = v[2];
  if (delta == 0.0 || !isfinite(start) || !isfinite(limit) || !isfinite(delta))
    return ds_onnx_invalid(error, "the range (%g, %g, %g) is invalid", start, limit, delta);
  double len = MAX(ceil((limit - start) / delta), 0.0);
  if (len > 9.0e15)
    return ds_onnx_invalid(error, "the range holds %g elements", len);
  int64_t n = (int64_t)len;
  if (n > MAX_FOLD_ELEMENTS) {
    Attrs a = {.n = 0};
    attr_set(&a, "start", ds_onnx_fmt_float(b, start));
    attr_set(&a, "stop", ds_onnx_fmt_float(b, limit));
    attr_set(&a, "step", ds_onnx_fmt_float(b, delta));
    attr_set(&a, "dtype", ds_dtype_name(dtype));
    return emit_bind(b, node, "_arange", NULL, 0, &a, error);
  }
  DsNDArray *out = ds_ndarray_new(dtype, 1, &n, node->outputs[0], error);
  if (out == NULL)
    return FALSE;
  for (int64_t i = 0; i < n; i++) {
    void *p = (char *)out->view.data + (size_t)i * ds_dtype_size(dtype);
    switch (dtype) {
    case DS_DTYPE_FLOAT32:
      *(float *)p = (float)start + (float)i * (float)delta;
      break;
    case DS_DTYPE_FLOAT64:
      *(double *)p = start + (double)i * delta;
      break;
    case DS_DTYPE_INT32:
      *(gint32 *)p = (gint32)start + (gint32)i * (gint32)delta;
      break;
    default: /* int64; int8 and uint8 are refused before */
      *(gint64 *)p = (gint64)start + i * (gint64)delta;
      break;
    }
  }
  return ds_onnx_set_output_const(b, node, 0, out, error);
}

static gboolean translate_range(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsDType dtype = DS_DTYPE_UNKNOWN;
  double v[3];
  gboolean all_const = TRUE;
  for (guint i = 0; i < 3; i++) {
    const DsNDArray *c = ds_onnx_input_const(b, node, i);
    if (dtype == DS_DTYPE_UNKNOWN)
      dtype = ds_onnx_input_dtype(b, node, i);
    all_const = all_const && c != NULL && ds_onnx_const_scalar(c, &v[i]);
  }
  if (dtype != DS_DTYPE_UNKNOWN && dtype != DS_DTYPE_FLOAT32 && dtype != DS_DTYPE_FLOAT64 &&
      dtype != DS_DTYPE_INT32 && dtype != DS_DTYPE_INT64)
    return ds_onnx_unsupported(error, "Range of %s is not supported", ds_dtype_name(dtype));
  if (all_const)
    return range_const(b, node, dtype, v, error);
  DsEntry in[3];
  if (!inputs(b, node, 3, in, error))
    return FALSE;
  Attrs a = {.n = 0};
  /* "None": the output takes start's dtype, whatever inference finds it to be. */
  attr_set(&a, "dtype", dtype == DS_DTYPE_UNKNOWN ? "None" : ds_dtype_name(dtype));
  return emit_bind(b, node, "_contrib_dynamic_arange", in, 3, &a, error);
}

static gboolean translate_eye_like(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "k", fmt_int(b, ds_onnx_attr_int(node, "k", 0)));
  if (ds_onnx_has_attr(node, "dtype")) {
    /* A float16 identity is the float32 one: 0 and 1 are exact in both. */
    DsDType dtype = ds_onnx_compute_dtype(ds_onnx_dtype((int)ds_onnx_attr_int(node, "dtype", 1)));
    if (dtype == DS_DTYPE_UNKNOWN)
      return ds_onnx_unsupported(error, "dtype %" G_GINT64_FORMAT " is not supported",
                                 ds_onnx_attr_int(node, "dtype", 1));
    attr_set(&a, "dtype", ds_dtype_name(dtype));
  }
  return emit_bind(b, node, "eye_like", &x, 1, &a, error);
}

static gboolean translate_one_hot(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry in[3];
  if (!inputs(b, node, 3, in, error))
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "axis", fmt_int(b, ds_onnx_attr_int(node, "axis", -1)));
  return emit_bind(b, node, "_contrib_dynamic_one_hot", in, 3, &a, error);
}

static gboolean translate_trilu(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry in[2];
  if (!ds_onnx_input(b, node, 0, &in[0], error) ||
      !ds_onnx_input_or_scalar(b, node, 1, "k", DS_DTYPE_INT64, 0, &in[1], error))
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "upper", ds_onnx_attr_int(node, "upper", 1) ? "1" : "0");
  return emit_bind(b, node, "trilu", in, 2, &a, error);
}

static gboolean translate_cumsum(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry in[2];
  if (!inputs(b, node, 2, in, error))
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "exclusive", ds_onnx_attr_int(node, "exclusive", 0) ? "1" : "0");
  attr_set(&a, "reverse", ds_onnx_attr_int(node, "reverse", 0) ? "1" : "0");
  return emit_bind(b, node, "cumsum", in, 2, &a, error);
}

/* ---- DepthToSpace, SpaceToDepth, ReverseSequence --------------------------------------------- */

static gboolean depth_space(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op,
                            GError **error)
{
  if (!ds_onnx_has_attr(node, "blocksize"))
    return ds_onnx_invalid(error, "blocksize is required");
  const char *mode = ds_onnx_attr_string(node, "mode", "DCR");
  if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
    return ds_onnx_unsupported(error, "mode '%s' is not supported", mode);
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "block_size", fmt_int(b, ds_onnx_attr_int(node, "blocksize", 1)));
  attr_set(&a, "mode", mode);
  return emit_bind(b, node, op, &x, 1, &a, error);
}

static gboolean translate_depth_to_space(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return depth_space(b, node, "depth_to_space", error);
}

static gboolean translate_space_to_depth(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return depth_space(b, node, "space_to_depth", error);
}

static gboolean translate_reverse_sequence(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  gint64 batch_axis = ds_onnx_attr_int(node, "batch_axis", 1);
  gint64 time_axis = ds_onnx_attr_int(node, "time_axis", 0);
  if (!((batch_axis == 1 && time_axis == 0) || (batch_axis == 0 && time_axis == 1)))
    return ds_onnx_invalid(error, "batch_axis and time_axis must be 0 and 1");
  DsEntry in[2];
  if (!inputs(b, node, 2, in, error))
    return FALSE;
  Attrs swap = {.n = 0}, rev = {.n = 0};
  attr_set(&swap, "dim1", "0");
  attr_set(&swap, "dim2", "1");
  attr_set(&rev, "use_sequence_length", "1");
  if (time_axis == 0)
    return emit_bind(b, node, "SequenceReverse", in, 2, &rev, error);
  /* SequenceReverse has time first: swap the two axes in and back out. */
  DsNode *t = emit(b, node, "SwapAxis", "time_major", in, 1, &swap, error);
  if (t == NULL)
    return FALSE;
  DsEntry r_in[2] = {ds_onnx_entry(t, 0), in[1]};
  DsNode *r = emit(b, node, "SequenceReverse", "reversed", r_in, 2, &rev, error);
  if (r == NULL)
    return FALSE;
  DsEntry back = ds_onnx_entry(r, 0);
  return emit_bind(b, node, "SwapAxis", &back, 1, &swap, error);
}

/* ---- TopK ------------------------------------------------------------------------------------ */

static gboolean translate_topk(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  gint64 axis = ds_onnx_attr_int(node, "axis", -1), k[MAX_INTS];
  gboolean largest = ds_onnx_attr_int(node, "largest", 1) != 0;
  int n;
  if (ds_onnx_opset(b) < 10) {
    if (!ds_onnx_has_attr(node, "k"))
      return ds_onnx_invalid(error, "k is required");
    k[0] = ds_onnx_attr_int(node, "k", 1);
    n = 1;
  } else {
    n = input_ints(b, node, 1, k);
    if (n == -2 || n == 0 || n > 1)
      return ds_onnx_invalid(error, "k must be one integer");
  }
  DsEntry in[2];
  if (!ds_onnx_input(b, node, 0, &in[0], error))
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "axis", fmt_int(b, axis));
  attr_set(&a, "is_ascend", largest ? "0" : "1");
  attr_set(&a, "dtype", "int64");
  if (n == -1) {
    if (!ds_onnx_input(b, node, 1, &in[1], error))
      return FALSE;
    return emit_bind(b, node, "_contrib_dynamic_topk", in, 2, &a, error);
  }
  if (k[0] < 0)
    return ds_onnx_invalid(error, "k=%" G_GINT64_FORMAT " is negative", k[0]);
  if (k[0] == 0) /* topk's k=0 means every element: the dynamic form takes 0 as 0 */
    return ds_onnx_unsupported(error, "k=0 is not supported");
  attr_set(&a, "k", fmt_int(b, k[0]));
  attr_set(&a, "ret_typ", "both");
  return emit_bind(b, node, "topk", in, 1, &a, error);
}

/* ---- NonZero, Compress, Unique --------------------------------------------------------------- */

static gboolean translate_nonzero(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  /* _npx_nonzero gives (count, rank); ONNX wants (rank, count). */
  DsNode *nz = emit(b, node, "_npx_nonzero", "coords", &x, 1, NULL, error);
  if (nz == NULL)
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "axes", "(1, 0)");
  DsEntry c = ds_onnx_entry(nz, 0);
  return emit_bind(b, node, "transpose", &c, 1, &a, error);
}

static gboolean translate_compress(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry in[2];
  if (!inputs(b, node, 2, in, error))
    return FALSE;
  Attrs a = {.n = 0};
  if (ds_onnx_has_attr(node, "axis"))
    attr_set(&a, "axis", fmt_int(b, ds_onnx_attr_int(node, "axis", 0)));
  return emit_bind(b, node, "_contrib_compress", in, 2, &a, error);
}

static gboolean translate_unique(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "return_index", "1");
  attr_set(&a, "return_inverse", "1");
  attr_set(&a, "return_counts", "1");
  attr_set(&a, "sorted", ds_onnx_attr_int(node, "sorted", 1) ? "1" : "0");
  if (ds_onnx_has_attr(node, "axis"))
    attr_set(&a, "axis", fmt_int(b, ds_onnx_attr_int(node, "axis", 0)));
  return emit_bind(b, node, "_npi_unique", &x, 1, &a, error);
}

/* ---- Resize, Upsample ----------------------------------------------------------------------- */

/* A constant float (or integer) vector's values as doubles: their count, or -1. */
static int const_doubles(const DsNDArray *c, double *out, int max)
{
  const DsTensor *t = &c->view;
  int64_t n = ds_tensor_numel(t);
  if (t->ndim > 1 || n > max || t->dtype == DS_DTYPE_FLOAT16)
    return -1;
  for (int64_t i = 0; i < n; i++)
    out[i] = ds_tensor_load_f64(t->dtype, t->data, i);
  return (int)n;
}

static const char *fmt_doubles(DsOnnxBuilder *b, const double *v, int n)
{
  g_autoptr(GString) s = g_string_new("(");
  for (int i = 0; i < n; i++)
    g_string_append_printf(s, "%s%s", i ? ", " : "", ds_onnx_fmt_float(b, v[i]));
  g_string_append(s, n == 1 ? ",)" : ")");
  return ds_onnx_printf(b, "%s", s->str);
}

/* Where a Resize's parts are: the input index of the roi, scales and sizes (-1: absent). */
typedef struct {
  int roi, scales, sizes;
} ResizeInputs;

/* Resize and Upsample once their inputs and mode attributes are known. */
static gboolean resize(DsOnnxBuilder *b, const DsOnnxNode *node, ResizeInputs where,
                       const double *attr_scales, int n_attr_scales, Attrs *a, GError **error)
{
  gboolean crop = strcmp(ds_onnx_attr_string(node, "coordinate_transformation_mode", ""),
                         "tf_crop_and_resize") == 0;
  DsEntry in[3];
  if (!ds_onnx_input(b, node, 0, &in[0], error))
    return FALSE;
  gboolean use_sizes = where.sizes >= 0 && ds_onnx_has_input(node, (guint)where.sizes);
  if (!use_sizes && n_attr_scales < 0 &&
      (where.scales < 0 || !ds_onnx_has_input(node, (guint)where.scales)))
    return ds_onnx_invalid(error, "either scales or sizes is required");
  guint target = (guint)(use_sizes ? where.sizes : where.scales);
  double scales[DS_MAX_NDIM], roi[2 * DS_MAX_NDIM];
  gint64 sizes[MAX_INTS];
  int n_roi = -1, n_target;
  if (crop) {
    if (where.roi < 0 || !ds_onnx_has_input(node, (guint)where.roi))
      return ds_onnx_invalid(error, "tf_crop_and_resize needs a roi");
    const DsNDArray *c = ds_onnx_input_const(b, node, (guint)where.roi);
    n_roi = c != NULL ? const_doubles(c, roi, 2 * DS_MAX_NDIM) : -1;
  }
  if (n_attr_scales >= 0) {
    n_target = n_attr_scales;
    memcpy(scales, attr_scales, sizeof(double) * (size_t)MIN(n_attr_scales, DS_MAX_NDIM));
  } else if (use_sizes) {
    n_target = input_ints(b, node, target, sizes);
  } else {
    const DsNDArray *c = ds_onnx_input_const(b, node, target);
    n_target = c != NULL ? const_doubles(c, scales, DS_MAX_NDIM) : -1;
  }
  if (n_target > DS_MAX_NDIM || n_target == -2)
    return ds_onnx_invalid(error, "the scales or sizes are malformed");
  if (n_target >= 0 && (!crop || n_roi >= 0)) {
    attr_set(a, use_sizes ? "sizes" : "scales",
             use_sizes ? ds_onnx_fmt_ints(b, sizes, n_target) : fmt_doubles(b, scales, n_target));
    if (crop)
      attr_set(a, "roi", fmt_doubles(b, roi, n_roi));
    return emit_bind(b, node, "_contrib_resize", in, 1, a, error);
  }
  /* Computed target or roi: the dynamic form reads both. */
  if (crop) {
    if (!ds_onnx_input(b, node, (guint)where.roi, &in[1], error))
      return FALSE;
  } else {
    int64_t zero = 0;
    in[1] = ds_onnx_add_constant(b, "roi", ds_ndarray_new(DS_DTYPE_FLOAT32, 1, &zero, "roi", NULL));
  }
  if (n_attr_scales >= 0) {
    DsNDArray *c = ds_ndarray_new(DS_DTYPE_FLOAT64, 1, (int64_t[1]){n_target}, "scales", NULL);
    memcpy(c->view.data, scales, sizeof(double) * (size_t)n_target);
    in[2] = ds_onnx_add_constant(b, "scales", c);
  } else if (!ds_onnx_input(b, node, target, &in[2], error)) {
    return FALSE;
  }
  if (use_sizes)
    attr_set(a, "use_sizes", "1");
  return emit_bind(b, node, "_contrib_dynamic_resize", in, 3, a, error);
}

static gboolean translate_resize(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  const char *mode = ds_onnx_attr_string(node, "mode", "nearest");
  Attrs a = {.n = 0};
  ResizeInputs where = {1, 2, 3};
  if (ds_onnx_opset(b) < 11) {
    /* Resize-10 maps coordinates as Upsample does. */
    if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0)
      return ds_onnx_unsupported(error, "mode '%s' is not supported", mode);
    attr_set(&a, "mode", mode);
    attr_set(&a, "coordinate_transformation_mode", "asymmetric");
    attr_set(&a, "nearest_mode", "floor");
    where = (ResizeInputs){-1, 1, -1};
    return resize(b, node, where, NULL, -1, &a, error);
  }
  if (ds_onnx_attr_int(node, "antialias", 0) != 0)
    return ds_onnx_unsupported(error, "antialias is not supported");
  /* Resize-18's axes and aspect policies, and Resize-19's half_pixel_symmetric, are refused
   * below; their defaults are the older forms. */
  if (ds_onnx_has_attr(node, "axes") ||
      strcmp(ds_onnx_attr_string(node, "keep_aspect_ratio_policy", "stretch"), "stretch") != 0)
    return ds_onnx_unsupported(error, "axes and keep_aspect_ratio_policy are not supported");
  static const char *const coords[] = {"half_pixel",
                                       "asymmetric",
                                       "align_corners",
                                       "pytorch_half_pixel",
                                       "tf_half_pixel_for_nearest",
                                       "tf_crop_and_resize",
                                       NULL};
  static const char *const nearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
                                        NULL};
  const char *coord = ds_onnx_attr_string(node, "coordinate_transformation_mode", "half_pixel");
  const char *near = ds_onnx_attr_string(node, "nearest_mode", "round_prefer_floor");
  if (!g_strv_contains(coords, coord))
    return ds_onnx_unsupported(error, "coordinate_transformation_mode '%s' is not supported",
                               coord);
  if (!g_strv_contains(nearest, near))
    return ds_onnx_unsupported(error, "nearest_mode '%s' is not supported", near);
  if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0 && strcmp(mode, "cubic") != 0)
    return ds_onnx_unsupported(error, "mode '%s' is not supported", mode);
  attr_set(&a, "mode", mode);
  attr_set(&a, "coordinate_transformation_mode", coord);
  attr_set(&a, "nearest_mode", near);
  attr_set(&a, "cubic_coeff_a",
           ds_onnx_fmt_float(b, ds_onnx_attr_float(node, "cubic_coeff_a", -0.75f)));
  attr_set(&a, "exclude_outside", ds_onnx_attr_int(node, "exclude_outside", 0) ? "1" : "0");
  attr_set(&a, "extrapolation_value",
           ds_onnx_fmt_float(b, ds_onnx_attr_float(node, "extrapolation_value", 0.0f)));
  return resize(b, node, where, NULL, -1, &a, error);
}

static gboolean translate_upsample(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  const char *mode = ds_onnx_attr_string(node, "mode", "nearest");
  if (strcmp(mode, "bilinear") == 0)
    mode = "linear";
  if (strcmp(mode, "nearest") != 0 && strcmp(mode, "linear") != 0)
    return ds_onnx_unsupported(error, "mode '%s' is not supported", mode);
  Attrs a = {.n = 0};
  attr_set(&a, "mode", mode);
  attr_set(&a, "coordinate_transformation_mode", "asymmetric");
  attr_set(&a, "nearest_mode", "floor");
  if (ds_onnx_opset(b) >= 9)
    return resize(b, node, (ResizeInputs){-1, 1, -1}, NULL, -1, &a, error);
  float f[DS_MAX_NDIM + 1];
  double scales[DS_MAX_NDIM];
  int n = ds_onnx_attr_floats(node, "scales", f, DS_MAX_NDIM + 1);
  if (n < 0 || n > DS_MAX_NDIM)
    return ds_onnx_invalid(error, "scales are required, one per axis");
  for (int i = 0; i < n; i++)
    scales[i] = f[i];
  return resize(b, node, (ResizeInputs){-1, -1, -1}, scales, n, &a, error);
}

/* ---- NonMaxSuppression ----------------------------------------------------------------------- */

static gboolean translate_nms(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry in[5];
  if (!inputs(b, node, 2, in, error))
    return FALSE;
  /* Absent parameters: no boxes per class, threshold 0, and no score threshold. */
  static const double defaults[3] = {0, 0, -INFINITY};
  for (guint i = 2; i < 5; i++)
    if (!ds_onnx_input_or_scalar(b, node, i, i == 2 ? "max_output_boxes" : "threshold",
                                 i == 2 ? DS_DTYPE_INT64 : DS_DTYPE_FLOAT32, defaults[i - 2],
                                 &in[i], error))
      return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "center_point_box", ds_onnx_attr_int(node, "center_point_box", 0) ? "1" : "0");
  return emit_bind(b, node, "_contrib_non_max_suppression", in, 5, &a, error);
}

/* RoiAlign (average mode): the engine's ROIAlign, which takes rows [batch_index, x1, y1, x2,
 * y2], so the batch indices are joined to the rois as a first column. Opset 16's default
 * coordinate mode half_pixel is ROIAlign's `aligned` (pixel centres at +0.5); output_half_pixel,
 * the only mode before 16, is the unaligned one. */
static gboolean translate_roi_align(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  const char *mode = ds_onnx_attr_string(node, "mode", "avg");
  if (strcmp(mode, "avg") != 0)
    return ds_onnx_unsupported(error, "mode=%s: only avg is supported", mode);
  const char *coords =
      ds_onnx_attr_string(node, "coordinate_transformation_mode",
                          ds_onnx_opset(b) >= 16 ? "half_pixel" : "output_half_pixel");
  const gboolean aligned = strcmp(coords, "half_pixel") == 0;
  if (!aligned && strcmp(coords, "output_half_pixel") != 0)
    return ds_onnx_invalid(error,
                           "coordinate_transformation_mode '%s' is not half_pixel or "
                           "output_half_pixel",
                           coords);
  const gint64 height = ds_onnx_attr_int(node, "output_height", 1);
  const gint64 width = ds_onnx_attr_int(node, "output_width", 1);
  DsEntry in[3];
  if (!inputs(b, node, 3, in, error))
    return FALSE;
  Attrs cast = {.n = 0}, column = {.n = 0}, join = {.n = 0}, roi = {.n = 0};
  attr_set(&cast, "dtype", "float32");
  DsNode *index = emit(b, node, "Cast", "batch_index", &in[2], 1, &cast, error);
  if (index == NULL)
    return FALSE;
  DsEntry index_e = ds_onnx_entry(index, 0);
  attr_set(&column, "axis", "1");
  DsNode *index_col = emit(b, node, "expand_dims", "batch_column", &index_e, 1, &column, error);
  if (index_col == NULL)
    return FALSE;
  DsEntry rows_in[2] = {ds_onnx_entry(index_col, 0), in[1]};
  attr_set(&join, "num_args", "2");
  attr_set(&join, "dim", "1");
  DsNode *rows = emit(b, node, "Concat", "rois_with_batch", rows_in, 2, &join, error);
  if (rows == NULL)
    return FALSE;
  DsEntry align_in[2] = {in[0], ds_onnx_entry(rows, 0)};
  attr_set(&roi, "pooled_size",
           ds_onnx_printf(b, "(%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", height, width));
  attr_set(&roi, "spatial_scale",
           ds_onnx_fmt_float(b, ds_onnx_attr_float(node, "spatial_scale", 1.0f)));
  attr_set(&roi, "sample_ratio", fmt_int(b, ds_onnx_attr_int(node, "sampling_ratio", 0)));
  attr_set(&roi, "aligned", aligned ? "True" : "False");
  return emit_bind(b, node, "_contrib_ROIAlign", align_in, 2, &roi, error);
}

/* GridSample (opset 16: 4-D data, modes bilinear, nearest and bicubic). */
static gboolean translate_grid_sample(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry in[2];
  if (!inputs(b, node, 2, in, error))
    return FALSE;
  Attrs a = {.n = 0};
  attr_set(&a, "mode", ds_onnx_attr_string(node, "mode", "bilinear"));
  attr_set(&a, "padding_mode", ds_onnx_attr_string(node, "padding_mode", "zeros"));
  attr_set(&a, "align_corners", ds_onnx_attr_int(node, "align_corners", 0) ? "True" : "False");
  return emit_bind(b, node, "_contrib_grid_sample", in, 2, &a, error);
}

/* ------------------------------------------------------------------------------------------ */

const DsOnnxOpTranslator ds_onnx_tensor_ops[] = {
    {"Shape", 1, translate_shape, 21},
    {"Size", 1, translate_size, 21},
    {"Reshape", 1, translate_reshape, 21},
    {"Flatten", 1, translate_flatten, 21},
    {"Transpose", 1, translate_transpose, 21},
    {"Squeeze", 1, translate_squeeze, 21},
    {"Unsqueeze", 1, translate_unsqueeze, 21},
    {"Concat", 4, translate_concat},
    {"Split", 2, translate_split, 18},
    {"Tile", 6, translate_tile},
    {"Expand", 8, translate_expand},
    {"Slice", 1, translate_slice},
    {"Gather", 1, translate_gather},
    {"GatherElements", 11, translate_gather_elements},
    {"GatherND", 11, translate_gather_nd},
    {"ScatterND", 11, translate_scatter_nd, 18},
    {"ScatterElements", 11, translate_scatter_elements, 18},
    {"Scatter", 9, translate_scatter_elements},
    {"Pad", 2, translate_pad, 21},
    {"ConstantOfShape", 9, translate_constant_of_shape, 21},
    {"Range", 11, translate_range},
    {"EyeLike", 9, translate_eye_like},
    {"OneHot", 9, translate_one_hot},
    {"Trilu", 14, translate_trilu},
    {"CumSum", 11, translate_cumsum},
    {"DepthToSpace", 1, translate_depth_to_space},
    {"SpaceToDepth", 1, translate_space_to_depth},
    {"ReverseSequence", 10, translate_reverse_sequence},
    {"TopK", 1, translate_topk},
    {"NonZero", 9, translate_nonzero},
    {"Compress", 9, translate_compress},
    {"Unique", 11, translate_unique},
    {"Resize", 10, translate_resize, 19},
    {"Upsample", 7, translate_upsample},
    {"NonMaxSuppression", 10, translate_nms},
    {"GridSample", 16, translate_grid_sample},
    {"RoiAlign", 10, translate_roi_align},
    {NULL, 0, NULL},
};
