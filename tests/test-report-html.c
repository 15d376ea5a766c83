/* test-report-html.c: the HTML profile page. A small report (a loop, buffers reusing memory,
 * bindings, a node named like a script) gives a self-contained page with both charts, escaped
 * names and the top tables in order of time; an empty report still gives a page; a missing
 * folder fails and leaves no file; a 100k-event report stays small and keeps its peak. The
 * reports are built as JSON and read as every reader reads them (ds-report.h), which also
 * refuses malformed ones (test-report-model). */
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>

#include "ds-error.h"
#include "ds-report-html.h"

G_DEFINE_AUTOPTR_CLEANUP_FUNC(cJSON, cJSON_Delete)

#define EVIL_NODE    "<script>alert(1)</script>&x"
#define EVIL_ESCAPED "&lt;script&gt;alert(1)&lt;/script&gt;&amp;x"

static char *tmp_dir;

static cJSON *shape_list(int n_shapes, const int *dims, int n_dims)
{
  cJSON *shapes = cJSON_CreateArray();
  for (int s = 0; s < n_shapes; s++)
    cJSON_AddItemToArray(shapes, cJSON_CreateIntArray(dims, n_dims));
  return shapes;
}

static void add_event(cJSON *events, int id, const char *path, const char *key, const char *op,
                      const char *body, int depth, double start, double end, double live)
{
  static const int dims[] = {4, 16};
  cJSON *e = cJSON_CreateObject();
  cJSON_AddNumberToObject(e, "id", id);
  cJSON_AddNumberToObject(e, "run", 0);
  cJSON_AddStringToObject(e, "path", path);
  cJSON_AddStringToObject(e, "key", key);
  cJSON_AddStringToObject(e, "node", key);
  cJSON_AddStringToObject(e, "op", op);
  cJSON_AddNullToObject(e, "region");
  if (body != NULL)
    cJSON_AddStringToObject(e, "body", body);
  else
    cJSON_AddNullToObject(e, "body");
  cJSON_AddNumberToObject(e, "iteration", depth > 0 ? 0 : -1);
  cJSON_AddNumberToObject(e, "depth", depth);
  cJSON_AddStringToObject(e, "backend", "cpu");
  cJSON_AddNumberToObject(e, "start_ns", start);
  cJSON_AddNumberToObject(e, "end_ns", end);
  cJSON_AddNumberToObject(e, "dur_ns", end - start);
  cJSON_AddNullToObject(e, "gpu_ns");
  cJSON_AddNullToObject(e, "gpu_kernels");
  cJSON_AddItemToObject(e, "input_shapes", shape_list(1, dims, 2));
  cJSON_AddItemToObject(e, "output_shapes", shape_list(1, dims, 2));
  cJSON_AddNullToObject(e, "symbolic_shapes");
  cJSON_AddNumberToObject(e, "fresh_bytes", 0);
  cJSON_AddNumberToObject(e, "reused_bytes", 0);
  cJSON_AddNumberToObject(e, "live_bytes", live);
  cJSON_AddItemToArray(events, e);
}

static void add_buffer(cJSON *buffers, int id, const char *tensor, double bytes, int first,
                       int last, int reused_from)
{
  cJSON *b = cJSON_CreateObject();
  cJSON_AddNumberToObject(b, "id", id);
  cJSON_AddStringToObject(b, "tensor", tensor);
  cJSON_AddNumberToObject(b, "bytes", bytes);
  cJSON_AddNumberToObject(b, "first_event", first);
  cJSON_AddNumberToObject(b, "last_event", last);
  if (reused_from >= 0)
    cJSON_AddNumberToObject(b, "reused_from", reused_from);
  else
    cJSON_AddNullToObject(b, "reused_from");
  cJSON_AddItemToArray(buffers, b);
}

