/* ds-onnx-import.c: the importer's walk: graphs, the dispatch to translators, opaque nodes.
 *
 * ds_onnx_import() maps a model: the top graph's inputs and initializers, then every graph's
 * nodes, producers before readers (this walk, which the translator API also runs for Loop, If and Scan bodies
 * through the context's runner), each folded (ds-onnx-fold.c) or handed to its family's
 * translator (ds-onnx-ops-*.c), which builds through the API (ds-onnx-translate.c). A node no
 * translator can map is rolled back and kept as an opaque node, listed in the import's
 * `unsupported` line.
 */
#include "ds-onnx-builder.h"

#include <string.h>

/* How many offending nodes the one-line report names before "and N more". */
#define REPORT_MAX_NODES 12

/* What only the walk keeps: the translator tables and the report of what cannot run. */
typedef struct {
  DsOnnxContext ctx;                /* ctx.run_data points back here */
  gint64 training_opset;            /* ai.onnx.preview.training's; 0 when not imported */
  GHashTable *translators;          /* op_type -> const DsOnnxOpTranslator* */
  GHashTable *training_translators; /* the same for ai.onnx.preview.training */
  GArray *input_shapes;             /* DsOnnxInputShape */
  GString *unsupported;
  guint n_unsupported;
  guint n_unknown_dims; /* fresh symbols made for unknown input dims */
} Importer;

/* ---- Translating nodes ----------------------------------------------------------------------- */

/* Where each builder from `b` to the top stood before a node: what a rollback returns to. */
typedef struct {
  guint n_nodes[64];
  guint n_captures[64];
  guint n_weights;
  guint depth;
} Mark;

static void take_mark(DsOnnxBuilder *b, Mark *m)
{
  m->depth = 0;
  for (DsOnnxBuilder *p = b; p != NULL && m->depth < G_N_ELEMENTS(m->n_nodes); p = p->parent) {
    m->n_nodes[m->depth] = p->graph->n_nodes;
    m->n_captures[m->depth++] = p->captures->len;
  }
  m->n_weights = b->ctx->weights->len;
}

static gboolean entry_removed(DsOnnxBuilder *p, guint mark, gpointer value)
{
  (void)p;
  return ((const DsEntry *)value)->node_id >= mark;
}

/* Undoes what a translator emitted before it gave up: nodes, bindings, captures, weights. */
static void rollback(DsOnnxBuilder *b, const Mark *m)
{
  guint level = 0;
  for (DsOnnxBuilder *p = b; p != NULL && level < m->depth; p = p->parent, level++) {
    guint mark = m->n_nodes[level];
    GHashTableIter it;
    gpointer key, value;
    g_hash_table_iter_init(&it, p->values);
    while (g_hash_table_iter_next(&it, &key, &value))
      if (entry_removed(p, mark, value))
        g_hash_table_iter_remove(&it);
    for (guint i = mark; i < p->graph->n_nodes; i++) {
      g_hash_table_remove(p->names, p->graph->nodes[i]->name);
      if (p->graph->by_name != NULL)
        g_hash_table_remove(p->graph->by_name, p->graph->nodes[i]->name);
      ds_node_free(p->graph->nodes[i]);
    }
    p->graph->n_nodes = MIN(p->graph->n_nodes, mark);
    g_array_set_size(p->captures, m->n_captures[level]);
    g_array_set_size(p->capture_vars, m->n_captures[level]);
  }
  DsOnnxContext *ctx = b->ctx;
  while (ctx->weights->len > m->n_weights) {
    guint last = ctx->weights->len - 1;
    g_hash_table_remove(ctx->consts, ctx->weight_names->pdata[last]);
    g_ptr_array_remove_index(ctx->weight_names, last);
    g_ptr_array_remove_index(ctx->weights, last);
  }
  /* Constants recorded under ONNX names pointed at the arrays just freed. */
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, ctx->consts);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    gboolean alive = FALSE;
    for (guint i = 0; i < ctx->weights->len && !alive; i++)
      alive = ctx->weights->pdata[i] == value;
    if (!alive)
      g_hash_table_iter_remove(&it);
  }
}

