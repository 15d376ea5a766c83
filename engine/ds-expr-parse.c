/* ds-expr-parse.c: expressions and facts from text: the parser of what ds-expr-print.c
 * writes, and assumptions ("s1>=8", "s1 in [1, 4096]", "s1 == 2*s2") added to a context's
 * facts. The top of the expression module: it builds nodes (ds-expr.c) and adds facts
 * (ds-expr-facts.c).
 */
#include "ds-expr-private.h"

#include <string.h>

#include "ds-error.h"

#define INF             DS_EXPR_INF
#define NEG_INF         (-DS_EXPR_INF)
#define MAX_PARSE_DEPTH 200

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

/* An assumed range for a symbol. One whose stated lower bound admits 0 ('past_seq in [0, 4096]',
 * 'n >= 0') first lowers the default lower bound of 1, so a dim may be empty; otherwise, and
 * for an upper bound alone ('n <= 64', lo = -inf), it narrows. */
static gboolean narrow_assumed(DsExprCtx *ctx, const DsExpr *symbol, int64_t lo, int64_t hi,
                               const char *reason, GError **error)
{
  if (lo != NEG_INF && lo <= 0 && hi >= 0)
    ds_expr_ctx_allow_empty(ctx, symbol);
  return ds_expr_narrow_with_reason(ctx, symbol, lo, hi, reason, error);
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
  return narrow_assumed(ctx, ds_expr_symbol(ctx, name), lo, hi, reason, error);
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
  return narrow_assumed(ctx, ds_expr_symbol(ctx, left), lo, hi, reason, error);
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
