/* ds-cli-summary.c: --summary FILE.json, a profile report read back as text. */
#include <stdio.h>
#include <string.h>

#include "ds-cli.h"
#include "ds-report-text.h"

#define TOP_ROWS 20

static double ms(double ns)
{
  return ns / 1e6;
}

static const char *plural(gint64 n)
{
  return n == 1 ? "" : "s";
}

static int by_total_desc(gconstpointer a, gconstpointer b)
{
  const DsReportAgg *x = *(const DsReportAgg *const *)a, *y = *(const DsReportAgg *const *)b;
  if (x->total_ns != y->total_ns)
    return x->total_ns > y->total_ns ? -1 : 1;
  return g_strcmp0(x->name, y->name);
}

/* The table's rows, largest total first: the report sorts them, but a reader need not trust
 * that. */
static GPtrArray *sorted_aggs(const DsReportTable *table)
{
  GPtrArray *items = g_ptr_array_new();
  for (guint i = 0; i < table->n_rows; i++)
    g_ptr_array_add(items, (gpointer)&table->rows[i]);
  g_ptr_array_sort(items, by_total_desc);
  return items;
}

static int iteration_by_total_desc(gconstpointer a, gconstpointer b)
{
  const DsReportIteration *x = *(const DsReportIteration *const *)a;
  const DsReportIteration *y = *(const DsReportIteration *const *)b;
  if (x->total_ns != y->total_ns)
    return x->total_ns > y->total_ns ? -1 : 1;
  return 0;
}

/* What a share is a share of: the wall time of all runs, or, for a report without wall times,
 * the time of the model graph's own nodes (a loop's event already holds its body's). */
static double share_base_ns(const DsReport *report, const char **basis)
{
  double total = 0;
  for (guint i = 0; i < report->run.n_wall; i++)
    total += (double)report->run.wall_ns[i];
  *basis = "their wall time";
  if (total > 0)
    return total;
  *basis = "the time of the model graph's nodes";
  for (guint i = 0; i < report->n_events; i++) {
    if (report->events[i].depth == 0)
      total += (double)report->events[i].dur_ns;
  }
  return total;
}

static char *format_share(double ns, double base)
{
  return base > 0 ? g_strdup_printf("%.1f%%", 100.0 * ns / base) : g_strdup("-");
}

/* One AGG table: `label` ("op", "node"...), the top rows, and the input shapes column where
 * the aggregate has them. */
static void print_aggregates(const DsReportTable *table, const char *label, gboolean with_shapes,
                             double base)
{
  if (table->n_rows == 0)
    return;
  g_autoptr(GPtrArray) items = sorted_aggs(table);
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
    const DsReportAgg *agg = g_ptr_array_index(items, i);
    double total = (double)agg->total_ns;
    char *cells[] = {
        g_strdup(agg->name),
        g_strdup_printf("%" G_GINT64_FORMAT, agg->count),
        g_strdup_printf("%.3f", ms(total)),
        g_strdup_printf("%.1f", (double)agg->mean_ns / 1e3),
        g_strdup_printf("%.1f", (double)agg->p50_ns / 1e3),
        g_strdup_printf("%.1f", (double)agg->p95_ns / 1e3),
        format_share(total, base),
        with_shapes ? ds_report_format_shapes(agg->max_input_shapes) : NULL,
    };
    ds_text_table_take_row(text, cells);
  }
  ds_text_table_print(text, "  ");
}

static void print_iterations(const DsReport *report, double base)
{
  if (report->n_iterations == 0)
    return;
  g_autoptr(GPtrArray) items = g_ptr_array_new();
  for (guint i = 0; i < report->n_iterations; i++)
    g_ptr_array_add(items, (gpointer)&report->by_iteration[i]);
  g_ptr_array_sort(items, iteration_by_total_desc);
  guint shown = MIN(items->len, TOP_ROWS);
  printf("\nper iteration (top %u of %u, slowest first):\n", shown, items->len);
  const char *headers[] = {"body", "iteration", "nodes", "total ms", "share"};
  g_autoptr(DsTextTable) text = ds_text_table_new(5, headers, "lrrrr");
  for (guint i = 0; i < shown; i++) {
    const DsReportIteration *iter = g_ptr_array_index(items, i);
    double total = (double)iter->total_ns;
    char *cells[] = {
        g_strdup(iter->body),
        g_strdup_printf("%" G_GINT64_FORMAT, iter->iteration),
        g_strdup_printf("%" G_GINT64_FORMAT, iter->count),
        g_strdup_printf("%.3f", ms(total)),
        format_share(total, base),
    };
    ds_text_table_take_row(text, cells);
  }
  ds_text_table_print(text, "  ");
}

/* A field the report may lack, as the text shows it. */
static const char *or_unknown(const char *text)
{
  return text != NULL ? text : "?";
}

