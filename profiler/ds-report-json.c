/* ds-report-json.c: the profile report (docs/profile-report.md), version 1. */
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ds-backward.h"
#include "ds-config.h"
#include "ds-node-timer.h"
#include "ds-partition.h"
#include "ds-profiler-private.h"

/* ---- machine and build ---- */

static char *cpu_model(void)
{
  g_autofree char *info = NULL;
  if (g_file_get_contents("/proc/cpuinfo", &info, NULL, NULL)) {
    for (char *line = info; line != NULL && *line != '\0';) {
      char *next = strchr(line, '\n');
      if (next != NULL)
        *next++ = '\0';
      if (g_str_has_prefix(line, "model name")) {
        const char *colon = strchr(line, ':');
        if (colon != NULL)
          return g_strstrip(g_strdup(colon + 1));
      }
      line = next;
    }
  }
  return g_strdup("unknown");
}

static cJSON *machine_json(void)
{
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "host", g_get_host_name());
  struct utsname u;
  g_autofree char *os = uname(&u) == 0
                            ? g_strdup_printf("%s %s %s", u.sysname, u.release, u.machine)
                            : g_strdup("unknown");
  cJSON_AddStringToObject(m, "os", os);
  g_autofree char *cpu = cpu_model();
  cJSON_AddStringToObject(m, "cpu", cpu);
  cJSON_AddNumberToObject(m, "cpus", g_get_num_processors());
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  cJSON_AddNumberToObject(m, "memory_bytes", pages > 0 && page > 0 ? (double)pages * page : 0);
  return m;
}

static cJSON *build_json(void)
{
  cJSON *b = cJSON_CreateObject();
  cJSON_AddStringToObject(b, "version", DS_VERSION);
#ifdef __VERSION__
  cJSON_AddStringToObject(b, "compiler", __VERSION__);
#else
  cJSON_AddStringToObject(b, "compiler", "unknown");
#endif
  /* The profiler library sees CUPTI's define, which the build sets exactly when it has CUDA. */
#if defined(DS_HAVE_CUDA) || defined(DS_HAVE_CUPTI)
  cJSON_AddBoolToObject(b, "cuda", TRUE);
#else
  cJSON_AddBoolToObject(b, "cuda", FALSE);
#endif
  cJSON_AddStringToObject(b, "blas", "OpenBLAS");
  return b;
}

/* ---- pieces ---- */

static cJSON *shapes_json(const DsProfiler *p, const Event *e, gboolean outputs)
{
  cJSON *list = cJSON_CreateArray();
  for (guint i = 0; i < ds_profiler_event_n_shapes(p, e, outputs); i++) {
    int ndim;
    const gint64 *dims = ds_profiler_event_shape(p, e, outputs, i, &ndim);
    cJSON *shape = cJSON_CreateArray();
    for (int d = 0; d < ndim; d++)
      cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)dims[d]));
    cJSON_AddItemToArray(list, shape);
  }
  return list;
}

static cJSON *string_or_null(const DsProfiler *p, guint index)
{
  return index == 0 ? cJSON_CreateNull() : cJSON_CreateString(ds_profiler_string(p, index));
}

/* A GPU count: null when the runs were not traced on a GPU, so 0 means "none ran". */
static void add_gpu_count(const DsProfiler *p, cJSON *object, const char *name, guint64 value)
{
  if (p->has_gpu)
    cJSON_AddNumberToObject(object, name, (double)value);
  else
    cJSON_AddNullToObject(object, name);
}

