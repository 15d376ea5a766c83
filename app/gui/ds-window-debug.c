/* ds-window-debug.c: runs, steps, breakpoints and bindings, and where execution stands. */
#include "ds-window-private.h"

#include <glib/gi18n.h>
#include <string.h>

#define PROGRESS_INTERVAL_MS 100

void ds_window_breakpoint_free(gpointer data)
{
  DsWindowBreakpoint *b = data;
  g_free(b->spec);
  g_free(b);
}

static void set_status(DsWindow *w, const char *text)
{
  gtk_label_set_text(GTK_LABEL(w->status_label), text);
}

const char *ds_window_get_status_text(DsWindow *w)
{
  return gtk_label_get_text(GTK_LABEL(w->status_label));
}

/* ---- actions ---- */

static void enable(DsWindow *w, const char *name, gboolean enabled)
{
  GAction *action = g_action_map_lookup_action(G_ACTION_MAP(w), name);
  if (action != NULL)
    g_simple_action_set_enabled(G_SIMPLE_ACTION(action), enabled);
}

void ds_window_update_actions(DsWindow *w)
{
  gboolean open = w->session != NULL && w->debugger != NULL, busy = ds_window_is_busy(w);
  gboolean ran = open && ds_debugger_get_report(w->debugger) != NULL;
  static const char *const commands[] = {"run", "continue", "step", "step-into", "step-out"};
  for (guint i = 0; i < G_N_ELEMENTS(commands); i++)
    enable(w, commands[i], open && !busy);
  enable(w, "reset", open && !busy && w->stopped);
  enable(w, "cancel", busy);
  enable(w, "toggle-breakpoint", open && !busy);
  enable(w, "toggle-breakpoint-at", open && !busy);
  enable(w, "overlay", ran && !busy);
  enable(w, "export", open && !busy);
  /* A menu whose every item is disabled does not open at all. */
  gtk_widget_set_sensitive(w->export_button, open && !busy);
  gtk_widget_set_sensitive(w->overlay_button, ran && !busy);
  enable(w, "open-weights", open && !busy);
  enable(w, "find", open);
  enable(w, "fit", open);
  enable(w, "fit-width", open);
  enable(w, "device", !busy);
  gtk_widget_set_sensitive(w->bindings, open && !busy);
  gtk_widget_set_sensitive(w->breakpoint_entry, open && !busy);
}

/* ---- where execution stands ---- */

/* "while0/iter3/fc1" as people read it: "while0 › iter 3 › fc1". */
static char *pretty_path(const char *path)
{
  g_auto(GStrv) parts = g_strsplit(path, "/", -1);
  g_autoptr(GString) out = g_string_new(NULL);
  for (guint i = 0; parts[i] != NULL; i++) {
    if (i > 0)
      g_string_append(out, " › ");
    if (g_str_has_prefix(parts[i], "iter") && g_ascii_isdigit(parts[i][4]))
      g_string_append_printf(out, _("iter %s"), parts[i] + 4);
    else
      g_string_append(out, parts[i]);
  }
  return g_string_free(g_steal_pointer(&out), FALSE);
}

/* The scene id of the node the cursor stopped on: subgraph frames nest as the scene names
 * them ("while0/func/fc1"); regions do not change names. */
static char *stop_scene_id(DsCursor *cursor, GPtrArray *ancestors)
{
  g_autoptr(GString) prefix = g_string_new(NULL);
  for (guint i = 1; i < ds_cursor_get_n_frames(cursor); i++) {
    const DsCursorFrame *f = ds_cursor_get_frame(cursor, i);
    if (f->kind == DS_FRAME_SUBGRAPH) {
      g_string_append(prefix, f->owner->name);
      g_ptr_array_add(ancestors, g_strdup(prefix->str));
      g_string_append_printf(prefix, "/%s/", f->name);
    } else if (f->kind == DS_FRAME_REGION) {
      g_ptr_array_add(ancestors, g_strdup(f->name));
    }
  }
  const DsNode *node = ds_cursor_get_node(cursor);
  return node != NULL ? g_strdup_printf("%s%s", prefix->str, node->name) : NULL;
}

