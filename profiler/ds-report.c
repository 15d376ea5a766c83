/* ds-report.c: reading a profile report back into a DsReport, checking every field a reader
 * uses on the way, so no reader ever meets a field of the wrong type. */
#include "ds-report.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "ds-error.h"
#include "ds-file.h"

#define REPORT_SCHEMA  "dynscope-profile"
#define REPORT_VERSION 1
/* cJSON holds a document in about ten times its text; a larger report would not fit. */
#define REPORT_MAX_BYTES ((gsize)1 << 30)
/* Counts and nanoseconds stay well inside gint64 and exact in a double. */
#define REPORT_MAX_COUNT 9007199254740992.0 /* 2^53 */

/* ---- Checking --------------------------------------------------------------------------
 * Every check names where in the document it failed ("events[3].dur_ns"), so a reader can
 * find it in a large file. */

typedef struct {
  const char *name; /* the file, or what the caller calls the document */
  GError **error;
  DsReport *report; /* what is read so far: the allocations it owns */
} Reader;

typedef enum {
  KIND_OBJECT,
  KIND_ARRAY,
  KIND_STRING,
  KIND_COUNT, /* an integer >= 0 */
  KIND_INT,   /* any integer (iteration: -1 outside loops) */
  KIND_BOOL,
} Kind;

static const char *const kind_names[] = {
    "an object", "an array", "a string", "a non-negative integer", "an integer", "a boolean"};

G_GNUC_PRINTF(2, 3)
static gboolean fail(Reader *r, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  g_autofree char *what = g_strdup_vprintf(format, args);
  va_end(args);
  g_set_error(r->error, DS_ERROR, DS_ERROR_PARSE, "%s: %s", r->name, what);
  return FALSE;
}

static gboolean is_integer(const cJSON *item, double min)
{
  if (!cJSON_IsNumber(item))
    return FALSE;
  double v = item->valuedouble;
  return isfinite(v) && v == floor(v) && v >= min && v <= REPORT_MAX_COUNT;
}

static gboolean is_kind(const cJSON *item, Kind kind)
{
  switch (kind) {
  case KIND_OBJECT:
    return cJSON_IsObject(item);
  case KIND_ARRAY:
    return cJSON_IsArray(item);
  case KIND_STRING:
    return cJSON_IsString(item) && item->valuestring != NULL;
  case KIND_COUNT:
    return is_integer(item, 0);
  case KIND_INT:
    return is_integer(item, -REPORT_MAX_COUNT);
  case KIND_BOOL:
    return cJSON_IsBool(item);
  }
  return FALSE;
}

/* The member `key` of `object` (found at `where`, "" at the top), which must be of `kind`; or
 * NULL when it is absent and `optional` (a null counts as absent then). FALSE with the error
 * set otherwise. */
static gboolean member(Reader *r, const cJSON *object, const char *where, const char *key,
                       Kind kind, gboolean optional, const cJSON **out)
{
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
  *out = NULL;
  if ((item == NULL || cJSON_IsNull(item)) && optional)
    return TRUE;
  if (item == NULL)
    return fail(r, "%s%s'%s' is missing", where, *where ? ": " : "", key);
  if (!is_kind(item, kind))
    return fail(r, "%s%s%s is not %s", where, *where ? "." : "", key, kind_names[kind]);
  *out = item;
  return TRUE;
}

/* ---- Reading ---------------------------------------------------------------------------- */

/* An array of `n` elements of `size` owned by the report; NULL for none. */
static gpointer alloc(Reader *r, gsize n, gsize size)
{
  if (n == 0)
    return NULL;
  gpointer block = g_malloc0_n(n, size);
  g_ptr_array_add(r->report->blocks, block);
  return block;
}

/* Names repeat in every event and run: kept once each. */
static const char *keep(Reader *r, const char *text)
{
  return g_string_chunk_insert_const(r->report->strings, text);
}

static gboolean read_string(Reader *r, const cJSON *object, const char *where, const char *key,
                            gboolean optional, const char **out)
{
  const cJSON *item;
  if (!member(r, object, where, key, KIND_STRING, optional, &item))
    return FALSE;
  *out = item != NULL ? keep(r, item->valuestring) : NULL;
  return TRUE;
}

