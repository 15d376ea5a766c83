/* ds-onnx-translate.c: the translator API (ds-onnx-translate.h): what the op translators
 * (ds-onnx-ops-*.c), the folder (ds-onnx-fold.c) and the importer's walk (ds-onnx-import.c)
 * call to read a node, resolve its inputs through the enclosing bodies, hoist constants into
 * the top graph, emit engine nodes and bind outputs, and build the bodies of Loop, If and Scan.
 *
 * It sits below the walk and calls nothing above it: a body's nodes are translated by the
 * runner the import installs in the context (ds-onnx-builder.h), not by naming the walk.
 */
#include "ds-onnx-builder.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

#include "ds-op.h"

/* ---- Errors ---------------------------------------------------------------------------------- */

gboolean ds_onnx_unsupported(GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, DS_ERROR, DS_ERROR_UNSUPPORTED, msg);
  return FALSE;
}

gboolean ds_onnx_invalid(GError **error, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error_literal(error, DS_ERROR, DS_ERROR_INVALID, msg);
  return FALSE;
}

gint64 ds_onnx_opset(const DsOnnxBuilder *b)
{
  return b->ctx->opset;
}

/* ---- Attributes ------------------------------------------------------------------------------ */

gboolean ds_onnx_has_attr(const DsOnnxNode *node, const char *name)
{
  return ds_onnx_node_find_attribute(node, name) != NULL;
}

gint64 ds_onnx_attr_int(const DsOnnxNode *node, const char *name, gint64 fallback)
{
  const DsOnnxAttribute *a = ds_onnx_node_find_attribute(node, name);
  return a != NULL && a->type == DS_ONNX_ATTR_INT ? a->i : fallback;
}

float ds_onnx_attr_float(const DsOnnxNode *node, const char *name, float fallback)
{
  const DsOnnxAttribute *a = ds_onnx_node_find_attribute(node, name);
  if (a == NULL)
    return fallback;
  if (a->type == DS_ONNX_ATTR_INT) /* some writers store 1 for 1.0 */
    return (float)a->i;
  return a->type == DS_ONNX_ATTR_FLOAT ? a->f : fallback;
}

const char *ds_onnx_attr_string(const DsOnnxNode *node, const char *name, const char *fallback)
{
  const DsOnnxAttribute *a = ds_onnx_node_find_attribute(node, name);
  return a != NULL && a->type == DS_ONNX_ATTR_STRING ? a->s.data : fallback;
}

int ds_onnx_attr_ints(const DsOnnxNode *node, const char *name, gint64 *out, int max)
{
  const DsOnnxAttribute *a = ds_onnx_node_find_attribute(node, name);
  if (a == NULL || (a->type != DS_ONNX_ATTR_INTS && a->type != DS_ONNX_ATTR_INT))
    return -1;
  if (a->type == DS_ONNX_ATTR_INT) {
    if (max > 0)
      out[0] = a->i;
    return 1;
  }
  for (gsize i = 0; i < a->n_ints && (int)i < max; i++)
    out[i] = a->ints[i];
  return (int)a->n_ints;
}

int ds_onnx_attr_floats(const DsOnnxNode *node, const char *name, float *out, int max)
{
  const DsOnnxAttribute *a = ds_onnx_node_find_attribute(node, name);
  if (a == NULL || a->type != DS_ONNX_ATTR_FLOATS)
    return -1;
  for (gsize i = 0; i < a->n_floats && (int)i < max; i++)
    out[i] = a->floats[i];
  return (int)a->n_floats;
}

/* ---- Names and strings ----------------------------------------------------------------------- */

const char *ds_onnx_printf(DsOnnxBuilder *b, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *s = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  return g_string_chunk_insert(b->ctx->strings, s);
}

const char *ds_onnx_fmt_ints(DsOnnxBuilder *b, const gint64 *values, int n)
{
  g_autoptr(GString) s = g_string_new("(");
  for (int i = 0; i < n; i++)
    g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? ", " : "", values[i]);
  g_string_append(s, n == 1 ? ",)" : ")");
  return g_string_chunk_insert(b->ctx->strings, s->str);
}