static void add_agg(cJSON *table, const char *name, int count, double total, double max)
{
  static const int dims[] = {1, 3, 224, 224};
  cJSON *a = cJSON_CreateObject();
  cJSON_AddStringToObject(a, "name", name);
  cJSON_AddNumberToObject(a, "count", count);
  cJSON_AddNumberToObject(a, "total_ns", total);
  cJSON_AddNumberToObject(a, "mean_ns", total / count);
  cJSON_AddNumberToObject(a, "p50_ns", total / count);
  cJSON_AddNumberToObject(a, "p95_ns", max);
  cJSON_AddNumberToObject(a, "max_ns", max);
  cJSON_AddNumberToObject(a, "max_event", 0);
  cJSON_AddItemToObject(a, "max_input_shapes", shape_list(1, dims, 4));
  cJSON_AddItemToArray(table, a);
}

/* A report with no events, buffers or aggregates: what every test builds on. */
static cJSON *empty_report(void)
{
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "schema", "dynscope-profile");
  cJSON_AddNumberToObject(r, "version", 1);
  cJSON *model = cJSON_AddObjectToObject(r, "model");
  cJSON_AddStringToObject(model, "path", "/models/loop-symbol.json");
  cJSON_AddStringToObject(model, "name", "loop");
  cJSON_AddStringToObject(model, "format", "mxnet-json");
  cJSON_AddNumberToObject(model, "nodes", 5);
  cJSON_AddNumberToObject(model, "op_nodes", 3);
  cJSON_AddStringToObject(model, "executor", "dynamic");
  cJSON_AddArrayToObject(model, "partition");
  cJSON *machine = cJSON_AddObjectToObject(r, "machine");
  cJSON_AddStringToObject(machine, "host", "box");
  cJSON_AddStringToObject(machine, "os", "Linux 6.1");
  cJSON_AddStringToObject(machine, "cpu", "Some CPU");
  cJSON_AddNumberToObject(machine, "cpus", 2);
  cJSON_AddNumberToObject(machine, "memory_bytes", 8589934592.0);
  cJSON *build = cJSON_AddObjectToObject(r, "build");
  cJSON_AddStringToObject(build, "version", "0.1.0");
  cJSON_AddStringToObject(build, "compiler", "gcc 12.2");
  cJSON_AddFalseToObject(build, "cuda");
  cJSON_AddStringToObject(build, "blas", "openblas");
  cJSON *run = cJSON_AddObjectToObject(r, "run");
  cJSON_AddStringToObject(run, "started", "2024-05-01T12:00:00Z");
  cJSON_AddNumberToObject(run, "repeat", 1);
  cJSON_AddNumberToObject(run, "threads", 1);
  cJSON_AddArrayToObject(run, "wall_ns");
  cJSON_AddNumberToObject(run, "profiler_overhead_ns", 0);
  cJSON_AddObjectToObject(r, "bindings");
  cJSON_AddArrayToObject(r, "inputs");
  cJSON_AddArrayToObject(r, "events");
  cJSON_AddArrayToObject(r, "buffers");
  cJSON *memory = cJSON_AddObjectToObject(r, "memory");
  cJSON_AddNumberToObject(memory, "peak_live_bytes", 0);
  cJSON_AddNullToObject(memory, "planned_peak_bytes");
  cJSON_AddNumberToObject(memory, "fresh_bytes", 0);
  cJSON_AddNumberToObject(memory, "reused_bytes", 0);
  cJSON *aggregates = cJSON_AddObjectToObject(r, "aggregates");
  cJSON_AddArrayToObject(aggregates, "by_op");
  cJSON_AddArrayToObject(aggregates, "by_node");
  cJSON_AddArrayToObject(aggregates, "by_region");
  cJSON_AddArrayToObject(aggregates, "by_body");
  cJSON_AddArrayToObject(aggregates, "by_iteration");
  return r;
}

/* fc1, then while0 whose body runs the badly named node twice; fc1's output buffer is reused by
 * the body's first output. The ops are listed out of order: the page sorts them. */
