/* ds-infer.c: whole-graph inference to a fixpoint. */
#include "ds-infer.h"

#include <string.h>

#include "ds-attr.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-ndarray.h"
#include "ds-op.h"
#include "ds-ops-values.h"

/* A graph converges in two or three passes; the bound only guards against an op rule that
 * keeps changing its mind. */
#define MAX_PASSES 16

guint ds_node_n_op_outputs(const DsNode *node)
{
  if (node->op == NULL)
    return node->n_outputs;
  guint n = (guint)node->op->num_outputs(node->param);
  return MIN(n, node->n_outputs);
}

static gboolean seed_variable(DsGraphShapes *shapes, const DsGraph *graph, const DsNode *node,
                              GError **error)
{
  guint e = graph->node_row_ptr[node->id];
  const char *shape_text = ds_node_get_attr(node, "__shape__");
  if (shape_text != NULL) {
    int64_t dims[DS_MAX_NDIM];
    int n;
    if (!ds_attr_parse_tuple(shape_text, dims, DS_MAX_NDIM, 0, &n)) {
      g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                  "variable '%s': __shape__='%s' is not a shape of at most %d dims", node->name,
                  shape_text, DS_MAX_NDIM);
      return FALSE;
    }
    /* An empty tuple means "unknown rank" in MXNet 1.x's legacy shape semantics. */
    if (n > 0) {
      shapes->shapes[e].ndim = n;
      for (int i = 0; i < n; i++)
        shapes->shapes[e].dims[i] = dims[i] > 0 ? ds_dim(dims[i]) : DS_DIM_UNKNOWN;
    }
  }
  const char *dtype_text = ds_node_get_attr(node, "__dtype__");
  int64_t code;
  if (dtype_text != NULL && ds_attr_parse_int(dtype_text, &code) && code >= 0) {
    if (!ds_dtype_is_valid((int)code)) {
      g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED, "variable '%s': unknown __dtype__ %s",
                  node->name, dtype_text);
      return FALSE;
    }
    shapes->dtypes[e] = (DsDType)code;
  }
  return TRUE;
}

DsGraphShapes *ds_graph_shapes_new(const DsGraph *graph, GError **error)
{
  /* Entries come from the file's node_row_ptr: refuse absurd counts before allocating. */
  guint64 n_entries = ds_graph_n_entries(graph);
  if (n_entries * (sizeof(DsShape) + sizeof(DsDType) + sizeof(DsShapeValue)) >
      ds_memory_get_limit_bytes()) {
    g_set_error(error, DS_ERROR, DS_ERROR_LIMIT,
                "the graph declares %" G_GUINT64_FORMAT " outputs in all, too many to infer",
                n_entries);
    return NULL;
  }
  DsGraphShapes *shapes = g_new0(DsGraphShapes, 1);
  shapes->n_entries = ds_graph_n_entries(graph);
  shapes->shapes = g_new(DsShape, shapes->n_entries);
  shapes->dtypes = g_new(DsDType, shapes->n_entries);
  shapes->values = g_new(DsShapeValue, shapes->n_entries);
  for (guint e = 0; e < shapes->n_entries; e++) {
    shapes->shapes[e] = DS_SHAPE_UNKNOWN;
    shapes->dtypes[e] = DS_DTYPE_UNKNOWN;
    shapes->values[e].n = -1;
  }
  for (guint i = 0; i < graph->n_nodes; i++) {
    if (ds_node_is_variable(graph->nodes[i]) &&
        !seed_variable(shapes, graph, graph->nodes[i], error)) {
      ds_graph_shapes_free(shapes);
      return NULL;
    }
  }
  return shapes;
}

guint ds_graph_shapes_symbolize_unknown(DsGraphShapes *shapes, const DsGraph *graph,
                                        DsExprCtx *exprs)
{
  guint n = 0;
  for (guint i = 0; i < graph->n_nodes; i++) {
    if (!ds_node_is_variable(graph->nodes[i]))
      continue;
    DsShape *s = &shapes->shapes[graph->node_row_ptr[i]];
    for (int d = 0; d < s->ndim; d++) {
      if (!ds_dim_is_known(s->dims[d])) {
        s->dims[d] = ds_dim_from_expr(ds_expr_fresh_symbol(exprs, "s"));
        n++;
      }
    }
  }
  return n;
}

