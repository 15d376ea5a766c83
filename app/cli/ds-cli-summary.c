/* ds-cli-summary.c: --summary FILE.json, a profile report read back as text. */
#include <stdio.h>
#include <string.h>

#include "ds-cli.h"
#include "ds-report-read.h"

#define TOP_ROWS 20

static double ms(double ns)
{
  return ns / 1e6;
}

static const char *plural(gint64 n)
{
  return n == 1 ? "" : "s";
}

static double count_of(const cJSON *object, const char *key)
{
  return (double)ds_report_get_int(object, key, 0);
}

static int by_total_desc(gconstpointer a, gconstpointer b)
{
  const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
  double tx = count_of(x, "total_ns"), ty = count_of(y, "total_ns");
  if (tx != ty)
    return tx > ty ? -1 : 1;
  return g_strcmp0(ds_report_get_string(x, "name", ""), ds_report_get_string(y, "name", ""));
}

/* The table's items, largest total first: the report sorts them, but a reader need not trust
 * that. */
static GPtrArray *sorted_items(const cJSON *list)
{
  GPtrArray *items = g_ptr_array_new();
  const cJSON *item;
  cJSON_ArrayForEach(item, list)
  {
    g_ptr_array_add(items, (gpointer)item);
  }
  g_ptr_array_sort(items, by_total_desc);
  return items;
}

/* What a share is a share of: the wall time of all runs, or, for a report without wall times,
 * the time of the model graph's own nodes (a loop's event already holds its body's). */
static double share_base_ns(const cJSON *report, const char **basis)
{
  const cJSON *run = cJSON_GetObjectItemCaseSensitive(report, "run");
  double total = 0;
  const cJSON *item;
  cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(run, "wall_ns"))
  {
    total += item->valuedouble;
  }
  *basis = "their wall time";
  if (total > 0)
    return total;
  *basis = "the time of the model graph's nodes";
  cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(report, "events"))
  {
    if (ds_report_get_int(item, "depth", 0) == 0)
      total += count_of(item, "dur_ns");
  }
  return total;
}

static char *format_share(double ns, double base)
{
  return base > 0 ? g_strdup_printf("%.1f%%", 100.0 * ns / base) : g_strdup("-");
}

/* One AGG table: `label` ("op", "node"...), the top rows, and the input shapes column where
 * the aggregate has them. */
static void print_aggregates(const cJSON *report, const char *table, const char *label,
                             gboolean with_shapes, double base)
{
  const cJSON *list = ds_report_aggregates(report, table);
  if (list == NULL || list->child == NULL)
    return;
  g_autoptr(GPtrArray) items = sorted_items(list);
  guint shown = MIN(items->len, TOP_ROWS);
  if (shown < items->len)
    printf("\nby %s (top %u of %u):\n", label, shown, items->len);
  else
    printf("\nby %s (%u):\n", label, items->len);
  const char *headers[] = {label,    "count",  "total ms", "mean µs",
                           "p50 µs", "p95 µs", "share",    "input shapes of the slowest"};
  g_autoptr(DsTextTable) text =
      ds_text_table_new(with_shapes ? 8 : 7, headers, with_shapes ? "lrrrrrrl" : "lrrrrrr");
  for (guint i = 0; i < shown; i++) {
    const cJSON *agg = g_ptr_array_index(items, i);
    double total = count_of(agg, "total_ns");
    char *cells[] = {
        g_strdup(ds_report_get_string(agg, "name", "?")),
        g_strdup_printf("%.0f", count_of(agg, "count")),
        g_strdup_printf("%.3f", ms(total)),
        g_strdup_printf("%.1f", count_of(agg, "mean_ns") / 1e3),
        g_strdup_printf("%.1f", count_of(agg, "p50_ns") / 1e3),
        g_strdup_printf("%.1f", count_of(agg, "p95_ns") / 1e3),
        format_share(total, base),
        with_shapes
            ? ds_report_format_shapes(cJSON_GetObjectItemCaseSensitive(agg, "max_input_shapes"))
            : NULL,
    };
    if (!with_shapes)
      g_free(cells[7]);
    ds_text_table_take_row(text, cells);
  }
  ds_text_table_print(text, "  ");
}

static void print_iterations(const cJSON *report, double base)
{
  const cJSON *list = ds_report_aggregates(report, "by_iteration");
  if (list == NULL || list->child == NULL)
    return;
  g_autoptr(GPtrArray) items = sorted_items(list);
  guint shown = MIN(items->len, TOP_ROWS);
  printf("\nper iteration (top %u of %u, slowest first):\n", shown, items->len);
  const char *headers[] = {"body", "iteration", "nodes", "total ms", "share"};
  g_autoptr(DsTextTable) text = ds_text_table_new(5, headers, "lrrrr");
  for (guint i = 0; i < shown; i++) {
    const cJSON *iter = g_ptr_array_index(items, i);
    double total = count_of(iter, "total_ns");
    char *cells[] = {
        g_strdup(ds_report_get_string(iter, "body", "?")),
        g_strdup_printf("%" G_GINT64_FORMAT, ds_report_get_int(iter, "iteration", -1)),
        g_strdup_printf("%.0f", count_of(iter, "count")),
        g_strdup_printf("%.3f", ms(total)),
        format_share(total, base),
    };
    ds_text_table_take_row(text, cells);
  }
  ds_text_table_print(text, "  ");
}

