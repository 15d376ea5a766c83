/* ds-expr-text.c: expressions as text: printing, parsing and assumptions.
 *
 * The printed form is what people write and what Python's eval reads given the symbols and
 * max/min: `*`, `//` and `%` share a precedence above `+` and `-`, unary minus binds tighter
 * than all of them, and parentheses appear only where that precedence needs them (plus
 * around a `//` or `%` used as a factor, for readability). Parsing that text gives back the
 * same node.
 */
#include "ds-expr-private.h"

#include <string.h>

#include "ds-error.h"

#define INF             DS_EXPR_INF
#define NEG_INF         (-DS_EXPR_INF)
#define MAX_PARSE_DEPTH 200

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

/* ---- parsing ---- */

gboolean ds_expr_is_valid_name(const char *name)
{
  if (!g_ascii_isalpha(name[0]) && name[0] != '_')
    return FALSE;
  for (const char *c = name + 1; *c != '\0'; c++)
    if (!g_ascii_isalnum(*c) && *c != '_')
      return FALSE;
  return strcmp(name, "max") != 0 && strcmp(name, "min") != 0;
}

typedef struct {
  DsExprCtx *ctx;
  const char *text;
  gsize pos;
  int depth;
  GError **error;
} Parser;

static const DsExpr *parse_expr(Parser *p);

static void skip_space(Parser *p)
{
  while (g_ascii_isspace(p->text[p->pos]))
    p->pos++;
}

static const DsExpr *fail_at(Parser *p, gsize offset, const char *what)
{
  g_set_error(p->error, DS_ERROR, DS_ERROR_PARSE, "%s at offset %" G_GSIZE_FORMAT, what, offset);
  return NULL;
}

/* The error for a builder that returned NULL on an operator at `offset`. */
static const DsExpr *build_failed(Parser *p, gsize offset)
{
  switch (p->ctx->fail) {
  case DS_EXPR_FAIL_OVERFLOW:
    return fail_at(p, offset, "integer overflow");
  case DS_EXPR_FAIL_DIVISOR:
    return fail_at(p, offset, "divisor not known to be positive");
  case DS_EXPR_FAIL_TOO_LARGE:
    return fail_at(p, offset, "expression too large");
  case DS_EXPR_FAIL_NONE:
    break;
  }
  return fail_at(p, offset, "cannot build the expression");
}

static gboolean enter(Parser *p)
{
  if (++p->depth <= MAX_PARSE_DEPTH)
    return TRUE;
  fail_at(p, p->pos, "expression nested too deeply");
  return FALSE;
}

/* Digits at p->pos; `negative` allows 9223372036854775808, the magnitude of G_MININT64. */
static const DsExpr *parse_integer(Parser *p, gboolean negative)
{
  gsize start = p->pos;
  guint64 v = 0, limit = negative ? (guint64)G_MAXINT64 + 1 : (guint64)G_MAXINT64;
  while (g_ascii_isdigit(p->text[p->pos])) {
    guint64 d = (guint64)(p->text[p->pos++] - '0');
    if (v > (limit - d) / 10)
      return fail_at(p, start, "integer out of range");
    v = v * 10 + d;
  }
  int64_t value = negative ? (v == (guint64)G_MAXINT64 + 1 ? G_MININT64 : -(int64_t)v) : (int64_t)v;
  return ds_expr_const(p->ctx, value);
}

static const DsExpr *parse_call(Parser *p, DsExprKind kind, gsize at)
{
  skip_space(p);
  if (p->text[p->pos] != '(')
    return fail_at(p, p->pos,
                   kind == DS_EXPR_MAX ? "expected '(' after max" : "expected '(' after min");
  p->pos++;
  if (!enter(p))
    return NULL;
  const DsExpr *acc = NULL;
  guint n = 0;
  for (;;) {
    gsize arg_at = p->pos;
    const DsExpr *arg = parse_expr(p);
    if (arg == NULL)
      return NULL;
    p->ctx->fail = DS_EXPR_FAIL_NONE;
    acc = n++ == 0 ? arg
                   : (kind == DS_EXPR_MAX ? ds_expr_max(p->ctx, acc, arg)
                                          : ds_expr_min(p->ctx, acc, arg));
    if (acc == NULL)
      return build_failed(p, arg_at);
    skip_space(p);
    if (p->text[p->pos] == ',') {
      p->pos++;
      continue;
    }
    if (p->text[p->pos] != ')')
      return fail_at(p, p->pos, "expected ',' or ')'");
    p->pos++;
    break;
  }
  if (n < 2)
    return fail_at(p, at,
                   kind == DS_EXPR_MAX ? "max() needs at least two arguments"
                                       : "min() needs at least two arguments");
  p->depth--;
  return acc;
}