static cJSON *event_json(const DsProfiler *p, guint id)
{
  const Event *e = &g_array_index(p->events, Event, id);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "id", id);
  cJSON_AddNumberToObject(j, "run", e->run);
  g_autofree char *path = ds_profiler_event_path(p, e);
  g_autofree char *key = ds_profiler_event_key(p, e);
  cJSON_AddStringToObject(j, "path", path);
  cJSON_AddStringToObject(j, "key", key);
  cJSON_AddStringToObject(j, "node", e->node->name);
  cJSON_AddStringToObject(j, "op", e->node->op_name);
  cJSON_AddItemToObject(j, "region", string_or_null(p, e->region));
  cJSON_AddItemToObject(j, "body", string_or_null(p, e->body));
  cJSON_AddNumberToObject(j, "iteration", (double)e->iteration);
  cJSON_AddNumberToObject(j, "depth", e->depth);
  cJSON_AddStringToObject(j, "backend", e->on_device ? "cuda" : "cpu");
  cJSON_AddNumberToObject(j, "start_ns", (double)e->start_ns);
  cJSON_AddNumberToObject(j, "end_ns", (double)e->end_ns);
  cJSON_AddNumberToObject(j, "dur_ns", (double)(e->end_ns - e->start_ns));
  add_gpu_count(p, j, "gpu_ns", e->gpu_ns);
  add_gpu_count(p, j, "gpu_kernels", e->gpu_kernels);
  add_gpu_count(p, j, "gpu_copy_bytes", e->gpu_copy_bytes);
  cJSON_AddItemToObject(j, "input_shapes", shapes_json(p, e, FALSE));
  cJSON_AddItemToObject(j, "output_shapes", shapes_json(p, e, TRUE));
  g_autoptr(GPtrArray) symbolic = ds_profiler_event_symbolic(p, e);
  if (symbolic != NULL)
    cJSON_AddItemToObject(
        j, "symbolic_shapes",
        cJSON_CreateStringArray((const char *const *)symbolic->pdata, (int)symbolic->len));
  else
    cJSON_AddNullToObject(j, "symbolic_shapes");
  cJSON_AddNumberToObject(j, "fresh_bytes", (double)e->fresh_bytes);
  cJSON_AddNumberToObject(j, "reused_bytes", (double)e->reused_bytes);
  cJSON_AddNumberToObject(j, "live_bytes", (double)e->live_bytes);
  return j;
}

static cJSON *buffer_json(const DsProfiler *p, guint id)
{
  const Buffer *b = &g_array_index(p->buffers, Buffer, id);
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "id", id);
  guint node = 0;
  while (node + 1 < b->graph->n_nodes && b->graph->node_row_ptr[node + 1] <= b->entry)
    node++;
  g_autofree char *name = ds_graph_dup_entry_name(
      b->graph, (DsEntry){.node_id = node, .index = b->entry - b->graph->node_row_ptr[node]});
  const char *prefix = ds_profiler_string(p, ds_profiler_record_prefix(p, b->record));
  g_autofree char *tensor = g_strdup_printf("%s%s%s", prefix, *prefix ? "/" : "", name);
  cJSON_AddStringToObject(j, "tensor", tensor);
  cJSON_AddNumberToObject(j, "bytes", (double)b->bytes);
  cJSON_AddNumberToObject(j, "first_event", b->first_event);
  cJSON_AddNumberToObject(j, "last_event", b->last_event);
  if (b->reused_from >= 0)
    cJSON_AddNumberToObject(j, "reused_from", b->reused_from);
  else
    cJSON_AddNullToObject(j, "reused_from");
  return j;
}

/* ---- aggregates ---- */

typedef struct {
  char *name;
  GArray *durations; /* guint64 */
  guint64 total, max;
  guint max_event;
  guint64 gpu_ns, gpu_kernels, gpu_copy_bytes;
  guint64 edge_copy_bytes; /* regions: copies on its edges, outside its nodes */
} Group;

static void group_free(gpointer data)
{
  Group *g = data;
  g_free(g->name);
  g_array_unref(g->durations);
  g_free(g);
}

static void group_add(GHashTable *groups, const char *name, const Event *e, guint event)
{
  guint64 dur = e->end_ns - e->start_ns;
  Group *g = g_hash_table_lookup(groups, name);
  if (g == NULL) {
    g = g_new0(Group, 1);
    g->name = g_strdup(name);
    g->durations = g_array_new(FALSE, FALSE, sizeof(guint64));
    g_hash_table_insert(groups, g->name, g);
  }
  g_array_append_val(g->durations, dur);
  g->total += dur;
  g->gpu_ns += e->gpu_ns;
  g->gpu_kernels += e->gpu_kernels;
  g->gpu_copy_bytes += e->gpu_copy_bytes;
  if (dur >= g->max) {
    g->max = dur;
    g->max_event = event;
  }
}

static int compare_u64(const void *a, const void *b)
{
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return x < y ? -1 : x > y;
}

static int by_total_desc(gconstpointer a, gconstpointer b)
{
  const Group *x = *(Group *const *)a, *y = *(Group *const *)b;
  if (x->total != y->total)
    return x->total < y->total ? 1 : -1;
  return strcmp(x->name, y->name);
}

/* Nearest rank: the smallest value with at least q of the values at or below it. */
static guint64 percentile(const guint64 *sorted, guint n, double q)
{
  guint rank = (guint)(q * n + 0.999999);
  return sorted[CLAMP(rank, 1u, n) - 1];
}