/* A count or integer; `fallback` when optional and absent or null. */
static gboolean read_number(Reader *r, const cJSON *object, const char *where, const char *key,
                            Kind kind, gboolean optional, gint64 fallback, gint64 *out)
{
  const cJSON *item;
  if (!member(r, object, where, key, kind, optional, &item))
    return FALSE;
  *out = item != NULL ? (gint64)item->valuedouble : fallback;
  return TRUE;
}

#define STRING(out, object, where, key, optional)                                                  \
  do {                                                                                             \
    if (!read_string(r, object, where, key, optional, &(out)))                                     \
      return FALSE;                                                                                \
  } while (0)
#define NUMBER(out, object, where, key, kind, optional, fallback)                                  \
  do {                                                                                             \
    if (!read_number(r, object, where, key, kind, optional, fallback, &(out)))                     \
      return FALSE;                                                                                \
  } while (0)
/* The common cases: a required count, a count that may be null. */
#define COUNT(out, object, where, key) NUMBER(out, object, where, key, KIND_COUNT, FALSE, 0)
#define COUNT_OR_NONE(out, object, where, key)                                                     \
  NUMBER(out, object, where, key, KIND_COUNT, TRUE, DS_REPORT_NONE)

/* One shape, an array of integers; `where` names it in the error. */
static gboolean read_shape(Reader *r, const cJSON *shape, const char *where, DsReportShape *out)
{
  if (!cJSON_IsArray(shape))
    return fail(r, "%s is not a shape (an array of integers)", where);
  guint n = (guint)cJSON_GetArraySize(shape);
  gint64 *dims = alloc(r, n, sizeof *dims);
  guint i = 0;
  const cJSON *dim;
  cJSON_ArrayForEach(dim, shape)
  {
    if (!is_integer(dim, -REPORT_MAX_COUNT))
      return fail(r, "%s is not a shape (an array of integers)", where);
    dims[i++] = (gint64)dim->valuedouble;
  }
  *out = (DsReportShape){.n_dims = n, .dims = dims};
  return TRUE;
}

/* Member `key` of `object`: an array of shapes, or NULL when absent or null. */
static gboolean read_shapes(Reader *r, const cJSON *object, const char *where, const char *key,
                            const DsReportShapes **out)
{
  const cJSON *list;
  *out = NULL;
  if (!member(r, object, where, key, KIND_ARRAY, TRUE, &list))
    return FALSE;
  if (list == NULL)
    return TRUE;
  guint n = (guint)cJSON_GetArraySize(list);
  DsReportShapes *shapes = alloc(r, 1, sizeof *shapes);
  DsReportShape *items = alloc(r, n, sizeof *items);
  guint i = 0;
  const cJSON *shape;
  cJSON_ArrayForEach(shape, list)
  {
    char inner[128];
    g_snprintf(inner, sizeof inner, "%s.%s[%u]", where, key, i);
    if (!read_shape(r, shape, inner, &items[i]))
      return FALSE;
    i++;
  }
  *shapes = (DsReportShapes){.n_shapes = n, .shapes = items};
  *out = shapes;
  return TRUE;
}

#define SHAPES(out, object, where, key)                                                            \
  do {                                                                                             \
    if (!read_shapes(r, object, where, key, &(out)))                                               \
      return FALSE;                                                                                \
  } while (0)

/* `where` for row `index` of an array, checking the row is an object. */
static gboolean row_begin(Reader *r, const cJSON *row, const char *table, guint index, char *where,
                          gsize size)
{
  g_snprintf(where, size, "%s[%u]", table, index);
  if (!cJSON_IsObject(row))
    return fail(r, "%s is not an object", where);
  return TRUE;
}

