/* test-ops-elemwise.c: the elementwise, broadcast and scalar ops: attribute parsing, shape and
 * dtype rules, and the CPU kernels (looked up through the backend's table) against
 * double-precision reference loops on random data. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "ds-cpu.h"
#include "ds-error.h"
#include "ds-op.h"
#include "ds-ops-common.h"
#include "ds-test-ops.h"

/* ---- tensor helpers ---- */

/* Random values: small integers for integer dtypes and when `coarse` (so comparisons meet
 * equal operands), uniform in [lo, hi) otherwise. */
static void fill_random_coarse(DsTensor *x, double lo, double hi, gboolean coarse)
{
  int64_t n = ds_tensor_numel(x);
  for (int64_t i = 0; i < n; i++) {
    double v;
    if (x->dtype == DS_DTYPE_BOOL)
      v = g_rand_int_range(rng, 0, 2);
    else if (!ds_dtype_is_float(x->dtype) || coarse)
      v = g_rand_int_range(rng, (gint32)lo, (gint32)hi);
    else
      v = g_rand_double_range(rng, lo, hi);
    set(x, i, v);
  }
}

/* |got - want| within a relative and absolute tolerance; NaNs must match. */
static void assert_close(double got, double want, double rel, const char *what, int64_t i)
{
  if (isnan(want)) {
    if (!isnan(got))
      g_error("%s[%" G_GINT64_FORMAT "]: got %.9g, want NaN", what, i, got);
    return;
  }
  if (isinf(want) && got == want)
    return;
  double tol = rel * fabs(want) + rel * 1e-3;
  if (!(fabs(got - want) <= tol))
    g_error("%s[%" G_GINT64_FORMAT "]: got %.9g, want %.9g", what, i, got, want);
}

/* Flat index into a broadcast operand of shape `s` for output multi-index `idx`. */
static int64_t bcast_index(const DsTensor *s, const DsTensor *out, const int64_t *idx)
{
  int64_t off = 0;
  for (int d = 0; d < s->ndim; d++) {
    int od = d + out->ndim - s->ndim;
    int64_t c = s->shape[d] == 1 ? 0 : idx[od];
    off = off * s->shape[d] + c;
  }
  return off;
}

static void unravel(const DsTensor *t, int64_t flat, int64_t *idx)
{
  for (int d = t->ndim - 1; d >= 0; d--) {
    idx[d] = flat % t->shape[d];
    flat /= t->shape[d];
  }
}

/* ---- shape rules ---- */

static void test_shape_elemwise_both_ways(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "elemwise_add", 2, NULL);
  DsShape in[2] = {shp("(2, 3)"), shp("?")}, out[1] = {shp("?")};
  g_assert_null(infer(n, in, out));
  assert_shape(&in[1], "(2, 3)");
  assert_shape(&out[0], "(2, 3)");

  /* Only the output known: it fills both inputs (MXNet's ElemwiseShape). */
  DsShape in2[2] = {shp("?"), shp("(?, 3)")}, out2[1] = {shp("(4, ?)")};
  g_assert_null(infer(n, in2, out2));
  assert_shape(&in2[0], "(4, 3)");
  assert_shape(&in2[1], "(4, 3)");
  assert_shape(&out2[0], "(4, 3)");

  DsShape in3[2] = {shp("(2, 3)"), shp("(2, 4)")}, out3[1] = {shp("?")};
  g_autofree char *msg = infer(n, in3, out3);
  g_assert_nonnull(msg);
  g_assert_nonnull(strstr(msg, "node0"));
  g_assert_nonnull(strstr(msg, "(2, 4)"));
  g_assert_nonnull(strstr(msg, "rhs"));
}

static void test_shape_broadcast(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "broadcast_add", 2, NULL);
  static const struct {
    const char *a, *b, *out;
  } cases[] = {
      {"(2, 3)", "(3,)", "(2, 3)"},
      {"(1, 384)", "(4, 1)", "(4, 384)"}, /* bert's broadcast_lesser */
      {"(2, 1, 4)", "(3, 1)", "(2, 3, 4)"},
      {"(5,)", "(1,)", "(5,)"},
      {"(?, 3)", "(5, 1)", "(5, 3)"},
      {"(?, 3)", "(1, 3)", "(?, 3)"},
      {"(?, 3)", "(?, 3)", "(?, 3)"},
      {"(0, 3)", "(1, 3)", "(0, 3)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsShape in[2] = {shp(cases[i].a), shp(cases[i].b)}, out[1] = {shp("?")};
    g_assert_null(infer(n, in, out));
    assert_shape(&out[0], cases[i].out);
  }
  DsShape in[2] = {shp("(2, 3)"), shp("(4, 3)")}, out[1] = {shp("?")};
  g_autofree char *msg = infer(n, in, out);
  g_assert_nonnull(msg);
  g_assert_nonnull(strstr(msg, "'node0' (broadcast_add)"));
  g_assert_nonnull(strstr(msg, "lhs shape (2, 3)"));
  g_assert_nonnull(strstr(msg, "rhs shape (4, 3)"));
  /* An unknown rank leaves the output alone. */
  DsShape in2[2] = {shp("?"), shp("(4, 3)")}, out2[1] = {shp("?")};
  g_assert_null(infer(n, in2, out2));
  g_assert_cmpint(out2[0].ndim, ==, -1);
}