/* The scene node to mark, expanding a collapsed region or loop that hides it. */
static gint find_stop_node(DsWindow *w, DsCursor *cursor)
{
  g_autoptr(GPtrArray) ancestors = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *id = stop_scene_id(cursor, ancestors);
  if (id == NULL)
    return -1;
  gint index = ds_window_find_scene_node(w, id);
  if (index >= 0)
    return index;
  const DsVizScene *scene = ds_graph_canvas_get_scene(DS_GRAPH_CANVAS(w->canvas));
  /* Inside a collapsed layer group: the top-level node it is, or is in. */
  const char *group = g_hash_table_lookup(scene->hidden_in,
                                          ancestors->len > 0 ? ancestors->pdata[0] : id);
  if (group != NULL) {
    g_ptr_array_add(w->expanded, g_strdup(group));
    if (!ds_window_redraw(w, NULL))
      return -1;
    index = ds_window_find_scene_node(w, id);
    if (index >= 0)
      return index;
    scene = ds_graph_canvas_get_scene(DS_GRAPH_CANVAS(w->canvas));
  }
  for (guint i = 0; i < ancestors->len; i++) {
    gint box = ds_window_find_scene_node(w, ancestors->pdata[i]);
    if (box >= 0 && g_array_index(scene->nodes, DsVizNode, box).kind == DS_VIZ_NODE_COLLAPSED) {
      g_ptr_array_add(w->expanded, g_strdup(ancestors->pdata[i]));
      if (!ds_window_redraw(w, NULL))
        return box;
      index = ds_window_find_scene_node(w, id);
      return index >= 0 ? index : box;
    }
  }
  return -1;
}

void ds_window_show_stop(DsWindow *w)
{
  DsCursor *cursor = ds_debugger_get_cursor(w->debugger);
  g_autofree char *path = ds_cursor_dup_path(cursor);
  g_autofree char *pretty = pretty_path(path);
  g_autoptr(GString) status = g_string_new(pretty);
  g_string_append_printf(status, _("  ·  step %lu"), (unsigned long)ds_cursor_get_n_steps(cursor));
  guint hit = ds_cursor_get_hit(cursor);
  const DsBreakpoint *bp = hit != 0 ? ds_cursor_get_breakpoint(cursor, hit) : NULL;
  if (bp != NULL)
    g_string_append_printf(status, _("  ·  breakpoint %s"), ds_breakpoint_get_spec(bp));
  set_status(w, status->str);
  DsGraphCanvas *canvas = DS_GRAPH_CANVAS(w->canvas);
  gint index = find_stop_node(w, cursor);
  ds_graph_canvas_set_current(canvas, index);
  if (index >= 0) {
    ds_graph_canvas_select(canvas, index, FALSE);
  } else {
    /* After a region: show the region. */
    const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
    gint cluster = ds_viz_scene_find_cluster(scene, path);
    if (cluster >= 0)
      ds_graph_canvas_focus_box(canvas, &ds_graph_canvas_get_layout(canvas)->clusters[cluster].box);
  }
}

/* ---- commands ---- */

static gboolean on_progress(gpointer data)
{
  DsWindow *w = data;
  double fraction;
  guint64 steps = ds_debugger_get_progress(w->debugger, &fraction);
  if (fraction > 0)
    gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(w->progress), fraction);
  else
    gtk_progress_bar_pulse(GTK_PROGRESS_BAR(w->progress));
  g_autofree char *text =
      g_strdup_printf(ngettext("Running… %lu node run", "Running… %lu nodes run", steps),
                      (unsigned long)steps);
  set_status(w, text);
  return G_SOURCE_CONTINUE;
}