void ds_graph_shapes_resolve(DsGraphShapes *shapes, DsExprCtx *exprs)
{
  for (guint e = 0; e < shapes->n_entries; e++) {
    DsShape *s = &shapes->shapes[e];
    for (int i = 0; i < s->ndim; i++)
      if (s->dims[i].expr != NULL)
        s->dims[i] = ds_dim_from_expr(ds_expr_resolve(exprs, s->dims[i].expr));
    DsShapeValue *v = shapes->values != NULL ? &shapes->values[e] : NULL;
    for (int i = 0; v != NULL && i < v->n; i++) {
      if (v->x[i].e == NULL)
        continue;
      const DsExpr *r = ds_expr_resolve(exprs, v->x[i].e);
      int64_t c;
      v->x[i] = r == NULL ? DS_SHAPE_ELEM_UNKNOWN
                : ds_expr_get_const(r, &c) ? (DsShapeElem){c, NULL}
                                            : (DsShapeElem){0, r};
    }
  }
}

DsGraphShapes *ds_graph_shapes_evaluate(const DsGraphShapes *shapes, const DsGraph *graph,
                                        DsExprCtx *exprs, const int64_t *values,
                                        const gboolean *bound, gboolean partial,
                                        GError **error)
{
  g_autoptr(DsGraphShapes) out = ds_graph_shapes_copy(shapes);
  for (guint n = 0; n < graph->n_nodes; n++) {
    const DsNode *node = graph->nodes[n];
    for (guint k = 0; k < node->n_outputs; k++) {
      DsShape *s = &out->shapes[graph->node_row_ptr[n] + k];
      for (int i = 0; i < s->ndim; i++) {
        if (s->dims[i].expr == NULL)
          continue;
        int64_t v;
        if (!ds_expr_eval(exprs, s->dims[i].expr, values, bound, &v) || v < 0) {
          if (partial)
            continue;
          g_autofree char *text = ds_expr_to_string(s->dims[i].expr);
          g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                      "node '%s' (%s): dim %d = %s has no value for these bindings (bind "
                      "every symbol it uses with --bind or an input file)",
                      node->name, node->op_name, i, text);
          return NULL;
        }
        s->dims[i] = ds_dim(v);
      }
    }
  }
  return g_steal_pointer(&out);
}

DsGraphShapes *ds_graph_shapes_copy(const DsGraphShapes *shapes)
{
  DsGraphShapes *copy = g_new0(DsGraphShapes, 1);
  copy->n_entries = shapes->n_entries;
  copy->shapes = g_memdup2(shapes->shapes, sizeof(DsShape) * shapes->n_entries);
  copy->dtypes = g_memdup2(shapes->dtypes, sizeof(DsDType) * shapes->n_entries);
  if (shapes->values != NULL)
    copy->values = g_memdup2(shapes->values, sizeof(DsShapeValue) * shapes->n_entries);
  return copy;
}

void ds_graph_shapes_free(DsGraphShapes *shapes)
{
  if (shapes == NULL)
    return;
  g_free(shapes->shapes);
  g_free(shapes->dtypes);
  g_free(shapes->values);
  g_free(shapes);
}

void ds_graph_shapes_set_value(DsGraphShapes *shapes, const DsGraph *graph,
                               const DsNode *variable, const int64_t *data, gsize n)
{
  if (shapes->values == NULL || n > DS_SHAPE_VALUE_MAX)
    return;
  DsShapeValue *v = &shapes->values[graph->node_row_ptr[variable->id]];
  v->n = (int)n;
  for (gsize i = 0; i < n; i++)
    v->x[i] = (DsShapeElem){data[i], NULL};
}

