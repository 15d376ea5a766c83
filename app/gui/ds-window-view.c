/* ds-window-view.c: what every part of the window changes on the whole: the banner, the
 * subtitle, drawing the open model (scene, layout, the regions list) and finding its nodes, and
 * whether a run is going. The lowest of the window's files: it calls none of the others, and
 * tells the parts that mark the picture that it was drawn again through the window's
 * "redrawn" signal.
 */
#include "ds-window-private.h"

#include <glib/gi18n.h>

/* ---- the banner and the subtitle ---- */

/* The engine's messages end in hints for the command line ("give it with --input-shape
 * data=(...)"); in the window the same is done in the Bindings tab. */
static char *gui_worded(const char *message)
{
  static const struct {
    const char *pattern, *replacement;
  } hints[] = {
      {"give it with --input-shape [^ ]+=\\(\\.\\.\\.\\)",
       N_("declare its shape in the Bindings tab")},
      {"give it with --input or --input-shape",
       N_("feed it or declare its shape in the Bindings tab")},
      {"declare the inputs with --input-shape", N_("declare the inputs' shapes in the Bindings tab")},
      {"with --bind or an input file", N_("in the Bindings tab")},
      {"feed them with --input NAME=FILE\\.npy or --params FILE, or use --random-inputs",
       N_("feed them in the Bindings tab")},
  };
  char *text = g_strdup(message);
  for (guint i = 0; i < G_N_ELEMENTS(hints); i++) {
    g_autoptr(GRegex) regex = g_regex_new(hints[i].pattern, 0, 0, NULL);
    char *replaced = g_regex_replace_literal(regex, text, -1, 0, _(hints[i].replacement), 0, NULL);
    if (replaced != NULL) {
      g_free(text);
      text = replaced;
    }
  }
  return text;
}

void ds_window_show_banner(DsWindow *w, const char *message)
{
  g_autofree char *worded = message != NULL ? gui_worded(message) : NULL;
  gtk_label_set_text(GTK_LABEL(w->banner_label), worded);
  gtk_revealer_set_reveal_child(GTK_REVEALER(w->banner), message != NULL);
}

gint ds_window_find_scene_node(DsWindow *w, const char *id)
{
  return GPOINTER_TO_INT(g_hash_table_lookup(w->scene_index, id)) - 1;
}

/* Whether the open model has learned parameters (an ONNX file's come with it). */
static gboolean has_weights(DsWindow *w)
{
  DsGraph *graph = ds_session_get_graph(w->session);
  for (guint i = 0; w->weights != NULL && i < graph->n_nodes; i++)
    if (w->weights[i])
      return TRUE;
  return FALSE;
}

void ds_window_update_subtitle(DsWindow *w)
{
  if (w->session == NULL)
    return;
  /* Loop and branch bodies' ops too: an LSTM loop is more than "1 op". */
  guint ops = ds_graph_count_ops_nested(ds_session_get_graph(w->session));
  g_autofree char *text = g_strdup_printf(ngettext("%u op", "%u ops", ops), ops);
  if (w->weights_path != NULL) {
    g_autofree char *base = g_path_get_basename(w->weights_path);
    /* TRANSLATORS: the subtitle: "11 ops · sample.params", the weights' file */
    char *with_weights = g_strdup_printf(_("%s · %s"), text, base);
    g_free(text);
    text = with_weights;
  } else if (w->path != NULL && !g_str_has_suffix(w->path, ".onnx") && has_weights(w)) {
    /* TRANSLATORS: the subtitle of an MXNet model opened without its .params file */
    char *random = g_strdup_printf(_("%s · random weights"), text);
    g_free(text);
    text = random;
  }
  if (w->backward != NULL) {
    /* TRANSLATORS: the subtitle: "120 ops · gradients (auto)"; auto is a policy's name */
    char *with_gradients = g_strdup_printf(_("%s · gradients (%s)"), text, w->backward);
    g_free(text);
    text = with_gradients;
  }
  if (w->device != NULL) {
    /* TRANSLATORS: the subtitle: "12 ops · on cuda" */
    g_autofree char *with_device = g_strdup_printf(_("%s · on %s"), text, w->device->name);
    gtk_label_set_text(GTK_LABEL(w->subtitle), with_device);
  } else {
    gtk_label_set_text(GTK_LABEL(w->subtitle), text);
  }
}

/* ---- the debugger's state ---- */

gboolean ds_window_is_busy(DsWindow *w)
{
  return w->debugger != NULL && ds_debugger_is_busy(w->debugger);
}

/* ---- drawing the open model ---- */

