/* ds-expr-print.c: expressions as text people read: the printed form, ranges, and which
 * names symbols may have. Reads expression nodes and calls nothing of the rest of the
 * module, so every other expression file may use it.
 *
 * The printed form is what people write and what Python's eval reads given the symbols and
 * max/min: `*`, `//` and `%` share a precedence above `+` and `-`, unary minus binds tighter
 * than all of them, and parentheses appear only where that precedence needs them (plus
 * around a `//` or `%` used as a factor, for readability). Parsing that text gives back the
 * same node (ds-expr-parse.c).
 */
#include "ds-expr-private.h"

#include <string.h>

#include "ds-error.h"

#define INF             DS_EXPR_INF
#define NEG_INF         (-DS_EXPR_INF)

/* ---- printing ---- */

/* Where an expression is printed: anywhere, as the left operand of *, // or %, or as a right
 * operand or a factor. */
typedef enum {
  PREC_SUM,
  PREC_LEFT,
  PREC_RIGHT,
} Prec;

static void print_expr(GString *out, const DsExpr *e, Prec prec);

static guint64 magnitude(int64_t v)
{
  return v < 0 ? (guint64)(-(v + 1)) + 1 : (guint64)v;
}

void ds_expr_append_range(GString *out, int64_t lo, int64_t hi)
{
  if (lo <= NEG_INF)
    g_string_append(out, "(-inf, ");
  else
    g_string_append_printf(out, "[%" G_GINT64_FORMAT ", ", lo);
  if (hi >= INF)
    g_string_append(out, "inf)");
  else
    g_string_append_printf(out, "%" G_GINT64_FORMAT "]", hi);
}

/* A monomial's factors joined by '*'. A lone atom with nothing before it but a binary
 * operator prints bare (`(s0 - 3)//2 + 1`); everywhere else // and % get parentheses. */
static void print_mono(GString *out, const DsExpr *mono, gboolean bare)
{
  if (mono->kind != DS_EXPR_MUL) {
    print_expr(out, mono, bare ? PREC_LEFT : PREC_RIGHT);
    return;
  }
  for (guint i = 0; i < mono->n_ops; i++) {
    for (int64_t k = 0; k < mono->coefs[i]; k++) {
      if (i > 0 || k > 0)
        g_string_append_c(out, '*');
      print_expr(out, mono->ops[i], PREC_RIGHT);
    }
  }
}

/* One term of a sum, with its sign: a leading `-` or a binary ` + `/` - `. */
static void print_term(GString *out, int64_t coef, const DsExpr *mono, gboolean first)
{
  guint64 mag = magnitude(coef);
  if (first && coef < 0)
    g_string_append_c(out, '-');
  else if (!first)
    g_string_append(out, coef < 0 ? " - " : " + ");
  if (!first && coef == G_MININT64) {
    /* 9223372036854775808 is no int64 literal: split it so the text parses back. */
    g_string_append_printf(out, "%" G_GINT64_FORMAT "*", G_MAXINT64);
    print_mono(out, mono, FALSE);
    g_string_append(out, " - ");
    print_mono(out, mono, TRUE);
    return;
  }
  if (mag != 1) {
    g_string_append_printf(out, "%" G_GUINT64_FORMAT "*", mag);
    print_mono(out, mono, FALSE);
  } else {
    print_mono(out, mono, !(first && coef < 0));
  }
}

static void print_sum(GString *out, const DsExpr *e)
{
  for (guint i = 0; i < e->n_ops; i++)
    print_term(out, e->coefs[i], e->ops[i], i == 0);
  int64_t c = e->value;
  if (c > 0)
    g_string_append_printf(out, " + %" G_GINT64_FORMAT, c);
  else if (c == G_MININT64)
    g_string_append_printf(out, " - %" G_GINT64_FORMAT " - 1", G_MAXINT64);
  else if (c < 0)
    g_string_append_printf(out, " - %" G_GINT64_FORMAT, -c);
}

static void print_expr(GString *out, const DsExpr *e, Prec prec)
{
  gboolean parens = FALSE;
  switch (e->kind) {
  case DS_EXPR_CONST:
    parens = e->value < 0 && prec == PREC_RIGHT;
    break;
  case DS_EXPR_ADD:
    parens = prec != PREC_SUM;
    break;
  case DS_EXPR_MUL:
  case DS_EXPR_FLOORDIV:
  case DS_EXPR_MOD:
    parens = prec == PREC_RIGHT;
    break;
  default:
    break;
  }
  if (parens)
    g_string_append_c(out, '(');
  switch (e->kind) {
  case DS_EXPR_CONST:
    g_string_append_printf(out, "%" G_GINT64_FORMAT, e->value);
    break;
  case DS_EXPR_SYMBOL:
    g_string_append(out, e->sym->name);
    break;
  case DS_EXPR_ADD:
    print_sum(out, e);
    break;
  case DS_EXPR_MUL:
    if (e->value == 1)
      print_mono(out, e, FALSE);
    else
      print_term(out, e->value, e->mono, TRUE);
    break;
  case DS_EXPR_FLOORDIV:
  case DS_EXPR_MOD: {
    const DsExpr *left = e->ops[0];
    /* `(a % b)//c` reads better than the equivalent `a % b//c`. */
    gboolean other =
        (left->kind == DS_EXPR_FLOORDIV || left->kind == DS_EXPR_MOD) && left->kind != e->kind;
    print_expr(out, left, other ? PREC_RIGHT : PREC_LEFT);
    g_string_append(out, e->kind == DS_EXPR_FLOORDIV ? "//" : " % ");
    print_expr(out, e->ops[1], PREC_RIGHT);
    break;
  }
  case DS_EXPR_MAX:
  case DS_EXPR_MIN:
    g_string_append(out, e->kind == DS_EXPR_MAX ? "max(" : "min(");
    for (guint i = 0; i < e->n_ops; i++) {
      if (i > 0)
        g_string_append(out, ", ");
      print_expr(out, e->ops[i], PREC_SUM);
    }
    g_string_append_c(out, ')');
    break;
  }
  if (parens)
    g_string_append_c(out, ')');
}

char *ds_expr_to_string(const DsExpr *e)
{
  if (e == NULL)
    return g_strdup("?");
  GString *out = g_string_new(NULL);
  print_expr(out, e, PREC_SUM);
  return g_string_free(out, FALSE);
}

/* ---- names ---- */

gboolean ds_expr_is_valid_name(const char *name)
{
  if (!g_ascii_isalpha(name[0]) && name[0] != '_')
    return FALSE;
  for (const char *c = name + 1; *c != '\0'; c++)
    if (!g_ascii_isalnum(*c) && *c != '_')
      return FALSE;
  return strcmp(name, "max") != 0 && strcmp(name, "min") != 0;
}
