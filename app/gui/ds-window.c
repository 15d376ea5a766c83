/* ds-window.c: building the window, its actions and its file dialogs; the parts it is built
 * from are the ds-window-*.c files, which call one way, lowest first: view, inspector, debug,
 * recent, then open, device, backward and export (ds-window-private.h). */
#include "ds-window-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "ds-gui-resources.h"

G_DEFINE_FINAL_TYPE(DsWindow, ds_window, GTK_TYPE_APPLICATION_WINDOW)

/* ---- the banner ---- */

static void on_banner_close(GtkButton *button, DsWindow *w)
{
  (void)button;
  ds_window_show_banner(w, NULL);
}

const char *ds_window_get_subtitle_text(DsWindow *w)
{
  return gtk_label_get_text(GTK_LABEL(w->subtitle));
}

const char *ds_window_get_banner_text(DsWindow *w)
{
  return gtk_revealer_get_reveal_child(GTK_REVEALER(w->banner))
             ? gtk_label_get_text(GTK_LABEL(w->banner_label))
             : NULL;
}

/* ---- the regions tree ---- */

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

static void on_open(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action, (void)parameter;
  DsWindow *w = data;
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new(
      _("Open a model"), GTK_WINDOW(w), GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  GtkFileFilter *filter = gtk_file_filter_new();
  gtk_file_filter_set_name(filter, _("Models (MXNet JSON, ONNX)"));
  gtk_file_filter_add_pattern(filter, "*.json");
  gtk_file_filter_add_pattern(filter, "*.onnx");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), filter);
  GtkFileFilter *all = gtk_file_filter_new();
  gtk_file_filter_set_name(all, _("All files"));
  gtk_file_filter_add_pattern(all, "*");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), all);
  g_autofree char *folder = ds_window_state_get_folder();
  if (folder != NULL) {
    g_autoptr(GFile) dir = g_file_new_for_path(folder);
    gtk_file_chooser_set_current_folder(GTK_FILE_CHOOSER(dialog), dir, NULL);
  }
  g_signal_connect(dialog, "response", G_CALLBACK(on_open_response), w);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}

static void on_weights_response(GtkNativeDialog *dialog, int response, DsWindow *w)
{
  if (response == GTK_RESPONSE_ACCEPT && w->path != NULL) {
    g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
    g_autofree char *weights = file != NULL ? g_file_get_path(file) : NULL;
    g_autofree char *model = g_strdup(w->path);
    if (weights != NULL)
      ds_window_open_with_weights(w, model, weights, NULL);
  }
  g_object_unref(dialog);
}

/* win.open-weights: another .params file for the open model. */
static void on_open_weights(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action, (void)parameter;
  DsWindow *w = data;
  GtkFileChooserNative *dialog =
      gtk_file_chooser_native_new(_("Open weights for the model"), GTK_WINDOW(w),
                                  GTK_FILE_CHOOSER_ACTION_OPEN, _("_Open"), _("_Cancel"));
  GtkFileFilter *filter = gtk_file_filter_new();
  gtk_file_filter_set_name(filter, _("MXNet weights (.params)"));
  gtk_file_filter_add_pattern(filter, "*.params");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(dialog), filter);
  if (w->path != NULL) {
    g_autofree char *folder = g_path_get_dirname(w->path);
    g_autoptr(GFile) dir = g_file_new_for_path(folder);
    gtk_file_chooser_set_current_folder(GTK_FILE_CHOOSER(dialog), dir, NULL);
  }
  g_signal_connect(dialog, "response", G_CALLBACK(on_weights_response), w);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}

static gboolean on_drop(GtkDropTarget *target, const GValue *value, double x, double y, DsWindow *w)
{
  (void)target, (void)x, (void)y;
  GSList *files = g_value_get_boxed(value);
  g_autofree char *path = files != NULL ? g_file_get_path(files->data) : NULL;
  return path != NULL && ds_window_open(w, path, NULL);
}

