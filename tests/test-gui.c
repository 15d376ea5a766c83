/* test-gui.c: the desktop window under Xvfb, driven as a user would and checked after each
 * step. Opening a model fills the canvas with its scene; the canvas picks the node drawn
 * under a point, including inside loop bodies; selecting a node shows its op, attributes and
 * shapes in the inspector; zoom and fit; a file that does not load leaves the graph and says
 * why in the banner. Bindings are applied or refused; stepping goes into a loop with the
 * current node marked and the frame path shown; a conditional breakpoint stops where it
 * should; a run makes the overlays live and the exports write real files; a long run is
 * cancelled; the window's size and folder are remembered; the German catalogue is used.
 *
 * With DS_GUI_SCREENSHOTS=DIR, the window is also saved as PNG files at the interesting
 * moments (for looking at, not for checking). */
#include <cjson/cJSON.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <gtk/gtk.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ds-config.h"
#include "ds-npy.h"
#include "ds-test-device.h"
#include "ds-test-gui.h"
#include "ds-window.h"

/* A button labelled `label`. */
static gboolean labelled(GtkWidget *widget, gconstpointer label)
{
  return GTK_IS_BUTTON(widget) && g_strcmp0(gtk_button_get_label(GTK_BUTTON(widget)), label) == 0;
}

static DsWindow *new_window(void)
{
  DsWindow *window = ds_window_new(NULL);
  gtk_window_set_default_size(GTK_WINDOW(window), 1280, 820);
  ds_test_present(GTK_WINDOW(window));
  return window;
}

static void test_open_and_inspect(void)
{
  DsWindow *window = ds_window_new(NULL);
  ds_test_present(GTK_WINDOW(window));
  g_autofree char *path = ds_test_data_path("dynamic", "boolean-mask-symbol.json");
  GError *error = NULL;
  g_assert_true(ds_window_open(window, path, &error));
  g_assert_no_error(error);
  ds_test_settle();
  DsGraphCanvas *canvas = ds_window_get_canvas(window);
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  g_assert_nonnull(scene);
  /* 14 nodes, the 4 weights folded into their ops' boxes with their shapes. */
  g_assert_cmpuint(scene->nodes->len, ==, 10);
  g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(window)), ==, "boolean-mask-symbol.json");
  g_assert_nonnull(
      strstr(g_array_index(scene->nodes, DsVizNode, ds_test_find_node(scene, "fc1")).label,
             "\nweight (4, 16)"));

  /* Select fc1, scrolled into view: the canvas then picks it where it draws it. */
  gint fc1 = ds_test_find_node(scene, "fc1");
  g_assert_cmpint(fc1, >=, 0);
  ds_graph_canvas_select(canvas, fc1, TRUE);
  ds_test_settle();
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
  g_assert_cmpint(softmax, ==, ds_test_find_node(scene, "softmax0"));
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
  ds_test_settle();
}

/* Inside loop bodies: every node is picked where it is drawn, and selecting one shows it. */
static void test_pick_in_loops(void)
{
  DsWindow *window = ds_window_new(NULL);
  ds_test_present(GTK_WINDOW(window));
  g_autofree char *path = ds_test_data_path("control", "greedy-decoder-symbol.json");
  g_assert_true(ds_window_open(window, path, NULL));
  ds_test_settle();
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
  ds_test_settle();
  g_assert_cmpfloat(ds_graph_canvas_get_zoom(canvas), >, before);
  const DsVizBox *cond = &layout->clusters[1].box;
  double x, y;
  ds_graph_canvas_to_widget(canvas, cond->x, cond->y, &x, &y);
  g_assert_cmpfloat(fabs(x - gtk_widget_get_width(GTK_WIDGET(canvas)) / 2.0), <, 1.0);
  g_assert_cmpfloat(fabs(y - gtk_widget_get_height(GTK_WIDGET(canvas)) / 2.0), <, 1.0);

  gint hh = ds_test_find_node(scene, "decoder0/func/step_hh");
  ds_graph_canvas_select(canvas, hh, TRUE);
  g_assert_nonnull(strstr(ds_window_get_inspector_text(window), "num_hidden = 8"));
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}


