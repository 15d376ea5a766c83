/* ds-backward.c: the backward graph (reverse-mode differentiation over the IR). */
#include "ds-backward.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "ds-error.h"
#include "ds-op.h"
#include "ds-recompute.h"

typedef struct {
  const DsGraph *forward;
  const DsGraphShapes *shapes;
  DsGraph *graph;
  GHashTable *names;   /* node names taken */
  gboolean *needs;     /* per forward entry: a gradient flows into it */
  GArray **grads;      /* per forward entry: the gradients flowing into it, or NULL */
  DsLoopPolicy loop_policy;
} Builder;

char *ds_backward_head_grad_name(const char *output_name)
{
  return g_strconcat(output_name, "_head_grad", NULL);
}

static DsDType entry_dtype(const Builder *b, guint e)
{
  return b->shapes != NULL && e < b->shapes->n_entries ? b->shapes->dtypes[e] : DS_DTYPE_UNKNOWN;
}

/* Whether values of `dtype` carry gradients: floats do; an unknown dtype is taken for one. */
static gboolean dtype_has_grad(DsDType dtype)
{
  return dtype == DS_DTYPE_UNKNOWN || ds_dtype_is_float(dtype);
}

/* A fresh node name from `base` ("x_grad", "x_grad_2"). Caller frees. */
static char *fresh_name(Builder *b, const char *base)
{
  char *name = g_strdup(base);
  for (guint k = 2; g_hash_table_contains(b->names, name); k++) {
    g_free(name);
    name = g_strdup_printf("%s_%u", base, k);
  }
  g_hash_table_add(b->names, g_strdup(name));
  return name;
}

static DsEntry add_node(Builder *b, const char *base, const char *op_name, guint n_inputs,
                        const DsEntry *inputs, const char *key, const char *value)
{
  g_autofree char *name = fresh_name(b, base);
  DsNode *node = ds_graph_add_node(b->graph, name, op_name);
  node->inputs = g_new(DsEntry, MAX(n_inputs, 1u));
  node->n_inputs = n_inputs;
  memcpy(node->inputs, inputs, n_inputs * sizeof(DsEntry));
  if (key != NULL)
    ds_node_add_attr(node, key, value);
  return (DsEntry){node->id, 0, 0};
}

/* The forward nodes, copied with their ids and parsed params; heads come later. */
static gboolean copy_forward(Builder *b, GError **error)
{
  b->graph = ds_graph_copy(b->forward, error);
  if (b->graph == NULL)
    return FALSE;
  g_clear_pointer(&b->graph->heads, g_free);
  g_clear_pointer(&b->graph->head_names, g_strfreev);
  b->graph->n_heads = 0;
  for (guint i = 0; i < b->graph->n_nodes; i++)
    g_hash_table_add(b->names, g_strdup(b->graph->nodes[i]->name));
  return TRUE;
}

/* Which forward entries a gradient flows into: the float variables that are not auxiliary
 * states, and every float output of a node that reads one of those, transitively. Marks the
 * auxiliary variables in `aux`. */
static void mark_needs(Builder *b, gboolean *aux)
{
  const DsGraph *f = b->forward;
  for (guint i = 0; i < f->n_nodes; i++) {
    const DsNode *node = f->nodes[i];
    for (guint k = 0; node->op != NULL && k < node->n_inputs; k++)
      if (ds_op_input_is_aux(node->op, k))
        aux[node->inputs[k].node_id] = TRUE;
  }
  for (guint i = 0; i < f->n_nodes; i++) {
    const DsNode *node = f->nodes[i];
    guint e0 = f->node_row_ptr[i];
    if (ds_node_is_variable(node)) {
      b->needs[e0] = !aux[i] && dtype_has_grad(entry_dtype(b, e0));
      continue;
    }
    gboolean any = FALSE;
    for (guint k = 0; k < node->n_inputs; k++)
      any = any || b->needs[ds_graph_entry_id(f, node->inputs[k])];
    for (guint j = 0; j < node->n_outputs; j++)
      b->needs[e0 + j] = any && dtype_has_grad(entry_dtype(b, e0 + j));
  }
}