static gboolean read_header(Reader *r, const cJSON *root)
{
  if (!cJSON_IsObject(root))
    return fail(r, "not a dynscope profile report (the JSON is not an object)");
  const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
  if (!cJSON_IsString(schema) || schema->valuestring == NULL)
    return fail(r, "not a dynscope profile report (no \"schema\" string)");
  if (strcmp(schema->valuestring, REPORT_SCHEMA) != 0)
    return fail(r, "not a dynscope profile report (schema \"%.64s\", expected \"%s\")",
                schema->valuestring, REPORT_SCHEMA);
  const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
  if (!cJSON_IsNumber(version))
    return fail(r, "report has no numeric \"version\"");
  if (version->valuedouble != REPORT_VERSION)
    return fail(r, "report version %g is not supported (this dynscope reads version %d)",
                version->valuedouble, REPORT_VERSION);
  return TRUE;
}

static gboolean read_model(Reader *r, const cJSON *root)
{
  DsReport *report = r->report;
  const cJSON *model, *partition;
  if (!member(r, root, "", "model", KIND_OBJECT, FALSE, &model))
    return FALSE;
  STRING(report->model.path, model, "model", "path", FALSE);
  STRING(report->model.name, model, "model", "name", FALSE);
  STRING(report->model.format, model, "model", "format", TRUE);
  COUNT_OR_NONE(report->model.nodes, model, "model", "nodes");
  COUNT_OR_NONE(report->model.op_nodes, model, "model", "op_nodes");
  STRING(report->model.executor, model, "model", "executor", FALSE);
  if (!member(r, model, "model", "partition", KIND_ARRAY, TRUE, &partition))
    return FALSE;
  guint n = (guint)cJSON_GetArraySize(partition);
  const char **regions = alloc(r, n, sizeof *regions);
  guint i = 0;
  const cJSON *region;
  cJSON_ArrayForEach(region, partition)
  {
    if (!is_kind(region, KIND_STRING))
      return fail(r, "model.partition[%u] is not a string", i);
    regions[i++] = keep(r, region->valuestring);
  }
  report->model.n_partition = n;
  report->model.partition = regions;
  return TRUE;
}

/* Machine and build only describe where the report came from: each may be absent. */
static gboolean read_environment(Reader *r, const cJSON *root)
{
  DsReport *report = r->report;
  const cJSON *machine, *build, *cuda;
  if (!member(r, root, "", "machine", KIND_OBJECT, TRUE, &machine) ||
      !member(r, root, "", "build", KIND_OBJECT, TRUE, &build))
    return FALSE;
  report->has_machine = machine != NULL;
  STRING(report->machine.host, machine, "machine", "host", TRUE);
  STRING(report->machine.os, machine, "machine", "os", TRUE);
  STRING(report->machine.cpu, machine, "machine", "cpu", TRUE);
  COUNT_OR_NONE(report->machine.cpus, machine, "machine", "cpus");
  COUNT_OR_NONE(report->machine.memory_bytes, machine, "machine", "memory_bytes");
  report->has_build = build != NULL;
  STRING(report->build.version, build, "build", "version", TRUE);
  STRING(report->build.compiler, build, "build", "compiler", TRUE);
  if (!member(r, build, "build", "cuda", KIND_BOOL, TRUE, &cuda))
    return FALSE;
  report->build.cuda = cuda == NULL ? -1 : cJSON_IsTrue(cuda);
  STRING(report->build.blas, build, "build", "blas", TRUE);
  return TRUE;
}

static gboolean read_gpu_trace(Reader *r, const cJSON *run)
{
  DsReport *report = r->report;
  const cJSON *trace;
  if (!member(r, run, "run", "gpu_trace", KIND_OBJECT, TRUE, &trace))
    return FALSE;
  report->run.has_gpu_trace = trace != NULL;
  if (trace == NULL)
    return TRUE;
  DsReportGpuTrace *t = &report->run.gpu_trace;
  COUNT(t->kernels, trace, "run.gpu_trace", "kernels");
  COUNT(t->kernel_ns, trace, "run.gpu_trace", "kernel_ns");
  COUNT(t->copies, trace, "run.gpu_trace", "copies");
  COUNT(t->copy_bytes, trace, "run.gpu_trace", "copy_bytes");
  COUNT(t->unattributed, trace, "run.gpu_trace", "unattributed");
  COUNT(t->dropped, trace, "run.gpu_trace", "dropped");
  return TRUE;
}