/* An attribute as display text for an opaque node. */
static char *attribute_text(const DsOnnxAttribute *a)
{
  g_autoptr(GString) s = g_string_new(NULL);
  switch (a->type) {
  case DS_ONNX_ATTR_FLOAT:
    g_string_printf(s, "%g", a->f);
    break;
  case DS_ONNX_ATTR_INT:
    g_string_printf(s, "%" G_GINT64_FORMAT, a->i);
    break;
  case DS_ONNX_ATTR_STRING:
    g_string_append_len(s, a->s.data, (gssize)strnlen(a->s.data, a->s.len));
    break;
  case DS_ONNX_ATTR_INTS:
    g_string_append_c(s, '(');
    for (gsize i = 0; i < a->n_ints; i++)
      g_string_append_printf(s, "%s%" G_GINT64_FORMAT, i ? ", " : "", a->ints[i]);
    g_string_append_c(s, ')');
    break;
  case DS_ONNX_ATTR_FLOATS:
    g_string_append_c(s, '(');
    for (gsize i = 0; i < a->n_floats; i++)
      g_string_append_printf(s, "%s%g", i ? ", " : "", a->floats[i]);
    g_string_append_c(s, ')');
    break;
  case DS_ONNX_ATTR_TENSOR:
    g_string_printf(s, "tensor %s", ds_onnx_elem_type_name(a->t->data_type));
    break;
  case DS_ONNX_ATTR_GRAPH:
    g_string_printf(s, "graph '%s' (%" G_GSIZE_FORMAT " nodes)", a->g->name, a->g->n_nodes);
    break;
  default:
    g_string_printf(s, "(%d values)", (int)(a->n_strings + a->n_tensors + a->n_graphs));
    break;
  }
  return g_string_free(g_steal_pointer(&s), FALSE);
}

/* The node as the engine cannot run it: an op-less node with the same inputs and outputs, so
 * the model still prints and draws. */
static gboolean add_opaque(DsOnnxBuilder *b, const DsOnnxNode *node, const char *reason,
                           GError **error)
{
  Importer *imp = b->ctx->run_data;
  if (imp->n_unsupported < REPORT_MAX_NODES)
    g_string_append_printf(imp->unsupported, "%s'%s' (%s: %s)", imp->n_unsupported ? ", " : "",
                           ds_onnx_node_base_name(b, node), node->op_type, reason);
  imp->n_unsupported++;
  GArray *inputs = g_array_new(FALSE, FALSE, sizeof(DsEntry));
  for (guint i = 0; i < node->n_inputs; i++) {
    DsEntry e;
    if (!ds_onnx_has_input(node, i))
      continue;
    if (!ds_onnx_input(b, node, i, &e, error)) {
      g_array_unref(inputs);
      return FALSE;
    }
    g_array_append_val(inputs, e);
  }
  DsNode *n = ds_onnx_builder_append_node(b, ds_onnx_node_base_name(b, node), node->op_type);
  for (gsize i = 0; i < node->n_attributes; i++) {
    g_autofree char *text = attribute_text(&node->attributes[i]);
    ds_node_add_attr(n, node->attributes[i].name, text);
  }
  n->n_inputs = inputs->len;
  n->inputs = (DsEntry *)g_array_free(inputs, FALSE);
  n->n_outputs = MAX((guint)node->n_outputs, 1);
  for (guint i = 0; i < node->n_outputs; i++)
    ds_onnx_set_output(b, node, i, ds_onnx_entry(n, i), error);
  return TRUE;
}

static gboolean is_default_domain(const char *domain)
{
  return domain[0] == '\0' || strcmp(domain, "ai.onnx") == 0;
}