static const DsExpr *parse_primary(Parser *p)
{
  skip_space(p);
  gsize at = p->pos;
  char c = p->text[at];
  if (g_ascii_isdigit(c))
    return parse_integer(p, FALSE);
  if (g_ascii_isalpha(c) || c == '_') {
    while (g_ascii_isalnum(p->text[p->pos]) || p->text[p->pos] == '_')
      p->pos++;
    g_autofree char *name = g_strndup(p->text + at, p->pos - at);
    if (strcmp(name, "max") == 0)
      return parse_call(p, DS_EXPR_MAX, at);
    if (strcmp(name, "min") == 0)
      return parse_call(p, DS_EXPR_MIN, at);
    gsize after = p->pos;
    skip_space(p);
    if (p->text[p->pos] == '(') {
      g_autofree char *what = g_strdup_printf("unknown function '%s'", name);
      return fail_at(p, at, what);
    }
    p->pos = after;
    /* A merged symbol's form can fail to build (see ds_expr_resolve). */
    p->ctx->fail = DS_EXPR_FAIL_NONE;
    const DsExpr *e = ds_expr_resolve(p->ctx, ds_expr_symbol(p->ctx, name));
    return e != NULL ? e : build_failed(p, at);
  }
  if (c == '(') {
    p->pos++;
    if (!enter(p))
      return NULL;
    const DsExpr *e = parse_expr(p);
    if (e == NULL)
      return NULL;
    skip_space(p);
    if (p->text[p->pos] != ')')
      return fail_at(p, p->pos, "expected ')'");
    p->pos++;
    p->depth--;
    return e;
  }
  return fail_at(p, at, "expected an expression");
}

static const DsExpr *parse_unary(Parser *p)
{
  skip_space(p);
  if (p->text[p->pos] != '-')
    return parse_primary(p);
  gsize at = p->pos++;
  if (!enter(p))
    return NULL;
  skip_space(p);
  const DsExpr *e;
  if (g_ascii_isdigit(p->text[p->pos])) {
    e = parse_integer(p, TRUE);
  } else {
    const DsExpr *operand = parse_unary(p);
    if (operand == NULL)
      return NULL;
    p->ctx->fail = DS_EXPR_FAIL_NONE;
    e = ds_expr_sub(p->ctx, ds_expr_const(p->ctx, 0), operand);
    if (e == NULL)
      return build_failed(p, at);
  }
  p->depth--;
  return e;
}

static const DsExpr *parse_term(Parser *p)
{
  const DsExpr *left = parse_unary(p);
  while (left != NULL) {
    skip_space(p);
    gsize at = p->pos;
    char c = p->text[at];
    if (c == '/' && p->text[at + 1] != '/')
      return fail_at(p, at + 1, "expected '//'");
    if (c != '*' && c != '/' && c != '%')
      break;
    p->pos += c == '/' ? 2 : 1;
    const DsExpr *right = parse_unary(p);
    if (right == NULL)
      return NULL;
    p->ctx->fail = DS_EXPR_FAIL_NONE;
    left = c == '*'   ? ds_expr_mul(p->ctx, left, right)
           : c == '/' ? ds_expr_floordiv(p->ctx, left, right)
                      : ds_expr_mod(p->ctx, left, right);
    if (left == NULL)
      return build_failed(p, at);
  }
  return left;
}

static const DsExpr *parse_expr(Parser *p)
{
  const DsExpr *left = parse_term(p);
  while (left != NULL) {
    skip_space(p);
    gsize at = p->pos;
    char c = p->text[at];
    if (c != '+' && c != '-')
      break;
    p->pos++;
    const DsExpr *right = parse_term(p);
    if (right == NULL)
      return NULL;
    p->ctx->fail = DS_EXPR_FAIL_NONE;
    left = c == '+' ? ds_expr_add(p->ctx, left, right) : ds_expr_sub(p->ctx, left, right);
    if (left == NULL)
      return build_failed(p, at);
  }
  return left;
}

const DsExpr *ds_expr_parse(DsExprCtx *ctx, const char *text, GError **error)
{
  Parser p = {ctx, text != NULL ? text : "", 0, 0, error};
  const DsExpr *e = parse_expr(&p);
  if (e == NULL)
    return NULL;
  skip_space(&p);
  if (p.text[p.pos] != '\0')
    return fail_at(&p, p.pos, "expected an operator or end of text");
  return e;
}

/* ---- assumptions ---- */

static gboolean is_name_char(char c)
{
  return g_ascii_isalnum(c) || c == '_';
}

/* An optionally negative integer literal at *s, surrounded by optional spaces. */
static gboolean read_integer(const char **s, int64_t *out)
{
  const char *c = *s;
  while (g_ascii_isspace(*c))
    c++;
  gboolean negative = *c == '-';
  if (negative)
    c++;
  if (!g_ascii_isdigit(*c))
    return FALSE;
  guint64 v = 0, limit = negative ? (guint64)G_MAXINT64 + 1 : (guint64)G_MAXINT64;
  for (; g_ascii_isdigit(*c); c++) {
    guint64 d = (guint64)(*c - '0');
    if (v > (limit - d) / 10)
      return FALSE;
    v = v * 10 + d;
  }
  while (g_ascii_isspace(*c))
    c++;
  *out = negative ? (v == (guint64)G_MAXINT64 + 1 ? G_MININT64 : -(int64_t)v) : (int64_t)v;
  *s = c;
  return TRUE;
}

