/* ds-onnx-fold.c: integer shape arithmetic evaluated while importing.
 *
 * Exporters compute shapes in the graph: `Reshape(x, Concat(Gather(Shape(x), 0), [-1]))`, or
 * ONNX's own function bodies (`ConstantOfShape(Sub(Size(Shape(X)), axis))`). When the values
 * are known at import time (constants, or a Shape of a value whose dims ONNX's type information
 * fixes), this folds them into constants, the way onnx-simplifier and ONNX Runtime's constant
 * folding do, so the consumer becomes a static op instead of a dynamic-shape one and keeps a
 * known rank. Only small integer tensors are folded; anything else goes to its translator.
 */
#include "ds-onnx-translate.h"

#include <string.h>

/* Folded values are shapes and indices: larger ones are left to the engine. */
#define FOLD_MAX_ELEMENTS 512

typedef struct {
  int rank;
  gint64 dims[DS_MAX_NDIM];
  gint64 n;
  gint64 v[FOLD_MAX_ELEMENTS];
  DsDType dtype; /* INT64 or INT32 */
} IntValue;

static gboolean is_int_dtype(DsDType d)
{
  return d == DS_DTYPE_INT64 || d == DS_DTYPE_INT32;
}

/* Input `i` as integers, when it is a small integer constant. */
static gboolean int_input(DsOnnxBuilder *b, const DsOnnxNode *node, guint i, IntValue *out)
{
  const DsNDArray *c = ds_onnx_input_const(b, node, i);
  if (c == NULL || !is_int_dtype(c->view.dtype))
    return FALSE;
  int n = ds_onnx_const_ints(c, out->v, FOLD_MAX_ELEMENTS);
  if (n < 0)
    return FALSE;
  out->n = n;
  out->rank = c->view.ndim;
  for (int d = 0; d < out->rank; d++)
    out->dims[d] = c->view.shape[d];
  out->dtype = c->view.dtype;
  return TRUE;
}

static DsNDArray *to_array(const IntValue *value)
{
  int64_t dims[DS_MAX_NDIM];
  for (int d = 0; d < value->rank; d++)
    dims[d] = value->dims[d];
  DsNDArray *a = ds_ndarray_new(value->dtype, value->rank, dims, "folded value", NULL);
  if (a == NULL)
    return NULL;
  for (gint64 i = 0; i < value->n; i++) {
    if (value->dtype == DS_DTYPE_INT64)
      ((gint64 *)a->view.data)[i] = value->v[i];
    else
      ((gint32 *)a->view.data)[i] = (gint32)value->v[i];
  }
  return a;
}

static void set_vector(IntValue *out, gint64 n)
{
  out->rank = 1;
  out->dims[0] = n;
  out->n = n;
  out->dtype = DS_DTYPE_INT64;
}

static void set_scalar(IntValue *out, gint64 v)
{
  out->rank = 0;
  out->n = 1;
  out->v[0] = v;
  out->dtype = DS_DTYPE_INT64;
}

/* Shape (with opset 15's start and end) and Size of a value whose dims are all known. */
static gboolean fold_shape(DsOnnxBuilder *b, const DsOnnxNode *node, gboolean size, IntValue *out)
{
  gint64 dims[DS_MAX_NDIM];
  int rank;
  if (!ds_onnx_has_input(node, 0) || !ds_onnx_value_static_shape(b, node->inputs[0], dims, &rank))
    return FALSE;
  if (size) {
    gint64 n = 1;
    for (int d = 0; d < rank; d++)
      n *= dims[d];
    set_scalar(out, n);
    return TRUE;
  }
  gint64 start = ds_onnx_attr_int(node, "start", 0), end = ds_onnx_attr_int(node, "end", rank);
  start = start < 0 ? MAX(start + rank, 0) : MIN(start, rank);
  end = end < 0 ? MAX(end + rank, 0) : MIN(end, rank);
  set_vector(out, MAX(end - start, 0));
  for (gint64 d = start; d < end; d++)
    out->v[d - start] = dims[d];
  return TRUE;
}

/* Unsqueeze and Squeeze: the values stay, the dims change. Axes from the attribute (before 13)
 * or the second input. */