/* What placed regions launched outside their nodes counts in their groups too. */
static void add_region_edges(const DsProfiler *p, GHashTable *by_region)
{
  for (guint i = 0; i < p->records->len; i++) {
    const FrameRecord *r = &g_array_index(p->records, FrameRecord, i);
    Group *g = r->gpu_id != 0 ? g_hash_table_lookup(by_region, r->name) : NULL;
    if (g == NULL)
      continue;
    g->gpu_ns += r->gpu_ns;
    g->gpu_kernels += r->gpu_kernels;
    g->gpu_copy_bytes += r->gpu_copy_bytes;
    g->edge_copy_bytes += r->gpu_copy_bytes;
  }
}

static cJSON *groups_json(const DsProfiler *p, GHashTable *groups, gboolean regions)
{
  g_autoptr(GPtrArray) list = g_ptr_array_new();
  GHashTableIter iter;
  gpointer value;
  g_hash_table_iter_init(&iter, groups);
  while (g_hash_table_iter_next(&iter, NULL, &value))
    g_ptr_array_add(list, value);
  g_ptr_array_sort(list, by_total_desc);
  cJSON *out = cJSON_CreateArray();
  for (guint i = 0; i < list->len; i++) {
    Group *g = list->pdata[i];
    guint n = g->durations->len;
    qsort(g->durations->data, n, sizeof(guint64), compare_u64);
    const guint64 *d = (const guint64 *)g->durations->data;
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", g->name);
    cJSON_AddNumberToObject(j, "count", n);
    cJSON_AddNumberToObject(j, "total_ns", (double)g->total);
    cJSON_AddNumberToObject(j, "mean_ns", (double)(g->total / n));
    cJSON_AddNumberToObject(j, "p50_ns", (double)percentile(d, n, 0.5));
    cJSON_AddNumberToObject(j, "p95_ns", (double)percentile(d, n, 0.95));
    cJSON_AddNumberToObject(j, "max_ns", (double)g->max);
    cJSON_AddNumberToObject(j, "max_event", g->max_event);
    cJSON_AddItemToObject(j, "max_input_shapes",
                          shapes_json(p, &g_array_index(p->events, Event, g->max_event), FALSE));
    add_gpu_count(p, j, "gpu_ns", g->gpu_ns);
    add_gpu_count(p, j, "gpu_kernels", g->gpu_kernels);
    add_gpu_count(p, j, "gpu_copy_bytes", g->gpu_copy_bytes);
    if (regions)
      add_gpu_count(p, j, "edge_copy_bytes", g->edge_copy_bytes);
    cJSON_AddItemToArray(out, j);
  }
  return out;
}

static cJSON *aggregates_json(const DsProfiler *p)
{
  GHashTable *by[4];
  for (int i = 0; i < 4; i++)
    by[i] = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, group_free);
  g_autoptr(GHashTable) iterations = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GPtrArray) iteration_order = g_ptr_array_new();
  for (guint i = 0; i < p->events->len; i++) {
    const Event *e = &g_array_index(p->events, Event, i);
    guint64 dur = e->end_ns - e->start_ns;
    g_autofree char *key = ds_profiler_event_key(p, e);
    group_add(by[0], e->node->op_name, e, i);
    group_add(by[1], key, e, i);
    if (e->region != 0)
      group_add(by[2], ds_profiler_string(p, e->region), e, i);
    if (e->body != 0) {
      group_add(by[3], ds_profiler_string(p, e->body), e, i);
      if (e->iteration >= 0) {
        char *name =
            g_strdup_printf("%s#%" G_GINT64_FORMAT, ds_profiler_string(p, e->body), e->iteration);
        guint64 *cell = g_hash_table_lookup(iterations, name);
        if (cell == NULL) {
          cell = g_new0(guint64, 4);
          cell[2] = e->body;
          cell[3] = (guint64)e->iteration;
          g_hash_table_insert(iterations, name, cell);
          g_ptr_array_add(iteration_order, cell);
        } else {
          g_free(name);
        }
        cell[0]++;
        cell[1] += dur;
      }
    }
  }
  add_region_edges(p, by[2]);
  cJSON *a = cJSON_CreateObject();
  static const char *const names[] = {"by_op", "by_node", "by_region", "by_body"};
  for (int i = 0; i < 4; i++) {
    cJSON_AddItemToObject(a, names[i], groups_json(p, by[i], i == 2));
    g_hash_table_unref(by[i]);
  }
  cJSON *iters = cJSON_AddArrayToObject(a, "by_iteration");
  for (guint i = 0; i < iteration_order->len; i++) {
    const guint64 *cell = iteration_order->pdata[i];
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "body", ds_profiler_string(p, (guint)cell[2]));
    cJSON_AddNumberToObject(j, "iteration", (double)cell[3]);
    cJSON_AddNumberToObject(j, "count", (double)cell[0]);
    cJSON_AddNumberToObject(j, "total_ns", (double)cell[1]);
    cJSON_AddItemToArray(iters, j);
  }
  return a;
}