const char *ds_onnx_fmt_float(DsOnnxBuilder *b, double value)
{
  if (isinf(value))
    return value > 0 ? "inf" : "-inf";
  if (isnan(value))
    return "nan";
  return ds_onnx_printf(b, "%.17g", value);
}

/* `base`, or `base_1`, `base_2`... : the first name no node of `b`'s graph has. */
static const char *unique_name(DsOnnxBuilder *b, const char *base)
{
  if (!g_hash_table_contains(b->names, base))
    return g_string_chunk_insert(b->ctx->strings, base);
  for (guint k = 1;; k++) {
    g_autofree char *name = g_strdup_printf("%s_%u", base, k);
    if (!g_hash_table_contains(b->names, name))
      return g_string_chunk_insert(b->ctx->strings, name);
  }
}

DsNode *ds_onnx_builder_append_node(DsOnnxBuilder *b, const char *base, const char *op_name)
{
  const char *name = unique_name(b, base);
  DsNode *node = ds_graph_add_node(b->graph, name, op_name);
  g_hash_table_add(b->names, node->name);
  return node;
}

const char *ds_onnx_node_base_name(DsOnnxBuilder *b, const DsOnnxNode *node)
{
  if (node->name[0] != '\0')
    return node->name;
  const char *out = node->n_outputs > 0 && node->outputs[0][0] != '\0' ? node->outputs[0] : NULL;
  return out != NULL ? ds_onnx_printf(b, "%s_%s", node->op_type, out)
                     : ds_onnx_printf(b, "%s", node->op_type);
}

/* ---- Values ---------------------------------------------------------------------------------- */

void ds_onnx_bind_value(DsOnnxBuilder *b, const char *name, DsEntry entry)
{
  DsEntry *e = g_new(DsEntry, 1);
  *e = entry;
  g_hash_table_replace(b->values, g_strdup(name), e);
}

DsOnnxBuilder *ds_onnx_builder_top(DsOnnxBuilder *b)
{
  while (b->parent != NULL)
    b = b->parent;
  return b;
}

static void set_dtype_attr(DsNode *variable, DsDType dtype)
{
  if (dtype == DS_DTYPE_UNKNOWN)
    return;
  char code[8];
  g_snprintf(code, sizeof code, "%d", (int)dtype);
  ds_node_add_attr(variable, "__dtype__", code);
}

DsOnnxValueHint *ds_onnx_add_hint(DsOnnxContext *ctx, const char *name, DsDType dtype, int rank)
{
  if (name == NULL || name[0] == '\0')
    return NULL;
  DsOnnxValueHint *h = g_new(DsOnnxValueHint, 1);
  h->dtype = dtype;
  h->rank = rank > DS_MAX_NDIM ? -1 : rank;
  for (int i = 0; i < DS_MAX_NDIM; i++)
    h->dims[i] = -1;
  g_hash_table_replace(ctx->hints, g_strdup(name), h);
  return h;
}

gboolean ds_onnx_value_static_shape(DsOnnxBuilder *b, const char *name, gint64 *dims, int *rank)
{
  const DsNDArray *c = g_hash_table_lookup(b->ctx->consts, name);
  if (c != NULL) {
    *rank = c->view.ndim;
    for (int i = 0; i < c->view.ndim; i++)
      dims[i] = c->view.shape[i];
    return TRUE;
  }
  const DsOnnxValueHint *h = g_hash_table_lookup(b->ctx->hints, name);
  if (h == NULL || h->rank < 0)
    return FALSE;
  for (int i = 0; i < h->rank; i++)
    if (h->dims[i] < 0)
      return FALSE;
  *rank = h->rank;
  memcpy(dims, h->dims, sizeof(gint64) * (gsize)h->rank);
  return TRUE;
}

gboolean ds_onnx_lookup(DsOnnxBuilder *b, const char *name, DsEntry *out, GError **error)
{
  const DsEntry *e = g_hash_table_lookup(b->values, name);
  if (e != NULL) {
    *out = *e;
    return TRUE;
  }
  if (b->parent == NULL)
    return ds_onnx_invalid(error, "no input, initializer or node output is called '%s'", name);
  /* An outer value: the body reads it through a variable of its own, fed by the
   * control-flow node. */
  DsOnnxCapture capture = {NULL, {0, 0, 0}};
  if (!ds_onnx_lookup(b->parent, name, &capture.outer, error))
    return FALSE;
  DsNode *var = ds_onnx_builder_append_node(b, name, "null");
  set_dtype_attr(var, ds_onnx_value_dtype(b, name));
  capture.name = g_strdup(name);
  g_array_append_val(b->captures, capture);
  g_array_append_val(b->capture_vars, var->id);
  *out = ds_onnx_entry(var, 0);
  ds_onnx_bind_value(b, name, *out);
  return TRUE;
}

