/* ds-window.c: opening a model into the canvas, the inspector and the error banner. */
#include "ds-window.h"

#include <glib/gi18n.h>
#include <string.h>

#include "ds-session.h"

struct _DsWindow {
  GtkApplicationWindow parent;
  GtkWidget *canvas;
  GtkWidget *inspector;
  GtkWidget *banner, *banner_label;
  GtkWidget *title;
  DsSession *session;
  const DsGraphShapes *shapes; /* the session's symbolic shapes, or partial ones */
  gboolean *weights;           /* per graph node: a weight (hidden in big graphs) */
  GPtrArray *expanded;         /* ids of regions and loops the user opened */
  GtkWidget *search_bar, *search_entry;
  GtkWidget *regions; /* GtkListBox: one row per region, loop and body */
};

G_DEFINE_FINAL_TYPE(DsWindow, ds_window, GTK_TYPE_APPLICATION_WINDOW)

/* ---- the banner ---- */

static void show_banner(DsWindow *w, const char *message)
{
  gtk_label_set_text(GTK_LABEL(w->banner_label), message);
  gtk_revealer_set_reveal_child(GTK_REVEALER(w->banner), message != NULL);
}

static void on_banner_close(GtkButton *button, DsWindow *w)
{
  (void)button;
  show_banner(w, NULL);
}

const char *ds_window_get_banner_text(DsWindow *w)
{
  return gtk_revealer_get_reveal_child(GTK_REVEALER(w->banner))
             ? gtk_label_get_text(GTK_LABEL(w->banner_label))
             : NULL;
}

/* ---- the inspector ---- */

static void append_entry(GString *text, DsGraph *graph, const DsGraphShapes *shapes,
                         const char *role, guint k, DsEntry entry)
{
  g_autofree char *name = ds_graph_dup_entry_name(graph, entry);
  g_autofree char *shape = NULL;
  if (shapes != NULL) {
    const DsShape *s = &shapes->shapes[ds_graph_entry_id(graph, entry)];
    if (s->ndim >= 0)
      shape = ds_shape_to_string(s);
  }
  g_autofree char *escaped = g_markup_escape_text(name, -1);
  g_string_append_printf(text, "  %s %u  <tt>%s</tt>  %s\n", role, k, escaped,
                         shape != NULL ? shape : "?");
}

static void inspect(DsWindow *w, gint index)
{
  const DsVizScene *scene = ds_graph_canvas_get_scene(DS_GRAPH_CANVAS(w->canvas));
  if (scene == NULL || index < 0) {
    gtk_label_set_markup(GTK_LABEL(w->inspector),
                         _("<i>Select a node to see its op, attributes and shapes.</i>"));
    return;
  }
  const DsVizNode *n = &g_array_index(scene->nodes, DsVizNode, index);
  g_autoptr(GString) text = g_string_new(NULL);
  g_autofree char *id = g_markup_escape_text(n->id, -1);
  g_string_append_printf(text, "<b>%s</b>\n", id);
  const DsNode *node = n->node;
  DsGraph *graph = ds_session_get_graph(w->session);
  /* Shapes are the model graph's: nodes inside loop bodies have none here. */
  gboolean top = node != NULL && node->id < graph->n_nodes && graph->nodes[node->id] == node;
  if (node == NULL) {
    g_string_append(text, _("A collapsed region or loop: double-click it to expand it.\n"));
  } else if (ds_node_is_variable(node)) {
    g_string_append(text, _("input\n"));
    if (top)
      append_entry(text, graph, w->shapes, _("shape"), 0, (DsEntry){.node_id = node->id});
  } else {
    g_autofree char *op = g_markup_escape_text(node->op_name, -1);
    g_string_append_printf(text, "%s <tt>%s</tt>\n\n<b>%s</b>\n", _("op"), op, _("attributes"));
    for (guint a = 0; a < node->n_attrs; a++) {
      if (g_str_has_prefix(node->attrs[a].key, "__"))
        continue;
      g_autofree char *key = g_markup_escape_text(node->attrs[a].key, -1);
      g_autofree char *value = g_markup_escape_text(node->attrs[a].value, -1);
      g_string_append_printf(text, "  %s = <tt>%s</tt>\n", key, value);
    }
    if (top) {
      g_string_append_printf(text, "\n<b>%s</b>\n", _("inputs"));
      for (guint k = 0; k < node->n_inputs; k++)
        append_entry(text, graph, w->shapes, _("in"), k, node->inputs[k]);
      g_string_append_printf(text, "\n<b>%s</b>\n", _("outputs"));
      for (guint k = 0; k < ds_node_n_op_outputs(node); k++)
        append_entry(text, graph, w->shapes, _("out"), k,
                     (DsEntry){.node_id = node->id, .index = k});
    }
  }
  gtk_label_set_markup(GTK_LABEL(w->inspector), text->str);
}