static void show_busy(DsWindow *w, gboolean busy)
{
  gtk_widget_set_visible(w->progress, busy);
  gtk_widget_set_visible(w->cancel_button, busy);
  gtk_progress_bar_set_fraction(GTK_PROGRESS_BAR(w->progress), 0);
  if (busy && w->progress_source == 0)
    w->progress_source = g_timeout_add(PROGRESS_INTERVAL_MS, on_progress, w);
  if (!busy && w->progress_source != 0) {
    g_source_remove(w->progress_source);
    w->progress_source = 0;
  }
  ds_window_update_actions(w);
}

static void finished_run(DsWindow *w)
{
  const DsReport *report = ds_debugger_get_report(w->debugger);
  g_clear_pointer(&w->profile, g_hash_table_unref);
  w->profile = ds_viz_index_profile(report);
  g_autofree char *time =
      ds_viz_format_ns(report->run.n_wall > 0 ? (guint64)report->run.wall_ns[0] : 0);
  g_autofree char *bytes = g_format_size((guint64)report->memory.peak_live_bytes);
  g_autofree char *text = g_strdup_printf(_("Ran in %s: %d nodes executed, peak %s live"), time,
                                          (int)report->n_events, bytes);
  GError *error = NULL;
  /* Shapes of this run on the edges, and the overlay's colours. */
  if (!ds_window_redraw(w, &error)) {
    ds_window_show_banner(w, error->message);
    g_error_free(error);
  }
  set_status(w, text);
}

static void on_finished(DsDebugger *debugger, gint stop, const char *message, DsWindow *w)
{
  DsCursor *cursor = ds_debugger_get_cursor(debugger);
  w->stopped = (stop == DS_CURSOR_STEPPED || stop == DS_CURSOR_BREAKPOINT) &&
               ds_cursor_is_paused(cursor);
  show_busy(w, FALSE);
  if (message != NULL) {
    ds_window_show_banner(w, message);
    set_status(w, strstr(message, "cancel") != NULL ? _("Cancelled") : _("Failed"));
    ds_graph_canvas_set_current(DS_GRAPH_CANVAS(w->canvas), -1);
  } else if (w->stopped) {
    ds_window_show_banner(w, NULL);
    ds_window_show_stop(w);
  } else {
    ds_window_show_banner(w, NULL);
    ds_graph_canvas_set_current(DS_GRAPH_CANVAS(w->canvas), -1);
    if (ds_debugger_get_command(debugger) == DS_DEBUG_RUN) {
      finished_run(w);
    } else {
      g_autofree char *text = g_strdup_printf(
          ngettext("Finished: %lu node run", "Finished: %lu nodes run",
                   ds_cursor_get_n_steps(cursor)),
          (unsigned long)ds_cursor_get_n_steps(cursor));
      set_status(w, text);
    }
  }
  ds_window_update_actions(w);
  ds_window_inspect(w, ds_graph_canvas_get_selected(DS_GRAPH_CANVAS(w->canvas)));
}

gboolean ds_window_command(DsWindow *w, DsDebugCommand command)
{
  if (w->session == NULL || ds_window_is_busy(w))
    return FALSE;
  /* A new run goes with what the bindings panel shows, defaults included, Apply pressed or
   * not. A paused run goes on with what it started with. */
  if (!w->stopped && ds_bindings_panel_has_pending(DS_BINDINGS_PANEL(w->bindings)) &&
      !ds_window_apply_bindings(w, NULL))
    return FALSE;
  w->stopped = FALSE;
  if (!ds_debugger_start(w->debugger, command))
    return FALSE;
  show_busy(w, TRUE);
  set_status(w, _("Running…"));
  return TRUE;
}

void ds_window_cancel(DsWindow *w)
{
  if (w->debugger != NULL)
    ds_debugger_cancel(w->debugger);
}

void ds_window_reset(DsWindow *w)
{
  if (w->debugger == NULL || ds_window_is_busy(w))
    return;
  ds_debugger_reset(w->debugger);
  w->stopped = FALSE;
  ds_graph_canvas_set_current(DS_GRAPH_CANVAS(w->canvas), -1);
  set_status(w, _("Reset: the next step starts a new run"));
  ds_window_update_actions(w);
  ds_window_inspect(w, ds_graph_canvas_get_selected(DS_GRAPH_CANVAS(w->canvas)));
}