#define TRAINING_DOMAIN "ai.onnx.preview.training"

/* Why the node cannot be translated, or NULL: a translator exists for its op and opset. */
static const char *find_translator(DsOnnxBuilder *b, const DsOnnxNode *node,
                                   const DsOnnxOpTranslator **out)
{
  *out = NULL;
  Importer *imp = b->ctx->run_data;
  const gboolean training = strcmp(node->domain, TRAINING_DOMAIN) == 0;
  if (!training && !is_default_domain(node->domain))
    return ds_onnx_printf(b, "domain '%s' is not supported", node->domain);
  const gint64 opset = training ? imp->training_opset : imp->ctx.opset;
  if (opset == 0)
    return ds_onnx_printf(b, "the model imports no version of %s",
                          training ? TRAINING_DOMAIN : "the standard operator set (ai.onnx)");
  const DsOnnxOpTranslator *t =
      g_hash_table_lookup(training ? imp->training_translators : imp->translators, node->op_type);
  if (t == NULL)
    return "no mapping for this op";
  if (opset < t->min_opset)
    return ds_onnx_printf(b, "its opset %" G_GINT64_FORMAT " form is not supported (from %d)",
                          opset, t->min_opset);
  /* A form newer than opset 17 must be one the translator was written for. */
  int version = training ? 0 : ds_onnx_op_version_after_17(node->op_type, opset);
  if (version > t->max_version) {
    if (t->max_version == 0)
      return ds_onnx_printf(b, "its form %s-%d (opset %" G_GINT64_FORMAT ") is not supported, "
                            "only those through opset 17", node->op_type, version, opset);
    return ds_onnx_printf(b, "its form %s-%d (opset %" G_GINT64_FORMAT ") is not supported, "
                          "only those through %s-%d", node->op_type, version, opset,
                          node->op_type, t->max_version);
  }
  *out = t;
  return NULL;
}

static gboolean translate_node(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  /* Shape arithmetic on values known now (static shapes, constants) is folded here, so that
   * what it feeds (a Reshape's shape, a ConstantOfShape) sees a constant. */
  if (is_default_domain(node->domain)) {
    DsNDArray *folded = NULL;
    if (ds_onnx_fold(b, node, &folded))
      return ds_onnx_set_output_const(b, node, 0, folded, error);
  }
  const DsOnnxOpTranslator *t;
  const char *why = find_translator(b, node, &t);
  if (why != NULL)
    return add_opaque(b, node, why, error);
  Mark mark;
  take_mark(b, &mark);
  GError *local = NULL;
  if (t->translate(b, node, &local)) {
    for (guint i = 0; i < node->n_outputs; i++)
      if (node->outputs[i][0] != '\0' && !g_hash_table_contains(b->values, node->outputs[i]))
        return ds_onnx_invalid(error, "node '%s' (%s): output %u ('%s') is not produced",
                               ds_onnx_node_base_name(b, node), node->op_type, i, node->outputs[i]);
    return TRUE;
  }
  if (local != NULL && local->domain == DS_ERROR && local->code == DS_ERROR_UNSUPPORTED) {
    rollback(b, &mark);
    gboolean ok = add_opaque(b, node, local->message, error);
    g_error_free(local);
    return ok;
  }
  g_propagate_prefixed_error(error, local, "node '%s' (%s): ", ds_onnx_node_base_name(b, node),
                             node->op_type);
  return FALSE;
}

static void add_value_hints(DsOnnxContext *ctx, const DsOnnxValueInfo *values, gsize n)
{
  for (gsize i = 0; i < n; i++) {
    const DsOnnxValueInfo *v = &values[i];
    if (v->kind != DS_ONNX_TYPE_TENSOR)
      continue;
    DsDType dtype = ds_onnx_dtype(v->elem_type);
    ds_onnx_mark_storage(ctx, v->name, dtype);
    DsOnnxValueHint *h = ds_onnx_add_hint(ctx, v->name, dtype, v->has_shape ? (int)v->n_dims : -1);
    for (gsize d = 0; h != NULL && d < v->n_dims && d < DS_MAX_NDIM; d++)
      if (v->dims[d].kind == DS_ONNX_DIM_VALUE)
        h->dims[d] = v->dims[d].value;
  }
}

