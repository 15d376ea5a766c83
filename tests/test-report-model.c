/* test-report-model.c: the typed report (ds-report.h). Reports the profiler writes from real
 * runs (the bundled sample on the static executor; an LSTM loop on the dynamic one) read back
 * into the structs, checked field by field against the JSON; the same report through a file;
 * and every class of malformed field refused with one line naming the document and the field.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-error.h"
#include "ds-profiler.h"
#include "ds-report.h"
#include "ds-session.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(cJSON, cJSON_Delete)

/* ---- real runs ---- */

static char *data_path(const char *folder, const char *name)
{
  return g_build_filename(g_getenv("DS_SOURCE_DIR"), "data", folder, name, NULL);
}

/* `n_runs` profiled runs of `session`, as the profiler's JSON report. */
static cJSON *profile(DsSession *session, int n_runs)
{
  GError *error = NULL;
  g_autoptr(DsProfiler) profiler = ds_profiler_new(session);
  ds_session_set_hooks(session, ds_profiler_get_hooks(), profiler);
  for (int i = 0; i < n_runs; i++) {
    ds_profiler_begin_run(profiler);
    g_assert_true(ds_session_run(session, &error));
    g_assert_no_error(error);
    ds_profiler_end_run(profiler);
  }
  ds_session_set_hooks(session, NULL, NULL);
  return ds_profiler_build_report(profiler, 1);
}

static cJSON *sample_report(void)
{
  g_autofree char *model = data_path("sample", "sample-symbol.json");
  g_autofree char *params = data_path("sample", "sample.params");
  g_autofree char *input = data_path("sample", "sample-input.npy");
  GError *error = NULL;
  g_autoptr(DsSession) session = ds_session_new(model, &error);
  g_assert_no_error(error);
  g_assert_true(ds_session_feed_params(session, params, &error));
  g_assert_true(ds_session_feed_npy(session, "data", input, &error));
  g_assert_true(ds_session_prepare(session, FALSE, 0, ds_backend_find("cpu"), 1, &error));
  return profile(session, 3);
}

static cJSON *loop_report(void)
{
  g_autofree char *model = data_path("control", "lstm-foreach-symbol.json");
  GError *error = NULL;
  g_autoptr(DsSession) session = ds_session_new(model, &error);
  g_assert_no_error(error);
  DsShape shape;
  g_assert_true(ds_session_parse_shape(session, "(6, 4, 16)", &shape, &error));
  g_assert_true(ds_session_declare_shape(session, "data", &shape, &error));
  g_assert_true(ds_session_prepare(session, TRUE, 1, ds_backend_find("cpu"), 1, &error));
  g_assert_no_error(error);
  return profile(session, 2);
}

static const cJSON *at(const cJSON *object, const char *key)
{
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
  g_assert_nonnull(item);
  return item;
}

static const char *string_at(const cJSON *object, const char *key)
{
  const cJSON *item = at(object, key);
  return cJSON_IsNull(item) ? NULL : item->valuestring;
}

/* A count, or DS_REPORT_NONE for null. */
static gint64 count_at(const cJSON *object, const char *key)
{
  const cJSON *item = at(object, key);
  return cJSON_IsNull(item) ? DS_REPORT_NONE : (gint64)item->valuedouble;
}

static void check_shape(const DsReportShape *shape, const cJSON *json)
{
  g_assert_cmpuint(shape->n_dims, ==, (guint)cJSON_GetArraySize(json));
  for (guint d = 0; d < shape->n_dims; d++)
    g_assert_cmpint(shape->dims[d], ==, (gint64)cJSON_GetArrayItem(json, (int)d)->valuedouble);
}

static void check_shapes(const DsReportShapes *shapes, const cJSON *json)
{
  if (cJSON_IsNull(json)) {
    g_assert_null(shapes);
    return;
  }
  g_assert_nonnull(shapes);
  g_assert_cmpuint(shapes->n_shapes, ==, (guint)cJSON_GetArraySize(json));
  for (guint i = 0; i < shapes->n_shapes; i++)
    check_shape(&shapes->shapes[i], cJSON_GetArrayItem(json, (int)i));
}

