/* ds-report-read.h: loading profile reports (docs/profile-report.md) for --summary and
 * --compare, and the text helpers both print with. */
#pragma once

#include <cjson/cJSON.h>
#include <glib.h>

/* Loads and validates a report. Errors are one line naming `path`: DS_ERROR_IO when the file
 * cannot be read, DS_ERROR_LIMIT over 1 GiB, DS_ERROR_PARSE when it is not JSON, not a
 * dynscope profile, a version this build does not read, or lacks a field the readers use.
 * After a successful load the readers may rely on: `run.repeat` >= 1, `run.wall_ns` an array
 * of counts, `bindings` an object of integers, `model` an object, `events` an array of objects
 * with string `key` and `op`, count `dur_ns`, `run` in [0, repeat), `depth` and
 * `output_shapes` valid or absent; `aggregates.by_op` and `by_node` arrays of AGG, `by_region`,
 * `by_body` and `by_iteration` valid or absent; `memory` an object of counts or nulls, or
 * absent. Free with cJSON_Delete(). */
cJSON *ds_report_load(const char *path, GError **error);

/* Lenient getters for display fields: `fallback` when the member is absent or of another
 * type. */
const char *ds_report_get_string(const cJSON *object, const char *key, const char *fallback);
gint64 ds_report_get_int(const cJSON *object, const char *key, gint64 fallback);

/* An aggregates table ("by_op", "by_region"...), or NULL when the report has none. */
const cJSON *ds_report_aggregates(const cJSON *report, const char *table);

/* Median of `run.wall_ns` (the upper one for an even count, as --run prints it); 0 if
 * empty. */
gint64 ds_report_median_wall_ns(const cJSON *report);

/* "(4, 64), (4)" for an array of shapes; "()" for a scalar; "-" for none or null. */
char *ds_report_format_shapes(const cJSON *shapes);

/* "s0=4, s1=16", or "none". */
char *ds_report_format_bindings(const cJSON *report);

/* "1.5 MiB". */
char *ds_report_format_bytes(gint64 bytes);

/* ---- Aligned text tables ---------------------------------------------------------------- */

typedef struct DsTextTable DsTextTable;

/* `columns` header texts, `align` one letter per column: 'l' or 'r'. */
DsTextTable *ds_text_table_new(guint n_columns, const char *const *headers, const char *align);
/* Adds a row of n_columns strings, taking them (g_free'd with the table). */
void ds_text_table_take_row(DsTextTable *table, char **cells);
/* Adds a line printed as is (no indent) between rows, a group title: not part of the column
 * widths. */
void ds_text_table_add_line(DsTextTable *table, const char *line);
guint ds_text_table_get_n_rows(const DsTextTable *table);
/* Prints the header and rows, each line starting with `indent`, columns two spaces apart and
 * padded by characters (not bytes: "µs"). */
void ds_text_table_print(const DsTextTable *table, const char *indent);
void ds_text_table_free(DsTextTable *table);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DsTextTable, ds_text_table_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC(cJSON, cJSON_Delete)
