/* ds-debugger.h: the window's runs and steps, off the main loop.
 *
 * A debugger drives one session for the desktop app: it prepares the session (inputs at
 * random unless fed, symbols as bound), steps it with a debug cursor (ds-cursor.h) and runs it
 * whole under the profiler. Every command runs in a worker thread; the main loop only starts
 * commands, cancels them and hears "finished" when one is over, so the window never freezes.
 * While a profiled run is in flight, ds_debugger_get_progress() says how far it got.
 *
 * Memory policy: the debugger borrows the session, which must outlive it; it owns its cursor,
 * profiler and the last run's report.
 */
#pragma once

#include <cjson/cJSON.h>
#include <gio/gio.h>

#include "ds-cursor.h"
#include "ds-profiler.h"
#include "ds-report.h"

G_BEGIN_DECLS

typedef enum {
  DS_DEBUG_STEP,
  DS_DEBUG_STEP_INTO,
  DS_DEBUG_STEP_OUT,
  DS_DEBUG_CONTINUE,
  DS_DEBUG_RUN, /* a whole profiled run, from the start */
} DsDebugCommand;

#define DS_TYPE_DEBUGGER (ds_debugger_get_type())
G_DECLARE_FINAL_TYPE(DsDebugger, ds_debugger, DS, DEBUGGER, GObject)

DsDebugger *ds_debugger_new(DsSession *session);

/* Starts a command in the worker; FALSE if one is already running. When it is over,
 * "finished" (DsCursorStop stop, const char *error_message_or_NULL) is emitted on the main
 * loop; a profiled run reports DS_CURSOR_FINISHED. */
gboolean ds_debugger_start(DsDebugger *debugger, DsDebugCommand command);
gboolean ds_debugger_is_busy(DsDebugger *debugger);
/* The command in flight, or the last one. */
DsDebugCommand ds_debugger_get_command(DsDebugger *debugger);
/* The command in flight stops before its next node and finishes with DS_CURSOR_FAILED. */
void ds_debugger_cancel(DsDebugger *debugger);
/* Abandons a paused run (not while busy); the next command starts from the beginning. */
void ds_debugger_reset(DsDebugger *debugger);
/* The session must be prepared again before the next command (inputs or bindings changed).
 * Resets a paused run. */
void ds_debugger_invalidate(DsDebugger *debugger);

/* Nodes run so far by the command in flight (nested ones included), and the fraction of the
 * model graph's nodes done, for a progress bar; readable from the main loop at any time. */
guint64 ds_debugger_get_progress(DsDebugger *debugger, double *fraction);

/* The cursor, to read a stop or manage breakpoints; only between commands. */
DsCursor *ds_debugger_get_cursor(DsDebugger *debugger);
/* The last profiled run's report (docs/profile-report.md), or NULL. Borrowed. */
const DsReport *ds_debugger_get_report(DsDebugger *debugger);
/* The same report as the JSON document the profiler built, to save it; NULL with it. */
const cJSON *ds_debugger_get_report_json(DsDebugger *debugger);
/* The profiler of that run (traces and CSV are built from it), or NULL. Borrowed. */
DsProfiler *ds_debugger_get_profiler(DsDebugger *debugger);

G_END_DECLS
