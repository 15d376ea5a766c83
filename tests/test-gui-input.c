/* test-gui-input.c: the desktop app driven through the X server, as a user's mouse and
 * keyboard drive it (XTest under Xvfb), checked by the window's state and by the pixels the
 * server shows. The application is the one `dynscope MODEL` runs (its shortcuts, its quit);
 * each case opens what it needs.
 *
 * With DS_GUI_SCREENSHOTS=DIR, the screen is saved as PNG files at the telling moments. */
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ds-app.h"
#include "ds-canvas-painter.h"
#include "ds-npy.h"
#include "ds-test-gui.h"
#include "ds-window.h"

/* Below this share of clearly drawn pixels the canvas shows background only. */
#define DRAWN 0.01

static GtkApplication *app;

static DsWindow *open_window(const char *path)
{
  DsWindow *window = ds_window_new(app);
  gtk_window_set_default_size(GTK_WINDOW(window), 1280, 820);
  ds_test_present(GTK_WINDOW(window));
  if (path != NULL) {
    GError *error = NULL;
    g_assert_true(ds_window_open(window, path, &error));
    g_assert_no_error(error);
    ds_test_settle();
  }
  return window;
}

static char *shared_model(const char *name)
{
  const char *shared = g_getenv("DS_SHARED_DIR");
  char *path = shared != NULL ? g_build_filename(shared, "models", "mxnet", name, NULL) : NULL;
  if (path == NULL || !g_file_test(path, G_FILE_TEST_EXISTS)) {
    g_free(path);
    return NULL;
  }
  return path;
}

/* Where scene node `index` is drawn, in canvas coordinates. */
static void node_point(DsGraphCanvas *canvas, gint index, double *x, double *y)
{
  const DsVizBox *box = &ds_graph_canvas_get_layout(canvas)->nodes[index].box;
  ds_graph_canvas_to_widget(canvas, box->x, box->y, x, y);
}

/* A node drawn inside the canvas, not under the legend (bottom left) or minimap (bottom
 * right): the middle one of those that are. */
static gint visible_node(DsGraphCanvas *canvas)
{
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  double w = gtk_widget_get_width(GTK_WIDGET(canvas)), h = gtk_widget_get_height(GTK_WIDGET(canvas));
  g_autoptr(GArray) seen = g_array_new(FALSE, FALSE, sizeof(gint));
  for (guint i = 0; i < scene->nodes->len; i++) {
    const DsVizNode *n = &g_array_index(scene->nodes, DsVizNode, i);
    if (n->node == NULL || ds_node_is_variable(n->node))
      continue;
    double x, y;
    node_point(canvas, (gint)i, &x, &y);
    if (x > 40 && x < w - 40 && y > 40 && y < h * 0.6 &&
        ds_graph_canvas_pick(canvas, x, y) == (gint)i)
      g_array_append_val(seen, i);
  }
  g_assert_cmpuint(seen->len, >, 0);
  return g_array_index(seen, gint, seen->len / 2);
}

/* The mouse wheel and the + and - keys zoom about the pointer, and the canvas stays drawn:
 * the node under the pointer stays under it. A drag pans by as much as the mouse moved. */
