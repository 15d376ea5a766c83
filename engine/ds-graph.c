/* ds-graph.c: IR construction, lookup and structural validation. */
#include "ds-graph.h"

#include <cjson/cJSON.h>
#include <string.h>

#include "ds-error.h"
#include "ds-op.h"

DsGraph *ds_graph_new(void)
{
  DsGraph *graph = g_new0(DsGraph, 1);
  graph->ref_count = 1;
  graph->node_row_ptr = g_new0(guint, 1);
  return graph;
}

DsGraph *ds_graph_ref(DsGraph *graph)
{
  g_return_val_if_fail(graph != NULL, NULL);
  g_atomic_int_inc(&graph->ref_count);
  return graph;
}

void ds_node_free(DsNode *node)
{
  if (node == NULL)
    return;
  for (guint i = 0; i < node->n_attrs; i++) {
    g_free(node->attrs[i].key);
    g_free(node->attrs[i].value);
  }
  for (guint i = 0; i < node->n_subgraphs; i++)
    ds_graph_unref(node->subgraphs[i]);
  g_free(node->subgraphs);
  g_free(node->attrs);
  g_free(node->inputs);
  if (node->param != NULL && node->op != NULL && node->op->free_param != NULL)
    node->op->free_param(node->param);
  g_free(node->param);
  g_free(node->name);
  g_free(node->op_name);
  g_free(node);
}

void ds_graph_unref(DsGraph *graph)
{
  if (graph == NULL || !g_atomic_int_dec_and_test(&graph->ref_count))
    return;
  for (guint i = 0; i < graph->n_nodes; i++)
    ds_node_free(graph->nodes[i]);
  g_free(graph->nodes);
  g_free(graph->arg_nodes);
  g_free(graph->node_row_ptr);
  g_free(graph->heads);
  g_strfreev(graph->head_names);
  if (graph->attrs != NULL)
    cJSON_Delete(graph->attrs);
  if (graph->by_name != NULL)
    g_hash_table_unref(graph->by_name);
  g_free(graph);
}

DsNode *ds_node_new(const char *name, const char *op_name)
{
  DsNode *node = g_new0(DsNode, 1);
  node->name = g_strdup(name);
  node->op_name = g_strdup(op_name);
  node->is_variable = g_strcmp0(op_name, "null") == 0;
  node->n_outputs = 1;
  return node;
}

DsNode *ds_node_copy(const DsNode *node)
{
  DsNode *copy = ds_node_new(node->name, node->op_name);
  copy->op = node->op;
  copy->is_variable = node->is_variable;
  copy->json_empty_attrs = node->json_empty_attrs;
  for (guint i = 0; i < node->n_attrs; i++)
    ds_node_add_attr(copy, node->attrs[i].key, node->attrs[i].value);
  copy->inputs = g_new0(DsEntry, MAX(node->n_inputs, 1));
  if (node->n_inputs > 0)
    memcpy(copy->inputs, node->inputs, sizeof(DsEntry) * node->n_inputs);
  copy->n_inputs = node->n_inputs;
  copy->n_outputs = node->n_outputs;
  if (node->n_subgraphs > 0) {
    copy->subgraphs = g_new(DsGraph *, node->n_subgraphs);
    for (guint i = 0; i < node->n_subgraphs; i++)
      copy->subgraphs[i] = ds_graph_ref(node->subgraphs[i]);
    copy->n_subgraphs = node->n_subgraphs;
  }
  return copy;
}

DsGraph *ds_graph_copy(const DsGraph *graph, GError **error)
{
  DsGraph *copy = ds_graph_new();
  for (guint i = 0; i < graph->n_nodes; i++)
    ds_graph_append_node(copy, ds_node_copy(graph->nodes[i]));
  copy->arg_nodes = g_memdup2(graph->arg_nodes, graph->n_arg_nodes * sizeof(guint));
  copy->n_arg_nodes = graph->n_arg_nodes;
  copy->heads = g_memdup2(graph->heads, graph->n_heads * sizeof(DsEntry));
  copy->n_heads = graph->n_heads;
  copy->head_names = g_strdupv(graph->head_names);
  copy->attrs = graph->attrs != NULL ? cJSON_Duplicate(graph->attrs, TRUE) : NULL;
  copy->mxnet_version = graph->mxnet_version;
  ds_graph_update_row_ptr(copy);
  if (!ds_graph_parse_params(copy, error)) {
    ds_graph_unref(copy);
    return NULL;
  }
  return copy;
}

