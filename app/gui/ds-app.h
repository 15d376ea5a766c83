/* ds-app.h: the desktop application (org.dynscope.Dynscope). */
#pragma once

/* Opens a window, on `model` if not NULL, and runs until it is closed. Returns the exit
 * status. */
int ds_app_run(const char *argv0, const char *model);
