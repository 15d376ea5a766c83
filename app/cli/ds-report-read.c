/* ds-report-read.c: loading and validating profile reports; text helpers. */
#include "ds-report-read.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
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

/* ---- Validation --------------------------------------------------------------------------
 * Every check names where in the document it failed ("events[3].dur_ns"), so a reader can
 * find it in a large file. */

typedef struct {
  const char *path;
  GError **error;
} Check;

typedef enum {
  KIND_OBJECT,
  KIND_ARRAY,
  KIND_STRING,
  KIND_COUNT, /* an integer >= 0 */
  KIND_INT,   /* any integer (iteration: -1 outside loops) */
} Kind;

static const char *const kind_names[] = {"an object", "an array", "a string",
                                         "a non-negative integer", "an integer"};

G_GNUC_PRINTF(2, 3)
static gboolean check_fail(Check *c, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  g_autofree char *what = g_strdup_vprintf(format, args);
  va_end(args);
  g_set_error(c->error, DS_ERROR, DS_ERROR_PARSE, "%s: %s", c->path, what);
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
  }
  return FALSE;
}

/* The member `key` of `object` (found at `where`), which must be of `kind`; or NULL when it is
 * absent and `optional` (a null counts as absent then). Sets the error otherwise. */
static const cJSON *check_member(Check *c, const cJSON *object, const char *where, const char *key,
                                 Kind kind, gboolean optional, gboolean *ok)
{
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
  *ok = TRUE;
  if ((item == NULL || cJSON_IsNull(item)) && optional)
    return NULL;
  if (item == NULL) {
    *ok = check_fail(c, "%s%s'%s' is missing", where, *where ? ": " : "", key);
    return NULL;
  }
  if (!is_kind(item, kind)) {
    *ok = check_fail(c, "%s%s%s is not %s", where, *where ? "." : "", key, kind_names[kind]);
    return NULL;
  }
  return item;
}

/* `var` = member `key` of `object`, of `kind`; a missing one is an error unless optional. */
#define MEMBER(var, object, where, key, kind, optional)                                           \
  const cJSON *var;                                                                                \
  do {                                                                                             \
    gboolean ok_;                                                                                  \
    var = check_member(c, object, where, key, kind, optional, &ok_);                               \
    if (!ok_)                                                                                      \
      return FALSE;                                                                                \
  } while (0)
#define REQUIRE(var, object, where, key, kind) MEMBER(var, object, where, key, kind, FALSE)
#define OPTIONAL(var, object, where, key, kind) MEMBER(var, object, where, key, kind, TRUE)

/* An array of shapes, each an array of integers. */
static gboolean check_shapes(Check *c, const cJSON *shapes, const char *where)
{
  guint i = 0;
  const cJSON *shape;
  cJSON_ArrayForEach(shape, shapes)
  {
    if (!cJSON_IsArray(shape))
      return check_fail(c, "%s[%u] is not a shape (an array of integers)", where, i);
    const cJSON *dim;
    cJSON_ArrayForEach(dim, shape)
    {
      if (!is_integer(dim, -REPORT_MAX_COUNT))
        return check_fail(c, "%s[%u] is not a shape (an array of integers)", where, i);
    }
    i++;
  }
  return TRUE;
}

static gboolean check_event(Check *c, const cJSON *event, guint index, gint64 repeat)
{
  char where[48];
  g_snprintf(where, sizeof where, "events[%u]", index);
  if (!cJSON_IsObject(event))
    return check_fail(c, "%s is not an object", where);
  REQUIRE(key, event, where, "key", KIND_STRING);
  REQUIRE(op, event, where, "op", KIND_STRING);
  REQUIRE(dur, event, where, "dur_ns", KIND_COUNT);
  REQUIRE(run, event, where, "run", KIND_COUNT);
  OPTIONAL(depth, event, where, "depth", KIND_COUNT);
  OPTIONAL(shapes, event, where, "output_shapes", KIND_ARRAY);
  (void)key, (void)op, (void)dur, (void)depth;
  if (run->valuedouble >= (double)repeat)
    return check_fail(c, "%s.run is %.0f, but run.repeat is %" G_GINT64_FORMAT, where,
                      run->valuedouble, repeat);
  if (shapes != NULL) {
    char inner[64];
    g_snprintf(inner, sizeof inner, "%s.output_shapes", where);
    return check_shapes(c, shapes, inner);
  }
  return TRUE;
}

