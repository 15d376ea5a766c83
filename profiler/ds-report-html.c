/* ds-report-html.c: the profile report as one HTML page, built whole in a string and written
 * at once. Each section is a static function appending to that string, in page order; the
 * report was checked when it was read (ds-report.c), so the sections never fail. */
#include "ds-report-html.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ds-error.h"
#include "ds-file.h"

enum {
  TOP_N = 20,               /* rows of the top tables */
  MAX_MEMORY_POINTS = 2000, /* steps of the memory chart: more are merged, keeping the max */
  MAX_BUFFERS = 400,        /* bars of the buffer chart: the first ones, in the report's order */
  CHART_WIDTH = 960,        /* SVG units; the charts scale to the page's width */
};

/* The sum of the runs' wall times: what "share" in the tables is a share of. */
static double total_wall_ns(const DsReport *report)
{
  double sum = 0;
  for (guint i = 0; i < report->run.n_wall; i++)
    sum += (double)MAX(report->run.wall_ns[i], 0);
  return sum;
}

static int compare_int64(const void *a, const void *b)
{
  gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
  return (x > y) - (x < y);
}

/* ---- text ---- */

/* Appends `text` escaped for HTML text and attribute values. Invalid UTF-8 is replaced and
 * control characters dropped: an odd node name shows as text and cannot break the page. */
static void append_escaped(GString *out, const char *text)
{
  if (text == NULL)
    return;
  g_autofree char *valid = NULL;
  if (!g_utf8_validate(text, -1, NULL))
    text = valid = g_utf8_make_valid(text, -1);
  for (const char *p = text; *p != '\0'; p++) {
    switch (*p) {
    case '&':
      g_string_append(out, "&amp;");
      break;
    case '<':
      g_string_append(out, "&lt;");
      break;
    case '>':
      g_string_append(out, "&gt;");
      break;
    case '"':
      g_string_append(out, "&quot;");
      break;
    case '\'':
      g_string_append(out, "&#39;");
      break;
    default:
      if ((guchar)*p >= 0x20 || *p == '\n' || *p == '\t')
        g_string_append_c(out, *p);
    }
  }
}

/* At most `max_chars` characters of `text`, escaped, for SVG labels. A long one keeps its end:
 * nested tensor paths share their start ("while0/iter0/..."). */
static void append_escaped_tail(GString *out, const char *text, glong max_chars)
{
  g_autofree char *valid = g_utf8_make_valid(text != NULL ? text : "", -1);
  glong length = g_utf8_strlen(valid, -1);
  if (length <= max_chars) {
    append_escaped(out, valid);
    return;
  }
  g_autofree char *cut = g_utf8_substring(valid, length - max_chars + 1, length);
  g_string_append(out, "…");
  append_escaped(out, cut);
}

/* Numbers in CSS and SVG need a '.' whatever the locale (the GUI sets LC_NUMERIC from the
 * user's), so every fraction goes through g_ascii_formatd. */
static void append_fixed(GString *out, double v, guint decimals)
{
  static const char *const formats[] = {"%.0f", "%.1f", "%.2f", "%.3f"};
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append(out, g_ascii_formatd(buf, sizeof buf, formats[MIN(decimals, 3u)], v));
}

/* Three significant digits for values from 1 to 999. */
static void append_3_digits(GString *out, double v)
{
  double magnitude = fabs(v);
  append_fixed(out, v, magnitude < 9.995 ? 2 : magnitude < 99.95 ? 1 : 0);
}

typedef struct {
  double scale;
  const char *name;
} Unit;

static const Unit time_units[] = {{1, "ns"}, {1e3, "µs"}, {1e6, "ms"}, {1e9, "s"}};
static const Unit byte_units[] = {
    {1, "B"}, {1024.0, "KiB"}, {1048576.0, "MiB"}, {1073741824.0, "GiB"}, {1099511627776.0, "TiB"},
};

/* The largest unit not bigger than `v`. */
static const Unit *pick_unit(const Unit *units, guint n_units, double v)
{
  guint u = 0;
  while (u + 1 < n_units && fabs(v) >= units[u + 1].scale)
    u++;
  return &units[u];
}

static void append_quantity(GString *out, double v, const Unit *units, guint n_units)
{
  const Unit *unit = pick_unit(units, n_units, v);
  if (unit == &units[0])
    append_fixed(out, v, 0);
  else
    append_3_digits(out, v / unit->scale);
  g_string_append_printf(out, " %s", unit->name);
}

static void append_ns(GString *out, double ns)
{
  append_quantity(out, ns, time_units, G_N_ELEMENTS(time_units));
}

static void append_bytes(GString *out, double bytes)
{
  append_quantity(out, bytes, byte_units, G_N_ELEMENTS(byte_units));
}

static void append_percent(GString *out, double fraction)
{
  append_fixed(out, 100 * fraction, 1);
  g_string_append_c(out, '%');
}

/* "(1, 3, 224, 224)"; "()" for a scalar. */
static void append_shape(GString *out, const DsReportShape *shape)
{
  g_string_append_c(out, '(');
  for (guint d = 0; d < shape->n_dims; d++)
    g_string_append_printf(out, "%s%" G_GINT64_FORMAT, d > 0 ? ", " : "", shape->dims[d]);
  g_string_append_c(out, ')');
}

/* "(4, 64), (4)", or a dash for none. */
static void append_shapes(GString *out, const DsReportShapes *shapes)
{
  if (shapes == NULL || shapes->n_shapes == 0) {
    g_string_append(out, "—");
    return;
  }
  for (guint i = 0; i < shapes->n_shapes; i++) {
    if (i > 0)
      g_string_append(out, ", ");
    append_shape(out, &shapes->shapes[i]);
  }
}

/* What a null or absent value reads as. */
static void append_not_recorded(GString *out)
{
  g_string_append(out, "<span class=\"muted\">not recorded</span>");
}

/* A string that may be NULL (null in the report). */
static void append_text_or_not_recorded(GString *out, const char *text)
{
  if (text == NULL)
    append_not_recorded(out);
  else
    append_escaped(out, text);
}

static void append_nodata(GString *out, const char *text)
{
  g_string_append_printf(out, "<p class=\"nodata\">%s</p>\n", text);
}

/* ---- the page's frame ---- */