static gboolean fold_squeeze(DsOnnxBuilder *b, const DsOnnxNode *node, gboolean unsqueeze,
                             IntValue *out)
{
  if (!int_input(b, node, 0, out))
    return FALSE;
  gint64 axes[DS_MAX_NDIM];
  int n_axes;
  if (ds_onnx_opset(b) >= 13) {
    IntValue a;
    if (ds_onnx_has_input(node, 1)) {
      if (!int_input(b, node, 1, &a) || a.n > DS_MAX_NDIM)
        return FALSE;
      n_axes = (int)a.n;
      memcpy(axes, a.v, sizeof(gint64) * (gsize)a.n);
    } else {
      n_axes = -1;
    }
  } else {
    n_axes = ds_onnx_attr_ints(node, "axes", axes, DS_MAX_NDIM);
    if (n_axes > DS_MAX_NDIM)
      return FALSE;
  }
  if (unsqueeze) {
    int rank = out->rank + MAX(n_axes, 0);
    if (n_axes < 0 || rank > DS_MAX_NDIM)
      return FALSE;
    gboolean inserted[DS_MAX_NDIM] = {FALSE};
    for (int k = 0; k < n_axes; k++) {
      gint64 a = axes[k] < 0 ? axes[k] + rank : axes[k];
      if (a < 0 || a >= rank || inserted[a])
        return FALSE;
      inserted[a] = TRUE;
    }
    gint64 dims[DS_MAX_NDIM];
    for (int d = 0, src = 0; d < rank; d++)
      dims[d] = inserted[d] ? 1 : out->dims[src++];
    memcpy(out->dims, dims, sizeof dims);
    out->rank = rank;
    return TRUE;
  }
  gboolean removed[DS_MAX_NDIM] = {FALSE};
  for (int k = 0; k < n_axes; k++) {
    gint64 a = axes[k] < 0 ? axes[k] + out->rank : axes[k];
    if (a < 0 || a >= out->rank || out->dims[a] != 1)
      return FALSE;
    removed[a] = TRUE;
  }
  int rank = 0;
  for (int d = 0; d < out->rank; d++)
    if (!(n_axes < 0 ? out->dims[d] == 1 : removed[d]))
      out->dims[rank++] = out->dims[d];
  out->rank = rank;
  return TRUE;
}

/* Concat of 1-D integer values. */
static gboolean fold_concat(DsOnnxBuilder *b, const DsOnnxNode *node, IntValue *out)
{
  IntValue part;
  set_vector(out, 0);
  for (guint i = 0; i < node->n_inputs; i++) {
    if (!int_input(b, node, i, &part) || part.rank != 1 || out->n + part.n > FOLD_MAX_ELEMENTS)
      return FALSE;
    if (i == 0)
      out->dtype = part.dtype;
    else if (part.dtype != out->dtype)
      return FALSE;
    memcpy(out->v + out->n, part.v, sizeof(gint64) * (gsize)part.n);
    out->n += part.n;
  }
  out->dims[0] = out->n;
  return node->n_inputs > 0;
}

/* Gather along axis 0 of a 1-D value, by scalar or 1-D indices. */
static gboolean fold_gather(DsOnnxBuilder *b, const DsOnnxNode *node, IntValue *out)
{
  IntValue data, idx;
  gint64 axis = ds_onnx_attr_int(node, "axis", 0);
  if (!int_input(b, node, 0, &data) || data.rank != 1 || (axis != 0 && axis != -1) ||
      !int_input(b, node, 1, &idx) || idx.rank > 1)
    return FALSE;
  *out = idx;
  out->dtype = data.dtype;
  for (gint64 i = 0; i < idx.n; i++) {
    gint64 k = idx.v[i] < 0 ? idx.v[i] + data.n : idx.v[i];
    if (k < 0 || k >= data.n)
      return FALSE;
    out->v[i] = data.v[k];
  }
  return TRUE;
}

/* Add, Sub, Mul, Div of integer values of one shape, or one of them a single value. */
static gboolean fold_arith(DsOnnxBuilder *b, const DsOnnxNode *node, char op, IntValue *out)
{
  IntValue x, y;
  if (!int_input(b, node, 0, &x) || !int_input(b, node, 1, &y) || x.dtype != y.dtype)
    return FALSE;
  /* One of them a single value (its rank may add leading 1s), or both of one shape. */
  if (x.n != y.n && MIN(x.n, y.n) != 1)
    return FALSE;
  if (x.n == y.n && x.n != 1 &&
      (x.rank != y.rank || memcmp(x.dims, y.dims, sizeof(gint64) * (gsize)x.rank) != 0))
    return FALSE;
  const IntValue *big = x.n > y.n ? &x : y.n > x.n ? &y : x.rank >= y.rank ? &x : &y;
  if (MIN(x.n, y.n) == 1 && MIN(x.rank, y.rank) > 0 && (x.rank > big->rank || y.rank > big->rank))
    return FALSE;
  *out = *big;
  for (gint64 i = 0; i < big->n; i++) {
    gint64 a = x.v[x.n == 1 ? 0 : i], c = y.v[y.n == 1 ? 0 : i];
    switch (op) {
    case '+':
      out->v[i] = a + c;
      break;
    case '-':
      out->v[i] = a - c;
      break;
    case '*':
      out->v[i] = a * c;
      break;
    default:
      if (c == 0)
        return FALSE;
      out->v[i] = a / c; /* C's truncation, as ONNX Runtime divides integers */
      break;
    }
  }
  return TRUE;
}

