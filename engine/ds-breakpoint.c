/* ds-breakpoint.c: parsing and testing breakpoint specs. */
#include "ds-breakpoint.h"

#include <math.h>
#include <string.h>

#include "ds-error.h"
#include "ds-op.h"
#include "ds-tensor-stats.h"

typedef enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE } Compare;

typedef enum {
  VALUE_ITER,
  VALUE_NAN,
  VALUE_INF,
  VALUE_MIN,
  VALUE_MAX,
  VALUE_MEAN,
  VALUE_NUMEL,
  VALUE_SYMBOL,
} ValueKind;

typedef struct {
  ValueKind kind;
  char *symbol; /* VALUE_SYMBOL */
  Compare op;
  double number;
} Condition;

struct _DsBreakpoint {
  char *spec;
  char *target;
  GArray *conditions;   /* Condition */
  GPtrArray *symbols;   /* names, NULL-terminated */
  gboolean needs_stats; /* a condition reads the outputs */
};

static const struct {
  const char *name;
  ValueKind kind;
} value_names[] = {
    {"iter", VALUE_ITER}, {"nan", VALUE_NAN},   {"inf", VALUE_INF},     {"min", VALUE_MIN},
    {"max", VALUE_MAX},   {"mean", VALUE_MEAN}, {"numel", VALUE_NUMEL},
};

static const char *compare_tokens[] = {"==", "!=", "<=", ">=", "<", ">"};
static const Compare compare_ops[] = {OP_EQ, OP_NE, OP_LE, OP_GE, OP_LT, OP_GT};

void ds_breakpoint_free(DsBreakpoint *bp)
{
  if (bp == NULL)
    return;
  for (guint i = 0; bp->conditions != NULL && i < bp->conditions->len; i++)
    g_free(g_array_index(bp->conditions, Condition, i).symbol);
  if (bp->conditions != NULL)
    g_array_unref(bp->conditions);
  if (bp->symbols != NULL)
    g_ptr_array_unref(bp->symbols);
  g_free(bp->spec);
  g_free(bp->target);
  g_free(bp);
}

static gboolean parse_condition(DsBreakpoint *bp, const char *text, GError **error)
{
  const char *p = text;
  while (g_ascii_isspace(*p))
    p++;
  const char *name = p;
  while (g_ascii_isalnum(*p) || *p == '_')
    p++;
  g_autofree char *word = g_strndup(name, (gsize)(p - name));
  if (word[0] == '\0' || g_ascii_isdigit(word[0])) {
    g_autofree char *condition = g_strstrip(g_strdup(text));
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "breakpoint '%s': condition '%s' must start with iter, nan, inf, min, max, "
                "mean, numel or a symbol name",
                bp->spec, condition);
    return FALSE;
  }
  while (g_ascii_isspace(*p))
    p++;
  int op = -1;
  for (int i = 0; i < (int)G_N_ELEMENTS(compare_tokens) && op < 0; i++)
    if (strncmp(p, compare_tokens[i], strlen(compare_tokens[i])) == 0)
      op = i;
  if (op < 0) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "breakpoint '%s': expected ==, !=, <, <=, > or >= after '%s'", bp->spec, word);
    return FALSE;
  }
  p += strlen(compare_tokens[op]);
  char *end = NULL;
  double number = g_ascii_strtod(p, &end);
  while (end != NULL && g_ascii_isspace(*end))
    end++;
  if (end == p || end == NULL || *end != '\0' || isnan(number)) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "breakpoint '%s': expected a number after '%s %s'",
                bp->spec, word, compare_tokens[op]);
    return FALSE;
  }
  Condition c = {.kind = VALUE_SYMBOL, .op = compare_ops[op], .number = number};
  for (guint i = 0; i < G_N_ELEMENTS(value_names); i++)
    if (strcmp(word, value_names[i].name) == 0)
      c.kind = value_names[i].kind;
  if (c.kind == VALUE_SYMBOL) {
    c.symbol = g_strdup(word);
    g_ptr_array_insert(bp->symbols, (gint)bp->symbols->len - 1, g_strdup(word));
  }
  bp->needs_stats |= c.kind >= VALUE_NAN && c.kind <= VALUE_NUMEL;
  g_array_append_val(bp->conditions, c);
  return TRUE;
}