static gboolean read_run(Reader *r, const cJSON *root)
{
  DsReport *report = r->report;
  const cJSON *run, *wall;
  if (!member(r, root, "", "run", KIND_OBJECT, FALSE, &run))
    return FALSE;
  COUNT(report->run.repeat, run, "run", "repeat");
  if (report->run.repeat < 1)
    return fail(r, "run.repeat is 0");
  if (!member(r, run, "run", "wall_ns", KIND_ARRAY, FALSE, &wall))
    return FALSE;
  guint n = (guint)cJSON_GetArraySize(wall);
  gint64 *walls = alloc(r, n, sizeof *walls);
  guint i = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, wall)
  {
    if (!is_kind(item, KIND_COUNT))
      return fail(r, "run.wall_ns holds something other than a non-negative integer");
    walls[i++] = (gint64)item->valuedouble;
  }
  report->run.n_wall = n;
  report->run.wall_ns = walls;
  STRING(report->run.started, run, "run", "started", FALSE);
  COUNT(report->run.threads, run, "run", "threads");
  COUNT(report->run.profiler_overhead_ns, run, "run", "profiler_overhead_ns");
  STRING(report->run.gpu_unavailable, run, "run", "gpu_unavailable", TRUE);
  return read_gpu_trace(r, run);
}

static gboolean read_bindings(Reader *r, const cJSON *root)
{
  const cJSON *bindings;
  if (!member(r, root, "", "bindings", KIND_OBJECT, FALSE, &bindings))
    return FALSE;
  guint n = (guint)cJSON_GetArraySize(bindings);
  DsReportBinding *out = alloc(r, n, sizeof *out);
  guint i = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, bindings)
  {
    if (!is_kind(item, KIND_INT))
      return fail(r, "bindings.%.64s is not an integer", item->string);
    out[i++] = (DsReportBinding){.name = keep(r, item->string), .value = (gint64)item->valuedouble};
  }
  r->report->n_bindings = n;
  r->report->bindings = out;
  return TRUE;
}

static gboolean read_input(Reader *r, const cJSON *row, guint index, gpointer row_out)
{
  DsReportInput *out = row_out;
  char where[48];
  const cJSON *shape;
  if (!row_begin(r, row, "inputs", index, where, sizeof where))
    return FALSE;
  STRING(out->name, row, where, "name", FALSE);
  STRING(out->dtype, row, where, "dtype", TRUE);
  if (!member(r, row, where, "shape", KIND_ARRAY, TRUE, &shape))
    return FALSE;
  if (shape != NULL) {
    char inner[64];
    g_snprintf(inner, sizeof inner, "%s.shape", where);
    DsReportShape *s = alloc(r, 1, sizeof *s);
    if (!read_shape(r, shape, inner, s))
      return FALSE;
    out->shape = s;
  }
  return TRUE;
}

static gboolean read_event(Reader *r, const cJSON *row, guint index, gpointer row_out)
{
  DsReportEvent *e = row_out;
  char where[48];
  gint64 run, depth;
  if (!row_begin(r, row, "events", index, where, sizeof where))
    return FALSE;
  STRING(e->key, row, where, "key", FALSE);
  STRING(e->op, row, where, "op", FALSE);
  COUNT(e->dur_ns, row, where, "dur_ns");
  COUNT(run, row, where, "run");
  NUMBER(depth, row, where, "depth", KIND_COUNT, TRUE, 0);
  SHAPES(e->output_shapes, row, where, "output_shapes");
  if (run >= r->report->run.repeat)
    return fail(r, "%s.run is %" G_GINT64_FORMAT ", but run.repeat is %" G_GINT64_FORMAT, where,
                run, r->report->run.repeat);
  e->run = (guint)run;
  e->depth = (guint)MIN(depth, G_MAXUINT);
  STRING(e->path, row, where, "path", TRUE);
  STRING(e->node, row, where, "node", TRUE);
  STRING(e->region, row, where, "region", TRUE);
  STRING(e->body, row, where, "body", TRUE);
  NUMBER(e->iteration, row, where, "iteration", KIND_INT, TRUE, -1);
  STRING(e->backend, row, where, "backend", TRUE);
  COUNT(e->start_ns, row, where, "start_ns");
  COUNT(e->end_ns, row, where, "end_ns");
  COUNT_OR_NONE(e->gpu_ns, row, where, "gpu_ns");
  COUNT_OR_NONE(e->gpu_kernels, row, where, "gpu_kernels");
  COUNT_OR_NONE(e->gpu_copy_bytes, row, where, "gpu_copy_bytes");
  SHAPES(e->input_shapes, row, where, "input_shapes");
  NUMBER(e->fresh_bytes, row, where, "fresh_bytes", KIND_COUNT, TRUE, 0);
  NUMBER(e->reused_bytes, row, where, "reused_bytes", KIND_COUNT, TRUE, 0);
  COUNT(e->live_bytes, row, where, "live_bytes");
  return TRUE;
}