gboolean ds_onnx_has_input(const DsOnnxNode *node, guint i)
{
  return i < node->n_inputs && node->inputs[i][0] != '\0';
}

gboolean ds_onnx_input(DsOnnxBuilder *b, const DsOnnxNode *node, guint i, DsEntry *out,
                       GError **error)
{
  if (!ds_onnx_has_input(node, i))
    return ds_onnx_invalid(error, "input %u is missing", i);
  return ds_onnx_lookup(b, node->inputs[i], out, error);
}

const DsNDArray *ds_onnx_input_const(DsOnnxBuilder *b, const DsOnnxNode *node, guint i)
{
  if (!ds_onnx_has_input(node, i))
    return NULL;
  return g_hash_table_lookup(b->ctx->consts, node->inputs[i]);
}

DsDType ds_onnx_value_dtype(DsOnnxBuilder *b, const char *name)
{
  const DsNDArray *c = g_hash_table_lookup(b->ctx->consts, name);
  if (c != NULL)
    return c->view.dtype;
  const DsOnnxValueHint *h = g_hash_table_lookup(b->ctx->hints, name);
  return h != NULL ? ds_onnx_compute_dtype(h->dtype) : DS_DTYPE_UNKNOWN;
}

DsDType ds_onnx_value_storage(DsOnnxBuilder *b, const char *name)
{
  gpointer code = g_hash_table_lookup(b->ctx->storage, name);
  return code != NULL ? (DsDType)(GPOINTER_TO_INT(code) - 1) : DS_DTYPE_UNKNOWN;
}

void ds_onnx_mark_storage(DsOnnxContext *ctx, const char *name, DsDType dtype)
{
  if (name != NULL && name[0] != '\0' && ds_dtype_is_storage_only(dtype))
    g_hash_table_replace(ctx->storage, g_strdup(name), GINT_TO_POINTER((int)dtype + 1));
}

int ds_onnx_value_rank(DsOnnxBuilder *b, const char *name)
{
  const DsNDArray *c = g_hash_table_lookup(b->ctx->consts, name);
  if (c != NULL)
    return c->view.ndim;
  const DsOnnxValueHint *h = g_hash_table_lookup(b->ctx->hints, name);
  return h != NULL ? h->rank : -1;
}

DsDType ds_onnx_input_dtype(DsOnnxBuilder *b, const DsOnnxNode *node, guint i)
{
  return ds_onnx_has_input(node, i) ? ds_onnx_value_dtype(b, node->inputs[i]) : DS_DTYPE_UNKNOWN;
}

int ds_onnx_input_rank(DsOnnxBuilder *b, const DsOnnxNode *node, guint i)
{
  return ds_onnx_has_input(node, i) ? ds_onnx_value_rank(b, node->inputs[i]) : -1;
}

int ds_onnx_const_ints(const DsNDArray *array, gint64 *out, int max)
{
  const DsTensor *t = &array->view;
  int64_t n = ds_tensor_numel(t);
  if (n > max)
    return -1;
  for (int64_t i = 0; i < n; i++) {
    switch (t->dtype) {
    case DS_DTYPE_INT64:
      out[i] = ((const gint64 *)t->data)[i];
      break;
    case DS_DTYPE_INT32:
      out[i] = ((const gint32 *)t->data)[i];
      break;
    case DS_DTYPE_INT8:
      out[i] = ((const gint8 *)t->data)[i];
      break;
    case DS_DTYPE_UINT8:
    case DS_DTYPE_BOOL:
      out[i] = ((const guint8 *)t->data)[i];
      break;
    default:
      return -1;
    }
  }
  return (int)n;
}