static void on_command(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)parameter;
  DsWindow *w = data;
  const char *name = g_action_get_name(G_ACTION(action));
  static const struct {
    const char *name;
    DsDebugCommand command;
  } map[] = {{"run", DS_DEBUG_RUN},
             {"continue", DS_DEBUG_CONTINUE},
             {"step", DS_DEBUG_STEP},
             {"step-into", DS_DEBUG_STEP_INTO},
             {"step-out", DS_DEBUG_STEP_OUT}};
  for (guint i = 0; i < G_N_ELEMENTS(map); i++)
    if (strcmp(name, map[i].name) == 0)
      ds_window_command(w, map[i].command);
}

static void on_reset(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action, (void)parameter;
  ds_window_reset(data);
}

static void on_cancel(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action, (void)parameter;
  ds_window_cancel(data);
}

/* win.toggle-breakpoint: on the selected node; win.toggle-breakpoint-at(i): on scene node i
 * (the node a context menu was opened on, whatever is selected by the time it is chosen). */
static void on_toggle_breakpoint(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action;
  DsWindow *w = data;
  gint index = parameter != NULL ? g_variant_get_int32(parameter)
                                 : ds_graph_canvas_get_selected(DS_GRAPH_CANVAS(w->canvas));
  ds_window_toggle_breakpoint(w, index, NULL);
}

/* ---- bindings ---- */

/* Declared input shapes change every shape: infer again, draw again, and list the symbols
 * the declarations brought. */
static gboolean reinfer(DsWindow *w, GError **error)
{
  const DsGraphShapes *shapes = ds_session_infer_symbolic(w->session, NULL);
  if (shapes == NULL)
    shapes = ds_session_infer_partial(w->session, error);
  if (shapes == NULL)
    return FALSE;
  g_clear_pointer(&w->shapes, ds_graph_shapes_free);
  w->shapes = ds_graph_shapes_copy(shapes);
  DsBindingsPanel *panel = DS_BINDINGS_PANEL(w->bindings);
  ds_bindings_panel_set_session(panel, w->session, w->shapes);
  /* Bind the symbols that just appeared (their defaults, or what was typed). */
  return ds_bindings_panel_apply(panel, error) && ds_window_redraw(w, error);
}

gboolean ds_window_apply_bindings(DsWindow *w, GError **error)
{
  GError *local = NULL;
  if (w->session == NULL || ds_window_is_busy(w)) {
    g_set_error_literal(&local, DS_ERROR, DS_ERROR_INPUT,
                        w->session == NULL ? _("Open a model first")
                                           : _("Wait for the run to stop, or cancel it"));
  } else {
    /* A paused run reads the arrays being replaced: abandon it first. */
    ds_debugger_invalidate(w->debugger);
    w->stopped = FALSE;
    ds_graph_canvas_set_current(DS_GRAPH_CANVAS(w->canvas), -1);
    DsBindingsPanel *panel = DS_BINDINGS_PANEL(w->bindings);
    if (ds_bindings_panel_apply(panel, &local) && ds_bindings_panel_declares_shapes(panel))
      reinfer(w, &local);
  }
  ds_window_update_actions(w);
  if (local != NULL) {
    ds_window_show_banner(w, local->message);
    g_propagate_error(error, local);
    return FALSE;
  }
  ds_window_show_banner(w, NULL);
  set_status(w, _("Bindings applied: the next run or step uses them"));
  return TRUE;
}

/* ---- breakpoints ---- */