static void test_shape_where(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "where", 3, NULL);
  DsShape in[3] = {shp("?"), shp("(2, 3)"), shp("?")}, out[1] = {shp("?")};
  g_assert_null(infer(n, in, out));
  assert_shape(&in[2], "(2, 3)");
  assert_shape(&out[0], "(2, 3)");
  g_assert_cmpint(in[0].ndim, ==, -1);

  DsShape in2[3] = {shp("(?, 3)"), shp("(2, ?)"), shp("?")}, out2[1] = {shp("?")};
  g_assert_null(infer(n, in2, out2));
  assert_shape(&in2[0], "(2, 3)");

  DsShape in3[3] = {shp("(?,)"), shp("(2, 5)"), shp("(2, 5)")}, out3[1] = {shp("?")};
  g_assert_null(infer(n, in3, out3));
  assert_shape(&in3[0], "(2,)");

  DsShape in4[3] = {shp("(3,)"), shp("(2, 5)"), shp("?")}, out4[1] = {shp("?")};
  g_autofree char *msg = infer(n, in4, out4);
  g_assert_nonnull(msg);
  DsShape in5[3] = {shp("(2, 5, 1)"), shp("(2, 5)"), shp("?")}, out5[1] = {shp("?")};
  g_autofree char *msg5 = infer(n, in5, out5);
  g_assert_nonnull(msg5);

  /* dtypes: x, y and out agree; the condition is free. */
  DsDType t_in[3] = {DS_DTYPE_INT32, DS_DTYPE_FLOAT32, DS_DTYPE_UNKNOWN};
  DsDType t_out[1] = {DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(n->op->infer_type(n, n->param, t_in, t_out, &error));
  g_assert_cmpint(t_in[0], ==, DS_DTYPE_INT32);
  g_assert_cmpint(t_in[2], ==, DS_DTYPE_FLOAT32);
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT32);
}

static void test_shape_unary_scalar_add_n(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  const char *unary[] = {"relu",
                         "sigmoid",
                         "tanh",
                         "exp",
                         "log",
                         "sqrt",
                         "rsqrt",
                         "square",
                         "abs",
                         "negative",
                         "reciprocal",
                         "erf",
                         "_copy",
                         "BlockGrad",
                         "zeros_like",
                         "ones_like",
                         "_contrib_div_sqrt_dim"};
  for (guint i = 0; i < G_N_ELEMENTS(unary); i++) {
    DsNode *n = make_node(g, unary[i], 1, NULL);
    DsShape in[1] = {shp("?")}, out[1] = {shp("(2, 7)")};
    g_assert_null(infer(n, in, out));
    assert_shape(&in[0], "(2, 7)");
  }
  DsNode *s = make_node(g, "_mul_scalar", 1, "scalar", "-1e+18", NULL);
  g_assert_cmpfloat(((DsScalarParam *)s->param)->scalar, ==, -1e18);
  g_assert_true(((DsScalarParam *)s->param)->is_int);
  DsShape in[1] = {shp("(3, 4)")}, out[1] = {shp("?")};
  g_assert_null(infer(s, in, out));
  assert_shape(&out[0], "(3, 4)");

  DsNode *c = make_node(g, "clip", 1, "a_min", "0", "a_max", "80", NULL);
  g_assert_cmpfloat(((DsClipParam *)c->param)->a_max, ==, 80.0);
  g_autofree char *msg = parse_error("clip", 1, "a_min", "0", NULL);
  g_assert_nonnull(strstr(msg, "a_max"));

  DsNode *a = make_node(g, "add_n", 3, "num_args", "3", NULL);
  g_assert_cmpint(a->op->num_inputs(a->param), ==, 3);
  DsShape in3[3] = {shp("?"), shp("(2, ?)"), shp("(?, 5)")}, out3[1] = {shp("?")};
  g_assert_null(infer(a, in3, out3));
  assert_shape(&in3[0], "(2, 5)");
  assert_shape(&out3[0], "(2, 5)");
  g_autofree char *msg2 = parse_error("add_n", 1, NULL);
  g_assert_nonnull(strstr(msg2, "num_args"));
}

static void test_dtype_scalar(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_plus_scalar", 1, "scalar", "0.5", "is_int", "False", NULL);
  DsNode *m = make_node(g, "_plus_scalar", 1, "scalar", "2", NULL);
  GError *error = NULL;
  static const struct {
    gboolean is_int;
    DsDType in, out;
  } cases[] = {
      {FALSE, DS_DTYPE_INT32, DS_DTYPE_FLOAT64}, {FALSE, DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32},
      {FALSE, DS_DTYPE_BOOL, DS_DTYPE_FLOAT64},  {TRUE, DS_DTYPE_INT32, DS_DTYPE_INT32},
      {TRUE, DS_DTYPE_BOOL, DS_DTYPE_INT64},     {TRUE, DS_DTYPE_FLOAT64, DS_DTYPE_FLOAT64},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsNode *node = cases[i].is_int ? m : n;
    DsDType in[1] = {cases[i].in}, out[1] = {DS_DTYPE_UNKNOWN};
    g_assert_true(node->op->infer_type(node, node->param, in, out, &error));
    g_assert_no_error(error);
    g_assert_cmpint(out[0], ==, cases[i].out);
  }
  /* Comparisons keep the input dtype (MXNet 1.x), through the default rule. */
  DsNode *cmp = make_node(g, "broadcast_greater", 2, NULL);
  g_assert_null(cmp->op->infer_type);
}