/* Double-click on a collapsed region, loop or group: draw it open, its top where the box's top
 * was, so that the picture around it does not jump. */
static void on_expand(DsGraphCanvas *canvas, const char *id, DsWindow *w)
{
  if (w->session == NULL)
    return;
  gint box = ds_window_find_scene_node(w, id);
  double x = 0, y = 0;
  gboolean anchored = box >= 0;
  if (anchored) {
    const DsVizBox *b = &ds_graph_canvas_get_layout(canvas)->nodes[box].box;
    ds_graph_canvas_to_widget(canvas, b->x, b->y - b->height / 2, &x, &y);
  }
  g_autofree char *opened = g_strdup(id);
  g_ptr_array_add(w->expanded, g_strdup(id));
  GError *error = NULL;
  if (!ds_window_redraw(w, &error)) {
    ds_window_show_banner(w, error->message);
    g_error_free(error);
    return;
  }
  gint cluster = ds_viz_scene_find_cluster(ds_graph_canvas_get_scene(canvas), opened);
  if (anchored && cluster >= 0) {
    const DsVizBox *c = &ds_graph_canvas_get_layout(canvas)->clusters[cluster].box;
    ds_graph_canvas_anchor(canvas, c->x, c->y - c->height / 2, x, y);
  }
}

static void on_node_selected(DsGraphCanvas *canvas, gint index, DsWindow *w)
{
  (void)canvas;
  ds_window_inspect(w, index);
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

/* Per scene node whether it matches, and how many do, counting nodes inside collapsed
 * groups (by name); the first of those in *hidden (borrowed from the scene), or NULL. */
static gboolean *find_matches(const DsVizScene *scene, const char *needle, guint *n_visible,
                              guint *n_hidden, const char **hidden)
{
  gboolean *matches = g_new0(gboolean, scene->nodes->len + 1);
  *n_visible = *n_hidden = 0;
  *hidden = NULL;
  for (guint i = 0; i < scene->nodes->len; i++)
    *n_visible += matches[i] = node_matches(&g_array_index(scene->nodes, DsVizNode, i), needle);
  GHashTableIter iter;
  gpointer name;
  g_hash_table_iter_init(&iter, scene->hidden_in);
  while (g_hash_table_iter_next(&iter, &name, NULL)) {
    g_autofree char *folded = g_utf8_casefold(name, -1);
    if (strstr(folded, needle) == NULL)
      continue;
    if (*hidden == NULL || strcmp(name, *hidden) < 0)
      *hidden = name;
    (*n_hidden)++;
  }
  return matches;
}

gint ds_window_search(DsWindow *w, const char *text, gint step)
{
  DsGraphCanvas *canvas = DS_GRAPH_CANVAS(w->canvas);
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  w->n_matches = 0;
  if (scene == NULL || text == NULL || text[0] == '\0') {
    ds_graph_canvas_set_matches(canvas, NULL);
    gtk_label_set_text(GTK_LABEL(w->search_count), NULL);
    return -1;
  }
  g_autofree char *needle = g_utf8_casefold(text, -1);
  guint n_visible, n_hidden;
  const char *hidden;
  g_autofree gboolean *matches = find_matches(scene, needle, &n_visible, &n_hidden, &hidden);
  if (n_visible == 0 && hidden != NULL) {
    /* Only inside collapsed layer groups: open the first one's group. */
    g_autofree char *name = g_strdup(hidden);
    g_ptr_array_add(w->expanded, g_strdup(g_hash_table_lookup(scene->hidden_in, name)));
    if (ds_window_redraw(w, NULL)) {
      scene = ds_graph_canvas_get_scene(canvas);
      g_free(matches);
      matches = find_matches(scene, needle, &n_visible, &n_hidden, &hidden);
    }
  }
  ds_graph_canvas_set_matches(canvas, matches);
  w->n_matches = n_visible + n_hidden;
  guint n = scene->nodes->len;
  gint from = ds_graph_canvas_get_selected(canvas);
  gint found = -1;
  guint rank = 0;
  /* From the selection on (after or before it for next and previous), wrapping around. */
  for (guint k = 0; k < n && found < 0; k++) {
    guint i;
    if (step >= 0)
      i = (guint)(((from < 0 ? 0 : from + step) + (gint)k) % (gint)n);
    else
      i = (guint)((((from < 0 ? 0 : from) - 1 - (gint)k) % (gint)n + (gint)n) % (gint)n);
    if (matches[i])
      found = (gint)i;
  }
  for (gint i = 0; i <= found; i++)
    rank += matches[i];
  if (found >= 0)
    ds_graph_canvas_select(canvas, found, TRUE);
  g_autofree char *count =
      found >= 0 ? g_strdup_printf(
                       /* TRANSLATORS: the search bar's count: "3 of 12" */
                       _("%u of %u"), rank, w->n_matches)
                 : g_strdup(w->n_matches > 0 ? "" : _("No match"));
  gtk_label_set_text(GTK_LABEL(w->search_count), count);
  return found;
}

guint ds_window_get_n_matches(DsWindow *w)
{
  return w->n_matches;
}

static void on_search_changed(GtkSearchEntry *entry, DsWindow *w)
{
  gint found = ds_window_search(w, gtk_editable_get_text(GTK_EDITABLE(entry)), 0);
  if (found < 0 && gtk_editable_get_text(GTK_EDITABLE(entry))[0] != '\0')
    gtk_widget_add_css_class(GTK_WIDGET(entry), "error");
  else
    gtk_widget_remove_css_class(GTK_WIDGET(entry), "error");
}

static void on_search_next(GtkSearchEntry *entry, DsWindow *w)
{
  ds_window_search(w, gtk_editable_get_text(GTK_EDITABLE(entry)), 1);
}

static void on_search_previous(GtkSearchEntry *entry, DsWindow *w)
{
  ds_window_search(w, gtk_editable_get_text(GTK_EDITABLE(entry)), -1);
}

/* Closing the search bar takes the highlights away. */
static void on_search_mode(GtkSearchBar *bar, GParamSpec *pspec, DsWindow *w)
{
  (void)pspec;
  if (!gtk_search_bar_get_search_mode(bar)) {
    ds_graph_canvas_set_matches(DS_GRAPH_CANVAS(w->canvas), NULL);
    w->n_matches = 0;
  }
}

static void on_find(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action, (void)parameter;
  DsWindow *w = data;
  gtk_search_bar_set_search_mode(GTK_SEARCH_BAR(w->search_bar), TRUE);
  gtk_widget_grab_focus(w->search_entry);
}

/* ---- the window ---- */

DsGraphCanvas *ds_window_get_canvas(DsWindow *w)
{
  return DS_GRAPH_CANVAS(w->canvas);
}

DsBindingsPanel *ds_window_get_bindings(DsWindow *w)
{
  return DS_BINDINGS_PANEL(w->bindings);
}

DsDebugger *ds_window_get_debugger(DsWindow *w)
{
  return w->debugger;
}

DsSession *ds_window_get_session(DsWindow *w)
{
  return w->session;
}

const char *ds_window_get_weights(DsWindow *w)
{
  return w->weights_path;
}

static gboolean on_close_request(GtkWindow *window, gpointer data)
{
  (void)data;
  ds_window_state_save(window);
  return FALSE;
}

static void window_dispose(GObject *object)
{
  DsWindow *w = DS_WINDOW(object);
  if (w->expanded != NULL) {
    ds_window_debug_detach(w);
    g_clear_pointer(&w->session, ds_session_free);
  }
  g_clear_pointer(&w->shapes, ds_graph_shapes_free);
  g_clear_pointer(&w->weights, g_free);
  g_clear_pointer(&w->weights_path, g_free);
  g_clear_pointer(&w->expanded, g_ptr_array_unref);
  g_clear_pointer(&w->scene_index, g_hash_table_unref);
  g_clear_pointer(&w->breakpoints, g_ptr_array_unref);
  g_clear_pointer(&w->path, g_free);
  g_clear_pointer(&w->backward, g_free);
  G_OBJECT_CLASS(ds_window_parent_class)->dispose(object);
}

static void ds_window_class_init(DsWindowClass *klass)
{
  G_OBJECT_CLASS(klass)->dispose = window_dispose;
  /* After the open model was drawn again (ds_window_redraw): the parts that mark the picture
   * update their marks. */
  g_signal_new("redrawn", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
               G_TYPE_NONE, 0);
  /* The shortcuts window and the app icon are built in (GtkApplication adds the icon path
   * too, but only once it runs). */
  ds_gui_register_resource();
  GdkDisplay *display = gdk_display_get_default();
  if (display != NULL) {
    gtk_icon_theme_add_resource_path(gtk_icon_theme_get_for_display(display),
                                     "/org/dynscope/Dynscope/icons");
    GtkCssProvider *css = gtk_css_provider_new();
    gtk_css_provider_load_from_resource(css, "/org/dynscope/Dynscope/ds-window.css");
    gtk_style_context_add_provider_for_display(display, GTK_STYLE_PROVIDER(css),
                                               GTK_STYLE_PROVIDER_PRIORITY_APPLICATION);
    g_object_unref(css);
  }
}

static GtkWidget *build_banner(DsWindow *w)
{
  w->banner = gtk_revealer_new();
  GtkWidget *bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  gtk_widget_add_css_class(bar, "error");
  gtk_widget_add_css_class(bar, "banner");
  gtk_widget_set_margin_start(bar, 12);
  gtk_widget_set_margin_end(bar, 6);
  gtk_widget_set_margin_top(bar, 6);
  gtk_widget_set_margin_bottom(bar, 6);
  GtkWidget *icon = gtk_image_new_from_icon_name("dialog-error-symbolic");
  w->banner_label = gtk_label_new(NULL);
  gtk_label_set_wrap(GTK_LABEL(w->banner_label), TRUE);
  gtk_label_set_selectable(GTK_LABEL(w->banner_label), TRUE);
  gtk_label_set_xalign(GTK_LABEL(w->banner_label), 0);
  gtk_widget_set_hexpand(w->banner_label, TRUE);
  GtkWidget *close = gtk_button_new_from_icon_name("window-close-symbolic");
  gtk_widget_add_css_class(close, "flat");
  gtk_widget_set_tooltip_text(close, _("Dismiss"));
  g_signal_connect(close, "clicked", G_CALLBACK(on_banner_close), w);
  gtk_box_append(GTK_BOX(bar), icon);
  gtk_box_append(GTK_BOX(bar), w->banner_label);
  gtk_box_append(GTK_BOX(bar), close);
  gtk_revealer_set_child(GTK_REVEALER(w->banner), bar);
  return w->banner;
}

static GtkWidget *build_search(DsWindow *w)
{
  w->search_entry = gtk_search_entry_new();
  gtk_widget_set_tooltip_text(w->search_entry,
                              _("Find a node by name or op (Enter: next, Shift+Enter: previous); "
                                "every match is outlined"));
  gtk_widget_set_size_request(w->search_entry, 360, -1);
  g_signal_connect(w->search_entry, "search-changed", G_CALLBACK(on_search_changed), w);
  g_signal_connect(w->search_entry, "activate", G_CALLBACK(on_search_next), w);
  g_signal_connect(w->search_entry, "next-match", G_CALLBACK(on_search_next), w);
  g_signal_connect(w->search_entry, "previous-match", G_CALLBACK(on_search_previous), w);
  w->search_count = gtk_label_new(NULL);
  gtk_widget_add_css_class(w->search_count, "dim-label");
  gtk_widget_add_css_class(w->search_count, "numeric");
  GtkWidget *previous = gtk_button_new_from_icon_name("go-up-symbolic");
  gtk_widget_set_tooltip_text(previous, _("Previous match (Shift+Enter)"));
  g_signal_connect_swapped(previous, "clicked", G_CALLBACK(on_search_previous), w);
  GtkWidget *next = gtk_button_new_from_icon_name("go-down-symbolic");
  gtk_widget_set_tooltip_text(next, _("Next match (Enter)"));
  g_signal_connect_swapped(next, "clicked", G_CALLBACK(on_search_next), w);
  GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *arrows = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_add_css_class(arrows, "linked");
  gtk_box_append(GTK_BOX(arrows), previous);
  gtk_box_append(GTK_BOX(arrows), next);
  gtk_box_append(GTK_BOX(row), w->search_entry);
  gtk_box_append(GTK_BOX(row), arrows);
  gtk_box_append(GTK_BOX(row), w->search_count);
  w->search_bar = gtk_search_bar_new();
  gtk_search_bar_set_child(GTK_SEARCH_BAR(w->search_bar), row);
  g_signal_connect(w->search_bar, "notify::search-mode-enabled", G_CALLBACK(on_search_mode), w);
  gtk_search_bar_connect_entry(GTK_SEARCH_BAR(w->search_bar), GTK_EDITABLE(w->search_entry));
  gtk_search_bar_set_show_close_button(GTK_SEARCH_BAR(w->search_bar), TRUE);
  return w->search_bar;
}

static GtkWidget *icon_button(const char *icon, const char *tooltip, const char *action)
{
  GtkWidget *button = gtk_button_new_from_icon_name(icon);
  gtk_widget_set_tooltip_text(button, tooltip);
  gtk_actionable_set_action_name(GTK_ACTIONABLE(button), action);
  return button;
}

static GMenuModel *primary_menu(void)
{
  GMenu *menu = g_menu_new();
  GMenu *section = g_menu_new();
  g_menu_append(section, _("Open _Weights…"), "win.open-weights");
  g_menu_append_section(menu, NULL, G_MENU_MODEL(section));
  g_object_unref(section);
  section = g_menu_new();
  g_menu_append(section, _("_Find Node"), "win.find");
  g_menu_append(section, _("Fit Graph to Window"), "win.fit");
  g_menu_append(section, _("Fit Graph _Width"), "win.fit-width");
  g_menu_append_section(menu, NULL, G_MENU_MODEL(section));
  g_object_unref(section);
  GMenuModel *devices = ds_window_device_menu();
  g_menu_append_section(menu, _("Run On"), devices);
  g_object_unref(devices);
  GMenuModel *backward = ds_window_backward_menu();
  g_menu_append_section(menu, _("Gradients"), backward);
  g_object_unref(backward);
  section = g_menu_new();
  g_menu_append(section, _("_Keyboard Shortcuts"), "win.show-help-overlay");
  g_menu_append(section, _("_About dynscope"), "app.about");
  g_menu_append_section(menu, NULL, G_MENU_MODEL(section));
  g_object_unref(section);
  return G_MENU_MODEL(menu);
}

static GtkWidget *build_header(DsWindow *w)
{
  GtkWidget *header = gtk_header_bar_new();
  GtkWidget *open_box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_add_css_class(open_box, "linked");
  GtkWidget *open = gtk_button_new_with_mnemonic(_("_Open"));
  gtk_widget_set_tooltip_text(open, _("Open a model (Ctrl+O)"));
  gtk_actionable_set_action_name(GTK_ACTIONABLE(open), "win.open");
  gtk_box_append(GTK_BOX(open_box), open);
  gtk_box_append(GTK_BOX(open_box), ds_window_build_recent_button(w));
  gtk_header_bar_pack_start(GTK_HEADER_BAR(header), open_box);

  GtkWidget *run = icon_button("media-playback-start-symbolic",
                               _("Run the whole model and profile it (Ctrl+R)"), "win.run");
  gtk_header_bar_pack_start(GTK_HEADER_BAR(header), run);
  GtkWidget *steps = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0);
  gtk_widget_add_css_class(steps, "linked");
  gtk_box_append(GTK_BOX(steps), icon_button("media-seek-forward-symbolic",
                                             _("Continue to the next breakpoint (F5)"),
                                             "win.continue"));
  gtk_box_append(GTK_BOX(steps),
                 icon_button("go-next-symbolic", _("Step over the next node (F10)"), "win.step"));
  gtk_box_append(GTK_BOX(steps), icon_button("go-bottom-symbolic",
                                             _("Step into loops, branches and regions (F11)"),
                                             "win.step-into"));
  gtk_box_append(GTK_BOX(steps), icon_button("go-top-symbolic",
                                             _("Step out of this loop, branch or region "
                                               "(Shift+F11)"),
                                             "win.step-out"));
  gtk_box_append(GTK_BOX(steps), icon_button("view-refresh-symbolic",
                                             _("Reset: abandon the paused run (Shift+F5)"),
                                             "win.reset"));
  gtk_header_bar_pack_start(GTK_HEADER_BAR(header), steps);

  GtkWidget *titles = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
  gtk_widget_set_valign(titles, GTK_ALIGN_CENTER);
  w->title = gtk_label_new("dynscope");
  gtk_widget_add_css_class(w->title, "title");
  gtk_label_set_ellipsize(GTK_LABEL(w->title), PANGO_ELLIPSIZE_MIDDLE);
  w->subtitle = gtk_label_new(NULL);
  gtk_widget_add_css_class(w->subtitle, "subtitle");
  gtk_box_append(GTK_BOX(titles), w->title);
  gtk_box_append(GTK_BOX(titles), w->subtitle);
  gtk_header_bar_set_title_widget(GTK_HEADER_BAR(header), titles);

  GtkWidget *menu = gtk_menu_button_new();
  gtk_menu_button_set_icon_name(GTK_MENU_BUTTON(menu), "open-menu-symbolic");
  gtk_widget_set_tooltip_text(menu, _("Main menu"));
  g_autoptr(GMenuModel) primary = primary_menu();
  gtk_menu_button_set_menu_model(GTK_MENU_BUTTON(menu), primary);
  gtk_header_bar_pack_end(GTK_HEADER_BAR(header), menu);

  GtkWidget *export = w->export_button = gtk_menu_button_new();
  gtk_menu_button_set_icon_name(GTK_MENU_BUTTON(export), "document-save-as-symbolic");
  gtk_widget_set_tooltip_text(export, _("Export the report, trace or graph"));
  g_autoptr(GMenuModel) export_menu = ds_window_export_menu();
  gtk_menu_button_set_menu_model(GTK_MENU_BUTTON(export), export_menu);
  gtk_header_bar_pack_end(GTK_HEADER_BAR(header), export);

  GtkWidget *overlay = w->overlay_button = gtk_menu_button_new();
  gtk_menu_button_set_icon_name(GTK_MENU_BUTTON(overlay), "view-paged-symbolic");
  gtk_widget_set_tooltip_text(overlay, _("Colour the graph by the last run"));
  g_autoptr(GMenuModel) overlay_menu = ds_window_overlay_menu();
  gtk_menu_button_set_menu_model(GTK_MENU_BUTTON(overlay), overlay_menu);
  gtk_header_bar_pack_end(GTK_HEADER_BAR(header), overlay);
  return header;
}

