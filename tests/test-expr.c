/* test-expr.c: the symbolic shape engine's expressions: canonical forms, ranges, merges,
 * facts, text round trips and evaluation, plus random trees checked against plain int64
 * arithmetic with Python's floor semantics. */
#include <glib.h>
#include <string.h>

#include "ds-error.h"
#include "ds-expr.h"

#define INF DS_EXPR_INF

static const DsExpr *parse(DsExprCtx *ctx, const char *text)
{
  GError *error = NULL;
  const DsExpr *e = ds_expr_parse(ctx, text, &error);
  g_assert_no_error(error);
  g_assert_nonnull(e);
  return e;
}

static void assert_prints(const DsExpr *e, const char *expected)
{
  g_autofree char *text = ds_expr_to_string(e);
  g_assert_cmpstr(text, ==, expected);
}

/* `text` parses to a node printed as `expected`, and `expected` parses to the same node. */
static void check(DsExprCtx *ctx, const char *text, const char *expected)
{
  const DsExpr *e = parse(ctx, text);
  assert_prints(e, expected);
  g_assert_true(parse(ctx, expected) == e);
}

/* Creates s0 .. s<n-1>. */
static void make_symbols(DsExprCtx *ctx, int n)
{
  for (int i = 0; i < n; i++) {
    const DsExpr *s = ds_expr_fresh_symbol(ctx, "s");
    g_assert_cmpint(ds_expr_get_symbol_id(s), ==, i);
  }
}

static const DsExpr *sym(DsExprCtx *ctx, int id)
{
  return ds_expr_ctx_get_symbol(ctx, (guint)id);
}

static void test_symbols(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  const DsExpr *s0 = ds_expr_fresh_symbol(ctx, "s");
  g_assert_cmpstr(ds_expr_get_symbol_name(s0), ==, "s0");
  g_assert_true(ds_expr_symbol(ctx, "s2") == ds_expr_symbol(ctx, "s2"));
  g_assert_cmpstr(ds_expr_get_symbol_name(ds_expr_fresh_symbol(ctx, "s")), ==, "s1");
  g_assert_cmpstr(ds_expr_get_symbol_name(ds_expr_fresh_symbol(ctx, "s")), ==, "s3");
  g_assert_cmpstr(ds_expr_get_symbol_name(ds_expr_fresh_symbol(ctx, "batch")), ==, "batch0");
  g_assert_cmpuint(ds_expr_ctx_get_n_symbols(ctx), ==, 5);
  g_assert_cmpint(ds_expr_get_symbol_id(ds_expr_symbol(ctx, "s2")), ==, 1);
  g_assert_true(ds_expr_ctx_get_symbol(ctx, 0) == s0);
  g_assert_null(ds_expr_ctx_get_symbol(ctx, 5));
  g_assert_cmpint(ds_expr_get_kind(s0), ==, DS_EXPR_SYMBOL);
  g_assert_false(ds_expr_is_unbacked(s0));
  g_assert_null(ds_expr_symbol(ctx, "2x"));
  g_assert_null(ds_expr_symbol(ctx, "a-b"));
  g_assert_null(ds_expr_symbol(ctx, "max"));
  g_assert_null(ds_expr_symbol(ctx, ""));
  g_assert_cmpint(ds_expr_get_symbol_id(ds_expr_const(ctx, 3)), ==, -1);
  g_assert_null(ds_expr_get_symbol_name(ds_expr_const(ctx, 3)));
  int64_t lo, hi;
  ds_expr_ctx_get_range(ctx, s0, &lo, &hi);
  g_assert_cmpint(lo, ==, 1);
  g_assert_cmpint(hi, ==, INF);
  ds_expr_ctx_free(ctx);
}

static void test_canonical_sums(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 3);
  const DsExpr *s0 = sym(ctx, 0), *s1 = sym(ctx, 1);
  check(ctx, "s0 + s0", "2*s0");
  check(ctx, "3*s0 - s0", "2*s0");
  check(ctx, "s0 - s0", "0");
  check(ctx, "0*s0", "0");
  check(ctx, "2 + 3*4", "14");
  check(ctx, "s1*10", "10*s1");
  check(ctx, "s1*s0", "s0*s1");
  check(ctx, "(s0 + 1)*(s0 - 1)", "s0*s0 - 1");
  check(ctx, "2*(s0 + 3)", "2*s0 + 6");
  check(ctx, "4 - s0", "-s0 + 4");
  check(ctx, "s0 - 1", "s0 - 1");
  check(ctx, "-(s0*s1) + 4", "-s0*s1 + 4");
  check(ctx, "s2 + s0*s1 + s0 + 4", "s0*s1 + s0 + s2 + 4");
  check(ctx, "(s0 + s1)*(s0 + s1)", "s0*s0 + 2*s0*s1 + s1*s1");
  check(ctx, "s0*s0*s0 - s0*s0*s0", "0");
  check(ctx, "-3*s0", "-3*s0");
  check(ctx, "-s0", "-s0");

  g_assert_true(ds_expr_add(ctx, s0, s1) == ds_expr_add(ctx, s1, s0));
  g_assert_true(ds_expr_mul(ctx, s0, s1) == ds_expr_mul(ctx, s1, s0));
  g_assert_true(ds_expr_mul(ctx, ds_expr_const(ctx, 1), s0) == s0);
  g_assert_true(ds_expr_add(ctx, s0, ds_expr_const(ctx, 0)) == s0);
  g_assert_true(ds_expr_sub(ctx, s1, s1) == ds_expr_const(ctx, 0));
  g_assert_true(ds_expr_const(ctx, 100000) == ds_expr_const(ctx, 100000));

  int64_t v;
  g_assert_true(ds_expr_get_const(parse(ctx, "2*3 - 7"), &v));
  g_assert_cmpint(v, ==, -1);
  g_assert_false(ds_expr_get_const(s0, &v));
  g_assert_cmpint(ds_expr_get_kind(parse(ctx, "10*s1")), ==, DS_EXPR_MUL);
  g_assert_cmpint(ds_expr_get_kind(parse(ctx, "s0*s1")), ==, DS_EXPR_MUL);
  g_assert_cmpint(ds_expr_get_kind(parse(ctx, "s0 + 1")), ==, DS_EXPR_ADD);
  g_assert_cmpint(ds_expr_get_kind(parse(ctx, "7")), ==, DS_EXPR_CONST);

  /* Coefficients that leave int64 fail instead of wrapping. */
  const DsExpr *big = ds_expr_const(ctx, G_MAXINT64);
  g_assert_null(ds_expr_add(ctx, big, ds_expr_const(ctx, 1)));
  g_assert_null(ds_expr_mul(ctx, ds_expr_mul(ctx, big, s0), ds_expr_const(ctx, 2)));
  g_assert_null(ds_expr_add(ctx, NULL, s0));
  check(ctx, "-9223372036854775807 - 1", "-9223372036854775808");
  check(ctx, "s0 - 9223372036854775807 - 1", "s0 - 9223372036854775807 - 1");
  check(ctx, "s1 - 9223372036854775807*s0 - s0", "-9223372036854775808*s0 + s1");
  check(ctx, "s0*s0 - 9223372036854775807*s1 - s1", "s0*s0 - 9223372036854775807*s1 - s1");
  ds_expr_ctx_free(ctx);
}