static const char page_style[] =
    ":root {\n"
    "  color-scheme: light dark;\n"
    "  --bg: #ffffff; --fg: #1f2328; --muted: #59636e; --line: #d8dee4; --head: #f6f8fa;\n"
    "  --accent: #0969da; --accent-soft: rgba(9, 105, 218, 0.14); --bar-bg: #e6eaef;\n"
    "  --fresh: #8c959f; --planned: #cf222e; --peak: #8250df;\n"
    "}\n"
    "@media (prefers-color-scheme: dark) {\n"
    "  :root {\n"
    "    --bg: #0d1117; --fg: #e6edf3; --muted: #9198a1; --line: #30363d; --head: #161b22;\n"
    "    --accent: #4493f8; --accent-soft: rgba(68, 147, 248, 0.2); --bar-bg: #262c36;\n"
    "    --fresh: #6e7681; --planned: #f85149; --peak: #ab7df8;\n"
    "  }\n"
    "}\n"
    "* { box-sizing: border-box; }\n"
    "body { margin: 0 auto; max-width: 1240px; padding: 1.5rem 1.25rem 4rem;\n"
    "  background: var(--bg); color: var(--fg);\n"
    "  font: 15px/1.5 system-ui, -apple-system, \"Segoe UI\", Roboto, \"Helvetica Neue\",\n"
    "    \"Noto Sans\", \"Liberation Sans\", Arial, sans-serif; }\n"
    "code, .mono, td.name { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas,\n"
    "  \"Liberation Mono\", monospace; font-size: 0.86em; }\n"
    "header .kicker { margin: 0; color: var(--muted); font-size: 0.8rem; letter-spacing: 0.08em;\n"
    "  text-transform: uppercase; }\n"
    "h1 { font-size: 1.8rem; margin: 0.1rem 0 0.3rem; overflow-wrap: anywhere; }\n"
    "h2 { font-size: 1.3rem; margin: 2.6rem 0 0.8rem; padding-bottom: 0.3rem;\n"
    "  border-bottom: 1px solid var(--line); }\n"
    "h3 { font-size: 1rem; margin: 1.4rem 0 0.5rem; }\n"
    ".sub { margin: 0; color: var(--muted); overflow-wrap: anywhere; }\n"
    ".muted, .note, figcaption { color: var(--muted); }\n"
    ".note { font-size: 0.88rem; margin: 0.4rem 0; }\n"
    ".nodata { color: var(--muted); font-style: italic; }\n"
    "nav { margin: 1rem 0 0; display: flex; flex-wrap: wrap; gap: 0.3rem 1.1rem; }\n"
    "nav a, a { color: var(--accent); text-decoration: none; }\n"
    "nav a:hover { text-decoration: underline; }\n"
    ".cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(210px, 1fr));\n"
    "  gap: 0.75rem; }\n"
    ".card { border: 1px solid var(--line); border-radius: 8px; padding: 0.6rem 0.85rem; }\n"
    ".card .k { color: var(--muted); font-size: 0.82rem; }\n"
    ".card .v { font-size: 1.3rem; font-weight: 600; font-variant-numeric: tabular-nums; }\n"
    ".card .d { color: var(--muted); font-size: 0.8rem; }\n"
    ".columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(340px, 1fr));\n"
    "  gap: 0 2rem; }\n"
    ".scroll { overflow: auto; max-height: 78vh; border: 1px solid var(--line);\n"
    "  border-radius: 8px; }\n"
    "table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }\n"
    "th, td { padding: 0.32rem 0.65rem; border-bottom: 1px solid var(--line); text-align: left;\n"
    "  vertical-align: top; }\n"
    "tbody tr:last-child td { border-bottom: none; }\n"
    "th { position: sticky; top: 0; z-index: 1; background: var(--head); font-weight: 600;\n"
    "  white-space: nowrap; }\n"
    "tbody tr:hover { background: var(--head); }\n"
    "th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; "
    "}\n"
    "td.name { overflow-wrap: anywhere; min-width: 15rem; }\n"
    "td.shapes { color: var(--muted); font-size: 0.82rem; min-width: 9rem; max-width: 24rem; }\n"
    "table.kv th { position: static; width: 40%; background: none; font-weight: 500;\n"
    "  color: var(--muted); }\n"
    "table.sortable th { cursor: pointer; user-select: none; }\n"
    "table.sortable th[data-dir=desc]::after { content: \" \\25BE\"; }\n"
    "table.sortable th[data-dir=asc]::after { content: \" \\25B4\"; }\n"
    ".share { display: flex; align-items: center; gap: 0.45rem; min-width: 10rem; }\n"
    ".share .pct { width: 3.6rem; text-align: right; }\n"
    ".bar { flex: 1; height: 0.6rem; background: var(--bar-bg); border-radius: 3px;\n"
    "  overflow: hidden; }\n"
    ".bar > span { display: block; height: 100%; background: var(--accent); }\n"
    ".heat { width: 1.6rem; padding: 0; }\n"
    ".heat span, .swatch { display: inline-block; width: 0.9rem; height: 0.9rem;\n"
    "  border-radius: 3px; vertical-align: -0.12rem; }\n"
    ".heat span { margin: 0.35rem 0 0 0.45rem; }\n"
    ".legend { display: flex; flex-wrap: wrap; align-items: center; gap: 0.4rem 1.3rem;\n"
    "  font-size: 0.85rem; color: var(--muted); margin: 0.5rem 0; }\n"
    ".legend .swatch { margin-right: 0.35rem; }\n"
    ".swatch.line { height: 0; border-top: 2px solid var(--accent); border-radius: 0; }\n"
    ".swatch.dashed { height: 0; border-top: 2px dashed var(--planned); border-radius: 0; }\n"
    ".swatch.dot { background: var(--peak); border-radius: 50%; width: 0.6rem; height: 0.6rem; }\n"
    ".swatch.fresh { background: var(--fresh); }\n"
    ".heat-scale { display: inline-block; width: 9rem; height: 0.8rem; border-radius: 3px;\n"
    "  vertical-align: -0.12rem; margin: 0 0.4rem;\n"
    "  background: linear-gradient(to right, hsl(55, 90%, 78%), hsl(28, 87%, 60%),\n"
    "    hsl(0, 80%, 42%)); }\n"
    "figure { margin: 0; }\n"
    "figure.graph { overflow: auto; border: 1px solid var(--line); border-radius: 8px;\n"
    "  padding: 0.5rem; background: #ffffff; }\n"
    "svg.chart { display: block; width: 100%; height: auto; }\n"
    ".chart text { fill: var(--muted); font-size: 11px; font-family: inherit; }\n"
    ".chart .grid { stroke: var(--line); stroke-width: 1; }\n"
    ".chart .axis { stroke: var(--muted); stroke-width: 1; }\n"
    ".chart .area { fill: var(--accent-soft); }\n"
    ".chart .line { fill: none; stroke: var(--accent); stroke-width: 1.5; }\n"
    ".chart .planned-peak { stroke: var(--planned); stroke-width: 1.5; }\n"
    ".chart text.planned-label { fill: var(--planned); }\n"
    ".chart .peak { fill: var(--peak); }\n"
    ".chart text.peak-label { fill: var(--peak); font-weight: 600; }\n"
    ".chart .fresh { fill: var(--fresh); }\n"
    ".chart rect:hover { stroke: var(--fg); stroke-width: 1; }\n"
    "details summary { cursor: pointer; color: var(--accent); margin: 0.8rem 0 0.4rem; }\n";

