/* ds-cli-compare.c: --compare A.json B.json, two profile reports side by side.
 *
 * A is the baseline, B the newer run. Nodes are matched by event key (the path without
 * iterations), so a loop's body node is one row however many iterations either report ran.
 * Times are per-run means: a node's total over all its events divided by the report's repeat
 * count, so reports with different --repeat compare. Symbolic models may have run at other
 * sizes in B: node rows are grouped by their output shapes in A and in B, and a bindings line
 * says when the sizes differ, so a user can tell a slower kernel from a bigger tensor.
 */
#include <glib/gi18n.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ds-cli.h"
#include "ds-report-text.h"

#define TOP_ROWS 30
/* Distinct output shapes listed for a node whose shapes vary between iterations or runs. */
#define MAX_SHAPE_VARIANTS 3

/* One node key or op in one report. Strings point into the report. */
typedef struct {
  const char *op;
  double total_ns;   /* over all events */
  GPtrArray *shapes; /* distinct output shape strings (owned), at most MAX_SHAPE_VARIANTS + 1 */
} Stat;

typedef struct {
  const char *path;
  DsReport *report;
  double repeat;
  GHashTable *by_key; /* key -> Stat */
  GHashTable *by_op;  /* op -> Stat */
  double nodes_ns;    /* events of the model graph's own nodes (depth 0), all runs */
} Side;

typedef struct {
  const char *name;
  const char *op;
  const Stat *a, *b; /* NULL where the report lacks it */
  double delta_ms;
  char *bucket; /* the shape group: "(4, 64) -> (8, 64)" */
  guint order;  /* the group's rank, then the row's: for a stable grouped sort */
} Row;

static void stat_free(gpointer data)
{
  Stat *stat = data;
  if (stat->shapes != NULL)
    g_ptr_array_unref(stat->shapes);
  g_free(stat);
}

static Stat *stat_lookup(GHashTable *table, const char *name, const char *op)
{
  Stat *stat = g_hash_table_lookup(table, name);
  if (stat == NULL) {
    stat = g_new0(Stat, 1);
    stat->op = op;
    g_hash_table_insert(table, (gpointer)name, stat);
  }
  return stat;
}

static void stat_add_shapes(Stat *stat, const DsReportShapes *shapes)
{
  if (stat->shapes == NULL)
    stat->shapes = g_ptr_array_new_with_free_func(g_free);
  if (stat->shapes->len > MAX_SHAPE_VARIANTS)
    return;
  g_autofree char *text = ds_report_format_shapes(shapes);
  for (guint i = 0; i < stat->shapes->len; i++)
    if (strcmp(g_ptr_array_index(stat->shapes, i), text) == 0)
      return;
  g_ptr_array_add(stat->shapes, g_steal_pointer(&text));
}

/* "(4, 64)", or "(4, 64) | (5, 64) | ..." for a node whose shapes vary; "absent" for none. */
static char *stat_shapes(const Stat *stat)
{
  if (stat == NULL || stat->shapes == NULL)
    return g_strdup("absent");
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < MIN(stat->shapes->len, MAX_SHAPE_VARIANTS); i++)
    g_string_append_printf(out, "%s%s", i ? " | " : "",
                           (const char *)g_ptr_array_index(stat->shapes, i));
  if (stat->shapes->len > MAX_SHAPE_VARIANTS)
    g_string_append(out, " | ...");
  return g_string_free(out, FALSE);
}

static gboolean side_load(Side *side, const char *path, GError **error)
{
  side->path = path;
  side->report = ds_report_read_file(path, error);
  if (side->report == NULL)
    return FALSE;
  side->repeat = (double)side->report->run.repeat;
  side->by_key = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, stat_free);
  side->by_op = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, stat_free);
  for (guint i = 0; i < side->report->n_events; i++) {
    const DsReportEvent *event = &side->report->events[i];
    double dur = (double)event->dur_ns;
    Stat *node = stat_lookup(side->by_key, event->key, event->op);
    node->total_ns += dur;
    stat_add_shapes(node, event->output_shapes);
    stat_lookup(side->by_op, event->op, event->op)->total_ns += dur;
    if (event->depth == 0)
      side->nodes_ns += dur;
  }
  return TRUE;
}