static void test_wheel_keys_drag(void)
{
  g_autofree char *resnet = shared_model("gluoncv_resnet18_v1-symbol.json");
  g_autofree char *sample = ds_test_data_path("sample", "sample-symbol.json");
  const char *models[] = {sample, resnet};
  for (guint m = 0; m < G_N_ELEMENTS(models); m++) {
    if (models[m] == NULL)
      continue;
    DsWindow *window = open_window(models[m]);
    DsGraphCanvas *canvas = ds_window_get_canvas(window);
    GtkWidget *widget = GTK_WIDGET(canvas);
    g_assert_cmpfloat(ds_test_drawn_share(widget), >, DRAWN);
    gint node = visible_node(canvas);
    double x, y;
    node_point(canvas, node, &x, &y);
    double zoom = ds_graph_canvas_get_zoom(canvas);

    ds_test_input_wheel(widget, x, y, 1);
    ds_test_screenshot(GTK_WIDGET(window), m == 0 ? "wheel-sample" : "wheel-resnet18");
    g_assert_cmpfloat(ds_graph_canvas_get_zoom(canvas), >, zoom * 1.05);
    g_assert_cmpint(ds_graph_canvas_pick(canvas, x, y), ==, node);
    g_assert_cmpfloat(ds_test_drawn_share(widget), >, DRAWN);
    double nx, ny;
    node_point(canvas, node, &nx, &ny);
    g_assert_cmpfloat(fabs(nx - x) + fabs(ny - y), <, 20);

    ds_test_input_wheel(widget, x, y, -3);
    g_assert_cmpfloat(ds_graph_canvas_get_zoom(canvas), <, zoom);
    g_assert_cmpint(ds_graph_canvas_pick(canvas, x, y), ==, node);
    g_assert_cmpfloat(ds_test_drawn_share(widget), >, DRAWN);

    /* The keys, with the pointer over the node (the canvas has the focus after a click). */
    ds_test_input_click(widget, x, y, 1, 1);
    g_assert_cmpint(ds_graph_canvas_get_selected(canvas), ==, node);
    zoom = ds_graph_canvas_get_zoom(canvas);
    ds_test_input_key("plus");
    g_assert_cmpfloat(ds_graph_canvas_get_zoom(canvas), >, zoom * 1.1);
    g_assert_cmpint(ds_graph_canvas_pick(canvas, x, y), ==, node);
    ds_test_input_key("minus");
    ds_test_input_key("minus");
    g_assert_cmpfloat(ds_graph_canvas_get_zoom(canvas), <, zoom);
    g_assert_cmpint(ds_graph_canvas_pick(canvas, x, y), ==, node);
    g_assert_cmpfloat(ds_test_drawn_share(widget), >, DRAWN);

    /* Dragging from empty space or a node pans the graph with the mouse. */
    ds_test_input_drag(widget, x, y, x + 60, y + 40);
    node_point(canvas, node, &nx, &ny);
    g_assert_cmpfloat(fabs(nx - (x + 60)) + fabs(ny - (y + 40)), <, 4);
    g_assert_cmpfloat(ds_test_drawn_share(widget), >, DRAWN);

    /* 0 fits the whole graph, W its width. */
    ds_test_input_key("0");
    const DsVizLayout *layout = ds_graph_canvas_get_layout(canvas);
    double w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
    double x0, y0, x1, y1;
    ds_graph_canvas_to_widget(canvas, 0, 0, &x0, &y0);
    ds_graph_canvas_to_widget(canvas, layout->width, layout->height, &x1, &y1);
    g_assert_cmpfloat(x0, >=, -1);
    g_assert_cmpfloat(y0, >=, -1);
    g_assert_cmpfloat(x1, <=, w + 1);
    g_assert_cmpfloat(y1, <=, h + 1);
    g_assert_cmpfloat(ds_test_drawn_share(widget), >, DRAWN / 4);
    ds_test_input_key("w");
    ds_graph_canvas_to_widget(canvas, 0, 0, &x0, &y0);
    ds_graph_canvas_to_widget(canvas, layout->width, layout->height, &x1, &y1);
    g_assert_cmpfloat(x1 - x0, >, (w - 60) * (m == 0 ? 0.3 : 0.95));
    g_assert_cmpfloat(x1 - x0, <=, w);
    gtk_window_destroy(GTK_WINDOW(window));
    ds_test_settle();
  }
}

/* A label reading `text` (a menu item's, mnemonics dropped). */
static gboolean reads(GtkWidget *widget, gconstpointer text)
{
  return GTK_IS_LABEL(widget) && strcmp(gtk_label_get_text(GTK_LABEL(widget)), text) == 0;
}

static GtkWidget *open_popover(GtkWidget *canvas)
{
  for (GtkWidget *c = gtk_widget_get_first_child(canvas); c != NULL;
       c = gtk_widget_get_next_sibling(c))
    if (GTK_IS_POPOVER(c) && gtk_widget_get_visible(c))
      return c;
  return NULL;
}

/* Chooses `item` in the context menu of scene node `node`, with the mouse. */
static void context_menu_choose(DsWindow *window, gint node, const char *item)
{
  DsGraphCanvas *canvas = ds_window_get_canvas(window);
  double x, y;
  node_point(canvas, node, &x, &y);
  ds_test_input_click(GTK_WIDGET(canvas), x, y, 3, 1);
  GtkWidget *popover = open_popover(GTK_WIDGET(canvas));
  g_assert_nonnull(popover);
  /* No tooltip drawn over the menu. */
  g_assert_null(gtk_widget_get_tooltip_text(GTK_WIDGET(canvas)));
  ds_test_screenshot(GTK_WIDGET(window), "context-menu");
  GtkWidget *label = ds_test_find(popover, reads, item);
  g_assert_nonnull(label);
  ds_test_input_click(label, gtk_widget_get_width(label) / 2.0,
                      gtk_widget_get_height(label) / 2.0, 1, 1);
  g_assert_null(open_popover(GTK_WIDGET(canvas)));
}

/* The right-click menu toggles the breakpoint on the node it was opened on, and Continue
 * runs to it. */