void ds_window_update_marks(DsWindow *w)
{
  DsGraphCanvas *canvas = DS_GRAPH_CANVAS(w->canvas);
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  if (scene == NULL || w->debugger == NULL)
    return;
  DsCursor *cursor = ds_debugger_get_cursor(w->debugger);
  g_autofree gboolean *marks = g_new0(gboolean, scene->nodes->len + 1);
  for (guint i = 0; i < w->breakpoints->len; i++) {
    const DsWindowBreakpoint *b = w->breakpoints->pdata[i];
    const DsBreakpoint *bp = ds_cursor_get_breakpoint(cursor, b->id);
    const char *target = bp != NULL ? ds_breakpoint_get_target(bp) : NULL;
    for (guint n = 0; target != NULL && n < scene->nodes->len; n++) {
      const DsVizNode *node = &g_array_index(scene->nodes, DsVizNode, n);
      if (node->node != NULL && !ds_node_is_variable(node->node) &&
          (strcmp(node->node->name, target) == 0 || strcmp(node->node->op_name, target) == 0))
        marks[n] = TRUE;
      else if (node->kind == DS_VIZ_NODE_COLLAPSED && strcmp(node->id, target) == 0)
        marks[n] = TRUE;
    }
  }
  ds_graph_canvas_set_marks(canvas, marks);
}

static void on_remove_clicked(GtkButton *button, DsWindow *w);

static void fill_breakpoint_list(DsWindow *w)
{
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child(w->breakpoint_list)) != NULL)
    gtk_list_box_remove(GTK_LIST_BOX(w->breakpoint_list), child);
  for (guint i = 0; i < w->breakpoints->len; i++) {
    const DsWindowBreakpoint *b = w->breakpoints->pdata[i];
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    GtkWidget *dot = gtk_label_new("●");
    gtk_widget_add_css_class(dot, "error");
    GtkWidget *label = gtk_label_new(b->spec);
    gtk_widget_add_css_class(label, "monospace");
    gtk_label_set_xalign(GTK_LABEL(label), 0);
    gtk_label_set_ellipsize(GTK_LABEL(label), PANGO_ELLIPSIZE_END);
    gtk_widget_set_hexpand(label, TRUE);
    GtkWidget *remove = gtk_button_new_from_icon_name("user-trash-symbolic");
    gtk_widget_add_css_class(remove, "flat");
    gtk_widget_set_tooltip_text(remove, _("Remove this breakpoint"));
    g_object_set_data(G_OBJECT(remove), "breakpoint", GUINT_TO_POINTER(b->id));
    g_signal_connect(remove, "clicked", G_CALLBACK(on_remove_clicked), w);
    gtk_box_append(GTK_BOX(row), dot);
    gtk_box_append(GTK_BOX(row), label);
    gtk_box_append(GTK_BOX(row), remove);
    gtk_list_box_append(GTK_LIST_BOX(w->breakpoint_list), row);
  }
}

static void breakpoints_changed(DsWindow *w)
{
  fill_breakpoint_list(w);
  ds_window_update_marks(w);
  ds_window_inspect(w, ds_graph_canvas_get_selected(DS_GRAPH_CANVAS(w->canvas)));
}

static gboolean may_change_breakpoints(DsWindow *w, GError **error)
{
  if (w->debugger == NULL) {
    g_set_error_literal(error, DS_ERROR, DS_ERROR_INPUT, _("Open a model first"));
    return FALSE;
  }
  if (ds_window_is_busy(w)) {
    g_set_error_literal(error, DS_ERROR, DS_ERROR_INPUT,
                        _("Breakpoints change between steps: wait for the run to stop, or "
                          "cancel it"));
    return FALSE;
  }
  return TRUE;
}

guint ds_window_add_breakpoint(DsWindow *w, const char *spec, GError **error)
{
  GError *local = NULL;
  guint id = may_change_breakpoints(w, &local)
                 ? ds_cursor_add_breakpoint(ds_debugger_get_cursor(w->debugger), spec, &local)
                 : 0;
  if (id == 0) {
    ds_window_show_banner(w, local->message);
    g_propagate_error(error, local);
    return 0;
  }
  DsWindowBreakpoint *b = g_new0(DsWindowBreakpoint, 1);
  b->id = id;
  b->spec = g_strdup(ds_breakpoint_get_spec(ds_cursor_get_breakpoint(
      ds_debugger_get_cursor(w->debugger), id)));
  g_ptr_array_add(w->breakpoints, b);
  ds_window_show_banner(w, NULL);
  breakpoints_changed(w);
  return id;
}