static cJSON *small_report(void)
{
  cJSON *r = empty_report();
  cJSON *run = cJSON_GetObjectItem(r, "run");
  cJSON_AddItemToArray(cJSON_GetObjectItem(run, "wall_ns"), cJSON_CreateNumber(10000));
  cJSON_ReplaceItemInObject(run, "profiler_overhead_ns", cJSON_CreateNumber(500));
  cJSON *bindings = cJSON_GetObjectItem(r, "bindings");
  cJSON_AddNumberToObject(bindings, "s0", 4);
  cJSON_AddNumberToObject(bindings, "u0", 16);
  cJSON *input = cJSON_CreateObject();
  cJSON_AddStringToObject(input, "name", "data");
  cJSON_AddStringToObject(input, "dtype", "float32");
  static const int data_shape[] = {4, 16};
  cJSON_AddItemToObject(input, "shape", cJSON_CreateIntArray(data_shape, 2));
  cJSON_AddItemToArray(cJSON_GetObjectItem(r, "inputs"), input);

  cJSON *events = cJSON_GetObjectItem(r, "events");
  /* As the profiler records them: a loop's event comes after its body's, which it spans. */
  add_event(events, 0, "fc1", "fc1", "FullyConnected", NULL, 0, 0, 1000, 256);
  add_event(events, 1, "while0/iter0/" EVIL_NODE, "while0/" EVIL_NODE, "relu", "while0/func", 1,
            1100, 4000, 512);
  add_event(events, 2, "while0/iter1/" EVIL_NODE, "while0/" EVIL_NODE, "relu", "while0/func", 1,
            4100, 8900, 384);
  add_event(events, 3, "while0", "while0", "_while_loop", NULL, 0, 1000, 9000, 128);
  cJSON *buffers = cJSON_GetObjectItem(r, "buffers");
  add_buffer(buffers, 0, "fc1_output", 256, 0, 1, -1);
  add_buffer(buffers, 1, "while0/iter0/" EVIL_NODE "_output", 256, 1, 2, 0);

  cJSON *memory = cJSON_GetObjectItem(r, "memory");
  cJSON_ReplaceItemInObject(memory, "peak_live_bytes", cJSON_CreateNumber(512));
  cJSON_ReplaceItemInObject(memory, "fresh_bytes", cJSON_CreateNumber(256));
  cJSON_ReplaceItemInObject(memory, "reused_bytes", cJSON_CreateNumber(256));
  cJSON *aggregates = cJSON_GetObjectItem(r, "aggregates");
  cJSON *by_op = cJSON_GetObjectItem(aggregates, "by_op");
  add_agg(by_op, "FullyConnected", 1, 1000, 1000);
  add_agg(by_op, "_while_loop", 1, 8000, 8000);
  add_agg(by_op, "relu", 2, 7700, 4800);
  cJSON *by_node = cJSON_GetObjectItem(aggregates, "by_node");
  add_agg(by_node, "while0", 1, 8000, 8000);
  add_agg(by_node, "while0/" EVIL_NODE, 2, 7700, 4800);
  add_agg(by_node, "fc1", 1, 1000, 1000);
  add_agg(cJSON_GetObjectItem(aggregates, "by_body"), "while0/func", 2, 7700, 4800);
  return r;
}

static char *page_path(const char *name)
{
  return g_build_filename(tmp_dir, name, NULL);
}

/* `json` read back as the profiler's reports are. */
static DsReport *read_report(const cJSON *json)
{
  GError *error = NULL;
  DsReport *report = ds_report_from_json(json, "report", &error);
  g_assert_no_error(error);
  g_assert_nonnull(report);
  return report;
}

