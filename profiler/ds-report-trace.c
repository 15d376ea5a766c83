/* ds-report-trace.c: Chrome's trace event format, as Kineto writes it.
 *
 * Each executed node is a complete event ("ph": "X", category "cpu_op") on one thread, so a
 * loop's node encloses its iterations' nodes and Perfetto draws them nested. Live memory is a
 * counter track ("ph": "C"), and metadata events name the process and thread. Timestamps are
 * µs with ns precision, as the format wants.
 */
#include "ds-profiler-private.h"

static cJSON *metadata(const char *what, int tid, const char *name)
{
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "name", what);
  cJSON_AddStringToObject(m, "ph", "M");
  cJSON_AddNumberToObject(m, "pid", 1);
  cJSON_AddNumberToObject(m, "tid", tid);
  cJSON_AddStringToObject(cJSON_AddObjectToObject(m, "args"), "name", name);
  return m;
}

static cJSON *node_event(const DsProfiler *p, guint id, cJSON *bindings)
{
  const Event *e = &g_array_index(p->events, Event, id);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "name", e->node->name);
  cJSON_AddStringToObject(j, "cat", "cpu_op");
  cJSON_AddStringToObject(j, "ph", "X");
  cJSON_AddNumberToObject(j, "ts", (double)e->start_ns / 1e3);
  cJSON_AddNumberToObject(j, "dur", (double)(e->end_ns - e->start_ns) / 1e3);
  cJSON_AddNumberToObject(j, "pid", 1);
  cJSON_AddNumberToObject(j, "tid", 1);
  cJSON *args = cJSON_AddObjectToObject(j, "args");
  g_autofree char *path = ds_profiler_event_path(p, e);
  g_autofree char *inputs = ds_profiler_event_shapes_text(p, e, FALSE);
  g_autofree char *outputs = ds_profiler_event_shapes_text(p, e, TRUE);
  cJSON_AddStringToObject(args, "node", e->node->name);
  cJSON_AddStringToObject(args, "op", e->node->op_name);
  cJSON_AddStringToObject(args, "path", path);
  cJSON_AddStringToObject(args, "input shapes", inputs);
  cJSON_AddStringToObject(args, "output shapes", outputs);
  g_autoptr(GPtrArray) symbolic = ds_profiler_event_symbolic(p, e);
  if (symbolic != NULL) {
    g_ptr_array_add(symbolic, NULL);
    g_autofree char *text = g_strjoinv(", ", (char **)symbolic->pdata);
    cJSON_AddStringToObject(args, "symbolic shapes", text);
  }
  cJSON_AddItemToObject(args, "bindings", cJSON_Duplicate(bindings, TRUE));
  cJSON_AddNumberToObject(args, "iteration", (double)e->iteration);
  if (e->region != 0)
    cJSON_AddStringToObject(args, "region", ds_profiler_string(p, e->region));
  if (e->body != 0)
    cJSON_AddStringToObject(args, "body", ds_profiler_string(p, e->body));
  cJSON_AddNumberToObject(args, "run", e->run);
  cJSON_AddNumberToObject(args, "fresh bytes", (double)e->fresh_bytes);
  cJSON_AddNumberToObject(args, "reused bytes", (double)e->reused_bytes);
  return j;
}

static cJSON *counter(const Event *e)
{
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "name", "live memory");
  cJSON_AddStringToObject(j, "ph", "C");
  cJSON_AddNumberToObject(j, "ts", (double)e->end_ns / 1e3);
  cJSON_AddNumberToObject(j, "pid", 1);
  cJSON_AddNumberToObject(cJSON_AddObjectToObject(j, "args"), "bytes", (double)e->live_bytes);
  return j;
}

char *ds_profiler_build_trace(DsProfiler *p)
{
  ds_profiler_resolve(p);
  cJSON *root = cJSON_CreateObject();
  cJSON *list = cJSON_AddArrayToObject(root, "traceEvents");
  g_autofree char *process = g_strdup_printf("dynscope %s", ds_session_get_model_path(p->session));
  cJSON_AddItemToArray(list, metadata("process_name", 0, process));
  g_autofree char *thread =
      g_strdup_printf("%s executor (cpu)", ds_session_get_executor_name(p->session));
  cJSON_AddItemToArray(list, metadata("thread_name", 1, thread));
  cJSON *bindings = cJSON_CreateObject();
  ds_profiler_add_bindings(p, bindings);
  for (guint i = 0; i < p->events->len; i++) {
    cJSON_AddItemToArray(list, node_event(p, i, bindings));
    cJSON_AddItemToArray(list, counter(&g_array_index(p->events, Event, i)));
  }
  cJSON_Delete(bindings);
  cJSON_AddStringToObject(root, "displayTimeUnit", "ns");
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  char *out = g_strdup(text);
  cJSON_free(text);
  return out;
}
