/* ds-report-trace.c: Chrome's trace event format, as Kineto writes it.
 *
 * Each executed node is a complete event ("ph": "X", category "cpu_op") on one thread, so a
 * loop's node encloses its iterations' nodes and Perfetto draws them nested. Live memory is a
 * counter track ("ph": "C"), and metadata events name the process and thread. Timestamps are
 * µs with ns precision, as the format wants.
 *
 * A run traced on the GPU adds a second process, "GPU", whose one track holds the kernels
 * (category "kernel"), memcpys ("gpu_memcpy") and memsets ("gpu_memset") on the device's
 * timeline, and a flow arrow from each node's slice to each kernel it launched ("ph": "s" on
 * the node, "ph": "f" binding to the kernel's slice, sharing an id), as Kineto draws them.
 */
#include "ds-profiler-private.h"

#define CPU_PID 1
#define GPU_PID 2

static cJSON *metadata(const char *what, int pid, int tid, const char *name)
{
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "name", what);
  cJSON_AddStringToObject(m, "ph", "M");
  cJSON_AddNumberToObject(m, "pid", pid);
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
  cJSON_AddNumberToObject(j, "pid", CPU_PID);
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
  cJSON_AddStringToObject(args, "backend", e->on_device ? "cuda" : "cpu");
  if (p->has_gpu) {
    cJSON_AddNumberToObject(args, "gpu ns", (double)e->gpu_ns);
    cJSON_AddNumberToObject(args, "gpu kernels", e->gpu_kernels);
    cJSON_AddNumberToObject(args, "gpu copy bytes", (double)e->gpu_copy_bytes);
  }
  return j;
}

/* ---- the GPU track ---- */

static const char *gpu_category(DsCuptiKind kind)
{
  return kind == DS_CUPTI_KERNEL ? "kernel" : kind == DS_CUPTI_MEMCPY ? "gpu_memcpy" : "gpu_memset";
}

static char *gpu_name(const DsProfiler *p, const GpuRecord *g)
{
  if (g->kind == DS_CUPTI_KERNEL)
    return g_strdup(ds_profiler_string(p, g->name));
  if (g->kind == DS_CUPTI_MEMCPY)
    return g_strdup_printf("Memcpy %s", ds_cupti_copy_name(g->copy));
  return g_strdup("Memset");
}

/* Who launched it: the node's path, or the region whose edges it copied. */
static void add_gpu_owner(const DsProfiler *p, const GpuRecord *g, cJSON *args)
{
  if (g->event >= 0) {
    const Event *e = &g_array_index(p->events, Event, g->event);
    g_autofree char *path = ds_profiler_event_path(p, e);
    cJSON_AddStringToObject(args, "node", e->node->name);
    cJSON_AddStringToObject(args, "path", path);
    cJSON_AddNumberToObject(args, "event", g->event);
  } else if (g->record >= 0) {
    guint prefix = ds_profiler_record_prefix(p, (guint)g->record);
    cJSON_AddStringToObject(args, "region", ds_profiler_string(p, prefix));
  }
}

static cJSON *gpu_event(const DsProfiler *p, const GpuRecord *g)
{
  cJSON *j = cJSON_CreateObject();
  g_autofree char *name = gpu_name(p, g);
  cJSON_AddStringToObject(j, "name", name);
  cJSON_AddStringToObject(j, "cat", gpu_category(g->kind));
  cJSON_AddStringToObject(j, "ph", "X");
  cJSON_AddNumberToObject(j, "ts", (double)g->start_ns / 1e3);
  guint64 dur = g->end_ns > g->start_ns ? g->end_ns - g->start_ns : 0;
  cJSON_AddNumberToObject(j, "dur", (double)dur / 1e3);
  cJSON_AddNumberToObject(j, "pid", GPU_PID);
  cJSON_AddNumberToObject(j, "tid", 1);
  cJSON *args = cJSON_AddObjectToObject(j, "args");
  add_gpu_owner(p, g, args);
  if (g->kind != DS_CUPTI_KERNEL)
    cJSON_AddNumberToObject(args, "bytes", (double)g->bytes);
  if (g->kind == DS_CUPTI_MEMCPY)
    cJSON_AddStringToObject(args, "direction", ds_cupti_copy_name(g->copy));
  return j;
}

/* One end of the arrow from a node to a kernel: "s" at the node's start, inside its slice;
 * "f" at the kernel's start, bound to the kernel's slice ("bp": "e"). */
static cJSON *flow(const char *ph, int pid, guint64 ts_ns, guint id)
{
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "name", "launch");
  cJSON_AddStringToObject(j, "cat", "ac2g");
  cJSON_AddStringToObject(j, "ph", ph);
  cJSON_AddNumberToObject(j, "id", id);
  cJSON_AddNumberToObject(j, "ts", (double)ts_ns / 1e3);
  cJSON_AddNumberToObject(j, "pid", pid);
  cJSON_AddNumberToObject(j, "tid", 1);
  if (ph[0] == 'f')
    cJSON_AddStringToObject(j, "bp", "e");
  return j;
}

static void add_gpu_track(const DsProfiler *p, cJSON *list)
{
  if (p->gpu_records->len == 0)
    return;
  cJSON_AddItemToArray(list, metadata("process_name", GPU_PID, 0, "GPU"));
  cJSON_AddItemToArray(list, metadata("thread_name", GPU_PID, 1, "CUDA stream"));
  for (guint i = 0; i < p->gpu_records->len; i++) {
    const GpuRecord *g = &g_array_index(p->gpu_records, GpuRecord, i);
    cJSON_AddItemToArray(list, gpu_event(p, g));
    if (g->kind != DS_CUPTI_KERNEL || g->event < 0)
      continue;
    const Event *e = &g_array_index(p->events, Event, g->event);
    cJSON_AddItemToArray(list, flow("s", CPU_PID, e->start_ns, i + 1));
    cJSON_AddItemToArray(list, flow("f", GPU_PID, g->start_ns, i + 1));
  }
}

static cJSON *counter(const Event *e)
{
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "name", "live memory");
  cJSON_AddStringToObject(j, "ph", "C");
  cJSON_AddNumberToObject(j, "ts", (double)e->end_ns / 1e3);
  cJSON_AddNumberToObject(j, "pid", CPU_PID);
  cJSON_AddNumberToObject(cJSON_AddObjectToObject(j, "args"), "bytes", (double)e->live_bytes);
  return j;
}

char *ds_profiler_build_trace(DsProfiler *p)
{
  ds_profiler_resolve(p);
  cJSON *root = cJSON_CreateObject();
  cJSON *list = cJSON_AddArrayToObject(root, "traceEvents");
  g_autofree char *process = g_strdup_printf("dynscope %s", ds_session_get_model_path(p->session));
  cJSON_AddItemToArray(list, metadata("process_name", CPU_PID, 0, process));
  g_autofree char *thread =
      g_strdup_printf("%s executor (cpu)", ds_session_get_executor_name(p->session));
  cJSON_AddItemToArray(list, metadata("thread_name", CPU_PID, 1, thread));
  cJSON *bindings = cJSON_CreateObject();
  ds_profiler_add_bindings(p, bindings);
  for (guint i = 0; i < p->events->len; i++) {
    cJSON_AddItemToArray(list, node_event(p, i, bindings));
    cJSON_AddItemToArray(list, counter(&g_array_index(p->events, Event, i)));
  }
  cJSON_Delete(bindings);
  add_gpu_track(p, list);
  cJSON_AddStringToObject(root, "displayTimeUnit", "ns");
  char *text = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  char *out = g_strdup(text);
  cJSON_free(text);
  return out;
}