void ds_graph_append_node(DsGraph *graph, DsNode *node)
{
  /* Capacity is implicit: 8, then doubling whenever the count reaches a power of two. */
  guint n = graph->n_nodes;
  if (n == 0 || (n >= 8 && (n & (n - 1)) == 0))
    graph->nodes = g_renew(DsNode *, graph->nodes, MAX(8u, n * 2));
  node->id = graph->n_nodes;
  graph->nodes[graph->n_nodes++] = node;
  if (graph->by_name != NULL)
    g_hash_table_insert(graph->by_name, node->name, node);
}

DsNode *ds_graph_add_node(DsGraph *graph, const char *name, const char *op_name)
{
  DsNode *node = ds_node_new(name, op_name);
  ds_graph_append_node(graph, node);
  return node;
}

void ds_node_add_attr(DsNode *node, const char *key, const char *value)
{
  node->attrs = g_renew(DsAttr, node->attrs, node->n_attrs + 1);
  node->attrs[node->n_attrs].key = g_strdup(key);
  node->attrs[node->n_attrs].value = g_strdup(value);
  node->n_attrs++;
}

const char *ds_node_get_attr(const DsNode *node, const char *key)
{
  for (guint i = 0; i < node->n_attrs; i++)
    if (strcmp(node->attrs[i].key, key) == 0)
      return node->attrs[i].value;
  return NULL;
}

DsNode *ds_graph_find_node(DsGraph *graph, const char *name)
{
  if (graph->by_name == NULL) {
    graph->by_name = g_hash_table_new(g_str_hash, g_str_equal);
    /* Insert in reverse so the first node of a duplicated name wins. */
    for (guint i = graph->n_nodes; i-- > 0;)
      g_hash_table_insert(graph->by_name, graph->nodes[i]->name, graph->nodes[i]);
  }
  return g_hash_table_lookup(graph->by_name, name);
}

void ds_graph_update_row_ptr(DsGraph *graph)
{
  graph->node_row_ptr = g_renew(guint, graph->node_row_ptr, graph->n_nodes + 1);
  graph->node_row_ptr[0] = 0;
  for (guint i = 0; i < graph->n_nodes; i++)
    graph->node_row_ptr[i + 1] = graph->node_row_ptr[i] + graph->nodes[i]->n_outputs;
}

guint *ds_graph_count_readers(const DsGraph *graph)
{
  guint *readers = g_new0(guint, ds_graph_n_entries(graph) + 1);
  for (guint i = 0; i < graph->n_nodes; i++)
    for (guint k = 0; k < graph->nodes[i]->n_inputs; k++)
      readers[ds_graph_entry_id(graph, graph->nodes[i]->inputs[k])]++;
  for (guint h = 0; h < graph->n_heads; h++)
    readers[ds_graph_entry_id(graph, graph->heads[h])]++;
  return readers;
}

guint ds_graph_count_ops(const DsGraph *graph)
{
  guint n = 0;
  for (guint i = 0; i < graph->n_nodes; i++)
    n += !ds_node_is_variable(graph->nodes[i]);
  return n;
}

guint ds_graph_count_ops_nested(const DsGraph *graph)
{
  guint n = ds_graph_count_ops(graph);
  for (guint i = 0; i < graph->n_nodes; i++)
    for (guint k = 0; k < graph->nodes[i]->n_subgraphs; k++)
      n += ds_graph_count_ops_nested(graph->nodes[i]->subgraphs[k]);
  return n;
}