static void add_grad(Builder *b, guint e, DsEntry grad)
{
  if (b->grads[e] == NULL)
    b->grads[e] = g_array_new(FALSE, FALSE, sizeof(DsEntry));
  g_array_append_val(b->grads[e], grad);
}

/* The sum of the gradients flowing into entry `e` (add_n of several), or DS_GRAD_NONE. */
static DsEntry total_grad(Builder *b, guint e, const char *node_name)
{
  GArray *list = b->grads[e];
  if (list == NULL || list->len == 0)
    return DS_GRAD_NONE;
  if (list->len == 1)
    return g_array_index(list, DsEntry, 0);
  g_autofree char *base = g_strdup_printf("%s_grad_sum", node_name);
  char count[16];
  g_snprintf(count, sizeof count, "%u", list->len);
  DsEntry sum = add_node(b, base, "add_n", list->len, (const DsEntry *)list->data, "num_args",
                         count);
  g_array_set_size(list, 0);
  g_array_append_val(list, sum);
  return sum;
}

static DsBackward *backward_subgraph(const DsGradCtx *ctx, const DsGraph *body,
                                     const DsShape *in_shapes, const DsDType *in_dtypes,
                                     const DsHeadGrad *heads, GError **error);

/* The forward node's gradient, from the gradients of its outputs to those of its inputs. */
static gboolean node_backward(Builder *b, guint id, GError **error)
{
  const DsGraph *f = b->forward;
  const DsNode *node = b->graph->nodes[id];
  guint e0 = f->node_row_ptr[id];
  gboolean reads_needed = FALSE;
  for (guint k = 0; k < node->n_inputs; k++)
    reads_needed = reads_needed || b->needs[ds_graph_entry_id(f, node->inputs[k])];
  if (!reads_needed)
    return TRUE;
  g_autofree DsEntry *out_grads = g_new(DsEntry, node->n_outputs);
  gboolean any = FALSE;
  for (guint j = 0; j < node->n_outputs; j++) {
    out_grads[j] = total_grad(b, e0 + j, node->name);
    any = any || !ds_grad_is_none(out_grads[j]);
  }
  if (!any)
    return TRUE;
  if (node->op == NULL || node->op->grad == NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_UNSUPPORTED,
                "node '%s' (%s): no gradient is defined for this op yet, and a gradient flows "
                "through it",
                node->name, node->op_name);
    return FALSE;
  }
  g_autofree DsShape *in_shapes = g_new(DsShape, node->n_inputs + node->n_outputs);
  g_autofree DsDType *in_dtypes = g_new(DsDType, node->n_inputs + node->n_outputs);
  for (guint k = 0; k < node->n_inputs + node->n_outputs; k++) {
    guint e = k < node->n_inputs ? ds_graph_entry_id(f, node->inputs[k]) : e0 + k - node->n_inputs;
    in_shapes[k] = b->shapes != NULL ? b->shapes->shapes[e] : DS_SHAPE_UNKNOWN;
    in_dtypes[k] = entry_dtype(b, e);
  }
  DsGradCtx ctx = {.graph = b->graph,
                   .node = node,
                   .in_shapes = in_shapes,
                   .out_shapes = in_shapes + node->n_inputs,
                   .in_dtypes = in_dtypes,
                   .out_dtypes = in_dtypes + node->n_inputs,
                   .names = b->names,
                   .loop_policy = b->loop_policy,
                   .backward_subgraph = backward_subgraph,
                   .backward_free = ds_backward_free};
  g_autofree DsEntry *in_grads = g_new(DsEntry, MAX(node->n_inputs, 1u));
  for (guint k = 0; k < node->n_inputs; k++)
    in_grads[k] = DS_GRAD_NONE;
  if (!node->op->grad(&ctx, out_grads, in_grads, error))
    return FALSE;
  for (guint k = 0; k < node->n_inputs; k++) {
    guint e = ds_graph_entry_id(f, node->inputs[k]);
    if (b->needs[e] && !ds_grad_is_none(in_grads[k]))
      add_grad(b, e, in_grads[k]);
  }
  return TRUE;
}

/* Op definitions, parsed params and output counts for the nodes added to `g` from `first` on
 * (and to the subgraphs they own: a backward loop's body). */