/* Writes `json`'s page and returns it. */
static char *write_page(const cJSON *json, const char *svg, const char *name)
{
  g_autofree char *path = page_path(name);
  GError *error = NULL;
  g_autoptr(DsReport) report = read_report(json);
  g_assert_true(ds_report_write_html(report, svg, path, &error));
  g_assert_no_error(error);
  char *page = NULL;
  g_assert_true(g_file_get_contents(path, &page, NULL, NULL));
  g_assert_nonnull(page);
  return page;
}

static guint count(const char *haystack, const char *needle)
{
  guint n = 0;
  for (const char *p = strstr(haystack, needle); p != NULL; p = strstr(p + 1, needle))
    n++;
  return n;
}

/* The text of section `id`, from its tag to its end. Free with g_free(). */
static char *section(const char *page, const char *id)
{
  g_autofree char *tag = g_strdup_printf("<section id=\"%s\">", id);
  const char *start = strstr(page, tag);
  g_assert_nonnull(start);
  const char *end = strstr(start, "</section>");
  g_assert_nonnull(end);
  return g_strndup(start, end - start);
}

/* Nothing the browser would fetch. */
static void assert_self_contained(const char *page)
{
  g_assert_true(g_str_has_prefix(page, "<!DOCTYPE html>"));
  g_assert_null(strstr(page, "http://"));
  g_assert_null(strstr(page, "https://"));
  g_assert_null(strstr(page, "src="));
  g_assert_null(strstr(page, "<link"));
  g_assert_null(strstr(page, "url("));
  g_assert_null(strstr(page, "//"));
  g_assert_true(g_str_has_suffix(page, "</html>\n"));
}

static void assert_in_order(const char *text, const char *const *needles)
{
  const char *at = text;
  for (const char *const *n = needles; *n != NULL; n++) {
    const char *found = strstr(at, *n);
    if (found == NULL)
      g_error("'%s' is missing or out of order", *n);
    at = found + strlen(*n);
  }
}

static void test_small_report(void)
{
  g_autoptr(cJSON) report = small_report();
  g_autofree char *page = write_page(report, NULL, "small.html");
  assert_self_contained(page);
  g_assert_cmpuint(count(page, "<svg"), ==, 2);
  g_assert_nonnull(strstr(page, "@media (prefers-color-scheme: dark)"));

  /* The badly named node is text everywhere: tables, heat table, tooltips. */
  g_assert_null(strstr(page, "<script>alert"));
  g_assert_null(strstr(page, "</script>&x"));
  g_assert_cmpuint(count(page, EVIL_ESCAPED), ==, 3);
  g_assert_cmpuint(count(page, "<script>"), ==, 1); /* the page's own sorter */

  /* Header and run. */
  assert_in_order(page,
                  (const char *const[]){"<title>loop", "<h1>loop</h1>", "/models/loop-symbol.json",
                                        "dynamic executor", "2024-05-01T12:00:00Z", NULL});
  g_autofree char *run = section(page, "run");
  assert_in_order(run, (const char *const[]){"Wall time per run (median)", "10.0 µs",
                                             "Profiler overhead", "500 ns", "5.0%", NULL});
  assert_in_order(run, (const char *const[]){"Bindings", ">s0<", ">4<", ">u0<", ">16<", NULL});
  assert_in_order(run, (const char *const[]){"Inputs", ">data<", "float32", "(4, 16)", NULL});

  /* Top tables by total time, with readable units, shares and the slowest's shapes. */
  g_autofree char *by_op = section(page, "by-op");
  assert_in_order(by_op,
                  (const char *const[]){">_while_loop<", "8.00 µs", "80.0%", ">relu<", "7.70 µs",
                                        "3.85 µs", "4.80 µs", "77.0%", "(1, 3, 224, 224)",
                                        ">FullyConnected<", "1.00 µs", "10.0%", NULL});
  g_autofree char *by_node = section(page, "by-node");
  assert_in_order(by_node, (const char *const[]){">while0<", EVIL_ESCAPED, ">fc1<", NULL});
  g_autofree char *by_body = section(page, "by-body");
  g_assert_nonnull(strstr(by_body, ">while0/func<"));
  g_assert_null(strstr(page, "id=\"by-region\"")); /* empty: left out */

  /* Every node in the heat table, in the order they start (the loop before its body, whose
   * events come first), the body indented. */
  g_autofree char *graph = section(page, "graph");
  assert_in_order(
      graph, (const char *const[]){">fc1<", ">while0<", "padding-left:2rem", EVIL_ESCAPED, NULL});
  g_assert_cmpuint(count(graph, "hsl("), >=, 6);

  /* Memory: a step line from 0, the peak marked, no planned peak without a plan. */
  g_autofree char *memory = section(page, "memory");
  g_assert_nonnull(strstr(memory, "class=\"line\""));
  g_assert_nonnull(strstr(memory, "peak 512 B"));
  g_assert_null(strstr(memory, "planned-peak"));

  /* Buffers: the reusing buffer shares the fresh one's lane, in a chain colour. */
  g_autofree char *buffers = section(page, "buffers");
  g_assert_cmpuint(count(buffers, "<rect"), ==, 2);
  g_assert_cmpuint(count(buffers, "<rect class=\"fresh\""), ==, 1);
  g_assert_nonnull(strstr(buffers, "reuses the memory of fc1_output"));
  g_assert_nonnull(strstr(buffers, "(1 row in all)"));
  g_assert_nonnull(strstr(buffers, "fresh allocation"));

  g_autofree char *environment = section(page, "environment");
  assert_in_order(environment,
                  (const char *const[]){"Host", "box", "Memory", "8.00 GiB", "CUDA", "no", NULL});
}