/* Initializers of a graph (the top one or a body) become weights of the top graph. */
static gboolean add_initializers(DsOnnxBuilder *b, const DsOnnxGraph *g, GError **error)
{
  for (gsize i = 0; i < g->n_initializers; i++) {
    const DsOnnxTensor *t = &g->initializers[i];
    g_autofree char *what =
        g_strdup_printf("%s: initializer '%s'", b->ctx->model->display_name, t->name);
    DsNDArray *array = ds_onnx_tensor_to_ndarray(t, b->ctx->base_dir, what, error);
    if (array != NULL && ds_dtype_is_storage_only(array->view.dtype)) {
      ds_onnx_mark_storage(b->ctx, t->name, array->view.dtype);
      array = ds_onnx_widen_storage(array, error);
    }
    if (array == NULL)
      return FALSE;
    DsOnnxBuilder *top = ds_onnx_builder_top(b);
    DsEntry e = ds_onnx_add_weight(top, t->name, array);
    /* The weight is named after the initializer unless that name was taken. */
    g_hash_table_replace(b->ctx->consts, g_strdup(t->name), array);
    ds_onnx_bind_value(top, t->name, e);
    if (b != top) {
      DsEntry inner;
      if (!ds_onnx_lookup(b, t->name, &inner, error))
        return FALSE;
    }
  }
  return TRUE;
}

/* The walk over one graph (the top one or a body): its type information, its initializers (a
 * body's) and its nodes, producers first (ds_onnx_graph_order). Installed as the context's runner for the bodies. */
static gboolean translate_graph(DsOnnxBuilder *b, const DsOnnxGraph *graph, GError **error)
{
  add_value_hints(b->ctx, graph->inputs, graph->n_inputs);
  add_value_hints(b->ctx, graph->outputs, graph->n_outputs);
  add_value_hints(b->ctx, graph->value_info, graph->n_value_info);
  if (b->parent != NULL && !add_initializers(b, graph, error))
    return FALSE;
  g_autofree gsize *order = g_new(gsize, MAX(graph->n_nodes, 1));
  if (!ds_onnx_graph_order(graph, order, error))
    return FALSE;
  for (gsize i = 0; i < graph->n_nodes; i++)
    if (!translate_node(b, &graph->nodes[order[i]], error))
      return FALSE;
  return TRUE;
}

/* ---- The top graph --------------------------------------------------------------------------- */

/* A dim_param as a symbol name: an identifier the expression parser reads back. */
static char *symbol_name(const char *param)
{
  g_autoptr(GString) s = g_string_new(NULL);
  if (!g_ascii_isalpha(param[0]) && param[0] != '_')
    g_string_append_c(s, '_');
  for (const char *p = param; *p; p++)
    g_string_append_c(s, g_ascii_isalnum(*p) || *p == '_' ? *p : '_');
  return g_string_free(g_steal_pointer(&s), FALSE);
}

