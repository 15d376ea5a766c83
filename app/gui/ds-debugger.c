/* ds-debugger.c: commands in a GTask thread, progress through atomics, cancel through hooks. */
#include "ds-debugger.h"

#include "ds-error.h"
#include "ds-profiler.h"
#include "ds-report.h"
#include "ds-session.h"

#define INPUT_SEED 1

struct _DsDebugger {
  GObject parent;
  DsSession *session;
  DsCursor *cursor;
  DsProfiler *profiler; /* the last profiled run's, for traces and CSV */
  cJSON *json;          /* and its report, as written */
  DsReport *report;     /* and as read */
  gboolean prepared;
  gboolean busy;
  DsDebugCommand command;
  /* Written by the worker, read by the main loop. */
  gint cancelled;
  guint64 steps;
  guint top_done, top_total;
};

G_DEFINE_FINAL_TYPE(DsDebugger, ds_debugger, G_TYPE_OBJECT)

enum { SIGNAL_FINISHED, N_SIGNALS };
static guint signals[N_SIGNALS];

/* What the worker hands back to the main loop. */
typedef struct {
  DsCursorStop stop;
  DsProfiler *profiler;
  cJSON *json;
  DsReport *report;
} Outcome;

/* ---- the profiled run's hooks: the profiler's, plus progress and cancel ---- */

typedef struct {
  DsDebugger *debugger;
  DsProfiler *profiler;
  DsGraph *graph;
} RunHooks;

static gboolean run_node_begin(gpointer data, const DsNode *node)
{
  RunHooks *h = data;
  if (g_atomic_int_get(&h->debugger->cancelled))
    return FALSE;
  __atomic_add_fetch(&h->debugger->steps, 1, __ATOMIC_RELAXED);
  return ds_profiler_get_hooks()->node_begin(h->profiler, node);
}

static void run_node_end(gpointer data, const DsNode *node, const DsTensor *inputs,
                         const DsTensor *outputs)
{
  RunHooks *h = data;
  ds_profiler_get_hooks()->node_end(h->profiler, node, inputs, outputs);
  if (node->id < h->graph->n_nodes && h->graph->nodes[node->id] == node)
    g_atomic_int_inc((gint *)&h->debugger->top_done);
}

static void run_frame_enter(gpointer data, const DsFrame *frame)
{
  RunHooks *h = data;
  ds_profiler_get_hooks()->frame_enter(h->profiler, frame);
}

static void run_frame_exit(gpointer data, const DsFrame *frame)
{
  RunHooks *h = data;
  ds_profiler_get_hooks()->frame_exit(h->profiler, frame);
}

static const DsExecutorHooks run_hooks = {
    .node_begin = run_node_begin,
    .node_end = run_node_end,
    .frame_enter = run_frame_enter,
    .frame_exit = run_frame_exit,
};

static gboolean profiled_run(DsDebugger *d, Outcome *o, GError **error)
{
  g_autoptr(DsProfiler) profiler = ds_profiler_new(d->session);
  RunHooks h = {.debugger = d, .profiler = profiler, .graph = ds_session_get_graph(d->session)};
  ds_session_set_hooks(d->session, &run_hooks, &h);
  ds_profiler_begin_run(profiler);
  gboolean ok = ds_session_run(d->session, error);
  ds_session_set_hooks(d->session, NULL, NULL);
  if (!ok)
    return FALSE;
  ds_profiler_end_run(profiler);
  o->json = ds_profiler_build_report(profiler, (int)g_get_num_processors());
  /* Read back here, off the main loop: the window's readers take the typed report. */
  o->report = ds_report_from_json(o->json, "report", error);
  if (o->report == NULL)
    return FALSE;
  o->profiler = g_steal_pointer(&profiler);
  return TRUE;
}

/* ---- the worker ---- */

static void outcome_free(gpointer data)
{
  Outcome *o = data;
  if (o->json != NULL)
    cJSON_Delete(o->json);
  ds_report_free(o->report);
  ds_profiler_free(o->profiler);
  g_free(o);
}

static void work(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable)
{
  (void)task_data, (void)cancellable;
  DsDebugger *d = source;
  GError *error = NULL;
  Outcome *o = g_new0(Outcome, 1);
  if (!d->prepared) {
    d->prepared = ds_session_prepare(d->session, TRUE, INPUT_SEED, ds_backend_find("cpu"),
                                     (int)g_get_num_processors(), &error);
    if (!d->prepared) {
      g_task_return_error(task, error);
      outcome_free(o);
      return;
    }
  }
  switch (d->command) {
  case DS_DEBUG_RUN:
    o->stop = profiled_run(d, o, &error) ? DS_CURSOR_FINISHED : DS_CURSOR_FAILED;
    break;
  case DS_DEBUG_STEP:
    o->stop = ds_cursor_step(d->cursor, &error);
    break;
  case DS_DEBUG_STEP_INTO:
    o->stop = ds_cursor_step_into(d->cursor, &error);
    break;
  case DS_DEBUG_STEP_OUT:
    o->stop = ds_cursor_step_out(d->cursor, &error);
    break;
  case DS_DEBUG_CONTINUE:
    o->stop = ds_cursor_continue(d->cursor, &error);
    break;
  }
  if (error != NULL) {
    g_task_return_error(task, error);
    outcome_free(o);
    return;
  }
  g_task_return_pointer(task, o, outcome_free);
}

