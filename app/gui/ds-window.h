/* ds-window.h: the main window: a model's graph, how it runs, and what each node does.
 *
 * The header bar opens models (a model can also be dropped on the window, and recent ones
 * are a click away), runs and steps them, picks an overlay and exports. The canvas shows the
 * graph with its partition regions and control-flow bodies, the node where execution stands
 * and the breakpoints; the sidebar inspects the selected node (op, attributes, shapes, the
 * last run's time and memory, and its tensors at a stop), lists the regions and bodies, the
 * bindings a run uses and the breakpoints. Runs and steps go on in a worker thread with
 * progress and Cancel. Anything that fails says why in a banner and leaves the window as it
 * was.
 */
#pragma once

#include <gtk/gtk.h>

#include "ds-backend.h"
#include "ds-bindings-panel.h"
#include "ds-debugger.h"
#include "ds-graph-canvas.h"
#include "ds-viz.h"

G_BEGIN_DECLS

#define DS_TYPE_WINDOW (ds_window_get_type())
G_DECLARE_FINAL_TYPE(DsWindow, ds_window, DS, WINDOW, GtkApplicationWindow)

DsWindow *ds_window_new(GtkApplication *app);

/* Opens a model file; on failure the banner shows the loader's message. An MXNet symbol file
 * is given the weights saved beside it ("net-symbol.json": "net.params", or the latest
 * "net-NNNN.params"); an ONNX file uses its initializers; without either, runs use random
 * weights. */
gboolean ds_window_open(DsWindow *window, const char *path, GError **error);
/* The same with the weights of `weights` (a .params file; NULL: those beside the model). A
 * file that does not fit the model leaves the open one as it was. Main menu › Open Weights…
 * opens the model again with the file it picks. */
gboolean ds_window_open_with_weights(DsWindow *window, const char *path, const char *weights,
                                     GError **error);
/* The .params file the open model's weights come from, or NULL. */
const char *ds_window_get_weights(DsWindow *window);

/* Outlines every node whose id or op contains `text` (any case) and selects and reveals one:
 * from the selection on (`step` 0), the next after it (1) or the one before it (-1),
 * wrapping; its index, or -1. When the only matches are inside collapsed layer groups, the
 * first one's group is opened. Ctrl+F types into it; the search bar shows "3 of 12". */
gint ds_window_search(DsWindow *window, const char *text, gint step);
/* How many nodes the last search matched, those inside collapsed groups included. */
guint ds_window_get_n_matches(DsWindow *window);

/* The regions tree: a row per partition region, loop, body and collapsed box; selecting one
 * focuses the canvas on it. */
guint ds_window_get_n_regions(DsWindow *window);
void ds_window_select_region(DsWindow *window, guint index);

/* ---- running and stepping ---- */

/* Starts a command (the header's buttons); FALSE if one is running or no model is open. */
gboolean ds_window_command(DsWindow *window, DsDebugCommand command);
gboolean ds_window_is_busy(DsWindow *window);
void ds_window_cancel(DsWindow *window);
/* Abandons a paused run. */
void ds_window_reset(DsWindow *window);
/* Applies the bindings panel (ds_bindings_panel_apply()); errors also go to the banner. */
gboolean ds_window_apply_bindings(DsWindow *window, GError **error);

/* Adds a breakpoint (ds-breakpoint.h syntax); its id, or 0 with the error in the banner. */
guint ds_window_add_breakpoint(DsWindow *window, const char *spec, GError **error);
/* Sets or clears the breakpoint on scene node `index` (with the inspector's condition). */
gboolean ds_window_toggle_breakpoint(DsWindow *window, gint index, GError **error);
guint ds_window_get_n_breakpoints(DsWindow *window);

/* Where runs go: the CPU (NULL or the CPU backend) or a device backend, which then takes the
 * regions it supports (placement, as `--device`), for this model and the ones opened later.
 * FALSE, with the reason in the banner, when the device cannot run here or a command runs.
 * The main menu's Run On section sets it by name. */
gboolean ds_window_set_device(DsWindow *window, const DsBackend *device, GError **error);
/* The device runs go to; NULL for the CPU. */
const DsBackend *ds_window_get_device(DsWindow *window);

/* Whether the open model (and the ones opened later) runs its backward pass after its forward
 * pass, and under which policy: "off" (or NULL), "save", "auto" or "recompute", as
 * `--backward --recompute`. Opens the model again. FALSE, with the reason in the banner, for
 * another name, while a command runs, or when the model cannot be differentiated (it stays
 * open as it was). The main menu's Backward Pass section sets it by name. */
gboolean ds_window_set_backward(DsWindow *window, const char *policy, GError **error);
/* The backward pass's policy, or NULL for the forward pass alone. */
const char *ds_window_get_backward(DsWindow *window);

/* ---- overlays and export ---- */

/* Colours the graph by the last run's profile; NONE always works, the others need a run. */
gboolean ds_window_set_overlay(DsWindow *window, DsVizOverlay overlay, GError **error);

typedef enum {
  DS_WINDOW_EXPORT_REPORT, /* the profile report, JSON */
  DS_WINDOW_EXPORT_TRACE,  /* Chrome trace JSON */
  DS_WINDOW_EXPORT_HTML,   /* the HTML report, with the graph */
  DS_WINDOW_EXPORT_SVG,    /* the graph as drawn, overlay included */
  DS_WINDOW_EXPORT_PNG,
} DsWindowExport;

/* Writes `what` to `path` (atomically); the header's Export menu asks for the path. */
gboolean ds_window_export(DsWindow *window, DsWindowExport what, const char *path,
                          GError **error);

/* ---- for tests ---- */

DsGraphCanvas *ds_window_get_canvas(DsWindow *window);
DsBindingsPanel *ds_window_get_bindings(DsWindow *window);
DsDebugger *ds_window_get_debugger(DsWindow *window); /* NULL before a model is open */
DsSession *ds_window_get_session(DsWindow *window);   /* NULL before a model is open */
/* The inspector's text, the banner's message (NULL when hidden) and the status line (the
 * frame path at a stop: "while0 › iter 3 › fc1"). */
const char *ds_window_get_inspector_text(DsWindow *window);
const char *ds_window_get_banner_text(DsWindow *window);
const char *ds_window_get_status_text(DsWindow *window);
const char *ds_window_get_subtitle_text(DsWindow *window);
/* The recent models the window offers, newest first (paths; caller frees). */
GPtrArray *ds_window_list_recent(DsWindow *window);

G_END_DECLS
