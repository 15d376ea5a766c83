/* ds-app.h: the desktop application (org.dynscope.Dynscope). */
#pragma once

#include <gtk/gtk.h>

/* The application, its actions (app.quit closes every window, each saving its state) and
 * keyboard shortcuts; on activation it opens a window, on `model` (kept, not copied) if not
 * NULL. */
GtkApplication *ds_app_new(const char *model);

/* Opens a window, on `model` if not NULL, and runs until it is closed. Returns the exit
 * status. */
int ds_app_run(const char *argv0, const char *model);