static void test_canonical_floordiv(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 3);
  check(ctx, "(6*s0 + 4)//2", "3*s0 + 2");
  check(ctx, "(2*s0 + 1)//2", "s0");
  check(ctx, "(s0 - 3)//2 + 1", "(s0 - 3)//2 + 1");
  check(ctx, "(4*s0)//4", "s0");
  check(ctx, "(s0 + 4)//2", "s0//2 + 2");
  check(ctx, "(4*s0 + s1 + 8)//4", "s0 + s1//4 + 2");
  check(ctx, "(4*s0 + s1 + 9)//4", "s0 + (s1 + 9)//4");
  check(ctx, "s0//1", "s0");
  check(ctx, "7//2", "3");
  check(ctx, "-7//2", "-4");
  check(ctx, "s0//2//3", "s0//6");
  check(ctx, "(s0*s1)//s1", "s0");
  check(ctx, "(s0*s1 + s1 + 1)//s1", "s0 + 1//s1 + 1");
  check(ctx, "(2*s0 + 2)//(s0 + 1)", "2");
  check(ctx, "s0//(s1 + 1)", "s0//(s1 + 1)");
  check(ctx, "s0//(2*s1)", "s0//(2*s1)");
  check(ctx, "2*(s0//3)", "2*(s0//3)");
  check(ctx, "-(s0//3)", "-(s0//3)");
  check(ctx, "(s1 % 3)//2", "(s1 % 3)//2");
  check(ctx, "(s0 - 1)//s0", "0");
  check(ctx, "(s0 - 1)//s1", "(s0 - 1)//s1");

  /* A range that puts the remainder in [0, k) removes the division. */
  const DsExpr *u = ds_expr_unbacked(ctx, ds_expr_const(ctx, 1));
  const DsExpr *e =
      ds_expr_floordiv(ctx, ds_expr_add(ctx, parse(ctx, "2*s0"), u), ds_expr_const(ctx, 2));
  g_assert_true(e == sym(ctx, 0));
  g_assert_true(ds_expr_floordiv(ctx, u, ds_expr_const(ctx, 2)) == ds_expr_const(ctx, 0));

  /* Divisors not known to be positive. */
  g_assert_null(ds_expr_floordiv(ctx, sym(ctx, 0), ds_expr_const(ctx, 0)));
  g_assert_null(ds_expr_floordiv(ctx, sym(ctx, 0), ds_expr_const(ctx, -2)));
  g_assert_null(ds_expr_floordiv(ctx, sym(ctx, 0), parse(ctx, "s1 - 1")));
  g_assert_null(ds_expr_floordiv(ctx, sym(ctx, 0), u));
  g_assert_null(ds_expr_mod(ctx, sym(ctx, 0), u));
  g_assert_nonnull(ds_expr_floordiv(ctx, sym(ctx, 0), parse(ctx, "max(s1 - 1, 1)")));
  ds_expr_ctx_free(ctx);
}

static void test_canonical_mod(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 3);
  check(ctx, "(4*s0 + 3) % 2", "1");
  check(ctx, "(3*s0) % 3", "0");
  check(ctx, "(s0 + 1) % 4", "(s0 + 1) % 4");
  check(ctx, "(s0 + 4) % 4", "s0 % 4");
  check(ctx, "s0 % 1", "0");
  check(ctx, "-7 % 3", "2");
  check(ctx, "7 % 3", "1");
  check(ctx, "(s0 % 6) % 3", "s0 % 3");
  check(ctx, "(s0 % 3) % 5", "s0 % 3");
  check(ctx, "(s0*s1) % s1", "0");
  check(ctx, "(s0*s1 + 1) % s1", "1 % s1");
  check(ctx, "s1 % s1", "0");
  check(ctx, "s0 % (s1 + 1)", "s0 % (s1 + 1)");
  check(ctx, "(s0 % 4)//4", "0");
  check(ctx, "(s0 % 4) % 4", "s0 % 4");
  check(ctx, "s0 - s0 % 4", "s0 - s0 % 4");
  const DsExpr *u = ds_expr_unbacked(ctx, ds_expr_const(ctx, 4));
  g_assert_true(ds_expr_mod(ctx, u, ds_expr_const(ctx, 5)) == u);
  g_assert_true(
      ds_expr_mod(ctx, ds_expr_add(ctx, u, ds_expr_const(ctx, 5)), ds_expr_const(ctx, 5)) == u);
  g_assert_null(ds_expr_mod(ctx, u, ds_expr_const(ctx, 0)));
  ds_expr_ctx_free(ctx);
}

static void test_canonical_minmax(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 3);
  const DsExpr *s0 = sym(ctx, 0), *s1 = sym(ctx, 1);
  check(ctx, "max(s0, s0)", "s0");
  check(ctx, "max(s1, 1)", "s1");
  check(ctx, "min(s1, 1)", "1");
  check(ctx, "max(s1, s1 + 2)", "s1 + 2");
  check(ctx, "min(s1, s1 + 2)", "s1");
  check(ctx, "max(3, 5)", "5");
  check(ctx, "min(3, 5, -1)", "-1");
  check(ctx, "max(s1, s0)", "max(s0, s1)");
  check(ctx, "max(max(s0, s1), s2)", "max(s0, s1, s2)");
  check(ctx, "max(s2, max(s1, s0), s0)", "max(s0, s1, s2)");
  check(ctx, "max(s1, 2*s2)", "max(s1, 2*s2)");
  check(ctx, "max(s0 - 5, 0)", "max(s0 - 5, 0)");
  check(ctx, "min(s0, 4, 7)", "min(s0, 4)");
  check(ctx, "max(s0, 4, 7)", "max(s0, 7)");
  check(ctx, "max(min(s0, s1), s2)", "max(s2, min(s0, s1))");
  check(ctx, "max(s0, s1) + max(s1, s0)", "2*max(s0, s1)");
  check(ctx, "-max(s0, s1)", "-max(s0, s1)");
  check(ctx, "max(s0, s1)//2", "max(s0, s1)//2");
  g_assert_true(ds_expr_max(ctx, s0, s1) == ds_expr_max(ctx, s1, s0));
  g_assert_true(ds_expr_min(ctx, s0, s0) == s0);

  /* Facts learned later decide comparisons that were open. */
  const DsExpr *e = parse(ctx, "max(s0 - 5, 0)");
  g_assert_true(ds_expr_ctx_assume(ctx, "s0 >= 5", NULL));
  assert_prints(ds_expr_resolve(ctx, e), "s0 - 5");
  g_assert_true(ds_expr_resolve(ctx, e) == parse(ctx, "max(s0 - 5, 0)"));
  ds_expr_ctx_free(ctx);
}

/* Resolving or rebuilding a canonical node gives the node back. */
static void test_idempotence(void)
{
  static const char *texts[] = {
      "s0",
      "s0*s1 + 4",
      "(s0 - 3)//2 + 1",
      "max(s1, 2*s2)",
      "min(s0, s1 - 1)",
      "(s0 + 1) % 4",
      "s0//(s1 + 1) + s0 % (s1 + 1)",
      "max(s0, s1)*min(s1, s2) - 7",
      "(s0*s1)//3",
  };
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 3);
  for (guint i = 0; i < G_N_ELEMENTS(texts); i++) {
    const DsExpr *e = parse(ctx, texts[i]);
    g_assert_true(ds_expr_resolve(ctx, e) == e);
    g_assert_true(ds_expr_resolve(ctx, ds_expr_resolve(ctx, e)) == e);
    g_assert_true(ds_expr_add(ctx, e, ds_expr_const(ctx, 0)) == e);
    g_assert_true(ds_expr_mul(ctx, ds_expr_const(ctx, 1), e) == e);
    g_assert_true(ds_expr_max(ctx, e, e) == e);
    g_assert_true(ds_expr_floordiv(ctx, e, ds_expr_const(ctx, 1)) == e);
  }
  /* After a merge, resolving twice is stable too. */
  g_assert_true(ds_expr_ctx_assume(ctx, "s1 == 2*s2", NULL));
  for (guint i = 0; i < G_N_ELEMENTS(texts); i++) {
    const DsExpr *r = ds_expr_resolve(ctx, parse(ctx, texts[i]));
    g_assert_true(ds_expr_resolve(ctx, r) == r);
    g_autofree char *text = ds_expr_to_string(r);
    g_assert_true(parse(ctx, text) == r);
  }
  ds_expr_ctx_free(ctx);
}