static void check_agg(const DsReportAgg *a, const cJSON *json)
{
  g_assert_cmpstr(a->name, ==, string_at(json, "name"));
  g_assert_cmpint(a->count, ==, count_at(json, "count"));
  g_assert_cmpint(a->total_ns, ==, count_at(json, "total_ns"));
  g_assert_cmpint(a->mean_ns, ==, count_at(json, "mean_ns"));
  g_assert_cmpint(a->p50_ns, ==, count_at(json, "p50_ns"));
  g_assert_cmpint(a->p95_ns, ==, count_at(json, "p95_ns"));
  g_assert_cmpint(a->max_ns, ==, count_at(json, "max_ns"));
  g_assert_cmpint(a->max_event, ==, count_at(json, "max_event"));
  g_assert_cmpint(a->gpu_ns, ==, count_at(json, "gpu_ns"));
  g_assert_cmpint(a->gpu_kernels, ==, count_at(json, "gpu_kernels"));
  g_assert_cmpint(a->gpu_copy_bytes, ==, count_at(json, "gpu_copy_bytes"));
  const cJSON *edge = cJSON_GetObjectItemCaseSensitive(json, "edge_copy_bytes");
  g_assert_cmpint(a->edge_copy_bytes, ==,
                  cJSON_IsNumber(edge) ? (gint64)edge->valuedouble : DS_REPORT_NONE);
  check_shapes(a->max_input_shapes, at(json, "max_input_shapes"));
}

static void check_table(const DsReportTable *table, const cJSON *aggregates, const char *name)
{
  const cJSON *json = at(aggregates, name);
  g_assert_cmpuint(table->n_rows, ==, (guint)cJSON_GetArraySize(json));
  for (guint i = 0; i < table->n_rows; i++)
    check_agg(&table->rows[i], cJSON_GetArrayItem(json, (int)i));
}

static void check_event(const DsReportEvent *e, const cJSON *json)
{
  g_assert_cmpuint(e->run, ==, count_at(json, "run"));
  g_assert_cmpstr(e->path, ==, string_at(json, "path"));
  g_assert_cmpstr(e->key, ==, string_at(json, "key"));
  g_assert_cmpstr(e->node, ==, string_at(json, "node"));
  g_assert_cmpstr(e->op, ==, string_at(json, "op"));
  g_assert_cmpstr(e->region, ==, string_at(json, "region"));
  g_assert_cmpstr(e->body, ==, string_at(json, "body"));
  g_assert_cmpint(e->iteration, ==, (gint64)at(json, "iteration")->valuedouble);
  g_assert_cmpuint(e->depth, ==, count_at(json, "depth"));
  g_assert_cmpstr(e->backend, ==, string_at(json, "backend"));
  g_assert_cmpint(e->start_ns, ==, count_at(json, "start_ns"));
  g_assert_cmpint(e->end_ns, ==, count_at(json, "end_ns"));
  g_assert_cmpint(e->dur_ns, ==, count_at(json, "dur_ns"));
  g_assert_cmpint(e->dur_ns, ==, e->end_ns - e->start_ns);
  /* Not traced on a GPU: every GPU field null. */
  g_assert_cmpint(e->gpu_ns, ==, DS_REPORT_NONE);
  g_assert_cmpint(e->gpu_kernels, ==, DS_REPORT_NONE);
  g_assert_cmpint(e->gpu_copy_bytes, ==, DS_REPORT_NONE);
  check_shapes(e->input_shapes, at(json, "input_shapes"));
  check_shapes(e->output_shapes, at(json, "output_shapes"));
  g_assert_cmpint(e->fresh_bytes, ==, count_at(json, "fresh_bytes"));
  g_assert_cmpint(e->reused_bytes, ==, count_at(json, "reused_bytes"));
  g_assert_cmpint(e->live_bytes, ==, count_at(json, "live_bytes"));
}