gboolean ds_graph_shapes_set_variable(DsGraphShapes *shapes, const DsGraph *graph,
                                      const DsNode *variable, const DsShape *shape,
                                      DsDType dtype, GError **error)
{
  guint e = graph->node_row_ptr[variable->id];
  DsShape *slot = &shapes->shapes[e];
  GError *local = NULL;
  if (shape != NULL && !ds_shape_ctx_assign(NULL, slot, shape, variable->name, &local)) {
    g_autofree char *want = ds_shape_to_string(slot);
    g_autofree char *got = ds_shape_to_string(shape);
    g_clear_error(&local);
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "input '%s': shape %s does not match the graph's %s", variable->name, got, want);
    return FALSE;
  }
  if (dtype != DS_DTYPE_UNKNOWN) {
    if (shapes->dtypes[e] != DS_DTYPE_UNKNOWN && shapes->dtypes[e] != dtype) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                  "input '%s': dtype %s does not match the graph's %s", variable->name,
                  ds_dtype_name(dtype), ds_dtype_name(shapes->dtypes[e]));
      return FALSE;
    }
    shapes->dtypes[e] = dtype;
  }
  return TRUE;
}

static gboolean shape_equal(const DsShape *a, const DsShape *b)
{
  if (a->ndim != b->ndim)
    return FALSE;
  for (int i = 0; i < a->ndim; i++)
    if (a->dims[i].value != b->dims[i].value || a->dims[i].expr != b->dims[i].expr)
      return FALSE;
  return TRUE;
}

/* The default dtype rule: every input and output shares one dtype. */
static gboolean infer_same_dtype(const DsNode *node, DsDType *in, guint n_in, DsDType *out,
                                 guint n_out, GError **error)
{
  DsDType known = DS_DTYPE_UNKNOWN;
  for (guint i = 0; i < n_in + n_out; i++) {
    DsDType d = i < n_in ? in[i] : out[i - n_in];
    if (d == DS_DTYPE_UNKNOWN)
      continue;
    if (known != DS_DTYPE_UNKNOWN && d != known) {
      g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                  "node '%s' (%s): dtype mismatch: %s vs %s", node->name, node->op_name,
                  ds_dtype_name(known), ds_dtype_name(d));
      return FALSE;
    }
    known = d;
  }
  for (guint i = 0; i < n_in; i++)
    in[i] = known;
  for (guint i = 0; i < n_out; i++)
    out[i] = known;
  return TRUE;
}

/* An op rule names its argument ("weight has shape ..."); when that argument is fed by a
 * variable, add the variable's name so the user knows which input file is wrong. */
static void name_variables_in_error(const DsGraph *graph, const DsNode *node, GError **error)
{
  if (error == NULL || *error == NULL)
    return;
  for (guint k = 0; k < node->n_inputs; k++) {
    const DsNode *src = graph->nodes[node->inputs[k].node_id];
    char buf[16];
    const char *arg = ds_op_input_name(node->op, node->n_inputs, k, buf);
    if (ds_node_is_variable(src) && strstr((*error)->message, arg) != NULL) {
      char *message = g_strdup_printf("%s (input '%s')", (*error)->message, src->name);
      g_free((*error)->message);
      (*error)->message = message;
      return;
    }
  }
}

/* One node: gather its entries, run its rules, scatter back. Sets *changed. */
/* Scratch slots for one node, sized once for the graph's widest node (a file may declare
 * thousands of inputs or outputs: never on the stack). */
typedef struct {
  DsShape *in, *out;
  DsDType *in_t, *out_t;
  DsShapeValue *in_v, *out_v;
} Scratch;

static gboolean value_equal(const DsShapeValue *a, const DsShapeValue *b)
{
  if (a->n != b->n)
    return FALSE;
  for (int i = 0; i < a->n; i++)
    if (a->x[i].c != b->x[i].c || a->x[i].e != b->x[i].e)
      return FALSE;
  return TRUE;
}