static void test_roundtrip_strings(void)
{
  static const char *texts[] = {
      "0",
      "-1",
      "123456789",
      "s0",
      "10*s1",
      "s0*s1",
      "s0*s0",
      "max(s1, s2)",
      "min(s1, s2, s0)",
      "(s0 - 3)//2 + 1",
      "s0 - 1",
      "-s0 + 4",
      "(s0 + 1) % 4",
      "s0*s1 + 4",
      "max(s0, s1)*min(s1, s2)",
      "(s0*s1 - 7)//(s2 + 2)",
      "-(s0 % 3)",
      "2*(s0 % 3) + s1//5",
      "max(-s0, -3)",
      "max(s0//2, s1 % 7, 3)",
      "((s0 + 1) % 4)//3",
      "(s0 % 7 + 1)//2",
      "s0//(s1*s2)",
      "s0 % (3*s1)",
      "-s0*s1*s2 + s0",
      "x_long_name + y2",
      "3*max(s0, s1)*s2",
      "-9223372036854775808",
      "9223372036854775807*s0",
      "(s0 - 1)*(s1 - 1)*(s2 - 1)",
  };
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 3);
  for (guint i = 0; i < G_N_ELEMENTS(texts); i++) {
    const DsExpr *e = parse(ctx, texts[i]);
    g_autofree char *text = ds_expr_to_string(e);
    const DsExpr *again = parse(ctx, text);
    g_assert_true(again == e);
    g_autofree char *text2 = ds_expr_to_string(again);
    g_assert_cmpstr(text, ==, text2);
  }
  /* Whitespace is free. */
  g_assert_true(parse(ctx, " ( s0-3 ) //2+1 ") == parse(ctx, "(s0 - 3)//2 + 1"));
  g_assert_true(parse(ctx, "max(\ts1,\n2*s2 )") == parse(ctx, "max(s1, 2*s2)"));
  ds_expr_ctx_free(ctx);
}

/* ---- random trees ---- */

typedef enum { R_CONST, R_SYM, R_ADD, R_SUB, R_MUL, R_FLOORDIV, R_MOD, R_MAX, R_MIN, R_NEG } RKind;

typedef struct RNode {
  RKind kind;
  int64_t value;
  struct RNode *a, *b;
} RNode;

#define N_RSYMS 3

static RNode *rnode(RKind kind, int64_t value, RNode *a, RNode *b)
{
  RNode *n = g_new0(RNode, 1);
  *n = (RNode){kind, value, a, b};
  return n;
}

static void rnode_free(RNode *n)
{
  if (n == NULL)
    return;
  rnode_free(n->a);
  rnode_free(n->b);
  g_free(n);
}

/* Python's // and %, written independently of the engine. */
static int64_t py_div(int64_t a, int64_t b)
{
  int64_t q = a / b;
  return (a % b != 0 && ((a % b < 0) != (b < 0))) ? q - 1 : q;
}

static int64_t py_mod(int64_t a, int64_t b)
{
  return a - b * py_div(a, b);
}

/* Plain evaluation of the tree; FALSE on int64 overflow or a zero divisor. */
static gboolean rnode_eval(const RNode *n, const int64_t *values, int64_t *out)
{
  int64_t a = 0, b = 0;
  if (n->a != NULL && !rnode_eval(n->a, values, &a))
    return FALSE;
  if (n->b != NULL && !rnode_eval(n->b, values, &b))
    return FALSE;
  switch (n->kind) {
  case R_CONST:
    *out = n->value;
    return TRUE;
  case R_SYM:
    *out = values[n->value];
    return TRUE;
  case R_ADD:
    return !__builtin_add_overflow(a, b, out);
  case R_SUB:
    return !__builtin_sub_overflow(a, b, out);
  case R_MUL:
    return !__builtin_mul_overflow(a, b, out);
  case R_NEG:
    return !__builtin_sub_overflow(0, a, out);
  case R_FLOORDIV:
    if (b == 0)
      return FALSE;
    *out = py_div(a, b);
    return TRUE;
  case R_MOD:
    if (b == 0)
      return FALSE;
    *out = py_mod(a, b);
    return TRUE;
  case R_MAX:
    *out = MAX(a, b);
    return TRUE;
  case R_MIN:
    *out = MIN(a, b);
    return TRUE;
  }
  return FALSE;
}

/* A divisor the engine accepts (provably >= 1 with symbols in [1, inf)). */
static RNode *random_divisor(GRand *rand, const DsExpr **e, DsExprCtx *ctx)
{
  int64_t k = g_rand_int_range(rand, 1, 7);
  RNode *s = rnode(R_SYM, g_rand_int_range(rand, 0, N_RSYMS), NULL, NULL);
  const DsExpr *se = sym(ctx, (int)s->value);
  switch (g_rand_int_range(rand, 0, 5)) {
  case 0:
  case 1:
    rnode_free(s);
    *e = ds_expr_const(ctx, k);
    return rnode(R_CONST, k, NULL, NULL);
  case 2:
    *e = se;
    return s;
  case 3:
    *e = ds_expr_add(ctx, se, ds_expr_const(ctx, k));
    return rnode(R_ADD, 0, s, rnode(R_CONST, k, NULL, NULL));
  default:
    *e = ds_expr_max(ctx, ds_expr_sub(ctx, se, ds_expr_const(ctx, k)), ds_expr_const(ctx, 2));
    return rnode(R_MAX, 0, rnode(R_SUB, 0, s, rnode(R_CONST, k, NULL, NULL)),
                 rnode(R_CONST, 2, NULL, NULL));
  }
}

/* A random tree and, in *e, the engine's node built from it operation by operation. */
static RNode *random_tree(GRand *rand, int depth, DsExprCtx *ctx, const DsExpr **e)
{
  if (depth == 0 || g_rand_int_range(rand, 0, 4) == 0) {
    if (g_rand_boolean(rand)) {
      int64_t v = g_rand_int_range(rand, -6, 7);
      *e = ds_expr_const(ctx, v);
      return rnode(R_CONST, v, NULL, NULL);
    }
    int s = g_rand_int_range(rand, 0, N_RSYMS);
    *e = sym(ctx, s);
    return rnode(R_SYM, s, NULL, NULL);
  }
  RKind kind = (RKind)g_rand_int_range(rand, R_ADD, R_NEG + 1);
  const DsExpr *ea, *eb = NULL;
  RNode *a = random_tree(rand, depth - 1, ctx, &ea), *b = NULL;
  if (kind == R_FLOORDIV || kind == R_MOD)
    b = random_divisor(rand, &eb, ctx);
  else if (kind != R_NEG)
    b = random_tree(rand, depth - 1, ctx, &eb);
  switch (kind) {
  case R_ADD:
    *e = ds_expr_add(ctx, ea, eb);
    break;
  case R_SUB:
    *e = ds_expr_sub(ctx, ea, eb);
    break;
  case R_MUL:
    *e = ds_expr_mul(ctx, ea, eb);
    break;
  case R_NEG:
    *e = ds_expr_sub(ctx, ds_expr_const(ctx, 0), ea);
    break;
  case R_FLOORDIV:
    *e = ds_expr_floordiv(ctx, ea, eb);
    break;
  case R_MOD:
    *e = ds_expr_mod(ctx, ea, eb);
    break;
  case R_MAX:
    *e = ds_expr_max(ctx, ea, eb);
    break;
  case R_MIN:
    *e = ds_expr_min(ctx, ea, eb);
    break;
  default:
    g_assert_not_reached();
  }
  g_assert_nonnull(*e);
  return rnode(kind, 0, a, b);
}