/* Sorts a table by the clicked column: numbers by their data-v, text by its text. */
static const char page_script[] =
    "<script>\n"
    "for (const th of document.querySelectorAll('table.sortable th')) {\n"
    "  th.title = 'Sort by this column';\n"
    "  th.addEventListener('click', () => {\n"
    "    const body = th.closest('table').tBodies[0];\n"
    "    const i = th.cellIndex;\n"
    "    const numeric = body.rows.length > 0 && body.rows[0].cells[i].dataset.v !== undefined;\n"
    "    const desc = th.dataset.dir ? th.dataset.dir === 'asc' : numeric;\n"
    "    for (const other of th.parentNode.cells) delete other.dataset.dir;\n"
    "    th.dataset.dir = desc ? 'desc' : 'asc';\n"
    "    const key = (row) => {\n"
    "      const cell = row.cells[i];\n"
    "      return cell.dataset.v !== undefined ? Number(cell.dataset.v) : cell.textContent;\n"
    "    };\n"
    "    const rows = Array.from(body.rows).sort((a, b) => {\n"
    "      const x = key(a), y = key(b);\n"
    "      const d = typeof x === 'number' ? x - y : x.localeCompare(y);\n"
    "      return desc ? -d : d;\n"
    "    });\n"
    "    body.append(...rows);\n"
    "  });\n"
    "}\n"
    "</script>\n";

static void append_head(GString *out, const DsReport *report)
{
  g_string_append(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
                       "<meta name=\"color-scheme\" content=\"light dark\">\n"
                       "<meta name=\"generator\" content=\"dynscope\">\n<title>");
  append_escaped(out, report->model.name);
  g_string_append(out, " — dynscope profile</title>\n<style>\n");
  g_string_append(out, page_style);
  g_string_append(out, "</style>\n</head>\n<body>\n");
}

static void append_header(GString *out, const DsReport *report, gboolean has_regions,
                          gboolean has_bodies)
{
  g_string_append(out, "<header>\n<p class=\"kicker\">dynscope profile</p>\n<h1>");
  append_escaped(out, report->model.name);
  g_string_append(out, "</h1>\n<p class=\"sub\"><code>");
  append_escaped(out, report->model.path);
  g_string_append(out, "</code>");
  if (report->model.format != NULL) {
    g_string_append(out, " · ");
    append_escaped(out, report->model.format);
  }
  if (report->model.nodes != DS_REPORT_NONE)
    g_string_append_printf(out, " · %" G_GINT64_FORMAT " nodes", report->model.nodes);
  if (report->model.op_nodes != DS_REPORT_NONE)
    g_string_append_printf(out, " (%" G_GINT64_FORMAT " ops)", report->model.op_nodes);
  g_string_append(out, " · ");
  append_escaped(out, report->model.executor);
  g_string_append(out, " executor</p>\n<p class=\"sub\">Started <time datetime=\"");
  append_escaped(out, report->run.started);
  g_string_append(out, "\">");
  append_escaped(out, report->run.started);
  g_string_append(out, "</time>");
  if (report->model.n_partition > 0) {
    g_string_append(out, " · partition regions: ");
    for (guint i = 0; i < report->model.n_partition; i++) {
      if (i > 0)
        g_string_append(out, ", ");
      append_escaped(out, report->model.partition[i]);
    }
  }
  g_string_append(out, "</p>\n</header>\n<nav>\n<a href=\"#run\">Run</a>\n"
                       "<a href=\"#by-node\">By node</a>\n<a href=\"#by-op\">By op</a>\n");
  if (has_regions)
    g_string_append(out, "<a href=\"#by-region\">By region</a>\n");
  if (has_bodies)
    g_string_append(out, "<a href=\"#by-body\">By loop body</a>\n");
  g_string_append(out, "<a href=\"#graph\">Nodes by time</a>\n<a href=\"#memory\">Memory</a>\n"
                       "<a href=\"#buffers\">Buffer reuse</a>\n"
                       "<a href=\"#environment\">Machine and build</a>\n</nav>\n");
}

/* ---- the run ---- */

static void card_begin(GString *out, const char *title)
{
  g_string_append_printf(out, "<div class=\"card\"><div class=\"k\">%s</div><div class=\"v\">",
                         title);
}

static void card_end(GString *out, const char *detail)
{
  g_string_append(out, "</div>");
  if (detail != NULL)
    g_string_append_printf(out, "<div class=\"d\">%s</div>", detail);
  g_string_append(out, "</div>\n");
}

/* Median, min and max of the runs' wall times; the upper median for an even count, as --run
 * prints it. */
static void append_wall_card(GString *out, const DsReport *report)
{
  guint n = report->run.n_wall;
  card_begin(out, "Wall time per run (median)");
  if (n == 0) {
    g_string_append(out, "—");
    card_end(out, "no runs recorded");
    return;
  }
  g_autofree gint64 *sorted = g_memdup2(report->run.wall_ns, n * sizeof(gint64));
  qsort(sorted, n, sizeof *sorted, compare_int64);
  append_ns(out, (double)sorted[n / 2]);
  g_autoptr(GString) detail = g_string_new(NULL);
  if (n > 1) {
    g_string_append(detail, "min ");
    append_ns(detail, (double)sorted[0]);
    g_string_append(detail, ", max ");
    append_ns(detail, (double)sorted[n - 1]);
    g_string_append_printf(detail, " over %u runs", n);
  } else {
    g_string_append(detail, "one run");
  }
  card_end(out, detail->str);
}

static void append_run(GString *out, const DsReport *report)
{
  g_string_append(out, "<section id=\"run\">\n<h2>Run</h2>\n<div class=\"cards\">\n");
  card_begin(out, "Runs");
  g_string_append_printf(out, "%" G_GINT64_FORMAT, report->run.repeat);
  card_end(out, "repeat");
  card_begin(out, "Threads");
  g_string_append_printf(out, "%" G_GINT64_FORMAT, report->run.threads);
  card_end(out, "per run");
  append_wall_card(out, report);

  double overhead = (double)report->run.profiler_overhead_ns;
  double wall = total_wall_ns(report);
  card_begin(out, "Profiler overhead");
  append_ns(out, overhead);
  g_autoptr(GString) detail = g_string_new("in its hooks, all runs");
  if (wall > 0) {
    g_string_append(detail, " (");
    append_percent(detail, overhead / wall);
    g_string_append(detail, " of wall time)");
  }
  card_end(out, detail->str);

  card_begin(out, "Events");
  g_string_append_printf(out, "%u", report->n_events);
  g_autofree char *buffers = g_strdup_printf("executed nodes; %u buffers", report->n_buffers);
  card_end(out, buffers);
  card_begin(out, "Peak live memory");
  append_bytes(out, (double)report->memory.peak_live_bytes);
  g_string_truncate(detail, 0);
  if (report->memory.planned_peak_bytes != DS_REPORT_NONE) {
    g_string_append(detail, "planned peak ");
    append_bytes(detail, (double)report->memory.planned_peak_bytes);
  } else {
    g_string_append(detail, "no planned peak (dynamic shapes)");
  }
  card_end(out, detail->str);
  card_begin(out, "Fresh bytes");
  append_bytes(out, (double)report->memory.fresh_bytes);
  g_string_truncate(detail, 0);
  append_bytes(detail, (double)report->memory.reused_bytes);
  g_string_append(detail, " more placed in reused memory");
  card_end(out, detail->str);
  g_string_append(out, "</div>\n");
}