static void test_context_menu(void)
{
  g_autofree char *path = ds_test_data_path("sample", "sample-symbol.json");
  DsWindow *window = open_window(path);
  DsGraphCanvas *canvas = ds_window_get_canvas(window);
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  gint node = visible_node(canvas);
  const char *name = g_array_index(scene->nodes, DsVizNode, node).id;
  /* Another node selected first: the menu acts on the one it was opened on. */
  ds_graph_canvas_select(canvas, ds_test_find_node(scene, "data"), FALSE);
  context_menu_choose(window, node, "Toggle Breakpoint");
  g_assert_cmpuint(ds_window_get_n_breakpoints(window), ==, 1);
  context_menu_choose(window, node, "Continue");
  ds_test_wait_idle(window);
  g_assert_cmpint(ds_graph_canvas_get_current(canvas), ==, node);
  g_assert_nonnull(strstr(ds_window_get_status_text(window), name));
  ds_test_screenshot(GTK_WIDGET(window), "context-menu-stopped");
  context_menu_choose(window, node, "Toggle Breakpoint");
  g_assert_cmpuint(ds_window_get_n_breakpoints(window), ==, 0);
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

static GtkWidget *shown_toplevel(GType type)
{
  GListModel *toplevels = gtk_window_get_toplevels();
  for (guint i = 0; i < g_list_model_get_n_items(toplevels); i++) {
    g_autoptr(GtkWidget) window = g_list_model_get_item(toplevels, i);
    if (G_TYPE_CHECK_INSTANCE_TYPE(window, type) && gtk_widget_get_visible(window))
      return window;
  }
  return NULL;
}

/* A header bar menu button showing `icon`. */
static gboolean shows_icon(GtkWidget *widget, gconstpointer icon)
{
  return GTK_IS_MENU_BUTTON(widget) &&
         g_strcmp0(gtk_menu_button_get_icon_name(GTK_MENU_BUTTON(widget)), icon) == 0;
}

/* Ctrl+? opens the keyboard shortcuts, and the main menu offers them. */
static void test_shortcuts(void)
{
  DsWindow *window = open_window(NULL);
  /* An empty window opens no menu whose every item is off: Export and the overlays wait for
   * a model and a run. */
  GtkWidget *export = ds_test_find(GTK_WIDGET(window), shows_icon, "document-save-as-symbolic");
  GtkWidget *overlay = ds_test_find(GTK_WIDGET(window), shows_icon, "view-paged-symbolic");
  g_assert_nonnull(export);
  g_assert_nonnull(overlay);
  g_assert_false(gtk_widget_get_sensitive(export));
  g_assert_false(gtk_widget_get_sensitive(overlay));
  g_assert_true(g_action_group_get_action_enabled(G_ACTION_GROUP(window), "show-help-overlay"));
  ds_test_input_click(GTK_WIDGET(window), 200, 200, 1, 1);
  ds_test_input_key("<Control>question");
  GtkWidget *shortcuts = shown_toplevel(GTK_TYPE_SHORTCUTS_WINDOW);
  g_assert_nonnull(shortcuts);
  ds_test_screenshot(shortcuts, "shortcuts");
  ds_test_input_key("Escape");
  g_assert_null(shown_toplevel(GTK_TYPE_SHORTCUTS_WINDOW));
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

static int saved_width(void)
{
  g_autofree char *path = g_build_filename(g_get_user_config_dir(), "dynscope", "state.ini", NULL);
  g_autoptr(GKeyFile) keys = g_key_file_new();
  if (!g_key_file_load_from_file(keys, path, G_KEY_FILE_NONE, NULL))
    return 0;
  return g_key_file_get_integer(keys, "window", "width", NULL);
}

static gboolean window_gone(gconstpointer window)
{
  GListModel *toplevels = gtk_window_get_toplevels();
  for (guint i = 0; i < g_list_model_get_n_items(toplevels); i++) {
    g_autoptr(GtkWidget) w = g_list_model_get_item(toplevels, i);
    if ((gconstpointer)w == window)
      return FALSE;
  }
  return TRUE;
}

/* Ctrl+W closes the window, Ctrl+Q every window; both remember the size, as the close button
 * does. */
static void test_close_and_quit(void)
{
  DsWindow *window = open_window(NULL);
  gtk_window_set_default_size(GTK_WINDOW(window), 1111, 777);
  ds_test_settle();
  ds_test_input_click(GTK_WIDGET(window), 300, 300, 1, 1);
  ds_test_input_key("<Control>w");
  g_assert_true(window_gone(window));
  g_assert_cmpint(saved_width(), ==, 1111);

  DsWindow *first = open_window(NULL), *second = open_window(NULL);
  gtk_window_set_default_size(GTK_WINDOW(second), 1212, 777);
  ds_test_settle();
  ds_test_input_click(GTK_WIDGET(second), 300, 300, 1, 1);
  ds_test_input_key("<Control>q");
  g_assert_true(window_gone(first));
  g_assert_true(window_gone(second));
  g_assert_cmpint(saved_width(), ==, 1212);
}

/* A model whose inputs have symbolic sizes runs at the first Ctrl+R with the values the
 * bindings panel shows; the subtitle counts the loop body's ops; the sidebar leaves the
 * canvas most of the window. */
static void test_first_run_symbolic(void)
{
  g_autofree char *path = ds_test_data_path("control", "lstm-foreach-symbol.json");
  DsWindow *window = open_window(path);
  ds_test_input_click(GTK_WIDGET(ds_window_get_canvas(window)), 20, 20, 1, 1);
  ds_test_input_key("<Control>r");
  ds_test_wait_idle(window);
  g_assert_null(ds_window_get_banner_text(window));
  g_assert_nonnull(ds_debugger_get_report(ds_window_get_debugger(window)));
  /* "N ops": the loop and its body, not "1 op". */
  guint ops = 0;
  g_assert_cmpint(sscanf(ds_window_get_subtitle_text(window), "%u", &ops), ==, 1);
  g_assert_cmpuint(ops, >, 5);
  GtkWidget *canvas = GTK_WIDGET(ds_window_get_canvas(window));
  g_assert_cmpint(gtk_widget_get_width(canvas), >=,
                  gtk_widget_get_width(GTK_WIDGET(window)) * 0.68);
  ds_test_screenshot(GTK_WIDGET(window), "first-run-symbolic");
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

static DsNDArray *read_npy(const char *path)
{
  GError *error = NULL;
  DsNDArray *array = ds_npy_load(path, &error);
  g_assert_no_error(error);
  return array;
}

/* The window loads the weights saved beside the model and runs with them: with the sample's
 * input it gives the CLI's output bit for bit. */
static void test_weights(void)
{
  g_autofree char *model = ds_test_data_path("sample", "sample-symbol.json");
  g_autofree char *input = ds_test_data_path("sample", "sample-input.npy");
  DsWindow *window = open_window(model);
  g_assert_nonnull(ds_window_get_weights(window));
  g_assert_true(g_str_has_suffix(ds_window_get_weights(window), "sample.params"));
  g_assert_nonnull(strstr(ds_window_get_subtitle_text(window), "sample.params"));
  g_assert_true(ds_bindings_panel_set_input_file(ds_window_get_bindings(window), "data", input));
  g_assert_true(ds_window_apply_bindings(window, NULL));
  ds_test_input_click(GTK_WIDGET(ds_window_get_canvas(window)), 20, 20, 1, 1);
  ds_test_input_key("<Control>r");
  ds_test_wait_idle(window);
  g_assert_null(ds_window_get_banner_text(window));
  const DsTensor *out = ds_session_get_output(ds_window_get_session(window), 0);
  g_assert_nonnull(out);

  /* The CLI on the same files. */
  g_autofree char *dir = g_dir_make_tmp("ds-gui-weights-XXXXXX", NULL);
  g_autofree char *exe = g_build_filename(g_getenv("DS_BUILD_DIR"), "app", "dynscope", NULL);
  g_autofree char *params = ds_test_data_path("sample", "sample.params");
  g_autofree char *input_arg = g_strdup_printf("data=%s", input);
  g_autofree char *save = g_strdup_printf("--save-outputs=%s", dir);
  const char *argv[] = {exe, "--run", model, "--params", params, "--input", input_arg, save, NULL};
  int status;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                             NULL, NULL, &status, NULL));
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  g_autoptr(GDir) listing = g_dir_open(dir, 0, NULL);
  const char *name;
  g_autofree char *npy = NULL;
  while ((name = g_dir_read_name(listing)) != NULL)
    if (g_str_has_suffix(name, ".npy"))
      npy = g_build_filename(dir, name, NULL);
  g_assert_nonnull(npy);
  g_autoptr(DsNDArray) cli = read_npy(npy);
  g_assert_cmpmem(cli->view.data, ds_tensor_nbytes(&cli->view), out->data,
                  ds_tensor_nbytes(out));
  g_autofree char *rm = g_strdup_printf("rm -rf '%s'", dir);
  g_assert_cmpint(system(rm), ==, 0);
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

/* The recent models list only models, by absolute path: a model opened by a relative path is
 * there, files a save dialog put in the shared recent list (an exported PNG) are not; a click
 * on one in a new window opens it. */
static void test_recent(void)
{
  g_autofree char *model = ds_test_data_path("control", "greedy-decoder-symbol.json");
  g_autofree char *dir = g_path_get_dirname(model);
  g_autofree char *cwd = g_get_current_dir();
  g_assert_cmpint(g_chdir(dir), ==, 0);
  DsWindow *window = open_window("greedy-decoder-symbol.json");
  g_assert_cmpint(g_chdir(cwd), ==, 0);
  g_autofree char *tmp = g_dir_make_tmp("ds-gui-export-XXXXXX", NULL);
  g_autofree char *png = g_build_filename(tmp, "graph.png", NULL);
  g_assert_true(ds_window_export(window, DS_WINDOW_EXPORT_PNG, png, NULL));
  /* What GTK's save dialog does with the file it saved. */
  g_autofree char *png_uri = g_filename_to_uri(png, NULL, NULL);
  gtk_recent_manager_add_item(gtk_recent_manager_get_default(), png_uri);
  g_autofree char *absolute = g_canonicalize_filename(model, NULL);
  /* The recent-files store is written in the background. */
  gboolean listed = FALSE, png_listed = FALSE;
  for (int i = 0; i < 300 && !listed; i++) {
    g_main_context_iteration(NULL, FALSE);
    g_usleep(10000);
    g_autoptr(GPtrArray) recent = ds_window_list_recent(window);
    for (guint k = 0; k < recent->len; k++) {
      listed |= strcmp(recent->pdata[k], absolute) == 0;
      png_listed |= g_str_has_suffix(recent->pdata[k], ".png");
    }
  }
  g_assert_true(listed);
  g_assert_false(png_listed);
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();

  /* The empty window's list, clicked. */
  DsWindow *empty = open_window(NULL);
  GtkWidget *button = NULL;
  for (int i = 0; i < 300 && button == NULL; i++) {
    g_main_context_iteration(NULL, FALSE);
    g_usleep(10000);
    button = ds_test_find_button_with_path(GTK_WIDGET(empty), absolute);
  }
  g_assert_nonnull(button);
  ds_test_settle(); /* laid out and drawn where it will be clicked */
  g_assert_cmpint(gtk_widget_get_width(button), >, 0);
  ds_test_screenshot(GTK_WIDGET(empty), "recent-models");
  ds_test_input_click(button, 10, gtk_widget_get_height(button) / 2.0, 1, 1);
  g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(empty)), ==, "greedy-decoder-symbol.json");
  g_assert_cmpfloat(ds_test_drawn_share(GTK_WIDGET(ds_window_get_canvas(empty))), >, DRAWN);
  g_autofree char *rm = g_strdup_printf("rm -rf '%s'", tmp);
  g_assert_cmpint(system(rm), ==, 0);
  gtk_window_destroy(GTK_WINDOW(empty));
  ds_test_settle();
}

