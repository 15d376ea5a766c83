/* ds-backward.c: the backward graph (reverse-mode differentiation over the IR). */
#include "ds-backward.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "ds-error.h"
#include "ds-op.h"

typedef struct {
  const DsGraph *forward;
  const DsGraphShapes *shapes;
  DsGraph *graph;
  GHashTable *names;   /* node names taken */
  gboolean *needs;     /* per forward entry: a gradient flows into it */
  GArray **grads;      /* per forward entry: the gradients flowing into it, or NULL */
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

/* The forward nodes, copied with their ids and parsed params. */
static gboolean copy_forward(Builder *b, GError **error)
{
  const DsGraph *f = b->forward;
  for (guint i = 0; i < f->n_nodes; i++) {
    DsNode *copy = ds_node_copy(f->nodes[i]);
    copy->op = f->nodes[i]->op;
    ds_graph_append_node(b->graph, copy);
    g_hash_table_add(b->names, g_strdup(copy->name));
  }
  b->graph->arg_nodes = g_memdup2(f->arg_nodes, f->n_arg_nodes * sizeof(guint));
  b->graph->n_arg_nodes = f->n_arg_nodes;
  b->graph->attrs = f->attrs != NULL ? cJSON_Duplicate(f->attrs, TRUE) : NULL;
  b->graph->mxnet_version = f->mxnet_version;
  ds_graph_update_row_ptr(b->graph);
  return ds_graph_parse_params(b->graph, error);
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
                   .names = b->names};
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

/* Op definitions, parsed params and output counts for the nodes the gradients added. */
static gboolean resolve_new_nodes(Builder *b, GError **error)
{
  DsGraph *g = b->graph;
  for (guint i = b->forward->n_nodes; i < g->n_nodes; i++) {
    DsNode *node = g->nodes[i];
    if (ds_node_is_variable(node))
      continue;
    node->op = ds_op_lookup(node->op_name);
    g_assert(node->op != NULL);
  }
  if (!ds_graph_parse_params(g, error))
    return FALSE;
  for (guint i = b->forward->n_nodes; i < g->n_nodes; i++) {
    DsNode *node = g->nodes[i];
    if (!ds_node_is_variable(node))
      node->n_outputs = (guint)node->op->num_outputs(node->param);
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

static void add_variable(Builder *b, const char *name)
{
  DsNode *node = ds_graph_add_node(b->graph, name, "null");
  g_hash_table_add(b->names, g_strdup(name));
  b->graph->arg_nodes = g_renew(guint, b->graph->arg_nodes, b->graph->n_arg_nodes + 1);
  b->graph->arg_nodes[b->graph->n_arg_nodes++] = node->id;
}

DsBackward *ds_backward_build(const DsGraph *forward, const DsGraphShapes *shapes,
                              const gboolean *head_grad_given, GError **error)
{
  guint n_entries = ds_graph_n_entries(forward);
  Builder b = {.forward = forward,
               .shapes = shapes,
               .graph = ds_graph_new(),
               .names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL),
               .needs = g_new0(gboolean, n_entries),
               .grads = g_new0(GArray *, n_entries)};
  g_autofree gboolean *aux = g_new0(gboolean, forward->n_nodes);
  g_autoptr(GPtrArray) head_names = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) variables = g_ptr_array_new_with_free_func(g_free);
  gboolean ok = copy_forward(&b, error);
  mark_needs(&b, aux);

  /* Seeds: ones like each head, or the variable the caller feeds. */
  for (guint h = 0; h < forward->n_heads; h++) {
    g_ptr_array_add(head_names, ds_graph_dup_output_name(forward, h));
    DsEntry head = forward->heads[h];
    guint e = ds_graph_entry_id(forward, head);
    if (!b.needs[e])
      continue;
    if (head_grad_given != NULL && head_grad_given[h]) {
      g_autofree char *name = ds_backward_head_grad_name(g_ptr_array_index(head_names, h));
      add_variable(&b, name);
      add_grad(&b, e, (DsEntry){b.graph->n_nodes - 1, 0, 0});
    } else {
      g_autofree char *base = g_strdup_printf("%s_head_grad", forward->nodes[head.node_id]->name);
      add_grad(&b, e, add_node(&b, base, "ones_like", 1, &head, NULL, NULL));
    }
  }
  for (guint i = forward->n_nodes; ok && i-- > 0;)
    if (!ds_node_is_variable(forward->nodes[i]))
      ok = node_backward(&b, i, error);

  /* Heads: the forward ones, then each variable's gradient (zeros when nothing reached it). */
  GArray *heads = g_array_new(FALSE, FALSE, sizeof(DsEntry));
  g_array_append_vals(heads, forward->heads, forward->n_heads);
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
    g_array_append_val(heads, grad);
    g_ptr_array_add(variables, g_strdup(name));
    g_ptr_array_add(head_names, g_strconcat("grad_", name, NULL));
  }
  b.graph->n_heads = heads->len;
  b.graph->heads = (DsEntry *)g_array_free(heads, FALSE);
  g_ptr_array_add(head_names, NULL);
  b.graph->head_names = (char **)g_ptr_array_steal(head_names, NULL);

  ok = ok && resolve_new_nodes(&b, error);
  if (ok) {
    prune(&b);
    ok = ds_graph_validate(b.graph, NULL, error);
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
  backward->n_forward_heads = forward->n_heads;
  backward->variables = g_steal_pointer(&variables);
  return backward;
}

void ds_backward_free(DsBackward *backward)
{
  if (backward == NULL)
    return;
  g_clear_pointer(&backward->graph, ds_graph_unref);
  g_clear_pointer(&backward->variables, g_ptr_array_unref);
  g_free(backward);
}
