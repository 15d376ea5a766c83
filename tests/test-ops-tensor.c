/* test-ops-tensor.c: shape manipulation, creation, indexing and reductions: attribute
 * parsing (including every spelling the real models use), shape and dtype rules, and the CPU
 * kernels (looked up through the backend's table) against reference loops on random data. */
#include <cjson/cJSON.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "ds-cpu.h"
#include "ds-error.h"
#include "ds-expr.h"
#include "ds-op.h"
#include "ds-ops-common.h"
#include "ds-test-ops.h"

/* ---- node and shape helpers ---- */

/* One-input op: the output shape for input `in` (or the error message, prefixed "error: "). */
static char *unary_shape(DsNode *n, const char *in)
{
  DsShape s_in[1] = {shp(in)}, s_out[1] = {DS_SHAPE_UNKNOWN};
  char *msg = infer(n, s_in, s_out);
  if (msg != NULL) {
    char *r = g_strdup_printf("error: %s", msg);
    g_free(msg);
    return r;
  }
  return ds_shape_to_string(&s_out[0]);
}

static void check_unary_shape(const char *op_name, const char *in, const char *want, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  va_list args;
  va_start(args, want);
  GError *error = NULL;
  DsNode *n = make_node_v(g, op_name, 1, &error, args);
  va_end(args);
  g_assert_no_error(error);
  g_autofree char *got = unary_shape(n, in);
  if (g_str_has_prefix(want, "error"))
    g_assert_true(g_str_has_prefix(got, "error: node 'node0'"));
  else
    g_assert_cmpstr(got, ==, want);
}

/* ---- tensor helpers ---- */

static void unravel(const int64_t *shape, int ndim, int64_t flat, int64_t *idx)
{
  for (int d = ndim - 1; d >= 0; d--) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
}

static int64_t ravel(const int64_t *shape, int ndim, const int64_t *idx)
{
  int64_t off = 0;
  for (int d = 0; d < ndim; d++)
    off = off * shape[d] + idx[d];
  return off;
}

/* The output shape the node's rule gives for the given input shapes, as a tensor. */
static DsTensor output_for(DsNode *n, DsTensor *in, int n_in, DsDType t)
{
  DsShape s_in[4], s_out[1] = {DS_SHAPE_UNKNOWN};
  for (int k = 0; k < n_in; k++) {
    s_in[k].ndim = in[k].ndim;
    for (int d = 0; d < in[k].ndim; d++)
      s_in[k].dims[d] = ds_dim(in[k].shape[d]);
  }
  g_autofree char *msg = infer(n, s_in, s_out);
  g_assert_null(msg);
  int64_t dims[DS_MAX_NDIM];
  g_assert_true(ds_shape_get_concrete(&s_out[0], dims));
  return tensor_dims(t, s_out[0].ndim, dims);
}

/* ---- shape rules ---- */

static void test_shape_reshape(void)
{
  static const struct {
    const char *in, *shape, *reverse, *want;
  } cases[] = {
      /* MXNet's documented examples, one per code. */
      {"(2, 3, 4)", "(4, 0, 2)", NULL, "(4, 3, 2)"},
      {"(2, 3, 4)", "(2, 0, 0)", NULL, "(2, 3, 4)"},
      {"(2, 3, 4)", "(6, 1, -1)", NULL, "(6, 1, 4)"},
      {"(2, 3, 4)", "(3, -1, 8)", NULL, "(3, 1, 8)"},
      {"(2, 3, 4)", "(-1,)", NULL, "(24,)"},
      {"(2, 3, 4)", "(-2,)", NULL, "(2, 3, 4)"},
      {"(2, 3, 4)", "(2, -2)", NULL, "(2, 3, 4)"},
      {"(2, 3, 4)", "(-2, 1, 1)", NULL, "(2, 3, 4, 1, 1)"},
      {"(2, 3, 4)", "(-3, 4)", NULL, "(6, 4)"},
      {"(2, 3, 4, 5)", "(-3, -3)", NULL, "(6, 20)"},
      {"(2, 3, 4)", "(0, -3)", NULL, "(2, 12)"},
      {"(2, 3, 4)", "(-3, -2)", NULL, "(6, 4)"},
      {"(2, 3, 4)", "(-4, 1, 2, -2)", NULL, "(1, 2, 3, 4)"},
      {"(2, 3, 4)", "(2, -4, -1, 3, -2)", NULL, "(2, 1, 3, 4)"},
      {"(10, 5, 4)", "(-1, 0)", NULL, "(40, 5)"},
      {"(10, 5, 4)", "(-1, 0)", "True", "(50, 4)"},
      /* The bert model's reshapes (batch 2, 12 heads, 384 tokens, 768 units). */
      {"(2, 12, 384, 384)", "(-1, 0, 0)", "True", "(24, 384, 384)"},
      {"(2, 384, 768)", "(0, 0, 12, -1)", NULL, "(2, 384, 12, 64)"},
      {"(24, 384, 64)", "(-1, 12, 0, 0)", "True", "(2, 12, 384, 64)"},
      {"(2, 384, 12, 64)", "(0, 0, -1)", NULL, "(2, 384, 768)"},
      {"(384,)", "(1, -1)", NULL, "(1, 384)"},
      {"(2,)", "(-1, 1)", NULL, "(2, 1)"},
      /* mms_lstm_ptb and the detection models. */
      {"(35, 20, 200)", "(-1, 200)", NULL, "(700, 200)"},
      {"(1000, 4)", "(-4, 1, 1000, 4)", NULL, "(1, 1000, 4)"},
      {"(2, 5, 7)", "(-3, 0)", NULL, "(10, 7)"},
      /* Unknown dims stay unknown, known ones come through. */
      {"(?, 384, 768)", "(0, 0, 12, -1)", NULL, "(?, 384, 12, ?)"},
      {"(?, 3, 4)", "(0, -1)", NULL, "(?, ?)"},
      /* Zero-size tensors. */
      {"(0, 3)", "(3, -1)", NULL, "(3, 0)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    if (cases[i].reverse != NULL)
      check_unary_shape("Reshape", cases[i].in, cases[i].want, "shape", cases[i].shape, "reverse",
                        cases[i].reverse, NULL);
    else
      check_unary_shape("reshape", cases[i].in, cases[i].want, "shape", cases[i].shape, NULL);
  }
  /* Errors name the node and say what is wrong. */
  static const char *const bad[][2] = {
      {"(2, 3, 4)", "(5, -1)"}, {"(2, 3, 4)", "(-1, -1)"}, {"(2, 3)", "(0, 0, 0)"},
      {"(2, 3)", "(7,)"},       {"(2, 3)", "(-3, -3)"},    {"(6,)", "(-4, -1, -1)"},
      {"(6,)", "(-4, 4, -1)"},  {"(6,)", "(-4, 2, 4)"},    {"(2, 0)", "(-1, 0)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(bad); i++)
    check_unary_shape("Reshape", bad[i][0], "error", "shape", bad[i][1], NULL);
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "Reshape", 1, "shape", "(5, -1)", NULL);
  g_autofree char *msg = unary_shape(n, "(2, 3, 4)");
  g_assert_nonnull(strstr(msg, "24 elements do not divide by 5"));
  g_autofree char *msg2 = parse_error("Reshape", 1, "shape", "(2, -5)", NULL);
  g_assert_nonnull(strstr(msg2, "shape"));

  /* The deprecated target_shape (0 = infer) and keep_highest. */
  check_unary_shape("Reshape", "(2, 3, 4)", "(6, 4)", "target_shape", "(0, 4)", NULL);
  check_unary_shape("Reshape", "(2, 3, 4)", "(2, 12)", "target_shape", "(9, 0)", "keep_highest",
                    "True", NULL);
  /* No target at all: nothing to say. */
  check_unary_shape("Reshape", "(2, 3)", "?", NULL);
}

/* reshape_like(lhs, rhs): the output shape for the two input shapes and attributes given as
 * key, value pairs (NULL-terminated), or "error: <message>". */
static char *reshape_like_shape(const char *lhs, const char *rhs, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  va_list args;
  va_start(args, rhs);
  GError *error = NULL;
  DsNode *n = make_node_v(g, "reshape_like", 2, &error, args);
  va_end(args);
  g_assert_no_error(error);
  DsShape in[2] = {shp(lhs), shp(rhs)}, out[1] = {DS_SHAPE_UNKNOWN};
  char *msg = infer(n, in, out);
  if (msg != NULL) {
    g_assert_true(g_str_has_prefix(msg, "node 'node0' (reshape_like): "));
    char *r = g_strdup_printf("error: %s", msg);
    g_free(msg);
    return r;
  }
  return ds_shape_to_string(&out[0]);
}

static void test_shape_reshape_like(void)
{
  static const struct {
    const char *lhs, *rhs, *lb, *le, *rb, *re, *want;
  } cases[] = {
      /* MXNet's documented examples: the whole shape, then ranges of each side. */
      {"(30, 7)", "(15, 2, 7)", NULL, NULL, NULL, NULL, "(15, 2, 7)"},
      {"(30, 7)", "(15, 2, 4)", "0", "1", "0", "2", "(15, 2, 7)"},
      {"(30, 12)", "(4, 2, 2, 3)", "-1", NULL, "1", NULL, "(30, 2, 2, 3)"},
      {"(2, 3, 4)", "(9, 6, 5)", "0", "2", "1", "2", "(6, 4)"},
      {"(2, 3, 4)", "(9, 1, 3, 5)", "1", "-1", "1", "3", "(2, 1, 3, 4)"},
      {"(2, 6)", "(8, 3, 4)", "None", "None", "-2", "None", "(3, 4)"},
      {"(6,)", "(2, 3)", NULL, NULL, NULL, NULL, "(2, 3)"},
      {"(0, 5)", "(5, 0)", NULL, NULL, NULL, NULL, "(5, 0)"},
      /* Unknown dims pass through; a replaced unknown cannot be checked. */
      {"(?, 3)", "(3, 2)", NULL, NULL, NULL, NULL, "(3, 2)"},
      {"(2, 3, ?)", "(6, 9)", "0", "2", "0", "1", "(6, ?)"},
      {"(2, 3)", "(?, 2)", NULL, NULL, NULL, NULL, "(?, 2)"},
      {"?", "(3, 2)", NULL, NULL, NULL, NULL, "?"},
      /* Errors: the counts differ; empty, reversed or out-of-range ranges. */
      {"(2, 3)", "(7,)", NULL, NULL, NULL, NULL, "error:6 elements"},
      {"(30, 7)", "(15, 2, 4)", "0", "1", "0", "3", "error:120 elements"},
      {"(2, 3)", "(6,)", "1", "1", NULL, NULL, "error:lhs_begin=1, lhs_end=1"},
      {"(2, 3)", "(6,)", "1", "0", NULL, NULL, "error:lhs_begin"},
      {"(2, 3)", "(6,)", NULL, "3", NULL, NULL, "error:lhs_end=3"},
      {"(2, 3)", "(6,)", "-3", NULL, NULL, NULL, "error:lhs_begin=-1"},
      {"(2, 3)", "(6,)", NULL, NULL, "1", NULL, "error:rhs_begin=1, rhs_end=1"},
      {"(2, 3)", "()", NULL, NULL, NULL, NULL, "error:rhs"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    const char *keys[4] = {"lhs_begin", "lhs_end", "rhs_begin", "rhs_end"};
    const char *values[4] = {cases[i].lb, cases[i].le, cases[i].rb, cases[i].re};
    const char *kv[9] = {NULL};
    int k = 0;
    for (int j = 0; j < 4; j++)
      if (values[j] != NULL) {
        kv[k++] = keys[j];
        kv[k++] = values[j];
      }
    g_autofree char *got = reshape_like_shape(cases[i].lhs, cases[i].rhs, kv[0], kv[1], kv[2],
                                              kv[3], kv[4], kv[5], kv[6], kv[7], kv[8]);
    const char *want = cases[i].want;
    if (g_str_has_prefix(want, "error:")) {
      if (!g_str_has_prefix(got, "error: ") || strstr(got, want + 6) == NULL)
        g_error("reshape_like %s like %s: got '%s', want an error mentioning '%s'", cases[i].lhs,
                cases[i].rhs, got, want + 6);
    } else if (strcmp(got, want) != 0) {
      g_error("reshape_like %s like %s: got %s, want %s", cases[i].lhs, cases[i].rhs, got, want);
    }
  }

  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "reshape_like", 2, "lhs_begin", "-2", "lhs_end", "None", NULL);
  const DsReshapeLikeParam *p = n->param;
  g_assert_true(p->has_lhs_begin && !p->has_lhs_end && !p->has_rhs_begin && !p->has_rhs_end);
  g_assert_cmpint(p->lhs_begin, ==, -2);
  g_autofree char *msg = parse_error("reshape_like", 2, "rhs_end", "two", NULL);
  g_assert_nonnull(strstr(msg, "rhs_end"));
  g_assert_true(n->op->traits & DS_OP_TRAIT_VIEW);
  g_assert_cmpint(n->op->num_inputs(n->param), ==, 2);
  char buf[16];
  g_assert_cmpstr(ds_op_input_name(n->op, 2, 1, buf), ==, "rhs");
  /* The output takes lhs's dtype; rhs only lends its shape. */
  DsDType t_in[2] = {DS_DTYPE_FLOAT64, DS_DTYPE_INT8}, t_out[1] = {DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(n->op->infer_type(n, n->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT64);
  g_assert_cmpint(t_in[1], ==, DS_DTYPE_INT8);

  /* Symbolic: rhs's dims come through as expressions, and the element counts' equality
   * becomes a fact (s2 == s0*s1). */
  DsNode *whole = make_node(g, "reshape_like", 2, "lhs_end", "1", NULL);
  DsExprCtx *exprs = ds_expr_ctx_new();
  DsShapeCtx *ctx = ds_shape_ctx_new_symbolic(exprs);
  ds_shape_ctx_set_node(ctx, whole);
  const DsExpr *s0 = ds_expr_symbol(exprs, "s0"), *s1 = ds_expr_symbol(exprs, "s1");
  const DsExpr *s2 = ds_expr_symbol(exprs, "s2");
  DsShape in[2] = {{.ndim = 2}, {.ndim = 2}}, out[1] = {DS_SHAPE_UNKNOWN};
  in[0].dims[0] = ds_dim_from_expr(s2);
  in[0].dims[1] = ds_dim(4);
  in[1].dims[0] = ds_dim_from_expr(s0);
  in[1].dims[1] = ds_dim_from_expr(s1);
  g_assert_true(whole->op->infer_shape(ctx, whole, whole->param, in, out, &error));
  g_assert_no_error(error);
  assert_shape(&out[0], "(s0, s1, 4)");
  g_assert_cmpint(ds_expr_equal(exprs, s2, ds_expr_mul(exprs, s0, s1)), ==, DS_EXPR_TRUE);
  ds_shape_ctx_free(ctx);
  ds_expr_ctx_free(exprs);
}

static void test_shape_flatten_expand_squeeze(void)
{
  check_unary_shape("Flatten", "(2, 3, 4)", "(2, 12)", NULL);
  check_unary_shape("flatten", "(5,)", "(5, 1)", NULL);
  check_unary_shape("Flatten", "(?, 3, 4)", "(?, 12)", NULL);
  check_unary_shape("expand_dims", "(2, 3)", "(2, 1, 3)", "axis", "1", NULL);
  check_unary_shape("expand_dims", "(2, 3)", "(1, 2, 3)", "axis", "0", NULL);
  check_unary_shape("expand_dims", "(2, 3)", "(2, 3, 1)", "axis", "-1", NULL);
  check_unary_shape("expand_dims", "(2, 3)", "(2, 1, 3)", "axis", "-2", NULL);
  check_unary_shape("expand_dims", "(2, 3)", "error", "axis", "3", NULL);
  g_autofree char *msg = parse_error("expand_dims", 1, NULL);
  g_assert_nonnull(strstr(msg, "'axis'"));

  /* expand_dims runs backwards too (MXNet's ExpandDimShape). */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "expand_dims", 1, "axis", "1", NULL);
  DsShape in[1] = {DS_SHAPE_UNKNOWN}, out[1] = {shp("(2, 1, 384)")};
  g_assert_null(infer(n, in, out));
  assert_shape(&in[0], "(2, 384)");

  check_unary_shape("squeeze", "(1, 3, 1, 4)", "(3, 4)", NULL);
  check_unary_shape("squeeze", "(1, 3, 1, 4)", "(3, 1, 4)", "axis", "(0,)", NULL);
  check_unary_shape("squeeze", "(1, 3, 1, 4)", "(1, 3, 4)", "axis", "-2", NULL);
  check_unary_shape("squeeze", "(1, 3, 1, 4)", "(3, 4)", "axis", "(0, 2)", NULL);
  check_unary_shape("squeeze", "(1, 1)", "(1,)", NULL);
  check_unary_shape("squeeze", "(1, 3)", "error", "axis", "1", NULL);
  check_unary_shape("squeeze", "(1, 3)", "error", "axis", "(0, 0)", NULL);
  check_unary_shape("squeeze", "(1, ?)", "?", NULL);
}

static void test_shape_transpose_swap(void)
{
  check_unary_shape("transpose", "(2, 3, 4)", "(4, 3, 2)", NULL);
  check_unary_shape("transpose", "(2, 3, 4)", "(2, 4, 3)", "axes", "(0, 2, 1)", NULL);
  check_unary_shape("transpose", "(2, 384, 12, 64)", "(2, 12, 384, 64)", "axes", "(0, 2, 1, 3)",
                    NULL);
  check_unary_shape("transpose", "(2, 3, 4)", "(4, 2, 3)", "axes", "(-1, 0, 1)", NULL);
  check_unary_shape("transpose", "(2, 3, 4)", "error", "axes", "(0, 0, 1)", NULL);
  check_unary_shape("transpose", "(2, 3, 4)", "error", "axes", "(0, 1)", NULL);
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "transpose", 1, "axes", "(1, 2, 0)", NULL);
  DsShape in[1] = {DS_SHAPE_UNKNOWN}, out[1] = {shp("(3, 4, 2)")};
  g_assert_null(infer(n, in, out));
  assert_shape(&in[0], "(2, 3, 4)");

  check_unary_shape("SwapAxis", "(2, 3, 4)", "(4, 3, 2)", "dim1", "0", "dim2", "2", NULL);
  check_unary_shape("swapaxes", "(2, 3, 4)", "(2, 3, 4)", NULL);
  check_unary_shape("SwapAxis", "(2, 3, 4)", "(2, 4, 3)", "dim1", "-1", "dim2", "1", NULL);
  check_unary_shape("SwapAxis", "(2, 3, 4)", "error", "dim1", "3", NULL);
  DsNode *s = make_node(g, "SwapAxis", 1, "dim1", "0", "dim2", "1", NULL);
  DsShape in2[1] = {DS_SHAPE_UNKNOWN}, out2[1] = {shp("(3, 2)")};
  g_assert_null(infer(s, in2, out2));
  assert_shape(&in2[0], "(2, 3)");
}

static void test_shape_concat(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "Concat", 2, "dim", "1", "num_args", "2", NULL);
  g_assert_cmpint(n->op->num_inputs(n->param), ==, 2);
  DsShape in[2] = {shp("(2, 3)"), shp("(2, 5)")}, out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(n, in, out));
  assert_shape(&out[0], "(2, 8)");

  /* The single unknown input takes what the known output leaves. */
  DsShape in2[2] = {shp("(2, 3)"), DS_SHAPE_UNKNOWN}, out2[1] = {shp("(2, 8)")};
  g_assert_null(infer(n, in2, out2));
  assert_shape(&in2[1], "(2, 5)");

  DsShape in3[2] = {shp("(2, 3)"), shp("(3, 5)")}, out3[1] = {DS_SHAPE_UNKNOWN};
  g_autofree char *msg = infer(n, in3, out3);
  g_assert_nonnull(msg);
  g_assert_nonnull(strstr(msg, "arg1"));

  DsNode *m = make_node(g, "concat", 3, "dim", "-1", "num_args", "3", NULL);
  DsShape in4[3] = {shp("(4, 2)"), shp("(?, 1)"), shp("(4, 0)")}, out4[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(m, in4, out4));
  assert_shape(&out4[0], "(4, 3)");
  assert_shape(&in4[1], "(4, 1)");

  DsNode *d = make_node(g, "Concat", 2, "num_args", "2", NULL); /* dim defaults to 1 */
  g_assert_cmpint(((DsConcatParam *)d->param)->dim, ==, 1);
  g_autofree char *msg2 = parse_error("Concat", 2, "dim", "1", NULL);
  g_assert_nonnull(strstr(msg2, "num_args"));
}

