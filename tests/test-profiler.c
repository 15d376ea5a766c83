/* test-profiler.c: the per-node timer on a real run of the bundled sample; the profiler's
 * events, memory and report on the static executor (live bytes against the plan's own
 * max-live bound) and through a loop (nested events inside the loop's, iterations reusing
 * each other's memory, the timer not confused by nesting). GPU attribution without a GPU:
 * synthetic CUPTI records carrying the external ids of a real CPU run's events (and of a
 * placed region frame entered around it) land in the JSON report (and the typed report read
 * back from it), the CSV and the trace's GPU track with flow arrows; without records every GPU
 * field is null; and CUPTI does not start without a device. */
#include <glib.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-node-timer.h"
#include "ds-profiler-private.h"
#include "ds-report.h"
#include "ds-session.h"

static void test_node_timer_counts_every_op_node(void)
{
  const char *src = g_getenv("DS_SOURCE_DIR");
  g_autofree char *model = g_build_filename(src, "data", "sample", "sample-symbol.json", NULL);
  g_autofree char *params = g_build_filename(src, "data", "sample", "sample.params", NULL);
  g_autofree char *input = g_build_filename(src, "data", "sample", "sample-input.npy", NULL);
  GError *error = NULL;
  g_autoptr(DsSession) session = ds_session_new(model, &error);
  g_assert_no_error(error);
  g_assert_true(ds_session_feed_params(session, params, &error));
  g_assert_true(ds_session_feed_npy(session, "data", input, &error));
  g_assert_true(ds_session_prepare(session, FALSE, 0, ds_backend_find("cpu"), 1, &error));
  DsExecutor *exec = ds_session_get_executor(session);
  DsGraph *graph = ds_session_get_graph(session);

  g_autoptr(DsNodeTimer) timer = ds_node_timer_new(graph->n_nodes);
  ds_node_timer_attach(timer, exec);
  guint64 t0 = ds_monotonic_ns();
  for (int i = 0; i < 3; i++)
    g_assert_true(ds_executor_run(exec, &error));
  guint64 wall = ds_monotonic_ns() - t0;

  guint64 sum = 0;
  for (guint i = 0; i < graph->n_nodes; i++) {
    guint64 expected = ds_node_is_variable(graph->nodes[i]) ? 0 : 3;
    g_assert_cmpuint(ds_node_timer_get_count(timer, i), ==, expected);
    sum += ds_node_timer_get_total_ns(timer, i);
  }
  g_assert_cmpuint(sum, >, 0);
  g_assert_cmpuint(sum, <=, wall); /* node times are disjoint parts of the runs */
}

static DsSession *open_sample(void)
{
  const char *src = g_getenv("DS_SOURCE_DIR");
  g_autofree char *model = g_build_filename(src, "data", "sample", "sample-symbol.json", NULL);
  g_autofree char *params = g_build_filename(src, "data", "sample", "sample.params", NULL);
  g_autofree char *input = g_build_filename(src, "data", "sample", "sample-input.npy", NULL);
  GError *error = NULL;
  DsSession *session = ds_session_new(model, &error);
  g_assert_no_error(error);
  g_assert_true(ds_session_feed_params(session, params, &error));
  g_assert_true(ds_session_feed_npy(session, "data", input, &error));
  g_assert_true(ds_session_prepare(session, FALSE, 0, ds_backend_find("cpu"), 1, &error));
  return session;
}

static void profile_runs(DsSession *session, DsProfiler *profiler, int n)
{
  GError *error = NULL;
  ds_session_set_hooks(session, ds_profiler_get_hooks(), profiler);
  for (int i = 0; i < n; i++) {
    ds_profiler_begin_run(profiler);
    g_assert_true(ds_session_run(session, &error));
    ds_profiler_end_run(profiler);
  }
  ds_session_set_hooks(session, NULL, NULL);
}

/* Live bytes follow the plan: the peak is its max-live bound, which counts each buffer
 * rounded up to DS_PLAN_ALIGN bytes where the profiler counts exact bytes. */