static void remove_breakpoint(DsWindow *w, guint id)
{
  for (guint i = 0; i < w->breakpoints->len; i++) {
    const DsWindowBreakpoint *b = w->breakpoints->pdata[i];
    if (b->id == id) {
      ds_cursor_remove_breakpoint(ds_debugger_get_cursor(w->debugger), id);
      g_ptr_array_remove_index(w->breakpoints, i);
      breakpoints_changed(w);
      return;
    }
  }
}

static void on_remove_clicked(GtkButton *button, DsWindow *w)
{
  guint id = GPOINTER_TO_UINT(g_object_get_data(G_OBJECT(button), "breakpoint"));
  GError *error = NULL;
  if (!may_change_breakpoints(w, &error)) {
    ds_window_show_banner(w, error->message);
    g_error_free(error);
    return;
  }
  remove_breakpoint(w, id);
}

gboolean ds_window_toggle_breakpoint(DsWindow *w, gint index, GError **error)
{
  const DsVizScene *scene = ds_graph_canvas_get_scene(DS_GRAPH_CANVAS(w->canvas));
  const DsVizNode *n =
      scene != NULL && index >= 0 && (guint)index < scene->nodes->len
          ? &g_array_index(scene->nodes, DsVizNode, index)
          : NULL;
  if (n == NULL || n->node == NULL || ds_node_is_variable(n->node)) {
    g_set_error_literal(error, DS_ERROR, DS_ERROR_INPUT, _("Select an op node first"));
    return FALSE;
  }
  GError *local = NULL;
  if (!may_change_breakpoints(w, &local)) {
    ds_window_show_banner(w, local->message);
    g_propagate_error(error, local);
    return FALSE;
  }
  DsCursor *cursor = ds_debugger_get_cursor(w->debugger);
  for (guint i = 0; i < w->breakpoints->len; i++) {
    const DsWindowBreakpoint *b = w->breakpoints->pdata[i];
    const DsBreakpoint *bp = ds_cursor_get_breakpoint(cursor, b->id);
    if (bp != NULL && strcmp(ds_breakpoint_get_target(bp), n->node->name) == 0) {
      remove_breakpoint(w, b->id);
      return TRUE;
    }
  }
  g_autofree char *condition =
      g_strstrip(g_strdup(gtk_editable_get_text(GTK_EDITABLE(w->condition_entry))));
  g_autofree char *spec = condition[0] != '\0'
                              ? g_strdup_printf("%s if %s", n->node->name, condition)
                              : g_strdup(n->node->name);
  return ds_window_add_breakpoint(w, spec, error) != 0;
}

guint ds_window_get_n_breakpoints(DsWindow *w)
{
  return w->breakpoints->len;
}

static void on_add_breakpoint(GtkWidget *widget, DsWindow *w)
{
  (void)widget;
  const char *spec = gtk_editable_get_text(GTK_EDITABLE(w->breakpoint_entry));
  if (spec[0] != '\0' && ds_window_add_breakpoint(w, spec, NULL) != 0)
    gtk_editable_set_text(GTK_EDITABLE(w->breakpoint_entry), "");
}

static void on_toggle_requested(DsGraphCanvas *canvas, gint index, DsWindow *w)
{
  (void)canvas;
  ds_window_toggle_breakpoint(w, index, NULL);
}

static gboolean unparent_later(gpointer popover)
{
  gtk_widget_unparent(popover);
  g_object_unref(popover);
  return G_SOURCE_REMOVE;
}

/* The menu closes before the item chosen in it is activated, and an item finds its action
 * through the widgets it sits in: the menu leaves the canvas only after that. */