static void test_random_trees(void)
{
  GRand *rand = g_rand_new_with_seed(20240611);
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, N_RSYMS);
  guint checked = 0;
  for (int iter = 0; iter < 3000; iter++) {
    const DsExpr *e;
    RNode *tree = random_tree(rand, 1 + iter % 5, ctx, &e);
    g_autofree char *text = ds_expr_to_string(e);
    GError *error = NULL;
    const DsExpr *again = ds_expr_parse(ctx, text, &error);
    g_assert_no_error(error);
    if (again != e)
      g_error("round trip of '%s' gave a different node", text);
    g_assert_true(ds_expr_resolve(ctx, e) == e);
    for (int sample = 0; sample < 8; sample++) {
      int64_t values[N_RSYMS], want, got;
      for (int i = 0; i < N_RSYMS; i++)
        values[i] = g_rand_int_range(rand, 1, 13);
      if (!rnode_eval(tree, values, &want))
        continue;
      if (!ds_expr_eval(NULL, e, values, NULL, &got))
        g_error("'%s' failed to evaluate", text);
      if (got != want)
        g_error("'%s' at s0=%" G_GINT64_FORMAT " s1=%" G_GINT64_FORMAT " s2=%" G_GINT64_FORMAT
                ": %" G_GINT64_FORMAT ", want %" G_GINT64_FORMAT,
                text, values[0], values[1], values[2], got, want);
      checked++;
    }
    rnode_free(tree);
  }
  g_assert_cmpuint(checked, >, 20000);
  ds_expr_ctx_free(ctx);
  g_rand_free(rand);
}

/* ---- facts ---- */

static void test_merge_symbols(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 8);
  const DsExpr *before = parse(ctx, "s6 + s4");
  GError *error = NULL;
  g_assert_true(
      ds_expr_ctx_merge(ctx, sym(ctx, 4), sym(ctx, 6), "node 'dot3' (batch_dot)", &error));
  g_assert_no_error(error);
  g_assert_true(ds_expr_resolve(ctx, sym(ctx, 6)) == sym(ctx, 4));
  g_assert_true(ds_expr_resolve(ctx, sym(ctx, 4)) == sym(ctx, 4));
  assert_prints(ds_expr_resolve(ctx, before), "2*s4");
  check(ctx, "s6 - s4", "0");
  g_assert_cmpint(ds_expr_equal(ctx, sym(ctx, 4), sym(ctx, 6)), ==, DS_EXPR_TRUE);

  /* A constant binds the symbol. */
  g_assert_true(ds_expr_ctx_merge(ctx, sym(ctx, 1), ds_expr_const(ctx, 384), NULL, &error));
  g_assert_no_error(error);
  assert_prints(ds_expr_resolve(ctx, sym(ctx, 1)), "384");
  check(ctx, "s1*2 + s0", "s0 + 768");

  /* Chains resolve to the oldest symbol. */
  g_assert_true(ds_expr_ctx_merge(ctx, sym(ctx, 5), sym(ctx, 3), NULL, &error));
  g_assert_true(ds_expr_ctx_merge(ctx, sym(ctx, 7), sym(ctx, 5), NULL, &error));
  g_assert_true(ds_expr_ctx_merge(ctx, sym(ctx, 3), sym(ctx, 2), NULL, &error));
  g_assert_no_error(error);
  for (int i = 3; i <= 7; i += 2)
    g_assert_true(ds_expr_resolve(ctx, sym(ctx, i)) == sym(ctx, 2));
  /* Merging what is already equal is a no-op. */
  GPtrArray *facts = ds_expr_ctx_list_facts(ctx);
  guint n_facts = facts->len;
  ds_expr_facts_free(facts);
  g_assert_true(ds_expr_ctx_merge(ctx, sym(ctx, 7), sym(ctx, 3), NULL, &error));
  facts = ds_expr_ctx_list_facts(ctx);
  g_assert_cmpuint(facts->len, ==, n_facts);
  ds_expr_facts_free(facts);
  ds_expr_ctx_free(ctx);
}

static void test_merge_expressions(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 6);
  GError *error = NULL;
  /* Solved for the symbol whose coefficient divides the rest. */
  g_assert_true(ds_expr_ctx_merge(ctx, parse(ctx, "2*s1"), parse(ctx, "4*s2"), NULL, &error));
  g_assert_no_error(error);
  assert_prints(ds_expr_resolve(ctx, sym(ctx, 1)), "2*s2");
  /* s3 == s0 + 3: s3 is newer, and its range [1, inf) moves onto s0 + 3. */
  g_assert_true(ds_expr_ctx_merge(ctx, sym(ctx, 0), parse(ctx, "s3 - 3"), NULL, &error));
  g_assert_no_error(error);
  assert_prints(ds_expr_resolve(ctx, sym(ctx, 3)), "s0 + 3");
  /* s4 - 3 == s5 binds s5, and s5 >= 1 makes s4 >= 4. */
  g_assert_true(ds_expr_ctx_merge(ctx, parse(ctx, "s4 - 3"), sym(ctx, 5), NULL, &error));
  int64_t lo, hi;
  ds_expr_ctx_get_range(ctx, sym(ctx, 4), &lo, &hi);
  g_assert_cmpint(lo, ==, 4);
  g_assert_cmpint(hi, ==, INF);
  ds_expr_ctx_get_range(ctx, sym(ctx, 5), &lo, &hi);
  g_assert_cmpint(lo, ==, 1);
  ds_expr_ctx_free(ctx);

  /* A merge whose substitution pushes another symbol's coefficient out of int64 is refused,
   * and a symbol always keeps a form. */
  ctx = ds_expr_ctx_new();
  make_symbols(ctx, 4);
  g_assert_true(ds_expr_ctx_assume(ctx, "s1 == 4611686018427387904*s2", &error));
  g_assert_no_error(error);
  g_assert_false(ds_expr_ctx_assume(ctx, "s2 == 2*s3", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_INPUT);
  g_assert_nonnull(strstr(error->message, "s1 would overflow int64"));
  g_clear_error(&error);
  assert_prints(ds_expr_resolve(ctx, sym(ctx, 1)), "4611686018427387904*s2");
  g_assert_true(ds_expr_resolve(ctx, sym(ctx, 2)) == sym(ctx, 2));
  ds_expr_ctx_free(ctx);
}