static void test_aliases(void)
{
  static const struct {
    const char *alias;
    DsOpId id;
  } cases[] = {
      {"_plus", DS_OP_ELEMWISE_ADD},
      {"_Plus", DS_OP_ELEMWISE_ADD},
      {"_add", DS_OP_ELEMWISE_ADD},
      {"_sub", DS_OP_ELEMWISE_SUB},
      {"_minus", DS_OP_ELEMWISE_SUB},
      {"_Minus", DS_OP_ELEMWISE_SUB},
      {"_mul", DS_OP_ELEMWISE_MUL},
      {"_Mul", DS_OP_ELEMWISE_MUL},
      {"_div", DS_OP_ELEMWISE_DIV},
      {"_Div", DS_OP_ELEMWISE_DIV},
      {"broadcast_plus", DS_OP_BROADCAST_ADD},
      {"broadcast_minus", DS_OP_BROADCAST_SUB},
      {"_PlusScalar", DS_OP_PLUS_SCALAR},
      {"_MinusScalar", DS_OP_MINUS_SCALAR},
      {"_RMinusScalar", DS_OP_RMINUS_SCALAR},
      {"_MulScalar", DS_OP_MUL_SCALAR},
      {"_DivScalar", DS_OP_DIV_SCALAR},
      {"_RDivScalar", DS_OP_RDIV_SCALAR},
      {"_PowerScalar", DS_OP_POWER_SCALAR},
      {"_MaximumScalar", DS_OP_MAXIMUM_SCALAR},
      {"_MinimumScalar", DS_OP_MINIMUM_SCALAR},
      {"_EqualScalar", DS_OP_EQUAL_SCALAR},
      {"_GreaterScalar", DS_OP_GREATER_SCALAR},
      {"_LesserScalar", DS_OP_LESSER_SCALAR},
      {"identity", DS_OP_IDENTITY},
      {"stop_gradient", DS_OP_BLOCK_GRAD},
      {"ElementWiseSum", DS_OP_ADD_N},
      {"erf", DS_OP_ERF},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    const DsOpDef *op = ds_op_lookup(cases[i].alias);
    g_assert_nonnull(op);
    g_assert_cmpint(op->id, ==, cases[i].id);
  }
  /* Every op of the family is defined, with binary ops naming lhs and rhs. */
  for (int id = DS_OP_ELEMWISE_ADD; id <= DS_OP_DIV_SQRT_DIM; id++)
    g_assert_nonnull(ds_op_get((DsOpId)id));
  char buf[16];
  g_assert_cmpstr(ds_op_input_name(ds_op_get(DS_OP_BROADCAST_ADD), 2, 1, buf), ==, "rhs");
  g_assert_cmpstr(ds_op_input_name(ds_op_get(DS_OP_WHERE), 3, 0, buf), ==, "condition");
}

/* ---- kernels: binary ---- */

static double ref_binary(DsOpId op, double x, double y)
{
  switch (op) {
  case DS_OP_BROADCAST_ADD:
    return x + y;
  case DS_OP_BROADCAST_SUB:
    return x - y;
  case DS_OP_BROADCAST_MUL:
    return x * y;
  case DS_OP_BROADCAST_DIV:
    return x / y;
  case DS_OP_BROADCAST_MAXIMUM:
    return isnan(x) || isnan(y) ? NAN : fmax(x, y);
  case DS_OP_BROADCAST_MINIMUM:
    return isnan(x) || isnan(y) ? NAN : fmin(x, y);
  case DS_OP_BROADCAST_POWER:
    return pow(x, y);
  case DS_OP_BROADCAST_EQUAL:
    return x == y;
  case DS_OP_BROADCAST_NOT_EQUAL:
    return x != y;
  case DS_OP_BROADCAST_GREATER:
    return x > y;
  case DS_OP_BROADCAST_GREATER_EQUAL:
    return x >= y;
  case DS_OP_BROADCAST_LESSER:
    return x < y;
  case DS_OP_BROADCAST_LESSER_EQUAL:
    return x <= y;
  default:
    g_assert_not_reached();
  }
}

/* Checks op(a, b) broadcast to `out_shape` against the reference, in dtype `t`. */
static void check_binary(DsOpId op, DsDType t, const char *sa, const char *sb, const char *sout)
{
  DsTensor in[2] = {tensor_new(t, sa), tensor_new(t, sb)};
  DsTensor out = tensor_new(t, sout);
  gboolean coarse = op >= DS_OP_BROADCAST_EQUAL;
  double lo = op == DS_OP_BROADCAST_POWER ? 0.1 : -3, hi = op == DS_OP_BROADCAST_POWER ? 2 : 3;
  fill_random_coarse(&in[0], lo, hi, coarse);
  fill_random_coarse(&in[1], lo, hi, coarse);
  if (op == DS_OP_BROADCAST_DIV && !ds_dtype_is_float(t)) {
    for (int64_t i = 0; i < ds_tensor_numel(&in[1]); i++)
      if (get(&in[1], i) == 0)
        set(&in[1], i, 2);
  }
  g_assert_cmpint(run_kernel(op, NULL, in, 2, &out, 1), ==, DS_STATUS_OK);
  int64_t idx[DS_MAX_NDIM];
  for (int64_t i = 0; i < ds_tensor_numel(&out); i++) {
    unravel(&out, i, idx);
    double x = get(&in[0], bcast_index(&in[0], &out, idx));
    double y = get(&in[1], bcast_index(&in[1], &out, idx));
    double want = ref_binary(op, x, y);
    if (!ds_dtype_is_float(t))
      want = op == DS_OP_BROADCAST_DIV ? trunc(x / y) : trunc(want);
    assert_close(get(&out, i), want, t == DS_DTYPE_FLOAT32 ? 2e-6 : 1e-12, ds_op_id_name(op), i);
  }
  tensor_free(&in[0]);
  tensor_free(&in[1]);
  tensor_free(&out);
}