static gint64 or_zero(gint64 count)
{
  return count != DS_REPORT_NONE ? count : 0;
}

static void print_model(const DsReport *report)
{
  gint64 nodes = or_zero(report->model.nodes);
  gint64 op_nodes = or_zero(report->model.op_nodes);
  printf("model: %s (%s, %s), %" G_GINT64_FORMAT " node%s, %" G_GINT64_FORMAT " op node%s\n",
         report->model.name, report->model.path, or_unknown(report->model.format), nodes,
         plural(nodes), op_nodes, plural(op_nodes));
  g_autoptr(GString) partition = g_string_new(NULL);
  for (guint i = 0; i < report->model.n_partition; i++)
    g_string_append_printf(partition, "%s%s", partition->len ? ", " : "",
                           report->model.partition[i]);
  printf("executor: %s%s%s\n", report->model.executor, partition->len ? "; saved partition: " : "",
         partition->str);
}

static void print_machine(const DsReport *report)
{
  if (!report->has_machine)
    return;
  g_autofree char *memory = ds_report_format_bytes(or_zero(report->machine.memory_bytes));
  gint64 cpus = or_zero(report->machine.cpus);
  printf("machine: %s, %s, %s, %" G_GINT64_FORMAT " cpu%s, %s\n", or_unknown(report->machine.host),
         or_unknown(report->machine.os), or_unknown(report->machine.cpu), cpus, plural(cpus),
         memory);
}

static void print_runs(const DsReport *report)
{
  printf("runs: %" G_GINT64_FORMAT ", median wall %.3f ms", report->run.repeat,
         ms((double)ds_report_median_wall_ns(report)));
  gint64 threads = report->run.threads;
  if (threads > 0)
    printf(", %" G_GINT64_FORMAT " thread%s", threads, plural(threads));
  printf(", profiler overhead %.3f ms", ms((double)report->run.profiler_overhead_ns));
  printf(", started %s\n", report->run.started);
}

static void print_memory(const DsReport *report)
{
  if (!report->has_memory) {
    printf("memory: not recorded\n");
    return;
  }
  g_autofree char *peak = ds_report_format_bytes(report->memory.peak_live_bytes);
  gint64 planned_bytes = report->memory.planned_peak_bytes;
  g_autofree char *planned = planned_bytes != DS_REPORT_NONE ? ds_report_format_bytes(planned_bytes)
                                                             : g_strdup("none (no plan)");
  g_autofree char *fresh = ds_report_format_bytes(report->memory.fresh_bytes);
  g_autofree char *reused = ds_report_format_bytes(report->memory.reused_bytes);
  printf("memory: peak live %s, planned peak %s; outputs in fresh memory %s, in reused %s\n", peak,
         planned, fresh, reused);
  if (report->has_backward) {
    g_autofree char *fwd_peak = ds_report_format_bytes(report->backward.forward_peak_live_bytes);
    g_autofree char *bwd_peak = ds_report_format_bytes(report->backward.backward_peak_live_bytes);
    printf("backward: --recompute %s, %" G_GINT64_FORMAT " gradients; per run %.3f ms forward, "
           "%.3f ms backward; peak live %s in the forward pass, %s in the backward\n",
           report->backward.policy, report->backward.gradients,
           (double)report->backward.forward_ns / 1e6, (double)report->backward.backward_ns / 1e6,
           fwd_peak, bwd_peak);
  }
}

int ds_cli_summary(const DsCliOptions *options)
{
  if (options->remaining != NULL && options->remaining[0] != NULL) {
    g_printerr("dynscope: --summary takes one report file; unexpected '%s'\n",
               options->remaining[0]);
    return 2;
  }
  GError *error = NULL;
  g_autoptr(DsReport) report = ds_report_read_file(options->summary_path, &error);
  if (report == NULL)
    return ds_cli_fail(error);

  printf("report: %s (written by dynscope %s)\n", options->summary_path,
         or_unknown(report->build.version));
  print_model(report);
  print_machine(report);
  print_runs(report);
  g_autofree char *bindings = ds_report_format_bindings(report);
  printf("bindings: %s\n", bindings);
  print_memory(report);

  const char *basis;
  double base = share_base_ns(report, &basis);
  gint64 repeat = report->run.repeat;
  printf("\ntimes are over all %" G_GINT64_FORMAT " run%s; share is of %s\n", repeat,
         plural(repeat), basis);
  print_aggregates(&report->by_op, "op", TRUE, base);
  print_aggregates(&report->by_node, "node", TRUE, base);
  print_aggregates(&report->by_region, "region", FALSE, base);
  print_aggregates(&report->by_body, "body", FALSE, base);
  print_iterations(report, base);
  return 0;
}