/* Every field of `r` against the document it was read from. */
static void check_report(const DsReport *r, const cJSON *json)
{
  const cJSON *model = at(json, "model");
  g_assert_cmpstr(r->model.path, ==, string_at(model, "path"));
  g_assert_cmpstr(r->model.name, ==, string_at(model, "name"));
  g_assert_cmpstr(r->model.format, ==, string_at(model, "format"));
  g_assert_cmpstr(r->model.executor, ==, string_at(model, "executor"));
  g_assert_cmpint(r->model.nodes, ==, count_at(model, "nodes"));
  g_assert_cmpint(r->model.op_nodes, ==, count_at(model, "op_nodes"));
  g_assert_cmpuint(r->model.n_partition, ==, (guint)cJSON_GetArraySize(at(model, "partition")));

  const cJSON *machine = at(json, "machine");
  g_assert_true(r->has_machine);
  g_assert_cmpstr(r->machine.host, ==, string_at(machine, "host"));
  g_assert_cmpstr(r->machine.os, ==, string_at(machine, "os"));
  g_assert_cmpstr(r->machine.cpu, ==, string_at(machine, "cpu"));
  g_assert_cmpint(r->machine.cpus, ==, count_at(machine, "cpus"));
  g_assert_cmpint(r->machine.memory_bytes, ==, count_at(machine, "memory_bytes"));
  const cJSON *build = at(json, "build");
  g_assert_true(r->has_build);
  g_assert_cmpstr(r->build.version, ==, string_at(build, "version"));
  g_assert_cmpstr(r->build.compiler, ==, string_at(build, "compiler"));
  g_assert_cmpstr(r->build.blas, ==, string_at(build, "blas"));
  g_assert_cmpint(r->build.cuda, ==, cJSON_IsTrue(at(build, "cuda")));

  const cJSON *run = at(json, "run");
  g_assert_cmpstr(r->run.started, ==, string_at(run, "started"));
  g_assert_cmpint(r->run.repeat, ==, count_at(run, "repeat"));
  g_assert_cmpint(r->run.threads, ==, count_at(run, "threads"));
  g_assert_cmpint(r->run.profiler_overhead_ns, ==, count_at(run, "profiler_overhead_ns"));
  g_assert_cmpuint(r->run.n_wall, ==, r->run.repeat);
  gint64 longest = 0;
  for (guint i = 0; i < r->run.n_wall; i++) {
    g_assert_cmpint(r->run.wall_ns[i], ==,
                    (gint64)cJSON_GetArrayItem(at(run, "wall_ns"), (int)i)->valuedouble);
    longest = MAX(longest, r->run.wall_ns[i]);
  }
  gint64 median = ds_report_median_wall_ns(r);
  g_assert_cmpint(median, >, 0);
  g_assert_cmpint(median, <=, longest);
  g_assert_false(r->run.has_gpu_trace);
  g_assert_null(r->run.gpu_unavailable);

  g_assert_cmpuint(r->n_bindings, ==, (guint)cJSON_GetArraySize(at(json, "bindings")));
  for (guint i = 0; i < r->n_bindings; i++) {
    gint64 value;
    g_assert_true(ds_report_lookup_binding(r, r->bindings[i].name, &value));
    g_assert_cmpint(value, ==, count_at(at(json, "bindings"), r->bindings[i].name));
  }
  g_assert_cmpuint(r->n_inputs, ==, (guint)cJSON_GetArraySize(at(json, "inputs")));
  for (guint i = 0; i < r->n_inputs; i++) {
    const cJSON *input = cJSON_GetArrayItem(at(json, "inputs"), (int)i);
    g_assert_cmpstr(r->inputs[i].name, ==, string_at(input, "name"));
    g_assert_cmpstr(r->inputs[i].dtype, ==, string_at(input, "dtype"));
    check_shape(r->inputs[i].shape, at(input, "shape"));
  }

  g_assert_cmpuint(r->n_events, ==, (guint)cJSON_GetArraySize(at(json, "events")));
  g_assert_cmpuint(r->n_events, >, 0);
  for (guint i = 0; i < r->n_events; i++)
    check_event(&r->events[i], cJSON_GetArrayItem(at(json, "events"), (int)i));

  g_assert_cmpuint(r->n_buffers, ==, (guint)cJSON_GetArraySize(at(json, "buffers")));
  for (guint i = 0; i < r->n_buffers; i++) {
    const cJSON *b = cJSON_GetArrayItem(at(json, "buffers"), (int)i);
    g_assert_cmpstr(r->buffers[i].tensor, ==, string_at(b, "tensor"));
    g_assert_cmpint(r->buffers[i].bytes, ==, count_at(b, "bytes"));
    g_assert_cmpint(r->buffers[i].first_event, ==, count_at(b, "first_event"));
    g_assert_cmpint(r->buffers[i].last_event, ==, count_at(b, "last_event"));
    g_assert_cmpint(r->buffers[i].reused_from, ==, count_at(b, "reused_from"));
  }

  const cJSON *memory = at(json, "memory");
  g_assert_true(r->has_memory);
  g_assert_cmpint(r->memory.peak_live_bytes, ==, count_at(memory, "peak_live_bytes"));
  g_assert_cmpint(r->memory.planned_peak_bytes, ==, count_at(memory, "planned_peak_bytes"));
  g_assert_cmpint(r->memory.fresh_bytes, ==, count_at(memory, "fresh_bytes"));
  g_assert_cmpint(r->memory.reused_bytes, ==, count_at(memory, "reused_bytes"));

  const cJSON *aggregates = at(json, "aggregates");
  check_table(&r->by_op, aggregates, "by_op");
  check_table(&r->by_node, aggregates, "by_node");
  check_table(&r->by_region, aggregates, "by_region");
  check_table(&r->by_body, aggregates, "by_body");
  const cJSON *iterations = at(aggregates, "by_iteration");
  g_assert_cmpuint(r->n_iterations, ==, (guint)cJSON_GetArraySize(iterations));
  for (guint i = 0; i < r->n_iterations; i++) {
    const cJSON *it = cJSON_GetArrayItem(iterations, (int)i);
    g_assert_cmpstr(r->by_iteration[i].body, ==, string_at(it, "body"));
    g_assert_cmpint(r->by_iteration[i].iteration, ==, count_at(it, "iteration"));
    g_assert_cmpint(r->by_iteration[i].count, ==, count_at(it, "count"));
    g_assert_cmpint(r->by_iteration[i].total_ns, ==, count_at(it, "total_ns"));
  }
}