static const char *const bcast_cases[][3] = {
    {"(7,)", "(7,)", "(7,)"},
    {"(3, 4)", "(3, 4)", "(3, 4)"},
    {"(3, 4)", "(1,)", "(3, 4)"},
    {"(1,)", "(3, 4)", "(3, 4)"},
    {"(5, 7)", "(7,)", "(5, 7)"},
    {"(5, 7)", "(1, 7)", "(5, 7)"},
    {"(5, 7)", "(5, 1)", "(5, 7)"},
    {"(5, 1)", "(1, 7)", "(5, 7)"},
    {"(2, 3, 4)", "(3, 1)", "(2, 3, 4)"},
    {"(2, 1, 4)", "(1, 3, 1)", "(2, 3, 4)"},
    {"(2, 3, 1, 5)", "(2, 1, 4, 5)", "(2, 3, 4, 5)"},
    {"(1, 1)", "(1, 1)", "(1, 1)"},
    {"(0, 3)", "(1, 3)", "(0, 3)"},
    {"(300, 1000)", "(1000,)", "(300, 1000)"},
    {"(70000,)", "(70000,)", "(70000,)"},
    {"(1000, 70)", "(1000, 1)", "(1000, 70)"},
};

static void test_kernel_binary_float(void)
{
  for (int op = DS_OP_BROADCAST_ADD; op <= DS_OP_BROADCAST_LESSER_EQUAL; op++)
    for (guint c = 0; c < G_N_ELEMENTS(bcast_cases); c++)
      check_binary((DsOpId)op, DS_DTYPE_FLOAT32, bcast_cases[c][0], bcast_cases[c][1],
                   bcast_cases[c][2]);
}

static void test_kernel_binary_other_dtypes(void)
{
  static const DsDType types[] = {DS_DTYPE_FLOAT64, DS_DTYPE_INT32, DS_DTYPE_INT64, DS_DTYPE_INT8};
  for (guint t = 0; t < G_N_ELEMENTS(types); t++)
    for (int op = DS_OP_BROADCAST_ADD; op <= DS_OP_BROADCAST_LESSER_EQUAL; op++)
      for (guint c = 0; c < 10; c++) {
        if (op == DS_OP_BROADCAST_POWER && types[t] == DS_DTYPE_INT8)
          continue; /* 3**3 overflows int8 */
        check_binary((DsOpId)op, types[t], bcast_cases[c][0], bcast_cases[c][1], bcast_cases[c][2]);
      }
  /* Comparisons on uint8 and bool go through the generic path. */
  for (int op = DS_OP_BROADCAST_EQUAL; op <= DS_OP_BROADCAST_LESSER_EQUAL; op++) {
    check_binary((DsOpId)op, DS_DTYPE_UINT8, "(5, 7)", "(7,)", "(5, 7)");
    check_binary((DsOpId)op, DS_DTYPE_BOOL, "(5, 7)", "(5, 1)", "(5, 7)");
  }
}

