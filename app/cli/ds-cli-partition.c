/* ds-cli-partition.c: --partition: the regions a subgraph property makes, with the symbolic
 * shapes of what flows in and out of each, and --save for the partitioned graph. */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "ds-cli.h"
#include "ds-error.h"
#include "ds-mxnet-json.h"
#include "ds-partition.h"

static const char *kind_name(DsRegionKind kind)
{
  return kind == DS_REGION_DYNAMIC ? "dynamic" : "static";
}

static char *entry_text(DsGraph *graph, const DsGraphShapes *shapes, guint e)
{
  /* Entries are node outputs: find the node by its row. */
  guint node = 0;
  while (node + 1 < graph->n_nodes && graph->node_row_ptr[node + 1] <= e)
    node++;
  DsEntry entry = {node, e - graph->node_row_ptr[node], 0};
  g_autofree char *name = ds_graph_dup_entry_name(graph, entry);
  g_autofree char *shape = ds_shape_to_string(&shapes->shapes[e]);
  return g_strdup_printf("%-28s %s %s", name, shape, ds_dtype_name(shapes->dtypes[e]));
}

static void print_entries(DsGraph *graph, const DsGraphShapes *shapes, const char *label,
                          GArray *entries)
{
  for (guint j = 0; j < entries->len; j++) {
    g_autofree char *text = entry_text(graph, shapes, g_array_index(entries, guint, j));
    printf("    %-4s %s\n", j == 0 ? label : "", text);
  }
}

static void print_region(DsGraph *graph, const DsGraphShapes *shapes, const DsPartition *partition,
                         guint r)
{
  const DsRegion *region = &partition->regions[r];
  printf("%s  %s, %u node%s:", region->name, kind_name(region->kind), region->n_nodes,
         region->n_nodes == 1 ? "" : "s");
  /* Long regions list their first and last nodes: the count says the rest. */
  for (guint j = 0; j < region->n_nodes; j++) {
    if (region->n_nodes > 12 && j == 6) {
      printf(" ... (%u more)", region->n_nodes - 10);
      j = region->n_nodes - 5;
    }
    const DsNode *node = graph->nodes[region->nodes[j]];
    printf(" %s (%s)%s", node->name, node->op_name, j + 1 < region->n_nodes ? "," : "");
  }
  printf("\n");
  g_autoptr(GArray) inputs = ds_region_inputs(partition, r);
  g_autoptr(GArray) outputs = ds_region_outputs(partition, r);
  print_entries(graph, shapes, "in", inputs);
  print_entries(graph, shapes, "out", outputs);
}

int ds_cli_partition(const DsCliOptions *options)
{
  GError *error = NULL;
  const char *property_name = options->property != NULL ? options->property : "static-dynamic";
  const DsSubgraphProperty *prop = ds_subgraph_property_find(property_name);
  if (prop == NULL) {
    g_autoptr(GString) names = g_string_new(NULL);
    for (const DsSubgraphProperty *const *p = ds_subgraph_properties(); *p != NULL; p++)
      g_string_append_printf(names, "%s%s", names->len ? ", " : "", (*p)->name);
    g_printerr("dynscope: --property %s: no such subgraph property (available: %s)\n",
               property_name, names->str);
    return 2;
  }
  g_autoptr(DsSession) session = ds_cli_open_session(options->partition_model, options, &error);
  if (session == NULL)
    return ds_cli_fail(error);
  const DsGraphShapes *shapes = ds_session_infer_symbolic(session, &error);
  if (shapes == NULL)
    return ds_cli_fail(error);
  DsGraph *graph = ds_session_get_graph(session);

  /* A partitioned file shows the regions it was saved with, unless a property is asked for. */
  const DsPartition *partition = ds_session_get_file_partition(session);
  g_autoptr(DsPartition) labelled = NULL;
  if (partition == NULL || options->property != NULL) {
    labelled = ds_partition_label(graph, prop, &error);
    if (labelled == NULL)
      return ds_cli_fail(error);
    partition = labelled;
  }
  guint n_static = 0, n_dynamic = 0, n_selected = 0;
  for (guint r = 0; r < partition->n_regions; r++) {
    n_static += partition->regions[r].kind == DS_REGION_STATIC;
    n_dynamic += partition->regions[r].kind == DS_REGION_DYNAMIC;
    n_selected += partition->regions[r].n_nodes;
  }
  printf("model: %s\n", options->partition_model);
  printf("property: %s (%s)\n", labelled != NULL ? prop->name : "as saved in the file",
         labelled != NULL ? prop->description : "its _CachedOp nodes");
  printf("regions: %u (%u static, %u dynamic) holding %u of %u op nodes\n\n", partition->n_regions,
         n_static, n_dynamic, n_selected, ds_graph_count_ops(graph));
  for (guint r = 0; r < partition->n_regions; r++)
    print_region(graph, shapes, partition, r);

  if (options->save_path != NULL) {
    g_autoptr(DsGraph) built = ds_partition_build(partition, prop, shapes, &error);
    if (built == NULL || !ds_mxnet_json_save(built, options->save_path, &error))
      return ds_cli_fail(error);
    printf("\nsaved: %s (%u nodes, %u of them subgraph nodes)\n", options->save_path,
           built->n_nodes, partition->n_regions);
  }
  return 0;
}