static gboolean infer_node(const DsGraph *graph, DsGraphShapes *shapes, DsShapeCtx *ctx,
                           const DsNode *node, const Scratch *scratch, gboolean *changed,
                           GError **error)
{
  guint n_in = node->n_inputs, n_out = ds_node_n_op_outputs(node);
  DsShape *in = scratch->in, *out = scratch->out;
  DsDType *in_t = scratch->in_t, *out_t = scratch->out_t;
  guint base = graph->node_row_ptr[node->id];

  for (guint i = 0; i < n_in; i++) {
    guint e = ds_graph_entry_id(graph, node->inputs[i]);
    in[i] = shapes->shapes[e];
    in_t[i] = shapes->dtypes[e];
  }
  for (guint i = 0; i < n_out; i++) {
    out[i] = shapes->shapes[base + i];
    out_t[i] = shapes->dtypes[base + i];
  }
  DsShapeValue *in_v = NULL, *out_v = NULL;
  if (shapes->values != NULL) {
    in_v = scratch->in_v;
    out_v = scratch->out_v;
    for (guint i = 0; i < n_in; i++)
      in_v[i] = shapes->values[ds_graph_entry_id(graph, node->inputs[i])];
    for (guint i = 0; i < n_out; i++)
      out_v[i] = shapes->values[base + i];
  }

  ds_shape_ctx_set_node(ctx, node);
  ds_shape_ctx_set_values(ctx, in_v, n_in, out_v, n_out);
  /* Shapes that input values decide first (a Reshape to a computed target), so the op's own
   * rule finds them and makes no data-dependent symbol; then the values the op computes. */
  gboolean shaped = ds_op_values_shape(ctx, node, in, out, error) &&
                    node->op->infer_shape(ctx, node, node->param, in, out, error) &&
                    ds_op_values_propagate(ctx, node, in, out, error);
  ds_shape_ctx_set_values(ctx, NULL, 0, NULL, 0);
  if (!shaped) {
    name_variables_in_error(graph, node, error);
    return FALSE;
  }
  for (guint i = 0; out_v != NULL && i < n_out; i++) {
    if (!value_equal(&shapes->values[base + i], &out_v[i])) {
      shapes->values[base + i] = out_v[i];
      *changed = TRUE;
    }
  }
  gboolean ok = node->op->infer_type != NULL
                  ? node->op->infer_type(node, node->param, in_t, out_t, error)
                  : infer_same_dtype(node, in_t, n_in, out_t, n_out, error);
  if (!ok)
    return FALSE;

  for (guint i = 0; i < n_in; i++) {
    guint e = ds_graph_entry_id(graph, node->inputs[i]);
    if (!shape_equal(&shapes->shapes[e], &in[i]) || shapes->dtypes[e] != in_t[i]) {
      shapes->shapes[e] = in[i];
      shapes->dtypes[e] = in_t[i];
      *changed = TRUE;
    }
  }
  for (guint i = 0; i < n_out; i++) {
    if (!shape_equal(&shapes->shapes[base + i], &out[i]) || shapes->dtypes[base + i] != out_t[i]) {
      shapes->shapes[base + i] = out[i];
      shapes->dtypes[base + i] = out_t[i];
      *changed = TRUE;
    }
  }
  return TRUE;
}

static gboolean entry_known(const DsGraphShapes *shapes, guint e)
{
  return ds_shape_is_known(&shapes->shapes[e]) && shapes->dtypes[e] != DS_DTYPE_UNKNOWN;
}