static gboolean resolve_nodes(DsGraph *g, guint first, GError **error)
{
  for (guint i = first; i < g->n_nodes; i++) {
    DsNode *node = g->nodes[i];
    if (ds_node_is_variable(node) || node->op != NULL)
      continue;
    node->op = ds_op_lookup(node->op_name);
    g_assert(node->op != NULL);
  }
  if (!ds_graph_parse_params(g, error))
    return FALSE;
  for (guint i = first; i < g->n_nodes; i++) {
    DsNode *node = g->nodes[i];
    if (ds_node_is_variable(node))
      continue;
    node->n_outputs = (guint)node->op->num_outputs(node->param);
    for (guint s = 0; s < node->n_subgraphs; s++)
      if (!resolve_nodes(node->subgraphs[s], 0, error))
        return FALSE;
  }
  ds_graph_update_row_ptr(g);
  return TRUE;
}

/* Drops the gradient nodes no head reads (the gradients of values that reach no variable),
 * keeping the forward nodes where they are. */
static void prune(Builder *b)
{
  DsGraph *g = b->graph;
  guint n_fwd = b->forward->n_nodes;
  g_autofree gboolean *live = g_new0(gboolean, g->n_nodes);
  for (guint h = 0; h < g->n_heads; h++)
    live[g->heads[h].node_id] = TRUE;
  for (guint i = g->n_nodes; i-- > n_fwd;)
    for (guint k = 0; live[i] && k < g->nodes[i]->n_inputs; k++)
      live[g->nodes[i]->inputs[k].node_id] = TRUE;
  g_autofree guint *new_id = g_new(guint, g->n_nodes);
  guint n = 0;
  for (guint i = 0; i < g->n_nodes; i++) {
    if (i < n_fwd || live[i] || ds_node_is_variable(g->nodes[i])) {
      new_id[i] = n;
      g->nodes[n] = g->nodes[i];
      g->nodes[n]->id = n;
      n++;
    } else {
      ds_node_free(g->nodes[i]);
    }
  }
  g->n_nodes = n;
  for (guint i = n_fwd; i < n; i++)
    for (guint k = 0; k < g->nodes[i]->n_inputs; k++)
      g->nodes[i]->inputs[k].node_id = new_id[g->nodes[i]->inputs[k].node_id];
  for (guint h = 0; h < g->n_heads; h++)
    g->heads[h].node_id = new_id[g->heads[h].node_id];
  for (guint a = 0; a < g->n_arg_nodes; a++)
    g->arg_nodes[a] = new_id[g->arg_nodes[a]];
  ds_graph_update_row_ptr(g);
}

/* A new variable; returns its position in arg_nodes. */
static guint add_variable(Builder *b, const char *base)
{
  g_autofree char *name = fresh_name(b, base);
  DsNode *node = ds_graph_add_node(b->graph, name, "null");
  b->graph->arg_nodes = g_renew(guint, b->graph->arg_nodes, b->graph->n_arg_nodes + 1);
  b->graph->arg_nodes[b->graph->n_arg_nodes] = node->id;
  return b->graph->n_arg_nodes++;
}