static void on_node_selected(DsGraphCanvas *canvas, gint index, DsWindow *w)
{
  (void)canvas;
  inspect(w, index);
}

const char *ds_window_get_inspector_text(DsWindow *w)
{
  return gtk_label_get_text(GTK_LABEL(w->inspector));
}

/* ---- opening ---- */

/* ---- the regions tree ---- */

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

static void on_region_selected(GtkListBox *list, GtkListBoxRow *row, DsWindow *w)
{
  (void)list;
  if (row == NULL)
    return;
  GtkWidget *label = gtk_list_box_row_get_child(row);
  gint cluster = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(label), "cluster")) - 1;
  gint node = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(label), "node")) - 1;
  DsGraphCanvas *canvas = DS_GRAPH_CANVAS(w->canvas);
  const DsVizLayout *layout = ds_graph_canvas_get_layout(canvas);
  if (cluster >= 0)
    ds_graph_canvas_focus_box(canvas, &layout->clusters[cluster].box);
  else if (node >= 0)
    ds_graph_canvas_select(canvas, node, TRUE);
}

guint ds_window_get_n_regions(DsWindow *w)
{
  guint n = 0;
  for (GtkWidget *c = gtk_widget_get_first_child(w->regions); c != NULL;
       c = gtk_widget_get_next_sibling(c))
    n++;
  return n;
}

void ds_window_select_region(DsWindow *w, guint index)
{
  GtkListBoxRow *row = gtk_list_box_get_row_at_index(GTK_LIST_BOX(w->regions), (int)index);
  if (row != NULL)
    gtk_list_box_select_row(GTK_LIST_BOX(w->regions), row);
}

/* The scene of the open model, laid out, with what the user expanded. */
static gboolean draw(DsWindow *w, DsSession *session, const DsGraphShapes *shapes,
                     const gboolean *weights, GError **error)
{
  g_ptr_array_add(w->expanded, NULL);
  DsVizOptions options = {.partition = ds_session_get_file_partition(session),
                          .symbolic = shapes,
                          .is_weight = weights,
                          .show_weights = -1,
                          .expand = (const char *const *)w->expanded->pdata};
  g_autoptr(DsVizScene) scene = ds_viz_scene_build(ds_session_get_graph(session), &options, error);
  g_ptr_array_remove_index(w->expanded, w->expanded->len - 1);
  g_autoptr(DsVizLayout) layout = scene != NULL ? ds_viz_layout(scene, error) : NULL;
  if (layout == NULL)
    return FALSE;
  ds_graph_canvas_set_graph(DS_GRAPH_CANVAS(w->canvas), g_steal_pointer(&scene),
                            g_steal_pointer(&layout));
  fill_regions(w);
  return TRUE;
}

gboolean ds_window_open(DsWindow *w, const char *path, GError **error)
{
  GError *local = NULL;
  g_autoptr(DsSession) session = ds_session_new(path, &local);
  const DsGraphShapes *shapes = NULL;
  g_autofree gboolean *weights = NULL;
  if (session != NULL) {
    shapes = ds_session_infer_symbolic(session, NULL);
    if (shapes == NULL)
      shapes = ds_session_infer_partial(session, &local);
  }
  if (local == NULL) {
    DsGraph *graph = ds_session_get_graph(session);
    weights = g_new0(gboolean, graph->n_nodes + 1);
    for (guint i = 0; i < graph->n_nodes; i++)
      weights[i] = ds_node_is_variable(graph->nodes[i]) &&
                   ds_session_classify_variable(session, graph->nodes[i]) != DS_VARIABLE_DATA;
    g_ptr_array_set_size(w->expanded, 0);
    draw(w, session, shapes, weights, &local);
  }
  if (local != NULL) {
    show_banner(w, local->message);
    g_propagate_error(error, local);
    return FALSE;
  }
  show_banner(w, NULL);
  if (w->session != NULL)
    ds_session_free(w->session);
  w->session = g_steal_pointer(&session);
  w->shapes = shapes;
  g_free(w->weights);
  w->weights = g_steal_pointer(&weights);
  g_autofree char *base = g_path_get_basename(path);
  gtk_window_set_title(GTK_WINDOW(w), base);
  gtk_label_set_text(GTK_LABEL(w->title), base);
  inspect(w, -1);
  g_autofree char *uri = g_filename_to_uri(path, NULL, NULL);
  if (uri != NULL)
    gtk_recent_manager_add_item(gtk_recent_manager_get_default(), uri);
  return TRUE;
}