static gboolean add_graph_input(DsOnnxBuilder *b, const DsOnnxValueInfo *v, GError **error)
{
  Importer *imp = b->ctx->run_data;
  if (!ds_onnx_value_require_tensor(imp->ctx.model, v, "input", error))
    return FALSE;
  DsDType dtype = ds_onnx_dtype(v->elem_type);
  if (dtype == DS_DTYPE_UNKNOWN) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "%s: input '%s' has element type %s, which the engine does not run",
                imp->ctx.model->display_name, v->name, ds_onnx_elem_type_name(v->elem_type));
    return FALSE;
  }
  if (v->has_shape && v->n_dims > DS_MAX_NDIM) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "%s: input '%s' has %" G_GSIZE_FORMAT " dims, more than the %d supported",
                imp->ctx.model->display_name, v->name, v->n_dims, DS_MAX_NDIM);
    return FALSE;
  }
  DsEntry e = ds_onnx_builder_add_input(b, v->name, dtype, v->has_shape ? (int)v->n_dims : -1);
  DsNode *var = b->graph->nodes[e.node_id];
  /* A storage-type input is fed as such and widened where it enters ("x/as_float32"). */
  if (ds_dtype_is_storage_only(dtype)) {
    DsDType compute = ds_onnx_compute_dtype(dtype);
    DsEntry wide;
    if (!ds_onnx_emit_cast(b, var->name, ds_onnx_printf(b, "as_%s", ds_dtype_name(compute)), e,
                           compute, &wide, error))
      return FALSE;
    ds_onnx_mark_storage(b->ctx, v->name, dtype);
    ds_onnx_bind_value(b, v->name, wide);
  }
  if (!v->has_shape)
    return TRUE;
  gint64 hint[DS_MAX_NDIM];
  g_autoptr(GString) declared = g_string_new("(");
  gboolean symbolic = FALSE;
  for (gsize d = 0; d < v->n_dims; d++) {
    const DsOnnxDim *dim = &v->dims[d];
    if (d > 0)
      g_string_append(declared, ", ");
    hint[d] = dim->kind == DS_ONNX_DIM_VALUE ? dim->value : 0;
    if (dim->kind == DS_ONNX_DIM_VALUE) {
      g_string_append_printf(declared, "%" G_GINT64_FORMAT, dim->value);
    } else if (dim->kind == DS_ONNX_DIM_PARAM) {
      g_autofree char *sym = symbol_name(dim->param);
      g_string_append(declared, sym);
      symbolic = TRUE;
    } else {
      g_string_append_printf(declared, "unk__%u", imp->n_unknown_dims++);
      symbolic = TRUE;
    }
  }
  g_string_append_c(declared, ')');
  ds_node_add_attr(var, "__shape__", ds_onnx_fmt_ints(b, hint, (int)v->n_dims));
  /* A declaration keeps the symbols; a scalar needs one too, since an empty `__shape__` means
   * "rank unknown" to MXNet. */
  if (symbolic || v->n_dims == 0) {
    DsOnnxInputShape s = {g_strdup(var->name), g_string_free(g_steal_pointer(&declared), FALSE)};
    g_array_append_val(imp->input_shapes, s);
  }
  return TRUE;
}

/* Drops weights nothing reads: the values a folded computation or a translator's rewrite (a
 * transposed Gemm weight) replaced, so --info and the canvas show what the model uses. The
 * graph's nodes are renumbered and `heads` remapped. */
static void prune_unread_weights(DsOnnxBuilder *b, DsEntry *heads, guint n_heads)
{
  DsOnnxContext *ctx = b->ctx;
  DsGraph *g = b->graph;
  g_autofree gboolean *read = g_new0(gboolean, MAX(g->n_nodes, 1));
  for (guint i = 0; i < g->n_nodes; i++)
    for (guint k = 0; k < g->nodes[i]->n_inputs; k++)
      read[g->nodes[i]->inputs[k].node_id] = TRUE;
  for (guint h = 0; h < n_heads; h++)
    read[heads[h].node_id] = TRUE;
  g_autofree guint *new_id = g_new(guint, MAX(g->n_nodes, 1));
  guint kept = 0;
  for (guint i = 0; i < g->n_nodes; i++) {
    DsNode *node = g->nodes[i];
    guint w;
    gboolean drop =
        !read[i] && ds_node_is_variable(node) &&
        g_ptr_array_find_with_equal_func(ctx->weight_names, node->name, g_str_equal, &w);
    if (drop) {
      g_hash_table_remove(ctx->consts, node->name);
      g_ptr_array_remove_index(ctx->weight_names, w);
      g_ptr_array_remove_index(ctx->weights, w);
      if (g->by_name != NULL)
        g_hash_table_remove(g->by_name, node->name);
      ds_node_free(node);
      continue;
    }
    new_id[i] = kept;
    node->id = kept;
    g->nodes[kept++] = node;
  }
  g->n_nodes = kept;
  for (guint i = 0; i < g->n_nodes; i++)
    for (guint k = 0; k < g->nodes[i]->n_inputs; k++)
      g->nodes[i]->inputs[k].node_id = new_id[g->nodes[i]->inputs[k].node_id];
  for (guint h = 0; h < n_heads; h++)
    heads[h].node_id = new_id[heads[h].node_id];
}

