/* ds-window-open.c: opening a model in the window: its session (with the window's device and,
 * when chosen, its backward pass), its shapes and its drawing, swapped in for the open one only
 * once all of that succeeded. */
#include "ds-backward.h"
#include "ds-window-private.h"

#include <glib/gi18n.h>
#include <stdlib.h>
#include <string.h>

/* The weights an MXNet symbol file was saved with, beside it: "net-symbol.json" (or
 * "net.json") has "net.params" or checkpoints "net-NNNN.params", the latest epoch taken. NULL
 * when there are none (and for ONNX files, whose initializers are their weights). */
static char *weights_beside(const char *model)
{
  g_autofree char *dir = g_path_get_dirname(model);
  g_autofree char *base = g_path_get_basename(model);
  gsize n = strlen(base);
  if (g_str_has_suffix(base, "-symbol.json"))
    base[n - strlen("-symbol.json")] = '\0';
  else if (g_str_has_suffix(base, ".json"))
    base[n - strlen(".json")] = '\0';
  else
    return NULL;
  g_autofree char *plain = g_strdup_printf("%s.params", base);
  char *path = g_build_filename(dir, plain, NULL);
  if (g_file_test(path, G_FILE_TEST_IS_REGULAR))
    return path;
  g_clear_pointer(&path, g_free);
  g_autoptr(GDir) listing = g_dir_open(dir, 0, NULL);
  const char *name;
  long best = -1;
  gsize prefix = strlen(base);
  while (listing != NULL && (name = g_dir_read_name(listing)) != NULL) {
    if (strncmp(name, base, prefix) != 0 || name[prefix] != '-' ||
        !g_str_has_suffix(name, ".params"))
      continue;
    char *end;
    long epoch = strtol(name + prefix + 1, &end, 10);
    if (end != name + prefix + 1 && strcmp(end, ".params") == 0 && epoch > best) {
      best = epoch;
      g_free(path);
      path = g_build_filename(dir, name, NULL);
    }
  }
  return path;
}

/* The window's backward pass (ds-window-backward.c) added to a session it opens. */
static gboolean add_backward(DsWindow *w, DsSession *session, GError **error)
{
  DsLoopPolicy policy;
  if (w->backward == NULL)
    return TRUE;
  if (!ds_backward_parse_policy(w->backward, &policy))
    g_assert_not_reached(); /* ds_window_set_backward takes known names only */
  return ds_session_add_backward(session, NULL, policy, error);
}

gboolean ds_window_open(DsWindow *w, const char *path, GError **error)
{
  return ds_window_open_with_weights(w, path, NULL, error);
}

gboolean ds_window_open_with_weights(DsWindow *w, const char *path, const char *weights,
                                     GError **error)
{
  /* A command in flight reads the session being replaced: stop it first (it stops before
   * its next node). */
  if (w->debugger != NULL && ds_debugger_is_busy(w->debugger)) {
    ds_debugger_cancel(w->debugger);
    while (ds_debugger_is_busy(w->debugger))
      g_main_context_iteration(NULL, TRUE);
  }
  GError *local = NULL;
  g_autoptr(DsSession) session = ds_session_new(path, &local);
  g_autoptr(DsGraphShapes) shapes = NULL;
  g_autofree gboolean *is_weight = NULL;
  g_autofree char *model = g_canonicalize_filename(path, NULL);
  g_autofree char *weights_path = weights != NULL ? g_canonicalize_filename(weights, NULL)
                                                  : weights_beside(model);
  /* The weights go in before the backward pass is added: they are the forward graph's. */
  if (session != NULL && weights_path != NULL &&
      !ds_session_feed_params(session, weights_path, &local)) {
    g_autofree char *base = g_path_get_basename(weights_path);
    g_prefix_error(&local, _("The weights in %s do not fit this model: "), base);
    g_clear_pointer(&session, ds_session_free);
  }
  if (session != NULL && !add_backward(w, session, &local))
    g_clear_pointer(&session, ds_session_free);
  if (session != NULL) {
    ds_session_set_device(session, w->device);
    const DsGraphShapes *some = ds_session_infer_symbolic(session, NULL);
    if (some == NULL)
      some = ds_session_infer_partial(session, &local);
    shapes = some != NULL ? ds_graph_shapes_copy(some) : NULL;
  }
  if (local == NULL) {
    DsGraph *graph = ds_session_get_graph(session);
    is_weight = g_new0(gboolean, graph->n_nodes + 1);
    for (guint i = 0; i < graph->n_nodes; i++)
      is_weight[i] = ds_node_is_variable(graph->nodes[i]) &&
                   ds_session_classify_variable(session, graph->nodes[i]) != DS_VARIABLE_DATA;
    ds_window_debug_detach(w);
    g_ptr_array_set_size(w->expanded, 0);
    ds_window_draw(w, session, shapes, is_weight, FALSE, &local);
  }
  if (local != NULL) {
    ds_window_show_banner(w, local->message);
    g_propagate_error(error, local);
    if (w->session != NULL)
      ds_window_debug_attach(w);
    return FALSE;
  }
  ds_window_show_banner(w, NULL);
  g_clear_pointer(&w->session, ds_session_free);
  g_clear_pointer(&w->shapes, ds_graph_shapes_free);
  w->session = g_steal_pointer(&session);
  w->shapes = g_steal_pointer(&shapes);
  g_free(w->weights);
  w->weights = g_steal_pointer(&is_weight);
  g_free(w->weights_path);
  w->weights_path = g_steal_pointer(&weights_path);
  g_free(w->path);
  /* Absolute, so that Recent Models finds it again from any folder. */
  w->path = g_steal_pointer(&model);
  g_autofree char *base = g_path_get_basename(path);
  gtk_window_set_title(GTK_WINDOW(w), base);
  gtk_label_set_text(GTK_LABEL(w->title), base);
  ds_window_update_subtitle(w);
  ds_window_debug_attach(w);
  ds_window_inspect(w, -1);
  gtk_stack_set_visible_child_name(GTK_STACK(w->main_stack), "graph");
  gtk_widget_set_visible(w->sidebar, TRUE);
  ds_window_state_set_folder(w->path);
  ds_window_add_recent(w, w->path);
  return TRUE;
}