/* Cast between the integer types. */
static gboolean fold_cast(DsOnnxBuilder *b, const DsOnnxNode *node, IntValue *out)
{
  DsDType to = ds_onnx_dtype((int)ds_onnx_attr_int(node, "to", 0));
  if (!is_int_dtype(to) || !int_input(b, node, 0, out))
    return FALSE;
  if (to == DS_DTYPE_INT32)
    for (gint64 i = 0; i < out->n; i++)
      out->v[i] = (gint32)out->v[i];
  out->dtype = to;
  return TRUE;
}

/* Range of integer scalars. */
static gboolean fold_range(DsOnnxBuilder *b, const DsOnnxNode *node, IntValue *out)
{
  IntValue start, limit, delta;
  if (!int_input(b, node, 0, &start) || !int_input(b, node, 1, &limit) ||
      !int_input(b, node, 2, &delta) || start.n != 1 || limit.n != 1 || delta.n != 1 ||
      delta.v[0] == 0)
    return FALSE;
  gint64 span = limit.v[0] - start.v[0], step = delta.v[0];
  gint64 n = MAX((span + step + (step > 0 ? -1 : 1)) / step, 0);
  if (n > FOLD_MAX_ELEMENTS)
    return FALSE;
  set_vector(out, n);
  out->dtype = start.dtype;
  for (gint64 i = 0; i < n; i++)
    out->v[i] = start.v[0] + i * step;
  return TRUE;
}

/* ConstantOfShape with an integer value (or the default float zero, which the translator
 * keeps): filled here when the shape is known and small. */
static gboolean fold_constant_of_shape(DsOnnxBuilder *b, const DsOnnxNode *node, IntValue *out)
{
  IntValue shape;
  const DsOnnxAttribute *value = ds_onnx_node_find_attribute(node, "value");
  if (value == NULL || value->type != DS_ONNX_ATTR_TENSOR || !int_input(b, node, 0, &shape) ||
      shape.rank != 1 || shape.n > DS_MAX_NDIM)
    return FALSE;
  g_autoptr(DsNDArray) fill = ds_onnx_tensor_to_ndarray(value->t, NULL, "value", NULL);
  gint64 v;
  if (fill == NULL || !is_int_dtype(fill->view.dtype) || ds_onnx_const_ints(fill, &v, 1) != 1)
    return FALSE;
  gint64 n = 1;
  for (gint64 d = 0; d < shape.n; d++) {
    if (shape.v[d] < 0 || (shape.v[d] > 0 && n > FOLD_MAX_ELEMENTS / shape.v[d]))
      return FALSE;
    n *= shape.v[d];
  }
  out->rank = (int)shape.n;
  memcpy(out->dims, shape.v, sizeof(gint64) * (gsize)shape.n);
  out->n = n;
  out->dtype = fill->view.dtype;
  for (gint64 i = 0; i < n; i++)
    out->v[i] = v;
  return TRUE;
}

gboolean ds_onnx_fold(DsOnnxBuilder *b, const DsOnnxNode *node, DsNDArray **out)
{
  IntValue value;
  const char *op = node->op_type;
  gboolean ok;
  if (node->n_outputs != 1)
    return FALSE;
  if (strcmp(op, "Shape") == 0 || strcmp(op, "Size") == 0)
    ok = fold_shape(b, node, op[1] == 'i', &value);
  else if (strcmp(op, "Unsqueeze") == 0 || strcmp(op, "Squeeze") == 0)
    ok = fold_squeeze(b, node, op[0] == 'U', &value);
  else if (strcmp(op, "Concat") == 0)
    ok = fold_concat(b, node, &value);
  else if (strcmp(op, "Gather") == 0)
    ok = fold_gather(b, node, &value);
  else if (strcmp(op, "Add") == 0 || strcmp(op, "Sub") == 0 || strcmp(op, "Mul") == 0 ||
           strcmp(op, "Div") == 0)
    ok = fold_arith(b, node, op[0] == 'A' ? '+' : op[0] == 'S' ? '-' : op[0] == 'M' ? '*' : '/',
                    &value);
  else if (strcmp(op, "Cast") == 0)
    ok = fold_cast(b, node, &value);
  else if (strcmp(op, "Range") == 0)
    ok = fold_range(b, node, &value);
  else if (strcmp(op, "ConstantOfShape") == 0)
    ok = fold_constant_of_shape(b, node, &value);
  else if (strcmp(op, "Identity") == 0)
    ok = int_input(b, node, 0, &value);
  else
    ok = FALSE;
  if (!ok)
    return FALSE;
  *out = to_array(&value);
  return *out != NULL;
}