static gboolean is_initializer(const DsOnnxGraph *g, const char *name)
{
  for (gsize i = 0; i < g->n_initializers; i++)
    if (strcmp(g->initializers[i].name, name) == 0)
      return TRUE;
  return FALSE;
}

static gboolean import_top(DsOnnxBuilder *b, const DsOnnxGraph *g, GError **error)
{
  const DsOnnxModel *model = b->ctx->model;
  for (gsize i = 0; i < g->n_inputs; i++) {
    /* Older writers list initializers among the inputs too: they are weights. */
    if (is_initializer(g, g->inputs[i].name))
      continue;
    if (!add_graph_input(b, &g->inputs[i], error))
      return FALSE;
  }
  if (!add_initializers(b, g, error) || !translate_graph(b, g, error))
    return FALSE;
  for (gsize i = 0; i < g->n_outputs; i++)
    if (!ds_onnx_value_require_tensor(model, &g->outputs[i], "output", error))
      return FALSE;
  g_autofree DsEntry *heads = g_new(DsEntry, MAX(g->n_outputs, 1));
  b->graph->head_names = g_new0(char *, g->n_outputs + 1);
  for (gsize i = 0; i < g->n_outputs; i++) {
    if (!ds_onnx_lookup(b, g->outputs[i].name, &heads[i], error)) {
      g_prefix_error(error, "%s: graph output %" G_GSIZE_FORMAT ": ", model->display_name, i);
      return FALSE;
    }
    b->graph->head_names[i] = g_strdup(g->outputs[i].name);
    /* An output declared in a storage type is narrowed where it leaves ("y/to_float16"): a
     * uint16 output wraps as ONNX Runtime's would. */
    DsDType declared = ds_onnx_dtype(g->outputs[i].elem_type);
    if (ds_dtype_is_storage_only(declared) &&
        !ds_onnx_emit_cast(b, g->outputs[i].name,
                           ds_onnx_printf(b, "to_%s", ds_dtype_name(declared)), heads[i],
                           declared, &heads[i], error))
      return FALSE;
  }
  prune_unread_weights(b, heads, (guint)g->n_outputs);
  return ds_onnx_builder_finish_graph(b, heads, (guint)g->n_outputs, error);
}

/* ---- Entry point ----------------------------------------------------------------------------- */

static gboolean translate_constant(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error);

static const DsOnnxOpTranslator core_ops[] = {
    {"Constant", 1, translate_constant, 21},
    {NULL, 0, NULL},
};

