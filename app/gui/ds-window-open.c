/* ds-window-open.c: opening a model in the window: its session (with the window's device and,
 * when chosen, its backward pass), its shapes and its drawing, swapped in for the open one only
 * once all of that succeeded. */
#include "ds-backward.h"
#include "ds-window-private.h"

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
  g_autofree gboolean *weights = NULL;
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
    weights = g_new0(gboolean, graph->n_nodes + 1);
    for (guint i = 0; i < graph->n_nodes; i++)
      weights[i] = ds_node_is_variable(graph->nodes[i]) &&
                   ds_session_classify_variable(session, graph->nodes[i]) != DS_VARIABLE_DATA;
    ds_window_debug_detach(w);
    g_ptr_array_set_size(w->expanded, 0);
    ds_window_draw(w, session, shapes, weights, FALSE, &local);
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
  w->weights = g_steal_pointer(&weights);
  g_free(w->path);
  w->path = g_strdup(path);
  g_autofree char *base = g_path_get_basename(path);
  gtk_window_set_title(GTK_WINDOW(w), base);
  gtk_label_set_text(GTK_LABEL(w->title), base);
  ds_window_update_subtitle(w);
  ds_window_debug_attach(w);
  ds_window_inspect(w, -1);
  gtk_stack_set_visible_child_name(GTK_STACK(w->main_stack), "graph");
  ds_window_state_set_folder(path);
  g_autofree char *uri = g_filename_to_uri(path, NULL, NULL);
  if (uri != NULL)
    gtk_recent_manager_add_item(gtk_recent_manager_get_default(), uri);
  return TRUE;
}
