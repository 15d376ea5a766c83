/* ds-report-text.c: the text --summary and --compare print a report with: shapes, bindings
 * and byte counts as text, and aligned tables. */
#include "ds-report-text.h"

#include <stdio.h>
#include <string.h>

char *ds_report_format_shapes(const DsReportShapes *shapes)
{
  if (shapes == NULL || shapes->n_shapes == 0)
    return g_strdup("-");
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < shapes->n_shapes; i++) {
    const DsReportShape *shape = &shapes->shapes[i];
    if (out->len > 0)
      g_string_append(out, ", ");
    g_string_append_c(out, '(');
    for (guint d = 0; d < shape->n_dims; d++)
      g_string_append_printf(out, "%s%" G_GINT64_FORMAT, d > 0 ? ", " : "", shape->dims[d]);
    /* A 1-D shape reads as a tuple, as everywhere else: "(128,)". */
    g_string_append(out, shape->n_dims == 1 ? ",)" : ")");
  }
  return g_string_free(out, FALSE);
}

char *ds_report_format_bindings(const DsReport *report)
{
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < report->n_bindings; i++)
    g_string_append_printf(out, "%s%s=%" G_GINT64_FORMAT, out->len ? ", " : "",
                           report->bindings[i].name, report->bindings[i].value);
  if (out->len == 0)
    g_string_append(out, "none");
  return g_string_free(out, FALSE);
}

char *ds_report_format_bytes(gint64 bytes)
{
  return g_format_size_full((guint64)MAX(bytes, 0), G_FORMAT_SIZE_IEC_UNITS);
}

/* ---- Aligned text tables ----------------------------------------------------------------- */

/* Takes `text`, returning it as valid UTF-8: names come from the report as they are, and the
 * widths count characters. */
static char *take_valid_utf8(char *text)
{
  if (text == NULL)
    return g_strdup("");
  if (g_utf8_validate(text, -1, NULL))
    return text;
  char *valid = g_utf8_make_valid(text, -1);
  g_free(text);
  return valid;
}

struct DsTextTable {
  guint n_columns;
  char **headers;
  char *align;
  GPtrArray *rows; /* char ** of n_columns cells, or a char ** holding one line and NULL */
  GPtrArray *is_line;
};

DsTextTable *ds_text_table_new(guint n_columns, const char *const *headers, const char *align)
{
  DsTextTable *table = g_new0(DsTextTable, 1);
  table->n_columns = n_columns;
  table->headers = g_new0(char *, n_columns + 1);
  for (guint i = 0; i < n_columns; i++)
    table->headers[i] = take_valid_utf8(g_strdup(headers[i]));
  table->align = g_strdup(align);
  table->rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  table->is_line = g_ptr_array_new();
  return table;
}

void ds_text_table_take_row(DsTextTable *table, char **cells)
{
  char **row = g_new0(char *, table->n_columns + 1);
  for (guint i = 0; i < table->n_columns; i++)
    row[i] = take_valid_utf8(cells[i]);
  g_ptr_array_add(table->rows, row);
  g_ptr_array_add(table->is_line, GINT_TO_POINTER(FALSE));
}

void ds_text_table_add_line(DsTextTable *table, const char *line)
{
  char **row = g_new0(char *, 2);
  row[0] = take_valid_utf8(g_strdup(line));
  g_ptr_array_add(table->rows, row);
  g_ptr_array_add(table->is_line, GINT_TO_POINTER(TRUE));
}

guint ds_text_table_get_n_rows(const DsTextTable *table)
{
  guint n = 0;
  for (guint i = 0; i < table->is_line->len; i++)
    n += !GPOINTER_TO_INT(g_ptr_array_index(table->is_line, i));
  return n;
}

static void print_row(const DsTextTable *table, char *const *cells, const glong *widths,
                      const char *indent)
{
  /* The last column is not padded when left-aligned: no trailing spaces. */
  GString *line = g_string_new(indent);
  for (guint i = 0; i < table->n_columns; i++) {
    glong pad = widths[i] - g_utf8_strlen(cells[i], -1);
    gboolean right = table->align[i] == 'r';
    if (i > 0)
      g_string_append(line, "  ");
    if (right)
      for (glong k = 0; k < pad; k++)
        g_string_append_c(line, ' ');
    g_string_append(line, cells[i]);
    if (!right && i + 1 < table->n_columns)
      for (glong k = 0; k < pad; k++)
        g_string_append_c(line, ' ');
  }
  while (line->len > 0 && line->str[line->len - 1] == ' ')
    g_string_truncate(line, line->len - 1);
  printf("%s\n", line->str);
  g_string_free(line, TRUE);
}

void ds_text_table_print(const DsTextTable *table, const char *indent)
{
  g_autofree glong *widths = g_new0(glong, table->n_columns);
  for (guint i = 0; i < table->n_columns; i++)
    widths[i] = g_utf8_strlen(table->headers[i], -1);
  for (guint r = 0; r < table->rows->len; r++) {
    if (GPOINTER_TO_INT(g_ptr_array_index(table->is_line, r)))
      continue;
    char **row = g_ptr_array_index(table->rows, r);
    for (guint i = 0; i < table->n_columns; i++)
      widths[i] = MAX(widths[i], g_utf8_strlen(row[i], -1));
  }
  print_row(table, table->headers, widths, indent);
  for (guint r = 0; r < table->rows->len; r++) {
    char **row = g_ptr_array_index(table->rows, r);
    if (GPOINTER_TO_INT(g_ptr_array_index(table->is_line, r)))
      printf("%s\n", row[0]);
    else
      print_row(table, row, widths, indent);
  }
}

void ds_text_table_free(DsTextTable *table)
{
  if (table == NULL)
    return;
  g_strfreev(table->headers);
  g_free(table->align);
  g_ptr_array_unref(table->rows);
  g_ptr_array_unref(table->is_line);
  g_free(table);
}