/* Constant: its value becomes a weight, known to the translators that read it. */
static gboolean translate_constant(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  const DsOnnxAttribute *a = ds_onnx_node_find_attribute(node, "value");
  g_autofree char *what = g_strdup_printf("Constant '%s'", ds_onnx_node_base_name(b, node));
  DsNDArray *array = NULL;
  if (a != NULL && a->type == DS_ONNX_ATTR_TENSOR) {
    array = ds_onnx_tensor_to_ndarray(a->t, b->ctx->base_dir, what, error);
  } else {
    int64_t n = 0;
    const DsOnnxAttribute *f = ds_onnx_node_find_attribute(node, "value_float");
    const DsOnnxAttribute *fs = ds_onnx_node_find_attribute(node, "value_floats");
    const DsOnnxAttribute *i = ds_onnx_node_find_attribute(node, "value_int");
    const DsOnnxAttribute *is = ds_onnx_node_find_attribute(node, "value_ints");
    if (f != NULL || i != NULL) {
      array = ds_ndarray_new(f != NULL ? DS_DTYPE_FLOAT32 : DS_DTYPE_INT64, 0, &n, what, error);
      if (f != NULL)
        *(float *)array->view.data = f->f;
      else
        *(gint64 *)array->view.data = i->i;
    } else if (fs != NULL || is != NULL) {
      n = fs != NULL ? (int64_t)fs->n_floats : (int64_t)is->n_ints;
      array = ds_ndarray_new(fs != NULL ? DS_DTYPE_FLOAT32 : DS_DTYPE_INT64, 1, &n, what, error);
      if (array != NULL && n > 0)
        memcpy(array->view.data, fs != NULL ? (const void *)fs->floats : (const void *)is->ints,
               array->nbytes);
    } else {
      return ds_onnx_unsupported(error, "only tensor, float(s) and int(s) values are supported");
    }
  }
  if (array == NULL)
    return FALSE;
  return ds_onnx_set_output_const(b, node, 0, array, error);
}

static void register_family(GHashTable *table, const DsOnnxOpTranslator *family)
{
  for (const DsOnnxOpTranslator *t = family; t->op_type != NULL; t++)
    g_hash_table_insert(table, (gpointer)t->op_type, (gpointer)t);
}

static gint64 default_opset(const DsOnnxModel *model)
{
  for (gsize i = 0; i < model->n_opsets; i++)
    if (is_default_domain(model->opsets[i].domain))
      return model->opsets[i].version;
  return 0;
}

static gint64 training_opset(const DsOnnxModel *model)
{
  for (gsize i = 0; i < model->n_opsets; i++)
    if (strcmp(model->opsets[i].domain, TRAINING_DOMAIN) == 0)
      return model->opsets[i].version;
  return 0;
}

static void input_shape_clear(gpointer data)
{
  DsOnnxInputShape *s = data;
  g_free(s->name);
  g_free(s->shape);
}

static void importer_clear(Importer *imp)
{
  g_string_chunk_free(imp->ctx.strings);
  g_hash_table_unref(imp->translators);
  g_hash_table_unref(imp->training_translators);
  g_hash_table_unref(imp->ctx.consts);
  g_hash_table_unref(imp->ctx.hints);
  g_hash_table_unref(imp->ctx.storage);
  if (imp->ctx.weights != NULL)
    g_ptr_array_unref(imp->ctx.weights);
  if (imp->ctx.weight_names != NULL)
    g_ptr_array_unref(imp->ctx.weight_names);
  if (imp->input_shapes != NULL)
    g_array_unref(imp->input_shapes);
  if (imp->unsupported != NULL)
    g_string_free(imp->unsupported, TRUE);
}