static void test_shape_broadcast_ops(void)
{
  check_unary_shape("broadcast_axis", "(2, 1, 3)", "(2, 4, 3)", "axis", "1", "size", "4", NULL);
  check_unary_shape("broadcast_axes", "(2, 1, 384)", "(2, 12, 384)", "axis", "1", "size", "12",
                    NULL);
  check_unary_shape("broadcast_axis", "(1, 1, 3)", "(5, 4, 3)", "axis", "(0, -2)", "size", "(5, 4)",
                    NULL);
  check_unary_shape("broadcast_axis", "(2, 2, 3)", "error", "axis", "1", "size", "4", NULL);
  g_autofree char *msg = parse_error("broadcast_axis", 1, "axis", "(0, 1)", "size", "4", NULL);
  g_assert_nonnull(strstr(msg, "size"));
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "broadcast_axis", 1, "axis", "1", "size", "384", NULL);
  DsShape in[1] = {shp("(?, ?, 384)")}, out[1] = {shp("(2, ?, ?)")};
  g_assert_null(infer(n, in, out));
  assert_shape(&in[0], "(2, 1, 384)");
  assert_shape(&out[0], "(2, 384, 384)");

  check_unary_shape("broadcast_to", "(1, 3)", "(4, 3)", "shape", "(4, 0)", NULL);
  check_unary_shape("broadcast_to", "(1, 3)", "(4, 3)", "shape", "(4, 3)", NULL);
  check_unary_shape("broadcast_to", "(2, 3)", "error", "shape", "(4, 3)", NULL);
  check_unary_shape("broadcast_to", "(3,)", "error", "shape", "(4, 3)", NULL);

  DsNode *l = make_node(g, "broadcast_like", 2, NULL);
  DsShape in2[2] = {shp("(1, 3)"), shp("(4, 3)")}, out2[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(l, in2, out2));
  assert_shape(&out2[0], "(4, 3)");
  DsShape in3[2] = {shp("(2, 3)"), shp("(4, 3)")}, out3[1] = {DS_SHAPE_UNKNOWN};
  g_autofree char *msg3 = infer(l, in3, out3);
  g_assert_nonnull(msg3);
  DsNode *la = make_node(g, "broadcast_like", 2, "lhs_axes", "(0,)", "rhs_axes", "(-1,)", NULL);
  DsShape in4[2] = {shp("(1, 3)"), shp("(5, 7)")}, out4[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(la, in4, out4));
  assert_shape(&out4[0], "(7, 3)");
}