static void test_planned_peak(void)
{
  g_autoptr(cJSON) report = small_report();
  cJSON_ReplaceItemInObject(cJSON_GetObjectItem(report, "memory"), "planned_peak_bytes",
                            cJSON_CreateNumber(1536));
  g_autofree char *page = write_page(report, NULL, "planned.html");
  g_autofree char *memory = section(page, "memory");
  g_assert_nonnull(strstr(memory, "<path class=\"planned-peak\" stroke-dasharray=\"6 4\""));
  g_assert_nonnull(strstr(memory, "planned peak 1.50 KiB"));
  g_assert_nonnull(strstr(memory, "swatch dashed"));
}

static void test_graph_svg(void)
{
  g_autoptr(cJSON) report = small_report();
  const char svg[] = "<?xml version=\"1.0\"?>\n<svg id=\"the-graph\" viewBox=\"0 0 10 10\">"
                     "<rect width=\"5\" height=\"5\"/></svg>";
  g_autofree char *page = write_page(report, svg, "graph.html");
  assert_self_contained(page);
  g_assert_cmpuint(count(page, "<svg"), ==, 3);
  g_assert_null(strstr(page, "<?xml"));
  g_autofree char *graph = section(page, "graph");
  assert_in_order(graph, (const char *const[]){"<svg id=\"the-graph\" viewBox=\"0 0 10 10\">"
                                               "<rect width=\"5\" height=\"5\"/></svg>",
                                               "<details>", ">fc1<", NULL});
}

static void test_empty_report(void)
{
  g_autoptr(cJSON) report = empty_report();
  g_autofree char *page = write_page(report, NULL, "empty.html");
  assert_self_contained(page);
  g_assert_cmpuint(count(page, "<svg"), ==, 0);
  g_assert_nonnull(strstr(page, "No events: no memory data."));
  g_assert_nonnull(strstr(page, "No buffers"));
  g_assert_nonnull(strstr(page, "No ops ran."));
  g_assert_nonnull(strstr(page, "No symbols bound"));
  g_assert_nonnull(strstr(page, "no runs recorded"));
}