static void test_profiler_static_memory(void)
{
  g_autoptr(DsSession) session = open_sample();
  g_autoptr(DsProfiler) profiler = ds_profiler_new(session);
  profile_runs(session, profiler, 2);
  DsGraph *graph = ds_session_get_graph(session);
  g_assert_cmpuint(ds_profiler_get_n_events(profiler), ==, 2 * ds_graph_count_ops(graph));
  const DsPlan *plan = ds_executor_get_plan(ds_session_get_executor(session));
  g_autofree char *where = NULL;
  gsize peak = ds_profiler_get_peak_live_bytes(profiler, &where);
  g_test_message("peak %zu at %s; plan max-live %zu in %u buffers, arena %zu", peak, where,
                 plan->max_live_bytes, plan->n_buffers, plan->arena_bytes);
  g_assert_cmpuint(peak, <=, plan->max_live_bytes);
  g_assert_cmpuint(peak + (gsize)DS_PLAN_ALIGN * plan->n_buffers, >=, plan->max_live_bytes);
  /* Both runs alike: the same fresh and reused bytes, node by node. */
  guint n = ds_profiler_get_n_events(profiler) / 2;
  gsize reused = 0;
  for (guint i = 0; i < n; i++) {
    const Event *a = &g_array_index(profiler->events, Event, i);
    const Event *b = &g_array_index(profiler->events, Event, i + n);
    g_assert_true(a->node == b->node);
    g_assert_cmpuint(a->fresh_bytes, ==, b->fresh_bytes);
    g_assert_cmpuint(a->reused_bytes, ==, b->reused_bytes);
    g_assert_cmpuint(a->live_bytes, ==, b->live_bytes);
    reused += a->reused_bytes;
  }
  g_assert_cmpuint(reused, >, 0); /* the plan reuses memory on this model */

  cJSON *report = ds_profiler_build_report(profiler, 1);
  g_assert_cmpstr(cJSON_GetObjectItem(report, "schema")->valuestring, ==, "dynscope-profile");
  g_assert_cmpint(cJSON_GetArraySize(cJSON_GetObjectItem(report, "events")), ==, 2 * n);
  cJSON_Delete(report);
}

/* Through a loop: its nodes nest inside the loop's event, per iteration, and each iteration
 * takes over the buffers of the one before. The plain timer counts the loop once per run. */
static void test_profiler_loop(void)
{
  const char *src = g_getenv("DS_SOURCE_DIR");
  g_autofree char *model =
      g_build_filename(src, "data", "control", "lstm-foreach-symbol.json", NULL);
  GError *error = NULL;
  g_autoptr(DsSession) session = ds_session_new(model, &error);
  DsShape shape;
  g_assert_true(ds_session_parse_shape(session, "(6, 4, 16)", &shape, &error));
  g_assert_true(ds_session_declare_shape(session, "data", &shape, &error));
  g_assert_true(ds_session_prepare(session, TRUE, 0, ds_backend_find("cpu"), 1, &error));
  g_autoptr(DsProfiler) profiler = ds_profiler_new(session);
  profile_runs(session, profiler, 1);

  guint n = ds_profiler_get_n_events(profiler);
  const Event *loop = &g_array_index(profiler->events, Event, n - 1);
  g_assert_cmpstr(loop->node->op_name, ==, "_foreach");
  guint per_iteration = 0, nested = 0;
  gsize reused_later = 0;
  for (guint i = 0; i + 1 < n; i++) {
    const Event *e = &g_array_index(profiler->events, Event, i);
    if (e->depth == 0)
      continue;
    g_assert_cmpuint(e->start_ns, >=, loop->start_ns);
    g_assert_cmpuint(e->end_ns, <=, loop->end_ns);
    nested++;
    per_iteration += e->iteration == 0;
    if (e->iteration > 0) {
      reused_later += e->reused_bytes;
      g_assert_cmpuint(e->fresh_bytes, ==, 0); /* memory does not grow with the iterations */
    }
  }
  g_assert_cmpuint(per_iteration, >, 0);
  g_assert_cmpuint(nested, ==, 6 * per_iteration);
  g_assert_cmpuint(reused_later, >, 0);

  g_autoptr(DsNodeTimer) timer = ds_node_timer_new(ds_session_get_graph(session)->n_nodes);
  ds_session_set_hooks(session, ds_node_timer_get_hooks(), timer);
  g_assert_true(ds_session_run(session, &error));
  g_assert_cmpuint(ds_node_timer_get_count(timer, loop->node->id), ==, 1);
  ds_session_set_hooks(session, NULL, NULL);
}

/* ---- GPU records ---- */

/* One run of the sample inside a region frame placed on "cuda", entered through the hooks as
 * the dynamic executor would: its nodes run on the host, but the ids are given out as on a
 * device. */