/* One row per cluster, indented by nesting, and one per collapsed box. */
static void fill_regions(DsWindow *w)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child(w->regions)) != NULL)
    gtk_list_box_remove(GTK_LIST_BOX(w->regions), child);
  const DsVizScene *scene = ds_graph_canvas_get_scene(DS_GRAPH_CANVAS(w->canvas));
  if (scene == NULL)
    return;
  for (guint i = 0; i < scene->clusters->len; i++) {
    const DsVizCluster *c = &g_array_index(scene->clusters, DsVizCluster, i);
    int depth = 0;
    for (gint p = c->parent; p >= 0; p = g_array_index(scene->clusters, DsVizCluster, p).parent)
      depth++;
    g_autofree char *text = g_strdup_printf(_("%s — %u nodes"), c->label, c->n_nodes);
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_widget_set_margin_start(label, 6 + 16 * depth);
    g_object_set_data(G_OBJECT(label), "cluster", GINT_TO_POINTER(i + 1));
    gtk_list_box_append(GTK_LIST_BOX(w->regions), label);
  }
  for (guint i = 0; i < scene->nodes->len; i++) {
    const DsVizNode *n = &g_array_index(scene->nodes, DsVizNode, i);
    if (n->kind != DS_VIZ_NODE_COLLAPSED)
      continue;
    g_autofree char *text = g_strdup_printf(_("%s (collapsed)"), n->id);
    GtkWidget *label = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_widget_set_margin_start(label, 6);
    g_object_set_data(G_OBJECT(label), "node", GINT_TO_POINTER(i + 1));
    gtk_list_box_append(GTK_LIST_BOX(w->regions), label);
  }
}

/* The scene of the open model, laid out, with what the user expanded, the overlay and, after
 * a run, the concrete shapes next to the symbolic ones. */
gboolean ds_window_draw(DsWindow *w, DsSession *session, const DsGraphShapes *shapes,
                        const gboolean *weights, gboolean keep_view, GError **error)
{
  g_ptr_array_add(w->expanded, NULL);
  const DsReport *report = w->debugger != NULL ? ds_debugger_get_report(w->debugger) : NULL;
  const DsPartition *placement = ds_session_get_placement(session);
  guint n_forward = 0;
  DsLoopPolicy policy;
  ds_session_get_backward(session, &n_forward, &policy);
  DsVizOptions options = {.partition = placement != NULL ? placement
                                                         : ds_session_get_file_partition(session),
                          .symbolic = shapes,
                          .concrete = report != NULL ? ds_session_get_run_shapes(session) : NULL,
                          .is_weight = weights,
                          .n_forward_nodes = n_forward,
                          .report = report,
                          .overlay = report != NULL ? w->overlay : DS_VIZ_OVERLAY_NONE,
                          .show_weights = -1,
                          .fold_weights = TRUE,
                          /* A big graph's layers as boxes to open, as Model Explorer draws
                           * them: BERT reads at Fit. */
                          .group_scopes = TRUE,
                          .expand = (const char *const *)w->expanded->pdata};
  g_autoptr(DsVizScene) scene = ds_viz_scene_build(ds_session_get_graph(session), &options, error);
  g_ptr_array_remove_index(w->expanded, w->expanded->len - 1);
  g_autoptr(DsVizLayout) layout = scene != NULL ? ds_viz_layout(scene, error) : NULL;
  if (layout == NULL)
    return FALSE;
  g_hash_table_remove_all(w->scene_index);
  for (guint i = 0; i < scene->nodes->len; i++)
    g_hash_table_insert(w->scene_index, g_strdup(g_array_index(scene->nodes, DsVizNode, i).id),
                        GUINT_TO_POINTER(i + 1));
  if (keep_view)
    ds_graph_canvas_replace_graph(DS_GRAPH_CANVAS(w->canvas), g_steal_pointer(&scene),
                                  g_steal_pointer(&layout));
  else
    ds_graph_canvas_set_graph(DS_GRAPH_CANVAS(w->canvas), g_steal_pointer(&scene),
                              g_steal_pointer(&layout));
  fill_regions(w);
  return TRUE;
}

gboolean ds_window_redraw(DsWindow *w, GError **error)
{
  if (w->session == NULL)
    return TRUE;
  DsGraphCanvas *canvas = DS_GRAPH_CANVAS(w->canvas);
  /* Keep the view where it was: same zoom, same point under the middle. */
  const DsVizScene *old = ds_graph_canvas_get_scene(canvas);
  gint selected = ds_graph_canvas_get_selected(canvas);
  g_autofree char *selected_id =
      selected >= 0 ? g_strdup(g_array_index(old->nodes, DsVizNode, selected).id) : NULL;
  if (!ds_window_draw(w, w->session, w->shapes, w->weights, TRUE, error))
    return FALSE;
  if (selected_id != NULL)
    ds_graph_canvas_select(canvas, ds_window_find_scene_node(w, selected_id), FALSE);
  /* The parts that mark the picture (breakpoints, the current node) draw again. */
  g_signal_emit_by_name(w, "redrawn");
  return TRUE;
}