/* The static executor: a plan (a planned peak), no loops, 3 runs. */
static void test_sample_run(void)
{
  g_autoptr(cJSON) json = sample_report();
  GError *error = NULL;
  g_autoptr(DsReport) report = ds_report_from_json(json, "report", &error);
  g_assert_no_error(error);
  check_report(report, json);
  g_assert_cmpint(report->run.repeat, ==, 3);
  g_assert_cmpstr(report->model.executor, ==, "static");
  g_assert_cmpint(report->memory.planned_peak_bytes, >, 0);
  g_assert_cmpuint(report->n_iterations, ==, 0);
  g_assert_cmpuint(report->by_body.n_rows, ==, 0);
  for (guint i = 0; i < report->n_events; i++) {
    g_assert_cmpint(report->events[i].iteration, ==, -1);
    g_assert_null(report->events[i].body);
  }
}

/* The dynamic executor through a loop: bodies, iterations, nested events. */
static void test_loop_run(void)
{
  g_autoptr(cJSON) json = loop_report();
  GError *error = NULL;
  g_autoptr(DsReport) report = ds_report_from_json(json, "report", &error);
  g_assert_no_error(error);
  check_report(report, json);
  g_assert_cmpint(report->memory.planned_peak_bytes, ==, DS_REPORT_NONE);
  g_assert_cmpuint(report->n_iterations, ==, 6); /* 6 steps of one foreach loop */
  g_assert_cmpuint(report->by_body.n_rows, >, 0);
  guint nested = 0;
  for (guint i = 0; i < report->n_events; i++) {
    const DsReportEvent *e = &report->events[i];
    if (e->depth > 0) {
      nested++;
      g_assert_nonnull(e->body);
      g_assert_cmpint(e->iteration, >=, 0);
    }
  }
  g_assert_cmpuint(nested, >, 0);
}