static gboolean read_buffer(Reader *r, const cJSON *row, guint index, gpointer row_out)
{
  DsReportBuffer *b = row_out;
  char where[48];
  if (!row_begin(r, row, "buffers", index, where, sizeof where))
    return FALSE;
  STRING(b->tensor, row, where, "tensor", FALSE);
  COUNT(b->bytes, row, where, "bytes");
  COUNT(b->first_event, row, where, "first_event");
  COUNT(b->last_event, row, where, "last_event");
  COUNT_OR_NONE(b->reused_from, row, where, "reused_from");
  return TRUE;
}

static gboolean read_agg(Reader *r, const cJSON *row, const char *table, guint index,
                         DsReportAgg *a)
{
  char where[64];
  g_snprintf(where, sizeof where, "aggregates.%s[%u]", table, index);
  if (!cJSON_IsObject(row))
    return fail(r, "%s is not an object", where);
  STRING(a->name, row, where, "name", FALSE);
  COUNT(a->count, row, where, "count");
  COUNT(a->total_ns, row, where, "total_ns");
  COUNT(a->mean_ns, row, where, "mean_ns");
  COUNT(a->p50_ns, row, where, "p50_ns");
  COUNT(a->p95_ns, row, where, "p95_ns");
  SHAPES(a->max_input_shapes, row, where, "max_input_shapes");
  COUNT(a->max_ns, row, where, "max_ns");
  COUNT_OR_NONE(a->max_event, row, where, "max_event");
  COUNT_OR_NONE(a->gpu_ns, row, where, "gpu_ns");
  COUNT_OR_NONE(a->gpu_kernels, row, where, "gpu_kernels");
  COUNT_OR_NONE(a->gpu_copy_bytes, row, where, "gpu_copy_bytes");
  COUNT_OR_NONE(a->edge_copy_bytes, row, where, "edge_copy_bytes");
  return TRUE;
}

static gboolean read_iteration(Reader *r, const cJSON *row, guint index, DsReportIteration *it)
{
  char where[64];
  g_snprintf(where, sizeof where, "aggregates.by_iteration[%u]", index);
  if (!cJSON_IsObject(row))
    return fail(r, "%s is not an object", where);
  STRING(it->body, row, where, "body", FALSE);
  NUMBER(it->iteration, row, where, "iteration", KIND_INT, FALSE, 0);
  COUNT(it->count, row, where, "count");
  COUNT(it->total_ns, row, where, "total_ns");
  return TRUE;
}

/* Member `key` of `object`: an array whose rows `read_row` fills, `size` bytes each. */
typedef gboolean (*ReadRow)(Reader *r, const cJSON *row, guint index, gpointer out);

static gboolean read_rows(Reader *r, const cJSON *object, const char *key, gboolean optional,
                          ReadRow read_row, gsize size, guint *n_out, gconstpointer *rows_out)
{
  const cJSON *list;
  if (!member(r, object, "", key, KIND_ARRAY, optional, &list))
    return FALSE;
  guint n = (guint)cJSON_GetArraySize(list);
  char *rows = alloc(r, n, size);
  guint i = 0;
  const cJSON *row;
  cJSON_ArrayForEach(row, list)
  {
    if (!read_row(r, row, i, rows + i * size))
      return FALSE;
    i++;
  }
  *n_out = n;
  *rows_out = rows;
  return TRUE;
}

