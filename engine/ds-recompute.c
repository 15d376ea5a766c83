/* ds-recompute.c: recomputing cheap values in a backward graph (ds-recompute.h). */
#include "ds-recompute.h"

#include "ds-op.h"

/* Ops whose outputs are worth making again rather than keeping: one pass over their inputs,
 * deterministic, no subgraph, no state. */
static gboolean is_cheap(const DsNode *node)
{
  if (ds_node_is_variable(node) || node->op == NULL || node->n_subgraphs > 0)
    return FALSE;
  guint traits = node->op->traits;
  if ((traits & (DS_OP_TRAIT_ELEMWISE | DS_OP_TRAIT_BROADCAST)) == 0)
    return FALSE;
  if ((traits & (DS_OP_TRAIT_SOURCE | DS_OP_TRAIT_MUTATES_INPUT | DS_OP_TRAIT_DYNAMIC_SHAPE |
                 DS_OP_TRAIT_CONTROL_FLOW)) != 0)
    return FALSE;
  return node->op->id != DS_OP_DROPOUT; /* random in training */
}

typedef struct {
  DsGraph *graph;
  guint n_forward;
  gboolean *recompute; /* per forward node */
  guint *copy_of;      /* per forward node: its copy's index in `order`, or G_MAXUINT */
  GPtrArray *order;    /* the new node list */
  GHashTable *names;
} Rewrite;

static guint place_copy(Rewrite *r, guint id);

/* `e` as the gradient section reads it: a recomputed value's copy. */
static DsEntry redirect(Rewrite *r, DsEntry e)
{
  if (e.node_id < r->n_forward && r->recompute[e.node_id])
    return (DsEntry){place_copy(r, e.node_id), e.index, e.version};
  return e;
}

/* The copy of forward node `id` in `order` (placed now, after copies of its inputs, if it is
 * not yet); its inputs and ids are in the new numbering. */
static guint place_copy(Rewrite *r, guint id)
{
  if (r->copy_of[id] != G_MAXUINT)
    return r->copy_of[id];
  const DsNode *node = r->graph->nodes[id];
  DsNode *copy = ds_node_copy(node);
  for (guint k = 0; k < copy->n_inputs; k++)
    copy->inputs[k] = redirect(r, copy->inputs[k]);
  g_autofree char *base = g_strconcat(node->name, "_recompute", NULL);
  char *name = g_strdup(base);
  for (guint n = 2; g_hash_table_contains(r->names, name); n++) {
    g_free(name);
    name = g_strdup_printf("%s_%u", base, n);
  }
  g_free(copy->name);
  copy->name = name;
  g_hash_table_add(r->names, copy->name);
  copy->id = r->order->len;
  g_ptr_array_add(r->order, copy);
  r->copy_of[id] = copy->id;
  return copy->id;
}

int ds_recompute_cheap_values(DsGraph *graph, guint n_forward, GError **error)
{
  guint n_entries = ds_graph_n_entries(graph);
  g_autofree gboolean *read_later = g_new0(gboolean, n_entries); /* by a gradient node */
  g_autofree gboolean *output = g_new0(gboolean, n_entries);     /* a head */
  for (guint i = n_forward; i < graph->n_nodes; i++)
    for (guint k = 0; k < graph->nodes[i]->n_inputs; k++)
      read_later[ds_graph_entry_id(graph, graph->nodes[i]->inputs[k])] = TRUE;
  for (guint h = 0; h < graph->n_heads; h++)
    output[ds_graph_entry_id(graph, graph->heads[h])] = TRUE;

  /* In forward order: a cheap node is recomputed when the backward pass reads one of its
   * outputs, none is an output of the graph, and each input is there in the backward pass
   * anyway: a variable, a value it keeps, or another recomputed one. */
  g_autofree gboolean *recompute = g_new0(gboolean, MAX(n_forward, 1u));
  int n_recomputed = 0;
  for (guint i = 0; i < n_forward; i++) {
    const DsNode *node = graph->nodes[i];
    if (!is_cheap(node))
      continue;
    guint e0 = graph->node_row_ptr[i];
    gboolean wanted = FALSE, kept_out = FALSE;
    for (guint j = 0; j < node->n_outputs; j++) {
      wanted = wanted || read_later[e0 + j];
      kept_out = kept_out || output[e0 + j];
    }
    gboolean inputs_there = TRUE;
    for (guint k = 0; inputs_there && k < node->n_inputs; k++) {
      DsEntry in = node->inputs[k];
      inputs_there = ds_node_is_variable(graph->nodes[in.node_id]) || recompute[in.node_id] ||
                     read_later[ds_graph_entry_id(graph, in)];
    }
    recompute[i] = wanted && !kept_out && inputs_there;
    n_recomputed += recompute[i];
  }
  if (n_recomputed == 0)
    return 0;

  Rewrite r = {.graph = graph,
               .n_forward = n_forward,
               .recompute = recompute,
               .copy_of = g_new(guint, n_forward),
               .order = g_ptr_array_new(),
               .names = g_hash_table_new(g_str_hash, g_str_equal)};
  for (guint i = 0; i < n_forward; i++)
    r.copy_of[i] = G_MAXUINT;
  for (guint i = 0; i < graph->n_nodes; i++)
    g_hash_table_add(r.names, graph->nodes[i]->name);
  /* the forward nodes where they are; each gradient node after the copies it reads */
  g_autofree guint *new_id = g_new(guint, graph->n_nodes);
  for (guint i = 0; i < n_forward; i++) {
    g_ptr_array_add(r.order, graph->nodes[i]);
    new_id[i] = i;
  }
  for (guint i = n_forward; i < graph->n_nodes; i++) {
    DsNode *node = graph->nodes[i];
    for (guint k = 0; k < node->n_inputs; k++) {
      DsEntry in = node->inputs[k];
      node->inputs[k] = in.node_id < n_forward ? redirect(&r, in)
                                                : (DsEntry){new_id[in.node_id], in.index, in.version};
    }
    new_id[i] = r.order->len;
    node->id = new_id[i];
    g_ptr_array_add(r.order, node);
  }
  for (guint h = 0; h < graph->n_heads; h++)
    graph->heads[h].node_id = new_id[graph->heads[h].node_id];
  for (guint a = 0; a < graph->n_arg_nodes; a++)
    graph->arg_nodes[a] = new_id[graph->arg_nodes[a]];
  /* the graph's node list rebuilt in that order (ids as numbered above) */
  DsNode **old = graph->nodes;
  graph->nodes = NULL;
  graph->n_nodes = 0;
  for (guint i = 0; i < r.order->len; i++)
    ds_graph_append_node(graph, g_ptr_array_index(r.order, i));
  g_free(old);
  g_ptr_array_unref(r.order);
  g_free(r.copy_of);
  g_hash_table_unref(r.names);
  ds_graph_update_row_ptr(graph);
  return ds_graph_parse_params(graph, error) ? n_recomputed : -1;
}