static void on_open_response(GtkNativeDialog *dialog, int response, DsWindow *w)
{
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
    g_autofree char *path = file != NULL ? g_file_get_path(file) : NULL;
    if (path != NULL)
      ds_window_open(w, path, NULL);
  }
  g_object_unref(dialog);
}

static void on_open_clicked(GtkButton *button, DsWindow *w)
{
  (void)button; /* NULL from the Ctrl+O action */
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new(
      _("Open a model"), GTK_WINDOW(w), GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  GtkFileFilter *filter = gtk_file_filter_new();
  gtk_file_filter_set_name(filter, _("Model graphs (JSON)"));
  gtk_file_filter_add_pattern(filter, "*.json");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), filter);
  g_signal_connect(dialog, "response", G_CALLBACK(on_open_response), w);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}

static gboolean on_drop(GtkDropTarget *target, const GValue *value, double x, double y, DsWindow *w)
{
  (void)target, (void)x, (void)y;
  GSList *files = g_value_get_boxed(value);
  g_autofree char *path = files != NULL ? g_file_get_path(files->data) : NULL;
  return path != NULL && ds_window_open(w, path, NULL);
}

/* Double-click on a collapsed region or loop: draw it open. */
static void on_expand(DsGraphCanvas *canvas, const char *id, DsWindow *w)
{
  (void)canvas;
  if (w->session == NULL)
    return;
  g_ptr_array_add(w->expanded, g_strdup(id));
  GError *error = NULL;
  if (!draw(w, w->session, w->shapes, w->weights, &error)) {
    show_banner(w, error->message);
    g_error_free(error);
  }
}

/* ---- finding nodes (Ctrl+F) ---- */

static gboolean node_matches(const DsVizNode *n, const char *needle)
{
  g_autofree char *id = g_utf8_casefold(n->id, -1);
  if (strstr(id, needle) != NULL)
    return TRUE;
  if (n->node == NULL || n->node->op_name == NULL)
    return FALSE;
  g_autofree char *op = g_utf8_casefold(n->node->op_name, -1);
  return strstr(op, needle) != NULL;
}

gint ds_window_search(DsWindow *w, const char *text, gboolean next)
{
  DsGraphCanvas *canvas = DS_GRAPH_CANVAS(w->canvas);
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  if (scene == NULL || text == NULL || text[0] == '\0')
    return -1;
  g_autofree char *needle = g_utf8_casefold(text, -1);
  guint n = scene->nodes->len;
  gint from = ds_graph_canvas_get_selected(canvas);
  /* From the selection on (after it for "next"), wrapping around. */
  guint start = from < 0 ? 0 : (guint)from + (next ? 1 : 0);
  for (guint k = 0; k < n; k++) {
    guint i = (start + k) % n;
    if (node_matches(&g_array_index(scene->nodes, DsVizNode, i), needle)) {
      ds_graph_canvas_select(canvas, (gint)i, TRUE);
      return (gint)i;
    }
  }
  return -1;
}

static void on_search_changed(GtkSearchEntry *entry, DsWindow *w)
{
  gint found = ds_window_search(w, gtk_editable_get_text(GTK_EDITABLE(entry)), FALSE);
  if (found < 0)
    gtk_widget_add_css_class(GTK_WIDGET(entry), "error");
  else
    gtk_widget_remove_css_class(GTK_WIDGET(entry), "error");
}