/* A sidebar page. Across, it asks for no more than its minimum: the paned would otherwise
 * give the sidebar what its widest page would like (SSD's bindings: 40% of the window). */
static GtkWidget *scrolled(GtkWidget *child)
{
  GtkWidget *scroll = gtk_scrolled_window_new();
  gtk_scrolled_window_set_policy(GTK_SCROLLED_WINDOW(scroll), GTK_POLICY_EXTERNAL,
                                 GTK_POLICY_AUTOMATIC);
  gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), child);
  return scroll;
}

static void on_apply_requested(DsBindingsPanel *panel, DsWindow *w)
{
  (void)panel;
  ds_window_apply_bindings(w, NULL);
}

static GtkWidget *build_sidebar(DsWindow *w)
{
  w->regions = gtk_list_box_new();
  gtk_list_box_set_selection_mode(GTK_LIST_BOX(w->regions), GTK_SELECTION_SINGLE);
  g_signal_connect(w->regions, "row-selected", G_CALLBACK(on_region_selected), w);
  w->bindings = ds_bindings_panel_new();
  g_signal_connect(w->bindings, "apply-requested", G_CALLBACK(on_apply_requested), w);
  GtkWidget *stack = gtk_stack_new();
  gtk_stack_add_titled(GTK_STACK(stack), scrolled(ds_window_build_inspector(w)), "inspector",
                       _("Node"));
  gtk_stack_add_titled(GTK_STACK(stack), scrolled(w->regions), "regions", _("Regions"));
  gtk_stack_add_titled(GTK_STACK(stack), scrolled(w->bindings), "bindings", _("Bindings"));
  gtk_stack_add_titled(GTK_STACK(stack), scrolled(ds_window_build_breakpoints(w)),
                       "breakpoints", _("Breakpoints"));
  gtk_widget_set_vexpand(stack, TRUE);
  GtkWidget *switcher = gtk_stack_switcher_new();
  gtk_widget_add_css_class(switcher, "sidebar-tabs");
  gtk_stack_switcher_set_stack(GTK_STACK_SWITCHER(switcher), GTK_STACK(stack));
  gtk_widget_set_halign(switcher, GTK_ALIGN_CENTER);
  gtk_widget_set_margin_top(switcher, 6);
  GtkWidget *sidebar = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6);
  gtk_box_append(GTK_BOX(sidebar), switcher);
  gtk_box_append(GTK_BOX(sidebar), stack);
  gtk_widget_set_size_request(sidebar, 340, -1);
  return sidebar;
}