/* ---- the report ---- */

static cJSON *model_json(const DsProfiler *p)
{
  DsSession *session = p->session;
  DsGraph *graph = ds_session_get_graph(session);
  cJSON *m = cJSON_CreateObject();
  const char *path = ds_session_get_model_path(session);
  cJSON_AddStringToObject(m, "path", path);
  g_autofree char *base = g_path_get_basename(path);
  char *suffix = g_strrstr(base, "-symbol.json");
  if (suffix == NULL)
    suffix = g_strrstr(base, ".json");
  if (suffix == NULL)
    suffix = g_strrstr(base, ".onnx");
  if (suffix != NULL && suffix != base)
    *suffix = '\0';
  cJSON_AddStringToObject(m, "name", base);
  cJSON_AddStringToObject(m, "format", ds_session_get_format_id(session));
  cJSON_AddNumberToObject(m, "nodes", graph->n_nodes);
  cJSON_AddNumberToObject(m, "op_nodes", ds_graph_count_ops(graph));
  cJSON_AddStringToObject(m, "executor", ds_session_get_executor_name(session));
  cJSON *regions = cJSON_AddArrayToObject(m, "partition");
  const DsPartition *partition = ds_session_get_file_partition(session);
  for (guint r = 0; partition != NULL && r < partition->n_regions; r++)
    cJSON_AddItemToArray(regions, cJSON_CreateString(partition->regions[r].name));
  return m;
}

static cJSON *inputs_json(const DsProfiler *p)
{
  DsGraph *graph = ds_session_get_graph(p->session);
  cJSON *list = cJSON_CreateArray();
  for (guint i = 0; i < graph->n_nodes; i++) {
    const DsNode *node = graph->nodes[i];
    if (!ds_node_is_variable(node))
      continue;
    const DsTensor *t = ds_session_get_entry(p->session, graph->node_row_ptr[i]);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", node->name);
    cJSON_AddStringToObject(j, "dtype", ds_dtype_name(t->dtype));
    cJSON *shape = cJSON_AddArrayToObject(j, "shape");
    for (int d = 0; d < t->ndim; d++)
      cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->shape[d]));
    cJSON_AddItemToArray(list, j);
  }
  return list;
}

static cJSON *memory_json(const DsProfiler *p)
{
  cJSON *m = cJSON_CreateObject();
  cJSON_AddNumberToObject(m, "peak_live_bytes", (double)p->peak_live_bytes);
  DsRunnerStats stats;
  if (ds_session_get_stats(p->session, &stats) && stats.plan != NULL)
    cJSON_AddNumberToObject(m, "planned_peak_bytes", (double)stats.plan->arena_bytes);
  else
    cJSON_AddNullToObject(m, "planned_peak_bytes");
  gsize fresh = 0, reused = 0;
  for (guint i = 0; i < p->events->len; i++) {
    fresh += g_array_index(p->events, Event, i).fresh_bytes;
    reused += g_array_index(p->events, Event, i).reused_bytes;
  }
  cJSON_AddNumberToObject(m, "fresh_bytes", (double)fresh);
  cJSON_AddNumberToObject(m, "reused_bytes", (double)reused);
  return m;
}

/* What the GPU trace holds over all runs, or null without one. */
static cJSON *gpu_trace_json(const DsProfiler *p)
{
  if (!p->has_gpu)
    return cJSON_CreateNull();
  guint64 kernels = 0, kernel_ns = 0, copies = 0, copy_bytes = 0;
  for (guint i = 0; i < p->gpu_records->len; i++) {
    const GpuRecord *g = &g_array_index(p->gpu_records, GpuRecord, i);
    if (g->kind == DS_CUPTI_KERNEL) {
      kernels++;
      kernel_ns += g->end_ns > g->start_ns ? g->end_ns - g->start_ns : 0;
    } else {
      copies++;
      copy_bytes += g->bytes;
    }
  }
  cJSON *t = cJSON_CreateObject();
  cJSON_AddNumberToObject(t, "kernels", (double)kernels);
  cJSON_AddNumberToObject(t, "kernel_ns", (double)kernel_ns);
  cJSON_AddNumberToObject(t, "copies", (double)copies);
  cJSON_AddNumberToObject(t, "copy_bytes", (double)copy_bytes);
  cJSON_AddNumberToObject(t, "unattributed", (double)p->gpu_unattributed);
  cJSON_AddNumberToObject(t, "dropped", (double)p->gpu_dropped);
  return t;
}