static void side_clear(Side *side)
{
  g_clear_pointer(&side->by_key, g_hash_table_unref);
  g_clear_pointer(&side->by_op, g_hash_table_unref);
  g_clear_pointer(&side->report, ds_report_free);
}

static double per_run_ms(const Stat *stat, const Side *side)
{
  return stat != NULL ? stat->total_ns / side->repeat / 1e6 : 0.0;
}

static char *format_percent(double delta, double base)
{
  return base > 0 ? g_strdup_printf("%+.1f%%", 100.0 * delta / base) : g_strdup("-");
}

static void row_clear(gpointer data)
{
  g_free(((Row *)data)->bucket);
}

static int by_abs_delta(gconstpointer x, gconstpointer y)
{
  const Row *a = x, *b = y;
  double da = fabs(a->delta_ms), db = fabs(b->delta_ms);
  if (da != db)
    return da > db ? -1 : 1;
  return strcmp(a->name, b->name);
}

static int by_order(gconstpointer x, gconstpointer y)
{
  const Row *a = x, *b = y;
  return a->order < b->order ? -1 : a->order > b->order;
}

/* Rows for every name in either table, largest change first. */
static GArray *match_rows(GHashTable *in_a, const Side *a, GHashTable *in_b, const Side *b)
{
  GArray *rows = g_array_new(FALSE, TRUE, sizeof(Row));
  g_array_set_clear_func(rows, row_clear);
  GHashTableIter iter;
  gpointer name, value;
  g_hash_table_iter_init(&iter, in_a);
  while (g_hash_table_iter_next(&iter, &name, &value)) {
    const Stat *sb = g_hash_table_lookup(in_b, name);
    Row row = {name, sb != NULL ? sb->op : ((Stat *)value)->op, value, sb, 0, NULL, 0};
    g_array_append_val(rows, row);
  }
  g_hash_table_iter_init(&iter, in_b);
  while (g_hash_table_iter_next(&iter, &name, &value)) {
    if (g_hash_table_contains(in_a, name))
      continue;
    Row row = {name, ((Stat *)value)->op, NULL, value, 0, NULL, 0};
    g_array_append_val(rows, row);
  }
  for (guint i = 0; i < rows->len; i++) {
    Row *row = &g_array_index(rows, Row, i);
    row->delta_ms = per_run_ms(row->b, b) - per_run_ms(row->a, a);
  }
  g_array_sort(rows, by_abs_delta);
  return rows;
}

static char **row_cells(const Row *row, const Side *a, const Side *b, gboolean with_op)
{
  double a_ms = per_run_ms(row->a, a), b_ms = per_run_ms(row->b, b);
  char **cells = g_new0(char *, 8);
  guint n = 0;
  cells[n++] = g_strdup(row->name);
  if (with_op)
    cells[n++] = g_strdup(row->op);
  cells[n++] = row->a != NULL ? g_strdup_printf("%.3f", a_ms) : g_strdup("-");
  cells[n++] = row->b != NULL ? g_strdup_printf("%.3f", b_ms) : g_strdup("-");
  cells[n++] = g_strdup_printf("%+.3f", row->delta_ms);
  cells[n++] =
      row->a != NULL && row->b != NULL ? format_percent(row->delta_ms, a_ms) : g_strdup("-");
  cells[n++] = g_strdup(row->a == NULL ? "only in B" : row->b == NULL ? "only in A" : "");
  return cells;
}

static void print_omitted(guint total, guint shown)
{
  if (total > shown)
    printf("  ... %u more row%s with smaller changes omitted\n", total - shown,
           total - shown == 1 ? "" : "s");
}

static void count_sides(GArray *rows, guint *both, guint *only_a, guint *only_b)
{
  *both = *only_a = *only_b = 0;
  for (guint i = 0; i < rows->len; i++) {
    const Row *row = &g_array_index(rows, Row, i);
    if (row->a == NULL)
      (*only_b)++;
    else if (row->b == NULL)
      (*only_a)++;
    else
      (*both)++;
  }
}