static void test_shape_sources(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  static const struct {
    const char *start, *stop, *step, *repeat, *want;
  } cases[] = {
      {"384", "None", "1.0", "1", "(384,)"}, /* bert: arange(384) */
      {"0", "10", "3", "1", "(4,)"},         {"0", "10", "3", "2", "(8,)"},
      {"1", "2", "0.3", "1", "(4,)"},        {"5", "0", "-1.5", "1", "(4,)"},
      {"0", "1000", "1.0", "1", "(1000,)"},  {"2.5", "None", "1", "3", "(9,)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsNode *n = make_node(g, "_arange", 0, "start", cases[i].start, "stop", cases[i].stop, "step",
                          cases[i].step, "repeat", cases[i].repeat, "infer_range", "False", "dtype",
                          "float32", NULL);
    DsShape out[1] = {DS_SHAPE_UNKNOWN};
    g_assert_null(infer(n, NULL, out));
    assert_shape(&out[0], cases[i].want);
  }
  g_autofree char *msg = parse_error("_arange", 0, "start", "5", "stop", "1", NULL);
  g_assert_nonnull(strstr(msg, "invalid range"));
  g_autofree char *msg2 = parse_error("_arange", 0, "start", "0", "stop", "1", "step", "0", NULL);
  g_assert_nonnull(strstr(msg2, "step"));
  /* infer_range without stop: the length comes from elsewhere. */
  DsNode *r =
      make_node(g, "_arange", 0, "start", "0", "infer_range", "True", "dtype", "int32", NULL);
  DsShape out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(r, NULL, out));
  g_assert_cmpint(out[0].ndim, ==, -1);
  DsDType t_out[1] = {DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(r->op->infer_type(r, r->param, NULL, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_INT32);

  /* _zeros (2, 0, 200): the 0 stays unknown and unifies with what the slot holds. */
  DsNode *z = make_node(g, "_zeros", 0, "dtype", "float32", "shape", "(2, 0, 200)", NULL);
  DsShape zo[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(z, NULL, zo));
  assert_shape(&zo[0], "(2, ?, 200)");
  DsShape zo2[1] = {shp("(?, 20, ?)")};
  g_assert_null(infer(z, NULL, zo2));
  assert_shape(&zo2[0], "(2, 20, 200)");
  DsShape zo3[1] = {shp("(3, 20, 200)")};
  g_autofree char *msg3 = infer(z, NULL, zo3);
  g_assert_nonnull(msg3);
  DsNode *f = make_node(g, "_full", 0, "shape", "(2, 3)", "value", "7", "dtype", "int64", NULL);
  g_assert_cmpfloat(((DsInitParam *)f->param)->value, ==, 7);
  t_out[0] = DS_DTYPE_UNKNOWN;
  g_assert_true(f->op->infer_type(f, f->param, NULL, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_INT64);
  DsNode *o = make_node(g, "_ones", 0, "shape", "()", NULL);
  DsShape oo[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(o, NULL, oo));
  g_assert_cmpint(oo[0].ndim, ==, -1);
  g_assert_cmpint(o->op->num_inputs(o->param), ==, 0);
}

/* _contrib_arange_like: the data's shape, or its one axis; the data's dtype does not matter. */
static void test_shape_arange_like(void)
{
  static const struct {
    const char *axis, *in, *want;
  } cases[] = {
      {NULL, "(3, 4)", "(3, 4)"},  {"None", "(2, 1, 5)", "(2, 1, 5)"}, {"1", "(2, 384)", "(384,)"},
      {"-1", "(3, 4)", "(4,)"},    {"0", "(7,)", "(7,)"},              {"0", "(0, 3)", "(0,)"},
      {"2", "(3, 4)", "error"},    {"-3", "(3, 4)", "error"},          {"1", "?", "?"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    if (cases[i].axis == NULL)
      check_unary_shape("_contrib_arange_like", cases[i].in, cases[i].want, NULL);
    else
      check_unary_shape("_contrib_arange_like", cases[i].in, cases[i].want, "axis", cases[i].axis,
                        NULL);
  }
  /* repeat changes the values only (MXNet's RangeLikeShape ignores it). */
  check_unary_shape("_contrib_arange_like", "(2, 6)", "(6,)", "axis", "1", "repeat", "3", NULL);

  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_contrib_arange_like", 1, "start", "2", "step", "0.5", "axis", "1",
                        NULL);
  const DsArangeLikeParam *p = n->param;
  g_assert_cmpfloat(p->start, ==, 2.0);
  g_assert_cmpfloat(p->step, ==, 0.5);
  g_assert_cmpint(p->repeat, ==, 1);
  g_assert_true(p->has_axis);
  g_assert_cmpint(p->axis, ==, 1);
  g_assert_cmpint(n->op->num_inputs(n->param), ==, 1);
  /* float32 by default, `dtype` otherwise, whatever the data's dtype. */
  GError *error = NULL;
  DsDType t_in[1] = {DS_DTYPE_INT64}, t_out[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(n->op->infer_type(n, n->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT32);
  g_assert_cmpint(t_in[0], ==, DS_DTYPE_INT64);
  DsNode *n2 = make_node(g, "_contrib_arange_like", 1, "dtype", "int32", NULL);
  t_out[0] = DS_DTYPE_UNKNOWN;
  g_assert_true(n2->op->infer_type(n2, n2->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_INT32);
  g_assert_false(((const DsArangeLikeParam *)n2->param)->has_axis);
  g_autofree char *msg = parse_error("_contrib_arange_like", 1, "repeat", "0", NULL);
  g_assert_nonnull(strstr(msg, "repeat"));

  /* Symbolic: the length is the data's dim as an expression, not a constant. */
  DsExprCtx *exprs = ds_expr_ctx_new();
  DsShapeCtx *ctx = ds_shape_ctx_new_symbolic(exprs);
  ds_shape_ctx_set_node(ctx, n);
  DsShape in[1] = {{.ndim = 2}}, out[1] = {DS_SHAPE_UNKNOWN};
  in[0].dims[0] = ds_dim_from_expr(ds_expr_symbol(exprs, "s0"));
  in[0].dims[1] = ds_dim_from_expr(ds_expr_mul(exprs, ds_expr_const(exprs, 2),
                                               ds_expr_symbol(exprs, "s1")));
  g_assert_true(n->op->infer_shape(ctx, n, n->param, in, out, &error));
  g_assert_no_error(error);
  assert_shape(&out[0], "(2*s1,)");
  DsShape out2[1] = {DS_SHAPE_UNKNOWN};
  g_assert_true(n2->op->infer_shape(ctx, n2, n2->param, in, out2, &error));
  assert_shape(&out2[0], "(s0, 2*s1)");
  ds_shape_ctx_free(ctx);
  ds_expr_ctx_free(exprs);
}

static void test_shape_sequence_mask(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "SequenceMask", 2, "axis", "1", "use_sequence_length", "True", NULL);
  g_assert_cmpint(n->op->num_inputs(n->param), ==, 2);
  DsShape in[2] = {shp("(2, 384, 768)"), DS_SHAPE_UNKNOWN}, out[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(n, in, out));
  assert_shape(&in[1], "(2,)");
  assert_shape(&out[0], "(2, 384, 768)");
  DsNode *m = make_node(g, "SequenceMask", 2, "use_sequence_length", "1", NULL);
  DsShape in2[2] = {shp("(35, ?, 8)"), shp("(20,)")}, out2[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(m, in2, out2));
  assert_shape(&out2[0], "(35, 20, 8)");
  DsNode *plain = make_node(g, "SequenceMask", 1, NULL);
  g_assert_cmpint(plain->op->num_inputs(plain->param), ==, 1);
  DsShape in3[1] = {shp("(5,)")}, out3[1] = {DS_SHAPE_UNKNOWN};
  g_autofree char *msg = infer(plain, in3, out3);
  g_assert_nonnull(msg);
  g_autofree char *msg2 = parse_error("SequenceMask", 1, "axis", "2", NULL);
  g_assert_nonnull(strstr(msg2, "axis"));
  /* The lengths may have any dtype; data and output share one. */
  DsDType t_in[2] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT64}, t_out[1] = {DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(n->op->infer_type(n, n->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT32);
  g_assert_cmpint(t_in[1], ==, DS_DTYPE_INT64);
}

/* CPython's slice length (PySlice_AdjustIndices), the reference for slice's rules. */
static int64_t py_slice(int64_t len, int64_t start, int64_t stop, int64_t step, int64_t *first)
{
  int64_t lower = step < 0 ? -1 : 0, upper = step < 0 ? len - 1 : len;
  if (start == DS_SLICE_NONE)
    start = step < 0 ? upper : lower;
  else if (start < 0)
    start = MAX(start + len, lower);
  else
    start = MIN(start, upper);
  if (stop == DS_SLICE_NONE)
    stop = step < 0 ? lower : upper;
  else if (stop < 0)
    stop = MAX(stop + len, lower);
  else
    stop = MIN(stop, upper);
  *first = start;
  if (step < 0)
    return stop < start ? (start - stop - 1) / (-step) + 1 : 0;
  return start < stop ? (stop - start - 1) / step + 1 : 0;
}

static void test_shape_slice(void)
{
  check_unary_shape("slice_axis", "(4, 5)", "(4, 4)", "axis", "1", "begin", "1", "end", "None",
                    NULL);
  check_unary_shape("slice_axis", "(4, 5)", "(4, 2)", "axis", "-1", "begin", "-3", "end", "-1",
                    NULL);
  check_unary_shape("slice_axis", "(4, 5)", "(1, 5)", "axis", "0", "begin", "2", "end", "3", NULL);
  check_unary_shape("slice_axis", "(0, 5)", "(0, 5)", "axis", "0", "begin", "2", "end", "None",
                    NULL);
  check_unary_shape("slice_axis", "(4, 5)", "error", "axis", "1", "begin", "3", "end", "3", NULL);
  check_unary_shape("slice_axis", "(4, 5)", "error", "axis", "1", "begin", "0", "end", "6", NULL);
  check_unary_shape("slice_axis", "(4, 5)", "error", "axis", "2", "begin", "0", "end", "1", NULL);
  g_autofree char *msg = parse_error("slice_axis", 1, "axis", "0", "begin", "0", NULL);
  g_assert_nonnull(strstr(msg, "'end'"));

  check_unary_shape("slice", "(10, 4)", "(10, 4)", "begin", "(None,)", "end", "(None,)", "step",
                    "(-1,)", NULL);
  check_unary_shape("crop", "(10, 4)", "(3, 2)", "begin", "(1, 2)", "end", "(4, None)", NULL);
  check_unary_shape("slice", "(10,)", "error", "begin", "(1, 2)", "end", "(4, 5)", NULL);
  g_autofree char *msg2 =
      parse_error("slice", 1, "begin", "(1,)", "end", "(2,)", "step", "(0,)", NULL);
  g_assert_nonnull(strstr(msg2, "step"));

  /* Every begin/end/step combination on short axes: the rule, the kernels' helper and
   * CPython agree. */
  g_autoptr(DsGraph) g = ds_graph_new();
  const int64_t values[] = {DS_SLICE_NONE, -9, -5, -3, -1, 0, 1, 2, 4, 7, 9};
  const int64_t steps[] = {-3, -2, -1, 1, 2, 3};
  for (int64_t len = 0; len <= 7; len++)
    for (guint b = 0; b < G_N_ELEMENTS(values); b++)
      for (guint e = 0; e < G_N_ELEMENTS(values); e++)
        for (guint s = 0; s < G_N_ELEMENTS(steps); s++) {
          int64_t first, count, py_first;
          int64_t want = py_slice(len, values[b], values[e], steps[s], &py_first);
          ds_slice_axis_range(len, values[b], values[e], steps[s], &first, &count);
          g_assert_cmpint(count, ==, want);
          if (want > 0)
            g_assert_cmpint(first, ==, py_first);
          DsSliceParam p = {.n_axes = 1,
                            .begin = {values[b]},
                            .end = {values[e]},
                            .n_step = 1,
                            .step = {steps[s]}};
          DsNode *n = ds_graph_add_node(g, "s", "slice");
          n->op = ds_op_lookup("slice");
          n->param = g_memdup2(&p, sizeof p);
          DsShape in[1] = {{.ndim = 1, .dims = {ds_dim(len)}}}, out[1] = {DS_SHAPE_UNKNOWN};
          g_assert_null(infer(n, in, out));
          g_assert_cmpint(out[0].ndim, ==, 1);
          g_assert_true(ds_dim_is_value(out[0].dims[0], want));
        }
}

static void test_shape_take_cast_reduce(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  static const struct {
    const char *axis, *data, *idx, *want;
  } takes[] = {
      {"0", "(5, 3)", "(2, 4)", "(2, 4, 3)"},
      {"1", "(5, 3)", "(2, 4)", "(5, 2, 4)"},
      {"-1", "(5, 3, 6)", "(7,)", "(5, 3, 7)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(takes); i++) {
    DsNode *n = make_node(g, "take", 2, "axis", takes[i].axis, NULL);
    DsShape in[2] = {shp(takes[i].data), shp(takes[i].idx)}, out[1] = {DS_SHAPE_UNKNOWN};
    g_assert_null(infer(n, in, out));
    assert_shape(&out[0], takes[i].want);
  }
  DsNode *t = make_node(g, "take", 2, "mode", "raise", NULL);
  g_assert_cmpint(((DsTakeParam *)t->param)->mode, ==, DS_TAKE_RAISE);
  DsNode *tc = make_node(g, "take", 2, NULL);
  g_assert_cmpint(((DsTakeParam *)tc->param)->mode, ==, DS_TAKE_CLIP);
  g_autofree char *msg = parse_error("take", 2, "mode", "bogus", NULL);
  g_assert_nonnull(strstr(msg, "mode"));
  DsDType t_in[2] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT32}, t_out[1] = {DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(t->op->infer_type(t, t->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT32);

  DsNode *c = make_node(g, "cast", 1, "dtype", "int64", NULL);
  DsDType c_in[1] = {DS_DTYPE_FLOAT32}, c_out[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(c->op->infer_type(c, c->param, c_in, c_out, &error));
  g_assert_cmpint(c_out[0], ==, DS_DTYPE_INT64);
  check_unary_shape("Cast", "(3, 4)", "(3, 4)", "dtype", "float16", NULL);
  g_autofree char *msg2 = parse_error("Cast", 1, NULL);
  g_assert_nonnull(strstr(msg2, "dtype"));

  static const struct {
    const char *op, *axis, *keepdims, *exclude, *want;
  } reds[] = {
      {"sum", "1", "False", "False", "(2, 4)"},
      {"mean", "1", "True", "False", "(2, 1, 4)"},
      {"max", NULL, "False", "False", "(1,)"},
      {"min", NULL, "True", "False", "(1, 1, 1)"},
      {"sum_axis", "()", "False", "False", "(1,)"},
      {"sum", "(1,)", "False", "True", "(3,)"},
      {"sum", "(1,)", "True", "True", "(1, 3, 1)"},
      {"max_axis", "(0, 2)", "False", "False", "(3,)"},
      {"min_axis", "(0, 1, 2)", "False", "False", "(1,)"},
      {"mean", "-1", "False", "False", "(2, 3)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(reds); i++) {
    if (reds[i].axis != NULL)
      check_unary_shape(reds[i].op, "(2, 3, 4)", reds[i].want, "axis", reds[i].axis, "keepdims",
                        reds[i].keepdims, "exclude", reds[i].exclude, NULL);
    else
      check_unary_shape(reds[i].op, "(2, 3, 4)", reds[i].want, "keepdims", reds[i].keepdims,
                        "exclude", reds[i].exclude, NULL);
  }
  check_unary_shape("sum", "(2, 3, 4)", "error", "axis", "(1, -2)", NULL);
  check_unary_shape("sum", "(2, 3, 4)", "error", "axis", "3", NULL);
}

static void test_aliases_and_registration(void)
{
  static const struct {
    const char *alias;
    DsOpId id;
  } cases[] = {
      {"reshape", DS_OP_RESHAPE}, {"flatten", DS_OP_FLATTEN},
      {"concat", DS_OP_CONCAT},   {"swapaxes", DS_OP_SWAP_AXIS},
      {"cast", DS_OP_CAST},       {"broadcast_axes", DS_OP_BROADCAST_AXIS},
      {"sum_axis", DS_OP_SUM},    {"max_axis", DS_OP_MAX},
      {"min_axis", DS_OP_MIN},    {"crop", DS_OP_SLICE},
      {"_arange", DS_OP_ARANGE},  {"SequenceMask", DS_OP_SEQUENCE_MASK},
      {"_contrib_arange_like", DS_OP_ARANGE_LIKE},
      {"reshape_like", DS_OP_RESHAPE_LIKE},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    const DsOpDef *op = ds_op_lookup(cases[i].alias);
    g_assert_nonnull(op);
    g_assert_cmpint(op->id, ==, cases[i].id);
  }
  for (int id = DS_OP_RESHAPE; id <= DS_OP_MIN; id++) {
    g_assert_nonnull(ds_op_get((DsOpId)id));
    g_assert_nonnull(ds_cpu_backend_get()->get_kernel((DsOpId)id));
  }
  for (int id = DS_OP_ELEMWISE_ADD; id <= DS_OP_DIV_SQRT_DIM; id++)
    g_assert_nonnull(ds_cpu_backend_get()->get_kernel((DsOpId)id));
  g_assert_true(ds_op_get(DS_OP_RESHAPE)->traits & DS_OP_TRAIT_VIEW);
  g_assert_true(ds_op_get(DS_OP_RESHAPE_LIKE)->traits & DS_OP_TRAIT_VIEW);
  g_assert_true(ds_op_get(DS_OP_ZEROS)->traits & DS_OP_TRAIT_SOURCE);
  char buf[16];
  g_assert_cmpstr(ds_op_input_name(ds_op_get(DS_OP_SEQUENCE_MASK), 2, 1, buf), ==,
                  "sequence_length");
  g_assert_cmpstr(ds_op_input_name(ds_op_get(DS_OP_CONCAT), 3, 2, buf), ==, "arg2");
}

/* Every node of the real models whose op is in these two families parses, with the input
 * count its attributes call for. */
static void test_model_attributes(void)
{
  const char *shared = g_getenv("DS_SHARED_DIR");
  if (shared == NULL) {
    g_test_skip("DS_SHARED_DIR is not set");
    return;
  }
  static const char *const files[] = {
      "gluonnlp_static_bert_qa-symbol.json",
      "mms_lstm_ptb-symbol.json",
      "gluoncv_squeezenet1.0-symbol.json",
      "gluoncv_ssd_512_resnet50_v1-symbol.json",
      "gluoncv_mask_rcnn_resnet18_v1b_coco-symbol.json",
      "gluoncv_resnet18_v1-symbol.json",
  };
  for (guint f = 0; f < G_N_ELEMENTS(files); f++) {
    g_autofree char *path = g_build_filename(shared, "models", "mxnet", files[f], NULL);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(path, &text, NULL, NULL)) {
      g_test_skip("model files are not available");
      return;
    }
    cJSON *root = cJSON_Parse(text);
    g_assert_nonnull(root);
    const cJSON *nodes = cJSON_GetObjectItem(root, "nodes");
    g_autoptr(DsGraph) g = ds_graph_new();
    int parsed = 0;
    const cJSON *node;
    cJSON_ArrayForEach(node, nodes)
    {
      const char *op_name = cJSON_GetObjectItem(node, "op")->valuestring;
      const DsOpDef *op = ds_op_lookup(op_name);
      if (op == NULL || op->id < DS_OP_ELEMWISE_ADD)
        continue;
      DsNode *n = ds_graph_add_node(g, cJSON_GetObjectItem(node, "name")->valuestring, op_name);
      n->op = op;
      const cJSON *attrs = cJSON_GetObjectItem(node, "attrs");
      if (attrs == NULL)
        attrs = cJSON_GetObjectItem(node, "attr");
      if (attrs == NULL)
        attrs = cJSON_GetObjectItem(node, "param");
      const cJSON *a;
      cJSON_ArrayForEach(a, attrs) ds_node_add_attr(n, a->string, a->valuestring);
      n->param = op->param_size > 0 ? g_malloc0(op->param_size) : NULL;
      GError *error = NULL;
      if (op->parse != NULL && !op->parse(n, n->param, &error))
        g_error("%s: %s", files[f], error->message);
      g_assert_cmpint(op->num_inputs(n->param), ==,
                      cJSON_GetArraySize(cJSON_GetObjectItem(node, "inputs")));
      parsed++;
    }
    g_test_message("%s: %d nodes of these families parsed", files[f], parsed);
    g_assert_cmpint(parsed, >, 0);
    cJSON_Delete(root);
  }
}

/* ---- kernels ---- */

static const DsDType all_types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32,
                                    DS_DTYPE_INT64,   DS_DTYPE_INT8,    DS_DTYPE_UINT8,
                                    DS_DTYPE_BOOL};

static void test_kernel_views(void)
{
  static const char *const ops[] = {"Reshape",  "Flatten",     "expand_dims",
                                    "squeeze",  "_np_reshape", "_np_squeeze"};
  for (guint t = 0; t < G_N_ELEMENTS(all_types); t++) {
    g_autoptr(DsGraph) g = ds_graph_new();
    DsNode *nodes[G_N_ELEMENTS(ops)] = {
        make_node(g, ops[0], 1, "shape", "(-1, 0, 0)", "reverse", "True", NULL),
        make_node(g, ops[1], 1, NULL),
        make_node(g, ops[2], 1, "axis", "1", NULL),
        make_node(g, ops[3], 1, NULL),
        make_node(g, ops[4], 1, "newshape", "(60, -1)", NULL),
        make_node(g, ops[5], 1, "axis", "(1,)", NULL)};
    for (guint k = 0; k < G_N_ELEMENTS(ops); k++) {
      DsTensor x = tensor_new(all_types[t], "(2, 1, 30, 700)");
      fill_random(&x, -100, 100);
      DsTensor out = output_for(nodes[k], &x, 1, all_types[t]);
      g_assert_cmpint(run_kernel(nodes[k]->op->id, nodes[k]->param, &x, 1, &out, 1), ==,
                      DS_STATUS_OK);
      g_assert_cmpmem(x.data, ds_tensor_nbytes(&x), out.data, ds_tensor_nbytes(&out));
      tensor_free(&x);
      tensor_free(&out);
    }
  }
}

/* reshape_like's kernel is the view kernel: a copy when the planner gave the output its own
 * buffer, nothing when it aliased lhs. */
static void test_kernel_reshape_like(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "reshape_like", 2, "lhs_begin", "1", "rhs_begin", "1", NULL);
  for (guint t = 0; t < G_N_ELEMENTS(all_types); t++) {
    DsTensor in[2] = {tensor_new(all_types[t], "(3, 40, 50)"),
                      tensor_new(DS_DTYPE_INT8, "(7, 2, 1000)")};
    fill_random(&in[0], -100, 100);
    DsTensor out = output_for(n, in, 2, all_types[t]);
    g_assert_cmpint(out.ndim, ==, 3);
    g_assert_cmpint(out.shape[0], ==, 3);
    g_assert_cmpint(out.shape[1], ==, 2);
    g_assert_cmpint(out.shape[2], ==, 1000);
    g_assert_cmpint(run_kernel(DS_OP_RESHAPE_LIKE, n->param, in, 2, &out, 1), ==, DS_STATUS_OK);
    g_assert_cmpmem(out.data, ds_tensor_nbytes(&out), in[0].data, ds_tensor_nbytes(&in[0]));
    /* Aliased: the bytes are already in place. */
    DsTensor alias = out;
    alias.data = in[0].data;
    g_assert_cmpint(run_kernel(DS_OP_RESHAPE_LIKE, n->param, in, 2, &alias, 1), ==, DS_STATUS_OK);
    g_assert_cmpmem(out.data, ds_tensor_nbytes(&out), in[0].data, ds_tensor_nbytes(&in[0]));
    /* A size or dtype that disagrees with lhs is refused. */
    DsTensor wrong = tensor_new(all_types[t], "(3, 2, 999)");
    g_assert_cmpint(run_kernel(DS_OP_RESHAPE_LIKE, n->param, in, 2, &wrong, 1), ==,
                    DS_STATUS_INVALID_ARGUMENT);
    tensor_free(&wrong);
    tensor_free(&out);
    tensor_free(&in[0]);
    tensor_free(&in[1]);
  }
}

/* Checks out = transpose(x, perm) element by element. */
static void check_transpose(DsDType t, const char *shape, const char *axes)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = axes != NULL ? make_node(g, "transpose", 1, "axes", axes, NULL)
                           : make_node(g, "transpose", 1, NULL);
  DsTensor x = tensor_new(t, shape);
  fill_random(&x, -100, 100);
  DsTensor out = output_for(n, &x, 1, t);
  g_assert_cmpint(run_kernel(DS_OP_TRANSPOSE, n->param, &x, 1, &out, 1), ==, DS_STATUS_OK);
  const DsTransposeParam *p = n->param;
  int nd = x.ndim, perm[DS_MAX_NDIM];
  for (int i = 0; i < nd; i++)
    perm[i] = p->n_axes == 0 ? nd - 1 - i : (int)(p->axes[i] < 0 ? p->axes[i] + nd : p->axes[i]);
  int64_t oidx[DS_MAX_NDIM], iidx[DS_MAX_NDIM];
  for (int64_t i = 0; i < ds_tensor_numel(&out); i++) {
    unravel(out.shape, nd, i, oidx);
    for (int d = 0; d < nd; d++)
      iidx[perm[d]] = oidx[d];
    g_assert_cmpfloat(get(&out, i), ==, get(&x, ravel(x.shape, nd, iidx)));
  }
  tensor_free(&x);
  tensor_free(&out);
}

static void test_kernel_transpose(void)
{
  static const char *const cases[][2] = {
      {"(37, 53)", NULL},
      {"(300, 700)", NULL},
      {"(3, 37, 53)", "(0, 2, 1)"},
      {"(2, 5, 6, 7)", "(0, 2, 1, 3)"},
      {"(2, 3, 4, 5)", "(3, 1, 0, 2)"},
      {"(2, 3, 4, 5)", NULL},
      {"(4, 1, 5)", "(2, 1, 0)"},
      {"(0, 5)", NULL},
      {"(7,)", NULL},
      {"(2, 3, 4)", "(-1, 0, 1)"},
      {"(64, 130, 33)", "(1, 2, 0)"},
      {"(2, 64, 384, 12)", "(0, 3, 2, 1)"},
  };
  for (guint t = 0; t < G_N_ELEMENTS(all_types); t++)
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++)
      check_transpose(all_types[t], cases[c][0], cases[c][1]);
  /* SwapAxis is the same permutation machinery. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "SwapAxis", 1, "dim1", "0", "dim2", "-1", NULL);
  DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(3, 4, 5)");
  fill_random(&x, -1, 1);
  DsTensor out = output_for(n, &x, 1, DS_DTYPE_FLOAT32);
  g_assert_cmpint(run_kernel(DS_OP_SWAP_AXIS, n->param, &x, 1, &out, 1), ==, DS_STATUS_OK);
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 4; b++)
      for (int c = 0; c < 5; c++)
        g_assert_cmpfloat(get(&out, (c * 4 + b) * 3 + a), ==, get(&x, (a * 4 + b) * 5 + c));
  tensor_free(&x);
  tensor_free(&out);
}

static void test_kernel_concat(void)
{
  static const struct {
    const char *dim;
    const char *shapes[3];
  } cases[] = {
      {"1", {"(2, 3, 4)", "(2, 5, 4)", "(2, 1, 4)"}},
      {"0", {"(2, 3)", "(4, 3)", "(1, 3)"}},
      {"-1", {"(2, 3, 4)", "(2, 3, 0)", "(2, 3, 7)"}},
      {"1", {"(64, 500, 13)", "(64, 300, 13)", "(64, 1, 13)"}},
  };
  for (guint t = 0; t < G_N_ELEMENTS(all_types); t++)
    for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
      g_autoptr(DsGraph) g = ds_graph_new();
      DsNode *n = make_node(g, "Concat", 3, "dim", cases[c].dim, "num_args", "3", NULL);
      DsTensor in[3];
      for (int k = 0; k < 3; k++) {
        in[k] = tensor_new(all_types[t], cases[c].shapes[k]);
        fill_random(&in[k], -100, 100);
      }
      DsTensor out = output_for(n, in, 3, all_types[t]);
      g_assert_cmpint(run_kernel(DS_OP_CONCAT, n->param, in, 3, &out, 1), ==, DS_STATUS_OK);
      int nd = out.ndim, axis = ((DsConcatParam *)n->param)->dim;
      axis = axis < 0 ? axis + nd : axis;
      int64_t idx[DS_MAX_NDIM] = {0};
      for (int64_t i = 0; i < ds_tensor_numel(&out); i++) {
        unravel(out.shape, nd, i, idx);
        int k = 0;
        while (idx[axis] >= in[k].shape[axis]) {
          idx[axis] -= in[k].shape[axis];
          k++;
        }
        g_assert_cmpfloat(get(&out, i), ==, get(&in[k], ravel(in[k].shape, nd, idx)));
      }
      for (int k = 0; k < 3; k++)
        tensor_free(&in[k]);
      tensor_free(&out);
    }
}

static void check_broadcast_copy(DsNode *n, DsDType t, DsTensor *in, int n_in)
{
  fill_random(&in[0], -100, 100);
  DsTensor out = output_for(n, in, n_in, t);
  g_assert_cmpint(run_kernel(n->op->id, n->param, in, n_in, &out, 1), ==, DS_STATUS_OK);
  int64_t idx[DS_MAX_NDIM];
  for (int64_t i = 0; i < ds_tensor_numel(&out); i++) {
    unravel(out.shape, out.ndim, i, idx);
    for (int d = 0; d < out.ndim; d++)
      if (in[0].shape[d] == 1)
        idx[d] = 0;
    g_assert_cmpfloat(get(&out, i), ==, get(&in[0], ravel(in[0].shape, in[0].ndim, idx)));
  }
  tensor_free(&out);
}

static void test_kernel_broadcast_ops(void)
{
  for (guint t = 0; t < G_N_ELEMENTS(all_types); t++) {
    g_autoptr(DsGraph) g = ds_graph_new();
    DsTensor x = tensor_new(all_types[t], "(2, 1, 384)");
    check_broadcast_copy(make_node(g, "broadcast_axis", 1, "axis", "1", "size", "384", NULL),
                         all_types[t], &x, 1);
    tensor_free(&x);
    x = tensor_new(all_types[t], "(1, 3, 1)");
    check_broadcast_copy(
        make_node(g, "broadcast_axis", 1, "axis", "(0, 2)", "size", "(4, 5)", NULL), all_types[t],
        &x, 1);
    tensor_free(&x);
    x = tensor_new(all_types[t], "(4, 1)");
    check_broadcast_copy(make_node(g, "broadcast_to", 1, "shape", "(0, 6)", NULL), all_types[t], &x,
                         1);
    tensor_free(&x);
    x = tensor_new(all_types[t], "(1, 1)");
    check_broadcast_copy(make_node(g, "broadcast_to", 1, "shape", "(3, 3)", NULL), all_types[t], &x,
                         1);
    tensor_free(&x);
    DsTensor two[2] = {tensor_new(all_types[t], "(1, 7)"), tensor_new(all_types[t], "(5, 7)")};
    check_broadcast_copy(make_node(g, "broadcast_like", 2, NULL), all_types[t], two, 2);
    tensor_free(&two[0]);
    tensor_free(&two[1]);
    x = tensor_new(all_types[t], "(0, 1)");
    check_broadcast_copy(make_node(g, "broadcast_to", 1, "shape", "(0, 5)", NULL), all_types[t], &x,
                         1);
    tensor_free(&x);
  }
}

static void test_kernel_sources(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  static const struct {
    const char *start, *stop, *step, *repeat, *dtype;
  } cases[] = {
      {"384", "None", "1.0", "1", "float32"}, {"0", "10", "3", "2", "int32"},
      {"1", "2", "0.1", "1", "float32"},      {"5", "0", "-1.5", "1", "float64"},
      {"-3", "50000", "1", "1", "int64"},     {"0", "100", "7", "3", "uint8"},
      {"2", "-100", "-2", "1", "int8"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsNode *n = make_node(g, "_arange", 0, "start", cases[i].start, "stop", cases[i].stop, "step",
                          cases[i].step, "repeat", cases[i].repeat, "dtype", cases[i].dtype, NULL);
    const DsArangeParam *p = n->param;
    DsTensor out = output_for(n, NULL, 0, p->dtype);
    g_assert_cmpint(run_kernel(DS_OP_ARANGE, p, NULL, 0, &out, 1), ==, DS_STATUS_OK);
    for (int64_t k = 0; k < ds_tensor_numel(&out); k++) {
      double want;
      if (p->dtype == DS_DTYPE_FLOAT32)
        want = (float)((float)p->start + (float)(k / p->repeat) * (float)p->step);
      else
        want = p->start + (double)(k / p->repeat) * p->step;
      g_assert_cmpfloat(fabs(get(&out, k) - want), <=, fabs(want) * 2.5e-7);
    }
    tensor_free(&out);
  }
  for (guint t = 0; t < G_N_ELEMENTS(all_types); t++) {
    const char *dtype = ds_dtype_name(all_types[t]);
    DsNode *z = make_node(g, "_zeros", 0, "shape", "(3, 50000)", "dtype", dtype, NULL);
    DsNode *o = make_node(g, "_ones", 0, "shape", "(3, 5)", "dtype", dtype, NULL);
    DsNode *f = make_node(g, "_full", 0, "shape", "(4, 3)", "value", "7", "dtype", dtype, NULL);
    DsNode *nodes[3] = {z, o, f};
    double want[3] = {0, 1, all_types[t] == DS_DTYPE_BOOL ? 1 : 7};
    for (int k = 0; k < 3; k++) {
      DsTensor out = output_for(nodes[k], NULL, 0, all_types[t]);
      memset(out.data, 0x5a, ds_tensor_nbytes(&out));
      g_assert_cmpint(run_kernel(nodes[k]->op->id, nodes[k]->param, NULL, 0, &out, 1), ==,
                      DS_STATUS_OK);
      for (int64_t i = 0; i < ds_tensor_numel(&out); i++)
        g_assert_cmpfloat(get(&out, i), ==, want[k]);
      tensor_free(&out);
    }
  }
}

/* An integer value as a `t` cell holds it: two's-complement wrapping, as the kernels compute. */
static double convert_wrap(int64_t v, DsDType t)
{
  switch (t) {
  case DS_DTYPE_INT32:
    return (int32_t)(uint32_t)v;
  case DS_DTYPE_INT64:
    return (double)v;
  case DS_DTYPE_INT8:
    return (int8_t)(uint8_t)v;
  case DS_DTYPE_UINT8:
    return (uint8_t)v;
  default:
    g_assert_not_reached();
  }
}

/* _contrib_arange_like against start + (i / repeat) * step, for every numeric output dtype; the
 * data is never read, so its bytes may be anything (here NaN-like garbage). */
static void test_kernel_arange_like(void)
{
  static const struct {
    const char *in, *axis, *start, *step, *repeat, *dtype;
  } cases[] = {
      {"(2, 384)", "1", "0", "1", "1", "float32"},   {"(3, 4)", NULL, "0", "1", "1", "float32"},
      {"(3, 5, 7)", "None", "1", "0.5", "2", "float64"}, {"(4, 9)", "-1", "-3", "2", "3", "int32"},
      {"(5, 100000)", NULL, "0", "1", "1", "float32"}, {"(70000, 2)", "0", "5", "-1", "1", "int64"},
      {"(6, 4)", NULL, "0", "13", "1", "uint8"},      {"(6, 4)", "0", "2", "-2", "2", "int8"},
      {"(0, 3)", NULL, "0", "1", "1", "float32"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(DsGraph) g = ds_graph_new();
    DsNode *n = cases[i].axis != NULL
                  ? make_node(g, "_contrib_arange_like", 1, "axis", cases[i].axis, "start",
                              cases[i].start, "step", cases[i].step, "repeat", cases[i].repeat,
                              "dtype", cases[i].dtype, NULL)
                  : make_node(g, "_contrib_arange_like", 1, "start", cases[i].start, "step",
                              cases[i].step, "repeat", cases[i].repeat, "dtype", cases[i].dtype,
                              NULL);
    const DsArangeLikeParam *p = n->param;
    DsTensor x = tensor_new(DS_DTYPE_FLOAT32, cases[i].in);
    memset(x.data, 0xff, ds_tensor_nbytes(&x));
    DsTensor out = output_for(n, &x, 1, p->dtype);
    g_assert_cmpint(out.ndim, ==, p->has_axis ? 1 : x.ndim);
    memset(out.data, 0x5a, ds_tensor_nbytes(&out));
    g_assert_cmpint(run_kernel(DS_OP_ARANGE_LIKE, p, &x, 1, &out, 1), ==, DS_STATUS_OK);
    for (int64_t k = 0; k < ds_tensor_numel(&out); k++) {
      int64_t q = k / p->repeat;
      double want;
      if (p->dtype == DS_DTYPE_FLOAT32)
        want = (float)((float)p->start + (float)q * (float)p->step);
      else if (p->dtype == DS_DTYPE_FLOAT64)
        want = p->start + (double)q * p->step;
      else /* integers wrap to the output's width */
        want = convert_wrap((int64_t)p->start + q * (int64_t)p->step, p->dtype);
      g_assert_cmpfloat(fabs(get(&out, k) - want), <=, fabs(want) * 2.5e-7);
    }
    tensor_free(&x);
    tensor_free(&out);
  }
}

static void test_kernel_sequence_mask(void)
{
  static const DsDType len_types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT32, DS_DTYPE_INT64,
                                      DS_DTYPE_FLOAT64, DS_DTYPE_UINT8};
  static const DsDType data_types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32};
  const double lengths[] = {0, 3, 7, 9, 2.7, 1};
  for (int axis = 0; axis <= 1; axis++)
    for (guint lt = 0; lt < G_N_ELEMENTS(len_types); lt++)
      for (guint dt = 0; dt < G_N_ELEMENTS(data_types); dt++) {
        g_autoptr(DsGraph) g = ds_graph_new();
        DsNode *n = make_node(g, "SequenceMask", 2, "axis", axis ? "1" : "0", "use_sequence_length",
                              "True", "value", "-5", NULL);
        int64_t T = 7, B = 6, C = 4;
        int64_t dims[3] = {axis ? B : T, axis ? T : B, C};
        DsTensor in[2] = {tensor_dims(data_types[dt], 3, dims), tensor_new(len_types[lt], "(6,)")};
        fill_random(&in[0], -100, 100);
        for (int b = 0; b < B; b++)
          set(&in[1], b, len_types[lt] == DS_DTYPE_UINT8 ? floor(lengths[b]) : lengths[b]);
        DsTensor out = output_for(n, in, 2, data_types[dt]);
        g_assert_cmpint(run_kernel(DS_OP_SEQUENCE_MASK, n->param, in, 2, &out, 1), ==,
                        DS_STATUS_OK);
        int64_t idx[3];
        for (int64_t i = 0; i < ds_tensor_numel(&out); i++) {
          unravel(out.shape, 3, i, idx);
          int64_t t = axis ? idx[1] : idx[0], b = axis ? idx[0] : idx[1];
          double want = t >= (int64_t)get(&in[1], b) ? -5 : get(&in[0], i);
          g_assert_cmpfloat(get(&out, i), ==, want);
        }
        tensor_free(&in[0]);
        tensor_free(&in[1]);
        tensor_free(&out);
      }
  /* Without lengths it is a copy. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "SequenceMask", 1, NULL);
  DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(3, 4)"), out = tensor_new(DS_DTYPE_FLOAT32, "(3, 4)");
  fill_random(&x, -1, 1);
  g_assert_cmpint(run_kernel(DS_OP_SEQUENCE_MASK, n->param, &x, 1, &out, 1), ==, DS_STATUS_OK);
  g_assert_cmpmem(x.data, ds_tensor_nbytes(&x), out.data, ds_tensor_nbytes(&out));
  tensor_free(&x);
  tensor_free(&out);
}

static void test_kernel_slices(void)
{
  static const struct {
    const char *shape, *axis, *begin, *end;
  } axis_cases[] = {
      {"(4, 5)", "1", "1", "None"}, {"(4, 5)", "-1", "-3", "-1"}, {"(6, 5, 3)", "0", "2", "6"},
      {"(6, 5, 3)", "1", "0", "1"}, {"(0, 5)", "0", "0", "None"}, {"(300, 400)", "1", "100", "350"},
  };
  for (guint t = 0; t < G_N_ELEMENTS(all_types); t++)
    for (guint c = 0; c < G_N_ELEMENTS(axis_cases); c++) {
      g_autoptr(DsGraph) g = ds_graph_new();
      DsNode *n = make_node(g, "slice_axis", 1, "axis", axis_cases[c].axis, "begin",
                            axis_cases[c].begin, "end", axis_cases[c].end, NULL);
      DsTensor x = tensor_new(all_types[t], axis_cases[c].shape);
      fill_random(&x, -100, 100);
      DsTensor out = output_for(n, &x, 1, all_types[t]);
      g_assert_cmpint(run_kernel(DS_OP_SLICE_AXIS, n->param, &x, 1, &out, 1), ==, DS_STATUS_OK);
      const DsSliceAxisParam *p = n->param;
      int nd = x.ndim, axis = p->axis < 0 ? p->axis + nd : p->axis;
      int64_t b = p->begin < 0 ? p->begin + x.shape[axis] : p->begin;
      int64_t idx[DS_MAX_NDIM];
      for (int64_t i = 0; i < ds_tensor_numel(&out); i++) {
        unravel(out.shape, nd, i, idx);
        idx[axis] += b;
        g_assert_cmpfloat(get(&out, i), ==, get(&x, ravel(x.shape, nd, idx)));
      }
      tensor_free(&x);
      tensor_free(&out);
    }

  /* slice: random begin/end/step on random shapes, against CPython's rule. */
  for (int rep = 0; rep < 300; rep++) {
    DsDType t = all_types[rep % G_N_ELEMENTS(all_types)];
    /* Mostly small shapes with every edge; the last few big enough to use both threads. */
    gboolean big = rep >= 290;
    int nd = big ? 2 : g_rand_int_range(rng, 1, 5);
    int64_t dims[DS_MAX_NDIM];
    for (int d = 0; d < nd; d++)
      dims[d] = big ? g_rand_int_range(rng, 100, 700) : g_rand_int_range(rng, 0, 7);
    DsSliceParam p = {.n_axes = g_rand_int_range(rng, 0, nd + 1)};
    p.n_step = g_rand_boolean(rng) ? p.n_axes : 0;
    for (int d = 0; d < p.n_axes; d++) {
      p.begin[d] = g_rand_int_range(rng, 0, 4) == 0 ? DS_SLICE_NONE : g_rand_int_range(rng, -9, 9);
      p.end[d] = g_rand_int_range(rng, 0, 4) == 0 ? DS_SLICE_NONE : g_rand_int_range(rng, -9, 9);
      p.step[d] = g_rand_boolean(rng) ? g_rand_int_range(rng, 1, 4) : -g_rand_int_range(rng, 1, 4);
    }
    DsTensor x = tensor_dims(t, nd, dims);
    fill_random(&x, -100, 100);
    int64_t first[DS_MAX_NDIM], step[DS_MAX_NDIM], odims[DS_MAX_NDIM];
    for (int d = 0; d < nd; d++) {
      first[d] = 0;
      step[d] = 1;
      odims[d] = dims[d];
      if (d < p.n_axes) {
        step[d] = p.n_step > 0 ? p.step[d] : 1;
        odims[d] = py_slice(dims[d], p.begin[d], p.end[d], step[d], &first[d]);
      }
    }
    DsTensor out = tensor_dims(t, nd, odims);
    g_assert_cmpint(run_kernel(DS_OP_SLICE, &p, &x, 1, &out, 1), ==, DS_STATUS_OK);
    int64_t idx[DS_MAX_NDIM];
    for (int64_t i = 0; i < ds_tensor_numel(&out); i++) {
      unravel(out.shape, nd, i, idx);
      for (int d = 0; d < nd; d++)
        idx[d] = first[d] + idx[d] * step[d];
      g_assert_cmpfloat(get(&out, i), ==, get(&x, ravel(x.shape, nd, idx)));
    }
    tensor_free(&x);
    tensor_free(&out);
  }
}

static void test_kernel_take(void)
{
  static const DsDType idx_types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT32, DS_DTYPE_INT64,
                                      DS_DTYPE_FLOAT64};
  static const char *const modes[] = {"clip", "wrap"};
  static const struct {
    const char *axis, *data, *idx;
  } cases[] = {
      {"0", "(5, 3)", "(2, 4)"},
      {"1", "(5, 3)", "(7,)"},
      {"-1", "(4, 3, 6)", "(2, 3)"},
      {"0", "(30522, 16)", "(384, 2)"},
  };
  for (guint it = 0; it < G_N_ELEMENTS(idx_types); it++)
    for (guint m = 0; m < G_N_ELEMENTS(modes); m++)
      for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
        DsDType t = all_types[(it + c) % G_N_ELEMENTS(all_types)];
        g_autoptr(DsGraph) g = ds_graph_new();
        DsNode *n = make_node(g, "take", 2, "axis", cases[c].axis, "mode", modes[m], NULL);
        DsTensor in[2] = {tensor_new(t, cases[c].data), tensor_new(idx_types[it], cases[c].idx)};
        fill_random(&in[0], -100, 100);
        int nd = in[0].ndim, axis = ((DsTakeParam *)n->param)->axis;
        axis = axis < 0 ? axis + nd : axis;
        int64_t M = in[0].shape[axis];
        for (int64_t j = 0; j < ds_tensor_numel(&in[1]); j++)
          set(&in[1], j, g_rand_int_range(rng, (gint32)-M - 3, (gint32)M + 3));
        DsTensor out = output_for(n, in, 2, t);
        g_assert_cmpint(run_kernel(DS_OP_TAKE, n->param, in, 2, &out, 1), ==, DS_STATUS_OK);
        int64_t K = ds_tensor_numel(&in[1]);
        int64_t outer = ds_shape_span(in[0].shape, 0, axis);
        int64_t trail = ds_shape_span(in[0].shape, axis + 1, nd);
        for (int64_t o = 0; o < outer; o++)
          for (int64_t j = 0; j < K; j++) {
            int64_t k = (int64_t)get(&in[1], j);
            k = m == 0 ? CLAMP(k, 0, M - 1) : ((k % M) + M) % M;
            for (int64_t r = 0; r < trail; r++)
              g_assert_cmpfloat(get(&out, (o * K + j) * trail + r), ==,
                                get(&in[0], (o * M + k) * trail + r));
          }
        /* raise: in-range indices work, an out-of-range one is an error. */
        DsNode *raise = make_node(g, "take", 2, "axis", cases[c].axis, "mode", "raise", NULL);
        for (int64_t j = 0; j < K; j++)
          set(&in[1], j, g_rand_int_range(rng, 0, (gint32)M));
        g_assert_cmpint(run_kernel(DS_OP_TAKE, raise->param, in, 2, &out, 1), ==, DS_STATUS_OK);
        set(&in[1], K - 1, (double)M);
        g_assert_cmpint(run_kernel(DS_OP_TAKE, raise->param, in, 2, &out, 1), ==,
                        DS_STATUS_OUT_OF_RANGE);
        set(&in[1], K - 1, -1);
        g_assert_cmpint(run_kernel(DS_OP_TAKE, raise->param, in, 2, &out, 1), ==,
                        DS_STATUS_OUT_OF_RANGE);
        tensor_free(&in[0]);
        tensor_free(&in[1]);
        tensor_free(&out);
      }
}

/* The value `x` (exactly representable in every source dtype) converted to dtype `t`. */
static double convert_ref(double x, DsDType t)
{
  switch (t) {
  case DS_DTYPE_FLOAT32:
    return (float)x;
  case DS_DTYPE_FLOAT64:
    return x;
  case DS_DTYPE_INT32:
    return (int32_t)x;
  case DS_DTYPE_INT64:
    return (int64_t)x;
  case DS_DTYPE_INT8:
    return (int8_t)(int32_t)x;
  case DS_DTYPE_UINT8:
    return (uint8_t)(int32_t)x;
  case DS_DTYPE_BOOL:
    return x != 0;
  default:
    g_assert_not_reached();
  }
}

static void test_kernel_cast(void)
{
  for (guint a = 0; a < G_N_ELEMENTS(all_types); a++)
    for (guint b = 0; b < G_N_ELEMENTS(all_types); b++) {
      g_autoptr(DsGraph) g = ds_graph_new();
      DsNode *n = make_node(g, "Cast", 1, "dtype", ds_dtype_name(all_types[b]), NULL);
      DsTensor x = tensor_new(all_types[a], "(3, 40001)");
      DsTensor out = tensor_new(all_types[b], "(3, 40001)");
      /* Values every pair can hold: non-negative when a side is unsigned. */
      gboolean unsigned_side = all_types[a] == DS_DTYPE_UINT8 || all_types[b] == DS_DTYPE_UINT8;
      for (int64_t i = 0; i < ds_tensor_numel(&x); i++) {
        double v = g_rand_int_range(rng, unsigned_side ? 0 : -120, 120);
        if (ds_dtype_is_float(all_types[a]))
          v += g_rand_double_range(rng, 0, 0.99) * (v < 0 ? -1 : 1);
        set(&x, i, v);
      }
      if (all_types[a] == DS_DTYPE_BOOL) /* a bool byte other than 1 still reads as true */
        ((uint8_t *)x.data)[5] = 7;
      g_assert_cmpint(run_kernel(DS_OP_CAST, n->param, &x, 1, &out, 1), ==, DS_STATUS_OK);
      for (int64_t i = 0; i < ds_tensor_numel(&x); i++) {
        double src = all_types[a] == DS_DTYPE_BOOL ? (get(&x, i) != 0) : get(&x, i);
        g_assert_cmpfloat(get(&out, i), ==, convert_ref(src, all_types[b]));
      }
      tensor_free(&x);
      tensor_free(&out);
    }
}

/* Cast into and out of float16, the one kernel that computes with it: every half survives a
 * trip through float32, and doubles round once, to nearest even, as NumPy's astype does. */
static void test_kernel_cast_half(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *to_half = make_node(g, "Cast", 1, "dtype", "float16", NULL);
  DsNode *to_float = make_node(g, "Cast", 1, "dtype", "float32", NULL);
  DsTensor all = tensor_new(DS_DTYPE_FLOAT16, "(65536,)");
  DsTensor wide = tensor_new(DS_DTYPE_FLOAT32, "(65536,)");
  DsTensor back = tensor_new(DS_DTYPE_FLOAT16, "(65536,)");
  for (int i = 0; i < 65536; i++)
    ((uint16_t *)all.data)[i] = (uint16_t)i;
  g_assert_cmpint(run_kernel(DS_OP_CAST, to_float->param, &all, 1, &wide, 1), ==, DS_STATUS_OK);
  g_assert_cmpint(run_kernel(DS_OP_CAST, to_half->param, &wide, 1, &back, 1), ==, DS_STATUS_OK);
  const float *w = wide.data;
  g_assert_cmpfloat(w[0x3c00], ==, 1.0f);
  g_assert_cmpfloat(w[0xc000], ==, -2.0f);
  g_assert_cmpfloat(w[0x7bff], ==, 65504.0f);
  g_assert_cmpfloat(w[0x0001], ==, ldexpf(1.0f, -24)); /* the smallest subnormal */
  g_assert_true(isinf(w[0x7c00]) && isnan(w[0x7e00]));
  for (int i = 0; i < 65536; i++) {
    uint16_t h = ((const uint16_t *)back.data)[i];
    gboolean nan = (i & 0x7c00) == 0x7c00 && (i & 0x3ff) != 0;
    if (nan)
      g_assert_true((h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0);
    else
      g_assert_cmpint(h, ==, i);
  }

  static const struct {
    double value;
    uint16_t half;
  } cases[] = {
      {1.0 + 0x1p-11, 0x3c00},         /* a tie rounds to the even neighbour, down */
      {1.0 + 3 * 0x1p-11, 0x3c02},     /* and up */
      {1.0 + 0x1p-11 + 0x1p-40, 0x3c01}, /* just past the tie: a float would have lost it */
      {65519.99, 0x7bff},
      {65520.0, 0x7c00}, /* overflow rounds to infinity */
      {-1e300, 0xfc00},
      {0x1p-25, 0x0000}, /* half the smallest subnormal: the tie goes to zero */
      {0x1p-25 * 1.0001, 0x0001},
      {0x1p-14 - 0x1p-26, 0x0400}, /* rounds up out of the subnormals into the normals */
      {-0.0, 0x8000},
      {2049.0, 0x6800}, /* above 2048 halves step by 2 */
  };
  DsTensor d = tensor_new(DS_DTYPE_FLOAT64, "(11,)"), h = tensor_new(DS_DTYPE_FLOAT16, "(11,)");
  G_STATIC_ASSERT(G_N_ELEMENTS(cases) == 11);
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
    ((double *)d.data)[i] = cases[i].value;
  g_assert_cmpint(run_kernel(DS_OP_CAST, to_half->param, &d, 1, &h, 1), ==, DS_STATUS_OK);
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
    g_assert_cmphex(((const uint16_t *)h.data)[i], ==, cases[i].half);

  /* Out of half into the integers: truncation toward zero, as from a float. */
  DsNode *to_int = make_node(g, "Cast", 1, "dtype", "int32", NULL);
  DsTensor ints = tensor_new(DS_DTYPE_INT32, "(65536,)");
  g_assert_cmpint(run_kernel(DS_OP_CAST, to_int->param, &all, 1, &ints, 1), ==, DS_STATUS_OK);
  g_assert_cmpint(((const int32_t *)ints.data)[0xc500], ==, -5); /* -5.0 */
  g_assert_cmpint(((const int32_t *)ints.data)[0x3e00], ==, 1);  /* 1.5 */
  DsTensor *made[] = {&all, &wide, &back, &d, &h, &ints};
  for (guint i = 0; i < G_N_ELEMENTS(made); i++)
    tensor_free(made[i]);
}

/* Reduction reference in double over the axes `mask`. */
static void check_reduce(const char *op, DsDType t, int nd, const int64_t *dims, const char *axis,
                         gboolean keepdims, gboolean exclude)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = axis != NULL
                  ? make_node(g, op, 1, "axis", axis, "keepdims", keepdims ? "True" : "False",
                              "exclude", exclude ? "True" : "False", NULL)
                  : make_node(g, op, 1, "keepdims", keepdims ? "True" : "False", NULL);
  DsTensor x = tensor_dims(t, nd, dims);
  fill_random(&x, -50, 50);
  DsTensor out = output_for(n, &x, 1, t);
  g_assert_cmpint(run_kernel(n->op->id, n->param, &x, 1, &out, 1), ==, DS_STATUS_OK);
  bool mask[DS_MAX_NDIM];
  g_assert_true(ds_reduce_axes_mask(n->param, nd, mask));
  int64_t kept_dims[DS_MAX_NDIM], nk = 0, count = 1;
  for (int d = 0; d < nd; d++) {
    if (!mask[d])
      kept_dims[nk++] = dims[d];
    else
      count *= dims[d];
  }
  int64_t n_out = ds_tensor_numel(&out);
  double *acc = g_new0(double, MAX(n_out, 1)), *mag = g_new0(double, MAX(n_out, 1));
  gboolean is_sum = strcmp(op, "sum") == 0 || strcmp(op, "mean") == 0;
  for (int64_t o = 0; o < n_out; o++)
    acc[o] = is_sum ? 0 : strcmp(op, "max") == 0 ? -INFINITY : INFINITY;
  int64_t idx[DS_MAX_NDIM], kidx[DS_MAX_NDIM];
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++) {
    unravel(dims, nd, i, idx);
    int k = 0;
    for (int d = 0; d < nd; d++)
      if (!mask[d])
        kidx[k++] = idx[d];
    int64_t o = ravel(kept_dims, (int)nk, kidx);
    double v = get(&x, i);
    if (is_sum)
      acc[o] += v;
    else if (strcmp(op, "max") == 0)
      acc[o] = MAX(acc[o], v);
    else
      acc[o] = MIN(acc[o], v);
    mag[o] += fabs(v);
  }
  for (int64_t o = 0; o < n_out; o++) {
    double want = acc[o];
    if (strcmp(op, "mean") == 0 && count == 0)
      want = ds_dtype_is_float(t) ? NAN : 0; /* 0/0; integer means give 0 */
    else if (strcmp(op, "mean") == 0)
      want = ds_dtype_is_float(t) ? want / (double)count : trunc(want / (double)count);
    if (isnan(want)) {
      g_assert_true(isnan(get(&out, o)));
      continue;
    }
    if (isinf(want) && !ds_dtype_is_float(t))
      continue; /* an empty integer max/min: the dtype's extreme, not compared */
    double tol = t == DS_DTYPE_FLOAT32 ? 2e-6 * (mag[o] + 1) : 1e-9 * (mag[o] + 1);
    if (!(fabs(get(&out, o) - want) <= tol || (isinf(want) && get(&out, o) == want)))
      g_error("%s %s axis=%s: out[%" G_GINT64_FORMAT "] = %.9g, want %.9g", op, ds_dtype_name(t),
              axis != NULL ? axis : "None", o, get(&out, o), want);
  }
  g_free(acc);
  g_free(mag);
  tensor_free(&x);
  tensor_free(&out);
}

static void test_kernel_reduce(void)
{
  static const DsDType types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32,
                                  DS_DTYPE_INT64};
  static const char *const ops[] = {"sum", "mean", "max", "min"};
  static const struct {
    int nd;
    int64_t dims[4];
    const char *axis;
    gboolean keepdims, exclude;
  } cases[] = {
      {3, {2, 3, 4}, "1", FALSE, FALSE},
      {3, {2, 3, 4}, "-1", TRUE, FALSE},
      {3, {2, 3, 4}, "0", FALSE, FALSE},
      {3, {2, 3, 4}, NULL, FALSE, FALSE},
      {3, {2, 3, 4}, "(0, 2)", FALSE, FALSE},
      {3, {2, 3, 4}, "(1,)", FALSE, TRUE},
      {4, {3, 1, 5, 2}, "(1, 2)", TRUE, FALSE},
      {2, {1000, 300}, "0", FALSE, FALSE},
      {2, {300, 1000}, "1", FALSE, FALSE},
      {1, {100003}, "0", FALSE, FALSE},
      {3, {40, 50, 60}, "(0, 2)", FALSE, FALSE},
      {3, {40, 50, 60}, "1", FALSE, FALSE},
      {2, {0, 5}, "0", FALSE, FALSE},
      {2, {5, 0}, "0", FALSE, FALSE},
      {2, {7, 1}, "1", FALSE, FALSE},
      {4, {2, 3, 4, 5}, "(0, 2)", TRUE, TRUE},
  };
  for (guint t = 0; t < G_N_ELEMENTS(types); t++)
    for (guint o = 0; o < G_N_ELEMENTS(ops); o++)
      for (guint c = 0; c < G_N_ELEMENTS(cases); c++)
        check_reduce(ops[o], types[t], cases[c].nd, cases[c].dims, cases[c].axis, cases[c].keepdims,
                     cases[c].exclude);

  /* max and min propagate NaN. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "max", 1, "axis", "1", NULL);
  DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(2, 40)"), out = tensor_new(DS_DTYPE_FLOAT32, "(2,)");
  fill_random(&x, -1, 1);
  set(&x, 17, NAN);
  g_assert_cmpint(run_kernel(DS_OP_MAX, n->param, &x, 1, &out, 1), ==, DS_STATUS_OK);
  g_assert_true(isnan(get(&out, 0)));
  g_assert_false(isnan(get(&out, 1)));
  /* The small integer dtypes reduce too (MXNet's max of uint8 is uint8); float16 is storage
   * only on the CPU. */
  DsTensor u8 = tensor_new(DS_DTYPE_UINT8, "(2, 40)"), u8o = tensor_new(DS_DTYPE_UINT8, "(2,)");
  for (int64_t i = 0; i < 80; i++)
    set(&u8, i, i < 40 ? (double)(100 + i) : (double)(250 - i)); /* above 127: unsigned */
  g_assert_cmpint(run_kernel(DS_OP_MAX, n->param, &u8, 1, &u8o, 1), ==, DS_STATUS_OK);
  g_assert_cmpfloat(get(&u8o, 0), ==, 139);
  g_assert_cmpfloat(get(&u8o, 1), ==, 210);
  DsTensor h = tensor_new(DS_DTYPE_FLOAT16, "(2, 40)"), ho = tensor_new(DS_DTYPE_FLOAT16, "(2,)");
  g_assert_cmpint(run_kernel(DS_OP_MAX, n->param, &h, 1, &ho, 1), ==, DS_STATUS_UNSUPPORTED);
  tensor_free(&h);
  tensor_free(&ho);
  tensor_free(&u8);
  tensor_free(&u8o);
  tensor_free(&x);
  tensor_free(&out);
}

