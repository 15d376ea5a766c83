/* ds-cli-info.c: --info (what a model holds) and --save (write it back). */
#include <cjson/cJSON.h>
#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "ds-cli.h"
#include "ds-expr.h"
#include "ds-error.h"
#include "ds-mxnet-json.h"

typedef struct {
  const char *op;
  guint count;
} OpCount;

static int by_count_desc(gconstpointer a, gconstpointer b)
{
  const OpCount *x = a, *y = b;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return strcmp(x->op, y->op);
}

/* Op histogram, most frequent first. */
static GArray *op_histogram(const DsGraph *graph)
{
  g_autoptr(GHashTable) counts = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (ds_node_is_variable(node))
      continue;
    guint n = GPOINTER_TO_UINT(g_hash_table_lookup(counts, node->op_name));
    g_hash_table_insert(counts, node->op_name, GUINT_TO_POINTER(n + 1));
  }
  GArray *list = g_array_new(FALSE, FALSE, sizeof(OpCount));
  GHashTableIter iter;
  gpointer key, value;
  g_hash_table_iter_init(&iter, counts);
  while (g_hash_table_iter_next(&iter, &key, &value)) {
    OpCount c = {key, GPOINTER_TO_UINT(value)};
    g_array_append_val(list, c);
  }
  g_array_sort(list, by_count_desc);
  return list;
}

/* Dims as numbers, symbolic ones as their expression text, unknown ones as null. */
static cJSON *shape_json(const DsShape *shape)
{
  if (shape->ndim < 0)
    return cJSON_CreateNull();
  cJSON *list = cJSON_CreateArray();
  for (int i = 0; i < shape->ndim; i++) {
    cJSON *dim;
    if (ds_dim_is_const(shape->dims[i])) {
      dim = cJSON_CreateNumber((double)shape->dims[i].value);
    } else if (shape->dims[i].expr != NULL) {
      g_autofree char *text = ds_expr_to_string(shape->dims[i].expr);
      dim = cJSON_CreateString(text);
    } else {
      dim = cJSON_CreateNull();
    }
    cJSON_AddItemToArray(list, dim);
  }
  return list;
}

/* A variable's shape for the listing: what inference found, or the declared symbolic shape
 * where inference left dims open (ONNX inputs with named dims). */
static const DsShape *input_shape(DsSession *session, const DsGraphShapes *shapes,
                                  const DsNode *node)
{
  const DsShape *inferred = &shapes->shapes[ds_session_get_graph(session)->node_row_ptr[node->id]];
  const DsShape *declared = ds_session_get_declared_shape(session, node->name);
  int64_t dims[DS_MAX_NDIM];
  if (declared != NULL && !ds_shape_get_concrete(inferred, dims))
    return declared;
  return inferred;
}

static const char *dtype_or_unknown(DsDType d)
{
  return d == DS_DTYPE_UNKNOWN ? "unknown" : ds_dtype_name(d);
}