static gboolean check_complete(const DsGraph *graph, DsGraphShapes *shapes, GError **error)
{
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (ds_node_is_variable(node))
      continue;
    if (node->op == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                  "node '%s': op '%s' is not supported", node->name, node->op_name);
      return FALSE;
    }
    for (guint k = 0; k < node->n_inputs; k++) {
      guint e = ds_graph_entry_id(graph, node->inputs[k]);
      if (!entry_known(shapes, e)) {
        const DsNode *src = graph->nodes[node->inputs[k].node_id];
        char buf[16];
        g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                    "node '%s' (%s): cannot infer the shape of input '%s' (%s '%s'); "
                    "give it with --input or --input-shape",
                    node->name, node->op_name,
                    ds_op_input_name(node->op, node->n_inputs, k, buf),
                    ds_node_is_variable(src) ? "variable" : "output of", src->name);
        return FALSE;
      }
    }
    guint base = graph->node_row_ptr[i];
    for (guint k = 0; k < ds_node_n_op_outputs(node); k++) {
      if (!entry_known(shapes, base + k)) {
        g_set_error(error, DS_ERROR, DS_ERROR_SHAPE,
                    "node '%s' (%s): cannot infer the shape of output %u", node->name,
                    node->op_name, k);
        return FALSE;
      }
    }
    /* Outputs a file lists beyond the op's own (MKL-DNN workspaces) are empty. */
    for (guint k = ds_node_n_op_outputs(node); k < node->n_outputs; k++) {
      shapes->shapes[base + k] = (DsShape){.ndim = 1, .dims = {ds_dim(0)}};
      shapes->dtypes[base + k] = shapes->dtypes[base];
    }
  }
  return TRUE;
}

static gboolean run_passes(const DsGraph *graph, DsGraphShapes *shapes, DsShapeCtx *ctx,
                           GError **error)
{
  guint width = 1;
  for (guint i = 0; i < graph->n_nodes; i++)
    width = MAX(width, MAX(graph->nodes[i]->n_inputs, graph->nodes[i]->n_outputs));
  g_autofree DsShape *in = g_new(DsShape, width), *out = g_new(DsShape, width);
  g_autofree DsDType *in_t = g_new(DsDType, width), *out_t = g_new(DsDType, width);
  g_autofree DsShapeValue *in_v = g_new(DsShapeValue, width);
  g_autofree DsShapeValue *out_v = g_new(DsShapeValue, width);
  Scratch scratch = {in, out, in_t, out_t, in_v, out_v};
  gboolean changed = TRUE;
  for (int pass = 0; changed && pass < MAX_PASSES; pass++) {
    changed = FALSE;
    /* Alternate directions: forward passes carry data shapes down, backward passes carry
     * consumer constraints (legacy 0 dims, RNN begin states) up to their producers. */
    for (guint k = 0; k < graph->n_nodes; k++) {
      guint i = pass % 2 == 0 ? k : graph->n_nodes - 1 - k;
      const DsNode *node = graph->nodes[i];
      if (ds_node_is_variable(node) || node->op == NULL)
        continue;
      if (!infer_node(graph, shapes, ctx, node, &scratch, &changed, error))
        return FALSE;
    }
  }
  return TRUE;
}

gboolean ds_infer_subgraph_shapes(const DsGraph *graph, DsGraphShapes *shapes, DsShapeCtx *ctx,
                                  GError **error)
{
  g_return_val_if_fail(shapes->n_entries == ds_graph_n_entries(graph), FALSE);
  gboolean ok = run_passes(graph, shapes, ctx, error);
  ds_shape_ctx_set_node(ctx, NULL);
  return ok;
}

gboolean ds_infer_graph(const DsGraph *graph, DsGraphShapes *shapes, DsShapeCtx *ctx,
                        gboolean require_complete, GError **error)
{
  g_return_val_if_fail(shapes->n_entries == ds_graph_n_entries(graph), FALSE);
  gboolean ok = run_passes(graph, shapes, ctx, error);
  if (ok) {
    /* MXNet's default: a variable nothing constrains is float32. */
    gboolean defaulted = FALSE;
    for (guint i = 0; i < graph->n_nodes; i++) {
      guint e = graph->node_row_ptr[i];
      if (ds_node_is_variable(graph->nodes[i]) && shapes->dtypes[e] == DS_DTYPE_UNKNOWN) {
        shapes->dtypes[e] = DS_DTYPE_FLOAT32;
        defaulted = TRUE;
      }
    }
    if (defaulted)
      ok = run_passes(graph, shapes, ctx, error);
  }
  ds_shape_ctx_set_node(ctx, NULL);
  if (!ok)
    return FALSE;
  return require_complete ? check_complete(graph, shapes, error) : TRUE;
}