static void print_ops(const Side *a, const Side *b)
{
  g_autoptr(GArray) rows = match_rows(a->by_op, a, b->by_op, b);
  guint both, only_a, only_b, shown = MIN(rows->len, TOP_ROWS);
  count_sides(rows, &both, &only_a, &only_b);
  printf("\nby op (per-run mean; %u in both, %u only in A, %u only in B):\n", both, only_a, only_b);
  const char *headers[] = {"op", "A ms", "B ms", "delta ms", "delta %", ""};
  g_autoptr(DsTextTable) table = ds_text_table_new(6, headers, "lrrrrl");
  for (guint i = 0; i < shown; i++) {
    char **cells = row_cells(&g_array_index(rows, Row, i), a, b, FALSE);
    ds_text_table_take_row(table, cells);
    g_free(cells);
  }
  ds_text_table_print(table, "  ");
  print_omitted(rows->len, shown);
}

/* The shape group of a node: its output shapes in A and B, one form when they agree. */
static char *row_bucket(const Row *row)
{
  g_autofree char *in_a = stat_shapes(row->a);
  g_autofree char *in_b = stat_shapes(row->b);
  if (strcmp(in_a, in_b) == 0)
    return g_strdup_printf("  shapes %s:", in_a);
  return g_strdup_printf("  shapes %s -> %s:", in_a, in_b);
}

/* Keeps the top rows and orders them by group, a group ranked by its largest change. */
static void group_rows(GArray *rows, guint shown)
{
  g_array_set_size(rows, shown);
  g_autoptr(GHashTable) rank = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < rows->len; i++) {
    Row *row = &g_array_index(rows, Row, i);
    row->bucket = row_bucket(row);
    if (!g_hash_table_contains(rank, row->bucket))
      g_hash_table_insert(rank, row->bucket, GUINT_TO_POINTER(g_hash_table_size(rank)));
    row->order = GPOINTER_TO_UINT(g_hash_table_lookup(rank, row->bucket)) * (TOP_ROWS + 1) + i;
  }
  g_array_sort(rows, by_order);
}

static void print_nodes(const Side *a, const Side *b)
{
  g_autoptr(GArray) rows = match_rows(a->by_key, a, b->by_key, b);
  guint both, only_a, only_b, total = rows->len, shown = MIN(rows->len, TOP_ROWS);
  count_sides(rows, &both, &only_a, &only_b);
  printf("\nby node (per-run mean, matched by key, grouped by output shapes A -> B; %u in "
         "both, %u only in A, %u only in B):\n",
         both, only_a, only_b);
  group_rows(rows, shown);
  const char *headers[] = {"node", "op", "A ms", "B ms", "delta ms", "delta %", ""};
  g_autoptr(DsTextTable) table = ds_text_table_new(7, headers, "llrrrrl");
  const char *bucket = NULL;
  for (guint i = 0; i < rows->len; i++) {
    const Row *row = &g_array_index(rows, Row, i);
    if (bucket == NULL || strcmp(bucket, row->bucket) != 0)
      ds_text_table_add_line(table, row->bucket);
    bucket = row->bucket;
    char **cells = row_cells(row, a, b, TRUE);
    ds_text_table_take_row(table, cells);
    g_free(cells);
  }
  ds_text_table_print(table, "    ");
  print_omitted(total, shown);
}

/* "s0 4 -> 8, s2 absent -> 3", or NULL when the bindings agree. */
static char *binding_changes(const Side *a, const Side *b)
{
  GString *out = g_string_new(NULL);
  gint64 other;
  for (guint i = 0; i < a->report->n_bindings; i++) {
    const DsReportBinding *item = &a->report->bindings[i];
    if (!ds_report_lookup_binding(b->report, item->name, &other))
      g_string_append_printf(out, "%s%s %" G_GINT64_FORMAT " -> absent", out->len ? ", " : "",
                             item->name, item->value);
    else if (other != item->value)
      g_string_append_printf(out, "%s%s %" G_GINT64_FORMAT " -> %" G_GINT64_FORMAT,
                             out->len ? ", " : "", item->name, item->value, other);
  }
  for (guint i = 0; i < b->report->n_bindings; i++) {
    const DsReportBinding *item = &b->report->bindings[i];
    if (!ds_report_lookup_binding(a->report, item->name, &other))
      g_string_append_printf(out, "%s%s absent -> %" G_GINT64_FORMAT, out->len ? ", " : "",
                             item->name, item->value);
  }
  if (out->len == 0) {
    g_string_free(out, TRUE);
    return NULL;
  }
  return g_string_free(out, FALSE);
}