static void print_model(const cJSON *report)
{
  const cJSON *model = cJSON_GetObjectItemCaseSensitive(report, "model");
  gint64 nodes = ds_report_get_int(model, "nodes", 0);
  gint64 op_nodes = ds_report_get_int(model, "op_nodes", 0);
  printf("model: %s (%s, %s), %" G_GINT64_FORMAT " node%s, %" G_GINT64_FORMAT " op node%s\n",
         ds_report_get_string(model, "name", "?"), ds_report_get_string(model, "path", "?"),
         ds_report_get_string(model, "format", "?"), nodes, plural(nodes), op_nodes,
         plural(op_nodes));
  g_autoptr(GString) partition = g_string_new(NULL);
  const cJSON *region;
  cJSON_ArrayForEach(region, cJSON_GetObjectItemCaseSensitive(model, "partition"))
  {
    if (cJSON_IsString(region))
      g_string_append_printf(partition, "%s%s", partition->len ? ", " : "", region->valuestring);
  }
  printf("executor: %s%s%s\n", ds_report_get_string(model, "executor", "?"),
         partition->len ? "; saved partition: " : "", partition->str);
}

static void print_machine(const cJSON *report)
{
  const cJSON *machine = cJSON_GetObjectItemCaseSensitive(report, "machine");
  if (!cJSON_IsObject(machine))
    return;
  g_autofree char *memory = ds_report_format_bytes(ds_report_get_int(machine, "memory_bytes", 0));
  gint64 cpus = ds_report_get_int(machine, "cpus", 0);
  printf("machine: %s, %s, %s, %" G_GINT64_FORMAT " cpu%s, %s\n",
         ds_report_get_string(machine, "host", "?"), ds_report_get_string(machine, "os", "?"),
         ds_report_get_string(machine, "cpu", "?"), cpus, plural(cpus), memory);
}

static void print_runs(const cJSON *report)
{
  const cJSON *run = cJSON_GetObjectItemCaseSensitive(report, "run");
  gint64 repeat = ds_report_get_int(run, "repeat", 1);
  printf("runs: %" G_GINT64_FORMAT ", median wall %.3f ms", repeat,
         ms((double)ds_report_median_wall_ns(report)));
  gint64 threads = ds_report_get_int(run, "threads", 0);
  if (threads > 0)
    printf(", %" G_GINT64_FORMAT " thread%s", threads, plural(threads));
  gint64 overhead = ds_report_get_int(run, "profiler_overhead_ns", -1);
  if (overhead >= 0)
    printf(", profiler overhead %.3f ms", ms((double)overhead));
  const char *started = ds_report_get_string(run, "started", NULL);
  if (started != NULL)
    printf(", started %s", started);
  printf("\n");
}

static void print_memory(const cJSON *report)
{
  const cJSON *memory = cJSON_GetObjectItemCaseSensitive(report, "memory");
  if (!cJSON_IsObject(memory)) {
    printf("memory: not recorded\n");
    return;
  }
  g_autofree char *peak = ds_report_format_bytes(ds_report_get_int(memory, "peak_live_bytes", 0));
  gint64 planned_bytes = ds_report_get_int(memory, "planned_peak_bytes", -1);
  g_autofree char *planned =
      planned_bytes >= 0 ? ds_report_format_bytes(planned_bytes) : g_strdup("none (no plan)");
  g_autofree char *fresh = ds_report_format_bytes(ds_report_get_int(memory, "fresh_bytes", 0));
  g_autofree char *reused = ds_report_format_bytes(ds_report_get_int(memory, "reused_bytes", 0));
  printf("memory: peak live %s, planned peak %s; outputs in fresh memory %s, in reused %s\n", peak,
         planned, fresh, reused);
}

int ds_cli_summary(const DsCliOptions *options)
{
  if (options->remaining != NULL && options->remaining[0] != NULL) {
    g_printerr("dynscope: --summary takes one report file; unexpected '%s'\n",
               options->remaining[0]);
    return 2;
  }
  GError *error = NULL;
  g_autoptr(cJSON) report = ds_report_load(options->summary_path, &error);
  if (report == NULL)
    return ds_cli_fail(error);

  const cJSON *build = cJSON_GetObjectItemCaseSensitive(report, "build");
  printf("report: %s (written by dynscope %s)\n", options->summary_path,
         ds_report_get_string(build, "version", "?"));
  print_model(report);
  print_machine(report);
  print_runs(report);
  g_autofree char *bindings = ds_report_format_bindings(report);
  printf("bindings: %s\n", bindings);
  print_memory(report);

  const char *basis;
  double base = share_base_ns(report, &basis);
  gint64 repeat = ds_report_get_int(cJSON_GetObjectItemCaseSensitive(report, "run"), "repeat", 1);
  printf("\ntimes are over all %" G_GINT64_FORMAT " run%s; share is of %s\n", repeat,
         plural(repeat), basis);
  print_aggregates(report, "by_op", "op", TRUE, base);
  print_aggregates(report, "by_node", "node", TRUE, base);
  print_aggregates(report, "by_region", "region", FALSE, base);
  print_aggregates(report, "by_body", "body", FALSE, base);
  print_iterations(report, base);
  return 0;
}