/* A real model from the shared set: select a node; then a control-flow sample replaces it. */
static void test_real_model_then_control(void)
{
  DsWindow *window = new_window();
  g_autofree char *resnet = g_build_filename(g_getenv("DS_SHARED_DIR"), "models", "mxnet",
                                             "gluoncv_resnet18_v1-symbol.json", NULL);
  if (!g_file_test(resnet, G_FILE_TEST_EXISTS)) {
    g_test_skip("no shared models");
    gtk_window_destroy(GTK_WINDOW(window));
    return;
  }
  GError *error = NULL;
  g_assert_true(ds_window_open(window, resnet, &error));
  g_assert_no_error(error);
  ds_test_settle();
  gint conv = ds_window_search(window, "Convolution", FALSE);
  g_assert_cmpint(conv, >=, 0);
  const char *text = ds_window_get_inspector_text(window);
  g_assert_nonnull(strstr(text, "Convolution"));
  g_assert_nonnull(strstr(text, "kernel = (7, 7)"));
  /* The file gives no input shape: declared in the bindings panel, it flows everywhere. */
  g_assert_nonnull(strstr(text, "in 0  data  ?"));
  DsBindingsPanel *bindings = ds_window_get_bindings(window);
  g_assert_true(ds_bindings_panel_set_input_shape(bindings, "data", "(1, 3, s1, s1)"));
  g_assert_true(ds_window_apply_bindings(window, &error));
  g_assert_no_error(error);
  g_assert_cmpint(ds_bindings_panel_get_value(bindings, "s1"), ==, 8);
  g_assert_true(ds_bindings_panel_set_value(bindings, "s1", "224"));
  g_assert_true(ds_window_apply_bindings(window, &error));
  conv = ds_window_search(window, "Convolution", FALSE);
  text = ds_window_get_inspector_text(window);
  g_assert_nonnull(strstr(text, "(1, 3, s1, s1)"));
  g_assert_nonnull(strstr(text, "out 0  resnetv10_conv0_fwd_output  (1, 64, "));
  g_assert_true(ds_window_command(window, DS_DEBUG_RUN));
  ds_test_wait_idle(window);
  g_assert_null(ds_window_get_banner_text(window));
  g_assert_true(ds_window_set_overlay(window, DS_VIZ_OVERLAY_TIME, NULL));
  ds_window_search(window, "Convolution", FALSE);
  text = ds_window_get_inspector_text(window);
  g_assert_nonnull(strstr(text, "= (1, 3, 224, 224)"));
  g_assert_nonnull(strstr(text, "last run"));
  ds_test_screenshot(GTK_WIDGET(window), "resnet18");

  g_autofree char *decoder = ds_test_data_path("control", "greedy-decoder-symbol.json");
  g_assert_true(ds_window_open(window, decoder, &error));
  g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(window)), ==, "greedy-decoder-symbol.json");
  g_assert_cmpint(ds_graph_canvas_get_selected(ds_window_get_canvas(window)), ==, -1);
  g_assert_cmpuint(ds_window_get_n_regions(window), ==, 3);
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

/* The device clusters of the graph as drawn. */
static guint n_device_clusters(DsWindow *window)
{
  const DsVizScene *scene = ds_graph_canvas_get_scene(ds_window_get_canvas(window));
  guint n = 0;
  for (guint i = 0; i < scene->clusters->len; i++)
    n += g_array_index(scene->clusters, DsVizCluster, i).kind == DS_VIZ_CLUSTER_DEVICE;
  return n;
}

static const char *device_state(DsWindow *window)
{
  GVariant *state = g_action_group_get_action_state(G_ACTION_GROUP(window), "device");
  static char name[32];
  g_strlcpy(name, g_variant_get_string(state, NULL), sizeof name);
  g_variant_unref(state);
  return name;
}

/* Run On: a device takes the regions it supports (drawn as device clusters after a run),
 * stays chosen for the next model, and a device that cannot run here is refused with the
 * reason. The test device stands in for a GPU. */