static void profile_in_placed_region(DsSession *session, DsProfiler *profiler)
{
  GError *error = NULL;
  const DsExecutorHooks *hooks = ds_profiler_get_hooks();
  DsFrame region = {
      .kind = DS_FRAME_REGION,
      .graph = ds_session_get_graph(session),
      .name = "cuda0",
      .iteration = -1,
      .backend = "cuda",
  };
  ds_session_set_hooks(session, hooks, profiler);
  ds_profiler_begin_run(profiler);
  hooks->frame_enter(profiler, &region);
  g_assert_true(ds_session_run(session, &error));
  hooks->frame_exit(profiler, &region);
  ds_profiler_end_run(profiler);
  ds_session_set_hooks(session, NULL, NULL);
}

static DsCuptiRecord gpu_record(DsCuptiKind kind, guint64 id, guint64 start, guint64 dur,
                                guint64 bytes, DsCuptiCopy copy)
{
  return (DsCuptiRecord){.kind = kind,
                         .external_id = id,
                         .name = kind == DS_CUPTI_KERNEL ? "sgemm_kernel" : NULL,
                         .start_ns = start,
                         .end_ns = start + dur,
                         .bytes = bytes,
                         .copy = copy};
}

static double number_at(const cJSON *object, const char *name)
{
  const cJSON *item = cJSON_GetObjectItem(object, name);
  g_assert_true(cJSON_IsNumber(item));
  return item->valuedouble;
}

static cJSON *find_named(const cJSON *list, const char *name)
{
  const cJSON *item;
  cJSON_ArrayForEach(item, list)
  {
    const cJSON *n = cJSON_GetObjectItem(item, "name");
    if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
      return (cJSON *)item;
  }
  return NULL;
}

/* Events 0 and 1 and the region get records; so do two kernels with ids that match nothing. */
static void add_synthetic_records(DsProfiler *p)
{
  const Event *e0 = &g_array_index(p->events, Event, 0);
  const Event *e1 = &g_array_index(p->events, Event, 1);
  const FrameRecord *region = &g_array_index(p->records, FrameRecord, 1);
  g_assert_cmpuint(e0->gpu_id, >, 0);
  g_assert_cmpuint(e1->gpu_id, >, 0);
  g_assert_cmpuint(region->gpu_id, >, 0);
  guint64 t0 = p->origin_ns + e0->start_ns, t1 = p->origin_ns + e1->start_ns;
  DsCuptiRecord records[] = {
      gpu_record(DS_CUPTI_MEMCPY, region->gpu_id, p->origin_ns, 100, 1024, DS_CUPTI_COPY_HTOD),
      gpu_record(DS_CUPTI_KERNEL, e0->gpu_id, t0 + 10, 1000, 0, DS_CUPTI_COPY_NONE),
      gpu_record(DS_CUPTI_KERNEL, e0->gpu_id, t0 + 1100, 2000, 0, DS_CUPTI_COPY_NONE),
      gpu_record(DS_CUPTI_KERNEL, e1->gpu_id, t1 + 10, 500, 0, DS_CUPTI_COPY_NONE),
      gpu_record(DS_CUPTI_MEMCPY, e1->gpu_id, t1 + 600, 50, 4096, DS_CUPTI_COPY_DTOD),
      gpu_record(DS_CUPTI_MEMSET, e1->gpu_id, t1 + 700, 20, 128, DS_CUPTI_COPY_NONE),
      gpu_record(DS_CUPTI_KERNEL, 0, t1 + 800, 30, 0, DS_CUPTI_COPY_NONE),
      gpu_record(DS_CUPTI_KERNEL, 999999, t1 + 900, 30, 0, DS_CUPTI_COPY_NONE),
  };
  ds_profiler_add_gpu_records(p, records, G_N_ELEMENTS(records));
}