static void print_side(const char *label, const Side *side)
{
  const DsReport *report = side->report;
  printf("%s: %s (model %s, %s executor, %.0f run%s, dynscope %s)\n", label, side->path,
         report->model.name, report->model.executor, side->repeat, side->repeat == 1 ? "" : "s",
         report->build.version != NULL ? report->build.version : "?");
}

/* The per-run total each side is judged by: the median wall time when both reports have one,
 * else the mean time of the model graph's own nodes (a loop's event holds its body's). */
static double side_total_ms(const Side *side, gboolean use_wall)
{
  if (use_wall)
    return (double)ds_report_median_wall_ns(side->report) / 1e6;
  return side->nodes_ns / side->repeat / 1e6;
}

static void print_header(const Side *a, const Side *b)
{
  print_side("A", a);
  print_side("B", b);
  const char *name_a = a->report->model.name;
  const char *name_b = b->report->model.name;
  if (strcmp(name_a, name_b) != 0)
    printf("models differ: %s -> %s; only nodes with the same key are matched\n", name_a, name_b);
  g_autofree char *bindings_a = ds_report_format_bindings(a->report);
  g_autofree char *bindings_b = ds_report_format_bindings(b->report);
  printf("bindings: A %s; B %s\n", bindings_a, bindings_b);
  g_autofree char *changes = binding_changes(a, b);
  if (changes != NULL)
    printf("bindings differ: %s; times compare different sizes\n", changes);
}

static gboolean parse_args(const DsCliOptions *options, const char **path_b)
{
  if (options->remaining == NULL || options->remaining[0] == NULL ||
      options->remaining[1] != NULL) {
    g_printerr("dynscope: --compare: expected two report files: A.json B.json\n");
    return FALSE;
  }
  *path_b = options->remaining[0];
  return TRUE;
}

int ds_cli_compare(const DsCliOptions *options)
{
  const char *path_b;
  if (!parse_args(options, &path_b))
    return 2;
  GError *error = NULL;
  Side a = {0}, b = {0};
  if (!side_load(&a, options->compare_path, &error) || !side_load(&b, path_b, &error)) {
    side_clear(&a);
    side_clear(&b);
    return ds_cli_fail(error);
  }

  print_header(&a, &b);
  gboolean use_wall =
      ds_report_median_wall_ns(a.report) > 0 && ds_report_median_wall_ns(b.report) > 0;
  double total_a = side_total_ms(&a, use_wall), total_b = side_total_ms(&b, use_wall);
  g_autofree char *percent = format_percent(total_b - total_a, total_a);
  printf("total per run (%s): A %.3f ms, B %.3f ms, delta %+.3f ms (%s)\n",
         use_wall ? "median wall" : "mean of the model graph's nodes", total_a, total_b,
         total_b - total_a, percent);
  print_ops(&a, &b);
  print_nodes(&a, &b);
  fflush(stdout);

  int status = 0;
  if (options->fail_if_slower >= 0 && total_b > total_a) {
    double slower = total_a > 0 ? 100.0 * (total_b - total_a) / total_a : INFINITY;
    if (slower > options->fail_if_slower) {
      if (isfinite(slower))
        g_printerr("dynscope: %s is %.1f%% slower than %s (limit %g%%)\n", path_b, slower,
                   options->compare_path, options->fail_if_slower);
      else
        g_printerr(_("dynscope: %s takes %.3f ms, %s none (limit %g%%)\n"), path_b, total_b,
                   options->compare_path, options->fail_if_slower);
      status = 1;
    }
  }
  side_clear(&a);
  side_clear(&b);
  return status;
}