static void test_device(void)
{
  DsWindow *window = new_window();
  g_assert_cmpstr(device_state(window), ==, "cpu");
  g_assert_null(ds_window_get_device(window));
  g_autofree char *path = ds_test_data_path("dynamic", "boolean-mask-symbol.json");
  GError *error = NULL;
  g_assert_true(ds_window_open(window, path, &error));
  g_assert_true(ds_bindings_panel_set_input_shape(ds_window_get_bindings(window), "data",
                                                  "(64, 8)"));
  g_assert_true(ds_window_apply_bindings(window, &error));
  g_assert_true(ds_window_set_device(window, ds_test_device_get(), &error));
  g_assert_no_error(error);
  g_assert_cmpstr(device_state(window), ==, "testdev");
  g_assert_nonnull(strstr(ds_window_get_subtitle_text(window), " · on testdev"));
  g_assert_cmpuint(n_device_clusters(window), ==, 0); /* placed when next prepared */
  g_assert_true(ds_window_command(window, DS_DEBUG_RUN));
  ds_test_wait_idle(window);
  g_assert_null(ds_window_get_banner_text(window));
  g_assert_cmpuint(n_device_clusters(window), >=, 1);
  DsTestDeviceStats stats;
  ds_test_device_get_stats(&stats);
  g_assert_cmpuint(stats.n_kernels, >, 0);
  ds_test_screenshot(GTK_WIDGET(window), "device-placement");

  /* Stepping into the device regions: each stop shows where it is, and the inspector reads
   * the node's tensors back from the device. */
  static const char *const stops[] = {"testdev0 › fc0", "testdev0 › relu0"};
  for (guint i = 0; i < G_N_ELEMENTS(stops); i++) {
    g_assert_true(ds_window_command(window, DS_DEBUG_STEP_INTO));
    ds_test_wait_idle(window);
    g_assert_null(ds_window_get_banner_text(window));
    g_assert_true(g_str_has_prefix(ds_window_get_status_text(window), stops[i]));
    const char *text = ds_window_get_inspector_text(window);
    g_assert_nonnull(strstr(text, "at this stop"));
    g_assert_nonnull(strstr(text, "float32 (64, 16)\n    min "));
  }
  g_assert_true(ds_window_command(window, DS_DEBUG_CONTINUE));
  ds_test_wait_idle(window);
  g_assert_null(ds_window_get_banner_text(window));
  g_assert_nonnull(strstr(ds_window_get_status_text(window), "Finished"));

  /* The next model runs on the device too. */
  g_autofree char *sample = ds_test_data_path("sample", "sample-symbol.json");
  g_assert_true(ds_window_open(window, sample, &error));
  g_assert_true(ds_window_get_device(window) == ds_test_device_get());
  g_assert_true(ds_window_command(window, DS_DEBUG_RUN));
  ds_test_wait_idle(window);
  g_assert_null(ds_window_get_banner_text(window));
  g_assert_cmpuint(n_device_clusters(window), >=, 1);

  /* Back to the CPU through the menu's action: no placement. */
  g_action_group_activate_action(G_ACTION_GROUP(window), "device", g_variant_new_string("cpu"));
  g_assert_cmpstr(device_state(window), ==, "cpu");
  g_assert_null(ds_window_get_device(window));
  g_assert_null(strstr(ds_window_get_subtitle_text(window), " · on "));
  g_assert_cmpuint(n_device_clusters(window), ==, 0);
  g_assert_true(ds_window_command(window, DS_DEBUG_RUN));
  ds_test_wait_idle(window);
  g_assert_null(ds_window_get_banner_text(window));
  g_assert_cmpuint(n_device_clusters(window), ==, 0);

  /* CUDA: a build without it says so; one with it and no GPU gives the reason; either way
   * the CPU stays chosen. (With a GPU it is taken.) */
  const DsBackend *cuda = ds_backend_find("cuda");
  g_action_group_activate_action(G_ACTION_GROUP(window), "device", g_variant_new_string("cuda"));
  const char *banner = ds_window_get_banner_text(window);
  if (cuda == NULL) {
    g_assert_cmpstr(banner, ==, "This build has no cuda backend");
    g_assert_cmpstr(device_state(window), ==, "cpu");
  } else if (cuda->unavailable() != NULL) {
    g_assert_nonnull(strstr(banner, "The cuda backend cannot run here: "));
    g_assert_cmpstr(device_state(window), ==, "cpu");
    g_assert_null(ds_window_get_device(window));
  } else {
    g_assert_null(banner);
    g_assert_cmpstr(device_state(window), ==, "cuda");
  }
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

/* The LSTM over a sequence of free length s0: bindings, stepping into the loop, a
 * conditional breakpoint. */
static void test_bindings_steps_breakpoint(void)
{
  DsWindow *window = new_window();
  g_autofree char *path = ds_test_data_path("control", "lstm-foreach-symbol.json");
  g_assert_true(ds_window_open(window, path, NULL));
  ds_test_settle();
  DsBindingsPanel *bindings = ds_window_get_bindings(window);
  DsGraphCanvas *canvas = ds_window_get_canvas(window);
  GError *error = NULL;

  /* Invalid values are refused with a message naming the symbol. */
  g_assert_true(ds_bindings_panel_set_value(bindings, "s0", "abc"));
  g_assert_false(ds_window_apply_bindings(window, &error));
  g_assert_nonnull(strstr(error->message, "s0"));
  g_assert_nonnull(strstr(ds_window_get_banner_text(window), "'abc' is not a size"));
  g_clear_error(&error);
  g_assert_true(ds_bindings_panel_set_value(bindings, "s0", "0"));
  g_assert_false(ds_window_apply_bindings(window, &error));
  g_assert_nonnull(strstr(error->message, "outside its range"));
  g_clear_error(&error);
  g_assert_false(ds_bindings_panel_set_value(bindings, "no_such_symbol", "3"));

  g_assert_true(ds_bindings_panel_set_value(bindings, "s0", "5"));
  g_assert_true(ds_window_apply_bindings(window, &error));
  g_assert_no_error(error);
  g_assert_null(ds_window_get_banner_text(window));
  g_assert_cmpint(ds_bindings_panel_get_value(bindings, "s0"), ==, 5);

  /* Step into: the loop node's body, node by node (the body's variables are not nodes
   * that run). */
  for (int i = 0; i < 5; i++) {
    g_assert_true(ds_window_command(window, DS_DEBUG_STEP_INTO));
    g_assert_true(ds_window_is_busy(window));
    ds_test_wait_idle(window);
    g_assert_null(ds_window_get_banner_text(window));
  }
  const char *status = ds_window_get_status_text(window);
  g_assert_nonnull(strstr(status, "lstm_foreach0 › iter 0 › "));
  g_assert_nonnull(strstr(status, "step 5"));
  gint current = ds_graph_canvas_get_current(canvas);
  g_assert_cmpint(current, >=, 0);
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  const char *id = g_array_index(scene->nodes, DsVizNode, current).id;
  g_assert_true(g_str_has_prefix(id, "lstm_foreach0/body/"));
  /* The status names the node the canvas marks. */
  g_assert_true(g_str_has_suffix(status, "step 5") || strstr(status, strrchr(id, '/') + 1));
  /* The inspector shows the stopped node's tensors with their statistics. */
  const char *text = ds_window_get_inspector_text(window);
  g_assert_nonnull(strstr(text, "at this stop"));
  g_assert_nonnull(strstr(text, "min "));
  g_assert_nonnull(strstr(text, "nan 0"));
  ds_test_screenshot(GTK_WIDGET(window), "lstm-step-into");

  /* A breakpoint with a condition: stops in iteration 3 only. */
  g_assert_cmpuint(ds_window_add_breakpoint(window, "lstm_h2h if iter==3", &error), >, 0);
  g_assert_no_error(error);
  g_assert_cmpuint(ds_window_get_n_breakpoints(window), ==, 1);
  g_assert_cmpuint(ds_window_add_breakpoint(window, "no_such_node", &error), ==, 0);
  g_assert_nonnull(strstr(error->message, "no_such_node"));
  g_clear_error(&error);
  g_assert_true(ds_window_command(window, DS_DEBUG_CONTINUE));
  ds_test_wait_idle(window);
  status = ds_window_get_status_text(window);
  g_assert_nonnull(strstr(status, "lstm_foreach0 › iter 3 › lstm_h2h"));
  g_assert_nonnull(strstr(status, "breakpoint lstm_h2h if iter==3"));
  current = ds_graph_canvas_get_current(canvas);
  scene = ds_graph_canvas_get_scene(canvas);
  g_assert_cmpstr(g_array_index(scene->nodes, DsVizNode, current).id, ==,
                  "lstm_foreach0/body/lstm_h2h");
  text = ds_window_get_inspector_text(window);
  g_assert_nonnull(strstr(text, "num_hidden = 128"));
  g_assert_nonnull(strstr(text, "float32 (4, 128)"));
  ds_test_screenshot(GTK_WIDGET(window), "lstm-breakpoint");

  /* The canvas toggles it off again on its node; then the run goes to its end. */
  g_assert_true(ds_window_toggle_breakpoint(window, current, NULL));
  g_assert_cmpuint(ds_window_get_n_breakpoints(window), ==, 0);
  g_assert_true(ds_window_command(window, DS_DEBUG_CONTINUE));
  ds_test_wait_idle(window);
  g_assert_nonnull(strstr(ds_window_get_status_text(window), "Finished"));
  g_assert_cmpint(ds_graph_canvas_get_current(canvas), ==, -1);

  /* Toggling from the node sets one with the inspector's condition. */
  gint h2h = ds_test_find_node(scene, "lstm_foreach0/body/lstm_h2h");
  g_assert_true(ds_window_toggle_breakpoint(window, h2h, NULL));
  g_assert_cmpuint(ds_window_get_n_breakpoints(window), ==, 1);

  /* The inspector's button toggles the selected node's breakpoint, as F9 does. */
  ds_graph_canvas_select(canvas, h2h, FALSE);
  ds_test_settle();
  GtkWidget *clear = ds_test_find(GTK_WIDGET(window), labelled, "Clear Breakpoint");
  g_assert_nonnull(clear);
  g_signal_emit_by_name(clear, "clicked");
  g_assert_cmpuint(ds_window_get_n_breakpoints(window), ==, 0);
  GtkWidget *set = ds_test_find(GTK_WIDGET(window), labelled, "Set Breakpoint");
  g_assert_nonnull(set);
  g_signal_emit_by_name(set, "clicked");
  g_assert_cmpuint(ds_window_get_n_breakpoints(window), ==, 1);
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

/* The backward pass, chosen through the menu's action: the gradient nodes are drawn, a
 * breakpoint in them stops there, the run finishes; an unknown policy is refused; turning it
 * off draws the forward pass alone again. */
static void test_backward(void)
{
  DsWindow *window = new_window();
  g_autofree char *path = ds_test_data_path("sample", "sample-symbol.json");
  g_assert_true(ds_window_open(window, path, NULL));
  ds_test_settle();
  DsGraphCanvas *canvas = ds_window_get_canvas(window);
  guint forward = ds_graph_canvas_get_scene(canvas)->nodes->len;
  g_assert_cmpint(ds_test_find_node(ds_graph_canvas_get_scene(canvas), "dense0_fwd_backward_dot"), <, 0);

  g_action_group_activate_action(G_ACTION_GROUP(window), "backward",
                                 g_variant_new_string("auto"));
  ds_test_settle();
  g_assert_cmpstr(ds_window_get_backward(window), ==, "auto");
  g_autoptr(GVariant) state = g_action_group_get_action_state(G_ACTION_GROUP(window), "backward");
  g_assert_cmpstr(g_variant_get_string(state, NULL), ==, "auto");
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  g_assert_cmpuint(scene->nodes->len, >, forward);
  gint dot = ds_test_find_node(scene, "dense0_fwd_backward_dot");
  g_assert_cmpint(dot, >=, 0);

  GError *error = NULL;
  g_assert_cmpuint(ds_window_add_breakpoint(window, "dense0_fwd_backward_dot", &error), >, 0);
  g_assert_no_error(error);
  g_assert_true(ds_window_command(window, DS_DEBUG_CONTINUE));
  ds_test_wait_idle(window);
  g_assert_nonnull(strstr(ds_window_get_status_text(window), "dense0_fwd_backward_dot"));
  g_assert_cmpint(ds_graph_canvas_get_current(canvas), ==, dot);
  g_assert_nonnull(strstr(ds_window_get_inspector_text(window), "at this stop"));
  ds_test_screenshot(GTK_WIDGET(window), "backward-breakpoint");
  g_assert_true(ds_window_toggle_breakpoint(window, dot, NULL));
  g_assert_true(ds_window_command(window, DS_DEBUG_CONTINUE));
  ds_test_wait_idle(window);
  g_assert_nonnull(strstr(ds_window_get_status_text(window), "Finished"));

  g_assert_false(ds_window_set_backward(window, "sometimes", &error));
  g_assert_nonnull(strstr(error->message, "sometimes"));
  g_clear_error(&error);
  g_assert_cmpstr(ds_window_get_backward(window), ==, "auto");

  g_assert_true(ds_window_set_backward(window, "off", &error));
  g_assert_no_error(error);
  ds_test_settle();
  g_assert_null(ds_window_get_backward(window));
  g_assert_cmpuint(ds_graph_canvas_get_scene(canvas)->nodes->len, ==, forward);
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

/* An ONNX model opens like any other: its Loop is a cluster, stepping goes into the body. */
static void test_onnx_model(void)
{
  g_autofree char *tmp = g_dir_make_tmp("ds-gui-onnx-XXXXXX", NULL);
  const char *src = g_getenv("DS_SOURCE_DIR");
  g_autofree char *script = g_build_filename(src != NULL ? src : "..", "tests", "onnx_samples.py",
                                             NULL);
  const char *argv[] = {"/usr/bin/python3", script, tmp, NULL};
  gint status = -1;
  if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL,
                    NULL, &status, NULL) ||
      !g_spawn_check_wait_status(status, NULL)) {
    g_test_skip("the onnx Python package is not available to write the sample models");
    return;
  }
  DsWindow *window = new_window();
  g_autofree char *path = g_build_filename(tmp, "loop.onnx", NULL);
  GError *error = NULL;
  g_assert_true(ds_window_open(window, path, &error));
  g_assert_no_error(error);
  ds_test_settle();
  DsGraphCanvas *canvas = ds_window_get_canvas(window);
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  g_assert_cmpint(ds_test_find_node(scene, "Loop_v_final"), >=, 0);
  g_assert_cmpint(ds_test_find_node(scene, "Loop_v_final/func/Add_v_out"), >=, 0);
  for (int i = 0; i < 3; i++) {
    g_assert_true(ds_window_command(window, DS_DEBUG_STEP_INTO));
    ds_test_wait_idle(window);
    g_assert_null(ds_window_get_banner_text(window));
  }
  const char *text = ds_window_get_status_text(window);
  g_assert_nonnull(strstr(text, "Loop_v_final › iter 0 › "));
  ds_test_screenshot(GTK_WIDGET(window), "onnx-loop-step-into");
  g_assert_true(ds_window_command(window, DS_DEBUG_CONTINUE));
  ds_test_wait_idle(window);
  g_assert_nonnull(strstr(ds_window_get_status_text(window), "Finished"));
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
  g_autoptr(GDir) dir = g_dir_open(tmp, 0, NULL);
  for (const char *name; dir != NULL && (name = g_dir_read_name(dir)) != NULL;) {
    g_autofree char *file = g_build_filename(tmp, name, NULL);
    g_unlink(file);
  }
  g_rmdir(tmp);
}

static gboolean file_starts_with(const char *path, const char *magic, gsize n)
{
  g_autofree char *data = NULL;
  gsize length;
  return g_file_get_contents(path, &data, &length, NULL) && length > n &&
         memcmp(data, magic, n) == 0;
}

/* A run makes the overlays live; export writes each kind of file. */
static void test_overlay_and_export(void)
{
  DsWindow *window = new_window();
  g_autofree char *path = ds_test_data_path("control", "cond-in-loop-symbol.json");
  g_assert_true(ds_window_open(window, path, NULL));
  ds_test_settle();
  g_autofree char *dir = g_dir_make_tmp("ds-gui-XXXXXX", NULL);
  g_autofree char *report = g_build_filename(dir, "report.json", NULL);
  GError *error = NULL;

  /* Before a run: no overlay, no report; the graph itself exports. */
  g_assert_false(ds_window_set_overlay(window, DS_VIZ_OVERLAY_TIME, &error));
  g_assert_nonnull(strstr(error->message, "run the model first"));
  g_clear_error(&error);
  g_assert_false(ds_window_export(window, DS_WINDOW_EXPORT_REPORT, report, &error));
  g_clear_error(&error);
  g_assert_false(g_file_test(report, G_FILE_TEST_EXISTS));

  g_assert_true(ds_bindings_panel_set_value(ds_window_get_bindings(window), "s0", "6"));
  g_assert_true(ds_window_apply_bindings(window, NULL));
  g_assert_true(ds_window_command(window, DS_DEBUG_RUN));
  ds_test_wait_idle(window);
  g_assert_null(ds_window_get_banner_text(window));
  g_assert_nonnull(strstr(ds_window_get_status_text(window), "Ran in"));

  DsGraphCanvas *canvas = ds_window_get_canvas(window);
  g_assert_true(ds_window_set_overlay(window, DS_VIZ_OVERLAY_TIME, &error));
  g_assert_no_error(error);
  const DsVizScene *scene = ds_graph_canvas_get_scene(canvas);
  g_assert_cmpuint(scene->legend->len, >, 0);
  /* After the run, edges carry the concrete shapes next to the symbolic ones. */
  gboolean concrete = FALSE;
  for (guint i = 0; i < scene->edges->len; i++) {
    const char *label = g_array_index(scene->edges, DsVizEdge, i).label;
    concrete |= label != NULL && strstr(label, "(s0, 3) = (6, 3)") != NULL;
  }
  g_assert_true(concrete);
  /* The inspector has the node's time and memory from the run. */
  gint loop = ds_test_find_node(scene, "loop0");
  g_assert_cmpint(loop, >=, 0);
  ds_graph_canvas_select(canvas, loop, TRUE);
  g_assert_nonnull(strstr(ds_window_get_inspector_text(window), "last run"));
  ds_test_screenshot(GTK_WIDGET(window), "overlay-time");
  g_assert_true(ds_window_set_overlay(window, DS_VIZ_OVERLAY_MEMORY, NULL));
  g_assert_cmpuint(ds_graph_canvas_get_scene(canvas)->legend->len, >, 0);
  ds_test_screenshot(GTK_WIDGET(window), "overlay-memory");

  g_assert_true(ds_window_export(window, DS_WINDOW_EXPORT_REPORT, report, &error));
  g_assert_no_error(error);
  g_autofree char *json = NULL;
  g_assert_true(g_file_get_contents(report, &json, NULL, NULL));
  cJSON *parsed = cJSON_Parse(json);
  g_assert_nonnull(parsed);
  g_assert_cmpstr(cJSON_GetObjectItem(parsed, "schema")->valuestring, ==, "dynscope-profile");
  g_assert_cmpint(cJSON_GetArraySize(cJSON_GetObjectItem(parsed, "events")), >, 6);
  cJSON_Delete(parsed);
  static const struct {
    DsWindowExport what;
    const char *file, *magic;
  } kinds[] = {{DS_WINDOW_EXPORT_TRACE, "trace.json", "{"},
               {DS_WINDOW_EXPORT_HTML, "report.html", "<!DOCTYPE html>"},
               {DS_WINDOW_EXPORT_SVG, "graph.svg", "<?xml"},
               {DS_WINDOW_EXPORT_PNG, "graph.png", "\x89PNG"}};
  for (guint i = 0; i < G_N_ELEMENTS(kinds); i++) {
    g_autofree char *out = g_build_filename(dir, kinds[i].file, NULL);
    g_assert_true(ds_window_export(window, kinds[i].what, out, &error));
    g_assert_no_error(error);
    g_assert_true(file_starts_with(out, kinds[i].magic, strlen(kinds[i].magic)));
    g_unlink(out);
  }
  /* An unwritable path: a message in the window, no file. */
  g_autofree char *nowhere = g_build_filename(dir, "missing", "report.json", NULL);
  g_assert_false(ds_window_export(window, DS_WINDOW_EXPORT_REPORT, nowhere, &error));
  g_clear_error(&error);
  g_assert_nonnull(ds_window_get_banner_text(window));

  /* An input from an .npy file: its rows set the loop's length (s0 follows the file). */
  float rows[4 * 3];
  for (int i = 0; i < 12; i++)
    rows[i] = (float)(i % 5) - 2.0f;
  DsTensor t = {.dtype = DS_DTYPE_FLOAT32, .ndim = 2, .shape = {4, 3}, .data = rows};
  g_autofree char *npy = g_build_filename(dir, "data.npy", NULL);
  g_assert_true(ds_npy_save(npy, &t, NULL));
  DsBindingsPanel *bindings = ds_window_get_bindings(window);
  g_assert_true(ds_bindings_panel_set_value(bindings, "s0", ""));
  g_assert_true(ds_bindings_panel_set_input_file(bindings, "data", npy));
  g_assert_true(ds_window_apply_bindings(window, &error));
  g_assert_no_error(error);
  g_assert_true(ds_window_command(window, DS_DEBUG_RUN));
  ds_test_wait_idle(window);
  g_assert_null(ds_window_get_banner_text(window));
  ds_graph_canvas_select(canvas, ds_test_find_node(ds_graph_canvas_get_scene(canvas), "loop0"), TRUE);
  g_assert_nonnull(strstr(ds_window_get_inspector_text(window), "(s0, 3) = (4, 3)"));
  /* A file that is not an array: refused, naming it. */
  g_assert_true(ds_bindings_panel_set_input_file(bindings, "data", report));
  g_assert_false(ds_window_apply_bindings(window, &error));
  g_assert_nonnull(strstr(error->message, "report.json"));
  g_clear_error(&error);
  g_unlink(npy);
  g_unlink(report);
  g_rmdir(dir);
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

/* A long run is cancelled from the UI thread; the window stays usable. */
static void test_cancel(void)
{
  DsWindow *window = new_window();
  g_autofree char *path = ds_test_data_path("control", "lstm-foreach-symbol.json");
  g_assert_true(ds_window_open(window, path, NULL));
  g_assert_true(ds_bindings_panel_set_value(ds_window_get_bindings(window), "s0", "200000"));
  g_assert_true(ds_window_apply_bindings(window, NULL));
  g_assert_true(ds_window_command(window, DS_DEBUG_RUN));
  /* A second command while one runs is refused. */
  g_assert_false(ds_window_command(window, DS_DEBUG_STEP));
  /* Let it get going, then cancel. */
  for (int i = 0; i < 20 && ds_window_is_busy(window); i++)
    g_main_context_iteration(NULL, TRUE);
  ds_window_cancel(window);
  ds_test_wait_idle(window);
  g_assert_cmpstr(ds_window_get_status_text(window), ==, "Cancelled");
  g_assert_nonnull(strstr(ds_window_get_banner_text(window), "cancel"));
  /* And the next command works. */
  g_assert_true(ds_bindings_panel_set_value(ds_window_get_bindings(window), "s0", "2"));
  g_assert_true(ds_window_apply_bindings(window, NULL));
  g_assert_true(ds_window_command(window, DS_DEBUG_RUN));
  ds_test_wait_idle(window);
  g_assert_nonnull(strstr(ds_window_get_status_text(window), "Ran in"));
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

/* The empty window offers recent models; size and folder are remembered. */
static void test_recent_and_state(void)
{
  DsWindow *window = new_window();
  g_autofree char *path = ds_test_data_path("control", "greedy-decoder-symbol.json");
  g_assert_true(ds_window_open(window, path, NULL));
  /* The recent-files store is written in the background. */
  gboolean listed = FALSE;
  for (int i = 0; i < 200 && !listed; i++) {
    g_main_context_iteration(NULL, FALSE);
    g_usleep(10000);
    g_autoptr(GPtrArray) recent = ds_window_list_recent(window);
    listed = recent->len > 0 && g_str_has_suffix(recent->pdata[0], "greedy-decoder-symbol.json");
  }
  g_assert_true(listed);
  gtk_window_set_default_size(GTK_WINDOW(window), 1000, 700);
  gtk_window_close(GTK_WINDOW(window)); /* saves the state */
  ds_test_settle();

  DsWindow *again = ds_window_new(NULL);
  int width, height;
  gtk_window_get_default_size(GTK_WINDOW(again), &width, &height);
  g_assert_cmpint(width, ==, 1000);
  g_assert_cmpint(height, ==, 700);
  gtk_window_present(GTK_WINDOW(again));
  /* The built-in resources: the app icon by name, and the shortcuts window. */
  GtkIconTheme *theme = gtk_icon_theme_get_for_display(gtk_widget_get_display(GTK_WIDGET(again)));
  g_assert_true(gtk_icon_theme_has_icon(theme, "org.dynscope.Dynscope"));
  GtkBuilder *builder = gtk_builder_new_from_resource("/org/dynscope/Dynscope/gtk/help-overlay.ui");
  GObject *shortcuts = gtk_builder_get_object(builder, "help_overlay");
  g_assert_true(GTK_IS_SHORTCUTS_WINDOW(shortcuts));
  gtk_window_destroy(GTK_WINDOW(shortcuts));
  g_object_unref(builder);
  ds_test_screenshot(GTK_WIDGET(again), "empty-window");
  /* A recent model's button on the empty page opens it. */
  g_autofree char *absolute = g_canonicalize_filename(path, NULL);
  GtkWidget *item = ds_test_find_button_with_path(GTK_WIDGET(again), absolute);
  g_assert_nonnull(item);
  g_signal_emit_by_name(item, "clicked");
  ds_test_settle();
  g_assert_cmpuint(ds_window_get_n_regions(again), >, 0);
  g_assert_nonnull(strstr(ds_window_get_subtitle_text(again), "op"));
  gtk_window_destroy(GTK_WINDOW(again));
  ds_test_settle();
}

/* The dark style: the canvas draws edges in the theme's light text colour. */
static void test_dark_style(void)
{
  GtkSettings *settings = gtk_settings_get_default();
  g_object_set(settings, "gtk-application-prefer-dark-theme", TRUE, NULL);
  DsWindow *window = new_window();
  g_autofree char *path = ds_test_data_path("control", "greedy-decoder-symbol.json");
  g_assert_true(ds_window_open(window, path, NULL));
  ds_test_settle();
  GdkRGBA fg;
  gtk_style_context_get_color(gtk_widget_get_style_context(GTK_WIDGET(ds_window_get_canvas(window))),
                              &fg);
  g_assert_cmpfloat(0.3 * fg.red + 0.6 * fg.green + 0.1 * fg.blue, >, 0.6);
  ds_test_screenshot(GTK_WIDGET(window), "dark");
  gtk_window_destroy(GTK_WINDOW(window));
  g_object_set(settings, "gtk-application-prefer-dark-theme", FALSE, NULL);
  ds_test_settle();
  window = new_window();
  gtk_style_context_get_color(gtk_widget_get_style_context(GTK_WIDGET(ds_window_get_canvas(window))),
                              &fg);
  g_assert_cmpfloat(0.3 * fg.red + 0.6 * fg.green + 0.1 * fg.blue, <, 0.4);
  gtk_window_destroy(GTK_WINDOW(window));
  ds_test_settle();
}

/* LANGUAGE=de: the window speaks German (run in a child with the catalogue of the build). */
static void test_german(void)
{
  if (g_test_subprocess()) {
    bindtextdomain(GETTEXT_PACKAGE, DS_BUILD_LOCALEDIR);
    bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
    textdomain(GETTEXT_PACKAGE);
    DsWindow *window = new_window();
    g_print("status=%s\n", ds_window_get_status_text(window));
    g_autofree char *path = ds_test_data_path("control", "greedy-decoder-symbol.json");
    g_assert_true(ds_window_open(window, path, NULL));
    g_print("status=%s\n", ds_window_get_status_text(window));
    /* The canvas's legend too. */
    GArray *legend = ds_graph_canvas_get_scene(ds_window_get_canvas(window))->legend;
    for (guint i = 0; i < legend->len; i++)
      g_print("legend=%s\n", g_array_index(legend, DsVizLegendEntry, i).text);
    ds_test_screenshot(GTK_WIDGET(window), "german");
    gtk_window_destroy(GTK_WINDOW(window));
    ds_test_settle();
    return;
  }
  /* The child inherits the environment (GLib 2.74 has no per-child environment). */
  g_autofree char *language = g_strdup(g_getenv("LANGUAGE"));
  g_autofree char *lc_all = g_strdup(g_getenv("LC_ALL"));
  g_setenv("LANGUAGE", "de", TRUE);
  g_setenv("LC_ALL", "C.UTF-8", TRUE);
  g_test_trap_subprocess(NULL, 0, G_TEST_SUBPROCESS_INHERIT_STDERR);
  if (language != NULL)
    g_setenv("LANGUAGE", language, TRUE);
  else
    g_unsetenv("LANGUAGE");
  if (lc_all != NULL)
    g_setenv("LC_ALL", lc_all, TRUE);
  else
    g_unsetenv("LC_ALL");
  g_test_trap_assert_passed();
  /* The German status lines, not the English ones. */
  g_test_trap_assert_stdout_unmatched("*Open a model to see its graph*");
  g_test_trap_assert_stdout_unmatched("*Ready: step through it*");
  g_test_trap_assert_stdout("*status=*Modell*");
  g_test_trap_assert_stdout("*legend=Modelleingabe*");
  g_test_trap_assert_stdout_unmatched("*legend=model input*");
}

int main(int argc, char **argv)
{
  /* Tests read their own state and recent files, never the user's. */
  g_autofree char *home = g_dir_make_tmp("ds-gui-home-XXXXXX", NULL);
  g_autofree char *config = g_build_filename(home, "config", NULL);
  g_autofree char *data = g_build_filename(home, "data", NULL);
  if (g_getenv("DS_GUI_KEEP_HOME") == NULL) {
    g_setenv("XDG_CONFIG_HOME", config, TRUE);
    g_setenv("XDG_DATA_HOME", data, TRUE);
  }
  setlocale(LC_ALL, "");
  g_test_init(&argc, &argv, NULL);
  if (!gtk_init_check()) {
    g_test_skip("no display");
    return g_test_run();
  }
  g_test_add_func("/gui/open-and-inspect", test_open_and_inspect);
  g_test_add_func("/gui/pick-in-loops", test_pick_in_loops);
  g_test_add_func("/gui/real-model-then-control", test_real_model_then_control);
  g_test_add_func("/gui/bindings-steps-breakpoint", test_bindings_steps_breakpoint);
  g_test_add_func("/gui/overlay-and-export", test_overlay_and_export);
  g_test_add_func("/gui/device", test_device);
  g_test_add_func("/gui/backward", test_backward);
  g_test_add_func("/gui/cancel", test_cancel);
  g_test_add_func("/gui/recent-and-state", test_recent_and_state);
  g_test_add_func("/gui/dark-style", test_dark_style);
  g_test_add_func("/gui/german", test_german);
  g_test_add_func("/gui/onnx-model", test_onnx_model);
  int status = g_test_run();
  if (!g_test_subprocess()) {
    g_autofree char *command = g_strdup_printf("rm -rf '%s'", home);
    if (system(command) != 0)
      g_printerr("could not remove %s\n", home);
  }
  return status;
}