static DsBackward *build(const DsGraph *forward, const DsGraphShapes *shapes,
                         const DsHeadGrad *heads, DsLoopPolicy loop_policy, GError **error)
{
  guint n_entries = ds_graph_n_entries(forward);
  Builder b = {.forward = forward,
               .shapes = shapes,
               .names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
               .needs = g_new0(gboolean, n_entries),
               .grads = g_new0(GArray *, n_entries),
               .loop_policy = loop_policy};
  g_autofree gboolean *aux = g_new0(gboolean, forward->n_nodes);
  g_autoptr(GPtrArray) head_names = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) variables = g_ptr_array_new_with_free_func(g_free);
  if (!copy_forward(&b, error)) {
    g_free(b.grads);
    g_free(b.needs);
    g_hash_table_unref(b.names);
    return NULL;
  }
  gboolean ok = TRUE;
  mark_needs(&b, aux);

  /* Seeds: ones like each head, or the variable the caller feeds. */
  g_autofree int *head_grad_args = g_new(int, MAX(forward->n_heads, 1u));
  for (guint h = 0; ok && h < forward->n_heads; h++) {
    g_ptr_array_add(head_names, ds_graph_dup_output_name(forward, h));
    head_grad_args[h] = -1;
    DsEntry head = forward->heads[h];
    guint e = ds_graph_entry_id(forward, head);
    DsHeadGrad seed = heads != NULL ? heads[h] : DS_HEAD_GRAD_ONES;
    if (!b.needs[e] || seed == DS_HEAD_GRAD_NONE)
      continue;
    if (seed == DS_HEAD_GRAD_GIVEN) {
      g_autofree char *name = ds_backward_head_grad_name(g_ptr_array_index(head_names, h));
      head_grad_args[h] = (int)add_variable(&b, name);
      add_grad(&b, e, (DsEntry){b.graph->arg_nodes[head_grad_args[h]], 0, 0});
    } else {
      g_autofree char *base = g_strdup_printf("%s_head_grad", forward->nodes[head.node_id]->name);
      add_grad(&b, e, add_node(&b, base, "ones_like", 1, &head, NULL, NULL));
    }
  }
  for (guint i = forward->n_nodes; ok && i-- > 0;)
    if (!ds_node_is_variable(forward->nodes[i]))
      ok = node_backward(&b, i, error);

  /* Heads: the forward ones, then each variable's gradient (zeros when nothing reached it). */
  GArray *outputs = g_array_new(FALSE, FALSE, sizeof(DsEntry));
  g_array_append_vals(outputs, forward->heads, forward->n_heads);
  for (guint a = 0; ok && a < forward->n_arg_nodes; a++) {
    guint id = forward->arg_nodes[a];
    guint e = forward->node_row_ptr[id];
    if (!b.needs[e])
      continue;
    const char *name = forward->nodes[id]->name;
    DsEntry grad = total_grad(&b, e, name);
    if (ds_grad_is_none(grad)) {
      g_autofree char *base = g_strdup_printf("%s_grad_zeros", name);
      grad = add_node(&b, base, "zeros_like", 1, &(DsEntry){id, 0, 0}, NULL, NULL);
    }
    g_array_append_val(outputs, grad);
    g_ptr_array_add(variables, g_strdup(name));
    g_ptr_array_add(head_names, g_strconcat("grad_", name, NULL));
  }
  b.graph->n_heads = outputs->len;
  b.graph->heads = (DsEntry *)g_array_free(outputs, FALSE);
  g_ptr_array_add(head_names, NULL);
  b.graph->head_names = (char **)g_ptr_array_steal(head_names, NULL);

  ok = ok && resolve_nodes(b.graph, forward->n_nodes, error);
  if (ok) {
    prune(&b);
    if (loop_policy.recompute_cheap)
      ok = ds_recompute_cheap_values(b.graph, forward->n_nodes, error) >= 0;
    ok = ok && ds_graph_validate(b.graph, NULL, error);
  }
  for (guint e = 0; e < n_entries; e++)
    if (b.grads[e] != NULL)
      g_array_free(b.grads[e], TRUE);
  g_free(b.grads);
  g_free(b.needs);
  g_hash_table_unref(b.names);
  if (!ok) {
    ds_graph_unref(b.graph);
    return NULL;
  }
  DsBackward *backward = g_new0(DsBackward, 1);
  backward->graph = b.graph;
  backward->n_forward_nodes = forward->n_nodes;
  backward->n_forward_heads = forward->n_heads;
  backward->variables = g_steal_pointer(&variables);
  backward->head_grad_args = g_steal_pointer(&head_grad_args);
  return backward;
}

char *ds_backward_policy_name(DsLoopPolicy policy)
{
  switch (policy.keep) {
  case DS_LOOP_SAVE: return g_strdup(policy.recompute_cheap ? "auto" : "save");
  case DS_LOOP_RECOMPUTE: return g_strdup("recompute");
  case DS_LOOP_CHECKPOINT: return g_strdup_printf("checkpoint:%d", policy.every);
  }
  g_assert_not_reached();
}

/* save keeps everything; auto recomputes the cheap values and saves the loops; recompute and
 * checkpoint:K recompute both */
