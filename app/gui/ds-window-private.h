/* ds-window-private.h: the window's state, shared by the files that each handle one part of
 * it (ds-window.c: building; ds-window-view.c; ds-window-inspector.c; ds-window-debug.c:
 * runs, steps, breakpoints and bindings; ds-window-recent.c; ds-window-open.c: a model and
 * its weights; ds-window-device.c: the device runs go to; ds-window-backward.c;
 * ds-window-export.c: overlays and export; ds-window-state.c: what is remembered between
 * sessions). */
#pragma once

#include "ds-bindings-panel.h"
#include "ds-debugger.h"
#include "ds-error.h"
#include "ds-session.h"
#include "ds-window.h"

/* A breakpoint as the window lists it. */
typedef struct {
  guint id; /* the cursor's */
  char *spec;
} DsWindowBreakpoint;

struct _DsWindow {
  GtkApplicationWindow parent;

  /* The model. */
  DsSession *session;
  /* The symbolic shapes, or partial ones when symbolic inference fails: a copy, as the
   * session replaces its own when it prepares. */
  DsGraphShapes *shapes;
  gboolean *weights;           /* per graph node: a weight (hidden in big graphs) */
  char *weights_path;          /* the .params file fed, or NULL (random or ONNX initializers) */
  GPtrArray *expanded;         /* ids of regions and loops the user opened */
  GHashTable *scene_index;     /* scene node id -> index + 1 */
  char *path;

  /* Running it. */
  DsDebugger *debugger;
  const DsBackend *device; /* where runs go (ds-window-device.c); NULL: the CPU */
  char *backward;          /* the backward pass's policy ("save", "auto"...; ds-window-
                            * backward.c), or NULL for the forward pass alone */
  GPtrArray *breakpoints; /* DsWindowBreakpoint */
  GHashTable *profile;    /* the last run's DsVizNodeProfile by key, or NULL */
  DsVizOverlay overlay;
  guint progress_source;
  gboolean stopped; /* the cursor is paused: the inspector shows tensors */

  /* Widgets. */
  GtkWidget *main_stack; /* "empty" (recent files) or "graph" */
  GtkWidget *sidebar;    /* shown once a model is open */
  GtkWidget *canvas;
  GtkWidget *inspector;
  GtkWidget *breakpoint_button, *condition_entry;
  GtkWidget *banner, *banner_label;
  GtkWidget *title, *subtitle;
  GtkWidget *export_button, *overlay_button; /* insensitive while their menus offer nothing */
  GtkWidget *search_bar, *search_entry, *search_count;
  guint n_matches; /* of the last search, those in collapsed groups included */
  GtkWidget *regions;          /* GtkListBox: one row per region, loop and body */
  GtkWidget *bindings;         /* DsBindingsPanel */
  GtkWidget *breakpoint_list;  /* GtkListBox */
  GtkWidget *breakpoint_entry; /* a new breakpoint's spec */
  GtkWidget *status_label, *progress, *cancel_button;
  GtkWidget *recent_list, *empty_recent; /* header menu and empty page */
};

/* The window's parts call one way, lowest first: view, inspector, debug, recent, then open,
 * device, backward and export; ds-window.c builds the window from all of them. A lower part that needs a
 * higher one goes through a signal or an action (the canvas's "toggle-breakpoint", the
 * window's "redrawn", "win.open-file"). */

/* ds-window-view.c */
void ds_window_show_banner(DsWindow *window, const char *message);
/* The header's subtitle: the op count, and the device when runs go to one. */
void ds_window_update_subtitle(DsWindow *window);
/* Draws `session`'s graph: the scene with what the user expanded, the overlay and, after a
 * run, the concrete shapes; `keep_view` keeps the zoom and the point under the middle. */
gboolean ds_window_draw(DsWindow *window, DsSession *session, const DsGraphShapes *shapes,
                        const gboolean *weights, gboolean keep_view, GError **error);
/* Draws the open model again (after expanding, an overlay or a run), keeping the selection;
 * then emits the window's "redrawn" signal. */
gboolean ds_window_redraw(DsWindow *window, GError **error);
/* The scene node drawing graph node `node` of a frame path "while0/func/", or -1. */
gint ds_window_find_scene_node(DsWindow *window, const char *id);

/* ds-window-inspector.c */
GtkWidget *ds_window_build_inspector(DsWindow *window);
void ds_window_inspect(DsWindow *window, gint index);

/* ds-window-debug.c */
void ds_window_breakpoint_free(gpointer breakpoint);
GtkWidget *ds_window_build_status(DsWindow *window);
GtkWidget *ds_window_build_breakpoints(DsWindow *window);
void ds_window_debug_attach(DsWindow *window); /* a model was opened */
void ds_window_debug_detach(DsWindow *window); /* before the model goes */
void ds_window_update_marks(DsWindow *window);
void ds_window_show_stop(DsWindow *window);
void ds_window_add_debug_actions(DsWindow *window);
void ds_window_update_actions(DsWindow *window);

/* ds-window-export.c */
void ds_window_add_export_actions(DsWindow *window);
GMenuModel *ds_window_export_menu(void);
GMenuModel *ds_window_overlay_menu(void);

/* ds-window-device.c */
void ds_window_add_device_action(DsWindow *window);
GMenuModel *ds_window_device_menu(void);

/* ds-window-backward.c */
void ds_window_add_backward_action(DsWindow *window);
GMenuModel *ds_window_backward_menu(void);
/* ds-window-recent.c */
GtkWidget *ds_window_build_empty_page(DsWindow *window);
GtkWidget *ds_window_build_recent_button(DsWindow *window);
void ds_window_refresh_recent(DsWindow *window);
/* Adds a model just opened (an absolute path) to the recent models, and to the desktop's. */
void ds_window_add_recent(DsWindow *window, const char *path);

/* ds-window-state.c: window size, the last folder and the recent models, in a key file. */
void ds_window_state_restore(GtkWindow *window);
void ds_window_state_save(GtkWindow *window);
char *ds_window_state_get_folder(void);
void ds_window_state_set_folder(const char *path_in_folder);
/* The models opened last (absolute paths, newest first, still there), and adding one. */
GPtrArray *ds_window_state_get_recent(void);
void ds_window_state_add_recent(const char *path);