static void on_search_next(GtkSearchEntry *entry, DsWindow *w)
{
  ds_window_search(w, gtk_editable_get_text(GTK_EDITABLE(entry)), TRUE);
}

static void on_find(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action, (void)parameter;
  DsWindow *w = data;
  gtk_search_bar_set_search_mode(GTK_SEARCH_BAR(w->search_bar), TRUE);
  gtk_widget_grab_focus(w->search_entry);
}

static void on_open_action(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action, (void)parameter;
  on_open_clicked(NULL, data);
}

/* ---- the window ---- */

DsGraphCanvas *ds_window_get_canvas(DsWindow *w)
{
  return DS_GRAPH_CANVAS(w->canvas);
}

static void window_dispose(GObject *object)
{
  DsWindow *w = DS_WINDOW(object);
  g_clear_pointer(&w->session, ds_session_free);
  g_clear_pointer(&w->weights, g_free);
  g_clear_pointer(&w->expanded, g_ptr_array_unref);
  G_OBJECT_CLASS(ds_window_parent_class)->dispose(object);
}

static void ds_window_class_init(DsWindowClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = window_dispose;
}

static void ds_window_init(DsWindow *w)
{
  w->expanded = g_ptr_array_new_with_free_func(g_free);
  gtk_window_set_default_size(GTK_WINDOW(w), 1200, 800);
  gtk_window_set_title(GTK_WINDOW(w), "dynscope");

  GtkWidget *header = gtk_header_bar_new();
  GtkWidget *open = gtk_button_new_with_mnemonic(_("_Open"));
  gtk_widget_set_tooltip_text(open, _("Open a model (Ctrl+O)"));
  g_signal_connect(open, "clicked", G_CALLBACK(on_open_clicked), w);
  gtk_header_bar_pack_start(GTK_HEADER_BAR(header), open);
  w->title = gtk_label_new("dynscope");
  gtk_widget_add_css_class(w->title, "title");
  gtk_header_bar_set_title_widget(GTK_HEADER_BAR(header), w->title);
  gtk_window_set_titlebar(GTK_WINDOW(w), header);

  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
  w->banner = gtk_revealer_new();
  GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_add_css_class(bar, "error");
  gtk_widget_set_margin_start(bar, 12);
  gtk_widget_set_margin_end(bar, 6);
  gtk_widget_set_margin_top(bar, 6);
  gtk_widget_set_margin_bottom(bar, 6);
  w->banner_label = gtk_label_new(NULL);
  gtk_label_set_wrap(GTK_LABEL(w->banner_label), TRUE);
  gtk_label_set_selectable(GTK_LABEL(w->banner_label), TRUE);
  gtk_label_set_xalign(GTK_LABEL(w->banner_label), 0);
  gtk_widget_set_hexpand(w->banner_label, TRUE);
  GtkWidget *close = gtk_button_new_from_icon_name("window-close-symbolic");
  gtk_widget_set_tooltip_text(close, _("Dismiss"));
  g_signal_connect(close, "clicked", G_CALLBACK(on_banner_close), w);
  gtk_box_append(GTK_BOX(bar), w->banner_label);
  gtk_box_append(GTK_BOX(bar), close);
  gtk_revealer_set_child(GTK_REVEALER(w->banner), bar);
  gtk_box_append(GTK_BOX(box), w->banner);

  w->search_entry = gtk_search_entry_new();
  gtk_widget_set_tooltip_text(w->search_entry, _("Find a node by name or op (Enter: next)"));
  gtk_widget_set_size_request(w->search_entry, 360, -1);
  g_signal_connect(w->search_entry, "search-changed", G_CALLBACK(on_search_changed), w);
  g_signal_connect(w->search_entry, "activate", G_CALLBACK(on_search_next), w);
  w->search_bar = gtk_search_bar_new();
  gtk_search_bar_set_child(GTK_SEARCH_BAR(w->search_bar), w->search_entry);
  gtk_search_bar_connect_entry(GTK_SEARCH_BAR(w->search_bar), GTK_EDITABLE(w->search_entry));
  gtk_search_bar_set_show_close_button(GTK_SEARCH_BAR(w->search_bar), TRUE);
  gtk_box_append(GTK_BOX(box), w->search_bar);

  GtkWidget *paned = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
  w->canvas = ds_graph_canvas_new();
  g_signal_connect(w->canvas, "node-selected", G_CALLBACK(on_node_selected), w);
  g_signal_connect(w->canvas, "expand-requested", G_CALLBACK(on_expand), w);
  gtk_paned_set_start_child(GTK_PANED(paned), w->canvas);
  gtk_paned_set_resize_start_child(GTK_PANED(paned), TRUE);
  w->inspector = gtk_label_new(NULL);
  gtk_label_set_wrap(GTK_LABEL(w->inspector), TRUE);
  gtk_label_set_selectable(GTK_LABEL(w->inspector), TRUE);
  gtk_label_set_xalign(GTK_LABEL(w->inspector), 0);
  gtk_label_set_yalign(GTK_LABEL(w->inspector), 0);
  gtk_widget_set_margin_start(w->inspector, 12);
  gtk_widget_set_margin_end(w->inspector, 12);
  gtk_widget_set_margin_top(w->inspector, 12);
  GtkWidget *scroll = gtk_scrolled_window_new();
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), w->inspector);
  w->regions = gtk_list_box_new();
  gtk_list_box_set_selection_mode(GTK_LIST_BOX(w->regions), GTK_SELECTION_SINGLE);
  g_signal_connect(w->regions, "row-selected", G_CALLBACK(on_region_selected), w);
  GtkWidget *regions_scroll = gtk_scrolled_window_new();
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(regions_scroll), w->regions);
  GtkWidget *stack = gtk_stack_new();
  gtk_stack_add_titled(GTK_STACK(stack), scroll, "inspector", _("Node"));
  gtk_stack_add_titled(GTK_STACK(stack), regions_scroll, "regions", _("Regions"));
  gtk_widget_set_vexpand(stack, TRUE);
  GtkWidget *switcher = gtk_stack_switcher_new();
  gtk_stack_switcher_set_stack(GTK_STACK_SWITCHER(switcher), GTK_STACK(stack));
  gtk_widget_set_halign(switcher, GTK_ALIGN_CENTER);
  gtk_widget_set_margin_top(switcher, 6);
  GtkWidget *sidebar = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
  gtk_box_append(GTK_BOX(sidebar), switcher);
  gtk_box_append(GTK_BOX(sidebar), stack);
  gtk_widget_set_size_request(sidebar, 320, -1);
  gtk_paned_set_end_child(GTK_PANED(paned), sidebar);
  gtk_paned_set_resize_end_child(GTK_PANED(paned), FALSE);
  gtk_paned_set_position(GTK_PANED(paned), 860);
  gtk_widget_set_vexpand(paned, TRUE);
  gtk_box_append(GTK_BOX(box), paned);
  gtk_window_set_child(GTK_WINDOW(w), box);
  inspect(w, -1);

  static const GActionEntry actions[] = {{.name = "find", .activate = on_find},
                                         {.name = "open", .activate = on_open_action}};
  g_action_map_add_action_entries(G_ACTION_MAP(w), actions, G_N_ELEMENTS(actions), w);
  GtkEventController *shortcuts = gtk_shortcut_controller_new();
  gtk_shortcut_controller_add_shortcut(
      GTK_SHORTCUT_CONTROLLER(shortcuts),
      gtk_shortcut_new(gtk_shortcut_trigger_parse_string("<Control>f"),
                       gtk_named_action_new("win.find")));
  gtk_shortcut_controller_add_shortcut(
      GTK_SHORTCUT_CONTROLLER(shortcuts),
      gtk_shortcut_new(gtk_shortcut_trigger_parse_string("<Control>o"),
                       gtk_named_action_new("win.open")));
  gtk_shortcut_controller_set_scope(GTK_SHORTCUT_CONTROLLER(shortcuts), GTK_SHORTCUT_SCOPE_MANAGED);
  gtk_widget_add_controller(GTK_WIDGET(w), shortcuts);

  GtkDropTarget *drop = gtk_drop_target_new(GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect(drop, "drop", G_CALLBACK(on_drop), w);
  gtk_widget_add_controller(GTK_WIDGET(w), GTK_EVENT_CONTROLLER(drop));
}

DsWindow *ds_window_new(GtkApplication *app)
{
  return g_object_new(DS_TYPE_WINDOW, "application", app, NULL);
}