static gboolean read_aggregates(Reader *r, const cJSON *root)
{
  DsReport *report = r->report;
  const cJSON *aggregates;
  if (!member(r, root, "", "aggregates", KIND_OBJECT, FALSE, &aggregates))
    return FALSE;
  const struct {
    const char *name;
    gboolean required;
    DsReportTable *table;
  } tables[] = {
      {"by_op", TRUE, &report->by_op},
      {"by_node", TRUE, &report->by_node},
      {"by_region", FALSE, &report->by_region},
      {"by_body", FALSE, &report->by_body},
  };
  for (guint t = 0; t < G_N_ELEMENTS(tables); t++) {
    const cJSON *list;
    if (!member(r, aggregates, "aggregates", tables[t].name, KIND_ARRAY, !tables[t].required,
                &list))
      return FALSE;
    guint n = (guint)cJSON_GetArraySize(list);
    DsReportAgg *rows = alloc(r, n, sizeof *rows);
    guint i = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, list)
    {
      if (!read_agg(r, row, tables[t].name, i, &rows[i]))
        return FALSE;
      i++;
    }
    *tables[t].table = (DsReportTable){.n_rows = n, .rows = rows};
  }
  const cJSON *list;
  if (!member(r, aggregates, "aggregates", "by_iteration", KIND_ARRAY, TRUE, &list))
    return FALSE;
  guint n = (guint)cJSON_GetArraySize(list);
  DsReportIteration *iterations = alloc(r, n, sizeof *iterations);
  guint i = 0;
  const cJSON *row;
  cJSON_ArrayForEach(row, list)
  {
    if (!read_iteration(r, row, i, &iterations[i]))
      return FALSE;
    i++;
  }
  report->n_iterations = n;
  report->by_iteration = iterations;
  return TRUE;
}

/* A report without memory says so ("not recorded"); a null count is 0, a null plan none. */
static gboolean read_memory(Reader *r, const cJSON *root)
{
  DsReport *report = r->report;
  const cJSON *memory;
  if (!member(r, root, "", "memory", KIND_OBJECT, TRUE, &memory))
    return FALSE;
  report->has_memory = memory != NULL;
  NUMBER(report->memory.peak_live_bytes, memory, "memory", "peak_live_bytes", KIND_COUNT, TRUE, 0);
  COUNT_OR_NONE(report->memory.planned_peak_bytes, memory, "memory", "planned_peak_bytes");
  NUMBER(report->memory.fresh_bytes, memory, "memory", "fresh_bytes", KIND_COUNT, TRUE, 0);
  NUMBER(report->memory.reused_bytes, memory, "memory", "reused_bytes", KIND_COUNT, TRUE, 0);
  return TRUE;
}

/* A run with a backward pass says how its time and memory split between the passes. */
static gboolean read_backward(Reader *r, const cJSON *root)
{
  DsReport *report = r->report;
  const cJSON *b;
  if (!member(r, root, "", "backward", KIND_OBJECT, TRUE, &b))
    return FALSE;
  report->has_backward = b != NULL;
  if (b == NULL)
    return TRUE;
  STRING(report->backward.policy, b, "backward", "policy", FALSE);
  COUNT(report->backward.gradients, b, "backward", "gradients");
  COUNT(report->backward.forward_nodes, b, "backward", "forward_nodes");
  COUNT(report->backward.forward_ns, b, "backward", "forward_ns");
  COUNT(report->backward.backward_ns, b, "backward", "backward_ns");
  COUNT(report->backward.forward_peak_live_bytes, b, "backward", "forward_peak_live_bytes");
  COUNT(report->backward.backward_peak_live_bytes, b, "backward", "backward_peak_live_bytes");
  return TRUE;
}

/* In the order the CLI always checked them, so a report with several faults names the same
 * one. */