gboolean ds_onnx_const_scalar(const DsNDArray *array, double *out)
{
  const DsTensor *t = &array->view;
  if (ds_tensor_numel(t) < 1)
    return FALSE;
  switch (t->dtype) {
  case DS_DTYPE_FLOAT32:
    *out = ((const float *)t->data)[0];
    return TRUE;
  case DS_DTYPE_FLOAT64:
    *out = ((const double *)t->data)[0];
    return TRUE;
  default: {
    gint64 v;
    if (ds_dtype_is_storage_only(t->dtype) || ds_onnx_const_ints(array, &v, 1) != 1) {
      /* ds_onnx_const_ints refuses arrays of more than one element: read the first. */
      DsNDArray first = *array;
      first.view.ndim = 0;
      if (ds_dtype_is_storage_only(t->dtype) || ds_onnx_const_ints(&first, &v, 1) != 1)
        return FALSE;
    }
    *out = (double)v;
    return TRUE;
  }
  }
}

/* ---- Constants ------------------------------------------------------------------------------- */

DsEntry ds_onnx_add_weight(DsOnnxBuilder *top, const char *hint, DsNDArray *array)
{
  g_autofree char *base = g_strdup(hint != NULL && hint[0] != '\0' ? hint : "const");
  /* The variable's name must not be an ONNX value bound to something else. */
  const char *name = base;
  g_autofree char *alt = NULL;
  for (guint k = 1;
       g_hash_table_contains(top->values, name) || g_hash_table_contains(top->names, name); k++) {
    g_free(alt);
    alt = g_strdup_printf("%s_%u", base, k);
    name = alt;
  }
  DsNode *var = ds_onnx_builder_append_node(top, name, "null");
  const DsTensor *t = &array->view;
  int64_t dims[DS_MAX_NDIM];
  for (int i = 0; i < t->ndim; i++)
    dims[i] = t->shape[i];
  ds_node_add_attr(var, "__shape__", ds_onnx_fmt_ints(top, dims, t->ndim));
  set_dtype_attr(var, t->dtype);
  g_ptr_array_add(top->ctx->weights, array);
  g_ptr_array_add(top->ctx->weight_names, g_strdup(var->name));
  g_hash_table_replace(top->ctx->consts, g_strdup(var->name), array);
  DsEntry entry = ds_onnx_entry(var, 0);
  ds_onnx_bind_value(top, var->name, entry);
  return entry;
}

DsEntry ds_onnx_add_constant(DsOnnxBuilder *b, const char *hint, DsNDArray *array)
{
  DsOnnxBuilder *top = ds_onnx_builder_top(b);
  DsEntry entry = ds_onnx_add_weight(top, hint, array);
  if (b == top)
    return entry;
  const char *name = top->graph->nodes[entry.node_id]->name;
  DsEntry inner;
  GError *never = NULL;
  if (!ds_onnx_lookup(b, name, &inner, &never)) /* bound above: cannot fail */
    g_error("%s", never->message);
  return inner;
}

DsEntry ds_onnx_add_scalar(DsOnnxBuilder *b, const char *hint, DsDType dtype, double value,
                           gboolean one_dim)
{
  int64_t one = 1;
  DsNDArray *a = ds_ndarray_new(dtype, one_dim ? 1 : 0, &one, hint, NULL);
  ds_tensor_store_f64(dtype, a->view.data, value);
  return ds_onnx_add_constant(b, hint, a);
}

gboolean ds_onnx_input_or_scalar(DsOnnxBuilder *b, const DsOnnxNode *node, guint i,
                                 const char *hint, DsDType dtype, double value, DsEntry *out,
                                 GError **error)
{
  if (ds_onnx_has_input(node, i))
    return ds_onnx_input(b, node, i, out, error);
  *out = ds_onnx_add_scalar(b, hint, dtype, value, FALSE);
  return TRUE;
}

gboolean ds_onnx_shape_source(DsOnnxBuilder *b, DsEntry e, DsEntry *source)
{
  const DsNode *n = ds_onnx_builder_graph(b)->nodes[e.node_id];
  if (n->op == NULL || n->op->id != DS_OP_SHAPE_ARRAY || n->n_inputs != 1)
    return FALSE;
  *source = n->inputs[0];
  return TRUE;
}