/* ---- ONNX-form ops: numpy reshape/squeeze, Flatten's axis, expand_dims' tuple, slice's
 * axes, _contrib_expand, _npi_pad, cumsum, trilu, eye_like, depth_to_space, space_to_depth,
 * SequenceReverse ---- */

/* A tensor of dtype t and shape `shape` holding `values` (row-major). */
static DsTensor filled(DsDType t, const char *shape, const double *values)
{
  DsTensor x = tensor_new(t, shape);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
    set(&x, i, values[i]);
  return x;
}

static void assert_values(const DsTensor *x, const double *want)
{
  for (int64_t i = 0; i < ds_tensor_numel(x); i++)
    if (get(x, i) != want[i])
      g_error("element %" G_GINT64_FORMAT ": got %g, want %g", i, get(x, i), want[i]);
}

static void test_shape_onnx_forms(void)
{
  /* Flatten's axis, negative from the end; 0-dim data with an axis. */
  check_unary_shape("Flatten", "(2, 3, 4)", "(1, 24)", "axis", "0", NULL);
  check_unary_shape("Flatten", "(2, 3, 4)", "(6, 4)", "axis", "2", NULL);
  check_unary_shape("Flatten", "(2, 3, 4)", "(24, 1)", "axis", "3", NULL);
  check_unary_shape("Flatten", "(2, 3, 4)", "(6, 4)", "axis", "-1", NULL);
  check_unary_shape("Flatten", "(2, 3, 4)", "(1, 24)", "axis", "-3", NULL);
  check_unary_shape("Flatten", "(2, 3, 4)", "error", "axis", "4", NULL);
  check_unary_shape("Flatten", "(2, 3, 4)", "error", "axis", "-4", NULL);
  check_unary_shape("Flatten", "()", "(1, 1)", "axis", "0", NULL);
  check_unary_shape("Flatten", "()", "error", NULL);
  check_unary_shape("Flatten", "(0, 3)", "(0, 3)", NULL);

  /* expand_dims with several axes, counted in the result. */
  check_unary_shape("expand_dims", "(2, 3)", "(1, 2, 3, 1)", "axis", "(0, 3)", NULL);
  check_unary_shape("expand_dims", "(2, 3)", "(2, 3, 1, 1)", "axis", "(-1, -2)", NULL);
  check_unary_shape("expand_dims", "(2, 3)", "(1, 2, 1, 3)", "axis", "(2, 0)", NULL);
  check_unary_shape("expand_dims", "()", "(1,)", "axis", "(0,)", NULL);
  check_unary_shape("expand_dims", "(2, 3)", "error", "axis", "(1, 1)", NULL);
  check_unary_shape("expand_dims", "(2, 3)", "error", "axis", "(0, 4)", NULL);
  g_autofree char *m0 = parse_error("expand_dims", 1, "axis", "()", NULL);
  g_assert_nonnull(strstr(m0, "axis="));
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *ed = make_node(g, "expand_dims", 1, "axis", "(0, 2)", NULL);
  DsShape in[1] = {DS_SHAPE_UNKNOWN}, out[1] = {shp("(1, 5, 1, 7)")};
  g_assert_null(infer(ed, in, out));
  assert_shape(&in[0], "(5, 7)");

  /* NumPy's squeeze can empty the shape; MXNet's keeps one dim. */
  check_unary_shape("_np_squeeze", "(1, 1)", "()", NULL);
  check_unary_shape("_np_squeeze", "(1, 3, 1)", "(3,)", NULL);
  check_unary_shape("_np_squeeze", "(1,)", "()", "axis", "(0,)", NULL);
  check_unary_shape("_np_squeeze", "(1, 3, 1)", "(1, 3)", "axis", "(-1,)", NULL);
  check_unary_shape("_np_squeeze", "(2, 3)", "error", "axis", "(0,)", NULL);

  /* _np_reshape: -1 infers, 0 is a 0, () is a scalar. */
  check_unary_shape("_np_reshape", "(2, 3, 4)", "(4, 6)", "newshape", "(4, -1)", NULL);
  check_unary_shape("_np_reshape", "(1, 1)", "()", "newshape", "()", NULL);
  check_unary_shape("_np_reshape", "(0, 3)", "(3, 0)", "newshape", "(3, 0)", NULL);
  check_unary_shape("_np_reshape", "(0, 3)", "error", "newshape", "(3, -1, 0)", NULL);
  check_unary_shape("_np_reshape", "(2, 3)", "error", "newshape", "(4, 2)", NULL);
  check_unary_shape("_np_reshape", "(2, 3)", "error", "newshape", "(4, -1)", NULL);
  check_unary_shape("_npi_reshape", "?", "(7, 2)", "newshape", "(7, 2)", NULL);
  g_autofree char *m1 = parse_error("_np_reshape", 1, "newshape", "(-1, -1)", NULL);
  g_assert_nonnull(strstr(m1, "-1"));
  g_autofree char *m2 = parse_error("_np_reshape", 1, "newshape", "(2, -3)", NULL);
  g_assert_nonnull(strstr(m2, "newshape"));
  g_autofree char *m3 = parse_error("_np_reshape", 1, "newshape", "(2,)", "order", "F", NULL);
  g_assert_nonnull(strstr(m3, "order"));
  {
    Sym s = sym_new();
    DsNode *r = make_node(g, "_np_reshape", 1, "newshape", "(-1, 12)", NULL);
    DsShape si[1] = {sym_shp(s.exprs, "(N, 3, 4)")}, so[1] = {DS_SHAPE_UNKNOWN};
    g_assert_null(infer_in(s.ctx, r, si, so));
    assert_shape(&so[0], "(N, 12)");
    sym_free(&s);
  }

  /* slice with axes: the entries apply to the listed axes only. */
  check_unary_shape("slice", "(2, 3, 4)", "(2, 3, 3)", "begin", "(1,)", "end", "(None,)", "axes",
                    "(-1,)", NULL);
  check_unary_shape("slice", "(2, 3, 4)", "(1, 3, 2)", "begin", "(3, 1)", "end", "(1, 2)",
                    "step", "(-1, 1)", "axes", "(2, 0)", NULL);
  check_unary_shape("slice", "(2, 3, 4)", "error", "begin", "(0, 0)", "end", "(1, 1)", "axes",
                    "(1, -2)", NULL);
  check_unary_shape("slice", "(2, 3, 4)", "error", "begin", "(0,)", "end", "(1,)", "axes",
                    "(3,)", NULL);
  g_autofree char *m4 = parse_error("slice", 1, "begin", "(0,)", "end", "(1,)", "axes", "(0, 1)",
                                    NULL);
  g_assert_nonnull(strstr(m4, "axes"));

  /* _contrib_expand broadcasts both ways. */
  check_unary_shape("_contrib_expand", "(3, 1)", "(2, 3, 4)", "shape", "(2, 1, 4)", NULL);
  check_unary_shape("_contrib_expand", "(2, 3, 4)", "(2, 3, 4)", "shape", "(1,)", NULL);
  check_unary_shape("_contrib_expand", "(3,)", "error", "shape", "(2,)", NULL);
  check_unary_shape("_contrib_expand", "(0, 1)", "(0, 5)", "shape", "(1, 5)", NULL);
  g_autofree char *m5 = parse_error("_contrib_expand", 1, "shape", "(2, -1)", NULL);
  g_assert_nonnull(strstr(m5, "negative"));

  /* _npi_pad: every dim grows (or shrinks) by its pair; edge needs data to copy. */
  check_unary_shape("_npi_pad", "(2, 3)", "(4, 5)", "pad_width", "((1, 1), (0, 2))", NULL);
  check_unary_shape("_npi_pad", "(2, 3)", "(1, 3)", "pad_width", "((0, -1), (0, 0))", NULL);
  check_unary_shape("_npi_pad", "(2, 3)", "error", "pad_width", "((0, -3), (0, 0))", NULL);
  check_unary_shape("_npi_pad", "(0, 3)", "error", "pad_width", "((1, 0), (0, 0))", "mode",
                    "edge", NULL);
  check_unary_shape("_npi_pad", "(0, 3)", "(1, 3)", "pad_width", "((1, 0), (0, 0))", NULL);
  check_unary_shape("_npi_pad", "(2, 3)", "error", "pad_width", "((1, 1),)", NULL);
  g_autofree char *m6 = parse_error("_npi_pad", 1, "pad_width", "((1, 1), (2,))", NULL);
  g_assert_nonnull(strstr(m6, "pad_width"));
  g_autofree char *m7 = parse_error("_npi_pad", 1, "pad_width", "((1, 1),)", "mode", "wrap", NULL);
  g_assert_nonnull(strstr(m7, "mode"));
  {
    Sym s = sym_new();
    DsNode *pd = make_node(g, "_npi_pad", 1, "pad_width", "((1, 1), (0, 0))", NULL);
    DsShape si[1] = {sym_shp(s.exprs, "(N, 3)")}, so[1] = {DS_SHAPE_UNKNOWN};
    g_assert_null(infer_in(s.ctx, pd, si, so));
    assert_shape(&so[0], "(N + 2, 3)");
    sym_free(&s);
  }

  /* cumsum and trilu: the data's shape; the parameter is a scalar. */
  DsNode *cs = make_node(g, "cumsum", 2, NULL);
  DsShape ci[2] = {shp("(2, 3)"), shp("(1,)")}, co[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(cs, ci, co));
  assert_shape(&co[0], "(2, 3)");
  ci[1] = shp("(2,)");
  g_autofree char *e1 = infer(cs, ci, co);
  g_assert_nonnull(strstr(e1, "scalar"));
  ci[0] = shp("()");
  ci[1] = shp("()");
  co[0] = DS_SHAPE_UNKNOWN;
  g_autofree char *e2 = infer(cs, ci, co);
  g_assert_nonnull(strstr(e2, "rank 1"));
  DsNode *tr = make_node(g, "trilu", 2, "upper", "False", NULL);
  g_assert_false(((DsTriluParam *)tr->param)->upper);
  DsShape ti[2] = {shp("(3,)"), shp("()")}, to[1] = {DS_SHAPE_UNKNOWN};
  g_autofree char *e3 = infer(tr, ti, to);
  g_assert_nonnull(strstr(e3, "rank 2"));

  /* eye_like: 2-D, the data's dtype unless one is given. */
  check_unary_shape("eye_like", "(3, 4)", "(3, 4)", NULL);
  check_unary_shape("eye_like", "(3, 4, 5)", "error", NULL);
  DsNode *ey = make_node(g, "eye_like", 1, "k", "-1", NULL);
  DsDType ein[1] = {DS_DTYPE_INT32}, eout[1] = {DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(ey->op->infer_type(ey, ey->param, ein, eout, &error));
  g_assert_cmpint(eout[0], ==, DS_DTYPE_INT32);
  DsNode *ey2 = make_node(g, "eye_like", 1, "dtype", "float64", NULL);
  eout[0] = DS_DTYPE_UNKNOWN;
  g_assert_true(ey2->op->infer_type(ey2, ey2->param, ein, eout, &error));
  g_assert_cmpint(eout[0], ==, DS_DTYPE_FLOAT64);

  /* _npi_full_like: the data's shape, fill_value required, the data's dtype by default. */
  check_unary_shape("_npi_full_like", "(0, 3)", "(0, 3)", "fill_value", "2", NULL);
  g_autofree char *m11 = parse_error("_npi_full_like", 1, NULL);
  g_assert_nonnull(strstr(m11, "fill_value"));
  DsNode *fl = make_node(g, "_npi_full_like", 1, "fill_value", "1", "dtype", "int64", NULL);
  DsDType fin[1] = {DS_DTYPE_FLOAT32}, fout[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(fl->op->infer_type(fl, fl->param, fin, fout, &error));
  g_assert_cmpint(fout[0], ==, DS_DTYPE_INT64);

  /* depth_to_space and space_to_depth. */
  check_unary_shape("depth_to_space", "(1, 8, 2, 3)", "(1, 2, 4, 6)", "block_size", "2", NULL);
  check_unary_shape("space_to_depth", "(1, 2, 4, 6)", "(1, 8, 2, 3)", "block_size", "2", NULL);
  check_unary_shape("depth_to_space", "(1, 6, 2, 3)", "error", "block_size", "2", NULL);
  check_unary_shape("space_to_depth", "(1, 2, 5, 6)", "error", "block_size", "2", NULL);
  check_unary_shape("depth_to_space", "(1, 8, 2)", "error", "block_size", "2", NULL);
  g_autofree char *m8 = parse_error("depth_to_space", 1, "block_size", "2", "mode", "XYZ", NULL);
  g_assert_nonnull(strstr(m8, "mode"));
  g_autofree char *m9 = parse_error("space_to_depth", 1, NULL);
  g_assert_nonnull(strstr(m9, "block_size"));

  /* SequenceReverse: (time, batch, ...), lengths per batch entry. */
  DsNode *sr = make_node(g, "SequenceReverse", 2, "use_sequence_length", "True", NULL);
  DsShape si[2] = {shp("(5, 3, 2)"), DS_SHAPE_UNKNOWN}, so[1] = {DS_SHAPE_UNKNOWN};
  g_assert_null(infer(sr, si, so));
  assert_shape(&so[0], "(5, 3, 2)");
  assert_shape(&si[1], "(3,)");
  g_assert_cmpint(sr->op->num_inputs(sr->param), ==, 2);
  g_autofree char *m10 = parse_error("SequenceReverse", 1, "axis", "1", NULL);
  g_assert_nonnull(strstr(m10, "axis"));
}

static void test_kernel_onnx_forms(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  /* _contrib_expand: (3, 1) against (2, 1, 4), every element from its broadcast source. */
  for (guint t = 0; t < G_N_ELEMENTS(all_types); t++) {
    DsNode *n = make_node(g, "_contrib_expand", 1, "shape", "(2, 1, 4)", NULL);
    DsTensor x = tensor_new(all_types[t], "(3, 1)");
    fill_random(&x, -50, 50);
    DsTensor out = output_for(n, &x, 1, all_types[t]);
    g_assert_cmpint(run_kernel(DS_OP_EXPAND, n->param, &x, 1, &out, 1), ==, DS_STATUS_OK);
    for (int64_t i = 0; i < ds_tensor_numel(&out); i++)
      g_assert_cmpfloat(get(&out, i), ==, get(&x, (i / 4) % 3));
    tensor_free(&x);
    tensor_free(&out);
  }

  /* _npi_pad: numpy.pad's values for each mode; reflect past the axis' length repeats. */
  static const struct {
    const char *width, *mode, *value, *out_shape;
    double want[8];
  } pads[] = {
      {"((2, 3),)", "reflect", "0", "(8,)", {3, 2, 1, 2, 3, 2, 1, 2}},
      {"((2, 3),)", "edge", "0", "(8,)", {1, 1, 1, 2, 3, 3, 3, 3}},
      {"((2, 3),)", "constant", "9", "(8,)", {9, 9, 1, 2, 3, 9, 9, 9}},
      {"((5, 0),)", "reflect", "0", "(8,)", {2, 1, 2, 3, 2, 1, 2, 3}},
      {"((-1, 1),)", "constant", "0", "(3,)", {2, 3, 0}},
  };
  double v123[3] = {1, 2, 3};
  for (guint c = 0; c < G_N_ELEMENTS(pads); c++) {
    DsNode *n = make_node(g, "_npi_pad", 1, "pad_width", pads[c].width, "mode", pads[c].mode,
                          "constant_values", pads[c].value, NULL);
    DsTensor x = filled(DS_DTYPE_INT32, "(3,)", v123);
    DsTensor out = tensor_new(DS_DTYPE_INT32, pads[c].out_shape);
    run_ok(DS_OP_PAD, n->param, &x, 1, &out, 1);
    assert_values(&out, pads[c].want);
    tensor_free(&x);
    tensor_free(&out);
  }
  /* 2-D: constant pad on both axes, and a crop. */
  {
    DsNode *n = make_node(g, "_npi_pad", 1, "pad_width", "((1, 0), (-1, 1))", "constant_values",
                          "-1.5", NULL);
    double v[6] = {1, 2, 3, 4, 5, 6};
    DsTensor x = filled(DS_DTYPE_FLOAT32, "(2, 3)", v);
    DsTensor out = tensor_new(DS_DTYPE_FLOAT32, "(3, 3)");
    run_ok(DS_OP_PAD, n->param, &x, 1, &out, 1);
    double want[9] = {-1.5, -1.5, -1.5, 2, 3, -1.5, 5, 6, -1.5};
    assert_values(&out, want);
    tensor_free(&x);
    tensor_free(&out);
  }

  /* cumsum: each combination of exclusive and reverse, and axes of a 2-D int64 tensor. */
  static const struct {
    const char *exclusive, *reverse;
    double want[4];
  } sums[] = {{"0", "0", {1, 3, 6, 10}},
              {"1", "0", {0, 1, 3, 6}},
              {"0", "1", {10, 9, 7, 4}},
              {"1", "1", {9, 7, 4, 0}}};
  double v1234[4] = {1, 2, 3, 4};
  for (guint c = 0; c < G_N_ELEMENTS(sums); c++) {
    DsNode *n = make_node(g, "cumsum", 2, "exclusive", sums[c].exclusive, "reverse",
                          sums[c].reverse, NULL);
    DsTensor in[2] = {filled(DS_DTYPE_FLOAT64, "(4,)", v1234), tensor_new(DS_DTYPE_INT32, "()")};
    DsTensor out = tensor_new(DS_DTYPE_FLOAT64, "(4,)");
    run_ok(DS_OP_CUMSUM, n->param, in, 2, &out, 1);
    assert_values(&out, sums[c].want);
    tensors_free(in, 2);
    tensor_free(&out);
  }
  {
    DsNode *n = make_node(g, "cumsum", 2, NULL);
    double v[6] = {1, 2, 3, 4, 5, 6};
    DsTensor in[2] = {filled(DS_DTYPE_INT64, "(2, 3)", v), tensor_new(DS_DTYPE_INT64, "(1,)")};
    DsTensor out = tensor_new(DS_DTYPE_INT64, "(2, 3)");
    set(&in[1], 0, -1);
    run_ok(DS_OP_CUMSUM, n->param, in, 2, &out, 1);
    double rows[6] = {1, 3, 6, 4, 9, 15};
    assert_values(&out, rows);
    set(&in[1], 0, 0);
    run_ok(DS_OP_CUMSUM, n->param, in, 2, &out, 1);
    double cols[6] = {1, 2, 3, 5, 7, 9};
    assert_values(&out, cols);
    set(&in[1], 0, 2);
    g_assert_cmpint(run_kernel(DS_OP_CUMSUM, n->param, in, 2, &out, 1), ==,
                    DS_STATUS_OUT_OF_RANGE);
    tensors_free(in, 2);
    tensor_free(&out);
    /* Large enough for both threads: against a running sum. */
    DsTensor big[2] = {tensor_new(DS_DTYPE_FLOAT32, "(300, 200)"), tensor_new(DS_DTYPE_INT64, "()")};
    fill_random(&big[0], -1, 1);
    set(&big[1], 0, 0);
    DsTensor bo = tensor_new(DS_DTYPE_FLOAT32, "(300, 200)");
    run_ok(DS_OP_CUMSUM, n->param, big, 2, &bo, 1);
    for (int64_t c = 0; c < 200; c++) {
      float acc = 0;
      for (int64_t r = 0; r < 300; r++) {
        acc += (float)get(&big[0], r * 200 + c);
        g_assert_cmpfloat(get(&bo, r * 200 + c), ==, acc);
      }
    }
    tensors_free(big, 2);
    tensor_free(&bo);
  }

  /* trilu against numpy.triu / numpy.tril on a 3 x 4 matrix, and a batch. */
  static const struct {
    const char *upper;
    double k;
    double want[12];
  } tris[] = {
      {"1", 1, {0, 1, 2, 3, 0, 0, 6, 7, 0, 0, 0, 11}},
      {"0", -1, {0, 0, 0, 0, 4, 0, 0, 0, 8, 9, 0, 0}},
      {"1", -5, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
      {"0", -9e15, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
      {"1", 0, {0, 1, 2, 3, 0, 5, 6, 7, 0, 0, 10, 11}},
  };
  double iota[24];
  for (int i = 0; i < 24; i++)
    iota[i] = i;
  for (guint c = 0; c < G_N_ELEMENTS(tris); c++)
    for (guint t = 0; t < G_N_ELEMENTS(all_types) - 1; t++) {
      DsDType dt = all_types[t] == DS_DTYPE_INT8 || all_types[t] == DS_DTYPE_UINT8 ? DS_DTYPE_INT64
                                                                                    : all_types[t];
      DsNode *n = make_node(g, "trilu", 2, "upper", tris[c].upper, NULL);
      DsTensor in[2] = {filled(dt, "(3, 4)", iota), tensor_new(DS_DTYPE_INT64, "()")};
      set(&in[1], 0, tris[c].k);
      DsTensor out = tensor_new(dt, "(3, 4)");
      run_ok(DS_OP_TRILU, n->param, in, 2, &out, 1);
      assert_values(&out, tris[c].want);
      tensors_free(in, 2);
      tensor_free(&out);
    }
  {
    DsNode *n = make_node(g, "trilu", 2, NULL);
    DsTensor in[2] = {filled(DS_DTYPE_FLOAT32, "(2, 3, 4)", iota),
                      tensor_new(DS_DTYPE_INT32, "()")};
    DsTensor out = tensor_new(DS_DTYPE_FLOAT32, "(2, 3, 4)");
    run_ok(DS_OP_TRILU, n->param, in, 2, &out, 1);
    for (int64_t i = 0; i < 24; i++) {
      int64_t r = (i / 4) % 3, col = i % 4;
      g_assert_cmpfloat(get(&out, i), ==, col >= r ? iota[i] : 0);
    }
    tensors_free(in, 2);
    tensor_free(&out);
  }

  /* eye_like: ones on diagonal k. */
  {
    DsNode *n = make_node(g, "eye_like", 1, "k", "1", NULL);
    DsTensor x = tensor_new(DS_DTYPE_INT64, "(3, 4)");
    DsTensor out = tensor_new(DS_DTYPE_INT64, "(3, 4)");
    run_ok(DS_OP_EYE_LIKE, n->param, &x, 1, &out, 1);
    double want[12] = {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
    assert_values(&out, want);
    DsNode *far = make_node(g, "eye_like", 1, "k", "-7", NULL);
    run_ok(DS_OP_EYE_LIKE, far->param, &x, 1, &out, 1);
    double zeros[12] = {0};
    assert_values(&out, zeros);
    tensor_free(&x);
    tensor_free(&out);
  }

  /* _npi_full_like fills, whatever the data's dtype. */
  {
    DsNode *n = make_node(g, "_npi_full_like", 1, "fill_value", "-3", "dtype", "int8", NULL);
    DsTensor x = tensor_new(DS_DTYPE_FLOAT64, "(2, 3)");
    DsTensor out = tensor_new(DS_DTYPE_INT8, "(2, 3)");
    run_ok(DS_OP_FULL_LIKE, n->param, &x, 1, &out, 1);
    double want[6] = {-3, -3, -3, -3, -3, -3};
    assert_values(&out, want);
    tensor_free(&x);
    tensor_free(&out);
  }

  /* depth_to_space (DCR and CRD) and space_to_depth against ONNX's reshape-transpose rule. */
  for (int crd = 0; crd < 2; crd++) {
    const int64_t b = 2, N = 2, C = 3, H = 2, W = 3;
    DsNode *d2s = make_node(g, "depth_to_space", 1, "block_size", "2", "mode", crd ? "CRD" : "DCR",
                            NULL);
    DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(2, 12, 2, 3)");
    fill_random(&x, -1, 1);
    DsTensor y = output_for(d2s, &x, 1, DS_DTYPE_FLOAT32);
    run_ok(DS_OP_DEPTH_TO_SPACE, d2s->param, &x, 1, &y, 1);
    for (int64_t n = 0; n < N; n++)
      for (int64_t c = 0; c < C; c++)
        for (int64_t h = 0; h < H * b; h++)
          for (int64_t w = 0; w < W * b; w++) {
            int64_t bh = h % b, bw = w % b;
            int64_t ic = crd ? c * b * b + bh * b + bw : (bh * b + bw) * C + c;
            double want = get(&x, ((n * C * b * b + ic) * H + h / b) * W + w / b);
            g_assert_cmpfloat(get(&y, ((n * C + c) * H * b + h) * W * b + w), ==, want);
          }
    /* space_to_depth in the same mode undoes it. */
    DsNode *s2d = make_node(g, "space_to_depth", 1, "block_size", "2", "mode", crd ? "CRD" : "DCR",
                            NULL);
    DsTensor back = output_for(s2d, &y, 1, DS_DTYPE_FLOAT32);
    run_ok(DS_OP_SPACE_TO_DEPTH, s2d->param, &y, 1, &back, 1);
    g_assert_cmpmem(back.data, ds_tensor_nbytes(&back), x.data, ds_tensor_nbytes(&x));
    tensor_free(&x);
    tensor_free(&y);
    tensor_free(&back);
  }

  /* SequenceReverse: the first length steps of each sequence reversed, the rest kept. */
  {
    DsNode *n = make_node(g, "SequenceReverse", 2, "use_sequence_length", "True", NULL);
    DsTensor in[2] = {filled(DS_DTYPE_FLOAT32, "(4, 2, 3)", iota),
                      tensor_new(DS_DTYPE_INT64, "(2,)")};
    set(&in[1], 0, 2);
    set(&in[1], 1, 9); /* past the end: the whole sequence */
    DsTensor out = tensor_new(DS_DTYPE_FLOAT32, "(4, 2, 3)");
    run_ok(DS_OP_SEQUENCE_REVERSE, n->param, in, 2, &out, 1);
    static const int src_t[2][4] = {{1, 0, 2, 3}, {3, 2, 1, 0}};
    for (int64_t i = 0; i < 24; i++) {
      int64_t t = i / 6, b = (i / 3) % 2, f = i % 3;
      g_assert_cmpfloat(get(&out, i), ==, iota[(src_t[b][t] * 2 + b) * 3 + f]);
    }
    tensors_free(in, 2);
    tensor_free(&out);
  }

  /* slice with axes: entry 0 on the last axis backwards, entry 1 on axis 0. */
  {
    DsNode *n = make_node(g, "slice", 1, "begin", "(3, 1)", "end", "(0, None)", "step",
                          "(-2, 1)", "axes", "(-1, 0)", NULL);
    DsTensor x = filled(DS_DTYPE_FLOAT32, "(2, 3, 4)", iota);
    DsTensor out = output_for(n, &x, 1, DS_DTYPE_FLOAT32);
    g_assert_cmpint(out.ndim, ==, 3);
    g_assert_cmpint(out.shape[0], ==, 1);
    g_assert_cmpint(out.shape[2], ==, 2);
    run_ok(DS_OP_SLICE, n->param, &x, 1, &out, 1);
    double want[6] = {15, 13, 19, 17, 23, 21};
    assert_values(&out, want);
    tensor_free(&x);
    tensor_free(&out);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ds_test_ops_init(77031);

  g_test_add_func("/ops/tensor/shape/reshape", test_shape_reshape);
  g_test_add_func("/ops/tensor/shape/reshape-like", test_shape_reshape_like);
  g_test_add_func("/ops/tensor/shape/flatten-expand-squeeze", test_shape_flatten_expand_squeeze);
  g_test_add_func("/ops/tensor/shape/transpose-swapaxis", test_shape_transpose_swap);
  g_test_add_func("/ops/tensor/shape/concat", test_shape_concat);
  g_test_add_func("/ops/tensor/shape/broadcast", test_shape_broadcast_ops);
  g_test_add_func("/ops/tensor/shape/sources", test_shape_sources);
  g_test_add_func("/ops/tensor/shape/arange-like", test_shape_arange_like);
  g_test_add_func("/ops/tensor/shape/sequence-mask", test_shape_sequence_mask);
  g_test_add_func("/ops/tensor/shape/slice", test_shape_slice);
  g_test_add_func("/ops/tensor/shape/take-cast-reduce", test_shape_take_cast_reduce);
  g_test_add_func("/ops/tensor/aliases", test_aliases_and_registration);
  g_test_add_func("/ops/tensor/model-attributes", test_model_attributes);
  g_test_add_func("/ops/tensor/kernel/views", test_kernel_views);
  g_test_add_func("/ops/tensor/kernel/reshape-like", test_kernel_reshape_like);
  g_test_add_func("/ops/tensor/kernel/transpose", test_kernel_transpose);
  g_test_add_func("/ops/tensor/kernel/concat", test_kernel_concat);
  g_test_add_func("/ops/tensor/kernel/broadcast", test_kernel_broadcast_ops);
  g_test_add_func("/ops/tensor/kernel/sources", test_kernel_sources);
  g_test_add_func("/ops/tensor/kernel/arange-like", test_kernel_arange_like);
  g_test_add_func("/ops/tensor/kernel/sequence-mask", test_kernel_sequence_mask);
  g_test_add_func("/ops/tensor/kernel/slices", test_kernel_slices);
  g_test_add_func("/ops/tensor/kernel/take", test_kernel_take);
  g_test_add_func("/ops/tensor/kernel/cast", test_kernel_cast);
  g_test_add_func("/ops/tensor/kernel/cast-half", test_kernel_cast_half);
  g_test_add_func("/ops/tensor/kernel/reduce", test_kernel_reduce);
  g_test_add_func("/ops/tensor/shape/onnx-forms", test_shape_onnx_forms);
  g_test_add_func("/ops/tensor/kernel/onnx-forms", test_kernel_onnx_forms);

  int status = g_test_run();
  g_rand_free(rng);
  ds_thread_pool_free(pool);
  return status;
}
