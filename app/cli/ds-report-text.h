/* ds-report-text.h: the text --summary and --compare print a profile report with (the report
 * itself is read by ds-report.h). */
#pragma once

#include <glib.h>

#include "ds-report.h"

/* "(4, 64), (4)" for an array of shapes; "()" for a scalar; "-" for none or null. */
char *ds_report_format_shapes(const DsReportShapes *shapes);

/* "s0=4, s1=16", or "none". */
char *ds_report_format_bindings(const DsReport *report);

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