gboolean ds_backward_parse_policy(const char *text, DsLoopPolicy *policy)
{
  static const char checkpoint[] = "checkpoint:";
  if (g_str_equal(text, "save")) {
    *policy = (DsLoopPolicy){DS_LOOP_SAVE, 0, FALSE};
  } else if (g_str_equal(text, "auto")) {
    *policy = (DsLoopPolicy){DS_LOOP_SAVE, 0, TRUE};
  } else if (g_str_equal(text, "recompute")) {
    *policy = (DsLoopPolicy){DS_LOOP_RECOMPUTE, 0, TRUE};
  } else if (g_str_has_prefix(text, checkpoint)) {
    const char *digits = text + strlen(checkpoint);
    char *end = NULL;
    gint64 every = g_ascii_strtoll(digits, &end, 10);
    if (end == digits || *end != '\0' || every < 2 || every > G_MAXINT32)
      return FALSE;
    *policy = (DsLoopPolicy){DS_LOOP_CHECKPOINT, (int)every, TRUE};
  } else {
    return FALSE;
  }
  return TRUE;
}

void ds_backward_free(DsBackward *backward)
{
  if (backward == NULL)
    return;
  g_clear_pointer(&backward->graph, ds_graph_unref);
  g_clear_pointer(&backward->variables, g_ptr_array_unref);
  g_free(backward->head_grad_args);
  g_free(backward);
}

/* Shapes for `graph` inferred again from its variables' shapes and dtypes in `from` (the
 * shapes of `from_graph`, whose variables have the same ids). */
static DsGraphShapes *infer_again(const DsGraph *graph, const DsGraph *from_graph,
                                  const DsGraphShapes *from, GError **error)
{
  g_autoptr(DsGraphShapes) shapes = ds_graph_shapes_new(graph, error);
  if (shapes == NULL)
    return NULL;
  for (guint a = 0; a < graph->n_arg_nodes; a++) {
    guint id = graph->arg_nodes[a];
    shapes->shapes[graph->node_row_ptr[id]] = from->shapes[from_graph->node_row_ptr[id]];
    shapes->dtypes[graph->node_row_ptr[id]] = from->dtypes[from_graph->node_row_ptr[id]];
  }
  DsShapeCtx *ctx = ds_shape_ctx_new();
  gboolean ok = ds_infer_graph(graph, shapes, ctx, FALSE, error);
  ds_shape_ctx_free(ctx);
  return ok ? g_steal_pointer(&shapes) : NULL;
}

/* `forward` with every loop a gradient flows through changed to keep what its backward loop
 * reads (DsOpDef.grad_prepare: extra step outputs, which move the loop's final values up, so
 * their readers are renumbered), and its shapes inferred again. NULL without an error when no
 * loop needs it. */