static void append_bindings(GString *out, const DsReport *report)
{
  g_string_append(out, "<div>\n<h3>Bindings</h3>\n");
  if (report->n_bindings == 0) {
    append_nodata(out, "No symbols bound: every shape is static.");
    g_string_append(out, "</div>\n");
    return;
  }
  g_string_append(out, "<div class=\"scroll\"><table class=\"sortable\">\n<thead><tr>"
                       "<th>Symbol</th><th class=\"num\">Value</th></tr></thead>\n<tbody>\n");
  for (guint i = 0; i < report->n_bindings; i++) {
    const DsReportBinding *binding = &report->bindings[i];
    g_string_append(out, "<tr><td class=\"name\">");
    append_escaped(out, binding->name);
    g_string_append_printf(out,
                           "</td><td class=\"num\" data-v=\"%" G_GINT64_FORMAT
                           "\">%" G_GINT64_FORMAT "</td></tr>\n",
                           binding->value, binding->value);
  }
  g_string_append(out, "</tbody></table></div>\n</div>\n");
}

static void append_inputs(GString *out, const DsReport *report)
{
  g_string_append(out, "<div>\n<h3>Inputs</h3>\n");
  if (report->n_inputs == 0) {
    append_nodata(out, "No inputs recorded.");
    g_string_append(out, "</div>\n");
    return;
  }
  g_string_append(out, "<div class=\"scroll\"><table>\n<thead><tr><th>Name</th><th>Type</th>"
                       "<th>Shape</th></tr></thead>\n<tbody>\n");
  for (guint i = 0; i < report->n_inputs; i++) {
    const DsReportInput *input = &report->inputs[i];
    g_string_append(out, "<tr><td class=\"name\">");
    append_escaped(out, input->name);
    g_string_append(out, "</td><td>");
    append_text_or_not_recorded(out, input->dtype);
    g_string_append(out, "</td><td class=\"mono\">");
    if (input->shape != NULL)
      append_shape(out, input->shape);
    else
      append_not_recorded(out);
    g_string_append(out, "</td></tr>\n");
  }
  g_string_append(out, "</tbody></table></div>\n</div>\n");
}

/* A two-column table's frame around `rows` (<tr> elements), or "Not recorded." */
static void append_kv_table(GString *out, const char *title, gboolean recorded, const char *rows)
{
  g_string_append_printf(out, "<div>\n<h3>%s</h3>\n", title);
  if (!recorded)
    append_nodata(out, "Not recorded.");
  else
    g_string_append_printf(out, "<table class=\"kv\"><tbody>\n%s</tbody></table>\n", rows);
  g_string_append(out, "</div>\n");
}

static void kv_row_begin(GString *rows, const char *label)
{
  g_string_append_printf(rows, "<tr><th>%s</th><td>", label);
}

/* Rows only for the fields present: an empty or absent object is "Not recorded." */
static void kv_text(GString *rows, const char *label, const char *text)
{
  if (text == NULL)
    return;
  kv_row_begin(rows, label);
  append_text_or_not_recorded(rows, text);
  g_string_append(rows, "</td></tr>\n");
}

/* `count` of `bytes` (else a plain integer). */
static void kv_count(GString *rows, const char *label, gint64 count, gboolean bytes)
{
  if (count == DS_REPORT_NONE)
    return;
  kv_row_begin(rows, label);
  if (bytes)
    append_bytes(rows, (double)count);
  else
    g_string_append_printf(rows, "%" G_GINT64_FORMAT, count);
  g_string_append(rows, "</td></tr>\n");
}

static void append_environment(GString *out, const DsReport *report)
{
  g_string_append(out, "<section id=\"environment\">\n<h2>Machine and build</h2>\n"
                       "<div class=\"columns\">\n");
  g_autoptr(GString) rows = g_string_new(NULL);
  kv_text(rows, "Host", report->machine.host);
  kv_text(rows, "System", report->machine.os);
  kv_text(rows, "CPU", report->machine.cpu);
  kv_count(rows, "CPUs", report->machine.cpus, FALSE);
  kv_count(rows, "Memory", report->machine.memory_bytes, TRUE);
  append_kv_table(out, "Machine", rows->len > 0, rows->str);
  g_string_truncate(rows, 0);
  kv_text(rows, "dynscope", report->build.version);
  kv_text(rows, "Compiler", report->build.compiler);
  kv_text(rows, "CUDA", report->build.cuda < 0 ? NULL : report->build.cuda ? "yes" : "no");
  kv_text(rows, "BLAS", report->build.blas);
  append_kv_table(out, "Build", rows->len > 0, rows->str);
  g_string_append(out, "</div>\n</section>\n");
}

/* ---- aggregate tables ---- */

typedef struct {
  const DsReportAgg *row;
  guint index;
} Row;