static gboolean check_agg(Check *c, const cJSON *agg, const char *table, guint index)
{
  char where[64];
  g_snprintf(where, sizeof where, "aggregates.%s[%u]", table, index);
  if (!cJSON_IsObject(agg))
    return check_fail(c, "%s is not an object", where);
  REQUIRE(name, agg, where, "name", KIND_STRING);
  (void)name;
  static const char *const counts[] = {"count", "total_ns", "mean_ns", "p50_ns", "p95_ns"};
  for (guint i = 0; i < G_N_ELEMENTS(counts); i++) {
    REQUIRE(item, agg, where, counts[i], KIND_COUNT);
    (void)item;
  }
  OPTIONAL(shapes, agg, where, "max_input_shapes", KIND_ARRAY);
  if (shapes != NULL) {
    char inner[96];
    g_snprintf(inner, sizeof inner, "%s.max_input_shapes", where);
    return check_shapes(c, shapes, inner);
  }
  return TRUE;
}

static gboolean check_iteration(Check *c, const cJSON *iter, guint index)
{
  char where[64];
  g_snprintf(where, sizeof where, "aggregates.by_iteration[%u]", index);
  if (!cJSON_IsObject(iter))
    return check_fail(c, "%s is not an object", where);
  REQUIRE(body, iter, where, "body", KIND_STRING);
  REQUIRE(iteration, iter, where, "iteration", KIND_INT);
  REQUIRE(count, iter, where, "count", KIND_COUNT);
  REQUIRE(total, iter, where, "total_ns", KIND_COUNT);
  (void)body, (void)iteration, (void)count, (void)total;
  return TRUE;
}

static gboolean check_aggregates(Check *c, const cJSON *aggregates)
{
  static const struct {
    const char *name;
    gboolean required;
  } tables[] = {
      {"by_op", TRUE},
      {"by_node", TRUE},
      {"by_region", FALSE},
      {"by_body", FALSE},
  };
  for (guint t = 0; t < G_N_ELEMENTS(tables); t++) {
    gboolean ok;
    const cJSON *list = check_member(c, aggregates, "aggregates", tables[t].name, KIND_ARRAY,
                                     !tables[t].required, &ok);
    if (!ok)
      return FALSE;
    guint i = 0;
    const cJSON *agg;
    cJSON_ArrayForEach(agg, list)
    {
      if (!check_agg(c, agg, tables[t].name, i++))
        return FALSE;
    }
  }
  OPTIONAL(iterations, aggregates, "aggregates", "by_iteration", KIND_ARRAY);
  guint i = 0;
  const cJSON *iter;
  cJSON_ArrayForEach(iter, iterations)
  {
    if (!check_iteration(c, iter, i++))
      return FALSE;
  }
  return TRUE;
}

static gboolean check_memory(Check *c, const cJSON *memory)
{
  static const char *const fields[] = {"peak_live_bytes", "planned_peak_bytes", "fresh_bytes",
                                       "reused_bytes"};
  for (guint i = 0; i < G_N_ELEMENTS(fields); i++) {
    OPTIONAL(item, memory, "memory", fields[i], KIND_COUNT);
    (void)item;
  }
  return TRUE;
}

static gboolean check_header(Check *c, const cJSON *root)
{
  if (!cJSON_IsObject(root))
    return check_fail(c, "not a dynscope profile report (the JSON is not an object)");
  const cJSON *schema = cJSON_GetObjectItemCaseSensitive(root, "schema");
  if (!cJSON_IsString(schema) || schema->valuestring == NULL)
    return check_fail(c, "not a dynscope profile report (no \"schema\" string)");
  if (strcmp(schema->valuestring, REPORT_SCHEMA) != 0)
    return check_fail(c, "not a dynscope profile report (schema \"%.64s\", expected \"%s\")",
                      schema->valuestring, REPORT_SCHEMA);
  const cJSON *version = cJSON_GetObjectItemCaseSensitive(root, "version");
  if (!cJSON_IsNumber(version))
    return check_fail(c, "report has no numeric \"version\"");
  if (version->valuedouble != REPORT_VERSION)
    return check_fail(c, "report version %g is not supported (this dynscope reads version %d)",
                      version->valuedouble, REPORT_VERSION);
  return TRUE;
}