/* win.open-file(path): opens a model file named by the parts that list files (recent
 * models); a failure shows in the banner. */
static void on_open_file(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action;
  ds_window_open(data, g_variant_get_string(parameter, NULL), NULL);
}

static void on_fit(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action, (void)parameter;
  ds_graph_canvas_fit(DS_GRAPH_CANVAS(DS_WINDOW(data)->canvas));
}

static void on_fit_width(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action, (void)parameter;
  ds_graph_canvas_fit_width(DS_GRAPH_CANVAS(DS_WINDOW(data)->canvas));
}

/* win.close (Ctrl+W): as the close button, so the window remembers its state. */
static void on_close(GSimpleAction *action, GVariant *parameter, gpointer data)
{
  (void)action, (void)parameter;
  gtk_window_close(GTK_WINDOW(data));
}

static void ds_window_init(DsWindow *w)
{
  w->expanded = g_ptr_array_new_with_free_func(g_free);
  w->scene_index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  w->breakpoints = g_ptr_array_new_with_free_func(ds_window_breakpoint_free);
  gtk_window_set_default_size(GTK_WINDOW(w), 1280, 820);
  gtk_window_set_title(GTK_WINDOW(w), "dynscope");
  gtk_window_set_titlebar(GTK_WINDOW(w), build_header(w));

  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
  gtk_box_append(GTK_BOX(box), build_banner(w));
  gtk_box_append(GTK_BOX(box), build_search(w));

  w->canvas = ds_graph_canvas_new();
  g_signal_connect(w->canvas, "node-selected", G_CALLBACK(on_node_selected), w);
  g_signal_connect(w->canvas, "expand-requested", G_CALLBACK(on_expand), w);
  GtkWidget *graph_page = gtk_box_new(GTK_ORIENTATION_VERTICAL, 0);
  gtk_box_append(GTK_BOX(graph_page), w->canvas);
  gtk_box_append(GTK_BOX(graph_page), ds_window_build_status(w));
  w->main_stack = gtk_stack_new();
  gtk_stack_add_named(GTK_STACK(w->main_stack), ds_window_build_empty_page(w), "empty");
  gtk_stack_add_named(GTK_STACK(w->main_stack), graph_page, "graph");
  gtk_stack_set_visible_child_name(GTK_STACK(w->main_stack), "empty");

  GtkWidget *paned = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL);
  gtk_paned_set_start_child(GTK_PANED(paned), w->main_stack);
  gtk_paned_set_resize_start_child(GTK_PANED(paned), TRUE);
  gtk_paned_set_shrink_start_child(GTK_PANED(paned), FALSE);
  w->sidebar = build_sidebar(w);
  /* The empty window has nothing to inspect: the sidebar comes with the first model. */
  gtk_widget_set_visible(w->sidebar, FALSE);
  gtk_paned_set_end_child(GTK_PANED(paned), w->sidebar);
  gtk_paned_set_resize_end_child(GTK_PANED(paned), FALSE);
  gtk_paned_set_shrink_end_child(GTK_PANED(paned), FALSE);
  gtk_paned_set_position(GTK_PANED(paned), 900);
  gtk_widget_set_vexpand(paned, TRUE);
  gtk_box_append(GTK_BOX(box), paned);
  gtk_window_set_child(GTK_WINDOW(w), box);
  ds_window_inspect(w, -1);

  static const GActionEntry actions[] = {
      {.name = "find", .activate = on_find},
      {.name = "open", .activate = on_open},
      {.name = "open-weights", .activate = on_open_weights},
      {.name = "open-file", .activate = on_open_file, .parameter_type = "s"},
      {.name = "fit", .activate = on_fit},
      {.name = "fit-width", .activate = on_fit_width},
      {.name = "close", .activate = on_close}};
  g_action_map_add_action_entries(G_ACTION_MAP(w), actions, G_N_ELEMENTS(actions), w);
  ds_window_add_debug_actions(w);
  ds_window_add_device_action(w);
  ds_window_add_backward_action(w);
  ds_window_add_export_actions(w);
  ds_window_update_actions(w);

  /* GtkWindow takes F10 for its menu bar (it focuses the header bar) before application
   * shortcuts are looked at: the debugger's Step Over key is caught first. */
  GtkEventController *f10 = gtk_shortcut_controller_new();
  gtk_event_controller_set_propagation_phase(f10, GTK_PHASE_CAPTURE);
  gtk_shortcut_controller_add_shortcut(
      GTK_SHORTCUT_CONTROLLER(f10),
      gtk_shortcut_new(gtk_keyval_trigger_new(GDK_KEY_F10, 0), gtk_named_action_new("win.step")));
  gtk_widget_add_controller(GTK_WIDGET(w), f10);

  GtkDropTarget *drop = gtk_drop_target_new(GDK_TYPE_FILE_LIST, GDK_ACTION_COPY);
  g_signal_connect(drop, "drop", G_CALLBACK(on_drop), w);
  gtk_widget_add_controller(GTK_WIDGET(w), GTK_EVENT_CONTROLLER(drop));
  g_signal_connect(w, "close-request", G_CALLBACK(on_close_request), NULL);
  ds_window_state_restore(GTK_WINDOW(w));
}

DsWindow *ds_window_new(GtkApplication *app)
{
  return g_object_new(DS_TYPE_WINDOW, "application", app, NULL);
}
