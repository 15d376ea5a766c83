/* ds-cli-render.c: --render MODEL --svg|--png|--dot OUT: the graph as a picture. */
#include <stdio.h>
#include <string.h>

#include "ds-cli.h"
#include "ds-error.h"
#include "ds-file.h"
#include "ds-report.h"
#include "ds-viz-layout.h"

static gboolean parse_overlay(const char *text, DsVizOverlay *overlay, GError **error)
{
  static const struct {
    const char *name;
    DsVizOverlay overlay;
  } names[] = {{"none", DS_VIZ_OVERLAY_NONE},
               {"time", DS_VIZ_OVERLAY_TIME},
               {"memory", DS_VIZ_OVERLAY_MEMORY},
               {"dynamic", DS_VIZ_OVERLAY_DYNAMIC}};
  *overlay = DS_VIZ_OVERLAY_NONE;
  if (text == NULL)
    return TRUE;
  for (guint i = 0; i < G_N_ELEMENTS(names); i++) {
    if (strcmp(text, names[i].name) == 0) {
      *overlay = names[i].overlay;
      return TRUE;
    }
  }
  g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
              "--overlay %s: expected time, memory, dynamic or none", text);
  return FALSE;
}

/* The output: exactly one of --svg, --png, --dot. */
static gboolean pick_output(const DsCliOptions *o, const char **format, const char **path,
                            GError **error)
{
  int n = (o->svg_path != NULL) + (o->png_path != NULL) + (o->dot_path != NULL);
  if (n != 1) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "--render: give exactly one of --svg OUT.svg, --png OUT.png, --dot OUT.dot");
    return FALSE;
  }
  *format = o->svg_path != NULL ? "svg" : o->png_path != NULL ? "png" : "dot";
  *path = o->svg_path != NULL ? o->svg_path : o->png_path != NULL ? o->png_path : o->dot_path;
  return TRUE;
}

static int render(const DsCliOptions *o, GError **error)
{
  const char *format, *path;
  DsVizOverlay overlay;
  if (!pick_output(o, &format, &path, error) || !parse_overlay(o->overlay, &overlay, error))
    return ds_cli_fail(*error);
  g_autoptr(DsSession) session = ds_cli_open_session(o->render_model, o, error);
  if (session == NULL)
    return ds_cli_fail(*error);
  DsGraph *graph = ds_session_get_graph(session);

  /* Shapes for the edges: symbolic where inference gets through, else as far as it goes. */
  const DsGraphShapes *symbolic = ds_session_infer_symbolic(session, NULL);
  g_autoptr(DsGraphShapes) concrete = NULL;
  if (symbolic != NULL)
    concrete = ds_session_evaluate(session, symbolic, TRUE, NULL);
  else
    symbolic = ds_session_infer_partial(session, NULL);

  g_autoptr(DsPartition) labelled = NULL;
  const DsPartition *partition = ds_session_get_file_partition(session);
  if (o->partition_model != NULL) {
    const DsSubgraphProperty *prop = ds_subgraph_property_find(o->partition_model);
    if (prop == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                  "--partition %s: no such subgraph property (static-dynamic, elementwise)",
                  o->partition_model);
      return ds_cli_fail(*error);
    }
    labelled = ds_partition_label(graph, prop, error);
    if (labelled == NULL)
      return ds_cli_fail(*error);
    partition = labelled;
  } else if (ds_session_get_device(session) != NULL) {
    /* --device: the regions as a run would place them. */
    labelled = ds_partition_label_placement(graph, symbolic, ds_session_get_device(session), error);
    if (labelled == NULL)
      return ds_cli_fail(*error);
    partition = labelled;
  }

  g_autofree gboolean *is_weight = g_new0(gboolean, graph->n_nodes + 1);
  for (guint i = 0; i < graph->n_nodes; i++)
    is_weight[i] = ds_node_is_variable(graph->nodes[i]) &&
                   ds_session_classify_variable(session, graph->nodes[i]) != DS_VARIABLE_DATA;
  DsReport *report = NULL;
  if (o->report_path != NULL && (report = ds_report_read_file(o->report_path, error)) == NULL)
    return ds_cli_fail(*error);

  gboolean all = FALSE, none = FALSE;
  g_autoptr(GPtrArray) names = g_ptr_array_new();
  for (char **c = o->collapse; c != NULL && *c != NULL; c++) {
    all |= strcmp(*c, "all") == 0;
    none |= strcmp(*c, "none") == 0;
    if (strcmp(*c, "all") != 0 && strcmp(*c, "none") != 0)
      g_ptr_array_add(names, *c);
  }
  g_ptr_array_add(names, NULL);
  g_autofree char *title = g_path_get_basename(o->render_model);
  guint n_forward = 0;
  DsLoopPolicy policy;
  ds_session_get_backward(session, &n_forward, &policy);
  DsVizOptions vo = {
      .partition = partition,
      .symbolic = symbolic,
      .concrete = concrete,
      .is_weight = is_weight,
      .n_forward_nodes = n_forward,
      .report = report,
      .overlay = overlay,
      .show_weights = o->weights == NULL ? -1 : strcmp(o->weights, "show") == 0,
      .collapse_all = all,
      .collapse_none = none,
      .collapse = (const char *const *)names->pdata,
      .title = title,
  };
  g_autoptr(DsVizScene) scene = ds_viz_scene_build(graph, &vo, error);
  ds_report_free(report);
  g_autofree char *data = NULL;
  gsize length = 0;
  if (scene == NULL || !ds_viz_render(scene, format, &data, &length, error) ||
      !ds_file_write_atomic(path, data, length, error))
    return ds_cli_fail(*error);
  printf("%s: %u nodes, %u edges, %u clusters%s%s\n", path, scene->nodes->len, scene->edges->len,
         scene->clusters->len, scene->collapsed->len > 0 ? ", collapsed: " : "", "");
  for (guint i = 0; i < scene->collapsed->len; i++)
    printf("%s%s", i > 0 ? ", " : "  ", (char *)scene->collapsed->pdata[i]);
  if (scene->collapsed->len > 0)
    printf("\n");
  return 0;
}

int ds_cli_render(const DsCliOptions *options)
{
  GError *error = NULL;
  if (options->weights != NULL && strcmp(options->weights, "show") != 0 &&
      strcmp(options->weights, "hide") != 0) {
    g_printerr("dynscope: --weights %s: expected show or hide\n", options->weights);
    return 2;
  }
  return render(options, &error);
}