static void test_kernel_binary_edge_cases(void)
{
  /* Integer division by zero gives 0 instead of trapping. */
  DsTensor in[2] = {tensor_new(DS_DTYPE_INT32, "(3,)"), tensor_new(DS_DTYPE_INT32, "(3,)")};
  DsTensor out = tensor_new(DS_DTYPE_INT32, "(3,)");
  int32_t *a = in[0].data, *b = in[1].data, *o = out.data;
  a[0] = 7, a[1] = INT32_MIN, a[2] = -7;
  b[0] = 0, b[1] = -1, b[2] = 2;
  g_assert_cmpint(run_kernel(DS_OP_ELEMWISE_DIV, NULL, in, 2, &out, 1), ==, DS_STATUS_OK);
  g_assert_cmpint(o[0], ==, 0);
  g_assert_cmpint(o[1], ==, INT32_MIN);
  g_assert_cmpint(o[2], ==, -3);
  tensor_free(&in[0]);
  tensor_free(&in[1]);
  tensor_free(&out);

  /* max/min propagate NaN from either side. */
  DsTensor f[2] = {tensor_new(DS_DTYPE_FLOAT32, "(4,)"), tensor_new(DS_DTYPE_FLOAT32, "(4,)")};
  DsTensor fo = tensor_new(DS_DTYPE_FLOAT32, "(4,)");
  float *fa = f[0].data, *fb = f[1].data, *fr = fo.data;
  fa[0] = NAN, fa[1] = 1, fa[2] = 2, fa[3] = -1;
  fb[0] = 1, fb[1] = NAN, fb[2] = 3, fb[3] = -2;
  g_assert_cmpint(run_kernel(DS_OP_BROADCAST_MAXIMUM, NULL, f, 2, &fo, 1), ==, DS_STATUS_OK);
  g_assert_true(isnan(fr[0]) && isnan(fr[1]));
  g_assert_cmpfloat(fr[2], ==, 3);
  g_assert_cmpfloat(fr[3], ==, -1);
  g_assert_cmpint(run_kernel(DS_OP_BROADCAST_MINIMUM, NULL, f, 2, &fo, 1), ==, DS_STATUS_OK);
  g_assert_true(isnan(fr[0]) && isnan(fr[1]));
  g_assert_cmpfloat(fr[3], ==, -2);

  /* Mismatched shapes and float16 are refused, not computed. */
  DsTensor bad = tensor_new(DS_DTYPE_FLOAT32, "(5,)");
  g_assert_cmpint(run_kernel(DS_OP_BROADCAST_ADD, NULL, f, 2, &bad, 1), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  DsTensor h[2] = {tensor_new(DS_DTYPE_FLOAT16, "(4,)"), tensor_new(DS_DTYPE_FLOAT16, "(4,)")};
  DsTensor ho = tensor_new(DS_DTYPE_FLOAT16, "(4,)");
  g_assert_cmpint(run_kernel(DS_OP_BROADCAST_ADD, NULL, h, 2, &ho, 1), ==, DS_STATUS_UNSUPPORTED);
  tensor_free(&h[0]);
  tensor_free(&h[1]);
  tensor_free(&ho);
  tensor_free(&bad);
  tensor_free(&f[0]);
  tensor_free(&f[1]);
  tensor_free(&fo);
}

static void test_kernel_elemwise_same_shape(void)
{
  static const DsOpId ops[] = {DS_OP_ELEMWISE_ADD, DS_OP_ELEMWISE_SUB, DS_OP_ELEMWISE_MUL,
                               DS_OP_ELEMWISE_DIV};
  static const DsOpId refs[] = {DS_OP_BROADCAST_ADD, DS_OP_BROADCAST_SUB, DS_OP_BROADCAST_MUL,
                                DS_OP_BROADCAST_DIV};
  static const char *const shapes[] = {"(1,)", "(17,)", "(3, 5, 7)", "(0,)", "(200, 300)"};
  for (guint k = 0; k < G_N_ELEMENTS(ops); k++)
    for (guint s = 0; s < G_N_ELEMENTS(shapes); s++) {
      DsTensor in[2] = {tensor_new(DS_DTYPE_FLOAT32, shapes[s]),
                        tensor_new(DS_DTYPE_FLOAT32, shapes[s])};
      DsTensor out = tensor_new(DS_DTYPE_FLOAT32, shapes[s]);
      fill_random_coarse(&in[0], -2, 2, FALSE);
      fill_random_coarse(&in[1], 0.5, 2, FALSE);
      g_assert_cmpint(run_kernel(ops[k], NULL, in, 2, &out, 1), ==, DS_STATUS_OK);
      for (int64_t i = 0; i < ds_tensor_numel(&out); i++)
        assert_close(get(&out, i), ref_binary(refs[k], get(&in[0], i), get(&in[1], i)), 1e-6,
                     ds_op_id_name(ops[k]), i);
      /* In place: the output may be the first input's buffer. */
      g_assert_cmpint(run_kernel(ops[k], NULL, in, 2, &in[0], 1), ==, DS_STATUS_OK);
      for (int64_t i = 0; i < ds_tensor_numel(&out); i++)
        g_assert_cmpfloat(get(&in[0], i), ==, get(&out, i));
      tensor_free(&in[0]);
      tensor_free(&in[1]);
      tensor_free(&out);
    }
}

/* ---- kernels: scalar ---- */

static void check_scalar(const char *op_name, const char *scalar, const char *is_int, DsDType tin,
                         DsDType tout, double (*ref)(double x, double s))
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = is_int != NULL ? make_node(g, op_name, 1, "scalar", scalar, "is_int", is_int, NULL)
                             : make_node(g, op_name, 1, "scalar", scalar, NULL);
  const DsScalarParam *p = n->param;
  DsTensor x = tensor_new(tin, "(50000,)");
  DsTensor out = tensor_new(tout, "(50000,)");
  fill_random_coarse(&x, ds_dtype_is_float(tin) ? 0.5 : 1, 4, FALSE);
  g_assert_cmpint(run_kernel(n->op->id, p, &x, 1, &out, 1), ==, DS_STATUS_OK);
  /* MXNet converts the scalar to the input dtype first when the dtype passes through. */
  double s = p->scalar;
  if (tin == tout && tin == DS_DTYPE_FLOAT32)
    s = (float)s;
  else if (tin == tout && !ds_dtype_is_float(tin))
    s = trunc(s);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++) {
    double want = ref(get(&x, i), s);
    if (!ds_dtype_is_float(tout))
      want = trunc(want);
    assert_close(get(&out, i), want, tout == DS_DTYPE_FLOAT32 ? 2e-6 : 1e-12, op_name, i);
  }
  tensor_free(&x);
  tensor_free(&out);
}

static double r_plus(double x, double s)
{
  return x + s;
}
static double r_minus(double x, double s)
{
  return x - s;
}
static double r_rminus(double x, double s)
{
  return s - x;
}
static double r_mul(double x, double s)
{
  return x * s;
}
static double r_div(double x, double s)
{
  return x / s;
}
static double r_rdiv(double x, double s)
{
  return s / x;
}
static double r_pow(double x, double s)
{
  return pow(x, s);
}
static double r_max(double x, double s)
{
  return fmax(x, s);
}
static double r_min(double x, double s)
{
  return fmin(x, s);
}
static double r_eq(double x, double s)
{
  return x == s;
}
static double r_gt(double x, double s)
{
  return x > s;
}
static double r_lt(double x, double s)
{
  return x < s;
}

static void test_kernel_scalar(void)
{
  static const struct {
    const char *op;
    double (*ref)(double, double);
  } ops[] = {
      {"_plus_scalar", r_plus}, {"_minus_scalar", r_minus}, {"_rminus_scalar", r_rminus},
      {"_mul_scalar", r_mul},   {"_div_scalar", r_div},     {"_rdiv_scalar", r_rdiv},
      {"_power_scalar", r_pow}, {"_maximum_scalar", r_max}, {"_minimum_scalar", r_min},
      {"_equal_scalar", r_eq},  {"_greater_scalar", r_gt},  {"_lesser_scalar", r_lt},
  };
  for (guint k = 0; k < G_N_ELEMENTS(ops); k++) {
    check_scalar(ops[k].op, "1.4142135623730951", NULL, DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32,
                 ops[k].ref);
    check_scalar(ops[k].op, "2", NULL, DS_DTYPE_FLOAT64, DS_DTYPE_FLOAT64, ops[k].ref);
    check_scalar(ops[k].op, "2.5", NULL, DS_DTYPE_INT32, DS_DTYPE_INT32, ops[k].ref);
    check_scalar(ops[k].op, "3", NULL, DS_DTYPE_INT64, DS_DTYPE_INT64, ops[k].ref);
    /* An integer input with a non-integer scalar computes in float64. */
    check_scalar(ops[k].op, "0.5", "False", DS_DTYPE_INT32, DS_DTYPE_FLOAT64, ops[k].ref);
  }
  check_scalar("_plus_scalar", "2", NULL, DS_DTYPE_UINT8, DS_DTYPE_UINT8, r_plus);
  check_scalar("_mul_scalar", "2", NULL, DS_DTYPE_BOOL, DS_DTYPE_INT64, r_mul);
  check_scalar("_mul_scalar", "-1e+18", NULL, DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32, r_mul);
}