/* Every node's text is drawn inside its box on the shared detection models, whose long
 * names and 4-5-line labels ran over their borders. */
static void test_labels_fit(void)
{
  const char *names[] = {"gluoncv_ssd_512_resnet50_v1-symbol.json",
                         "gluoncv_mask_rcnn_resnet18_v1b_coco-symbol.json"};
  guint checked = 0;
  for (guint m = 0; m < G_N_ELEMENTS(names); m++) {
    g_autofree char *path = shared_model(names[m]);
    if (path == NULL)
      continue;
    DsWindow *window = open_window(path);
    DsGraphCanvas *canvas = ds_window_get_canvas(window);
    const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
    const DsVizLayout *layout = ds_graph_canvas_get_layout(canvas);
    g_autoptr(DsCanvasPainter) painter = ds_canvas_painter_new();
    for (guint i = 0; i < scene->nodes->len; i++) {
      double w, h;
      ds_canvas_painter_measure_label(painter, scene, layout, i, &w, &h);
      const DsVizBox *box = &layout->nodes[i].box;
      if (w > box->width - 2 || h > box->height - 2)
        g_error("%s: the text of node '%s' is %.1f x %.1f in a %.1f x %.1f box", names[m],
                g_array_index(scene->nodes, DsVizNode, i).id, w, h, box->width, box->height);
      checked++;
    }
    ds_test_screenshot(GTK_WIDGET(window), m == 0 ? "labels-ssd" : "labels-mask-rcnn");
    gtk_window_destroy(GTK_WINDOW(window));
    ds_test_settle();
  }
  if (checked == 0)
    g_test_skip("no shared models");
}