static void on_done(GObject *source, GAsyncResult *result, gpointer data)
{
  (void)data;
  DsDebugger *d = DS_DEBUGGER(source);
  GError *error = NULL;
  Outcome *o = g_task_propagate_pointer(G_TASK(result), &error);
  d->busy = FALSE;
  DsCursorStop stop = DS_CURSOR_FAILED;
  if (o != NULL) {
    stop = o->stop;
    if (o->report != NULL) {
      if (d->json != NULL)
        cJSON_Delete(d->json);
      ds_report_free(d->report);
      d->json = g_steal_pointer(&o->json);
      d->report = g_steal_pointer(&o->report);
      ds_profiler_free(d->profiler);
      d->profiler = g_steal_pointer(&o->profiler);
    }
    outcome_free(o);
  }
  g_signal_emit(d, signals[SIGNAL_FINISHED], 0, (gint)stop, error != NULL ? error->message : NULL);
  g_clear_error(&error);
}

gboolean ds_debugger_start(DsDebugger *d, DsDebugCommand command)
{
  if (d->busy)
    return FALSE;
  /* A whole run starts over: a paused step session is abandoned first. */
  if (command == DS_DEBUG_RUN)
    ds_cursor_reset(d->cursor);
  d->busy = TRUE;
  d->command = command;
  g_atomic_int_set(&d->cancelled, 0);
  __atomic_store_n(&d->steps, 0, __ATOMIC_RELAXED);
  g_atomic_int_set((gint *)&d->top_done, 0);
  g_autoptr(GTask) task = g_task_new(d, NULL, on_done, NULL);
  g_task_run_in_thread(task, work);
  return TRUE;
}

DsDebugCommand ds_debugger_get_command(DsDebugger *d)
{
  return d->command;
}

gboolean ds_debugger_is_busy(DsDebugger *d)
{
  return d->busy;
}

void ds_debugger_cancel(DsDebugger *d)
{
  if (!d->busy)
    return;
  g_atomic_int_set(&d->cancelled, 1);
  ds_cursor_cancel(d->cursor);
}

void ds_debugger_reset(DsDebugger *d)
{
  if (!d->busy)
    ds_cursor_reset(d->cursor);
}

void ds_debugger_invalidate(DsDebugger *d)
{
  ds_debugger_reset(d);
  d->prepared = FALSE;
}

guint64 ds_debugger_get_progress(DsDebugger *d, double *fraction)
{
  if (fraction != NULL)
    *fraction = d->top_total > 0
                    ? MIN(1.0, (double)g_atomic_int_get((gint *)&d->top_done) / d->top_total)
                    : 0;
  return __atomic_load_n(&d->steps, __ATOMIC_RELAXED);
}

DsCursor *ds_debugger_get_cursor(DsDebugger *d)
{
  return d->cursor;
}

const DsReport *ds_debugger_get_report(DsDebugger *d)
{
  return d->report;
}

const cJSON *ds_debugger_get_report_json(DsDebugger *d)
{
  return d->json;
}

DsProfiler *ds_debugger_get_profiler(DsDebugger *d)
{
  return d->profiler;
}

/* ---- the object ---- */

static void debugger_finalize(GObject *object)
{
  DsDebugger *d = DS_DEBUGGER(object);
  /* A command in flight holds a reference through its task, so none is running here. */
  ds_cursor_free(d->cursor);
  ds_profiler_free(d->profiler);
  if (d->json != NULL)
    cJSON_Delete(d->json);
  ds_report_free(d->report);
  G_OBJECT_CLASS(ds_debugger_parent_class)->finalize(object);
}

static void ds_debugger_class_init(DsDebuggerClass *klass)
{
  G_OBJECT_CLASS(klass)->finalize = debugger_finalize;
  signals[SIGNAL_FINISHED] =
      g_signal_new("finished", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL, NULL,
                   G_TYPE_NONE, 2, G_TYPE_INT, G_TYPE_STRING);
}

static void ds_debugger_init(DsDebugger *d)
{
  (void)d;
}

DsDebugger *ds_debugger_new(DsSession *session)
{
  DsDebugger *d = g_object_new(DS_TYPE_DEBUGGER, NULL);
  d->session = session;
  d->cursor = ds_cursor_new(session);
  DsGraph *graph = ds_session_get_graph(session);
  for (guint i = 0; i < graph->n_nodes; i++)
    d->top_total += !ds_node_is_variable(graph->nodes[i]);
  return d;
}