DsEntry ds_onnx_add_ints(DsOnnxBuilder *b, const char *hint, const gint64 *values, int n,
                         gboolean scalar)
{
  int64_t dims[1] = {n};
  DsNDArray *a = ds_ndarray_new(DS_DTYPE_INT64, scalar ? 0 : 1, dims, hint, NULL);
  if (n > 0)
    memcpy(a->view.data, values, sizeof(gint64) * (size_t)n);
  return ds_onnx_add_constant(b, hint, a);
}

/* ---- Emitting -------------------------------------------------------------------------------- */

static DsNode *emit_named(DsOnnxBuilder *b, const char *base, const char *op_name,
                          const DsEntry *inputs, guint n_inputs, DsGraph **subgraphs,
                          guint n_subgraphs, const char *const *keys, const char *const *values,
                          guint n_attrs, GError **error);

DsNode *ds_onnx_emitv(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op_name,
                      const char *suffix, const DsEntry *inputs, guint n_inputs,
                      const char *const *keys, const char *const *values, guint n_attrs,
                      GError **error)
{
  return ds_onnx_emit_control(b, node, op_name, suffix, inputs, n_inputs, NULL, 0, keys, values,
                              n_attrs, error);
}

DsNode *ds_onnx_emit_control(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op_name,
                             const char *suffix, const DsEntry *inputs, guint n_inputs,
                             DsGraph **subgraphs, guint n_subgraphs, const char *const *keys,
                             const char *const *values, guint n_attrs, GError **error)
{
  const char *base = ds_onnx_node_base_name(b, node);
  if (suffix != NULL)
    base = ds_onnx_printf(b, "%s/%s", base, suffix);
  return emit_named(b, base, op_name, inputs, n_inputs, subgraphs, n_subgraphs, keys, values,
                    n_attrs, error);
}

/* An engine node named after `base` (made unique), its attributes parsed and inputs counted. */
static DsNode *emit_named(DsOnnxBuilder *b, const char *base, const char *op_name,
                          const DsEntry *inputs, guint n_inputs, DsGraph **subgraphs,
                          guint n_subgraphs, const char *const *keys, const char *const *values,
                          guint n_attrs, GError **error)
{
  const DsOpDef *op = ds_op_lookup(op_name);
  if (op == NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED, "the engine has no op '%s'", op_name);
    return NULL;
  }
  DsNode *n = ds_onnx_builder_append_node(b, base, op_name);
  n->op = op;
  for (guint i = 0; i < n_attrs; i++)
    ds_node_add_attr(n, keys[i], values[i]);
  n->inputs = g_new0(DsEntry, MAX(n_inputs, 1));
  if (n_inputs > 0)
    memcpy(n->inputs, inputs, sizeof(DsEntry) * n_inputs);
  n->n_inputs = n_inputs;
  /* Control-flow ops check their subgraphs while parsing: attach them first. */
  if (n_subgraphs > 0) {
    n->subgraphs = g_new(DsGraph *, n_subgraphs);
    memcpy(n->subgraphs, subgraphs, sizeof(DsGraph *) * n_subgraphs);
    n->n_subgraphs = n_subgraphs;
  }
  n->param = op->param_size > 0 ? g_malloc0(op->param_size) : NULL;
  if (op->parse != NULL && !op->parse(n, n->param, error))
    return NULL;
  int want = op->num_inputs(n->param);
  if (want >= 0 && (guint)want != n_inputs) {
    g_set_error(error, DS_ERROR, DS_ERROR_INVALID, "%s takes %d inputs, given %u", op_name, want,
                n_inputs);
    return NULL;
  }
  n->n_outputs = (guint)op->num_outputs(n->param);
  return n;
}

#define MAX_VA_ATTRS 32

/* Collects key, value strings ended by NULL; returns how many pairs. */
static guint collect_attrs(va_list ap, const char **keys, const char **values)
{
  guint n = 0;
  for (const char *k; (k = va_arg(ap, const char *)) != NULL;) {
    const char *v = va_arg(ap, const char *);
    g_assert(n < MAX_VA_ATTRS);
    keys[n] = k;
    values[n++] = v;
  }
  return n;
}