/* The legend moves out of the way of the node where execution stands: its halo's pixels are
 * on screen wherever the node is. */
static void test_halo_not_covered(void)
{
  g_autofree char *path = ds_test_data_path("sample", "sample-symbol.json");
  DsWindow *window = open_window(path);
  DsGraphCanvas *canvas = ds_window_get_canvas(window);
  GtkWidget *widget = GTK_WIDGET(canvas);
  ds_test_input_click(widget, 20, 20, 1, 1);
  ds_test_input_key("F10");
  ds_test_wait_idle(window);
  gint current = ds_graph_canvas_get_current(canvas);
  if (current < 0) g_print("status %s banner %s\n", ds_window_get_status_text(window), ds_window_get_banner_text(window));
  g_assert_cmpint(current, >=, 0);
  /* Drag the node into the bottom-left corner, where the legend is. */
  double x, y;
  node_point(canvas, current, &x, &y);
  double h = gtk_widget_get_height(widget);
  ds_test_input_drag(widget, x + 2, y + 2, 50, h - 40);
  node_point(canvas, current, &x, &y);
  const DsVizBox *box = &ds_graph_canvas_get_layout(canvas)->nodes[current].box;
  double zoom = ds_graph_canvas_get_zoom(canvas);
  ds_test_screenshot(GTK_WIDGET(window), "halo-bottom-left");
  /* The halo's orange (0.9, 0.35, 0) along the box's border. */
  guint orange = ds_test_count_colour(widget, x - box->width * zoom / 2 - 6,
                                      y - box->height * zoom / 2 - 6, box->width * zoom + 12,
                                      box->height * zoom + 12, 0xe65900);
  g_assert_cmpuint(orange, >, 40);
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

/* BERT opens readable as its twelve layers, each a box; a double click opens one where it was,
 * quickly; Ctrl+F finds the query projection in every layer, opened or not, and outlines the
 * matches. */
static void test_groups_and_search(void)
{
  g_autofree char *path = shared_model("gluonnlp_static_bert_qa-symbol.json");
  if (path == NULL) {
    g_test_skip("no shared models");
    return;
  }
  DsWindow *window = open_window(path);
  DsGraphCanvas *canvas = ds_window_get_canvas(window);
  GtkWidget *widget = GTK_WIDGET(canvas);
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  guint groups = 0;
  for (guint i = 0; i < scene->nodes->len; i++) {
    const DsVizNode *n = &g_array_index(scene->nodes, DsVizNode, i);
    groups += n->kind == DS_VIZ_NODE_COLLAPSED && strstr(n->id, "_transformer") != NULL;
  }
  g_assert_cmpuint(groups, ==, 12);
  /* Text drawn at 7 pixels or more, and the canvas drawn. */
  g_assert_cmpfloat(ds_graph_canvas_get_zoom(canvas) * 10, >=, 6.9);
  g_assert_cmpfloat(ds_test_drawn_share(widget), >, DRAWN);
  ds_test_screenshot(GTK_WIDGET(window), "bert-groups");

  gint box = ds_test_find_node(scene, "staticbertencoder0_transformer1");
  g_assert_cmpint(box, >=, 0);
  const DsVizBox *b = &ds_graph_canvas_get_layout(canvas)->nodes[box].box;
  double x, y, top_x, top_y;
  ds_graph_canvas_to_widget(canvas, b->x, b->y, &x, &y);
  ds_graph_canvas_to_widget(canvas, b->x, b->y - b->height / 2, &top_x, &top_y);
  gint64 start = g_get_monotonic_time();
  ds_test_input_click(widget, x, y, 1, 2);
  double ms = (double)(g_get_monotonic_time() - start) / 1000.0;
  g_test_message("a layer group opened in %.1f ms (input and drawing included)", ms);
  scene = ds_graph_canvas_get_scene(canvas);
  gint cluster = ds_viz_scene_find_cluster(scene, "staticbertencoder0_transformer1");
  g_assert_cmpint(cluster, >=, 0);
  const DsVizBox *c = &ds_graph_canvas_get_layout(canvas)->clusters[cluster].box;
  double cx, cy;
  ds_graph_canvas_to_widget(canvas, c->x, c->y - c->height / 2, &cx, &cy);
  g_assert_cmpfloat(fabs(cx - top_x) + fabs(cy - top_y), <, 2);
  g_assert_cmpfloat(ds_test_drawn_share(widget), >, DRAWN);
  ds_test_screenshot(GTK_WIDGET(window), "bert-group-open");

  ds_test_input_key("<Control>f");
  ds_test_input_type("query_fwd");
  /* A search entry reports typing after a short pause. */
  gint64 until = g_get_monotonic_time() + 400000;
  while (g_get_monotonic_time() < until)
    if (!g_main_context_iteration(NULL, FALSE))
      g_usleep(1000);
  ds_test_settle();
  g_assert_cmpuint(ds_window_get_n_matches(window), ==, 12);
  gint found = ds_graph_canvas_get_selected(canvas);
  g_assert_cmpint(found, >=, 0);
  scene = ds_graph_canvas_get_scene(canvas);
  g_assert_nonnull(strstr(g_array_index(scene->nodes, DsVizNode, found).id, "transformer1_"));
  ds_test_screenshot(GTK_WIDGET(window), "bert-search");
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

/* A shown label whose text starts with `prefix`. */
static gboolean starts(GtkWidget *widget, gconstpointer prefix)
{
  return GTK_IS_LABEL(widget) && gtk_widget_get_mapped(widget) &&
         g_str_has_prefix(gtk_label_get_text(GTK_LABEL(widget)), prefix);
}

static double widget_y(GtkWidget *widget, GtkWidget *in)
{
  graphene_point_t p;
  g_assert_true(gtk_widget_compute_point(widget, in, &GRAPHENE_POINT_INIT(0, 0), &p));
  return p.y;
}

/* The Bindings tab, clicked: the inputs come first; a model whose input size is unknown says
 * how to get symbols; SSD's hundreds of derived symbols wait in an expander below the few to
 * set. */
static void test_bindings_tab(void)
{
  g_autofree char *resnet = shared_model("gluoncv_resnet18_v1-symbol.json");
  g_autofree char *ssd = shared_model("gluoncv_ssd_512_resnet50_v1-symbol.json");
  if (resnet == NULL || ssd == NULL) {
    g_test_skip("no shared models");
    return;
  }
  DsWindow *window = open_window(resnet);
  GtkWidget *root = GTK_WIDGET(window);
  GtkWidget *tab = ds_test_find(root, starts, "Bindings");
  g_assert_nonnull(tab);
  ds_test_input_click(tab, 5, gtk_widget_get_height(tab) / 2.0, 1, 1);
  GtkWidget *inputs = ds_test_find(root, starts, "Inputs"), *symbols = ds_test_find(root, starts, "Symbols");
  g_assert_nonnull(inputs);
  g_assert_nonnull(symbols);
  g_assert_cmpfloat(widget_y(inputs, root), <, widget_y(symbols, root));
  g_assert_nonnull(ds_test_find(root, starts, "No symbols yet"));
  ds_test_screenshot(root, "bindings-resnet18");

  g_assert_true(ds_window_open(window, ssd, NULL));
  ds_test_settle();
  GtkWidget *expander = ds_test_find_widget(root, GTK_TYPE_EXPANDER);
  g_assert_nonnull(expander);
  g_assert_true(gtk_widget_get_visible(expander));
  g_assert_false(gtk_expander_get_expanded(GTK_EXPANDER(expander)));
  guint derived = 0;
  g_assert_cmpint(sscanf(gtk_expander_get_label(GTK_EXPANDER(expander)), "%u", &derived), ==, 1);
  g_assert_cmpuint(derived, >, 100);
  /* SSD's long input names do not widen the sidebar. */
  g_assert_cmpint(gtk_widget_get_width(GTK_WIDGET(ds_window_get_canvas(window))), >=,
                  gtk_widget_get_width(root) * 0.68);
  ds_test_screenshot(root, "bindings-ssd");
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

/* Waits for the command in flight, cancelling it (Esc, as a user tired of waiting) after
 * `seconds`. */
static void wait_or_cancel(DsWindow *window, double seconds)
{
  gint64 until = g_get_monotonic_time() + (gint64)(seconds * G_USEC_PER_SEC);
  while (ds_window_is_busy(window) && g_get_monotonic_time() < until)
    if (!g_main_context_iteration(NULL, FALSE))
      g_usleep(1000);
  if (ds_window_is_busy(window)) {
    ds_test_input_key("Escape");
    ds_test_wait_idle(window);
  }
  ds_test_settle();
}

/* One model through everything a user does with it, by mouse and keyboard. */
static void session_on(DsWindow *window, const char *path, const char *shot)
{
  GError *error = NULL;
  gint64 start = g_get_monotonic_time();
  g_assert_true(ds_window_open(window, path, &error));
  g_assert_no_error(error);
  double open_ms = (double)(g_get_monotonic_time() - start) / 1000.0;
  ds_test_settle();
  g_test_message("  opened in %.0f ms, drawn %.0f ms later", open_ms,
                 (double)(g_get_monotonic_time() - start) / 1000.0 - open_ms);
  DsGraphCanvas *canvas = ds_window_get_canvas(window);
  GtkWidget *widget = GTK_WIDGET(canvas);
  double w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  g_assert_cmpfloat(ds_test_drawn_share(widget), >, DRAWN / 4);
  /* Look around. */
  ds_test_input_wheel(widget, w / 2, h / 3, 2);
  ds_test_input_drag(widget, w / 2, h / 3, w / 2 - 80, h / 3 - 120);
  ds_test_input_wheel(widget, w / 3, h / 2, -4);
  g_assert_cmpfloat(ds_test_drawn_share(widget), >, DRAWN / 4);
  ds_test_input_key("w");
  ds_test_input_key("0");
  g_assert_cmpfloat(ds_test_drawn_share(widget), >, DRAWN / 8);
  /* Find the first op by a piece of its name. */
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  const char *needle = NULL;
  for (guint i = 0; i < scene->nodes->len && needle == NULL; i++) {
    const DsVizNode *n = &g_array_index(scene->nodes, DsVizNode, i);
    if (n->kind == DS_VIZ_NODE_OP && n->node != NULL && strlen(n->node->name) >= 3)
      needle = n->node->name;
  }
  if (needle != NULL) {
    g_autofree char *piece = g_strndup(needle, MIN(strlen(needle), 12));
    gboolean typable = TRUE;
    for (const char *c = piece; *c != '\0'; c++)
      typable &= g_ascii_isalnum(*c) || *c == '_';
    ds_test_input_key("<Control>f");
    ds_test_input_type(typable ? piece : "a");
    gint64 until = g_get_monotonic_time() + 400000;
    while (g_get_monotonic_time() < until)
      if (!g_main_context_iteration(NULL, FALSE))
        g_usleep(1000);
    ds_test_input_key("Return");
    ds_test_input_key("<Shift>Return");
    if (typable)
      g_assert_cmpuint(ds_window_get_n_matches(window), >, 0);
    ds_test_input_key("Escape");
  }
  /* Run it, step into it, break in it. */
  ds_test_input_click(widget, 8, 8, 1, 1);
  ds_test_input_key("<Control>r");
  wait_or_cancel(window, 3);
  for (int i = 0; i < 3; i++) {
    ds_test_input_key("F11");
    wait_or_cancel(window, 3);
  }
  ds_test_input_key("F10");
  wait_or_cancel(window, 3);
  gint node = -1;
  scene = ds_graph_canvas_get_scene(canvas);
  for (guint i = 0; i < scene->nodes->len && node < 0; i++) {
    const DsVizNode *n = &g_array_index(scene->nodes, DsVizNode, i);
    double x, y;
    node_point(canvas, (gint)i, &x, &y);
    if (n->kind == DS_VIZ_NODE_OP && x > 20 && x < w - 200 && y > 20 && y < h - 200 &&
        ds_graph_canvas_pick(canvas, x, y) == (gint)i)
      node = (gint)i;
  }
  if (node >= 0) {
    guint before = ds_window_get_n_breakpoints(window);
    context_menu_choose(window, node, "Toggle Breakpoint");
    g_assert_cmpuint(ds_window_get_n_breakpoints(window), !=, before);
    ds_test_input_key("F5");
    wait_or_cancel(window, 3);
  }
  ds_test_input_key("<Shift>F5");
  ds_test_settle();
  ds_test_screenshot(GTK_WIDGET(window), shot);
  /* Export what is shown. */
  g_autofree char *tmp = g_dir_make_tmp("ds-gui-session-XXXXXX", NULL);
  g_autofree char *png = g_build_filename(tmp, "graph.png", NULL);
  g_assert_true(ds_window_export(window, DS_WINDOW_EXPORT_PNG, png, &error));
  g_assert_no_error(error);
  g_autofree char *rm = g_strdup_printf("rm -rf '%s'", tmp);
  g_assert_cmpint(system(rm), ==, 0);
}

static gint by_path(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A user's session: every shared model, every sample and the ONNX samples, opened, looked around in, searched,
 * run, stepped into, broken in from the context menu, exported; then one reopened from the
 * recent models. GTK's warnings are fatal in this program (G_DEBUG=fatal-warnings). */
static void test_session(void)
{
  g_autoptr(GPtrArray) models = g_ptr_array_new_with_free_func(g_free);
  const char *shared = g_getenv("DS_SHARED_DIR");
  g_autofree char *mxnet = shared != NULL ? g_build_filename(shared, "models", "mxnet", NULL)
                                          : NULL;
  g_autoptr(GDir) dir = mxnet != NULL ? g_dir_open(mxnet, 0, NULL) : NULL;
  const char *name;
  while (dir != NULL && (name = g_dir_read_name(dir)) != NULL)
    if (g_str_has_suffix(name, ".json"))
      g_ptr_array_add(models, g_build_filename(mxnet, name, NULL));
  static const char *const samples[][2] = {
      {"sample", "sample-symbol.json"},         {"control", "cond-in-loop-symbol.json"},
      {"control", "greedy-decoder-symbol.json"}, {"control", "lstm-foreach-symbol.json"},
      {"dynamic", "boolean-mask-symbol.json"},   {"transformer", "transformer-symbol.json"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(samples); i++)
    g_ptr_array_add(models, ds_test_data_path(samples[i][0], samples[i][1]));
  /* ONNX models with loops, branches and scans, and one with nodes that cannot run, as the
   * onnx package writes them. */
  g_autofree char *onnx_dir = g_dir_make_tmp("ds-gui-session-onnx-XXXXXX", NULL);
  g_autofree char *script = g_build_filename(g_getenv("DS_SOURCE_DIR") != NULL
                                                 ? g_getenv("DS_SOURCE_DIR")
                                                 : "..",
                                             "tests", "onnx_samples.py", NULL);
  const char *argv[] = {"/usr/bin/python3", script, onnx_dir, NULL};
  gint status = -1;
  if (g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, NULL,
                   &status, NULL) &&
      g_spawn_check_wait_status(status, NULL)) {
    g_autoptr(GDir) onnx = g_dir_open(onnx_dir, 0, NULL);
    while (onnx != NULL && (name = g_dir_read_name(onnx)) != NULL)
      if (g_str_has_suffix(name, ".onnx"))
        g_ptr_array_add(models, g_build_filename(onnx_dir, name, NULL));
  }
  g_ptr_array_sort(models, by_path);
  DsWindow *window = open_window(NULL);
  for (guint i = 0; i < models->len; i++) {
    g_autofree char *base = g_path_get_basename(models->pdata[i]);
    g_test_message("session: %s", base);
    g_autofree char *shot = g_strdup_printf("session-%02u", i);
    session_on(window, models->pdata[i], shot);
  }
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
  /* Back from the recent models of a new window: the last one opened is first. */
  DsWindow *again = open_window(NULL);
  g_autofree char *last = g_canonicalize_filename(models->pdata[models->len - 1], NULL);
  GtkWidget *button = ds_test_find_button_with_path(GTK_WIDGET(again), last);
  g_assert_nonnull(button);
  ds_test_input_click(button, 10, gtk_widget_get_height(button) / 2.0, 1, 1);
  g_autofree char *base = g_path_get_basename(last);
  g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(again)), ==, base);
  gtk_window_destroy(GTK_WINDOW(again));
  ds_test_settle();
  g_autofree char *rm = g_strdup_printf("rm -rf '%s'", onnx_dir);
  g_assert_cmpint(system(rm), ==, 0);
}

int main(int argc, char **argv)
{
  /* Tests read their own state and recent files, never the user's. */
  g_autofree char *home = g_dir_make_tmp("ds-gui-input-XXXXXX", NULL);
  g_autofree char *config = g_build_filename(home, "config", NULL);
  g_autofree char *data = g_build_filename(home, "data", NULL);
  g_setenv("XDG_CONFIG_HOME", config, TRUE);
  g_setenv("XDG_DATA_HOME", data, TRUE);
  setlocale(LC_ALL, "C.UTF-8");
  g_test_init(&argc, &argv, NULL);
  if (!gtk_init_check() || !ds_test_input_available()) {
    g_test_skip("no X server with XTest");
    return g_test_run();
  }
  /* The application `dynscope` runs, registered (its startup ran) but not run: the tests
   * turn the main loop. */
  app = ds_app_new(NULL);
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, NULL));
  g_test_add_func("/gui-input/wheel-keys-drag", test_wheel_keys_drag);
  g_test_add_func("/gui-input/context-menu", test_context_menu);
  g_test_add_func("/gui-input/shortcuts", test_shortcuts);
  g_test_add_func("/gui-input/close-and-quit", test_close_and_quit);
  g_test_add_func("/gui-input/first-run-symbolic", test_first_run_symbolic);
  g_test_add_func("/gui-input/weights", test_weights);
  g_test_add_func("/gui-input/recent", test_recent);
  g_test_add_func("/gui-input/labels-fit", test_labels_fit);
  g_test_add_func("/gui-input/halo-not-covered", test_halo_not_covered);
  g_test_add_func("/gui-input/groups-and-search", test_groups_and_search);
  g_test_add_func("/gui-input/bindings-tab", test_bindings_tab);
  g_test_add_func("/gui-input/session", test_session);
  int status = g_test_run();
  g_object_unref(app);
  g_autofree char *command = g_strdup_printf("rm -rf '%s'", home);
  if (system(command) != 0)
    g_printerr("could not remove %s\n", home);
  return status;
}
