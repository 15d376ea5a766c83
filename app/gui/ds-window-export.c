/* ds-window-export.c: the overlay menu, and writing reports, traces and pictures. */
#include "ds-window-private.h"

#include <glib/gi18n.h>
#include <string.h>

#include "ds-error.h"
#include "ds-file.h"
#include "ds-report-html.h"
#include "ds-viz-layout.h"

/* ---- overlays ---- */

static const char *const overlay_names[] = {"none", "time", "memory", "dynamic"};

gboolean ds_window_set_overlay(DsWindow *w, DsVizOverlay overlay, GError **error)
{
  GError *local = NULL;
  if (overlay != DS_VIZ_OVERLAY_NONE &&
      (w->debugger == NULL || ds_debugger_get_report(w->debugger) == NULL)) {
    g_set_error_literal(&local, DS_ERROR, DS_ERROR_INPUT,
                        _("Overlays show the last run: run the model first (Ctrl+R)"));
  } else if (ds_window_is_busy(w)) {
    g_set_error_literal(&local, DS_ERROR, DS_ERROR_INPUT, _("Wait for the run to stop"));
  } else {
    DsVizOverlay before = w->overlay;
    w->overlay = overlay;
    if (!ds_window_redraw(w, &local))
      w->overlay = before;
  }
  if (local != NULL) {
    ds_window_show_banner(w, local->message);
    g_propagate_error(error, local);
    return FALSE;
  }
  GAction *action = g_action_map_lookup_action(G_ACTION_MAP(w), "overlay");
  g_simple_action_set_state(G_SIMPLE_ACTION(action), g_variant_new_string(overlay_names[overlay]));
  return TRUE;
}

static void on_overlay(GSimpleAction *action, GVariant *value, gpointer data)
{
  (void)action;
  const char *name = g_variant_get_string(value, NULL);
  for (guint i = 0; i < G_N_ELEMENTS(overlay_names); i++)
    if (strcmp(name, overlay_names[i]) == 0)
      ds_window_set_overlay(data, (DsVizOverlay)i, NULL);
}

GMenuModel *ds_window_overlay_menu(void)
{
  GMenu *menu = g_menu_new();
  g_menu_append(menu, _("_No Overlay"), "win.overlay::none");
  g_menu_append(menu, _("_Time per Node"), "win.overlay::time");
  g_menu_append(menu, _("_Memory Reuse"), "win.overlay::memory");
  g_menu_append(menu, _("_Dynamic Output Sizes"), "win.overlay::dynamic");
  return G_MENU_MODEL(menu);
}

/* ---- export ---- */

static const struct {
  const char *name, *suffix;
} exports[] = {
    [DS_WINDOW_EXPORT_REPORT] = {"report", "-profile.json"},
    [DS_WINDOW_EXPORT_TRACE] = {"trace", "-trace.json"},
    [DS_WINDOW_EXPORT_HTML] = {"html", "-profile.html"},
    [DS_WINDOW_EXPORT_SVG] = {"svg", ".svg"},
    [DS_WINDOW_EXPORT_PNG] = {"png", ".png"},
};

/* The graph as the canvas shows it (overlay and expanded boxes included), rendered. */
static char *render_graph(DsWindow *w, const char *format, gsize *length, GError **error)
{
  const DsVizScene *scene = ds_graph_canvas_get_scene(DS_GRAPH_CANVAS(w->canvas));
  char *data = NULL;
  if (!ds_viz_render(scene, format, &data, length, error))
    return NULL;
  return data;
}

static gboolean write_text(const char *path, char *text, GError **error)
{
  gboolean ok = ds_file_write_atomic(path, text, strlen(text), error);
  g_free(text);
  return ok;
}