static void test_merge_ranges(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 9);
  GError *error = NULL;
  int64_t lo, hi;
  /* The representative keeps the intersection of both ranges. */
  g_assert_true(ds_expr_ctx_narrow_range(ctx, sym(ctx, 6), 3, 8, &error));
  g_assert_true(ds_expr_ctx_narrow_range(ctx, sym(ctx, 5), 1, 5, &error));
  g_assert_true(ds_expr_ctx_merge(ctx, sym(ctx, 5), sym(ctx, 6), NULL, &error));
  g_assert_no_error(error);
  ds_expr_ctx_get_range(ctx, sym(ctx, 5), &lo, &hi);
  g_assert_cmpint(lo, ==, 3);
  g_assert_cmpint(hi, ==, 5);
  ds_expr_ctx_get_range(ctx, sym(ctx, 6), &lo, &hi);
  g_assert_cmpint(lo, ==, 3);
  g_assert_cmpint(hi, ==, 5);

  /* 3 vs s1 with s1 >= 4. */
  g_assert_true(ds_expr_ctx_assume(ctx, "s1 >= 4", &error));
  GPtrArray *facts = ds_expr_ctx_list_facts(ctx);
  guint n_facts = facts->len;
  ds_expr_facts_free(facts);
  g_assert_false(ds_expr_ctx_merge(ctx, ds_expr_const(ctx, 3), sym(ctx, 1), NULL, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
  g_assert_cmpstr(error->message, ==, "3 vs s1: s1 is in [4, inf)");
  g_clear_error(&error);
  facts = ds_expr_ctx_list_facts(ctx);
  g_assert_cmpuint(facts->len, ==, n_facts);
  ds_expr_facts_free(facts);
  g_assert_true(ds_expr_resolve(ctx, sym(ctx, 1)) == sym(ctx, 1));

  /* Different constants. */
  g_assert_false(
      ds_expr_ctx_merge(ctx, ds_expr_const(ctx, 3), ds_expr_const(ctx, 4), NULL, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
  g_assert_cmpstr(error->message, ==, "3 vs 4: they differ by 1");
  g_clear_error(&error);
  g_assert_false(ds_expr_ctx_merge(ctx, parse(ctx, "s0 + 1"), sym(ctx, 0), NULL, &error));
  g_assert_cmpstr(error->message, ==, "s0 + 1 vs s0: they differ by 1");
  g_clear_error(&error);

  /* Disjoint ranges of two symbols. */
  g_assert_true(ds_expr_ctx_assume(ctx, "s7 in [1, 2]", &error));
  g_assert_true(ds_expr_ctx_assume(ctx, "s8 in [5, 6]", &error));
  g_assert_false(ds_expr_ctx_merge(ctx, sym(ctx, 7), sym(ctx, 8), NULL, &error));
  g_assert_cmpstr(error->message, ==, "s7 vs s8: s7 is in [1, 2], s8 is in [5, 6]");
  g_clear_error(&error);

  /* A constant outside the symbol's range, and one inside. */
  g_assert_true(ds_expr_ctx_assume(ctx, "s2 <= 100", &error));
  g_assert_false(ds_expr_ctx_merge(ctx, sym(ctx, 2), ds_expr_const(ctx, 384), NULL, &error));
  g_assert_nonnull(strstr(error->message, "s2 is in [1, 100]"));
  g_clear_error(&error);
  g_assert_true(ds_expr_ctx_merge(ctx, sym(ctx, 2), ds_expr_const(ctx, 64), NULL, &error));
  ds_expr_ctx_get_range(ctx, sym(ctx, 2), &lo, &hi);
  g_assert_cmpint(lo, ==, 64);
  g_assert_cmpint(hi, ==, 64);

  /* Integer solutions only: 2*s3 == s4 with s4 in [3, 3] has none. */
  g_assert_true(ds_expr_ctx_assume(ctx, "s4 in [3, 3]", &error));
  g_assert_false(ds_expr_ctx_merge(ctx, parse(ctx, "2*s3"), parse(ctx, "s4 + 0*s0"), NULL, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
  g_clear_error(&error);
  ds_expr_ctx_free(ctx);
}

static void test_opaque_facts(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 4);
  GError *error = NULL;
  const DsExpr *a = parse(ctx, "s0*s1"), *b = parse(ctx, "s2*s3");
  g_assert_cmpint(ds_expr_equal(ctx, a, b), ==, DS_EXPR_UNKNOWN);
  g_assert_true(ds_expr_ctx_merge(ctx, a, b, "node 'reshape1' (Reshape)", &error));
  g_assert_no_error(error);
  g_assert_true(ds_expr_resolve(ctx, a) == a);
  g_assert_true(ds_expr_resolve(ctx, b) == b);
  g_assert_cmpint(ds_expr_equal(ctx, a, b), ==, DS_EXPR_TRUE);
  g_assert_cmpint(ds_expr_equal(ctx, b, a), ==, DS_EXPR_TRUE);
  g_assert_true(ds_expr_ctx_merge(ctx, b, a, "again", &error));
  GPtrArray *facts = ds_expr_ctx_list_facts(ctx);
  g_assert_cmpuint(facts->len, ==, 1);
  DsExprFact *fact = g_ptr_array_index(facts, 0);
  g_assert_cmpstr(fact->text, ==, "s0*s1 == s2*s3");
  g_assert_cmpstr(fact->reason, ==, "node 'reshape1' (Reshape)");
  ds_expr_facts_free(facts);

  /* Once s1 is 1 the fact solves for s0 (the only symbol it is linear in), keeping its
   * reason; once s3 is 1 too, s0 is s2. */
  g_assert_true(ds_expr_ctx_assume(ctx, "s1 == 1", &error));
  g_assert_no_error(error);
  assert_prints(ds_expr_resolve(ctx, sym(ctx, 0)), "s2*s3");
  facts = ds_expr_ctx_list_facts(ctx);
  fact = g_ptr_array_index(facts, facts->len - 1);
  g_assert_cmpstr(fact->text, ==, "s0 == s2*s3");
  g_assert_cmpstr(fact->reason, ==, "node 'reshape1' (Reshape)");
  ds_expr_facts_free(facts);
  g_assert_true(ds_expr_ctx_assume(ctx, "s3 == 1", &error));
  g_assert_no_error(error);
  g_assert_true(ds_expr_resolve(ctx, sym(ctx, 0)) == sym(ctx, 2));
  g_assert_true(ds_expr_resolve(ctx, a) == ds_expr_resolve(ctx, b));

  /* An opaque fact that later facts contradict makes the later merge fail. */
  DsExprCtx *ctx2 = ds_expr_ctx_new();
  make_symbols(ctx2, 4);
  g_assert_true(ds_expr_ctx_merge(ctx2, parse(ctx2, "s0*s1"), parse(ctx2, "s2*s3"), NULL, &error));
  g_assert_true(ds_expr_ctx_assume(ctx2, "s0 == 2", &error));
  g_assert_true(ds_expr_ctx_assume(ctx2, "s1 == 3", &error));
  g_assert_true(ds_expr_ctx_assume(ctx2, "s2 == 4", &error));
  g_assert_no_error(error);
  g_assert_false(ds_expr_ctx_assume(ctx2, "s3 == 2", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_INPUT);
  g_clear_error(&error);
  /* 6 == 4*s3 has no integer solution: still opaque, still consistent. */
  g_assert_true(ds_expr_resolve(ctx2, sym(ctx2, 3)) == sym(ctx2, 3));
  ds_expr_ctx_free(ctx2);
  ds_expr_ctx_free(ctx);
}

static void test_ranges_bounds(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 3);
  GError *error = NULL;
  int64_t lo, hi;
  struct {
    const char *text;
    int64_t lo, hi;
  } before[] = {
      {"s0 - 1", 0, INF},     {"2*s0 + 3", 5, INF}, {"-s0", -INF, -1},
      {"s0 % 4", 0, 3},       {"s0//3", 0, INF},    {"s0 - s1", -INF, INF},
      {"max(s0, 7)", 7, INF}, {"min(s0, 7)", 1, 7}, {"s0*s1*s2", 1, INF},
  };
  for (guint i = 0; i < G_N_ELEMENTS(before); i++) {
    ds_expr_bounds(ctx, parse(ctx, before[i].text), &lo, &hi);
    g_assert_cmpint(lo, ==, before[i].lo);
    g_assert_cmpint(hi, ==, before[i].hi);
  }
  g_assert_true(ds_expr_ctx_narrow_range(ctx, sym(ctx, 0), 2, 10, &error));
  g_assert_no_error(error);
  struct {
    const char *text;
    int64_t lo, hi;
  } after[] = {
      {"s0*s0", 4, 100},       {"s0//3", 0, 3},     {"s0 % 4", 0, 3},         {"s0 % 16", 2, 10},
      {"max(s0, 20)", 20, 20}, {"-s0 + 1", -9, -1}, {"(s0 - 12)//4", -3, -1}, {"s1//s0", 0, INF},
      {"-7//s0", -4, -1},      {"s0*s1", 2, INF},
  };
  for (guint i = 0; i < G_N_ELEMENTS(after); i++) {
    ds_expr_bounds(ctx, parse(ctx, after[i].text), &lo, &hi);
    g_assert_cmpint(lo, ==, after[i].lo);
    g_assert_cmpint(hi, ==, after[i].hi);
  }
  /* Saturation instead of overflow. */
  g_assert_true(ds_expr_ctx_narrow_range(ctx, sym(ctx, 2), G_MAXINT64 / 4, INF, &error));
  ds_expr_bounds(ctx, parse(ctx, "8*s2"), &lo, &hi);
  g_assert_cmpint(hi, ==, INF);
  ds_expr_bounds(ctx, parse(ctx, "-8*s2 - s2*s2"), &lo, &hi);
  g_assert_cmpint(lo, ==, -INF);

  /* Narrowing never widens; an empty range is an error naming both ranges. */
  g_assert_true(ds_expr_ctx_narrow_range(ctx, sym(ctx, 0), 1, 100, &error));
  ds_expr_ctx_get_range(ctx, sym(ctx, 0), &lo, &hi);
  g_assert_cmpint(lo, ==, 2);
  g_assert_cmpint(hi, ==, 10);
  g_assert_false(ds_expr_ctx_narrow_range(ctx, sym(ctx, 0), 20, 30, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
  g_assert_cmpstr(error->message, ==, "s0 cannot be in [20, 30]: it is in [2, 10]");
  g_clear_error(&error);

  /* Truth from canonical forms and ranges. */
  const DsExpr *s0 = sym(ctx, 0), *s1 = sym(ctx, 1);
  g_assert_cmpint(ds_expr_less(ctx, s0, ds_expr_const(ctx, 11)), ==, DS_EXPR_TRUE);
  g_assert_cmpint(ds_expr_less(ctx, s0, ds_expr_const(ctx, 10)), ==, DS_EXPR_UNKNOWN);
  g_assert_cmpint(ds_expr_less_equal(ctx, s0, ds_expr_const(ctx, 10)), ==, DS_EXPR_TRUE);
  g_assert_cmpint(ds_expr_less(ctx, s0, ds_expr_const(ctx, 2)), ==, DS_EXPR_FALSE);
  g_assert_cmpint(ds_expr_less_equal(ctx, s0, ds_expr_const(ctx, 1)), ==, DS_EXPR_FALSE);
  g_assert_cmpint(ds_expr_less(ctx, s1, parse(ctx, "s1 + 1")), ==, DS_EXPR_TRUE);
  g_assert_cmpint(ds_expr_less(ctx, s0, s1), ==, DS_EXPR_UNKNOWN);
  g_assert_cmpint(ds_expr_equal(ctx, s0, ds_expr_const(ctx, 50)), ==, DS_EXPR_FALSE);
  g_assert_cmpint(ds_expr_equal(ctx, s0, ds_expr_const(ctx, 5)), ==, DS_EXPR_UNKNOWN);
  g_assert_cmpint(ds_expr_equal(ctx, parse(ctx, "(s1 + s1)//2"), s1), ==, DS_EXPR_TRUE);
  g_assert_cmpint(ds_expr_equal(ctx, parse(ctx, "s1 % 1"), ds_expr_const(ctx, 0)), ==,
                  DS_EXPR_TRUE);
  ds_expr_ctx_free(ctx);
}

static void test_expression_ranges(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 3);
  GError *error = NULL;
  int64_t lo, hi;
  /* s2 in [8, 4096] survives s2 := s0*s1 as a range of s0*s1. */
  g_assert_true(ds_expr_ctx_assume(ctx, "s2 in [8, 4096]", &error));
  g_assert_true(ds_expr_ctx_merge(ctx, sym(ctx, 2), parse(ctx, "s0*s1"), NULL, &error));
  g_assert_no_error(error);
  ds_expr_bounds(ctx, parse(ctx, "s0*s1"), &lo, &hi);
  g_assert_cmpint(lo, ==, 8);
  g_assert_cmpint(hi, ==, 4096);
  ds_expr_ctx_get_range(ctx, sym(ctx, 2), &lo, &hi);
  g_assert_cmpint(lo, ==, 8);
  g_assert_cmpint(hi, ==, 4096);
  GPtrArray *facts = ds_expr_ctx_list_facts(ctx);
  g_assert_cmpuint(facts->len, ==, 3);
  g_assert_cmpstr(((DsExprFact *)g_ptr_array_index(facts, 1))->text, ==, "s2 == s0*s1");
  g_assert_cmpstr(((DsExprFact *)g_ptr_array_index(facts, 2))->text, ==, "s0*s1 in [8, 4096]");
  ds_expr_facts_free(facts);
  /* ... so s0*s1 == 5000 is a contradiction ... */
  g_assert_false(
      ds_expr_ctx_merge(ctx, parse(ctx, "s0*s1"), ds_expr_const(ctx, 5000), NULL, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
  g_clear_error(&error);
  /* ... and once s1 == 2 it becomes s0 in [4, 2048]. */
  g_assert_true(ds_expr_ctx_assume(ctx, "s1 == 2", &error));
  g_assert_no_error(error);
  ds_expr_ctx_get_range(ctx, sym(ctx, 0), &lo, &hi);
  g_assert_cmpint(lo, ==, 4);
  g_assert_cmpint(hi, ==, 2048);
  /* A symbol range that empties the expression range is refused. */
  DsExprCtx *ctx2 = ds_expr_ctx_new();
  make_symbols(ctx2, 3);
  g_assert_true(ds_expr_ctx_assume(ctx2, "s2 in [8, 16]", &error));
  g_assert_true(ds_expr_ctx_merge(ctx2, sym(ctx2, 2), parse(ctx2, "s0*s1"), NULL, &error));
  g_assert_false(ds_expr_ctx_assume(ctx2, "s0 >= 100", &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_INPUT);
  g_clear_error(&error);
  ds_expr_ctx_get_range(ctx2, sym(ctx2, 0), &lo, &hi);
  g_assert_cmpint(lo, ==, 1);
  ds_expr_ctx_free(ctx2);
  ds_expr_ctx_free(ctx);
}

static void test_unbacked(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 1);
  const DsExpr *s0 = sym(ctx, 0);
  const DsExpr *u0 = ds_expr_unbacked(ctx, s0), *u1 = ds_expr_unbacked(ctx, NULL);
  g_assert_cmpstr(ds_expr_get_symbol_name(u0), ==, "u0");
  g_assert_cmpstr(ds_expr_get_symbol_name(u1), ==, "u1");
  g_assert_true(ds_expr_is_unbacked(u0));
  int64_t lo, hi;
  ds_expr_ctx_get_range(ctx, u0, &lo, &hi);
  g_assert_cmpint(lo, ==, 0);
  g_assert_cmpint(hi, ==, INF);
  g_assert_true(ds_expr_ctx_assume(ctx, "s0 <= 64", NULL));
  ds_expr_ctx_get_range(ctx, u0, &lo, &hi);
  g_assert_cmpint(hi, ==, 64);
  ds_expr_ctx_get_range(ctx, u1, &lo, &hi);
  g_assert_cmpint(lo, ==, 0);
  g_assert_cmpint(hi, ==, INF);
  g_assert_true(ds_expr_max(ctx, u0, ds_expr_const(ctx, 0)) == u0);
  g_assert_true(ds_expr_min(ctx, u0, s0) == u0);
  g_assert_cmpint(ds_expr_less_equal(ctx, u0, s0), ==, DS_EXPR_TRUE);
  g_assert_null(ds_expr_floordiv(ctx, s0, u0));
  check(ctx, "max(u0, 1)", "max(u0, 1)");
  GPtrArray *facts = ds_expr_ctx_list_facts(ctx);
  g_assert_cmpuint(facts->len, ==, 3);
  g_assert_cmpstr(((DsExprFact *)g_ptr_array_index(facts, 0))->text, ==, "u0 in [0, s0]");
  g_assert_cmpstr(((DsExprFact *)g_ptr_array_index(facts, 1))->text, ==, "u1 in [0, inf)");
  g_assert_cmpstr(((DsExprFact *)g_ptr_array_index(facts, 2))->text, ==, "s0 in [1, 64]");
  ds_expr_facts_free(facts);
  /* An unbacked size merged with an input dim takes the input dim. */
  const DsExpr *s1 = ds_expr_fresh_symbol(ctx, "s");
  g_assert_true(ds_expr_ctx_merge(ctx, u0, s1, NULL, NULL));
  g_assert_true(ds_expr_resolve(ctx, s1) == u0);
  ds_expr_ctx_get_range(ctx, u0, &lo, &hi);
  g_assert_cmpint(lo, ==, 1);
  g_assert_cmpint(hi, ==, 64);
  ds_expr_ctx_free(ctx);
}

static void test_assume(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 3);
  GError *error = NULL;
  int64_t lo, hi;
  static const char *valid[] = {
      "s1>=8",          "s1 > 1",         "s1<=4096", "s1 < 5000", " s1 in [1, 4096] ",
      "s0 in [2, inf)", "s0 in [1, inf]", "s2==2*s0"};
  for (guint i = 0; i < G_N_ELEMENTS(valid); i++) {
    g_assert_true(ds_expr_ctx_assume(ctx, valid[i], &error));
    g_assert_no_error(error);
  }
  ds_expr_ctx_get_range(ctx, sym(ctx, 1), &lo, &hi);
  g_assert_cmpint(lo, ==, 8);
  g_assert_cmpint(hi, ==, 4096);
  ds_expr_ctx_get_range(ctx, sym(ctx, 0), &lo, &hi);
  g_assert_cmpint(lo, ==, 2);
  assert_prints(ds_expr_resolve(ctx, sym(ctx, 2)), "2*s0");
  g_assert_true(ds_expr_ctx_assume(ctx, "s1 < 10", &error));
  ds_expr_ctx_get_range(ctx, sym(ctx, 1), &lo, &hi);
  g_assert_cmpint(hi, ==, 9);

  static const struct {
    const char *text, *message;
  } invalid[] = {
      {"s1", "expected a comparison"},
      {"s1 >= x", "the right side must be an integer"},
      {"3 >= s1", "the left side must be a single symbol"},
      {"s0 + 1 >= 3", "the left side must be a single symbol"},
      {"s1 = 3", "expected '=='"},
      {"s1 in [5, 2]", "the range is empty"},
      {"s1 in [1, 2", "expected ']'"},
      {"s1 in (1, 2)", "expected 'in [lo, hi]'"},
      {"s1 > 9223372036854775807", "out of range"},
      {"s1 >= 99999999999999999999", "the right side must be an integer"},
      {"s1 == (", "right side: expected an expression at offset 2"},
      {"s1 <= 0", "s1 cannot be in (-inf, 0]: it is in [8, 9]"},
      {"s2 == 3", "2*s0 vs 3"},
      {"max in [1, 2]", "not a symbol name"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(invalid); i++) {
    g_assert_false(ds_expr_ctx_assume(ctx, invalid[i].text, &error));
    g_assert_error(error, DS_ERROR, DS_ERROR_INPUT);
    g_autofree char *quoted = g_strdup_printf("'%s'", invalid[i].text);
    if (strstr(error->message, quoted) == NULL ||
        strstr(error->message, invalid[i].message) == NULL)
      g_error("assumption '%s': unexpected message: %s", invalid[i].text, error->message);
    g_clear_error(&error);
  }
  ds_expr_ctx_get_range(ctx, sym(ctx, 1), &lo, &hi);
  g_assert_cmpint(lo, ==, 8);
  g_assert_cmpint(hi, ==, 9);
  ds_expr_ctx_free(ctx);
}

/* A named dim starts in [1, inf); an assumption or binding that admits 0 (a KV cache's prefill)
 * lowers that default, but not a lower bound a fact set, nor a merged symbol's. */
static void test_empty_dims(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 4);
  GError *error = NULL;
  int64_t lo, hi;
  g_assert_true(ds_expr_ctx_assume(ctx, "s0 in [0, 4096]", &error));
  g_assert_no_error(error);
  ds_expr_ctx_get_range(ctx, sym(ctx, 0), &lo, &hi);
  g_assert_cmpint(lo, ==, 0);
  g_assert_cmpint(hi, ==, 4096);
  g_assert_true(ds_expr_ctx_assume(ctx, "s1 >= 0", &error));
  ds_expr_ctx_get_range(ctx, sym(ctx, 1), &lo, &hi);
  g_assert_cmpint(lo, ==, 0);
  /* A binding's way in: allowed once, and again (already 0). */
  g_assert_true(ds_expr_ctx_allow_empty(ctx, sym(ctx, 2)));
  g_assert_true(ds_expr_ctx_allow_empty(ctx, sym(ctx, 2)));
  ds_expr_ctx_get_range(ctx, sym(ctx, 2), &lo, &hi);
  g_assert_cmpint(lo, ==, 0);
  /* A fact's lower bound stays: 's3 >= 1' said so. */
  g_assert_true(ds_expr_ctx_assume(ctx, "s3 >= 1", &error));
  g_assert_false(ds_expr_ctx_allow_empty(ctx, sym(ctx, 3)));
  g_assert_true(ds_expr_ctx_assume(ctx, "s3 in [0, 8]", &error)); /* narrows, to [1, 8] */
  ds_expr_ctx_get_range(ctx, sym(ctx, 3), &lo, &hi);
  g_assert_cmpint(lo, ==, 1);
  g_assert_cmpint(hi, ==, 8);
  /* Unbacked symbols start at 0 already. */
  g_assert_true(ds_expr_ctx_allow_empty(ctx, ds_expr_unbacked(ctx, NULL)));
  g_assert_false(ds_expr_ctx_allow_empty(ctx, ds_expr_const(ctx, 3)));
  ds_expr_ctx_free(ctx);
}

static void test_facts_list(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 7);
  GError *error = NULL;
  g_assert_true(ds_expr_ctx_assume(ctx, "s1 >= 8", &error));
  g_assert_true(
      ds_expr_ctx_merge(ctx, sym(ctx, 6), sym(ctx, 4), "node 'dot3' (batch_dot)", &error));
  g_assert_true(ds_expr_ctx_assume(ctx, "s1 <= 4096", &error));
  g_assert_true(ds_expr_ctx_merge(ctx, sym(ctx, 2), ds_expr_const(ctx, 384), "node 'fc1'", &error));
  g_assert_true(ds_expr_ctx_narrow_range(ctx, sym(ctx, 5), 2, INF, &error));
  g_assert_no_error(error);
  GPtrArray *facts = ds_expr_ctx_list_facts(ctx);
  static const char *texts[] = {"s1 in [8, 4096]", "s6 == s4", "s2 == 384", "s5 in [2, inf)"};
  static const char *reasons[] = {"assumption 's1 >= 8'; assumption 's1 <= 4096'",
                                  "node 'dot3' (batch_dot)", "node 'fc1'", NULL};
  g_assert_cmpuint(facts->len, ==, G_N_ELEMENTS(texts));
  for (guint i = 0; i < facts->len; i++) {
    const DsExprFact *fact = g_ptr_array_index(facts, i);
    g_assert_cmpstr(fact->text, ==, texts[i]);
    g_assert_cmpstr(fact->reason, ==, reasons[i]);
  }
  ds_expr_facts_free(facts);
  ds_expr_facts_free(NULL);
  ds_expr_ctx_free(ctx);
}

static void test_eval(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 3);
  int64_t values[3] = {7, 3, 0}, out;
  gboolean bound[3] = {TRUE, TRUE, FALSE};
  g_assert_true(ds_expr_eval(ctx, parse(ctx, "(s0 - 3)//2 + 1"), values, bound, &out));
  g_assert_cmpint(out, ==, 3);
  g_assert_true(ds_expr_eval(ctx, parse(ctx, "max(s0, 2*s1) % 4 - s0*s1"), values, bound, &out));
  g_assert_cmpint(out, ==, 3 - 21);
  g_assert_true(ds_expr_eval(ctx, parse(ctx, "(s0 - 10)//s1"), values, bound, &out));
  g_assert_cmpint(out, ==, -1);
  g_assert_true(ds_expr_eval(ctx, parse(ctx, "(s0 - 10) % s1"), values, bound, &out));
  g_assert_cmpint(out, ==, 0);
  g_assert_true(ds_expr_eval(ctx, parse(ctx, "(s0 - 11) % s1"), values, NULL, &out));
  g_assert_cmpint(out, ==, 2);
  /* An unbound symbol. */
  g_assert_false(ds_expr_eval(ctx, parse(ctx, "s0 + s2"), values, bound, &out));
  /* Division by zero: s2 is 0 here, though the facts say s2 >= 1. */
  bound[2] = TRUE;
  g_assert_false(ds_expr_eval(ctx, parse(ctx, "s0//s2"), values, bound, &out));
  g_assert_false(ds_expr_eval(ctx, parse(ctx, "s0 % s2"), values, bound, &out));
  /* Overflow. */
  values[0] = G_MAXINT64 / 2;
  g_assert_false(ds_expr_eval(ctx, parse(ctx, "3*s0"), values, bound, &out));
  g_assert_false(ds_expr_eval(ctx, parse(ctx, "s0*s0"), values, bound, &out));
  g_assert_false(ds_expr_eval(ctx, parse(ctx, "s0 + s0 + s0"), values, bound, &out));
  values[0] = 7;
  /* With the context, merged symbols resolve; without, the node is evaluated as stored. */
  const DsExpr *e = parse(ctx, "s1 + s2");
  g_assert_true(ds_expr_ctx_assume(ctx, "s2 == s1 + 1", NULL));
  values[2] = 100;
  g_assert_true(ds_expr_eval(NULL, e, values, bound, &out));
  g_assert_cmpint(out, ==, 103);
  bound[2] = FALSE;
  g_assert_true(ds_expr_eval(ctx, e, values, bound, &out));
  g_assert_cmpint(out, ==, 7);
  g_assert_false(ds_expr_eval(ctx, NULL, values, bound, &out));
  ds_expr_ctx_free(ctx);
}

static void test_parse_errors(void)
{
  static const struct {
    const char *text, *message;
  } cases[] = {
      {"(s0 + 1", "expected ')' at offset 7"},
      {"s0 +", "expected an expression at offset 4"},
      {"", "expected an expression at offset 0"},
      {"99999999999999999999", "integer out of range at offset 0"},
      {"-9223372036854775809", "integer out of range at offset 1"},
      {"s0 / 2", "expected '//' at offset 4"},
      {"max(s0)", "max() needs at least two arguments at offset 0"},
      {"min(s0, )", "expected an expression at offset 8"},
      {"max s0", "expected '(' after max at offset 4"},
      {"max(s0, s1", "expected ',' or ')' at offset 10"},
      {"foo(1)", "unknown function 'foo' at offset 0"},
      {"s0 $", "expected an operator or end of text at offset 3"},
      {"s0 s1", "expected an operator or end of text at offset 3"},
      {"s0 // 0", "divisor not known to be positive at offset 3"},
      {"s0 % (s0 - 1)", "divisor not known to be positive at offset 3"},
      {"9223372036854775807 + 1", "integer overflow at offset 20"},
      {"--9223372036854775808", "integer overflow at offset 0"},
  };
  DsExprCtx *ctx = ds_expr_ctx_new();
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    GError *error = NULL;
    g_assert_null(ds_expr_parse(ctx, cases[i].text, &error));
    g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
    if (strcmp(error->message, cases[i].message) != 0)
      g_error("'%s': got '%s', want '%s'", cases[i].text, error->message, cases[i].message);
    g_error_free(error);
  }
  /* Deep nesting is refused, not a stack overflow. */
  GString *deep = g_string_new(NULL);
  for (int i = 0; i < 100000; i++)
    g_string_append_c(deep, '(');
  GError *error = NULL;
  g_assert_null(ds_expr_parse(ctx, deep->str, &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_assert_nonnull(strstr(error->message, "nested too deeply"));
  g_clear_error(&error);
  g_string_truncate(deep, 0);
  for (int i = 0; i < 100000; i++)
    g_string_append_c(deep, '-');
  g_string_append(deep, "s0");
  g_assert_null(ds_expr_parse(ctx, deep->str, &error));
  g_assert_nonnull(strstr(error->message, "nested too deeply"));
  g_clear_error(&error);
  g_string_free(deep, TRUE);
  /* 150 levels are fine. */
  GString *ok = g_string_new(NULL);
  for (int i = 0; i < 150; i++)
    g_string_append(ok, "(s0 + ");
  g_string_append(ok, "1");
  for (int i = 0; i < 150; i++)
    g_string_append(ok, ")");
  assert_prints(parse(ctx, ok->str), "150*s0 + 1");
  g_string_free(ok, TRUE);
  ds_expr_ctx_free(ctx);
}

/* Runaway growth stops at the limits instead of exhausting memory. */
static void test_limits(void)
{
  DsExprCtx *ctx = ds_expr_ctx_new();
  make_symbols(ctx, 4);
  GError *error = NULL;
  const DsExpr *sum = parse(ctx, "s0 + s1 + s2 + s3 + 1"), *p = sum;
  for (int i = 0; i < 40 && p != NULL; i++)
    p = ds_expr_mul(ctx, p, sum);
  g_assert_null(p);
  g_assert_null(ds_expr_parse(ctx,
                              "(s0+s1+s2+s3+1)*(s0+s1+s2+s3+1)*(s0+s1+s2+s3+1)*(s0+s1+s2+s3+1)*"
                              "(s0+s1+s2+s3+1)*(s0+s1+s2+s3+1)*(s0+s1+s2+s3+1)*(s0+s1+s2+s3+1)*"
                              "(s0+s1+s2+s3+1)*(s0+s1+s2+s3+1)*(s0+s1+s2+s3+1)*(s0+s1+s2+s3+1)",
                              &error));
  g_assert_error(error, DS_ERROR, DS_ERROR_PARSE);
  g_assert_nonnull(strstr(error->message, "expression too large"));
  g_clear_error(&error);
  const DsExpr *s0 = sym(ctx, 0), *x = s0;
  for (int i = 0; i < 10 && x != NULL; i++)
    x = ds_expr_mul(ctx, x, x);
  g_assert_null(x);
  ds_expr_ctx_free(ctx);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/engine/expr/symbols", test_symbols);
  g_test_add_func("/engine/expr/canonical/sums", test_canonical_sums);
  g_test_add_func("/engine/expr/canonical/floordiv", test_canonical_floordiv);
  g_test_add_func("/engine/expr/canonical/mod", test_canonical_mod);
  g_test_add_func("/engine/expr/canonical/minmax", test_canonical_minmax);
  g_test_add_func("/engine/expr/idempotence", test_idempotence);
  g_test_add_func("/engine/expr/roundtrip/strings", test_roundtrip_strings);
  g_test_add_func("/engine/expr/roundtrip/random", test_random_trees);
  g_test_add_func("/engine/expr/merge/symbols", test_merge_symbols);
  g_test_add_func("/engine/expr/merge/expressions", test_merge_expressions);
  g_test_add_func("/engine/expr/merge/ranges", test_merge_ranges);
  g_test_add_func("/engine/expr/merge/opaque", test_opaque_facts);
  g_test_add_func("/engine/expr/ranges/bounds", test_ranges_bounds);
  g_test_add_func("/engine/expr/ranges/expressions", test_expression_ranges);
  g_test_add_func("/engine/expr/unbacked", test_unbacked);
  g_test_add_func("/engine/expr/assume", test_assume);
  g_test_add_func("/engine/expr/empty-dims", test_empty_dims);
  g_test_add_func("/engine/expr/facts", test_facts_list);
  g_test_add_func("/engine/expr/eval", test_eval);
  g_test_add_func("/engine/expr/parse-errors", test_parse_errors);
  g_test_add_func("/engine/expr/limits", test_limits);
  return g_test_run();
}