/* Through a file, as --summary reads it; then the file's own failures. */
static void test_file(void)
{
  g_autoptr(cJSON) json = sample_report();
  g_autofree char *dir = g_dir_make_tmp("ds-report-model-XXXXXX", NULL);
  g_assert_nonnull(dir);
  g_autofree char *path = g_build_filename(dir, "r.json", NULL);
  char *text = cJSON_Print(json);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  cJSON_free(text);
  GError *error = NULL;
  g_autoptr(DsReport) report = ds_report_read_file(path, &error);
  g_assert_no_error(error);
  check_report(report, json);

  static const struct {
    const char *text, *message;
  } bad[] = {
      {"", "empty file, not a JSON document"},
      {"{\"schema\":", "not a JSON document (malformed, truncated"},
      {"{} x", "unexpected text after the JSON document at byte 3"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_true(g_file_set_contents(path, bad[i].text, -1, NULL));
    g_assert_null(ds_report_read_file(path, &error));
    g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
    g_assert_true(g_str_has_prefix(error->message, path));
    g_assert_nonnull(strstr(error->message, bad[i].message));
    g_clear_error(&error);
  }
  g_remove(path);
  g_assert_null(ds_report_read_file(path, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_IO);
  g_assert_nonnull(strstr(error->message, path));
  g_clear_error(&error);
  g_rmdir(dir);
}

/* ---- malformed fields ---- */

/* The member at `path` ("events/3/dur_ns", an index for an array), or its parent's when
 * `parent` is set, with `last` its key. */
static cJSON *walk(cJSON *root, const char *path, gboolean parent, const char **last)
{
  g_auto(GStrv) parts = g_strsplit(path, "/", -1);
  guint n = g_strv_length(parts);
  cJSON *item = root;
  for (guint i = 0; i + (parent ? 1 : 0) < n; i++) {
    if (cJSON_IsArray(item))
      item = cJSON_GetArrayItem(item, atoi(parts[i]));
    else
      item = cJSON_GetObjectItemCaseSensitive(item, parts[i]);
    g_assert_nonnull(item);
  }
  static char key[64];
  g_strlcpy(key, parts[n - 1], sizeof key);
  *last = key;
  return item;
}

/* Replaces the member at `path` by `value` (taken), or removes it when `value` is NULL. */
static void set(cJSON *root, const char *path, cJSON *value)
{
  const char *key;
  cJSON *parent = walk(root, path, TRUE, &key);
  if (cJSON_IsArray(parent)) {
    g_assert_nonnull(value);
    cJSON_ReplaceItemInArray(parent, atoi(key), value);
  } else if (value == NULL) {
    cJSON_DeleteItemFromObjectCaseSensitive(parent, key);
  } else if (cJSON_GetObjectItemCaseSensitive(parent, key) != NULL) {
    cJSON_ReplaceItemInObjectCaseSensitive(parent, key, value);
  } else {
    cJSON_AddItemToObject(parent, key, value);
  }
}

/* `path` set to the JSON `value` ("(absent)" removes it) must be refused with exactly
 * "report: `message`". */
static void assert_refused(const cJSON *good, const char *path, const char *value,
                           const char *message)
{
  g_autoptr(cJSON) json = cJSON_Duplicate(good, TRUE);
  if (strcmp(value, "(absent)") == 0) {
    set(json, path, NULL);
  } else {
    cJSON *parsed = cJSON_Parse(value);
    g_assert_nonnull(parsed);
    set(json, path, parsed);
  }
  GError *error = NULL;
  g_autoptr(DsReport) report = ds_report_from_json(json, "report", &error);
  g_assert_null(report);
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_autofree char *expected = g_strconcat("report: ", message, NULL);
  g_assert_cmpstr(error->message, ==, expected);
  g_error_free(error);
}

/* One case per class of fault, on the real loop report (it has every table). */
static void test_malformed(void)
{
  g_autoptr(cJSON) good = loop_report();
  static const struct {
    const char *path, *value, *message;
  } cases[] = {
      /* not a profile */
      {"schema", "(absent)", "not a dynscope profile report (no \"schema\" string)"},
      {"schema", "\"other\"",
       "not a dynscope profile report (schema \"other\", expected \"dynscope-profile\")"},
      {"version", "\"1\"", "report has no numeric \"version\""},
      {"version", "2", "report version 2 is not supported (this dynscope reads version 1)"},
      /* a required member missing, or null */
      {"model", "(absent)", "'model' is missing"},
      {"events", "(absent)", "'events' is missing"},
      {"buffers", "null", "buffers is not an array"},
      {"aggregates/by_node", "(absent)", "aggregates: 'by_node' is missing"},
      {"events/3/key", "(absent)", "events[3]: 'key' is missing"},
      {"events/3/start_ns", "null", "events[3].start_ns is not a non-negative integer"},
      /* the wrong kind */
      {"run", "[]", "run is not an object"},
      {"bindings", "[]", "bindings is not an object"},
      {"model/name", "7", "model.name is not a string"},
      {"model/partition", "{}", "model.partition is not an array"},
      {"model/partition", "[\"static0\", 3]", "model.partition[1] is not a string"},
      {"build/cuda", "\"no\"", "build.cuda is not a boolean"},
      {"machine/cpus", "\"4\"", "machine.cpus is not a non-negative integer"},
      {"events/2", "3", "events[2] is not an object"},
      {"buffers/0/tensor", "false", "buffers[0].tensor is not a string"},
      {"aggregates/by_op/0", "\"fc\"", "aggregates.by_op[0] is not an object"},
      {"inputs/0/shape", "\"(6, 4, 16)\"", "inputs[0].shape is not an array"},
      /* counts: negative, fractional, beyond 2^53 */
      {"events/3/dur_ns", "-1", "events[3].dur_ns is not a non-negative integer"},
      {"events/3/live_bytes", "1.5", "events[3].live_bytes is not a non-negative integer"},
      {"events/3/end_ns", "1e300", "events[3].end_ns is not a non-negative integer"},
      {"aggregates/by_op/0/total_ns", "null",
       "aggregates.by_op[0].total_ns is not a "
       "non-negative integer"},
      {"memory/planned_peak_bytes", "\"lots\"",
       "memory.planned_peak_bytes is not a non-negative integer"},
      {"run/wall_ns", "[1, -2]", "run.wall_ns holds something other than a non-negative integer"},
      /* integers that may be negative, but must be integers */
      {"events/3/iteration", "0.5", "events[3].iteration is not an integer"},
      {"aggregates/by_iteration/0/iteration", "\"0\"",
       "aggregates.by_iteration[0].iteration is not an integer"},
      {"bindings/s0", "\"4\"", "bindings.s0 is not an integer"},
      /* shapes */
      {"events/3/output_shapes", "[[\"a\"]]",
       "events[3].output_shapes[0] is not a shape (an array of integers)"},
      {"events/3/input_shapes", "[[4], 5]",
       "events[3].input_shapes[1] is not a shape (an array of integers)"},
      {"aggregates/by_node/1/max_input_shapes", "[[1.5]]",
       "aggregates.by_node[1].max_input_shapes[0] is not a shape (an array of integers)"},
      /* values out of range */
      {"run/repeat", "0", "run.repeat is 0"},
      {"events/3/run", "7", "events[3].run is 7, but run.repeat is 2"},
      /* the GPU trace, when there is one */
      {"run/gpu_trace", "{\"kernels\": 1}", "run.gpu_trace: 'kernel_ns' is missing"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_test_message("%s = %s", cases[i].path, cases[i].value);
    assert_refused(good, cases[i].path, cases[i].value, cases[i].message);
  }

  g_autoptr(cJSON) array = cJSON_CreateArray();
  GError *error = NULL;
  g_assert_null(ds_report_from_json(array, "report", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_assert_cmpstr(error->message, ==,
                  "report: not a dynscope profile report (the JSON is not an object)");
  g_clear_error(&error);
}

/* What the schema lets a reader go without: null or absent optional fields read as NULL or
 * DS_REPORT_NONE, and the summary's "memory: not recorded". */
static void test_optional(void)
{
  g_autoptr(cJSON) json = loop_report();
  cJSON_DeleteItemFromObjectCaseSensitive(json, "memory");
  cJSON_DeleteItemFromObjectCaseSensitive(json, "machine");
  cJSON_ReplaceItemInObjectCaseSensitive(json, "build", cJSON_CreateNull());
  cJSON *aggregates = cJSON_GetObjectItemCaseSensitive(json, "aggregates");
  cJSON_DeleteItemFromObjectCaseSensitive(aggregates, "by_body");
  cJSON_DeleteItemFromObjectCaseSensitive(aggregates, "by_iteration");
  cJSON *event = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(json, "events"), 0);
  cJSON_DeleteItemFromObjectCaseSensitive(event, "depth");
  cJSON_ReplaceItemInObjectCaseSensitive(event, "output_shapes", cJSON_CreateNull());
  GError *error = NULL;
  g_autoptr(DsReport) report = ds_report_from_json(json, "report", &error);
  g_assert_no_error(error);
  g_assert_false(report->has_memory);
  g_assert_cmpint(report->memory.planned_peak_bytes, ==, DS_REPORT_NONE);
  g_assert_false(report->has_machine);
  g_assert_null(report->machine.host);
  g_assert_cmpint(report->machine.cpus, ==, DS_REPORT_NONE);
  g_assert_false(report->has_build);
  g_assert_cmpint(report->build.cuda, ==, -1);
  g_assert_cmpuint(report->by_body.n_rows, ==, 0);
  g_assert_cmpuint(report->n_iterations, ==, 0);
  g_assert_cmpuint(report->events[0].depth, ==, 0);
  g_assert_null(report->events[0].output_shapes);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/profiler/report-model/sample-run", test_sample_run);
  g_test_add_func("/profiler/report-model/loop-run", test_loop_run);
  g_test_add_func("/profiler/report-model/file", test_file);
  g_test_add_func("/profiler/report-model/malformed", test_malformed);
  g_test_add_func("/profiler/report-model/optional", test_optional);
  return g_test_run();
}
