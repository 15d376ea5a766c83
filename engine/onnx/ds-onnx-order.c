/* ds-onnx-order.c: a graph's nodes in an order that runs, producers before their readers.
 *
 * Some converters write a node after a node that reads its output (a Cast emitted late, at
 * node 643 of 734). ONNX Runtime sorts every graph when it loads it, and so does the importer.
 * The order is the file's wherever the file's already works: a depth-first walk that starts
 * from each node in file order emits what a node reads before the node, so a well-ordered
 * graph keeps its order exactly. A node reads its inputs and the outer values its bodies
 * (Loop, If, Scan) read: ONNX names a value once in a model, so every name a body reads that
 * a node of this graph produces is such a value.
 */
#include "ds-onnx-model.h"

#include "ds-error.h"

static void add_graph_reads(const DsOnnxGraph *g, GPtrArray *names);

/* Adds to `names` what `node` reads: its inputs, and what its bodies read. */
static void add_node_reads(const DsOnnxNode *node, GPtrArray *names)
{
  for (gsize k = 0; k < node->n_inputs; k++)
    if (node->inputs[k][0] != '\0')
      g_ptr_array_add(names, (gpointer)node->inputs[k]);
  for (gsize a = 0; a < node->n_attributes; a++) {
    const DsOnnxAttribute *attr = &node->attributes[a];
    if (attr->g != NULL)
      add_graph_reads(attr->g, names);
    for (gsize k = 0; k < attr->n_graphs; k++)
      add_graph_reads(&attr->graphs[k], names);
  }
}

/* Adds to `names` what every node of body `g` reads. */
static void add_graph_reads(const DsOnnxGraph *g, GPtrArray *names)
{
  for (gsize i = 0; i < g->n_nodes; i++)
    add_node_reads(&g->nodes[i], names);
}

static char *node_label(const DsOnnxGraph *g, gsize i)
{
  const DsOnnxNode *node = &g->nodes[i];
  if (node->name[0] != '\0')
    return g_strdup_printf("node '%s' (%s)", node->name, node->op_type);
  return g_strdup_printf("node %" G_GSIZE_FORMAT " (%s)", i, node->op_type);
}

gboolean ds_onnx_graph_order(const DsOnnxGraph *g, gsize *order, GError **error)
{
  gsize n = g->n_nodes;
  /* Who produces each name: node index + 1. */
  g_autoptr(GHashTable) producer = g_hash_table_new(g_str_hash, g_str_equal);
  for (gsize i = 0; i < n; i++)
    for (gsize k = 0; k < g->nodes[i].n_outputs; k++)
      if (g->nodes[i].outputs[k][0] != '\0')
        g_hash_table_insert(producer, (gpointer)g->nodes[i].outputs[k], GSIZE_TO_POINTER(i + 1));

  /* Each node's producers, as one flat list with offsets. */
  g_autoptr(GArray) deps = g_array_new(FALSE, FALSE, sizeof(gsize));
  g_autofree gsize *first = g_new(gsize, n + 1);
  g_autoptr(GPtrArray) names = g_ptr_array_new();
  for (gsize i = 0; i < n; i++) {
    first[i] = deps->len;
    g_ptr_array_set_size(names, 0);
    add_node_reads(&g->nodes[i], names);
    for (guint k = 0; k < names->len; k++) {
      gsize p = GPOINTER_TO_SIZE(g_hash_table_lookup(producer, names->pdata[k]));
      if (p != 0)
        g_array_append_vals(deps, &(gsize){p - 1}, 1);
    }
  }
  first[n] = deps->len;

  /* Depth-first, iteratively (graphs of 10^5 nodes in one chain exist): a node leaves the
   * stack, into the order, once everything it reads has. */
  enum { UNSEEN, OPEN, DONE };
  g_autofree guint8 *state = g_new0(guint8, MAX(n, 1));
  g_autofree gsize *stack = g_new(gsize, MAX(n, 1));
  g_autofree gsize *cursor = g_new(gsize, MAX(n, 1));
  gsize placed = 0;
  for (gsize root = 0; root < n; root++) {
    if (state[root] != UNSEEN)
      continue;
    gsize depth = 0;
    stack[depth++] = root;
    state[root] = OPEN;
    cursor[root] = first[root];
    while (depth > 0) {
      gsize v = stack[depth - 1];
      if (cursor[v] == first[v + 1]) {
        state[v] = DONE;
        order[placed++] = v;
        depth--;
        continue;
      }
      gsize d = g_array_index(deps, gsize, cursor[v]++);
      if (state[d] == DONE)
        continue;
      if (state[d] == OPEN) {
        g_autofree char *label = node_label(g, d);
        g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                    "%s is on a cycle: it depends on its own output", label);
        return FALSE;
      }
      state[d] = OPEN;
      cursor[d] = first[d];
      stack[depth++] = d;
    }
  }
  return TRUE;
}