DsOnnxImport *ds_onnx_import(const DsOnnxModel *model, const char *base_dir, GError **error)
{
  gint64 opset = default_opset(model), training = training_opset(model);
  /* A model of the training domain alone (an optimizer step) needs no standard ops. */
  if (opset == 0 && training == 0) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "%s: the model imports no version of the standard operator set (ai.onnx)",
                model->display_name);
    return NULL;
  }
  /* Below opset 7 a model still loads: each op's translator says whether its form at that
   * opset is one it maps (Relu has not changed since 6, Add's broadcast attribute went in 7). */
  if (opset != 0 && (opset < 1 || opset > DS_ONNX_MAX_OPSET)) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "%s: opset %" G_GINT64_FORMAT " of the standard operator set is not supported "
                "(%d to %d are)",
                model->display_name, opset, DS_ONNX_MIN_OPSET, DS_ONNX_MAX_OPSET);
    return NULL;
  }
  Importer imp = {
      .ctx =
          {
              .model = model,
              .base_dir = base_dir,
              .opset = opset,
              .strings = g_string_chunk_new(1024),
              .consts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
              .hints = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free),
              .storage = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
              .weights = g_ptr_array_new_with_free_func((GDestroyNotify)ds_ndarray_free),
              .weight_names = g_ptr_array_new_with_free_func(g_free),
              .run = translate_graph,
          },
      .training_opset = training,
      .translators = g_hash_table_new(g_str_hash, g_str_equal),
      .training_translators = g_hash_table_new(g_str_hash, g_str_equal),
      .input_shapes = g_array_new(FALSE, FALSE, sizeof(DsOnnxInputShape)),
      .unsupported = g_string_new(NULL),
  };
  imp.ctx.run_data = &imp;
  g_array_set_clear_func(imp.input_shapes, input_shape_clear);
  register_family(imp.translators, core_ops);
  register_family(imp.translators, ds_onnx_math_ops);
  register_family(imp.translators, ds_onnx_nn_ops);
  register_family(imp.translators, ds_onnx_tensor_ops);
  register_family(imp.translators, ds_onnx_control_ops);
  register_family(imp.translators, ds_onnx_quant_ops);
  register_family(imp.translators, ds_onnx_signal_ops);
  register_family(imp.training_translators, ds_onnx_training_ops);

  DsOnnxBuilder *top = ds_onnx_builder_new(&imp.ctx, NULL, "");
  gboolean ok = import_top(top, model->graph, error);
  if (!ok && error != NULL && *error != NULL &&
      !g_str_has_prefix((*error)->message, model->display_name))
    g_prefix_error(error, "%s: ", model->display_name);
  DsOnnxImport *result = NULL;
  if (ok) {
    result = g_new0(DsOnnxImport, 1);
    result->graph = ds_graph_ref(top->graph);
    result->weights = g_steal_pointer(&imp.ctx.weights);
    result->weight_names = g_steal_pointer(&imp.ctx.weight_names);
    result->input_shapes = g_steal_pointer(&imp.input_shapes);
    result->opset = opset;
    g_autofree char *sets =
        opset != 0 && training != 0
            ? g_strdup_printf("opset %" G_GINT64_FORMAT ", %s %" G_GINT64_FORMAT, opset,
                              TRAINING_DOMAIN, training)
        : opset != 0 ? g_strdup_printf("opset %" G_GINT64_FORMAT, opset)
                     : g_strdup_printf("%s %" G_GINT64_FORMAT, TRAINING_DOMAIN, training);
    result->format =
        g_strdup_printf("ONNX IR %" G_GINT64_FORMAT ", %s%s%s%s%s", model->ir_version, sets,
                        model->producer_name[0] ? ", from " : "", model->producer_name,
                        model->producer_version[0] ? " " : "", model->producer_version);
    if (imp.n_unsupported > 0) {
      if (imp.n_unsupported > REPORT_MAX_NODES)
        g_string_append_printf(imp.unsupported, " and %u more",
                               imp.n_unsupported - REPORT_MAX_NODES);
      result->unsupported =
          g_strdup_printf("%s: %u node%s cannot run: %s", model->display_name, imp.n_unsupported,
                          imp.n_unsupported == 1 ? "" : "s", imp.unsupported->str);
    }
  }
  ds_onnx_builder_free(top);
  importer_clear(&imp);
  return result;
}

void ds_onnx_import_free(DsOnnxImport *import)
{
  if (import == NULL)
    return;
  ds_graph_unref(import->graph);
  g_ptr_array_unref(import->weights);
  g_ptr_array_unref(import->weight_names);
  g_array_unref(import->input_shapes);
  g_free(import->unsupported);
  g_free(import->format);
  g_free(import);
}
