/* ds-window.h: the main window: a model's graph, and what the selected node is.
 *
 * The header bar opens models (and a model can be dropped on the window); the canvas shows
 * the graph with its partition regions and control-flow bodies; the sidebar inspects the
 * selected node (op, attributes, inputs and outputs with symbolic shapes) and lists the
 * regions and bodies. A model that
 * does not load leaves the window as it was and says why in a banner.
 */
#pragma once

#include <gtk/gtk.h>

#include "ds-graph-canvas.h"

G_BEGIN_DECLS

#define DS_TYPE_WINDOW (ds_window_get_type())
G_DECLARE_FINAL_TYPE(DsWindow, ds_window, DS, WINDOW, GtkApplicationWindow)

DsWindow *ds_window_new(GtkApplication *app);

/* Opens a model file; on failure the banner shows the loader's message. */
gboolean ds_window_open(DsWindow *window, const char *path, GError **error);

/* Selects and reveals the first node whose id or op contains `text` (any case), from the
 * selection on (after it with `next`), wrapping; its index, or -1. Ctrl+F types into it. */
gint ds_window_search(DsWindow *window, const char *text, gboolean next);

/* The regions tree: a row per partition region, loop, body and collapsed box; selecting one
 * focuses the canvas on it. */
guint ds_window_get_n_regions(DsWindow *window);
void ds_window_select_region(DsWindow *window, guint index);

DsGraphCanvas *ds_window_get_canvas(DsWindow *window);
/* The inspector's text and the banner's message (NULL when hidden), for tests. */
const char *ds_window_get_inspector_text(DsWindow *window);
const char *ds_window_get_banner_text(DsWindow *window);

G_END_DECLS