static gboolean check_report(Check *c, const cJSON *root)
{
  if (!check_header(c, root))
    return FALSE;
  REQUIRE(model, root, "", "model", KIND_OBJECT);
  REQUIRE(run, root, "", "run", KIND_OBJECT);
  REQUIRE(repeat, run, "run", "repeat", KIND_COUNT);
  if (repeat->valuedouble < 1)
    return check_fail(c, "run.repeat is 0");
  REQUIRE(wall, run, "run", "wall_ns", KIND_ARRAY);
  const cJSON *item;
  cJSON_ArrayForEach(item, wall)
  {
    if (!is_kind(item, KIND_COUNT))
      return check_fail(c, "run.wall_ns holds something other than a non-negative integer");
  }
  REQUIRE(bindings, root, "", "bindings", KIND_OBJECT);
  cJSON_ArrayForEach(item, bindings)
  {
    if (!is_kind(item, KIND_INT))
      return check_fail(c, "bindings.%.64s is not an integer", item->string);
  }
  REQUIRE(events, root, "", "events", KIND_ARRAY);
  guint i = 0;
  cJSON_ArrayForEach(item, events)
  {
    if (!check_event(c, item, i++, (gint64)repeat->valuedouble))
      return FALSE;
  }
  REQUIRE(aggregates, root, "", "aggregates", KIND_OBJECT);
  if (!check_aggregates(c, aggregates))
    return FALSE;
  OPTIONAL(memory, root, "", "memory", KIND_OBJECT);
  (void)model;
  return memory == NULL || check_memory(c, memory);
}

cJSON *ds_report_load(const char *path, GError **error)
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
  const char *end = NULL;
  g_autoptr(cJSON) root = cJSON_ParseWithLengthOpts(data, len, &end, FALSE);
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
  if (stop < len) {
    g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
                "%s: unexpected text after the JSON document at byte %" G_GSIZE_FORMAT, path, stop);
    return NULL;
  }
  Check check = {path, error};
  if (!check_report(&check, root))
    return NULL;
  return g_steal_pointer(&root);
}

/* ---- Getters and formatting -------------------------------------------------------------- */

const char *ds_report_get_string(const cJSON *object, const char *key, const char *fallback)
{
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
  return cJSON_IsString(item) && item->valuestring != NULL ? item->valuestring : fallback;
}

gint64 ds_report_get_int(const cJSON *object, const char *key, gint64 fallback)
{
  const cJSON *item = cJSON_GetObjectItemCaseSensitive(object, key);
  return is_integer(item, -REPORT_MAX_COUNT) ? (gint64)item->valuedouble : fallback;
}

const cJSON *ds_report_aggregates(const cJSON *report, const char *table)
{
  const cJSON *aggregates = cJSON_GetObjectItemCaseSensitive(report, "aggregates");
  const cJSON *list = cJSON_GetObjectItemCaseSensitive(aggregates, table);
  return cJSON_IsArray(list) ? list : NULL;
}

static int compare_i64(const void *a, const void *b)
{
  gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
  return x < y ? -1 : x > y;
}

gint64 ds_report_median_wall_ns(const cJSON *report)
{
  const cJSON *run = cJSON_GetObjectItemCaseSensitive(report, "run");
  const cJSON *wall = cJSON_GetObjectItemCaseSensitive(run, "wall_ns");
  g_autoptr(GArray) values = g_array_new(FALSE, FALSE, sizeof(gint64));
  const cJSON *item;
  cJSON_ArrayForEach(item, wall)
  {
    if (is_integer(item, 0)) {
      gint64 v = (gint64)item->valuedouble;
      g_array_append_val(values, v);
    }
  }
  if (values->len == 0)
    return 0;
  qsort(values->data, values->len, sizeof(gint64), compare_i64);
  return g_array_index(values, gint64, values->len / 2);
}

char *ds_report_format_shapes(const cJSON *shapes)
{
  if (!cJSON_IsArray(shapes) || shapes->child == NULL)
    return g_strdup("-");
  GString *out = g_string_new(NULL);
  const cJSON *shape;
  cJSON_ArrayForEach(shape, shapes)
  {
    if (out->len > 0)
      g_string_append(out, ", ");
    g_string_append_c(out, '(');
    const cJSON *dim;
    gboolean first = TRUE;
    cJSON_ArrayForEach(dim, shape)
    {
      g_string_append_printf(out, "%s%.0f", first ? "" : ", ",
                             cJSON_IsNumber(dim) ? dim->valuedouble : -1.0);
      first = FALSE;
    }
    /* A 1-D shape reads as a tuple, as everywhere else: "(128,)". */
    g_string_append(out, cJSON_GetArraySize(shape) == 1 ? ",)" : ")");
  }
  return g_string_free(out, FALSE);
}

char *ds_report_format_bindings(const cJSON *report)
{
  const cJSON *bindings = cJSON_GetObjectItemCaseSensitive(report, "bindings");
  GString *out = g_string_new(NULL);
  const cJSON *item;
  cJSON_ArrayForEach(item, bindings)
  {
    if (item->string != NULL && cJSON_IsNumber(item))
      g_string_append_printf(out, "%s%s=%.0f", out->len ? ", " : "", item->string,
                             item->valuedouble);
  }
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