static void check_gpu_report(DsProfiler *profiler)
{
  cJSON *report = ds_profiler_build_report(profiler, 1);
  const cJSON *events = cJSON_GetObjectItem(report, "events");
  const cJSON *e0 = cJSON_GetArrayItem(events, 0), *e1 = cJSON_GetArrayItem(events, 1);
  g_assert_cmpfloat(number_at(e0, "gpu_ns"), ==, 3000);
  g_assert_cmpfloat(number_at(e0, "gpu_kernels"), ==, 2);
  g_assert_cmpfloat(number_at(e0, "gpu_copy_bytes"), ==, 0);
  g_assert_cmpfloat(number_at(e1, "gpu_ns"), ==, 500);
  g_assert_cmpfloat(number_at(e1, "gpu_kernels"), ==, 1);
  g_assert_cmpfloat(number_at(e1, "gpu_copy_bytes"), ==, 4096 + 128);
  /* Traced: the others ran no GPU work, which is 0, not null. */
  const cJSON *e2 = cJSON_GetArrayItem(events, 2);
  g_assert_cmpfloat(number_at(e2, "gpu_ns"), ==, 0);
  g_assert_cmpstr(cJSON_GetObjectItem(e0, "backend")->valuestring, ==, "cpu");
  g_assert_cmpstr(cJSON_GetObjectItem(e0, "region")->valuestring, ==, "cuda0");

  const cJSON *trace = cJSON_GetObjectItem(cJSON_GetObjectItem(report, "run"), "gpu_trace");
  g_assert_cmpfloat(number_at(trace, "kernels"), ==, 5);
  g_assert_cmpfloat(number_at(trace, "kernel_ns"), ==, 3560);
  g_assert_cmpfloat(number_at(trace, "copies"), ==, 3);
  g_assert_cmpfloat(number_at(trace, "copy_bytes"), ==, 1024 + 4096 + 128);
  g_assert_cmpfloat(number_at(trace, "unattributed"), ==, 2);

  /* The region's group: its nodes' work and the copy on its edge. */
  const cJSON *aggregates = cJSON_GetObjectItem(report, "aggregates");
  const cJSON *region = find_named(cJSON_GetObjectItem(aggregates, "by_region"), "cuda0");
  g_assert_nonnull(region);
  g_assert_cmpfloat(number_at(region, "gpu_ns"), ==, 3500);
  g_assert_cmpfloat(number_at(region, "gpu_kernels"), ==, 3);
  g_assert_cmpfloat(number_at(region, "gpu_copy_bytes"), ==, 1024 + 4096 + 128);
  g_assert_cmpfloat(number_at(region, "edge_copy_bytes"), ==, 1024);
  const cJSON *conv = find_named(cJSON_GetObjectItem(aggregates, "by_op"), "Convolution");
  g_assert_cmpfloat(number_at(conv, "gpu_ns"), ==, 3000);

  /* The GPU records read back into the typed report as every reader sees them. */
  GError *error = NULL;
  DsReport *typed = ds_report_from_json(report, "report", &error);
  g_assert_no_error(error);
  g_assert_cmpint(typed->events[0].gpu_ns, ==, 3000);
  g_assert_cmpint(typed->events[0].gpu_kernels, ==, 2);
  g_assert_cmpint(typed->events[1].gpu_copy_bytes, ==, 4096 + 128);
  g_assert_cmpint(typed->events[2].gpu_ns, ==, 0);
  g_assert_true(typed->run.has_gpu_trace);
  g_assert_cmpint(typed->run.gpu_trace.kernels, ==, 5);
  g_assert_cmpint(typed->run.gpu_trace.kernel_ns, ==, 3560);
  g_assert_cmpint(typed->run.gpu_trace.copies, ==, 3);
  g_assert_cmpint(typed->run.gpu_trace.copy_bytes, ==, 1024 + 4096 + 128);
  g_assert_cmpint(typed->run.gpu_trace.unattributed, ==, 2);
  const DsReportAgg *typed_region = NULL;
  for (guint i = 0; i < typed->by_region.n_rows; i++)
    if (strcmp(typed->by_region.rows[i].name, "cuda0") == 0)
      typed_region = &typed->by_region.rows[i];
  g_assert_nonnull(typed_region);
  g_assert_cmpint(typed_region->gpu_ns, ==, 3500);
  g_assert_cmpint(typed_region->edge_copy_bytes, ==, 1024);
  ds_report_free(typed);
  cJSON_Delete(report);
}

/* The slice of category `cat` whose args name `path`: a node's (cpu_op) holding `ts` (µs),
 * or a GPU slice starting there. */
static const cJSON *slice_of(const cJSON *list, const char *cat, const char *path, double ts)
{
  const cJSON *item;
  cJSON_ArrayForEach(item, list)
  {
    const cJSON *c = cJSON_GetObjectItem(item, "cat");
    const cJSON *ph = cJSON_GetObjectItem(item, "ph");
    if (!cJSON_IsString(c) || strcmp(c->valuestring, cat) != 0 || strcmp(ph->valuestring, "X"))
      continue;
    const cJSON *node = cJSON_GetObjectItem(cJSON_GetObjectItem(item, "args"), "path");
    double start = number_at(item, "ts"), dur = number_at(item, "dur");
    gboolean inside = strcmp(cat, "cpu_op") == 0 ? start <= ts && ts <= start + dur : start == ts;
    if (cJSON_IsString(node) && strcmp(node->valuestring, path) == 0 && inside)
      return item;
  }
  return NULL;
}