static void on_context_menu_closed(GtkPopover *popover, gpointer data)
{
  (void)data;
  g_idle_add(unparent_later, g_object_ref(popover));
}

/* A right click on node `index`: its menu, acting on it. */
static void on_context_menu(DsGraphCanvas *canvas, gint index, double x, double y, DsWindow *w)
{
  (void)w;
  g_autoptr(GMenu) menu = g_menu_new();
  g_autoptr(GMenuItem) toggle = g_menu_item_new(_("Toggle _Breakpoint"), NULL);
  g_menu_item_set_action_and_target_value(toggle, "win.toggle-breakpoint-at",
                                          g_variant_new_int32(index));
  g_menu_append_item(menu, toggle);
  g_menu_append(menu, _("_Continue"), "win.continue");
  GtkWidget *popover = gtk_popover_menu_new_from_model(G_MENU_MODEL(menu));
  gtk_widget_set_parent(popover, GTK_WIDGET(canvas));
  gtk_popover_set_pointing_to(GTK_POPOVER(popover), &(GdkRectangle){(int)x, (int)y, 1, 1});
  gtk_popover_set_has_arrow(GTK_POPOVER(popover), FALSE);
  gtk_widget_set_halign(popover, GTK_ALIGN_START);
  g_signal_connect(popover, "closed", G_CALLBACK(on_context_menu_closed), NULL);
  gtk_popover_popup(GTK_POPOVER(popover));
}

GtkWidget *ds_window_build_breakpoints(DsWindow *w)
{
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8);
  gtk_widget_set_margin_start(box, 12);
  gtk_widget_set_margin_end(box, 12);
  gtk_widget_set_margin_top(box, 12);
  GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  w->breakpoint_entry = gtk_entry_new();
  gtk_entry_set_placeholder_text(GTK_ENTRY(w->breakpoint_entry), _("fc1 if iter==2"));
  gtk_widget_set_tooltip_text(
      w->breakpoint_entry,
      _("A node, op or region name, or *, optionally followed by: if COND && COND; conditions "
        "use iter, nan, inf, min, max, mean, numel or a symbol"));
  gtk_widget_set_hexpand(w->breakpoint_entry, TRUE);
  g_signal_connect(w->breakpoint_entry, "activate", G_CALLBACK(on_add_breakpoint), w);
  GtkWidget *add = gtk_button_new_from_icon_name("list-add-symbolic");
  gtk_widget_set_tooltip_text(add, _("Add the breakpoint"));
  g_signal_connect(add, "clicked", G_CALLBACK(on_add_breakpoint), w);
  gtk_box_append(GTK_BOX(row), w->breakpoint_entry);
  gtk_box_append(GTK_BOX(row), add);
  gtk_box_append(GTK_BOX(box), row);
  w->breakpoint_list = gtk_list_box_new();
  gtk_list_box_set_selection_mode(GTK_LIST_BOX(w->breakpoint_list), GTK_SELECTION_NONE);
  gtk_widget_add_css_class(w->breakpoint_list, "boxed-list");
  gtk_box_append(GTK_BOX(box), w->breakpoint_list);
  GtkWidget *hint = gtk_label_new(_("F9 or a right click on a node toggles its breakpoint."));
  gtk_widget_add_css_class(hint, "dim-label");
  gtk_label_set_wrap(GTK_LABEL(hint), TRUE);
  gtk_label_set_xalign(GTK_LABEL(hint), 0);
  gtk_box_append(GTK_BOX(box), hint);
  g_signal_connect(w->canvas, "toggle-breakpoint", G_CALLBACK(on_toggle_requested), w);
  g_signal_connect(w->canvas, "context-menu", G_CALLBACK(on_context_menu), w);
  return box;
}

/* ---- the status bar ---- */