static gboolean read_report(Reader *r, const cJSON *root)
{
  DsReport *report = r->report;
  gconstpointer rows;
  if (!read_header(r, root) || !read_model(r, root) || !read_environment(r, root) ||
      !read_run(r, root) || !read_bindings(r, root))
    return FALSE;
  if (!read_rows(r, root, "inputs", TRUE, read_input, sizeof(DsReportInput), &report->n_inputs,
                 &rows))
    return FALSE;
  report->inputs = rows;
  if (!read_rows(r, root, "events", FALSE, read_event, sizeof(DsReportEvent), &report->n_events,
                 &rows))
    return FALSE;
  report->events = rows;
  if (!read_aggregates(r, root) || !read_memory(r, root) || !read_backward(r, root))
    return FALSE;
  if (!read_rows(r, root, "buffers", FALSE, read_buffer, sizeof(DsReportBuffer), &report->n_buffers,
                 &rows))
    return FALSE;
  report->buffers = rows;
  return TRUE;
}

DsReport *ds_report_from_json(const cJSON *root, const char *name, GError **error)
{
  g_return_val_if_fail(name != NULL, NULL);
  g_autoptr(DsReport) report = g_new0(DsReport, 1);
  report->strings = g_string_chunk_new(4096);
  report->blocks = g_ptr_array_new_with_free_func(g_free);
  Reader reader = {name, error, report};
  if (!read_report(&reader, root))
    return NULL;
  return g_steal_pointer(&report);
}

DsReport *ds_report_read_file(const char *path, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  g_autoptr(GMappedFile) file = ds_file_map(path, error);
  if (file == NULL)
    return NULL;
  const char *data = g_mapped_file_get_contents(file);
  gsize len = g_mapped_file_get_length(file);
  if (len > REPORT_MAX_BYTES) {
    g_set_error(error, DS_ERROR, DS_ERROR_LIMIT,
                "%s: report of %" G_GSIZE_FORMAT " bytes is over the 1 GiB this reader takes", path,
                len);
    return NULL;
  }
  if (len == 0 || data == NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE, "%s: empty file, not a JSON document", path);
    return NULL;
  }
  /* cJSON would stop at a NUL and call it malformed without saying what it saw. */
  const char *nul = memchr(data, '\0', len);
  if (nul != NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: a NUL byte at byte %" G_GSIZE_FORMAT ": a report is JSON text", path,
                (gsize)(nul - data));
    return NULL;
  }
  const char *end = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(data, len, &end, FALSE);
  gsize stop = end != NULL && end >= data ? MIN((gsize)(end - data), len) : 0;
  if (root == NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: not a JSON document (malformed, truncated or nested over %d levels at byte "
                "%" G_GSIZE_FORMAT ")",
                path, CJSON_NESTING_LIMIT, stop);
    return NULL;
  }
  while (stop < len && g_ascii_isspace(data[stop]))
    stop++;
  DsReport *report = NULL;
  if (stop < len)
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: unexpected text after the JSON document at byte %" G_GSIZE_FORMAT, path, stop);
  else
    report = ds_report_from_json(root, path, error);
  cJSON_Delete(root);
  return report;
}

void ds_report_free(DsReport *report)
{
  if (report == NULL)
    return;
  if (report->strings != NULL)
    g_string_chunk_free(report->strings);
  if (report->blocks != NULL)
    g_ptr_array_unref(report->blocks);
  g_free(report);
}

/* ---- Derived values ---------------------------------------------------------------------- */

static int compare_i64(const void *a, const void *b)
{
  gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
  return x < y ? -1 : x > y;
}

gint64 ds_report_median_wall_ns(const DsReport *report)
{
  guint n = report->run.n_wall;
  if (n == 0)
    return 0;
  g_autofree gint64 *sorted = g_memdup2(report->run.wall_ns, n * sizeof(gint64));
  qsort(sorted, n, sizeof(gint64), compare_i64);
  return sorted[n / 2];
}

gboolean ds_report_lookup_binding(const DsReport *report, const char *symbol, gint64 *value)
{
  /* The first of a name, as a JSON object lookup finds it. */
  for (guint i = 0; i < report->n_bindings; i++) {
    if (strcmp(report->bindings[i].name, symbol) == 0) {
      *value = report->bindings[i].value;
      return TRUE;
    }
  }
  return FALSE;
}