DsBreakpoint *ds_breakpoint_parse(const char *spec, GError **error)
{
  g_autoptr(DsBreakpoint) bp = g_new0(DsBreakpoint, 1);
  bp->spec = g_strstrip(g_strdup(spec));
  bp->conditions = g_array_new(FALSE, FALSE, sizeof(Condition));
  bp->symbols = g_ptr_array_new_with_free_func(g_free);
  g_ptr_array_add(bp->symbols, NULL);

  /* "TARGET" or "TARGET if CONDITION && ...". */
  const char *rest = NULL;
  gsize target_len = strcspn(bp->spec, " \t");
  const char *after = bp->spec + target_len;
  while (g_ascii_isspace(*after))
    after++;
  if (*after != '\0') {
    if (strncmp(after, "if", 2) != 0 || !(g_ascii_isspace(after[2]) || after[2] == '\0')) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                  "breakpoint '%s': expected 'if CONDITION' after the node or op name", bp->spec);
      return NULL;
    }
    rest = after + 2;
  }
  bp->target = g_strndup(bp->spec, target_len);
  if (bp->target[0] == '\0') {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "breakpoint '%s': expected a node name, an op name or *", spec);
    return NULL;
  }
  if (rest != NULL) {
    g_auto(GStrv) parts = g_strsplit(rest, "&&", -1);
    for (char **part = parts; *part != NULL; part++)
      if (!parse_condition(bp, *part, error))
        return NULL;
  }
  return g_steal_pointer(&bp);
}

const char *ds_breakpoint_get_spec(const DsBreakpoint *bp)
{
  return bp->spec;
}
const char *ds_breakpoint_get_target(const DsBreakpoint *bp)
{
  return bp->target;
}

const char *const *ds_breakpoint_get_symbols(const DsBreakpoint *bp)
{
  return (const char *const *)bp->symbols->pdata;
}

gboolean ds_breakpoint_matches(const DsBreakpoint *bp, const DsNode *node)
{
  if (ds_node_is_variable(node))
    return FALSE;
  return strcmp(bp->target, "*") == 0 || strcmp(bp->target, node->name) == 0 ||
         strcmp(bp->target, node->op_name) == 0 ||
         (node->op != NULL && strcmp(bp->target, node->op->name) == 0);
}

/* The node's outputs taken together. */
static void outputs_stats(const DsBreakpointScope *scope, DsTensorStats *all)
{
  double sum = 0.0;
  int64_t n_finite = 0;
  *all = (DsTensorStats){.min = NAN, .max = NAN, .mean = NAN};
  for (guint k = 0; k < scope->n_outputs; k++) {
    DsTensorStats s;
    ds_tensor_get_stats(&scope->outputs[k], &s);
    int64_t finite = s.numel - s.n_nan - s.n_inf;
    all->numel += s.numel;
    all->n_nan += s.n_nan;
    all->n_inf += s.n_inf;
    if (finite > 0) {
      all->min = isnan(all->min) || s.min < all->min ? s.min : all->min;
      all->max = isnan(all->max) || s.max > all->max ? s.max : all->max;
      sum += s.mean * (double)finite;
      n_finite += finite;
    }
  }
  if (n_finite > 0)
    all->mean = sum / (double)n_finite;
}

static gboolean compare(double a, Compare op, double b)
{
  switch (op) {
  case OP_EQ:
    return a == b;
  case OP_NE:
    return a != b;
  case OP_LT:
    return a < b;
  case OP_LE:
    return a <= b;
  case OP_GT:
    return a > b;
  default:
    return a >= b;
  }
}

gboolean ds_breakpoint_test(const DsBreakpoint *bp, const DsBreakpointScope *scope)
{
  DsTensorStats stats = {0};
  if (bp->needs_stats)
    outputs_stats(scope, &stats);
  for (guint i = 0; i < bp->conditions->len; i++) {
    const Condition *c = &g_array_index(bp->conditions, Condition, i);
    double value;
    int64_t symbol;
    switch (c->kind) {
    case VALUE_ITER:
      if (scope->iteration < 0)
        return FALSE;
      value = (double)scope->iteration;
      break;
    case VALUE_NAN:
      value = (double)stats.n_nan;
      break;
    case VALUE_INF:
      value = (double)stats.n_inf;
      break;
    case VALUE_MIN:
      value = stats.min;
      break;
    case VALUE_MAX:
      value = stats.max;
      break;
    case VALUE_MEAN:
      value = stats.mean;
      break;
    case VALUE_NUMEL:
      value = (double)stats.numel;
      break;
    default:
      if (scope->lookup_symbol == NULL ||
          !scope->lookup_symbol(scope->lookup_data, c->symbol, &symbol))
        return FALSE;
      value = (double)symbol;
    }
    if (isnan(value) || !compare(value, c->op, c->number))
      return FALSE;
  }
  return TRUE;
}