int ds_cli_info(const DsCliOptions *options)
{
  GError *error = NULL;
  g_autoptr(DsSession) session = ds_cli_open_session(options->info_model, options, &error);
  if (session == NULL)
    return ds_cli_fail(error);
  DsGraph *graph = ds_session_get_graph(session);
  const DsGraphShapes *shapes = ds_session_infer_partial(session, &error);
  if (shapes == NULL)
    return ds_cli_fail(error);

  g_autoptr(GArray) ops = op_histogram(graph);
  guint64 n_params = 0;
  gboolean params_known = TRUE;
  cJSON *root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "model", options->info_model);
  cJSON_AddNumberToObject(root, "nodes", graph->n_nodes);
  cJSON_AddStringToObject(root, "format", ds_session_get_format(session));
  cJSON_AddNumberToObject(root, "mxnet_version", graph->mxnet_version);
  if (ds_session_get_unsupported(session) != NULL)
    cJSON_AddStringToObject(root, "unsupported", ds_session_get_unsupported(session));
  cJSON *ops_json = cJSON_AddObjectToObject(root, "ops");
  for (guint i = 0; i < ops->len; i++) {
    OpCount *c = &g_array_index(ops, OpCount, i);
    cJSON_AddNumberToObject(ops_json, c->op, c->count);
  }
  cJSON *inputs = cJSON_AddArrayToObject(root, "inputs");
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (!ds_node_is_variable(node))
      continue;
    guint e = graph->node_row_ptr[i];
    DsVariableKind kind = ds_session_classify_variable(session, node);
    cJSON *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "name", node->name);
    cJSON_AddItemToObject(item, "shape", shape_json(input_shape(session, shapes, node)));
    cJSON_AddStringToObject(item, "dtype", dtype_or_unknown(shapes->dtypes[e]));
    cJSON_AddStringToObject(item, "kind", ds_variable_kind_name(kind));
    cJSON_AddItemToArray(inputs, item);
    if (kind != DS_VARIABLE_DATA) {
      int64_t dims[DS_MAX_NDIM];
      if (ds_shape_get_concrete(&shapes->shapes[e], dims))
        n_params += (guint64)ds_shape_span(dims, 0, shapes->shapes[e].ndim);
      else
        params_known = FALSE;
    }
  }
  cJSON *outputs = cJSON_AddArrayToObject(root, "outputs");
  for (guint h = 0; h < graph->n_heads; h++) {
    guint e = ds_graph_entry_id(graph, graph->heads[h]);
    g_autofree char *name = ds_graph_dup_output_name(graph, h);
    cJSON *item = cJSON_CreateObject();
    cJSON_AddStringToObject(item, "name", name);
    cJSON_AddItemToObject(item, "shape", shape_json(&shapes->shapes[e]));
    cJSON_AddStringToObject(item, "dtype", dtype_or_unknown(shapes->dtypes[e]));
    cJSON_AddItemToArray(outputs, item);
  }
  if (params_known)
    cJSON_AddNumberToObject(root, "parameters", (double)n_params);
  else
    cJSON_AddNullToObject(root, "parameters");

  if (options->json) {
    char *text = cJSON_Print(root);
    printf("%s\n", text);
    cJSON_free(text);
  } else {
    printf("model: %s (%s)\n", options->info_model, ds_session_get_format(session));
    printf("nodes: %u (%u ops, %u variables)\n", graph->n_nodes, ds_graph_count_ops(graph),
           graph->n_nodes - ds_graph_count_ops(graph));
    printf("ops:");
    for (guint i = 0; i < ops->len; i++) {
      OpCount *c = &g_array_index(ops, OpCount, i);
      printf("%s %s %u", i ? "," : "", c->op, c->count);
    }
    printf("\n\ninputs:\n");
    cJSON *item;
    cJSON_ArrayForEach(item, inputs)
    {
      const DsNode *node =
          ds_graph_find_node(graph, cJSON_GetObjectItem(item, "name")->valuestring);
      g_autofree char *shape = ds_shape_to_string(input_shape(session, shapes, node));
      printf("  %-6s  %-48s  %-20s  %s\n", cJSON_GetObjectItem(item, "kind")->valuestring,
             node->name, shape, cJSON_GetObjectItem(item, "dtype")->valuestring);
    }
    printf("\noutputs:\n");
    for (guint h = 0; h < graph->n_heads; h++) {
      guint e = ds_graph_entry_id(graph, graph->heads[h]);
      g_autofree char *name = ds_graph_dup_output_name(graph, h);
      g_autofree char *shape = ds_shape_to_string(&shapes->shapes[e]);
      printf("  %-56s  %-20s  %s\n", name, shape, dtype_or_unknown(shapes->dtypes[e]));
    }
    if (params_known)
      printf("\nparameters: %" G_GUINT64_FORMAT "\n", n_params);
    else
      printf("\nparameters: unknown (some weight shapes are not known; try --input-shape)\n");
    if (ds_session_get_unsupported(session) != NULL)
      printf("\ncannot run: %s\n", ds_session_get_unsupported(session));
  }
  cJSON_Delete(root);
  return 0;
}

/* The .params file beside symbol file `out`, named as MXNet's save_checkpoint names them:
 * "net-symbol.json" -> "net-0000.params", otherwise "net.json" -> "net.params". */
static char *params_path_for(const char *out)
{
  if (g_str_has_suffix(out, "-symbol.json"))
    return g_strdup_printf("%.*s-0000.params", (int)(strlen(out) - strlen("-symbol.json")), out);
  if (g_str_has_suffix(out, ".json"))
    return g_strdup_printf("%.*s.params", (int)(strlen(out) - strlen(".json")), out);
  return g_strdup_printf("%s.params", out);
}

/* An ONNX model converted, as MXNet's ONNX importer converts one: the graph as MXNet JSON and
 * its initializers as the .params file beside it, which `--run OUT --params PARAMS` loads. */
static int save_onnx_as_mxnet(const char *model, const char *out)
{
  GError *error = NULL;
  g_autoptr(DsSession) session = ds_session_new(model, &error);
  if (session == NULL)
    return ds_cli_fail(error);
  if (ds_session_get_unsupported(session) != NULL) {
    g_printerr(_("dynscope: %s: cannot convert: %s\n"), model, ds_session_get_unsupported(session));
    return 2;
  }
  DsGraph *graph = ds_session_get_graph(session);
  g_autofree char *params = params_path_for(out);
  guint n_weights = 0;
  if (!ds_mxnet_json_save(graph, out, &error) ||
      !ds_session_save_file_weights(session, params, &n_weights, &error))
    return ds_cli_fail(error);
  printf(_("saved: %s (%u nodes) and %s (%u arrays)\n"), out, graph->n_nodes, params, n_weights);
  return 0;
}

int ds_cli_save(const DsCliOptions *options)
{
  GError *error = NULL;
  if (options->remaining == NULL || options->remaining[0] == NULL ||
      options->remaining[1] != NULL) {
    g_printerr(_("dynscope: --save OUT.json needs exactly one MODEL argument\n"));
    return 2;
  }
  const char *model = options->remaining[0];
  if (ds_session_file_is_onnx(model))
    return save_onnx_as_mxnet(model, options->save_path);
  g_autoptr(DsGraph) graph = ds_mxnet_json_load(model, &error);
  if (graph == NULL || !ds_mxnet_json_save(graph, options->save_path, &error))
    return ds_cli_fail(error);
  return 0;
}