gboolean ds_window_export(DsWindow *w, DsWindowExport what, const char *path, GError **error)
{
  GError *local = NULL;
  const DsReport *report = w->debugger != NULL ? ds_debugger_get_report(w->debugger) : NULL;
  gboolean ok = FALSE;
  if (w->session == NULL) {
    g_set_error_literal(&local, DS_ERROR, DS_ERROR_INPUT, _("Open a model first"));
  } else if (what <= DS_WINDOW_EXPORT_HTML && report == NULL) {
    g_set_error_literal(&local, DS_ERROR, DS_ERROR_INPUT,
                        _("Reports and traces describe a run: run the model first (Ctrl+R)"));
  } else if (ds_window_is_busy(w)) {
    g_set_error_literal(&local, DS_ERROR, DS_ERROR_INPUT, _("Wait for the run to stop"));
  } else {
    switch (what) {
    case DS_WINDOW_EXPORT_REPORT:
      ok = write_text(path, cJSON_Print(ds_debugger_get_report_json(w->debugger)), &local);
      break;
    case DS_WINDOW_EXPORT_TRACE:
      ok = write_text(path, ds_profiler_build_trace(ds_debugger_get_profiler(w->debugger)),
                      &local);
      break;
    case DS_WINDOW_EXPORT_HTML: {
      gsize length;
      g_autofree char *svg = render_graph(w, "svg", &length, &local);
      ok = svg != NULL && ds_report_write_html(report, svg, path, &local);
      break;
    }
    case DS_WINDOW_EXPORT_SVG:
    case DS_WINDOW_EXPORT_PNG: {
      gsize length;
      g_autofree char *data = render_graph(w, exports[what].name, &length, &local);
      ok = data != NULL && ds_file_write_atomic(path, data, length, &local);
      break;
    }
    }
  }
  if (!ok) {
    ds_window_show_banner(w, local->message);
    g_propagate_error(error, local);
    return FALSE;
  }
  ds_window_state_set_folder(path);
  return TRUE;
}

typedef struct {
  DsWindow *window;
  DsWindowExport what;
} ExportRequest;

static void on_export_response(GtkNativeDialog *dialog, int response, ExportRequest *request)
{
  if (response == GTK_RESPONSE_ACCEPT) {
    g_autoptr(GFile) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
    g_autofree char *path = file != NULL ? g_file_get_path(file) : NULL;
    if (path != NULL)
      ds_window_export(request->window, request->what, path, NULL);
  }
  g_free(request);
  g_object_unref(dialog);
}

static void on_export(GSimpleAction *action, GVariant *value, gpointer data)
{
  (void)action;
  DsWindow *w = data;
  const char *name = g_variant_get_string(value, NULL);
  guint what = 0;
  while (what < G_N_ELEMENTS(exports) && strcmp(exports[what].name, name) != 0)
    what++;
  if (what == G_N_ELEMENTS(exports) || w->session == NULL)
    return;
  GtkFileChooserNative *dialog = gtk_file_chooser_native_new(
      _("Export"), GTK_WINDOW(w), GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
  g_autofree char *base = g_path_get_basename(w->path);
  char *dot = strrchr(base, '.');
  if (dot != NULL)
    *dot = '\0';
  g_autofree char *suggested = g_strconcat(base, exports[what].suffix, NULL);
  gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(dialog), suggested);
  g_autofree char *folder = ds_window_state_get_folder();
  if (folder != NULL) {
    g_autoptr(GFile) dir = g_file_new_for_path(folder);
    gtk_file_chooser_set_current_folder(GTK_FILE_CHOOSER(dialog), dir, NULL);
  }
  ExportRequest *request = g_new0(ExportRequest, 1);
  request->window = w;
  request->what = (DsWindowExport)what;
  g_signal_connect(dialog, "response", G_CALLBACK(on_export_response), request);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(dialog));
}

GMenuModel *ds_window_export_menu(void)
{
  GMenu *menu = g_menu_new();
  GMenu *run = g_menu_new();
  g_menu_append(run, _("Profile _Report (JSON)…"), "win.export::report");
  g_menu_append(run, _("_Trace for Perfetto (JSON)…"), "win.export::trace");
  g_menu_append(run, _("_HTML Report…"), "win.export::html");
  g_menu_append_section(menu, _("The last run"), G_MENU_MODEL(run));
  g_object_unref(run);
  GMenu *graph = g_menu_new();
  g_menu_append(graph, _("Graph as _SVG…"), "win.export::svg");
  g_menu_append(graph, _("Graph as _PNG…"), "win.export::png");
  g_menu_append_section(menu, _("The graph as shown"), G_MENU_MODEL(graph));
  g_object_unref(graph);
  return G_MENU_MODEL(menu);
}

void ds_window_add_export_actions(DsWindow *w)
{
  static const GActionEntry actions[] = {
      {.name = "overlay", .parameter_type = "s", .state = "'none'", .change_state = on_overlay},
      {.name = "export", .activate = on_export, .parameter_type = "s"},
  };
  g_action_map_add_action_entries(G_ACTION_MAP(w), actions, G_N_ELEMENTS(actions), w);
}