/* A run's backward pass: its policy, and the forward and backward passes' part of each run
 * (the model graph's nodes, by the pass they belong to), as time per run and the most memory
 * live at the end of one of their nodes. null for a forward pass alone. */
static cJSON *backward_json(const DsProfiler *p)
{
  guint n_forward;
  DsLoopPolicy policy;
  if (!ds_session_get_backward(p->session, &n_forward, &policy))
    return cJSON_CreateNull();
  guint64 ns[2] = {0, 0};
  gsize peak[2] = {0, 0};
  for (guint i = 0; i < p->events->len; i++) {
    const Event *e = &g_array_index(p->events, Event, i);
    if (e->depth != 0)
      continue;
    int pass = e->node->id >= n_forward;
    ns[pass] += e->end_ns - e->start_ns;
    peak[pass] = MAX(peak[pass], e->live_bytes);
  }
  guint runs = MAX(p->n_runs, 1u);
  g_autofree char *name = ds_backward_policy_name(policy);
  cJSON *b = cJSON_CreateObject();
  cJSON_AddStringToObject(b, "policy", name);
  cJSON_AddNumberToObject(b, "gradients", ds_session_get_n_gradients(p->session));
  cJSON_AddNumberToObject(b, "forward_nodes", n_forward);
  cJSON_AddNumberToObject(b, "forward_ns", (double)(ns[0] / runs));
  cJSON_AddNumberToObject(b, "backward_ns", (double)(ns[1] / runs));
  cJSON_AddNumberToObject(b, "forward_peak_live_bytes", (double)peak[0]);
  cJSON_AddNumberToObject(b, "backward_peak_live_bytes", (double)peak[1]);
  return b;
}

cJSON *ds_profiler_build_report(DsProfiler *p, int threads)
{
  ds_profiler_resolve(p);
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "schema", "dynscope-profile");
  cJSON_AddNumberToObject(r, "version", 1);
  cJSON_AddItemToObject(r, "model", model_json(p));
  cJSON_AddItemToObject(r, "machine", machine_json());
  cJSON_AddItemToObject(r, "build", build_json());

  cJSON *run = cJSON_AddObjectToObject(r, "run");
  g_autoptr(GDateTime) now = g_date_time_new_now_utc();
  gint64 started_us = g_get_real_time() - (gint64)((ds_monotonic_ns() - p->origin_ns) / 1000);
  g_autoptr(GDateTime) started = g_date_time_new_from_unix_utc(started_us / G_USEC_PER_SEC);
  g_autofree char *iso = g_date_time_format_iso8601(started != NULL ? started : now);
  cJSON_AddStringToObject(run, "started", iso);
  cJSON_AddNumberToObject(run, "repeat", p->n_runs);
  cJSON_AddNumberToObject(run, "threads", threads);
  cJSON *wall = cJSON_AddArrayToObject(run, "wall_ns");
  for (guint i = 0; i < p->run_ns->len; i++)
    cJSON_AddItemToArray(wall, cJSON_CreateNumber((double)g_array_index(p->run_ns, guint64, i)));
  cJSON_AddNumberToObject(run, "profiler_overhead_ns", (double)p->overhead_ns);
  cJSON_AddItemToObject(run, "gpu_trace", gpu_trace_json(p));
  if (p->gpu_unavailable != NULL)
    cJSON_AddStringToObject(run, "gpu_unavailable", p->gpu_unavailable);
  else
    cJSON_AddNullToObject(run, "gpu_unavailable");

  ds_profiler_add_bindings(p, cJSON_AddObjectToObject(r, "bindings"));
  cJSON_AddItemToObject(r, "inputs", inputs_json(p));
  cJSON *events = cJSON_AddArrayToObject(r, "events");
  for (guint i = 0; i < p->events->len; i++)
    cJSON_AddItemToArray(events, event_json(p, i));
  cJSON *buffers = cJSON_AddArrayToObject(r, "buffers");
  for (guint i = 0; i < p->buffers->len; i++)
    cJSON_AddItemToArray(buffers, buffer_json(p, i));
  cJSON_AddItemToObject(r, "memory", memory_json(p));
  cJSON_AddItemToObject(r, "backward", backward_json(p));
  cJSON_AddItemToObject(r, "aggregates", aggregates_json(p));
  return r;
}