/* Every arrow starts inside the launching node's slice and ends on one of its kernels. */
static guint check_flows(const cJSON *list)
{
  guint n = 0;
  const cJSON *s;
  cJSON_ArrayForEach(s, list)
  {
    if (strcmp(cJSON_GetObjectItem(s, "ph")->valuestring, "s") != 0)
      continue;
    double id = number_at(s, "id");
    const cJSON *f = NULL, *item;
    cJSON_ArrayForEach(item, list)
    {
      if (strcmp(cJSON_GetObjectItem(item, "ph")->valuestring, "f") == 0 &&
          number_at(item, "id") == id) {
        g_assert_null(f);
        f = item;
      }
    }
    g_assert_nonnull(f);
    g_assert_cmpstr(cJSON_GetObjectItem(f, "bp")->valuestring, ==, "e");
    g_assert_cmpfloat(number_at(f, "pid"), ==, 2);
    const cJSON *kernel = NULL;
    cJSON_ArrayForEach(item, list)
    {
      const cJSON *c = cJSON_GetObjectItem(item, "cat");
      if (cJSON_IsString(c) && strcmp(c->valuestring, "kernel") == 0 &&
          number_at(item, "ts") == number_at(f, "ts"))
        kernel = item;
    }
    g_assert_nonnull(kernel);
    const char *path =
        cJSON_GetObjectItem(cJSON_GetObjectItem(kernel, "args"), "path")->valuestring;
    g_assert_nonnull(slice_of(list, "cpu_op", path, number_at(s, "ts")));
    n++;
  }
  return n;
}

static void check_gpu_trace(DsProfiler *profiler)
{
  g_autofree char *text = ds_profiler_build_trace(profiler);
  cJSON *trace = cJSON_Parse(text);
  g_assert_nonnull(trace);
  const cJSON *list = cJSON_GetObjectItem(trace, "traceEvents");
  guint kernels = 0, memcpys = 0, memsets = 0, gpu_process = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, list)
  {
    const cJSON *cat = cJSON_GetObjectItem(item, "cat");
    const char *c = cJSON_IsString(cat) ? cat->valuestring : "";
    kernels += strcmp(c, "kernel") == 0;
    memcpys += strcmp(c, "gpu_memcpy") == 0;
    memsets += strcmp(c, "gpu_memset") == 0;
    if (strcmp(c, "kernel") == 0 || strcmp(c, "gpu_memcpy") == 0 || strcmp(c, "gpu_memset") == 0)
      g_assert_cmpfloat(number_at(item, "pid"), ==, 2);
    const cJSON *args = cJSON_GetObjectItem(item, "args");
    const cJSON *name = cJSON_GetObjectItem(args, "name");
    gpu_process += cJSON_IsString(name) && strcmp(name->valuestring, "GPU") == 0;
  }
  g_assert_cmpuint(kernels, ==, 5);
  g_assert_cmpuint(memcpys, ==, 2);
  g_assert_cmpuint(memsets, ==, 1);
  g_assert_cmpuint(gpu_process, ==, 1);
  g_assert_cmpuint(check_flows(list), ==, 3); /* the attributed kernels only */
  /* The edge copy names its region; the node's memcpy its node. */
  const cJSON *edge = find_named(list, "Memcpy HtoD");
  g_assert_cmpstr(cJSON_GetObjectItem(cJSON_GetObjectItem(edge, "args"), "region")->valuestring, ==,
                  "cuda0");
  const cJSON *dtod = find_named(list, "Memcpy DtoD");
  g_assert_cmpstr(cJSON_GetObjectItem(cJSON_GetObjectItem(dtod, "args"), "path")->valuestring, ==,
                  "cuda0/batchnorm0_fwd");
  cJSON_Delete(trace);
}

