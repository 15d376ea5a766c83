/* ds-cli-profile.c: --run's reports (--report, --trace, --html, --csv) and budgets (--max-ms,
 * --max-peak-bytes, --max-node-ms). */
#include <glib/gi18n.h>
#include <stdio.h>
#include <string.h>

#include "ds-attr.h"
#include "ds-cli.h"
#include "ds-error.h"
#include "ds-file.h"
#include "ds-report-html.h"

gboolean ds_cli_profiling_wanted(const DsCliOptions *options)
{
  return options->report_path != NULL || options->trace_path != NULL ||
         options->html_path != NULL || options->csv_path != NULL ||
         options->max_peak_bytes != NULL || options->max_node_ms != NULL;
}

static gboolean write_text(const char *path, char *text, GError **error)
{
  gboolean ok = ds_file_write_atomic(path, text, strlen(text), error);
  g_free(text);
  return ok;
}

static gboolean write_json(const char *path, const cJSON *json, GError **error)
{
  char *printed = cJSON_Print(json);
  g_autofree char *text = g_strconcat(printed, "\n", NULL);
  cJSON_free(printed);
  return ds_file_write_atomic(path, text, strlen(text), error);
}

gboolean ds_cli_write_reports(const DsCliOptions *options, DsProfiler *profiler, int threads,
                              GError **error)
{
  if (options->report_path != NULL || options->html_path != NULL) {
    cJSON *json = ds_profiler_build_report(profiler, threads);
    gboolean ok = options->report_path == NULL || write_json(options->report_path, json, error);
    if (ok && options->html_path != NULL) {
      /* The page reads the report as any reader would: through the typed model. */
      g_autoptr(DsReport) report = ds_report_from_json(json, "report", error);
      ok = report != NULL && ds_report_write_html(report, NULL, options->html_path, error);
    }
    cJSON_Delete(json);
    if (!ok)
      return FALSE;
  }
  if (options->trace_path != NULL &&
      !write_text(options->trace_path, ds_profiler_build_trace(profiler), error))
    return FALSE;
  if (options->csv_path != NULL &&
      !write_text(options->csv_path, ds_profiler_build_csv(profiler), error))
    return FALSE;
  return TRUE;
}

gboolean ds_cli_check_budget_options(const DsCliOptions *options, GError **error)
{
  guint64 bytes;
  if (options->max_ms < 0) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, _("--max-ms %g: expected milliseconds > 0"),
                options->max_ms);
    return FALSE;
  }
  if (options->max_peak_bytes != NULL && !ds_cli_parse_bytes(options->max_peak_bytes, &bytes)) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "--max-peak-bytes %s: expected a byte count like 1048576, 512M or 2G",
                options->max_peak_bytes);
    return FALSE;
  }
  for (char **b = options->max_node_ms; b != NULL && *b != NULL; b++) {
    const char *eq = strrchr(*b, '=');
    char *end = NULL;
    double ms = eq != NULL ? g_ascii_strtod(eq + 1, &end) : -1;
    if (eq == NULL || eq == *b || end == eq + 1 || *end != '\0' || !(ms > 0)) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "--max-node-ms %s: expected NODE=MS with MS > 0",
                  *b);
      return FALSE;
    }
  }
  return TRUE;
}

int ds_cli_check_budgets(const DsCliOptions *options, DsProfiler *profiler, guint64 median_ns,
                         int repeat)
{
  int status = 0;
  if (options->max_ms > 0 && median_ns > options->max_ms * 1e6) {
    g_printerr("dynscope: over budget: a run took %.3f ms (median of %d), over --max-ms %g\n",
               median_ns / 1e6, repeat, options->max_ms);
    status = 1;
  }
  guint64 limit;
  if (options->max_peak_bytes != NULL && ds_cli_parse_bytes(options->max_peak_bytes, &limit)) {
    g_autofree char *where = NULL;
    gsize peak = ds_profiler_get_peak_live_bytes(profiler, &where);
    if (peak > limit) {
      g_autofree char *text = g_format_size_full(peak, G_FORMAT_SIZE_IEC_UNITS);
      g_printerr("dynscope: over budget: peak live memory %s (%zu bytes, at node '%s'), over "
                 "--max-peak-bytes %s\n",
                 text, peak, where, options->max_peak_bytes);
      status = 1;
    }
  }
  for (char **b = options->max_node_ms; b != NULL && *b != NULL; b++) {
    const char *eq = strrchr(*b, '=');
    g_autofree char *name = g_strndup(*b, (gsize)(eq - *b));
    double ms = g_ascii_strtod(eq + 1, NULL);
    guint64 ns;
    if (!ds_profiler_get_mean_ns(profiler, name, &ns)) {
      g_printerr(_("dynscope: --max-node-ms %s: no executed node is called '%s' (give a node "
                   "name or a path like while0/fc1)\n"),
                 *b, name);
      return 2;
    }
    if (ns > ms * 1e6) {
      g_printerr("dynscope: over budget: node '%s' took %.3f ms per run, over --max-node-ms "
                 "%s\n",
                 name, ns / 1e6, *b);
      status = 1;
    }
  }
  return status;
}