gboolean ds_graph_validate(const DsGraph *graph, const char *file, GError **error)
{
  const char *where = file != NULL ? file : "graph";

  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    for (guint k = 0; k < node->n_inputs; k++) {
      DsEntry in = node->inputs[k];
      if (in.node_id >= i) {
        g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                    "%s: node '%s' (%s): input %u refers to node %u, which does not come "
                    "before it (a cycle or a forward reference)",
                    where, node->name, node->op_name, k, in.node_id);
        return FALSE;
      }
      const DsNode *src = graph->nodes[in.node_id];
      if (in.index >= src->n_outputs) {
        g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                    "%s: node '%s' (%s): input %u refers to output %u of node '%s', "
                    "which has %u output(s)",
                    where, node->name, node->op_name, k, in.index, src->name, src->n_outputs);
        return FALSE;
      }
    }
  }
  for (guint h = 0; h < graph->n_heads; h++) {
    DsEntry head = graph->heads[h];
    if (head.node_id >= graph->n_nodes ||
        head.index >= graph->nodes[head.node_id]->n_outputs) {
      g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                  "%s: head %u refers to node %u output %u, which does not exist", where, h,
                  head.node_id, head.index);
      return FALSE;
    }
  }
  for (guint a = 0; a < graph->n_arg_nodes; a++) {
    guint id = graph->arg_nodes[a];
    if (id >= graph->n_nodes) {
      g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                  "%s: arg_nodes[%u] = %u is out of range (the graph has %u nodes)", where, a,
                  id, graph->n_nodes);
      return FALSE;
    }
    if (!ds_node_is_variable(graph->nodes[id])) {
      g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                  "%s: arg_nodes[%u] = node %u '%s' (%s), which is not a variable", where, a,
                  id, graph->nodes[id]->name, graph->nodes[id]->op_name);
      return FALSE;
    }
  }
  return TRUE;
}

gboolean ds_graph_parse_params(DsGraph *graph, GError **error)
{
  for (guint i = 0; i < graph->n_nodes; i++) {
    DsNode *node = graph->nodes[i];
    if (node->op == NULL || node->param != NULL)
      continue;
    const DsOpDef *op = node->op;
    node->param = op->param_size > 0 ? g_malloc0(op->param_size) : NULL;
    if (op->parse != NULL && !op->parse(node, node->param, error))
      return FALSE;
    int n_in = op->num_inputs(node->param);
    if (n_in >= 0 && (guint)n_in != node->n_inputs) {
      g_set_error(error, DS_ERROR, DS_ERROR_INVALID,
                  "node '%s' (%s): has %u inputs, but its attributes call for %d",
                  node->name, node->op_name, node->n_inputs, n_in);
      return FALSE;
    }
  }
  return TRUE;
}

char *ds_graph_dup_output_name(const DsGraph *graph, guint i)
{
  g_return_val_if_fail(i < graph->n_heads, NULL);
  if (graph->head_names != NULL)
    return g_strdup(graph->head_names[i]);
  return ds_graph_dup_entry_name(graph, graph->heads[i]);
}

char *ds_graph_dup_entry_name(const DsGraph *graph, DsEntry entry)
{
  g_return_val_if_fail(entry.node_id < graph->n_nodes, NULL);
  const DsNode *node = graph->nodes[entry.node_id];
  if (ds_node_is_variable(node))
    return g_strdup(node->name);
  /* nnvm's Symbol::ListOutputNames: the op's FListOutputNames when it has several outputs,
   * "output" for a single-output op, "output<i>" otherwise. */
  if (node->n_outputs > 1 && node->op != NULL && node->op->output_names != NULL) {
    const char *const *names = node->op->output_names;
    for (guint k = 0; names[k] != NULL; k++)
      if (k == entry.index)
        return g_strdup_printf("%s_%s", node->name, names[k]);
  }
  if (node->n_outputs == 1)
    return g_strdup_printf("%s_output", node->name);
  return g_strdup_printf("%s_output%u", node->name, entry.index);
}