static void test_profiler_gpu_records(void)
{
  g_autoptr(DsSession) session = open_sample();
  g_autoptr(DsProfiler) profiler = ds_profiler_new(session);
  profile_in_placed_region(session, profiler);
  g_assert_false(ds_profiler_has_gpu(profiler)); /* no device: nothing traced */
  add_synthetic_records(profiler);
  g_assert_true(ds_profiler_has_gpu(profiler));
  const Event *e0 = &g_array_index(profiler->events, Event, 0);
  g_assert_cmpstr(e0->node->name, ==, "conv0_fwd");
  g_assert_cmpuint(ds_profiler_get_node_gpu_ns(profiler, e0->node->id), ==, 3000);
  check_gpu_report(profiler);
  check_gpu_trace(profiler);
  g_autofree char *csv = ds_profiler_build_csv(profiler);
  g_auto(GStrv) rows = g_strsplit(csv, "\n", -1);
  g_assert_true(g_str_has_suffix(rows[0], ",gpu_ns,gpu_kernels,gpu_copy_bytes"));
  g_assert_true(g_str_has_suffix(rows[1], ",3000,2,0"));
  g_assert_true(g_str_has_suffix(rows[2], ",500,1,4224"));
}

/* A run nobody traced: every GPU field is null (empty in the CSV), the trace has no GPU. */
static void test_profiler_gpu_absent(void)
{
  g_autoptr(DsSession) session = open_sample();
  g_autoptr(DsProfiler) profiler = ds_profiler_new(session);
  profile_runs(session, profiler, 1);
  cJSON *report = ds_profiler_build_report(profiler, 1);
  const cJSON *e0 = cJSON_GetArrayItem(cJSON_GetObjectItem(report, "events"), 0);
  g_assert_true(cJSON_IsNull(cJSON_GetObjectItem(e0, "gpu_ns")));
  g_assert_true(cJSON_IsNull(cJSON_GetObjectItem(e0, "gpu_kernels")));
  g_assert_true(cJSON_IsNull(cJSON_GetObjectItem(e0, "gpu_copy_bytes")));
  const cJSON *run = cJSON_GetObjectItem(report, "run");
  g_assert_true(cJSON_IsNull(cJSON_GetObjectItem(run, "gpu_trace")));
  /* build.cuda says whether this build has CUDA (the profiler's dependency defines it). */
  const cJSON *cuda = cJSON_GetObjectItem(cJSON_GetObjectItem(report, "build"), "cuda");
#ifdef DS_HAVE_CUPTI
  g_assert_true(cJSON_IsTrue(cuda));
#else
  g_assert_true(cJSON_IsFalse(cuda));
#endif
  g_assert_true(cJSON_IsNull(cJSON_GetObjectItem(run, "gpu_unavailable")));
  const cJSON *by_op = cJSON_GetObjectItem(cJSON_GetObjectItem(report, "aggregates"), "by_op");
  g_assert_true(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(by_op, 0), "gpu_ns")));
  cJSON_Delete(report);
  g_autofree char *trace = ds_profiler_build_trace(profiler);
  g_assert_null(strstr(trace, "\"GPU\""));
  g_autofree char *csv = ds_profiler_build_csv(profiler);
  g_auto(GStrv) rows = g_strsplit(csv, "\n", -1);
  g_assert_true(g_str_has_suffix(rows[1], ",,,"));
}

/* Without a device (or without CUDA in the build) CUPTI is never started: NULL and why. The
 * calls on a NULL collector do nothing. */
static void test_cupti_without_device(void)
{
  g_autofree char *reason = NULL;
  DsCupti *cupti = ds_cupti_start(&reason);
  if (cupti != NULL) {
    ds_cupti_free(cupti);
    g_test_skip("this machine has a CUDA device");
    return;
  }
  g_assert_nonnull(reason);
  g_test_message("ds_cupti_start: %s", reason);
  g_assert_true(strstr(reason, "CUDA") != NULL);
  ds_cupti_push(NULL, 1);
  ds_cupti_pop(NULL);
  ds_cupti_flush(NULL);
  guint n = 1;
  g_assert_null(ds_cupti_records(NULL, &n));
  g_assert_cmpuint(n, ==, 0);
  ds_cupti_clear(NULL);
  ds_cupti_free(NULL);
  g_assert_null(ds_cupti_start(NULL)); /* no reason asked for */
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/profiler/gpu/records", test_profiler_gpu_records);
  g_test_add_func("/profiler/gpu/absent", test_profiler_gpu_absent);
  g_test_add_func("/profiler/cupti/without-device", test_cupti_without_device);
  g_test_add_func("/profiler/static-memory", test_profiler_static_memory);
  g_test_add_func("/profiler/loop", test_profiler_loop);
  g_test_add_func("/profiler/node-timer/counts-every-op-node",
                  test_node_timer_counts_every_op_node);
  return g_test_run();
}