GtkWidget *ds_window_build_status(DsWindow *w)
{
  GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
  gtk_widget_add_css_class(bar, "toolbar");
  w->status_label = gtk_label_new(_("Open a model to see its graph"));
  gtk_label_set_xalign(GTK_LABEL(w->status_label), 0);
  gtk_label_set_ellipsize(GTK_LABEL(w->status_label), PANGO_ELLIPSIZE_START);
  gtk_label_set_selectable(GTK_LABEL(w->status_label), TRUE);
  gtk_widget_set_hexpand(w->status_label, TRUE);
  w->progress = gtk_progress_bar_new();
  gtk_widget_set_valign(w->progress, GTK_ALIGN_CENTER);
  gtk_widget_set_size_request(w->progress, 160, -1);
  gtk_widget_set_visible(w->progress, FALSE);
  w->cancel_button = gtk_button_new_with_mnemonic(_("_Cancel"));
  gtk_actionable_set_action_name(GTK_ACTIONABLE(w->cancel_button), "win.cancel");
  gtk_widget_set_tooltip_text(w->cancel_button, _("Stop the run before its next node (Esc)"));
  gtk_widget_set_visible(w->cancel_button, FALSE);
  gtk_box_append(GTK_BOX(bar), w->status_label);
  gtk_box_append(GTK_BOX(bar), w->progress);
  gtk_box_append(GTK_BOX(bar), w->cancel_button);
  return bar;
}

/* ---- a model comes and goes ---- */

void ds_window_debug_detach(DsWindow *w)
{
  if (w->debugger != NULL) {
    if (ds_debugger_is_busy(w->debugger)) {
      ds_debugger_cancel(w->debugger);
      while (ds_debugger_is_busy(w->debugger))
        g_main_context_iteration(NULL, TRUE);
    }
    g_signal_handlers_disconnect_by_data(w->debugger, w);
    g_clear_object(&w->debugger);
  }
  show_busy(w, FALSE);
  ds_bindings_panel_set_session(DS_BINDINGS_PANEL(w->bindings), NULL, NULL);
  g_ptr_array_set_size(w->breakpoints, 0);
  fill_breakpoint_list(w);
  g_clear_pointer(&w->profile, g_hash_table_unref);
  w->overlay = DS_VIZ_OVERLAY_NONE;
  GAction *overlay = g_action_map_lookup_action(G_ACTION_MAP(w), "overlay");
  if (overlay != NULL)
    g_simple_action_set_state(G_SIMPLE_ACTION(overlay), g_variant_new_string("none"));
  w->stopped = FALSE;
}

void ds_window_debug_attach(DsWindow *w)
{
  if (w->debugger == NULL) {
    w->debugger = ds_debugger_new(w->session);
    g_signal_connect(w->debugger, "finished", G_CALLBACK(on_finished), w);
    ds_bindings_panel_set_session(DS_BINDINGS_PANEL(w->bindings), w->session,
                                  w->shapes);
  }
  set_status(w, _("Ready: step through it (F10, F11) or run it whole (Ctrl+R)"));
  ds_window_update_actions(w);
}

/* The model was drawn again: the breakpoint marks and the stop's halo go on the new scene. */
static void on_redrawn(DsWindow *w, gpointer data)
{
  (void)data;
  ds_window_update_marks(w);
  if (w->stopped)
    ds_window_show_stop(w);
}

void ds_window_add_debug_actions(DsWindow *w)
{
  g_signal_connect(w, "redrawn", G_CALLBACK(on_redrawn), NULL);
  static const GActionEntry actions[] = {
      {.name = "run", .activate = on_command},
      {.name = "continue", .activate = on_command},
      {.name = "step", .activate = on_command},
      {.name = "step-into", .activate = on_command},
      {.name = "step-out", .activate = on_command},
      {.name = "reset", .activate = on_reset},
      {.name = "cancel", .activate = on_cancel},
      {.name = "toggle-breakpoint", .activate = on_toggle_breakpoint},
      {.name = "toggle-breakpoint-at", .activate = on_toggle_breakpoint, .parameter_type = "i"},
  };
  g_action_map_add_action_entries(G_ACTION_MAP(w), actions, G_N_ELEMENTS(actions), w);
}