DsNode *ds_onnx_emit(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, const char *suffix,
                     const DsEntry *inputs, guint n_inputs, GError **error, ...)
{
  const char *keys[MAX_VA_ATTRS], *values[MAX_VA_ATTRS];
  va_list ap;
  va_start(ap, error);
  guint n = collect_attrs(ap, keys, values);
  va_end(ap);
  return ds_onnx_emitv(b, node, op, suffix, inputs, n_inputs, keys, values, n, error);
}

gboolean ds_onnx_emit1(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op, const char *suffix,
                       const DsEntry *inputs, guint n_inputs, DsEntry *out, GError **error, ...)
{
  const char *keys[MAX_VA_ATTRS], *values[MAX_VA_ATTRS];
  va_list ap;
  va_start(ap, error);
  guint n = collect_attrs(ap, keys, values);
  va_end(ap);
  DsNode *made = ds_onnx_emitv(b, node, op, suffix, inputs, n_inputs, keys, values, n, error);
  if (made == NULL)
    return FALSE;
  *out = ds_onnx_entry(made, 0);
  return TRUE;
}

gboolean ds_onnx_set_output(DsOnnxBuilder *b, const DsOnnxNode *node, guint i, DsEntry entry,
                            GError **error)
{
  (void)error;
  if (i < node->n_outputs && node->outputs[i][0] != '\0')
    ds_onnx_bind_value(b, node->outputs[i], entry);
  return TRUE;
}

gboolean ds_onnx_bind_outputs(DsOnnxBuilder *b, const DsOnnxNode *node, const DsNode *engine_node,
                              GError **error)
{
  for (guint i = 0; i < node->n_outputs && i < engine_node->n_outputs; i++)
    if (!ds_onnx_set_output(b, node, i, ds_onnx_entry(engine_node, i), error))
      return FALSE;
  return TRUE;
}

gboolean ds_onnx_set_output_const(DsOnnxBuilder *b, const DsOnnxNode *node, guint i,
                                  DsNDArray *array, GError **error)
{
  if (i >= node->n_outputs || node->outputs[i][0] == '\0') {
    ds_ndarray_free(array);
    return TRUE;
  }
  if (ds_dtype_is_storage_only(array->view.dtype)) {
    ds_onnx_mark_storage(b->ctx, node->outputs[i], array->view.dtype);
    if ((array = ds_onnx_widen_storage(array, error)) == NULL)
      return FALSE;
  }
  DsEntry entry = ds_onnx_add_constant(b, node->outputs[i], array);
  g_hash_table_replace(b->ctx->consts, g_strdup(node->outputs[i]), array);
  return ds_onnx_set_output(b, node, i, entry, error);
}

/* ---- Storage types ----------------------------------------------------------------------------
 *
 * A float16 value lives in the engine as the float32 value of the same number, an int16 one as
 * the int32 (ds_onnx_compute_dtype): a Cast to a storage type converts to it and back (float16
 * rounds, int16 wraps), a graph input of one is widened where it enters and a graph output
 * narrowed where it leaves. */

gboolean ds_onnx_emit_cast(DsOnnxBuilder *b, const char *base, const char *suffix, DsEntry in,
                           DsDType dtype, DsEntry *out, GError **error)
{
  const char *key = "dtype", *value = ds_dtype_name(dtype);
  DsNode *n = emit_named(b, ds_onnx_printf(b, "%s/%s", base, suffix), "Cast", &in, 1, NULL, 0, &key,
                         &value, 1, error);
  if (n == NULL)
    return FALSE;
  *out = ds_onnx_entry(n, 0);
  return TRUE;
}

gboolean ds_onnx_set_output_storage(DsOnnxBuilder *b, const DsOnnxNode *node, guint i,
                                    DsEntry entry, DsDType storage, GError **error)
{
  if (i >= node->n_outputs || node->outputs[i][0] == '\0')
    return TRUE;
  const char *base = ds_onnx_node_base_name(b, node);
  DsDType compute = ds_onnx_compute_dtype(storage);
  DsEntry narrow, wide;
  if (!ds_onnx_emit_cast(b, base, ds_onnx_printf(b, "to_%s", ds_dtype_name(storage)), entry,
                         storage, &narrow, error) ||
      !ds_onnx_emit_cast(b, base, ds_onnx_printf(b, "as_%s", ds_dtype_name(compute)), narrow,
                         compute, &wide, error))
    return FALSE;
  ds_onnx_mark_storage(b->ctx, node->outputs[i], storage);
  return ds_onnx_set_output(b, node, i, wide, error);
}