/* By total time, largest first; the report's order among equals. */
static int compare_rows(const void *a, const void *b)
{
  const Row *x = a, *y = b;
  gint64 tx = x->row->total_ns, ty = y->row->total_ns;
  if (tx != ty)
    return tx > ty ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* The rows of an aggregates table sorted by total time: the schema says they are, but the
 * page must not depend on it. Free with g_free(); `n_rows` is set. */
static Row *sorted_rows(const DsReportTable *table, guint *n_rows)
{
  guint n = table->n_rows;
  Row *rows = g_new(Row, n + 1);
  for (guint i = 0; i < n; i++)
    rows[i] = (Row){.row = &table->rows[i], .index = i};
  qsort(rows, n, sizeof *rows, compare_rows);
  *n_rows = n;
  return rows;
}

/* A cell with a duration, sortable by its ns. */
static void append_ns_cell(GString *out, gint64 ns)
{
  g_string_append_printf(out, "<td class=\"num\" data-v=\"%" G_GINT64_FORMAT "\">", ns);
  append_ns(out, (double)ns);
  g_string_append(out, "</td>");
}

/* A share bar and its percentage; `colour` (a CSS colour) overrides the accent. */
static void append_share_cell(GString *out, double fraction, const char *colour)
{
  fraction = CLAMP(fraction, 0, 1);
  g_string_append(out, "<td class=\"num\" data-v=\"");
  append_fixed(out, fraction, 3);
  g_string_append(out, "\"><div class=\"share\"><span class=\"bar\"><span style=\"width:");
  append_fixed(out, 100 * fraction, 1);
  g_string_append_printf(out, "%%%s%s\"></span></span><span class=\"pct\">",
                         colour != NULL ? ";background:" : "", colour != NULL ? colour : "");
  append_percent(out, fraction);
  g_string_append(out, "</span></div></td>");
}

/* The top rows of one aggregates table, or a note when it is empty. `denominator` is what the
 * share column is a share of (ns). */
static void append_aggregate(GString *out, const DsReportTable *table, const char *id,
                             const char *title, const char *name_header, const char *empty,
                             double denominator)
{
  g_string_append_printf(out, "<section id=\"%s\">\n<h2>%s</h2>\n", id, title);
  guint n_rows = 0;
  g_autofree Row *rows = sorted_rows(table, &n_rows);
  if (n_rows == 0) {
    append_nodata(out, empty);
    g_string_append(out, "</section>\n");
    return;
  }
  if (denominator <= 0) {
    for (guint i = 0; i < n_rows; i++)
      denominator += (double)MAX(rows[i].row->total_ns, 0);
  }
  guint shown = MIN(n_rows, (guint)TOP_N);
  g_string_append_printf(out,
                         "<p class=\"note\">%s%u of %u by total time. Share is of the runs' "
                         "wall time; a control-flow node's time includes the nodes inside "
                         "it.</p>\n",
                         shown < n_rows ? "Top " : "All ", shown, n_rows);
  g_string_append_printf(
      out,
      "<div class=\"scroll\"><table class=\"sortable\">\n<thead><tr><th class=\"num\">#</th>"
      "<th>%s</th><th class=\"num\">Count</th><th class=\"num\">Total</th>"
      "<th class=\"num\">Mean</th><th class=\"num\">p50</th><th class=\"num\">p95</th>"
      "<th class=\"num\">Max</th><th>Share</th><th>Input shapes of the slowest</th></tr>"
      "</thead>\n<tbody>\n",
      name_header);
  for (guint i = 0; i < shown; i++) {
    const DsReportAgg *row = rows[i].row;
    g_string_append_printf(out, "<tr><td class=\"num\" data-v=\"%u\">%u</td><td class=\"name\">",
                           i + 1, i + 1);
    append_escaped(out, row->name);
    g_string_append_printf(
        out, "</td><td class=\"num\" data-v=\"%" G_GINT64_FORMAT "\">%" G_GINT64_FORMAT "</td>",
        row->count, row->count);
    append_ns_cell(out, row->total_ns);
    append_ns_cell(out, row->mean_ns);
    append_ns_cell(out, row->p50_ns);
    append_ns_cell(out, row->p95_ns);
    append_ns_cell(out, row->max_ns);
    append_share_cell(out, (double)row->total_ns / denominator, NULL);
    g_string_append(out, "<td class=\"shapes mono\">");
    append_shapes(out, row->max_input_shapes);
    g_string_append(out, "</td></tr>\n");
  }
  g_string_append(out, "</tbody></table></div>\n</section>\n");
}

/* ---- nodes coloured by time ---- */

/* The heat colour for a node taking `fraction` of the slowest node's time: pale yellow to
 * deep red. The square root spreads the many small nodes over more of the ramp. */
static void append_heat_colour(GString *out, double fraction)
{
  double t = sqrt(CLAMP(fraction, 0, 1));
  g_string_append(out, "hsl(");
  append_fixed(out, 55 * (1 - t), 0);
  g_string_append(out, ", ");
  append_fixed(out, 90 - 10 * t, 0);
  g_string_append(out, "%, ");
  append_fixed(out, 78 - 36 * t, 0);
  g_string_append(out, "%)");
}

/* Where a node key first ran. The table follows start times, not event order: a loop's event
 * may come after its body's, but it starts first. */
typedef struct {
  gint64 start_ns; /* its earliest start */
  gint64 depth;    /* frames entered, for the indent */
} KeyPlace;

typedef struct {
  const DsReportAgg *row;
  KeyPlace place;
  guint index; /* in by_node: ties keep the report's order */
} HeatRow;

static int compare_heat_rows(const void *a, const void *b)
{
  const HeatRow *x = a, *y = b;
  if (x->place.start_ns != y->place.start_ns)
    return x->place.start_ns < y->place.start_ns ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* Every node key, in the order it first started (indented by frame depth), with its time as a
 * bar in its heat colour. */
static void append_heat_table(GString *out, const DsReport *report, double denominator)
{
  const DsReportTable *by_node = &report->by_node;
  guint n = by_node->n_rows;
  if (n == 0) {
    append_nodata(out, "No nodes ran.");
    return;
  }
  /* Keys are borrowed from the report, which outlives the table. */
  g_autoptr(GHashTable) places = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
  for (guint e = 0; e < report->n_events; e++) {
    const DsReportEvent *event = &report->events[e];
    KeyPlace *place = g_hash_table_lookup(places, event->key);
    if (place == NULL) {
      place = g_new(KeyPlace, 1);
      place->start_ns = G_MAXINT64;
      place->depth = MIN(event->depth, 12);
      g_hash_table_insert(places, (gpointer)event->key, place);
    }
    place->start_ns = MIN(place->start_ns, event->start_ns);
  }
  g_autofree HeatRow *rows = g_new(HeatRow, n);
  double max_ns = 1;
  for (guint i = 0; i < n; i++) {
    const DsReportAgg *row = &by_node->rows[i];
    const KeyPlace *place = g_hash_table_lookup(places, row->name);
    rows[i].row = row;
    rows[i].index = i;
    /* Keys that never ran as an event go last. */
    rows[i].place = place != NULL ? *place : (KeyPlace){.start_ns = G_MAXINT64, .depth = 0};
    max_ns = MAX(max_ns, (double)row->total_ns);
  }
  qsort(rows, n, sizeof *rows, compare_heat_rows);

  g_string_append(out, "<div class=\"legend\"><span>Colour: time relative to the slowest "
                       "node</span><span>least<span class=\"heat-scale\"></span>most</span>"
                       "</div>\n");
  g_string_append(out, "<div class=\"scroll\"><table class=\"sortable\">\n<thead><tr>"
                       "<th class=\"heat\"></th><th>Node</th><th class=\"num\">Count</th>"
                       "<th class=\"num\">Total</th><th>Share</th></tr></thead>\n<tbody>\n");
  g_autoptr(GString) colour = g_string_new(NULL);
  for (guint i = 0; i < n; i++) {
    const DsReportAgg *r = rows[i].row;
    double total = (double)r->total_ns;
    g_string_truncate(colour, 0);
    append_heat_colour(colour, total / max_ns);
    g_string_append_printf(out,
                           "<tr><td class=\"heat\" data-v=\"%u\"><span style=\"background:%s\">"
                           "</span></td><td class=\"name\"",
                           n - i, colour->str);
    if (rows[i].place.depth > 0)
      g_string_append_printf(out, " style=\"padding-left:%" G_GINT64_FORMAT "rem\"",
                             rows[i].place.depth + 1);
    g_string_append(out, ">");
    append_escaped(out, r->name);
    g_string_append_printf(
        out, "</td><td class=\"num\" data-v=\"%" G_GINT64_FORMAT "\">%" G_GINT64_FORMAT "</td>",
        r->count, r->count);
    append_ns_cell(out, r->total_ns);
    append_share_cell(out, denominator > 0 ? total / denominator : 0, colour->str);
    g_string_append(out, "</tr>\n");
  }
  g_string_append(out, "</tbody></table></div>\n");
}

static void append_graph(GString *out, const DsReport *report, const char *graph_svg,
                         double denominator)
{
  g_string_append(out, "<section id=\"graph\">\n<h2>Nodes coloured by time</h2>\n");
  if (graph_svg == NULL) {
    append_heat_table(out, report, denominator);
  } else {
    /* Graphviz writes an XML prolog and a DOCTYPE before the element: not HTML. */
    const char *svg = strstr(graph_svg, "<svg");
    g_string_append(out, "<figure class=\"graph\">\n");
    g_string_append(out, svg != NULL ? svg : graph_svg);
    g_string_append(out, "\n</figure>\n<details>\n<summary>Every node as a table</summary>\n");
    append_heat_table(out, report, denominator);
    g_string_append(out, "</details>\n");
  }
  g_string_append(out, "</section>\n");
}

/* ---- charts ---- */

/* The plot area of a chart, in SVG units. */
typedef struct {
  double left, top, width, height;
} Plot;

typedef struct {
  double min, max;  /* the range shown, in data units (ns, bytes, events) */
  double step;      /* between ticks, in data units */
  const Unit *unit; /* of the tick labels; NULL for plain counts */
} Axis;

/* A round step (1, 2 or 5 times a power of ten) cutting `range` into about `parts`. */
static double nice_step(double range, double parts)
{
  if (!(range > 0))
    return 1;
  double raw = range / parts;
  double magnitude = pow(10, floor(log10(raw)));
  double f = raw / magnitude;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * magnitude;
}

/* An axis over [min, max] with ticks in the unit that suits the range; `round_up` extends max
 * to the next tick (the value axis), `integral` keeps steps whole (event indices). */
static Axis make_axis(double min, double max, const Unit *units, guint n_units, gboolean round_up,
                      gboolean integral)
{
  Axis axis = {.min = min, .max = MAX(max, min + 1)};
  axis.unit = units != NULL ? pick_unit(units, n_units, axis.max - axis.min) : NULL;
  double scale = axis.unit != NULL ? axis.unit->scale : 1;
  /* The value axis is short (260 units); the time and event axes are wide (850). */
  double parts = round_up ? 5 : 9;
  axis.step = nice_step((axis.max - axis.min) / scale, parts) * scale;
  if (integral)
    axis.step = MAX(axis.step, 1);
  if (round_up)
    axis.max = axis.min + ceil((axis.max - axis.min) / axis.step) * axis.step;
  return axis;
}

static double axis_map(const Axis *axis, double v, double from, double length)
{
  return from + (v - axis->min) / (axis->max - axis->min) * length;
}

static void append_tick_label(GString *out, const Axis *axis, double v)
{
  if (axis->unit == NULL || v == 0) {
    append_fixed(out, v, 0);
    return;
  }
  double step = axis->step / axis->unit->scale;
  append_fixed(out, v / axis->unit->scale, step >= 0.999 ? 0 : step >= 0.0999 ? 1 : 2);
  g_string_append_printf(out, " %s", axis->unit->name);
}

static void append_point(GString *out, const char *command, double x, double y)
{
  g_string_append(out, command);
  append_fixed(out, x, 1);
  g_string_append_c(out, ',');
  append_fixed(out, y, 1);
}

/* Vertical grid lines, tick labels and a title under the plot. */
static void append_x_axis(GString *out, const Plot *plot, const Axis *axis, const char *title)
{
  double bottom = plot->top + plot->height;
  for (double k = ceil(axis->min / axis->step); k * axis->step <= axis->max + 1e-9 * axis->step;
       k++) {
    double v = k * axis->step;
    double x = axis_map(axis, v, plot->left, plot->width);
    append_point(out, "<path class=\"grid\" d=\"M", x, plot->top);
    append_point(out, "L", x, bottom);
    g_string_append(out, "\"/><text text-anchor=\"middle\" x=\"");
    append_fixed(out, x, 1);
    g_string_append_printf(out, "\" y=\"%d\">", (int)bottom + 16);
    append_tick_label(out, axis, v);
    g_string_append(out, "</text>\n");
  }
  append_point(out, "<path class=\"axis\" d=\"M", plot->left, bottom);
  append_point(out, "L", plot->left + plot->width, bottom);
  g_string_append(out, "\"/>\n<text text-anchor=\"middle\" x=\"");
  append_fixed(out, plot->left + plot->width / 2, 1);
  g_string_append_printf(out, "\" y=\"%d\">%s</text>\n", (int)bottom + 34, title);
}

/* Horizontal grid lines and tick labels left of the plot. */
static void append_y_axis(GString *out, const Plot *plot, const Axis *axis)
{
  double bottom = plot->top + plot->height;
  for (double k = ceil(axis->min / axis->step); k * axis->step <= axis->max + 1e-9 * axis->step;
       k++) {
    double v = k * axis->step;
    double y = bottom - (v - axis->min) / (axis->max - axis->min) * plot->height;
    append_point(out, "<path class=\"grid\" d=\"M", plot->left, y);
    append_point(out, "L", plot->left + plot->width, y);
    g_string_append(out, "\"/><text text-anchor=\"end\" dy=\"0.32em\" x=\"");
    append_fixed(out, plot->left - 8, 1);
    g_string_append(out, "\" y=\"");
    append_fixed(out, y, 1);
    g_string_append(out, "\">");
    append_tick_label(out, axis, v);
    g_string_append(out, "</text>\n");
  }
  append_point(out, "<path class=\"axis\" d=\"M", plot->left, plot->top);
  append_point(out, "L", plot->left, bottom);
  g_string_append(out, "\"/>\n");
}

static void append_svg_open(GString *out, int height, const char *label)
{
  g_string_append_printf(out,
                         "<svg class=\"chart\" viewBox=\"0 0 %d %d\" role=\"img\" "
                         "aria-label=\"%s\">\n",
                         CHART_WIDTH, height, label);
}

/* ---- memory over time ---- */

typedef struct {
  gint64 t;     /* the event's end, ns */
  gint64 bytes; /* live after it */
  guint index;  /* in events: ties keep execution order */
} MemoryPoint;

static int compare_memory_points(const void *a, const void *b)
{
  const MemoryPoint *x = a, *y = b;
  if (x->t != y->t)
    return x->t < y->t ? -1 : 1;
  return (x->index > y->index) - (x->index < y->index);
}

/* Merges points falling in the same of `MAX_MEMORY_POINTS` equal time slices into one at the
 * slice's first time with the slice's largest value, so the peak survives. Returns the new
 * count. */
static guint downsample(MemoryPoint *points, guint n, gint64 t0, gint64 t1)
{
  if (n <= MAX_MEMORY_POINTS)
    return n;
  double span = (double)MAX(t1 - t0, 1);
  guint kept = 0;
  gint64 last_slice = -1;
  for (guint i = 0; i < n; i++) {
    gint64 slice = (gint64)((double)(points[i].t - t0) / span * MAX_MEMORY_POINTS);
    slice = CLAMP(slice, 0, MAX_MEMORY_POINTS - 1);
    if (kept > 0 && slice == last_slice) {
      points[kept - 1].bytes = MAX(points[kept - 1].bytes, points[i].bytes);
    } else {
      points[kept++] = points[i];
      last_slice = slice;
    }
  }
  return kept;
}

/* A step line of the live bytes after each event over time (events' ends), the planned peak as
 * a dashed line and the peak marked. */
static void append_memory(GString *out, const DsReport *report)
{
  g_string_append(out, "<section id=\"memory\">\n<h2>Memory over time</h2>\n");
  guint n = report->n_events;
  if (n == 0) {
    append_nodata(out, "No events: no memory data.");
    g_string_append(out, "</section>\n");
    return;
  }
  g_autofree MemoryPoint *points = g_new(MemoryPoint, n);
  gint64 t0 = G_MAXINT64, t1 = G_MININT64;
  guint i;
  for (i = 0; i < n; i++) {
    const DsReportEvent *event = &report->events[i];
    points[i] = (MemoryPoint){.t = event->end_ns, .bytes = event->live_bytes, .index = i};
    t0 = MIN(t0, MIN(event->start_ns, points[i].t));
    t1 = MAX(t1, points[i].t);
  }
  qsort(points, n, sizeof *points, compare_memory_points);
  guint kept = downsample(points, n, t0, t1);
  guint peak = 0;
  for (i = 1; i < kept; i++) {
    if (points[i].bytes > points[peak].bytes)
      peak = i;
  }
  gboolean planned = report->memory.planned_peak_bytes != DS_REPORT_NONE;
  double planned_bytes = planned ? (double)report->memory.planned_peak_bytes : 0;

  Plot plot = {.left = 78, .top = 22, .width = CHART_WIDTH - 78 - 24, .height = 260};
  Axis x = make_axis((double)t0, (double)t1, time_units, G_N_ELEMENTS(time_units), FALSE, FALSE);
  Axis y = make_axis(0, MAX((double)points[peak].bytes, planned_bytes) * 1.05, byte_units,
                     G_N_ELEMENTS(byte_units), TRUE, FALSE);
  double bottom = plot.top + plot.height;
#define X(t) axis_map(&x, (double)(t), plot.left, plot.width)
#define Y(b) (bottom - axis_map(&y, (double)(b), 0, plot.height))

  append_svg_open(out, (int)bottom + 44, "Live memory over time");
  append_y_axis(out, &plot, &y);
  append_x_axis(out, &plot, &x, "time since the first run started");
  /* Nothing is live before the first event; each event's value holds until the next. */
  g_autoptr(GString) line = g_string_new(NULL);
  append_point(line, "M", X(t0), Y(0));
  for (i = 0; i < kept; i++) {
    g_string_append_c(line, 'H');
    append_fixed(line, X(points[i].t), 1);
    g_string_append_c(line, 'V');
    append_fixed(line, Y(points[i].bytes), 1);
  }
  g_string_append_c(line, 'H');
  append_fixed(line, X(t1), 1);
  g_string_append_printf(out, "<path class=\"area\" d=\"%sV", line->str);
  append_fixed(out, Y(0), 1);
  g_string_append_printf(out, "Z\"/>\n<path class=\"line\" d=\"%s\"/>\n", line->str);

  if (planned) {
    append_point(out, "<path class=\"planned-peak\" stroke-dasharray=\"6 4\" d=\"M", X(t0),
                 Y(planned_bytes));
    append_point(out, "L", X(t1), Y(planned_bytes));
    g_string_append(out, "\"/>\n<text class=\"planned-label\" text-anchor=\"end\" x=\"");
    append_fixed(out, X(t1) - 4, 1);
    g_string_append(out, "\" y=\"");
    append_fixed(out, Y(planned_bytes) - 5, 1);
    g_string_append(out, "\">planned peak ");
    append_bytes(out, planned_bytes);
    g_string_append(out, "</text>\n");
  }
  double px = X(points[peak].t), py = Y(points[peak].bytes);
  g_string_append(out, "<circle class=\"peak\" r=\"4\" cx=\"");
  append_fixed(out, px, 1);
  g_string_append(out, "\" cy=\"");
  append_fixed(out, py, 1);
  /* Left of the marker in the right half, so the label stays inside the chart. */
  gboolean right_half = px > plot.left + plot.width / 2;
  g_string_append_printf(out, "\"/>\n<text class=\"peak-label\" text-anchor=\"%s\" x=\"",
                         right_half ? "end" : "start");
  append_fixed(out, px + (right_half ? -8 : 8), 1);
  g_string_append(out, "\" y=\"");
  append_fixed(out, MAX(py - 6, plot.top + 10), 1);
  g_string_append(out, "\">peak ");
  append_bytes(out, (double)points[peak].bytes);
  g_string_append(out, " at ");
  append_ns(out, (double)points[peak].t);
  g_string_append(out, "</text>\n</svg>\n");
#undef X
#undef Y

  g_string_append(out, "<div class=\"legend\"><span><span class=\"swatch line\"></span>live "
                       "intermediate bytes after each event</span><span><span class=\"swatch "
                       "dot\"></span>peak</span>");
  if (planned)
    g_string_append(out, "<span><span class=\"swatch dashed\"></span>planned peak (the static "
                         "plan)</span>");
  g_string_append(out, "</div>\n");
  if (kept < n)
    g_string_append_printf(out,
                           "<p class=\"note\">%u events drawn as %u steps: each step is the "
                           "largest value in its time slice.</p>\n",
                           n, kept);
  g_string_append(out, "</section>\n");
}

/* ---- buffer reuse ---- */

typedef struct {
  guint chain;   /* the fresh buffer that started the chain of reuse drawn in this lane */
  guint created; /* keeps a chain's lanes in the order they were opened */
  gint64 end;    /* last event of the lane's last bar */
} Lane;

static int compare_lanes(const void *a, const void *b)
{
  const Lane *x = a, *y = b;
  if (x->chain != y->chain)
    return x->chain < y->chain ? -1 : 1;
  return (x->created > y->created) - (x->created < y->created);
}

/* The golden angle spreads neighbouring chains' hues apart. */
static guint chain_hue(guint chain)
{
  return (guint)((chain * 137.508) + 200) % 360;
}

/* One bar per buffer over the events it lives through. A buffer that took over another's memory
 * goes in that buffer's lane, so a lane is one piece of memory and its bars the chain of
 * tensors that held it: fresh allocations grey, reuses in the chain's hue. */
static void append_buffers(GString *out, const DsReport *report)
{
  g_string_append(out, "<section id=\"buffers\">\n<h2>Buffer reuse</h2>\n");
  guint n_all = report->n_buffers;
  if (n_all == 0) {
    append_nodata(out, "No buffers: no intermediate outputs were recorded.");
    g_string_append(out, "</section>\n");
    return;
  }
  guint n = MIN(n_all, (guint)MAX_BUFFERS);
  g_autofree guint *chain = g_new(guint, n);
  g_autofree guint *lane_of = g_new(guint, n);
  g_autoptr(GArray) lanes = g_array_new(FALSE, FALSE, sizeof(Lane));
  gint64 e0 = G_MAXINT64, e1 = G_MININT64;
  const DsReportBuffer *buffers = report->buffers;
  guint i;
  for (i = 0; i < n; i++) {
    gint64 first = buffers[i].first_event;
    gint64 last = MAX(buffers[i].last_event, first);
    e0 = MIN(e0, first);
    e1 = MAX(e1, last + 1);
    /* Ids are indices; one that is not earlier (odd input) counts as fresh, so chains end. */
    gint64 from = buffers[i].reused_from;
    gboolean reused = from >= 0 && from < i;
    chain[i] = reused ? chain[from] : i;
    guint lane = G_MAXUINT;
    if (reused && g_array_index(lanes, Lane, lane_of[from]).end <= first)
      lane = lane_of[from];
    for (guint l = 0; lane == G_MAXUINT && l < lanes->len; l++) {
      const Lane *candidate = &g_array_index(lanes, Lane, l);
      if (reused && candidate->chain == chain[i] && candidate->end <= first)
        lane = l;
    }
    /* Two buffers alive at once in one chain (a split reuse) need a second lane. */
    if (lane == G_MAXUINT) {
      Lane fresh = {.chain = chain[i], .created = lanes->len, .end = last};
      g_array_append_val(lanes, fresh);
      lane = lanes->len - 1;
    }
    g_array_index(lanes, Lane, lane).end = last;
    lane_of[i] = lane;
  }
  /* Rows: lanes grouped by chain, chains in the order they started. */
  guint n_lanes = lanes->len;
  g_autofree Lane *sorted = g_memdup2(lanes->data, sizeof(Lane) * n_lanes);
  qsort(sorted, n_lanes, sizeof *sorted, compare_lanes);
  g_autofree guint *row_of = g_new(guint, n_lanes);
  for (guint r = 0; r < n_lanes; r++)
    row_of[sorted[r].created] = r;

  double lane_height = CLAMP(600.0 / n_lanes, 5, 16);
  gboolean labels = lane_height >= 11;
  Plot plot = {.left = labels ? 170 : 40, .top = 10, .height = lane_height * n_lanes};
  plot.width = CHART_WIDTH - plot.left - 24;
  Axis x = make_axis((double)e0, (double)e1, NULL, 0, FALSE, TRUE);
  append_svg_open(out, (int)(plot.top + plot.height) + 44, "Buffer lifetimes and memory reuse");
  append_x_axis(out, &plot, &x, "event index");
  g_autofree gboolean *labelled = g_new0(gboolean, n_lanes);
  g_autofree guint *position = g_new0(guint, n_lanes); /* bars drawn so far per lane */
  for (i = 0; i < n; i++) {
    const DsReportBuffer *b = &buffers[i];
    gint64 first = b->first_event;
    gint64 last = MAX(b->last_event, first);
    guint row = row_of[lane_of[i]];
    double y = plot.top + row * lane_height;
    double x0 = axis_map(&x, (double)first, plot.left, plot.width);
    double x1 = axis_map(&x, (double)(last + 1), plot.left, plot.width);
    gboolean fresh = chain[i] == i;
    if (labels && !labelled[lane_of[i]]) {
      labelled[lane_of[i]] = TRUE;
      g_string_append(out, "<text text-anchor=\"end\" dy=\"0.32em\" x=\"");
      append_fixed(out, plot.left - 8, 1);
      g_string_append(out, "\" y=\"");
      append_fixed(out, y + lane_height / 2, 1);
      g_string_append(out, "\">");
      append_escaped_tail(out, b->tensor, 26);
      g_string_append(out, "</text>\n");
    }
    g_string_append_printf(out, "<rect%s x=\"", fresh ? " class=\"fresh\"" : "");
    append_fixed(out, x0, 1);
    g_string_append(out, "\" y=\"");
    append_fixed(out, y + 1, 1);
    g_string_append(out, "\" width=\"");
    append_fixed(out, MAX(x1 - x0, 1.5), 1);
    g_string_append(out, "\" height=\"");
    append_fixed(out, lane_height - 2, 1);
    g_string_append(out, "\" rx=\"2\"");
    if (!fresh) {
      /* Alternating lightness tells neighbours in a chain apart. */
      g_string_append_printf(out, " fill=\"hsl(%u, 70%%, %u%%)\"", chain_hue(chain[i]),
                             position[lane_of[i]] % 2 == 0 ? 50u : 62u);
    }
    position[lane_of[i]]++;
    g_string_append(out, "><title>");
    append_escaped(out, b->tensor);
    g_string_append(out, ": ");
    append_bytes(out, (double)b->bytes);
    g_string_append_printf(out, ", events %" G_GINT64_FORMAT "–%" G_GINT64_FORMAT, first, last);
    if (!fresh) {
      g_string_append(out, ", reuses the memory of ");
      append_escaped(out, buffers[b->reused_from].tensor);
    }
    g_string_append(out, "</title></rect>\n");
  }
  g_string_append(out, "</svg>\n<div class=\"legend\"><span><span class=\"swatch fresh\">"
                       "</span>fresh allocation</span><span><span class=\"swatch\" "
                       "style=\"background:hsl(200, 70%, 50%)\"></span><span class=\"swatch\" "
                       "style=\"background:hsl(338, 70%, 50%)\"></span><span class=\"swatch\" "
                       "style=\"background:hsl(115, 70%, 50%)\"></span>reuses the memory of "
                       "the bar before it in its lane (one hue per chain)</span></div>\n");
  g_string_append_printf(out,
                         "<p class=\"note\">One row per piece of memory (%u %s in all); "
                         "each bar is a buffer, from the event that wrote it to the last that "
                         "read it.",
                         n_lanes, n_lanes == 1 ? "row" : "rows");
  if (n < n_all)
    g_string_append_printf(out, " Showing the first %u of %u buffers; %u omitted.", n, n_all,
                           n_all - n);
  g_string_append(out, "</p>\n</section>\n");
}

/* ---- the page ---- */

gboolean ds_report_write_html(const DsReport *report, const char *graph_svg, const char *path,
                              GError **error)
{
  g_return_val_if_fail(report != NULL, FALSE);
  g_return_val_if_fail(path != NULL, FALSE);
  g_return_val_if_fail(error == NULL || *error == NULL, FALSE);

  gboolean has_regions = report->by_region.n_rows > 0;
  gboolean has_bodies = report->by_body.n_rows > 0;
  double wall = total_wall_ns(report);

  g_autoptr(GString) page = g_string_sized_new(64 * 1024);
  append_head(page, report);
  append_header(page, report, has_regions, has_bodies);
  g_string_append(page, "<main>\n");
  append_run(page, report);
  g_string_append(page, "<div class=\"columns\">\n");
  append_bindings(page, report);
  append_inputs(page, report);
  g_string_append(page, "</div>\n</section>\n");
  append_aggregate(page, &report->by_node, "by-node", "Top nodes by time", "Node", "No nodes ran.",
                   wall);
  append_aggregate(page, &report->by_op, "by-op", "Top ops by time", "Op", "No ops ran.", wall);
  if (has_regions)
    append_aggregate(page, &report->by_region, "by-region", "Partition regions by time", "Region",
                     "", wall);
  if (has_bodies)
    append_aggregate(page, &report->by_body, "by-body", "Loop and branch bodies by time", "Body",
                     "", wall);
  append_graph(page, report, graph_svg, wall);
  append_memory(page, report);
  append_buffers(page, report);
  append_environment(page, report);
  g_string_append(page, "</main>\n");
  g_string_append(page, page_script);
  g_string_append(page, "</body>\n</html>\n");
  return ds_file_write_atomic(path, page->str, page->len, error);
}
