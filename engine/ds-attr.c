/* ds-attr.c: attribute string parsing with MXNet's spellings. */
#include "ds-attr.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ds-error.h"

static const char *skip_space(const char *s)
{
  while (g_ascii_isspace(*s))
    s++;
  return s;
}

static gboolean at_end(const char *s) { return *skip_space(s) == '\0'; }

gboolean ds_attr_parse_int(const char *text, int64_t *out)
{
  if (text == NULL)
    return FALSE;
  const char *s = skip_space(text);
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || errno != 0 || !at_end(end))
    return FALSE;
  *out = v;
  return TRUE;
}

gboolean ds_attr_parse_float(const char *text, double *out)
{
  if (text == NULL)
    return FALSE;
  const char *s = skip_space(text);
  char *end;
  double v = g_ascii_strtod(s, &end);
  if (end == s || !at_end(end)) {
    /* Python spells infinities "inf"/"-inf"; g_ascii_strtod takes those, but not "None". */
    return FALSE;
  }
  *out = v;
  return TRUE;
}

gboolean ds_attr_parse_bool(const char *text, gboolean *out)
{
  if (text == NULL)
    return FALSE;
  g_autofree char *s = g_strstrip(g_strdup(text));
  if (g_ascii_strcasecmp(s, "true") == 0 || strcmp(s, "1") == 0)
    *out = TRUE;
  else if (g_ascii_strcasecmp(s, "false") == 0 || strcmp(s, "0") == 0)
    *out = FALSE;
  else
    return FALSE;
  return TRUE;
}

gboolean ds_attr_parse_tuple(const char *text, int64_t *values, int max, int64_t none_value,
                             int *n_out)
{
  if (text == NULL)
    return FALSE;
  const char *s = skip_space(text);
  char close = 0;
  if (*s == '(')
    close = ')';
  else if (*s == '[')
    close = ']';
  if (close == 0) { /* a bare scalar is a one-element tuple */
    int64_t v;
    if (!ds_attr_parse_int(s, &v) || max < 1)
      return FALSE;
    values[0] = v;
    *n_out = 1;
    return TRUE;
  }
  s = skip_space(s + 1);
  int n = 0;
  while (*s != close) {
    if (n >= max)
      return FALSE;
    if (strncmp(s, "None", 4) == 0) {
      values[n++] = none_value;
      s += 4;
    } else {
      char *end;
      errno = 0;
      long long v = strtoll(s, &end, 10);
      if (end == s || errno != 0)
        return FALSE;
      /* MXNet writes some integer tuples as "1L" (Python 2 longs). */
      if (*end == 'L')
        end++;
      values[n++] = v;
      s = end;
    }
    s = skip_space(s);
    if (*s == ',')
      s = skip_space(s + 1);
    else if (*s != close)
      return FALSE;
  }
  if (!at_end(s + 1))
    return FALSE;
  *n_out = n;
  return TRUE;
}

static gboolean bad_attr(const DsNode *node, const char *key, const char *value,
                         const char *expected, GError **error)
{
  g_set_error(error, DS_ERROR, DS_ERROR_PARSE,
              "node '%s' (%s): attribute %s='%s' is not %s", node->name, node->op_name, key,
              value, expected);
  return FALSE;
}

gboolean ds_node_attr_is_none(const DsNode *node, const char *key)
{
  const char *v = ds_node_get_attr(node, key);
  return v == NULL || strcmp(v, "None") == 0;
}

gboolean ds_node_attr_int(const DsNode *node, const char *key, int64_t def, int64_t *out,
                          GError **error)
{
  const char *v = ds_node_get_attr(node, key);
  if (v == NULL || strcmp(v, "None") == 0) {
    *out = def;
    return TRUE;
  }
  if (ds_attr_parse_int(v, out))
    return TRUE;
  /* MXNet accepts integral floats ("384.0") for int params parsed through Python. */
  double d;
  if (ds_attr_parse_float(v, &d) && d == floor(d) && fabs(d) < 9.0e15) {
    *out = (int64_t)d;
    return TRUE;
  }
  return bad_attr(node, key, v, "an integer", error);
}

gboolean ds_node_attr_float(const DsNode *node, const char *key, double def, double *out,
                            GError **error)
{
  const char *v = ds_node_get_attr(node, key);
  if (v == NULL || strcmp(v, "None") == 0) {
    *out = def;
    return TRUE;
  }
  return ds_attr_parse_float(v, out) || bad_attr(node, key, v, "a number", error);
}

gboolean ds_node_attr_bool(const DsNode *node, const char *key, gboolean def, gboolean *out,
                           GError **error)
{
  const char *v = ds_node_get_attr(node, key);
  if (v == NULL) {
    *out = def;
    return TRUE;
  }
  return ds_attr_parse_bool(v, out) || bad_attr(node, key, v, "a boolean", error);
}

gboolean ds_node_attr_tuple(const DsNode *node, const char *key, int64_t *values, int max,
                            int *n_out, GError **error)
{
  const char *v = ds_node_get_attr(node, key);
  if (v == NULL || strcmp(v, "None") == 0) {
    *n_out = -1;
    return TRUE;
  }
  if (ds_attr_parse_tuple(v, values, max, -1, n_out))
    return TRUE;
  g_autofree char *what = g_strdup_printf("an integer tuple of at most %d values", max);
  return bad_attr(node, key, v, what, error);
}

gboolean ds_node_attr_enum(const DsNode *node, const char *key, const char *const *choices,
                           int def, int *out, GError **error)
{
  const char *v = ds_node_get_attr(node, key);
  if (v == NULL) {
    *out = def;
    return TRUE;
  }
  for (int i = 0; choices[i] != NULL; i++) {
    if (strcmp(v, choices[i]) == 0) {
      *out = i;
      return TRUE;
    }
  }
  g_autoptr(GString) list = g_string_new("one of ");
  for (int i = 0; choices[i] != NULL; i++)
    g_string_append_printf(list, "%s%s", i ? ", " : "", choices[i]);
  return bad_attr(node, key, v, list->str, error);
}

gboolean ds_node_attr_dtype(const DsNode *node, const char *key, DsDType def, DsDType *out,
                            GError **error)
{
  const char *v = ds_node_get_attr(node, key);
  if (v == NULL || strcmp(v, "None") == 0) {
    *out = def;
    return TRUE;
  }
  DsDType d = ds_dtype_from_name(v);
  if (d == DS_DTYPE_UNKNOWN)
    return bad_attr(node, key, v, "a known dtype", error);
  *out = d;
  return TRUE;
}