static void test_missing_folder(void)
{
  g_autoptr(cJSON) json = small_report();
  g_autoptr(DsReport) report = read_report(json);
  g_autofree char *path = g_build_filename(tmp_dir, "no-such-folder", "page.html", NULL);
  GError *error = NULL;
  g_assert_false(ds_report_write_html(report, NULL, path, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_IO);
  g_assert_nonnull(strstr(error->message, path));
  g_error_free(error);
  g_assert_false(g_file_test(path, G_FILE_TEST_EXISTS));
  g_autofree char *folder = g_path_get_dirname(path);
  g_assert_false(g_file_test(folder, G_FILE_TEST_EXISTS));
}

/* 100k events with one spike, 1000 buffers in one chain: the chart keeps at most ~2000 steps and
 * the spike, the buffer chart 400 bars, and the page stays small. */
static void test_large_report(void)
{
  g_autoptr(cJSON) report = empty_report();
  cJSON *events = cJSON_GetObjectItem(report, "events");
  for (int i = 0; i < 100000; i++) {
    double live = i == 61234 ? 999.0 * 1048576 : 1048576.0 + (i % 100) * 1024;
    add_event(events, i, "n", "n", "relu", NULL, 0, i * 1000.0, i * 1000.0 + 900, live);
  }
  cJSON *buffers = cJSON_GetObjectItem(report, "buffers");
  for (int i = 0; i < 1000; i++)
    add_buffer(buffers, i, "n_output", 4096, i * 100, i * 100 + 100, i - 1);
  cJSON_AddItemToArray(cJSON_GetObjectItem(cJSON_GetObjectItem(report, "run"), "wall_ns"),
                       cJSON_CreateNumber(1e8));
  add_agg(cJSON_GetObjectItem(cJSON_GetObjectItem(report, "aggregates"), "by_op"), "relu", 100000,
          9e7, 900);

  g_autofree char *page = write_page(report, NULL, "large.html");
  assert_self_contained(page);
  g_assert_cmpuint(strlen(page), <, 400 * 1024);
  g_autofree char *memory = section(page, "memory");
  const char *line = strstr(memory, "<path class=\"line\"");
  g_assert_nonnull(line);
  g_autofree char *d = g_strndup(line, strchr(line, '>') - line);
  g_assert_cmpuint(count(d, "V"), <=, 2000);
  g_assert_cmpuint(count(d, "V"), >=, 1000);
  g_assert_nonnull(strstr(memory, "peak 999 MiB at 61.2 ms"));
  g_assert_nonnull(strstr(memory, "100000 events drawn as"));
  g_autofree char *buffer_section = section(page, "buffers");
  g_assert_cmpuint(count(buffer_section, "<rect"), ==, 400);
  g_assert_nonnull(strstr(buffer_section, "Showing the first 400 of 1000 buffers; 600 omitted."));
}

static void remove_tmp_dir(void)
{
  GDir *d = g_dir_open(tmp_dir, 0, NULL);
  for (const char *name = d != NULL ? g_dir_read_name(d) : NULL; name != NULL;
       name = g_dir_read_name(d)) {
    g_autofree char *path = g_build_filename(tmp_dir, name, NULL);
    g_remove(path);
  }
  if (d != NULL)
    g_dir_close(d);
  g_rmdir(tmp_dir);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("ds-report-html-XXXXXX", NULL);
  g_assert_nonnull(tmp_dir);
  g_test_add_func("/profiler/report-html/small", test_small_report);
  g_test_add_func("/profiler/report-html/planned-peak", test_planned_peak);
  g_test_add_func("/profiler/report-html/graph-svg", test_graph_svg);
  g_test_add_func("/profiler/report-html/empty", test_empty_report);
  g_test_add_func("/profiler/report-html/missing-folder", test_missing_folder);
  g_test_add_func("/profiler/report-html/large", test_large_report);
  int status = g_test_run();
  remove_tmp_dir();
  g_free(tmp_dir);
  return status;
}
