/* test-gui.c: the desktop window under Xvfb. Opening a model fills the canvas with its scene;
 * the canvas picks the node drawn under a point, including inside loop bodies; selecting a
 * node shows its op, attributes and shapes in the inspector; zoom and fit; a file that does
 * not load leaves the graph and says why in the banner. */
#include <gtk/gtk.h>
#include <math.h>
#include <string.h>

#include "ds-window.h"

static char *data_path(const char *dir, const char *name)
{
  const char *src = g_getenv("DS_SOURCE_DIR");
  return g_build_filename(src != NULL ? src : "..", "data", dir, name, NULL);
}

/* Lets GTK lay the window out and draw it. */
static void settle(void)
{
  for (int i = 0; i < 50; i++)
    g_main_context_iteration(NULL, FALSE);
}

static gint find(const DsVizScene *scene, const char *id)
{
  for (guint i = 0; i < scene->nodes->len; i++)
    if (strcmp(g_array_index(scene->nodes, DsVizNode, i).id, id) == 0)
      return (gint)i;
  return -1;
}

static void test_open_and_inspect(void)
{
  DsWindow *window = ds_window_new(NULL);
  gtk_window_present(GTK_WINDOW(window));
  settle();
  g_autofree char *path = data_path("dynamic", "boolean-mask-symbol.json");
  GError *error = NULL;
  g_assert_true(ds_window_open(window, path, &error));
  g_assert_no_error(error);
  settle();
  DsGraphCanvas *canvas = ds_window_get_canvas(window);
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  g_assert_nonnull(scene);
  g_assert_cmpuint(scene->nodes->len, ==, 14);
  g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(window)), ==, "boolean-mask-symbol.json");

  /* Select fc1, scrolled into view: the canvas then picks it where it draws it. */
  gint fc1 = find(scene, "fc1");
  g_assert_cmpint(fc1, >=, 0);
  ds_graph_canvas_select(canvas, fc1, TRUE);
  settle();
  g_assert_cmpint(ds_graph_canvas_get_selected(canvas), ==, fc1);
  const DsVizBox *box = &ds_graph_canvas_get_layout(canvas)->nodes[fc1].box;
  double x, y;
  ds_graph_canvas_to_widget(canvas, box->x, box->y, &x, &y);
  g_assert_cmpint(ds_graph_canvas_pick(canvas, x, y), ==, fc1);
  ds_graph_canvas_to_widget(canvas, box->x + box->width, box->y, &x, &y);
  g_assert_cmpint(ds_graph_canvas_pick(canvas, x, y), !=, fc1);
  const char *text = ds_window_get_inspector_text(window);
  g_assert_nonnull(strstr(text, "FullyConnected"));
  g_assert_nonnull(strstr(text, "num_hidden = 4"));
  g_assert_nonnull(strstr(text, "(u0, 16)")); /* its input, a data-dependent size */
  g_assert_nonnull(strstr(text, "(u0, 4)"));

  /* Finding nodes: by op, any case, then the next match, wrapping around. */
  gint softmax = ds_window_search(window, "SOFTMAX", FALSE);
  g_assert_cmpint(softmax, ==, find(scene, "softmax0"));
  g_assert_nonnull(strstr(ds_window_get_inspector_text(window), "softmax0"));
  gint first = ds_window_search(window, "FullyConnected", FALSE);
  gint second = ds_window_search(window, "FullyConnected", TRUE);
  g_assert_cmpint(first, >=, 0);
  g_assert_cmpint(second, !=, first);
  g_assert_cmpint(ds_window_search(window, "FullyConnected", TRUE), ==, first);
  g_assert_cmpint(ds_window_search(window, "no such node", FALSE), ==, -1);

  double zoom = ds_graph_canvas_get_zoom(canvas);
  ds_graph_canvas_zoom(canvas, 2.0);
  g_assert_cmpfloat(ds_graph_canvas_get_zoom(canvas), >, zoom * 1.9);
  ds_graph_canvas_fit(canvas);
  g_assert_cmpfloat(ds_graph_canvas_get_zoom(canvas), <, zoom * 1.01);

  /* A file that does not load: the banner says which and why; the graph stays. */
  g_autofree char *bad = g_build_filename(g_getenv("DS_SOURCE_DIR"), "tests", "bad-input", "files",
                                          "truncated.json", NULL);
  g_assert_false(ds_window_open(window, bad, &error));
  g_assert_nonnull(error);
  g_clear_error(&error);
  const char *banner = ds_window_get_banner_text(window);
  g_assert_nonnull(banner);
  g_assert_nonnull(strstr(banner, "truncated.json"));
  g_assert_true(ds_graph_canvas_get_scene(canvas) == scene);
  gtk_window_destroy(GTK_WINDOW(window));
  settle();
}

/* Inside loop bodies: every node is picked where it is drawn, and selecting one shows it. */
static void test_pick_in_loops(void)
{
  DsWindow *window = ds_window_new(NULL);
  gtk_window_present(GTK_WINDOW(window));
  g_autofree char *path = data_path("control", "greedy-decoder-symbol.json");
  g_assert_true(ds_window_open(window, path, NULL));
  settle();
  DsGraphCanvas *canvas = ds_window_get_canvas(window);
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  const DsVizLayout *layout = ds_graph_canvas_get_layout(canvas);
  for (guint i = 0; i < scene->nodes->len; i++) {
    double x, y;
    ds_graph_canvas_to_widget(canvas, layout->nodes[i].box.x, layout->nodes[i].box.y, &x, &y);
    g_assert_cmpint(ds_graph_canvas_pick(canvas, x, y), ==, (gint)i);
  }
  /* The regions tree: the loop and its two subgraphs; picking one focuses the canvas on it. */
  g_assert_cmpuint(ds_window_get_n_regions(window), ==, 3);
  double before = ds_graph_canvas_get_zoom(canvas);
  ds_window_select_region(window, 1); /* decoder0/cond, a narrow column */
  settle();
  g_assert_cmpfloat(ds_graph_canvas_get_zoom(canvas), >, before);
  const DsVizBox *cond = &layout->clusters[1].box;
  double x, y;
  ds_graph_canvas_to_widget(canvas, cond->x, cond->y, &x, &y);
  g_assert_cmpfloat(fabs(x - gtk_widget_get_width(GTK_WIDGET(canvas)) / 2.0), <, 1.0);
  g_assert_cmpfloat(fabs(y - gtk_widget_get_height(GTK_WIDGET(canvas)) / 2.0), <, 1.0);

  gint hh = find(scene, "decoder0/func/step_hh");
  ds_graph_canvas_select(canvas, hh, TRUE);
  g_assert_nonnull(strstr(ds_window_get_inspector_text(window), "num_hidden = 8"));
  gtk_window_destroy(GTK_WINDOW(window));
  settle();
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  if (!gtk_init_check()) {
    g_test_skip("no display");
    return g_test_run();
  }
  g_test_add_func("/gui/open-and-inspect", test_open_and_inspect);
  g_test_add_func("/gui/pick-in-loops", test_pick_in_loops);
  return g_test_run();
}