static void test_kernel_div_sqrt_dim(void)
{
  DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(2, 3, 64)");
  DsTensor out = tensor_new(DS_DTYPE_FLOAT32, "(2, 3, 64)");
  fill_random_coarse(&x, -4, 4, FALSE);
  g_assert_cmpint(run_kernel(DS_OP_DIV_SQRT_DIM, NULL, &x, 1, &out, 1), ==, DS_STATUS_OK);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
    g_assert_cmpfloat(get(&out, i), ==, (float)get(&x, i) / 8.0f);
  tensor_free(&x);
  tensor_free(&out);
}

/* ---- kernels: unary ---- */

static double ref_unary(DsOpId op, double x)
{
  switch (op) {
  case DS_OP_RELU:
    return x > 0 ? x : 0;
  case DS_OP_SIGMOID:
    return 1 / (1 + exp(-x));
  case DS_OP_TANH:
    return tanh(x);
  case DS_OP_EXP:
    return exp(x);
  case DS_OP_LOG:
    return log(x);
  case DS_OP_SQRT:
    return sqrt(x);
  case DS_OP_RSQRT:
    return 1 / sqrt(x);
  case DS_OP_SQUARE:
    return x * x;
  case DS_OP_ABS:
    return fabs(x);
  case DS_OP_NEGATIVE:
    return -x;
  case DS_OP_RECIPROCAL:
    return 1 / x;
  case DS_OP_ERF:
    return erf(x);
  default:
    g_assert_not_reached();
  }
}

static gboolean positive_only(DsOpId op)
{
  return op == DS_OP_LOG || op == DS_OP_SQRT || op == DS_OP_RSQRT || op == DS_OP_RECIPROCAL;
}

static void test_kernel_unary(void)
{
  static const char *const shapes[] = {"(1,)", "(33,)", "(4, 5, 6)", "(0, 3)", "(100000,)"};
  for (int op = DS_OP_RELU; op <= DS_OP_ERF; op++) {
    for (guint s = 0; s < G_N_ELEMENTS(shapes); s++) {
      DsTensor x = tensor_new(DS_DTYPE_FLOAT32, shapes[s]);
      DsTensor out = tensor_new(DS_DTYPE_FLOAT32, shapes[s]);
      fill_random_coarse(&x, positive_only(op) ? 0.01 : -5, 5, FALSE);
      g_assert_cmpint(run_kernel((DsOpId)op, NULL, &x, 1, &out, 1), ==, DS_STATUS_OK);
      for (int64_t i = 0; i < ds_tensor_numel(&x); i++) {
        /* float32 accuracy: a couple of ulps of the double result. */
        double want = ref_unary(op, get(&x, i));
        double got = get(&out, i);
        double tol = 4e-7 * fabs(want) + 1e-37;
        if (op == DS_OP_ERF || op == DS_OP_TANH || op == DS_OP_SIGMOID)
          tol = MAX(tol, 6e-8); /* near +-1 the ulp is 6e-8 */
        if (!(fabs(got - want) <= tol))
          g_error("%s(%.9g): got %.9g, want %.9g", ds_op_id_name(op), get(&x, i), got, want);
      }
      tensor_free(&x);
      tensor_free(&out);
    }
    /* float64 and int32 (through double) too. */
    DsTensor x = tensor_new(DS_DTYPE_FLOAT64, "(1000,)");
    DsTensor out = tensor_new(DS_DTYPE_FLOAT64, "(1000,)");
    fill_random_coarse(&x, positive_only(op) ? 0.01 : -5, 5, FALSE);
    g_assert_cmpint(run_kernel((DsOpId)op, NULL, &x, 1, &out, 1), ==, DS_STATUS_OK);
    for (int64_t i = 0; i < 1000; i++)
      assert_close(get(&out, i), ref_unary(op, get(&x, i)), 1e-14, ds_op_id_name(op), i);
    tensor_free(&x);
    tensor_free(&out);
  }
  static const DsOpId int_ops[] = {DS_OP_RELU, DS_OP_ABS, DS_OP_NEGATIVE, DS_OP_SQUARE};
  for (guint k = 0; k < G_N_ELEMENTS(int_ops); k++) {
    DsTensor x = tensor_new(DS_DTYPE_INT32, "(999,)");
    DsTensor out = tensor_new(DS_DTYPE_INT32, "(999,)");
    fill_random_coarse(&x, -1000, 1000, FALSE);
    g_assert_cmpint(run_kernel(int_ops[k], NULL, &x, 1, &out, 1), ==, DS_STATUS_OK);
    for (int64_t i = 0; i < 999; i++)
      g_assert_cmpfloat(get(&out, i), ==, ref_unary(int_ops[k], get(&x, i)));
    tensor_free(&x);
    tensor_free(&out);
  }
}

static double ref_sigmoid(double x)
{
  return 1 / (1 + exp(-x));
}

/* The float32 transcendental kernels over dense sweeps: within 2 ulp of the correctly rounded
 * result (sigmoid 2.5: exp's error, then a division), and right at the special values. */