/* ---- Builders -------------------------------------------------------------------------------- */

static void capture_clear(gpointer data)
{
  g_free(((DsOnnxCapture *)data)->name);
}

DsOnnxBuilder *ds_onnx_builder_new(DsOnnxContext *ctx, DsOnnxBuilder *parent, const char *prefix)
{
  DsOnnxBuilder *b = g_new0(DsOnnxBuilder, 1);
  b->ctx = ctx;
  b->parent = parent;
  b->graph = ds_graph_new();
  b->prefix = g_strdup(prefix);
  b->values = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  b->names = g_hash_table_new(g_str_hash, g_str_equal);
  b->captures = g_array_new(FALSE, FALSE, sizeof(DsOnnxCapture));
  g_array_set_clear_func(b->captures, capture_clear);
  b->capture_vars = g_array_new(FALSE, FALSE, sizeof(guint));
  return b;
}

DsOnnxBuilder *ds_onnx_builder_new_child(DsOnnxBuilder *parent, const char *prefix)
{
  return ds_onnx_builder_new(parent->ctx, parent, prefix);
}

void ds_onnx_builder_free(DsOnnxBuilder *b)
{
  if (b == NULL)
    return;
  ds_graph_unref(b->graph);
  g_free(b->prefix);
  g_hash_table_unref(b->values);
  g_hash_table_unref(b->names);
  g_array_unref(b->captures);
  g_array_unref(b->capture_vars);
  g_free(b);
}

DsGraph *ds_onnx_builder_graph(DsOnnxBuilder *b)
{
  return b->graph;
}

DsEntry ds_onnx_builder_add_input(DsOnnxBuilder *b, const char *name, DsDType dtype, int rank)
{
  DsNode *var = ds_onnx_builder_append_node(b, name[0] != '\0' ? name : "input", "null");
  set_dtype_attr(var, dtype);
  ds_onnx_add_hint(b->ctx, name, dtype, rank);
  DsEntry entry = ds_onnx_entry(var, 0);
  if (name[0] != '\0')
    ds_onnx_bind_value(b, name, entry);
  return entry;
}

const GArray *ds_onnx_builder_get_captures(DsOnnxBuilder *b)
{
  return b->captures;
}

int ds_onnx_builder_input_index(DsOnnxBuilder *b, DsEntry entry)
{
  int k = 0;
  for (guint i = 0; i < b->graph->n_nodes; i++) {
    if (!ds_node_is_variable(b->graph->nodes[i]))
      continue;
    if (i == entry.node_id)
      return k;
    k++;
  }
  return -1;
}

gboolean ds_onnx_builder_finish_graph(DsOnnxBuilder *b, const DsEntry *heads, guint n_heads,
                                      GError **error)
{
  DsGraph *g = b->graph;
  g->arg_nodes = g_new(guint, MAX(g->n_nodes, 1));
  for (guint i = 0; i < g->n_nodes; i++)
    if (ds_node_is_variable(g->nodes[i]))
      g->arg_nodes[g->n_arg_nodes++] = i;
  g->heads = g_new(DsEntry, MAX(n_heads, 1));
  if (n_heads > 0)
    memcpy(g->heads, heads, sizeof(DsEntry) * n_heads);
  g->n_heads = n_heads;
  g->mxnet_version = 10500;
  ds_graph_update_row_ptr(g);
  return ds_graph_validate(g, b->ctx->model->display_name, error);
}

DsGraph *ds_onnx_builder_finish(DsOnnxBuilder *b, const DsEntry *heads, guint n_heads,
                                GError **error)
{
  if (!ds_onnx_builder_finish_graph(b, heads, n_heads, error))
    return NULL;
  return ds_graph_ref(b->graph);
}

/* Translates a body's nodes: through the context's runner (the import's walk). */
gboolean ds_onnx_builder_translate(DsOnnxBuilder *b, const DsOnnxGraph *graph, GError **error)
{
  return b->ctx->run(b, graph, error);
}