static DsGraph *prepare_loops(const DsGraph *forward, const DsGraphShapes *shapes,
                              DsLoopPolicy loop_policy, DsGraphShapes **prepared_shapes,
                              GError **error)
{
  Builder b = {.forward = forward,
               .shapes = shapes,
               .needs = g_new0(gboolean, ds_graph_n_entries(forward))};
  g_autofree gboolean *aux = g_new0(gboolean, forward->n_nodes);
  mark_needs(&b, aux);
  g_autoptr(DsGraph) graph = NULL;
  g_autoptr(GHashTable) names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < forward->n_nodes; i++) {
    const DsNode *node = forward->nodes[i];
    if (node->op == NULL || node->op->grad_prepare == NULL)
      continue;
    gboolean any = FALSE;
    for (guint k = 0; k < node->n_inputs; k++)
      any = any || b.needs[ds_graph_entry_id(forward, node->inputs[k])];
    if (!any)
      continue;
    if (graph == NULL && (graph = ds_graph_copy(forward, error)) == NULL)
      break;
    g_autofree DsShape *in_shapes = g_new(DsShape, MAX(node->n_inputs, 1u));
    g_autofree DsDType *in_dtypes = g_new(DsDType, MAX(node->n_inputs, 1u));
    for (guint k = 0; k < node->n_inputs; k++) {
      guint e = ds_graph_entry_id(forward, node->inputs[k]);
      in_shapes[k] = shapes->shapes[e];
      in_dtypes[k] = shapes->dtypes[e];
    }
    guint first_out = forward->node_row_ptr[i];
    DsGradCtx ctx = {.graph = graph,
                     .in_shapes = in_shapes,
                     .out_shapes = shapes->shapes + first_out,
                     .in_dtypes = in_dtypes,
                     .out_dtypes = shapes->dtypes + first_out,
                     .names = names,
                     .loop_policy = loop_policy,
                     .backward_subgraph = backward_subgraph,
                     .backward_free = ds_backward_free};
    guint moved_from = 0;
    int n = node->op->grad_prepare(&ctx, graph->nodes[i], &moved_from, error);
    if (n < 0) {
      g_clear_pointer(&graph, ds_graph_unref);
      break;
    }
    for (guint j = i + 1; j < graph->n_nodes; j++)
      for (guint k = 0; k < graph->nodes[j]->n_inputs; k++)
        if (graph->nodes[j]->inputs[k].node_id == i && graph->nodes[j]->inputs[k].index >= moved_from)
          graph->nodes[j]->inputs[k].index += (guint)n;
    for (guint h = 0; h < graph->n_heads; h++)
      if (graph->heads[h].node_id == i && graph->heads[h].index >= moved_from)
        graph->heads[h].index += (guint)n;
  }
  g_free(b.needs);
  if (graph == NULL)
    return NULL;
  ds_graph_update_row_ptr(graph);
  *prepared_shapes = infer_again(graph, forward, shapes, error);
  return *prepared_shapes != NULL ? g_steal_pointer(&graph) : NULL;
}

DsBackward *ds_backward_build(const DsGraph *forward, const DsGraphShapes *shapes,
                              const DsHeadGrad *heads, DsLoopPolicy loop_policy, GError **error)
{
  GError *local = NULL;
  DsGraphShapes *prepared_shapes = NULL;
  g_autoptr(DsGraph) prepared =
      prepare_loops(forward, shapes, loop_policy, &prepared_shapes, &local);
  if (local != NULL) {
    g_propagate_error(error, local);
    return NULL;
  }
  if (prepared == NULL)
    return build(forward, shapes, heads, loop_policy, error);
  /* the outputs keep the names the model gives them, whatever the loops now output */
  g_strfreev(prepared->head_names);
  prepared->head_names = g_new0(char *, forward->n_heads + 1);
  for (guint h = 0; h < forward->n_heads; h++)
    prepared->head_names[h] = ds_graph_dup_output_name(forward, h);
  DsBackward *backward = build(prepared, prepared_shapes, heads, loop_policy, error);
  ds_graph_shapes_free(prepared_shapes);
  return backward;
}

/* A loop body's backward graph: its shapes inferred from its inputs', then built like any. */
static DsBackward *backward_subgraph(const DsGradCtx *ctx, const DsGraph *body,
                                     const DsShape *in_shapes, const DsDType *in_dtypes,
                                     const DsHeadGrad *heads, GError **error)
{
  /* a graph a gradient function put together (a checkpointed loop's segment) has its ops
   * resolved here, where the registry may be called */
  g_autoptr(DsGraph) resolved = NULL;
  for (guint i = 0; i < body->n_nodes && resolved == NULL; i++) {
    if (body->nodes[i]->op == NULL && !ds_node_is_variable(body->nodes[i])) {
      resolved = ds_graph_copy(body, error);
      if (resolved == NULL || !resolve_nodes(resolved, 0, error))
        return NULL;
      body = resolved;
    }
  }
  g_autoptr(DsGraphShapes) shapes = ds_graph_shapes_new(body, error);
  if (shapes == NULL)
    return NULL;
  for (guint a = 0; a < body->n_arg_nodes; a++) {
    guint e = body->node_row_ptr[body->arg_nodes[a]];
    shapes->shapes[e] = in_shapes[a];
    shapes->dtypes[e] = in_dtypes[a];
  }
  DsShapeCtx *sctx = ds_shape_ctx_new();
  gboolean ok = ds_infer_graph(body, shapes, sctx, FALSE, error);
  ds_shape_ctx_free(sctx);
  return ok ? ds_backward_build(body, shapes, heads, ctx->loop_policy, error) : NULL;
}