/* "NAME in [lo, hi]", with "inf" allowed for hi (closed by ']' or ')'). */
static gboolean assume_in(DsExprCtx *ctx, const char *name, const char *s, const char *reason,
                          GError **error)
{
  int64_t lo, hi = INF;
  while (g_ascii_isspace(*s))
    s++;
  if (*s++ != '[' || !read_integer(&s, &lo) || *s++ != ',') {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "expected 'in [lo, hi]' with integer bounds");
    return FALSE;
  }
  while (g_ascii_isspace(*s))
    s++;
  gboolean inf = strncmp(s, "inf", 3) == 0 && !is_name_char(s[3]);
  if (inf)
    s += 3;
  else if (!read_integer(&s, &hi)) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "the upper bound must be an integer or inf");
    return FALSE;
  }
  while (g_ascii_isspace(*s))
    s++;
  if (!(*s == ']' || (inf && *s == ')'))) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "expected ']' after the upper bound");
    return FALSE;
  }
  for (s++; g_ascii_isspace(*s); s++)
    ;
  if (*s != '\0') {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "unexpected text after the range");
    return FALSE;
  }
  if (lo > hi) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "the range is empty");
    return FALSE;
  }
  return ds_expr_narrow_with_reason(ctx, ds_expr_symbol(ctx, name), lo, hi, reason, error);
}

static gboolean assume(DsExprCtx *ctx, const char *text, const char *reason, GError **error)
{
  const char *s = text;
  while (g_ascii_isspace(*s))
    s++;
  const char *name_start = s;
  while (is_name_char(*s))
    s++;
  g_autofree char *name = g_strndup(name_start, (gsize)(s - name_start));
  const char *after = s;
  while (g_ascii_isspace(*after))
    after++;
  if (s > name_start && after > s && strncmp(after, "in", 2) == 0 && !is_name_char(after[2])) {
    if (!ds_expr_is_valid_name(name)) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "'%s' is not a symbol name", name);
      return FALSE;
    }
    return assume_in(ctx, name, after + 2, reason, error);
  }

  const char *op = strpbrk(text, "<>=");
  if (op == NULL) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT,
                "expected a comparison (==, >=, >, <=, <) or 'in [lo, hi]'");
    return FALSE;
  }
  gboolean or_equal = op[1] == '=';
  if (op[0] == '=' && !or_equal) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "expected '==' at offset %" G_GSIZE_FORMAT,
                (gsize)(op - text));
    return FALSE;
  }
  g_autofree char *left = g_strndup(text, (gsize)(op - text));
  const char *right = op + (or_equal ? 2 : 1);
  if (op[0] == '=') {
    GError *inner = NULL;
    const DsExpr *a = ds_expr_parse(ctx, left, &inner);
    const DsExpr *b = a != NULL ? ds_expr_parse(ctx, right, &inner) : NULL;
    if (b == NULL) {
      g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "%s side: %s", a == NULL ? "left" : "right",
                  inner->message);
      g_error_free(inner);
      return FALSE;
    }
    return ds_expr_ctx_merge(ctx, a, b, reason, error);
  }

  g_strstrip(left);
  if (!ds_expr_is_valid_name(left)) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "the left side must be a single symbol");
    return FALSE;
  }
  int64_t v, lo = NEG_INF, hi = INF;
  if (!read_integer(&right, &v) || *right != '\0') {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "the right side must be an integer");
    return FALSE;
  }
  gboolean overflow = FALSE;
  if (op[0] == '>' && or_equal)
    lo = v;
  else if (op[0] == '>')
    overflow = __builtin_add_overflow(v, 1, &lo);
  else if (or_equal)
    hi = v;
  else
    overflow = __builtin_sub_overflow(v, 1, &hi);
  if (overflow) {
    g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "the bound is out of range");
    return FALSE;
  }
  return ds_expr_narrow_with_reason(ctx, ds_expr_symbol(ctx, left), lo, hi, reason, error);
}

gboolean ds_expr_ctx_assume(DsExprCtx *ctx, const char *text, GError **error)
{
  if (text == NULL)
    text = "";
  g_autofree char *reason = g_strdup_printf("assumption '%s'", text);
  GError *inner = NULL;
  if (assume(ctx, text, reason, &inner))
    return TRUE;
  g_set_error(error, DS_ERROR, DS_ERROR_INPUT, "assumption '%s': %s", text, inner->message);
  g_error_free(inner);
  return FALSE;
}
