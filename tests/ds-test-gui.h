/* ds-test-gui.h: what the window tests share: waiting for GTK to lay out and draw, screenshots
 * for looking at, and real input sent through the X server (XTest), as a user's mouse and
 * keyboard send it, with the pixels the server then shows read back. */
#pragma once

#include <gtk/gtk.h>

#include "ds-viz.h"
#include "ds-window.h"

/* data/DIR/NAME under DS_SOURCE_DIR (or ".."); caller frees. */
char *ds_test_data_path(const char *dir, const char *name);

/* Waits (up to 20 s) until `window` has laid itself out and drawn one whole frame. */
void ds_test_wait_for_frame(GtkWidget *window);
/* Lets GTK lay out and draw every shown window, then runs what is still pending. */
void ds_test_settle(void);
/* Waits for the window's command in flight to finish, then settles. */
void ds_test_wait_idle(DsWindow *window);
/* Presents the window and waits until it is mapped and sized. */
void ds_test_present(GtkWindow *window);
/* With DS_GUI_SCREENSHOTS=DIR, saves the window as DIR/NAME.png. */
void ds_test_screenshot(GtkWidget *window, const char *name);

/* The scene node called `id`, or -1. */
gint ds_test_find_node(const DsVizScene *scene, const char *id);
/* The first widget under `root` (depth first, `root` included) that `match` accepts, or NULL. */
typedef gboolean (*DsTestMatch)(GtkWidget *widget, gconstpointer data);
GtkWidget *ds_test_find(GtkWidget *root, DsTestMatch match, gconstpointer data);
/* ... of `type`. */
GtkWidget *ds_test_find_widget(GtkWidget *root, GType type);

/* The recent model's button for `path` under `root`, or NULL. */
GtkWidget *ds_test_find_button_with_path(GtkWidget *root, const char *path);

/* ---- real input (XTest); each call returns once GTK has handled it and drawn ---- */

/* FALSE when the display is not an X server with XTest (the tests then skip). */
gboolean ds_test_input_available(void);
/* Moves the pointer to widget point (x, y). */
void ds_test_input_move(GtkWidget *widget, double x, double y);
/* Presses and releases `button` (1 left, 3 right) `count` times at widget point (x, y). */
void ds_test_input_click(GtkWidget *widget, double x, double y, guint button, guint count);
/* Turns the mouse wheel `notches` notches at widget point (x, y): up (zoom in) when > 0. */
void ds_test_input_wheel(GtkWidget *widget, double x, double y, int notches);
/* Drags with the left button from widget point (x0, y0) to (x1, y1), in steps. */
void ds_test_input_drag(GtkWidget *widget, double x0, double y0, double x1, double y1);
/* Types a key as an accelerator string ("<Control>q", "F9", "plus", "<Shift>F11"). */
void ds_test_input_key(const char *accelerator);

/* Types `text` key by key (ASCII). */
void ds_test_input_type(const char *text);

/* The share (0..1) of widget's pixels on screen that differ clearly from its most common
 * colour (its background): drawn graph, not background only. */
double ds_test_drawn_share(GtkWidget *widget);
/* How many screen pixels in widget's rectangle (x, y, w, h) are `rgb` (0xRRGGBB), within a few
 * levels per channel. */
guint ds_test_count_colour(GtkWidget *widget, double x, double y, double w, double h,
                           guint32 rgb);