static void test_kernel_transcendental_accuracy(void)
{
  static const struct {
    DsOpId op;
    double (*ref)(double);
    double lo, hi, max_ulp;
  } sweeps[] = {
      {DS_OP_ERF, erf, -5, 5, 2.0},
      {DS_OP_ERF, erf, -1e-3, 1e-3, 2.0},
      {DS_OP_EXP, exp, -103, 88.7, 2.0},
      {DS_OP_EXP, exp, -1, 1, 2.0},
      {DS_OP_TANH, tanh, -10, 10, 2.0},
      {DS_OP_TANH, tanh, -1e-3, 1e-3, 2.0},
      {DS_OP_SIGMOID, ref_sigmoid, -87, 30, 2.5},
  };
  int64_t n = 400001;
  DsTensor x = {.dtype = DS_DTYPE_FLOAT32, .ndim = 1, .shape = {n}};
  DsTensor out = x;
  x.data = g_new(float, n);
  out.data = g_new(float, n);
  for (guint s = 0; s < G_N_ELEMENTS(sweeps); s++) {
    for (int64_t i = 0; i < n; i++)
      ((float *)x.data)[i] =
          (float)(sweeps[s].lo + (sweeps[s].hi - sweeps[s].lo) * (double)i / (double)(n - 1));
    g_assert_cmpint(run_kernel(sweeps[s].op, NULL, &x, 1, &out, 1), ==, DS_STATUS_OK);
    double worst = 0, worst_x = 0;
    for (int64_t i = 0; i < n; i++) {
      double xv = ((float *)x.data)[i], want = sweeps[s].ref(xv), got = ((float *)out.data)[i];
      float w = fabsf((float)want);
      double ulp = (double)nextafterf(w, INFINITY) - (double)w;
      double err = fabs(got - want) / ulp;
      if (err > worst) {
        worst = err;
        worst_x = xv;
      }
    }
    g_test_message("%s on [%g, %g]: worst error %.2f ulp at %.9g", ds_op_id_name(sweeps[s].op),
                   sweeps[s].lo, sweeps[s].hi, worst, worst_x);
    g_assert_cmpfloat(worst, <=, sweeps[s].max_ulp);
  }
  /* Special values: NaN stays NaN, infinities reach the limits. */
  const float special[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1e-30f, 200.0f, -200.0f};
  const int n_special = G_N_ELEMENTS(special);
  x.shape[0] = out.shape[0] = n_special;
  memcpy(x.data, special, sizeof special);
  for (guint s = 0; s < G_N_ELEMENTS(sweeps); s += 2) {
    g_assert_cmpint(run_kernel(sweeps[s].op, NULL, &x, 1, &out, 1), ==, DS_STATUS_OK);
    for (int i = 0; i < n_special; i++) {
      double want = sweeps[s].ref(special[i]);
      float got = ((float *)out.data)[i];
      if (isnan(want))
        g_assert_true(isnan(got));
      else
        g_assert_cmpfloat(got, ==, (float)want);
    }
  }
  g_free(x.data);
  g_free(out.data);
}

static void test_kernel_clip(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "clip", 1, "a_min", "-1.5", "a_max", "2.25", NULL);
  static const DsDType types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32};
  for (guint t = 0; t < G_N_ELEMENTS(types); t++) {
    DsTensor x = tensor_new(types[t], "(40000,)");
    DsTensor out = tensor_new(types[t], "(40000,)");
    fill_random_coarse(&x, -4, 4, FALSE);
    g_assert_cmpint(run_kernel(DS_OP_CLIP, n->param, &x, 1, &out, 1), ==, DS_STATUS_OK);
    /* Integer data compares against the bounds in its own dtype: [-1, 2]. */
    double lo = types[t] == DS_DTYPE_INT32 ? -1 : -1.5, hi = types[t] == DS_DTYPE_INT32 ? 2 : 2.25;
    for (int64_t i = 0; i < 40000; i++) {
      double v = get(&x, i);
      g_assert_cmpfloat(get(&out, i), ==, v > hi ? hi : v < lo ? lo : v);
    }
    tensor_free(&x);
    tensor_free(&out);
  }
}

/* ---- kernels: copies, fills, where, add_n ---- */

static void test_kernel_copy_fill(void)
{
  static const DsDType types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT64,   DS_DTYPE_BOOL,
                                  DS_DTYPE_UINT8,   DS_DTYPE_FLOAT64, DS_DTYPE_INT8};
  for (guint t = 0; t < G_N_ELEMENTS(types); t++) {
    DsTensor x = tensor_new(types[t], "(3, 50000)");
    DsTensor out = tensor_new(types[t], "(3, 50000)");
    fill_random_coarse(&x, -100, 100, FALSE);
    int64_t n = ds_tensor_numel(&x);
    g_assert_cmpint(run_kernel(DS_OP_IDENTITY, NULL, &x, 1, &out, 1), ==, DS_STATUS_OK);
    g_assert_cmpmem(x.data, ds_tensor_nbytes(&x), out.data, ds_tensor_nbytes(&out));
    memset(out.data, 0, ds_tensor_nbytes(&out));
    g_assert_cmpint(run_kernel(DS_OP_BLOCK_GRAD, NULL, &x, 1, &out, 1), ==, DS_STATUS_OK);
    g_assert_cmpmem(x.data, ds_tensor_nbytes(&x), out.data, ds_tensor_nbytes(&out));
    g_assert_cmpint(run_kernel(DS_OP_ONES_LIKE, NULL, &x, 1, &out, 1), ==, DS_STATUS_OK);
    for (int64_t i = 0; i < n; i++)
      g_assert_cmpfloat(get(&out, i), ==, 1);
    g_assert_cmpint(run_kernel(DS_OP_ZEROS_LIKE, NULL, &x, 1, &out, 1), ==, DS_STATUS_OK);
    for (int64_t i = 0; i < n; i++)
      g_assert_cmpfloat(get(&out, i), ==, 0);
    tensor_free(&x);
    tensor_free(&out);
  }
}

static void check_where(DsDType tc, DsDType tx, const char *cshape, const char *xshape)
{
  DsTensor in[3] = {tensor_new(tc, cshape), tensor_new(tx, xshape), tensor_new(tx, xshape)};
  DsTensor out = tensor_new(tx, xshape);
  fill_random_coarse(&in[0], 0, 2, TRUE);
  fill_random_coarse(&in[1], -50, 50, FALSE);
  fill_random_coarse(&in[2], -50, 50, FALSE);
  g_assert_cmpint(run_kernel(DS_OP_WHERE, NULL, in, 3, &out, 1), ==, DS_STATUS_OK);
  int64_t n = ds_tensor_numel(&out), nc = ds_tensor_numel(&in[0]);
  for (int64_t i = 0; i < n; i++) {
    int64_t ci = nc == n ? i : i / (n / nc);
    double want = get(&in[0], ci) != 0 ? get(&in[1], i) : get(&in[2], i);
    g_assert_cmpfloat(get(&out, i), ==, want);
  }
  for (int k = 0; k < 3; k++)
    tensor_free(&in[k]);
  tensor_free(&out);
}

static void test_kernel_where(void)
{
  check_where(DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32, "(2, 12, 384, 4)", "(2, 12, 384, 4)");
  check_where(DS_DTYPE_INT32, DS_DTYPE_FLOAT32, "(7, 5)", "(7, 5)");
  check_where(DS_DTYPE_BOOL, DS_DTYPE_INT64, "(7, 5)", "(7, 5)");
  check_where(DS_DTYPE_UINT8, DS_DTYPE_UINT8, "(1000,)", "(1000,)");
  check_where(DS_DTYPE_FLOAT64, DS_DTYPE_FLOAT64, "(9,)", "(9, 4, 3)");
  check_where(DS_DTYPE_INT64, DS_DTYPE_FLOAT32, "(5000,)", "(5000, 20)");
  check_where(DS_DTYPE_FLOAT32, DS_DTYPE_INT32, "(5,)", "(5, 1)");
  check_where(DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32, "(0,)", "(0, 3)");
  /* A condition that fits neither rule is refused. */
  DsTensor in[3] = {tensor_new(DS_DTYPE_FLOAT32, "(3,)"), tensor_new(DS_DTYPE_FLOAT32, "(2, 3)"),
                    tensor_new(DS_DTYPE_FLOAT32, "(2, 3)")};
  DsTensor out = tensor_new(DS_DTYPE_FLOAT32, "(2, 3)");
  g_assert_cmpint(run_kernel(DS_OP_WHERE, NULL, in, 3, &out, 1), ==, DS_STATUS_INVALID_ARGUMENT);
  for (int k = 0; k < 3; k++)
    tensor_free(&in[k]);
  tensor_free(&out);
}

static void test_kernel_add_n(void)
{
  static const DsDType types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT32, DS_DTYPE_FLOAT64};
  for (guint t = 0; t < G_N_ELEMENTS(types); t++)
    for (int k = 1; k <= 5; k++) {
      DsTensor in[5], out = tensor_new(types[t], "(3, 40000)");
      for (int j = 0; j < k; j++) {
        in[j] = tensor_new(types[t], "(3, 40000)");
        fill_random_coarse(&in[j], -100, 100, FALSE);
      }
      g_assert_cmpint(run_kernel(DS_OP_ADD_N, NULL, in, k, &out, 1), ==, DS_STATUS_OK);
      for (int64_t i = 0; i < ds_tensor_numel(&out); i++) {
        /* Float32 partial sums round: the tolerance scales with the terms, not the sum. */
        double want = 0, mag = 0;
        for (int j = 0; j < k; j++) {
          want += get(&in[j], i);
          mag += fabs(get(&in[j], i));
        }
        g_assert_cmpfloat(fabs(get(&out, i) - want), <=, 1e-6 * mag);
      }
      for (int j = 0; j < k; j++)
        tensor_free(&in[j]);
      tensor_free(&out);
    }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ds_test_ops_init(20240611);

  g_test_add_func("/ops/elemwise/shape/same-both-ways", test_shape_elemwise_both_ways);
  g_test_add_func("/ops/elemwise/shape/broadcast", test_shape_broadcast);
  g_test_add_func("/ops/elemwise/shape/where", test_shape_where);
  g_test_add_func("/ops/elemwise/shape/unary-scalar-add-n", test_shape_unary_scalar_add_n);
  g_test_add_func("/ops/elemwise/dtype/scalar", test_dtype_scalar);
  g_test_add_func("/ops/elemwise/aliases", test_aliases);
  g_test_add_func("/ops/elemwise/kernel/binary-float32", test_kernel_binary_float);
  g_test_add_func("/ops/elemwise/kernel/binary-other-dtypes", test_kernel_binary_other_dtypes);
  g_test_add_func("/ops/elemwise/kernel/binary-edge-cases", test_kernel_binary_edge_cases);
  g_test_add_func("/ops/elemwise/kernel/elemwise-same-shape", test_kernel_elemwise_same_shape);
  g_test_add_func("/ops/elemwise/kernel/scalar", test_kernel_scalar);
  g_test_add_func("/ops/elemwise/kernel/div-sqrt-dim", test_kernel_div_sqrt_dim);
  g_test_add_func("/ops/elemwise/kernel/unary", test_kernel_unary);
  g_test_add_func("/ops/elemwise/kernel/transcendental-accuracy",
                  test_kernel_transcendental_accuracy);
  g_test_add_func("/ops/elemwise/kernel/clip", test_kernel_clip);
  g_test_add_func("/ops/elemwise/kernel/copy-fill", test_kernel_copy_fill);
  g_test_add_func("/ops/elemwise/kernel/where", test_kernel_where);
  g_test_add_func("/ops/elemwise/kernel/add-n", test_kernel_add_n);

  int status = g_test_run();
  g_rand_free(rng);
  ds_thread_pool_free(pool);
  return status;
}
