/* test-ops-elemwise.c: the elementwise, broadcast and scalar ops: attribute parsing, shape and
 * dtype rules, and the CPU kernels (looked up through the backend's table) against
 * double-precision reference loops on random data. */
#include <float.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "ds-cpu.h"
#include "ds-error.h"
#include "ds-op.h"
#include "ds-ops-common.h"
#include "ds-ops-nn.h"
#include "ds-test-ops.h"
#include "ds-test-unary.h"

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

/* Every same-shape binary op of the family (elemwise_*) and every broadcasting one: the shape
 * rule each op's definition names, on the cases that tell them apart. Driven by the registry,
 * so a new binary op is covered by listing it. */
static void test_shape_every_binary_op(void)
{
  guint n_same = 0, n_broadcast = 0;
  for (int id = 0; id < DS_OP_COUNT; id++) {
    const DsOpDef *def = ds_op_get((DsOpId)id);
    gboolean broadcast = (def->traits & DS_OP_TRAIT_BROADCAST) != 0;
    gboolean same = !broadcast && g_str_has_prefix(def->name, "elemwise_");
    /* Fixed arities ignore the param; where-like ops (three inputs) have tests of their own. */
    g_autofree void *zeroed = g_malloc0(MAX(def->param_size, 1));
    if ((!same && !broadcast) || def->num_inputs(zeroed) != 2)
      continue;
    g_autoptr(DsGraph) g = ds_graph_new();
    DsNode *n = make_node(g, def->name, 2, NULL);
    g_test_message("%s", def->name);
    DsShape in[2] = {shp("(2, 3)"), shp(same ? "?" : "(3,)")}, out[1] = {shp("?")};
    g_assert_null(infer(n, in, out));
    assert_shape(&out[0], "(2, 3)");
    if (same)
      assert_shape(&in[1], "(2, 3)");
    DsShape bad[2] = {shp("(2, 3)"), shp("(4, 3)")}, bad_out[1] = {shp("?")};
    g_autofree char *msg = infer(n, bad, bad_out);
    g_assert_nonnull(msg);
    g_assert_nonnull(strstr(msg, def->name));
    n_same += same;
    n_broadcast += broadcast;
  }
  g_assert_cmpuint(n_same, >=, 4);
  g_assert_cmpuint(n_broadcast, >=, 13);
}

/* Every op with a scalar attribute (_plus_scalar ... _lesser_scalar) keeps its input's shape,
 * both ways, and clip the same. */
static void test_shape_every_scalar_op(void)
{
  guint n_scalar = 0;
  for (int id = 0; id < DS_OP_COUNT; id++) {
    const DsOpDef *def = ds_op_get((DsOpId)id);
    gboolean clip = strcmp(def->name, "clip") == 0;
    if (!clip && !(g_str_has_prefix(def->name, "_") && g_str_has_suffix(def->name, "_scalar")))
      continue;
    g_autoptr(DsGraph) g = ds_graph_new();
    DsNode *n = clip ? make_node(g, "clip", 1, "a_min", "-1", "a_max", "1", NULL)
                     : make_node(g, def->name, 1, "scalar", "2", NULL);
    g_test_message("%s", def->name);
    DsShape in[1] = {shp("(4, ?, 5)")}, out[1] = {shp("(?, 3, ?)")};
    g_assert_null(infer(n, in, out));
    assert_shape(&out[0], "(4, 3, 5)");
    assert_shape(&in[0], "(4, 3, 5)");
    DsShape bad_in[1] = {shp("(4, 3)")}, bad_out[1] = {shp("(4, 2)")};
    g_autofree char *msg = infer(n, bad_in, bad_out);
    g_assert_nonnull(msg);
    n_scalar += !clip;
  }
  g_assert_cmpuint(n_scalar, >=, 12);
}

/* dequantize_linear shares quantize_linear's rule: per tensor or per axis. */
static void test_shape_dequantize(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *dq = make_node(g, "dequantize_linear", 3, NULL);
  DsShape in[3] = {shp("(2, 3, 4)"), shp("(?,)"), shp("?")}, out[1] = {shp("?")};
  g_assert_null(infer(dq, in, out));
  assert_shape(&out[0], "(2, 3, 4)");
  assert_shape(&in[1], "(3,)");
  assert_shape(&in[2], "(3,)");
  DsShape bad[3] = {shp("(2, 3)"), shp("(1, 3)"), shp("?")}, bad_out[1] = {shp("?")};
  g_autofree char *msg = infer(dq, bad, bad_out);
  g_assert_nonnull(strstr(msg, "scalar or 1-D"));
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
  /* The unary math ops have their table (test_shape_unary_table). */
  const char *unary[] = {"_copy", "BlockGrad", "zeros_like", "ones_like", "_contrib_div_sqrt_dim"};
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
      {"_maximum", DS_OP_BROADCAST_MAXIMUM},
      {"_Minimum", DS_OP_BROADCAST_MINIMUM},
      {"_power", DS_OP_BROADCAST_POWER},
      {"_mod", DS_OP_BROADCAST_MOD},
      {"_equal", DS_OP_BROADCAST_EQUAL},
      {"_not_equal", DS_OP_BROADCAST_NOT_EQUAL},
      {"_greater", DS_OP_BROADCAST_GREATER},
      {"_greater_equal", DS_OP_BROADCAST_GREATER_EQUAL},
      {"_lesser", DS_OP_BROADCAST_LESSER},
      {"_Lesser_Equal", DS_OP_BROADCAST_LESSER_EQUAL},
      {"_logical_and", DS_OP_BROADCAST_LOGICAL_AND},
      {"_logical_or", DS_OP_BROADCAST_LOGICAL_OR},
      {"_logical_xor", DS_OP_BROADCAST_LOGICAL_XOR},
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
  for (int id = DS_OP_ELEMWISE_ADD; id <= DS_OP_DYNAMIC_QUANTIZE_LINEAR; id++)
    g_assert_nonnull(ds_op_get((DsOpId)id));
  char buf[16];
  g_assert_cmpstr(ds_op_input_name(ds_op_get(DS_OP_BROADCAST_ADD), 2, 1, buf), ==, "rhs");
  g_assert_cmpstr(ds_op_input_name(ds_op_get(DS_OP_WHERE), 3, 0, buf), ==, "condition");
}

/* ---- kernels: binary ---- */

/* What core/ds-math-binary.h's function `fn` gives, in double (NumPy's and MXNet's rules),
 * written independently of the table. */
static double ref_binary_fn(DsMathBinaryFn fn, double x, double y)
{
  switch (fn) {
  case DS_MATH_BIN_ADD:
    return x + y;
  case DS_MATH_BIN_SUB:
    return x - y;
  case DS_MATH_BIN_MUL:
    return x * y;
  case DS_MATH_BIN_DIV:
    return x / y;
  case DS_MATH_BIN_MAX:
    return isnan(x) || isnan(y) ? NAN : fmax(x, y);
  case DS_MATH_BIN_MIN:
    return isnan(x) || isnan(y) ? NAN : fmin(x, y);
  case DS_MATH_BIN_POW:
    return pow(x, y);
  case DS_MATH_BIN_EQ:
    return x == y;
  case DS_MATH_BIN_NE:
    return x != y;
  case DS_MATH_BIN_GT:
    return x > y;
  case DS_MATH_BIN_GE:
    return x >= y;
  case DS_MATH_BIN_LT:
    return x < y;
  case DS_MATH_BIN_LE:
    return x <= y;
  case DS_MATH_BIN_MOD: {
    double r = fmod(x, y);
    return r != 0 && (r < 0) != (y < 0) ? r + y : r;
  }
  case DS_MATH_BIN_FMOD:
    return fmod(x, y);
  case DS_MATH_BIN_AND:
    return x != 0 && y != 0;
  case DS_MATH_BIN_OR:
    return x != 0 || y != 0;
  case DS_MATH_BIN_XOR:
    return (x != 0) != (y != 0);
  case DS_MATH_BIN_HYPOT:
    return hypot(x, y);
  default:
    g_assert_not_reached();
  }
}

/* The broadcast ops' meaning: which function each applies. */
static double ref_binary(DsOpId op, double x, double y)
{
  switch (op) {
  case DS_OP_BROADCAST_ADD:
    return ref_binary_fn(DS_MATH_BIN_ADD, x, y);
  case DS_OP_BROADCAST_SUB:
    return ref_binary_fn(DS_MATH_BIN_SUB, x, y);
  case DS_OP_BROADCAST_MUL:
    return ref_binary_fn(DS_MATH_BIN_MUL, x, y);
  case DS_OP_BROADCAST_DIV:
    return ref_binary_fn(DS_MATH_BIN_DIV, x, y);
  case DS_OP_BROADCAST_MAXIMUM:
    return ref_binary_fn(DS_MATH_BIN_MAX, x, y);
  case DS_OP_BROADCAST_MINIMUM:
    return ref_binary_fn(DS_MATH_BIN_MIN, x, y);
  case DS_OP_BROADCAST_POWER:
    return ref_binary_fn(DS_MATH_BIN_POW, x, y);
  case DS_OP_BROADCAST_EQUAL:
    return ref_binary_fn(DS_MATH_BIN_EQ, x, y);
  case DS_OP_BROADCAST_NOT_EQUAL:
    return ref_binary_fn(DS_MATH_BIN_NE, x, y);
  case DS_OP_BROADCAST_GREATER:
    return ref_binary_fn(DS_MATH_BIN_GT, x, y);
  case DS_OP_BROADCAST_GREATER_EQUAL:
    return ref_binary_fn(DS_MATH_BIN_GE, x, y);
  case DS_OP_BROADCAST_LESSER:
    return ref_binary_fn(DS_MATH_BIN_LT, x, y);
  case DS_OP_BROADCAST_LESSER_EQUAL:
    return ref_binary_fn(DS_MATH_BIN_LE, x, y);
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
                         DsDType tout)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = is_int != NULL ? make_node(g, op_name, 1, "scalar", scalar, "is_int", is_int, NULL)
                             : make_node(g, op_name, 1, "scalar", scalar, NULL);
  const DsScalarParam *p = n->param;
  DsTensor x = tensor_new(tin, "(50000,)");
  DsTensor out = tensor_new(tout, "(50000,)");
  fill_random_coarse(&x, ds_dtype_is_float(tin) ? 0.5 : 1, 4, FALSE);
  set(&x, 0, 2); /* equal to some scalars, so the comparisons see both answers */
  g_assert_cmpint(run_kernel(n->op->id, p, &x, 1, &out, 1), ==, DS_STATUS_OK);
  /* MXNet converts the scalar to the input dtype first when the dtype passes through. */
  double s = p->scalar;
  if (tin == tout && tin == DS_DTYPE_FLOAT32)
    s = (float)s;
  else if (tin == tout && !ds_dtype_is_float(tin))
    s = trunc(s);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++) {
    double v = get(&x, i);
    double want = p->reverse ? ref_binary_fn(p->fn, s, v) : ref_binary_fn(p->fn, v, s);
    if (!ds_dtype_is_float(tout))
      want = trunc(want);
    assert_close(get(&out, i), want, tout == DS_DTYPE_FLOAT32 ? 2e-6 : 1e-12, op_name, i);
  }
  tensor_free(&x);
  tensor_free(&out);
}

/* Every op of DS_OPS_SCALAR, in every dtype it takes, against the reference of the function
 * and side its line names. */
static void test_kernel_scalar(void)
{
  static const char *const ops[] = {
#define SCALAR_NAME(ID, NAME, ALIAS, FN, REVERSE) NAME,
      DS_OPS_SCALAR(SCALAR_NAME)
#undef SCALAR_NAME
  };
  for (guint k = 0; k < G_N_ELEMENTS(ops); k++) {
    check_scalar(ops[k], "1.4142135623730951", NULL, DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32);
    check_scalar(ops[k], "2", NULL, DS_DTYPE_FLOAT64, DS_DTYPE_FLOAT64);
    check_scalar(ops[k], "2.5", NULL, DS_DTYPE_INT32, DS_DTYPE_INT32);
    check_scalar(ops[k], "3", NULL, DS_DTYPE_INT64, DS_DTYPE_INT64);
    /* An integer input with a non-integer scalar computes in float64. */
    check_scalar(ops[k], "0.5", "False", DS_DTYPE_INT32, DS_DTYPE_FLOAT64);
  }
  /* Each op's meaning, from MXNet's documentation: one literal case each, so a wrong function
   * or side in DS_OPS_SCALAR shows. */
  static const struct {
    const char *op, *scalar;
    double x, want;
  } literal[] = {
      {"_plus_scalar", "2", 3, 5},           {"_minus_scalar", "2", 3, 1},
      {"_rminus_scalar", "2", 3, -1},        {"_mul_scalar", "2", 3, 6},
      {"_div_scalar", "2", 3, 1.5},          {"_rdiv_scalar", "3", 2, 1.5},
      {"_power_scalar", "2", 3, 9},          {"_rpower_scalar", "2", 3, 8},
      {"_maximum_scalar", "2", 3, 3},        {"_minimum_scalar", "2", 3, 2},
      {"_equal_scalar", "3", 3, 1},          {"_not_equal_scalar", "3", 3, 0},
      {"_greater_scalar", "2", 3, 1},        {"_greater_equal_scalar", "3", 3, 1},
      {"_lesser_scalar", "2", 3, 0},         {"_lesser_equal_scalar", "3", 3, 1},
      {"_mod_scalar", "3", 7, 1},            {"_rmod_scalar", "7", 3, 1},
      {"_mod_scalar", "3", -7, 2},           {"_logical_and_scalar", "0", 3, 0},
      {"_logical_or_scalar", "0", 3, 1},     {"_logical_xor_scalar", "2", 3, 0},
      {"_hypot_scalar", "4", 3, 5},
  };
  guint n_ops = 0;
#define COUNT_SCALAR(ID, NAME, ALIAS, FN, REVERSE) n_ops++;
  DS_OPS_SCALAR(COUNT_SCALAR)
#undef COUNT_SCALAR
  g_assert_cmpuint(G_N_ELEMENTS(literal), ==, n_ops + 1);
  for (guint k = 0; k < G_N_ELEMENTS(literal); k++) {
    g_autoptr(DsGraph) g = ds_graph_new();
    DsNode *n = make_node(g, literal[k].op, 1, "scalar", literal[k].scalar, NULL);
    DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(1,)"), out = tensor_new(DS_DTYPE_FLOAT32, "(1,)");
    set(&x, 0, literal[k].x);
    run_ok(n->op->id, n->param, &x, 1, &out, 1);
    if (get(&out, 0) != literal[k].want)
      g_error("%s(%g, scalar=%s): got %g, want %g", literal[k].op, literal[k].x,
              literal[k].scalar, get(&out, 0), literal[k].want);
    tensor_free(&x);
    tensor_free(&out);
  }
  check_scalar("_plus_scalar", "2", NULL, DS_DTYPE_UINT8, DS_DTYPE_UINT8);
  check_scalar("_mul_scalar", "2", NULL, DS_DTYPE_BOOL, DS_DTYPE_INT64);
  check_scalar("_mul_scalar", "-1e+18", NULL, DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32);
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

/* ---- the unary math ops: one case each, from ds-test-unary.h ---- */

#define UNARY_REF(NAME, LO, HI, GPU, INTS, ATTRS, REF)                                             \
  static double unary_ref_##NAME(double x, double a, double b)                                     \
  {                                                                                                \
    (void)a;                                                                                       \
    (void)b;                                                                                       \
    return (REF);                                                                                  \
  }
DS_TEST_UNARY_CASES(UNARY_REF)
#undef UNARY_REF

typedef struct {
  const char *op;
  double lo, hi;
  gboolean ints; /* integer inputs give the exact reference */
  const char *attrs[7];
  double (*ref)(double x, double a, double b);
} UnaryCase;

#define INTS_EXACT TRUE
#define INTS_NONE  FALSE
#define UNARY_CASE(NAME, LO, HI, GPU, INTS, ATTRS, REF)                                            \
  {#NAME, LO, HI, INTS_##INTS, {DS_TEST_UNPAREN ATTRS}, unary_ref_##NAME},
static const UnaryCase unary_cases[] = {DS_TEST_UNARY_CASES(UNARY_CASE)};
#undef UNARY_CASE

/* Node "node0" of the case's op with its attributes (two pairs at most), parsed. */
static DsNode *unary_case_node(DsGraph *g, const UnaryCase *c)
{
  g_assert_null(c->attrs[4]);
  return make_node(g, c->op, 1, c->attrs[0], c->attrs[1], c->attrs[2], c->attrs[3], NULL);
}

/* The coefficients the kernel reads: clip's bounds, or an activation's alpha and beta. */
static void unary_case_coefficients(const DsNode *n, double *a, double *b)
{
  *a = *b = 0;
  if (n->op->id == DS_OP_CLIP) {
    *a = ((const DsClipParam *)n->param)->a_min;
    *b = ((const DsClipParam *)n->param)->a_max;
  } else if (n->param != NULL) {
    *a = ((const DsActParam *)n->param)->alpha;
    *b = ((const DsActParam *)n->param)->beta;
  }
}

/* Every unary math op has a case, and every case keeps its input's shape both ways. */
static void test_shape_unary_table(void)
{
  guint n_math = 0;
#define COUNT_OP(ID, NAME) n_math++;
  DS_OPS_UNARY_MATH(COUNT_OP)
#undef COUNT_OP
  /* The plain ops and the six with coefficients (clip and the ONNX activations). */
  g_assert_cmpuint(G_N_ELEMENTS(unary_cases), ==, n_math + 6);
  for (guint k = 0; k < G_N_ELEMENTS(unary_cases); k++) {
    g_autoptr(DsGraph) g = ds_graph_new();
    DsNode *n = unary_case_node(g, &unary_cases[k]);
    g_assert_true(n->op->traits & DS_OP_TRAIT_ELEMWISE);
    DsShape in[1] = {shp("?")}, out[1] = {shp("(2, 7)")};
    g_assert_null(infer(n, in, out));
    assert_shape(&in[0], "(2, 7)");
    DsShape in2[1] = {shp("(3, 0, 5)")}, out2[1] = {shp("?")};
    g_assert_null(infer(n, in2, out2));
    assert_shape(&out2[0], "(3, 0, 5)");
  }
}

/* Within `ulps` float32 ulps of the double result (plus one ulp of 1, for results near 0
 * that come out of a cancellation). */
static void assert_f32_close(double got, double want, double ulps, const char *what, int64_t i,
                             double x)
{
  if (isnan(want) ? isnan(got) : (isinf(want) && got == want))
    return;
  double tol = ulps * (FLT_EPSILON / 2) * fabs(want) + FLT_EPSILON / 2;
  if (!(fabs(got - want) <= tol))
    g_error("%s[%" G_GINT64_FORMAT "](%.9g): got %.9g, want %.9g", what, i, x, got, want);
}

/* Each op on float32 over shapes of every kind (a scalar, empty, odd sizes, 10^5 across
 * threads), on float64, and on integers where it is exact for them; against the double
 * reference, with halves, zeros and thresholds among the inputs where rounding and branches
 * decide. */
static void test_kernel_unary_table(void)
{
  static const char *const shapes[] = {"()", "(1,)", "(33,)", "(4, 5, 6)", "(0, 3)", "(100000,)"};
  const double special[] = {2.5, -0.5, 0, 1.5, 0.75, -3, 0.6};
  for (guint k = 0; k < G_N_ELEMENTS(unary_cases); k++) {
    const UnaryCase *c = &unary_cases[k];
    g_autoptr(DsGraph) g = ds_graph_new();
    DsNode *n = unary_case_node(g, c);
    DsOpId id = n->op->id;
    double a, b;
    unary_case_coefficients(n, &a, &b);
    for (guint s = 0; s < G_N_ELEMENTS(shapes); s++) {
      DsTensor x = tensor_new(DS_DTYPE_FLOAT32, shapes[s]);
      DsTensor out = tensor_new(DS_DTYPE_FLOAT32, shapes[s]);
      int64_t numel = ds_tensor_numel(&x);
      fill_random_coarse(&x, c->lo, c->hi, FALSE);
      for (guint i = 0; i < G_N_ELEMENTS(special) && i < (guint)numel; i++)
        if (special[i] >= c->lo && special[i] <= c->hi)
          set(&x, i, special[i]);
      run_ok(id, n->param, &x, 1, &out, 1);
      for (int64_t i = 0; i < numel; i++) {
        double xi = get(&x, i);
        assert_f32_close(get(&out, i), c->ref(xi, (float)a, (float)b), 8, c->op, i, xi);
      }
      tensor_free(&x);
      tensor_free(&out);
    }
    DsTensor x = tensor_new(DS_DTYPE_FLOAT64, "(1000,)");
    DsTensor out = tensor_new(DS_DTYPE_FLOAT64, "(1000,)");
    fill_random_coarse(&x, c->lo, c->hi, FALSE);
    run_ok(id, n->param, &x, 1, &out, 1);
    for (int64_t i = 0; i < 1000; i++)
      assert_close(get(&out, i), c->ref(get(&x, i), a, b), 1e-12, c->op, i);
    tensor_free(&x);
    tensor_free(&out);
    if (!c->ints)
      continue;
    static const DsDType int_types[] = {DS_DTYPE_INT32, DS_DTYPE_INT64};
    for (guint t = 0; t < G_N_ELEMENTS(int_types); t++) {
      DsTensor xi = tensor_new(int_types[t], "(999,)"), oi = tensor_new(int_types[t], "(999,)");
      fill_random_coarse(&xi, -1000, 1000, FALSE);
      set(&xi, 0, 0);
      run_ok(id, n->param, &xi, 1, &oi, 1);
      for (int64_t i = 0; i < 999; i++) {
        /* clip's integer bounds are the bounds truncated, as MXNet's DType(a_min). */
        double want = id == DS_OP_CLIP ? c->ref(get(&xi, i), trunc(a), trunc(b))
                                       : c->ref(get(&xi, i), a, b);
        g_assert_cmpfloat(get(&oi, i), ==, want);
      }
      tensor_free(&xi);
      tensor_free(&oi);
    }
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
      {DS_OP_LOG, log, 1e-3, 1e3, 2.0},
      {DS_OP_LOG, log, 0.5, 2, 2.0},
      {DS_OP_LOG, log, 1e-44, 1e-37, 2.0}, /* subnormals */
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
  /* Special values: NaN stays NaN, infinities reach the limits (log: 0 gives -inf, a negative
   * number NaN). */
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

/* ---- NumPy-style and ONNX ops: shape and dtype rules ---- */

static DsDType infer_dtype2(DsNode *n, DsDType a, DsDType b, DsDType *in_out)
{
  DsDType in[2] = {a, b}, out[1] = {DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(n->op->infer_type(n, n->param, in, out, &error));
  g_assert_no_error(error);
  if (in_out != NULL)
    *in_out = in[1];
  return out[0];
}

static void test_dtype_np_binary(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  /* Comparisons give bool; the operands must agree. */
  static const char *const cmps[] = {"_npi_equal",         "_npi_not_equal", "_npi_greater",
                                     "_npi_greater_equal", "_npi_less",      "_npi_less_equal"};
  for (guint i = 0; i < G_N_ELEMENTS(cmps); i++) {
    DsNode *n = make_node(g, cmps[i], 2, NULL);
    DsDType rhs;
    g_assert_cmpint(infer_dtype2(n, DS_DTYPE_INT32, DS_DTYPE_UNKNOWN, &rhs), ==, DS_DTYPE_BOOL);
    g_assert_cmpint(rhs, ==, DS_DTYPE_INT32);
    DsDType in[2] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT64}, out[1] = {DS_DTYPE_UNKNOWN};
    GError *error = NULL;
    g_assert_false(n->op->infer_type(n, n->param, in, out, &error));
    g_assert_error(error, DS_ERROR, DS_ERROR_SHAPE);
    g_assert_nonnull(strstr(error->message, "int64"));
    g_clear_error(&error);
    DsShape s_in[2] = {shp("(5, 1)"), shp("(1, 7)")}, s_out[1] = {shp("?")};
    g_assert_null(infer(n, s_in, s_out));
    assert_shape(&s_out[0], "(5, 7)");
  }
  /* broadcast_power: the base's dtype; a different exponent dtype is allowed, an unknown one
   * takes the base's (MXNet's rule). */
  DsNode *p = make_node(g, "broadcast_power", 2, NULL);
  DsDType rhs;
  g_assert_cmpint(infer_dtype2(p, DS_DTYPE_FLOAT32, DS_DTYPE_INT64, &rhs), ==, DS_DTYPE_FLOAT32);
  g_assert_cmpint(rhs, ==, DS_DTYPE_INT64);
  g_assert_cmpint(infer_dtype2(p, DS_DTYPE_INT32, DS_DTYPE_UNKNOWN, &rhs), ==, DS_DTYPE_INT32);
  g_assert_cmpint(rhs, ==, DS_DTYPE_INT32);
  /* The rest keep one dtype throughout. */
  static const char *const same[] = {"broadcast_mod",           "_npi_fmod",
                                     "broadcast_logical_and",   "broadcast_logical_or",
                                     "broadcast_logical_xor",   "broadcast_prelu",
                                     "_npi_bitwise_left_shift", "_npi_bitwise_right_shift",
                                     "_npi_bitwise_and",        "_npi_bitwise_or",
                                     "_npi_bitwise_xor"};
  for (guint i = 0; i < G_N_ELEMENTS(same); i++) {
    DsNode *n = make_node(g, same[i], 2, NULL);
    g_assert_null(n->op->infer_type);
    g_assert_true(n->op->traits & DS_OP_TRAIT_BROADCAST);
    DsShape s_in[2] = {shp("(2, 1, 4)"), shp("(3, 1)")}, s_out[1] = {shp("?")};
    g_assert_null(infer(n, s_in, s_out));
    assert_shape(&s_out[0], "(2, 3, 4)");
  }
  g_assert_cmpint(ds_op_lookup("broadcast_fmod")->id, ==, DS_OP_BROADCAST_FMOD);
}

static void test_shape_np_where(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "_npi_where", 3, NULL);
  static const struct {
    const char *c, *x, *y, *out;
  } cases[] = {
      {"(2, 3)", "(2, 3)", "(2, 3)", "(2, 3)"},
      {"(2, 1, 4)", "(3, 1)", "(1,)", "(2, 3, 4)"},
      {"()", "(5,)", "()", "(5,)"},
      {"(4, 1)", "()", "(1, 6)", "(4, 6)"},
      {"(?, 3)", "(2, 1)", "(3,)", "(2, 3)"},
      {"(0, 1)", "(1, 5)", "()", "(0, 5)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsShape in[3] = {shp(cases[i].c), shp(cases[i].x), shp(cases[i].y)}, out[1] = {shp("?")};
    g_assert_null(infer(n, in, out));
    assert_shape(&out[0], cases[i].out);
  }
  DsShape in[3] = {shp("(3,)"), shp("(2, 4)"), shp("()")}, out[1] = {shp("?")};
  g_autofree char *msg = infer(n, in, out);
  g_assert_nonnull(msg);
  g_assert_nonnull(strstr(msg, "condition shape (3,)"));
  /* An unknown rank leaves the output unknown. */
  DsShape in2[3] = {shp("?"), shp("(2, 4)"), shp("()")}, out2[1] = {shp("?")};
  g_assert_null(infer(n, in2, out2));
  g_assert_cmpint(out2[0].ndim, ==, -1);
  /* x, y and out agree; the condition is free. */
  DsDType t_in[3] = {DS_DTYPE_BOOL, DS_DTYPE_INT64, DS_DTYPE_UNKNOWN},
          t_out[1] = {DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(n->op->infer_type(n, n->param, t_in, t_out, &error));
  g_assert_cmpint(t_in[2], ==, DS_DTYPE_INT64);
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_INT64);
  g_assert_cmpint(t_in[0], ==, DS_DTYPE_BOOL);
}

static void test_shape_unary_predicates(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  static const char *const preds[] = {"_npi_isnan", "_npi_isinf", "_npi_isposinf", "_npi_isneginf"};
  for (guint i = 0; i < G_N_ELEMENTS(preds); i++) {
    DsNode *n = make_node(g, preds[i], 1, NULL);
    DsDType in[1] = {DS_DTYPE_FLOAT64}, out[1] = {DS_DTYPE_UNKNOWN};
    GError *error = NULL;
    g_assert_true(n->op->infer_type(n, n->param, in, out, &error));
    g_assert_cmpint(out[0], ==, DS_DTYPE_BOOL);
    DsShape s_in[1] = {shp("(3, 0)")}, s_out[1] = {shp("?")};
    g_assert_null(infer(n, s_in, s_out));
    assert_shape(&s_out[0], "(3, 0)");
  }
  /* Coefficients: ONNX's defaults, explicit values, and celu's forbidden 0. */
  DsNode *hs = make_node(g, "hard_sigmoid", 1, NULL);
  g_assert_cmpfloat(((DsActParam *)hs->param)->alpha, ==, 0.2);
  g_assert_cmpfloat(((DsActParam *)hs->param)->beta, ==, 0.5);
  DsNode *se = make_node(g, "selu", 1, NULL);
  g_assert_cmpfloat(((DsActParam *)se->param)->alpha, ==, 1.67326319217681884765625);
  g_assert_cmpfloat(((DsActParam *)se->param)->beta, ==, 1.05070102214813232421875);
  DsNode *se2 = make_node(g, "selu", 1, "alpha", "2", "gamma", "3", NULL);
  g_assert_cmpfloat(((DsActParam *)se2->param)->beta, ==, 3.0);
  DsNode *sh = make_node(g, "shrink", 1, "lambd", "1.5", NULL);
  g_assert_cmpfloat(((DsActParam *)sh->param)->alpha, ==, 1.5);
  g_assert_cmpfloat(((DsActParam *)sh->param)->beta, ==, 0.0);
  g_autofree char *msg = parse_error("celu", 1, "alpha", "0", NULL);
  g_assert_nonnull(strstr(msg, "alpha"));
  g_autofree char *msg2 = parse_error("thresholded_relu", 1, "alpha", "x", NULL);
  g_assert_nonnull(strstr(msg2, "alpha"));
}

static void test_shape_np_reduce(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  static const char *const ops[] = {"_npi_sum",  "_npi_mean",  "_npi_max", "_npi_min",
                                    "_npi_prod", "sum_square", "l1_norm",  "l2_norm",
                                    "log_sum",   "log_sum_exp"};
  static const struct {
    const char *axis, *keepdims, *in, *out;
  } cases[] = {
      {"(1,)", "False", "(2, 3, 4)", "(2, 4)"},  {"(1,)", "True", "(2, 3, 4)", "(2, 1, 4)"},
      {NULL, "False", "(2, 3, 4)", "()"},        {"None", "True", "(2, 3, 4)", "(1, 1, 1)"},
      {"()", "False", "(2, 3, 4)", "(2, 3, 4)"}, {"(-1, 0)", "False", "(2, 3, 4)", "(3,)"},
      {"(0,)", "False", "(5,)", "()"},           {NULL, "False", "()", "()"},
      {"(0,)", "True", "(0, 3)", "(1, 3)"},      {"(1,)", "False", "(?, 3)", "(?,)"},
  };
  for (guint k = 0; k < G_N_ELEMENTS(ops); k++)
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
      DsNode *n =
          cases[i].axis != NULL
              ? make_node(g, ops[k], 1, "axis", cases[i].axis, "keepdims", cases[i].keepdims, NULL)
              : make_node(g, ops[k], 1, "keepdims", cases[i].keepdims, NULL);
      DsShape in[1] = {shp(cases[i].in)}, out[1] = {shp("?")};
      g_assert_null(infer(n, in, out));
      assert_shape(&out[0], cases[i].out);
      g_assert_null(n->op->infer_type); /* the dtype passes through */
    }
  DsNode *n = make_node(g, "_npi_sum", 1, "axis", "(0, 0)", NULL);
  DsShape in[1] = {shp("(2, 3)")}, out[1] = {shp("?")};
  g_autofree char *msg = infer(n, in, out);
  g_assert_nonnull(strstr(msg, "duplicates"));
  DsNode *m = make_node(g, "l2_norm", 1, "axis", "(2,)", NULL);
  g_autofree char *msg2 = infer(m, in, out);
  g_assert_nonnull(msg2);
  g_assert_nonnull(strstr(msg2, "axis"));

  /* Symbolic dims pass through. */
  Sym s = sym_new();
  DsNode *sy = make_node(g, "log_sum_exp", 1, "axis", "(-1,)", NULL);
  DsShape sin[1] = {sym_shp(s.exprs, "(b, 7, n)")}, sout[1] = {shp("?")};
  g_assert_null(infer_in(s.ctx, sy, sin, sout));
  assert_shape(&sout[0], "(b, 7)");
  sym_free(&s);
}

static void test_shape_arg_reduce(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  static const struct {
    const char *axis, *keepdims, *in, *out;
  } cases[] = {
      {"1", "True", "(2, 3, 4)", "(2, 1, 4)"},
      {"-1", "False", "(2, 3, 4)", "(2, 3)"},
      {"0", "False", "(5,)", "()"},
      {"None", "False", "(2, 3, 4)", "()"},
      {"None", "True", "(2, 3)", "(1, 1)"},
      {"0", "True", "(7, 0)", "(1, 0)"},
  };
  for (int op = 0; op < 2; op++)
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
      DsNode *n = make_node(g, op ? "_npi_argmin" : "_npi_argmax", 1, "axis", cases[i].axis,
                            "keepdims", cases[i].keepdims, NULL);
      DsShape in[1] = {shp(cases[i].in)}, out[1] = {shp("?")};
      g_assert_null(infer(n, in, out));
      assert_shape(&out[0], cases[i].out);
      DsDType tin[1] = {DS_DTYPE_FLOAT32}, tout[1] = {DS_DTYPE_UNKNOWN};
      GError *error = NULL;
      g_assert_true(n->op->infer_type(n, n->param, tin, tout, &error));
      g_assert_cmpint(tout[0], ==, DS_DTYPE_INT64);
    }
  DsNode *n = make_node(g, "_npi_argmax", 1, "axis", "1", NULL);
  g_assert_false(((DsArgReduceParam *)n->param)->select_last_index);
  g_assert_false(((DsArgReduceParam *)n->param)->keepdims);
  DsShape in[1] = {shp("(2, 0)")}, out[1] = {shp("?")};
  g_autofree char *msg = infer(n, in, out);
  g_assert_nonnull(strstr(msg, "empty axis 1"));
  DsShape in2[1] = {shp("(2,)")};
  g_autofree char *msg2 = infer(n, in2, out);
  g_assert_nonnull(msg2);
  g_autofree char *msg3 = parse_error("_npi_argmin", 1, "axis", "99", NULL);
  g_assert_nonnull(strstr(msg3, "axis"));
}

static void test_shape_dynamic_sum(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *keep = make_node(g, "_contrib_dynamic_sum", 2, "keepdims", "True", NULL);
  DsNode *drop = make_node(g, "_contrib_dynamic_sum", 2, NULL);
  DsNode *noop = make_node(g, "_contrib_dynamic_sum", 2, "noop_with_empty_axes", "True", NULL);
  g_assert_true(keep->op->traits & DS_OP_TRAIT_DYNAMIC_SHAPE);
  /* Which dims go is data: the rank is known, the dims are not (in a concrete context). */
  DsShape in[2] = {shp("(2, 3, 4)"), shp("(2,)")}, out[1] = {shp("?")};
  g_assert_null(infer(keep, in, out));
  g_assert_cmpint(out[0].ndim, ==, 3);
  DsShape out2[1] = {shp("?")};
  g_assert_null(infer(drop, in, out2));
  g_assert_cmpint(out2[0].ndim, ==, 1);
  /* An empty axes tensor: everything, or nothing with noop_with_empty_axes. */
  DsShape in3[2] = {shp("(2, 3, 4)"), shp("(0,)")}, out3[1] = {shp("?")};
  g_assert_null(infer(drop, in3, out3));
  assert_shape(&out3[0], "()");
  DsShape out4[1] = {shp("?")};
  g_assert_null(infer(keep, in3, out4));
  assert_shape(&out4[0], "(1, 1, 1)");
  DsShape out5[1] = {shp("?")};
  g_assert_null(infer(noop, in3, out5));
  assert_shape(&out5[0], "(2, 3, 4)");
  /* More axes than dims, or axes that are not 1-D, are errors. */
  DsShape in6[2] = {shp("(2, 3)"), shp("(3,)")}, out6[1] = {shp("?")};
  g_autofree char *msg = infer(drop, in6, out6);
  g_assert_nonnull(strstr(msg, "3 axes"));
  DsShape in7[2] = {shp("(2, 3)"), shp("(1, 1)")};
  g_autofree char *msg2 = infer(drop, in7, out6);
  g_assert_nonnull(strstr(msg2, "axes"));
  /* Symbolically, each kept dim is an unbacked symbol. */
  Sym s = sym_new();
  DsShape sin[2] = {sym_shp(s.exprs, "(b, 5)"), shp("(1,)")}, sout[1] = {shp("?")};
  g_assert_null(infer_in(s.ctx, drop, sin, sout));
  g_assert_cmpint(sout[0].ndim, ==, 1);
  g_assert_true(ds_dim_is_known(sout[0].dims[0]));
  sym_free(&s);
}

/* ---- kernels: the new binary ops ---- */

static double py_mod(double x, double y)
{
  double r = fmod(x, y);
  return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}

/* The reference of the new binary ops in double; integer semantics where `integer`. */
static double ref_binary_new(DsOpId op, double x, double y, gboolean integer)
{
  switch (op) {
  case DS_OP_BROADCAST_MOD:
    return integer && y == 0 ? 0 : py_mod(x, y);
  case DS_OP_BROADCAST_FMOD:
    return integer && y == 0 ? 0 : fmod(x, y);
  case DS_OP_BROADCAST_LOGICAL_AND:
    return x != 0 && y != 0;
  case DS_OP_BROADCAST_LOGICAL_OR:
    return x != 0 || y != 0;
  case DS_OP_BROADCAST_LOGICAL_XOR:
    return (x != 0) != (y != 0);
  case DS_OP_BROADCAST_PRELU:
    return x < 0 ? x * y : x;
  case DS_OP_NP_EQUAL:
    return x == y;
  case DS_OP_NP_NOT_EQUAL:
    return x != y;
  case DS_OP_NP_GREATER:
    return x > y;
  case DS_OP_NP_GREATER_EQUAL:
    return x >= y;
  case DS_OP_NP_LESS:
    return x < y;
  case DS_OP_NP_LESS_EQUAL:
    return x <= y;
  default:
    g_assert_not_reached();
  }
}

static void check_binary_new(DsOpId op, DsDType t, const char *sa, const char *sb, const char *sout)
{
  gboolean cmp = op >= DS_OP_NP_EQUAL && op <= DS_OP_NP_LESS_EQUAL;
  DsTensor in[2] = {tensor_new(t, sa), tensor_new(t, sb)};
  DsTensor out = tensor_new(cmp ? DS_DTYPE_BOOL : t, sout);
  gboolean integer = !ds_dtype_is_float(t);
  gboolean coarse = cmp || op == DS_OP_BROADCAST_LOGICAL_AND || op == DS_OP_BROADCAST_LOGICAL_OR ||
                    op == DS_OP_BROADCAST_LOGICAL_XOR;
  double lo = t == DS_DTYPE_UINT8 ? 0 : -9, hi = 9;
  fill_random_coarse(&in[0], lo, hi, coarse);
  fill_random_coarse(&in[1], lo, hi, coarse);
  run_ok(op, NULL, in, 2, &out, 1);
  int64_t idx[DS_MAX_NDIM];
  for (int64_t i = 0; i < ds_tensor_numel(&out); i++) {
    unravel(&out, i, idx);
    double x = get(&in[0], bcast_index(&in[0], &out, idx));
    double y = get(&in[1], bcast_index(&in[1], &out, idx));
    double want = ref_binary_new(op, x, y, integer);
    if (t == DS_DTYPE_FLOAT32 && (op == DS_OP_BROADCAST_MOD || op == DS_OP_BROADCAST_FMOD))
      want = (float)want;
    assert_close(get(&out, i), want, t == DS_DTYPE_FLOAT32 ? 2e-6 : 1e-12, ds_op_id_name(op), i);
  }
  tensor_free(&in[0]);
  tensor_free(&in[1]);
  tensor_free(&out);
}

static void test_kernel_binary_new(void)
{
  static const DsDType types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32,
                                  DS_DTYPE_INT64,   DS_DTYPE_INT8,    DS_DTYPE_UINT8};
  static const DsOpId ops[] = {DS_OP_BROADCAST_MOD,
                               DS_OP_BROADCAST_FMOD,
                               DS_OP_BROADCAST_LOGICAL_AND,
                               DS_OP_BROADCAST_LOGICAL_OR,
                               DS_OP_BROADCAST_LOGICAL_XOR,
                               DS_OP_BROADCAST_PRELU,
                               DS_OP_NP_EQUAL,
                               DS_OP_NP_NOT_EQUAL,
                               DS_OP_NP_GREATER,
                               DS_OP_NP_GREATER_EQUAL,
                               DS_OP_NP_LESS,
                               DS_OP_NP_LESS_EQUAL};
  for (guint t = 0; t < G_N_ELEMENTS(types); t++)
    for (guint k = 0; k < G_N_ELEMENTS(ops); k++)
      for (guint c = 0; c < G_N_ELEMENTS(bcast_cases); c++) {
        if (types[t] == DS_DTYPE_UINT8 && ops[k] == DS_OP_BROADCAST_PRELU)
          continue; /* no negatives to scale */
        if (c >= 13 && t > 0)
          continue; /* the big cases once */
        check_binary_new(ops[k], types[t], bcast_cases[c][0], bcast_cases[c][1], bcast_cases[c][2]);
      }
  /* Bool operands: logical ops give bool, comparisons compare false < true. */
  for (guint k = 2; k < G_N_ELEMENTS(ops); k++)
    if (ops[k] != DS_OP_BROADCAST_PRELU)
      check_binary_new(ops[k], DS_DTYPE_BOOL, "(5, 7)", "(5, 1)", "(5, 7)");
}

static void test_kernel_binary_new_edges(void)
{
  /* Mod's signs: Python's modulo takes the divisor's, fmod the dividend's; /0 gives 0 in
   * integers (NumPy) and NaN in floats; MIN % -1 does not trap. */
  static const int64_t xs[] = {7, -7, 7, -7, 5, INT64_MIN, 0};
  static const int64_t ys[] = {3, 3, -3, -3, 0, -1, -4};
  static const int64_t mod_want[] = {1, 2, -2, -1, 0, 0, 0};
  static const int64_t fmod_want[] = {1, -1, 1, -1, 0, 0, 0};
  DsTensor in[2] = {tensor_new(DS_DTYPE_INT64, "(7,)"), tensor_new(DS_DTYPE_INT64, "(7,)")};
  DsTensor out = tensor_new(DS_DTYPE_INT64, "(7,)");
  memcpy(in[0].data, xs, sizeof xs);
  memcpy(in[1].data, ys, sizeof ys);
  run_ok(DS_OP_BROADCAST_MOD, NULL, in, 2, &out, 1);
  g_assert_cmpmem(out.data, sizeof mod_want, mod_want, sizeof mod_want);
  run_ok(DS_OP_BROADCAST_FMOD, NULL, in, 2, &out, 1);
  g_assert_cmpmem(out.data, sizeof fmod_want, fmod_want, sizeof fmod_want);
  tensor_free(&out);

  DsTensor f[2] = {tensor_new(DS_DTYPE_FLOAT32, "(4,)"), tensor_new(DS_DTYPE_FLOAT32, "(4,)")};
  DsTensor fo = tensor_new(DS_DTYPE_FLOAT32, "(4,)");
  float *fa = f[0].data, *fb = f[1].data, *fr = fo.data;
  fa[0] = -4.3f, fa[1] = 5.5f, fa[2] = 1, fa[3] = -0.0f;
  fb[0] = 2.1f, fb[1] = -2, fb[2] = 0, fb[3] = 3;
  run_ok(DS_OP_BROADCAST_MOD, NULL, f, 2, &fo, 1);
  g_assert_cmpfloat_with_epsilon(fr[0], 2.0f, 1e-5);
  g_assert_cmpfloat(fr[1], ==, -0.5f);
  g_assert_true(isnan(fr[2]));
  run_ok(DS_OP_BROADCAST_FMOD, NULL, f, 2, &fo, 1);
  g_assert_cmpfloat_with_epsilon(fr[0], -0.1f, 1e-5);
  g_assert_cmpfloat(fr[1], ==, 1.5f);
  /* NaN against anything compares false except !=. */
  fa[0] = NAN;
  DsTensor bo = tensor_new(DS_DTYPE_BOOL, "(4,)");
  run_ok(DS_OP_NP_EQUAL, NULL, f, 2, &bo, 1);
  g_assert_cmpint(((uint8_t *)bo.data)[0], ==, 0);
  run_ok(DS_OP_NP_NOT_EQUAL, NULL, f, 2, &bo, 1);
  g_assert_cmpint(((uint8_t *)bo.data)[0], ==, 1);
  /* A comparison must have a bool output and operands of one dtype. */
  g_assert_cmpint(run_kernel(DS_OP_NP_LESS, NULL, f, 2, &fo, 1), ==, DS_STATUS_INVALID_ARGUMENT);
  DsTensor mixed[2] = {f[0], in[1]};
  g_assert_cmpint(run_kernel(DS_OP_NP_LESS, NULL, mixed, 2, &bo, 1), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  tensor_free(&bo);

  /* Shifts: integers only; counts past the width give 0. */
  DsTensor u[2] = {tensor_new(DS_DTYPE_UINT8, "(4,)"), tensor_new(DS_DTYPE_UINT8, "(1,)")};
  DsTensor uo = tensor_new(DS_DTYPE_UINT8, "(4,)");
  uint8_t *ua = u[0].data, *ur = uo.data;
  ua[0] = 16, ua[1] = 4, ua[2] = 1, ua[3] = 255;
  *(uint8_t *)u[1].data = 2;
  run_ok(DS_OP_BITWISE_LEFT_SHIFT, NULL, u, 2, &uo, 1);
  g_assert_cmpint(ur[0], ==, 64);
  g_assert_cmpint(ur[1], ==, 16);
  g_assert_cmpint(ur[2], ==, 4);
  g_assert_cmpint(ur[3], ==, 252);
  run_ok(DS_OP_BITWISE_RIGHT_SHIFT, NULL, u, 2, &uo, 1);
  g_assert_cmpint(ur[0], ==, 4);
  g_assert_cmpint(ur[3], ==, 63);
  *(uint8_t *)u[1].data = 9;
  run_ok(DS_OP_BITWISE_LEFT_SHIFT, NULL, u, 2, &uo, 1);
  g_assert_cmpint(ur[3], ==, 0);
  DsTensor i32[2] = {tensor_new(DS_DTYPE_INT32, "(3,)"), tensor_new(DS_DTYPE_INT32, "(3,)")};
  DsTensor i32o = tensor_new(DS_DTYPE_INT32, "(3,)");
  int32_t *ia = i32[0].data, *ib = i32[1].data, *ir = i32o.data;
  ia[0] = 3, ia[1] = -16, ia[2] = 1;
  ib[0] = 4, ib[1] = 2, ib[2] = 40;
  run_ok(DS_OP_BITWISE_LEFT_SHIFT, NULL, i32, 2, &i32o, 1);
  g_assert_cmpint(ir[0], ==, 48);
  g_assert_cmpint(ir[1], ==, -64);
  g_assert_cmpint(ir[2], ==, 0);
  run_ok(DS_OP_BITWISE_RIGHT_SHIFT, NULL, i32, 2, &i32o, 1);
  g_assert_cmpint(ir[1], ==, -4);
  /* And, or, xor: two's complement for negative numbers, uint8 through the generic path. */
  ib[0] = 6, ib[1] = 7, ib[2] = -1;
  run_ok(DS_OP_BITWISE_AND, NULL, i32, 2, &i32o, 1);
  g_assert_cmpint(ir[0], ==, 2);
  g_assert_cmpint(ir[1], ==, 0);
  g_assert_cmpint(ir[2], ==, 1);
  run_ok(DS_OP_BITWISE_OR, NULL, i32, 2, &i32o, 1);
  g_assert_cmpint(ir[0], ==, 7);
  g_assert_cmpint(ir[1], ==, -9);
  g_assert_cmpint(ir[2], ==, -1);
  run_ok(DS_OP_BITWISE_XOR, NULL, i32, 2, &i32o, 1);
  g_assert_cmpint(ir[0], ==, 5);
  g_assert_cmpint(ir[1], ==, -9);
  g_assert_cmpint(ir[2], ==, -2);
  *(uint8_t *)u[1].data = 0xF0;
  run_ok(DS_OP_BITWISE_XOR, NULL, u, 2, &uo, 1);
  g_assert_cmpint(ur[0], ==, 0xE0);
  g_assert_cmpint(ur[3], ==, 0x0F);
  run_ok(DS_OP_BITWISE_AND, NULL, u, 2, &uo, 1);
  g_assert_cmpint(ur[3], ==, 0xF0);
  g_assert_cmpint(run_kernel(DS_OP_BITWISE_AND, NULL, f, 2, &fo, 1), ==, DS_STATUS_UNSUPPORTED);
  g_assert_cmpint(run_kernel(DS_OP_BITWISE_LEFT_SHIFT, NULL, f, 2, &fo, 1), ==,
                  DS_STATUS_UNSUPPORTED);
  for (int k = 0; k < 2; k++) {
    tensor_free(&u[k]);
    tensor_free(&i32[k]);
    tensor_free(&in[k]);
    tensor_free(&f[k]);
  }
  tensor_free(&uo);
  tensor_free(&i32o);
  tensor_free(&fo);
}

/* broadcast_power with an exponent of another dtype: computed in double, stored in the base's
 * dtype (an integer result truncates, as ONNX's Pow does). */
static void test_kernel_power_mixed(void)
{
  DsTensor a[2] = {tensor_new(DS_DTYPE_FLOAT32, "(2, 3)"), tensor_new(DS_DTYPE_INT64, "(3,)")};
  DsTensor ao = tensor_new(DS_DTYPE_FLOAT32, "(2, 3)");
  fill_random_coarse(&a[0], 0.5, 3, FALSE);
  fill_random_coarse(&a[1], -2, 4, FALSE);
  run_ok(DS_OP_BROADCAST_POWER, NULL, a, 2, &ao, 1);
  for (int64_t i = 0; i < 6; i++)
    assert_close(get(&ao, i), pow(get(&a[0], i), get(&a[1], i % 3)), 2e-6, "pow f32^i64", i);
  DsTensor b[2] = {tensor_new(DS_DTYPE_INT32, "(4,)"), tensor_new(DS_DTYPE_FLOAT64, "(4,)")};
  DsTensor bo = tensor_new(DS_DTYPE_INT32, "(4,)");
  int32_t *bx = b[0].data;
  double *by = b[1].data;
  bx[0] = 4, bx[1] = 2, bx[2] = 9, bx[3] = -3;
  by[0] = 0.5, by[1] = 10, by[2] = 1.5, by[3] = 3;
  run_ok(DS_OP_BROADCAST_POWER, NULL, b, 2, &bo, 1);
  const int32_t want[] = {2, 1024, 27, -27};
  g_assert_cmpmem(bo.data, sizeof want, want, sizeof want);
  /* The output must have the base's dtype. */
  DsTensor wrong = tensor_new(DS_DTYPE_FLOAT64, "(4,)");
  g_assert_cmpint(run_kernel(DS_OP_BROADCAST_POWER, NULL, b, 2, &wrong, 1), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  for (int k = 0; k < 2; k++) {
    tensor_free(&a[k]);
    tensor_free(&b[k]);
  }
  tensor_free(&ao);
  tensor_free(&bo);
  tensor_free(&wrong);
}

static void check_np_where(DsDType tc, DsDType tx, const char *sc, const char *sx, const char *sy,
                           const char *sout)
{
  DsTensor in[3] = {tensor_new(tc, sc), tensor_new(tx, sx), tensor_new(tx, sy)};
  DsTensor out = tensor_new(tx, sout);
  fill_random_coarse(&in[0], 0, 2, TRUE);
  fill_random_coarse(&in[1], -50, 50, FALSE);
  fill_random_coarse(&in[2], -50, 50, FALSE);
  run_ok(DS_OP_NP_WHERE, NULL, in, 3, &out, 1);
  int64_t idx[DS_MAX_NDIM];
  for (int64_t i = 0; i < ds_tensor_numel(&out); i++) {
    unravel(&out, i, idx);
    const DsTensor *src = get(&in[0], bcast_index(&in[0], &out, idx)) != 0 ? &in[1] : &in[2];
    g_assert_cmpuint(bits(&out, i), ==, bits(src, bcast_index(src, &out, idx)));
  }
  for (int k = 0; k < 3; k++)
    tensor_free(&in[k]);
  tensor_free(&out);
}

static void test_kernel_np_where(void)
{
  check_np_where(DS_DTYPE_BOOL, DS_DTYPE_FLOAT32, "(2, 3)", "(2, 3)", "(2, 3)", "(2, 3)");
  check_np_where(DS_DTYPE_BOOL, DS_DTYPE_INT64, "(2, 1, 4)", "(3, 1)", "(1,)", "(2, 3, 4)");
  check_np_where(DS_DTYPE_BOOL, DS_DTYPE_UINT8, "()", "(5,)", "()", "(5,)");
  check_np_where(DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, "(40, 1)", "()", "(1, 600)", "(40, 600)");
  check_np_where(DS_DTYPE_INT32, DS_DTYPE_INT8, "(70000,)", "(70000,)", "(1,)", "(70000,)");
  check_np_where(DS_DTYPE_BOOL, DS_DTYPE_FLOAT32, "(3, 1, 300)", "(3, 200, 1)", "(300,)",
                 "(3, 200, 300)");
  check_np_where(DS_DTYPE_BOOL, DS_DTYPE_BOOL, "(0, 1)", "(1, 5)", "()", "(0, 5)");
  /* Operands that do not broadcast to the output, or x and y of different dtypes, are refused. */
  DsTensor in[3] = {tensor_new(DS_DTYPE_BOOL, "(3,)"), tensor_new(DS_DTYPE_FLOAT32, "(2, 4)"),
                    tensor_new(DS_DTYPE_FLOAT32, "()")};
  DsTensor out = tensor_new(DS_DTYPE_FLOAT32, "(2, 4)");
  g_assert_cmpint(run_kernel(DS_OP_NP_WHERE, NULL, in, 3, &out, 1), ==, DS_STATUS_INVALID_ARGUMENT);
  tensor_free(&in[0]);
  in[0] = tensor_new(DS_DTYPE_BOOL, "(4,)");
  tensor_free(&in[2]);
  in[2] = tensor_new(DS_DTYPE_INT32, "()");
  g_assert_cmpint(run_kernel(DS_OP_NP_WHERE, NULL, in, 3, &out, 1), ==, DS_STATUS_INVALID_ARGUMENT);
  for (int k = 0; k < 3; k++)
    tensor_free(&in[k]);
  tensor_free(&out);
}

/* ---- kernels: the unary ops' special values ---- */

static void test_kernel_unary_special(void)
{
  /* rint rounds half to even: 2.5 and 1.5 both give 2. */
  DsTensor hx = tensor_new(DS_DTYPE_FLOAT32, "(2,)"), ho = tensor_new(DS_DTYPE_FLOAT32, "(2,)");
  set(&hx, 0, 2.5);
  set(&hx, 1, 1.5);
  run_ok(DS_OP_RINT, NULL, &hx, 1, &ho, 1);
  g_assert_cmpfloat(get(&ho, 0), ==, 2);
  g_assert_cmpfloat(get(&ho, 1), ==, 2);
  tensor_free(&hx);
  tensor_free(&ho);
  /* NaN passes through the comparisons of sign, hard_sigmoid, shrink... */
  static const char *const nan_ops[] = {"sign", "hard_sigmoid", "selu",
                                        "celu", "softsign",     "floor"};
  for (guint k = 0; k < G_N_ELEMENTS(nan_ops); k++) {
    g_autoptr(DsGraph) g = ds_graph_new();
    DsNode *n = make_node(g, nan_ops[k], 1, NULL);
    DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(1,)"), out = tensor_new(DS_DTYPE_FLOAT32, "(1,)");
    set(&x, 0, NAN);
    run_ok(n->op->id, n->param, &x, 1, &out, 1);
    g_assert_true(isnan(get(&out, 0)));
    tensor_free(&x);
    tensor_free(&out);
  }
  DsTensor bx = tensor_new(DS_DTYPE_BOOL, "(3,)"), bo = tensor_new(DS_DTYPE_BOOL, "(3,)");
  ((uint8_t *)bx.data)[0] = 1;
  run_ok(DS_OP_LOGICAL_NOT, NULL, &bx, 1, &bo, 1);
  g_assert_cmpint(((uint8_t *)bo.data)[0], ==, 0);
  g_assert_cmpint(((uint8_t *)bo.data)[1], ==, 1);
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, "selu", 1, NULL);
  DsTensor ix = tensor_new(DS_DTYPE_INT32, "(3,)"), io = tensor_new(DS_DTYPE_INT32, "(3,)");
  g_assert_cmpint(run_kernel(DS_OP_SELU, n->param, &ix, 1, &io, 1), ==, DS_STATUS_UNSUPPORTED);
  tensor_free(&ix);
  tensor_free(&io);
  tensor_free(&bx);
  tensor_free(&bo);
}

static void test_kernel_predicates(void)
{
  const double values[] = {NAN, INFINITY, -INFINITY, 0, -1.5, 3e38, -NAN};
  const uint8_t want[4][7] = {
      {1, 0, 0, 0, 0, 0, 1}, /* isnan */
      {0, 1, 1, 0, 0, 0, 0}, /* isinf */
      {0, 1, 0, 0, 0, 0, 0}, /* isposinf */
      {0, 0, 1, 0, 0, 0, 0}, /* isneginf */
  };
  static const DsOpId ops[] = {DS_OP_ISNAN, DS_OP_ISINF, DS_OP_ISPOSINF, DS_OP_ISNEGINF};
  static const DsDType types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64};
  for (guint t = 0; t < G_N_ELEMENTS(types); t++)
    for (guint k = 0; k < G_N_ELEMENTS(ops); k++) {
      DsTensor x = tensor_new(types[t], "(7,)"), out = tensor_new(DS_DTYPE_BOOL, "(7,)");
      for (int i = 0; i < 7; i++)
        set(&x, i, values[i]);
      run_ok(ops[k], NULL, &x, 1, &out, 1);
      g_assert_cmpmem(out.data, 7, want[k], 7);
      tensor_free(&x);
      tensor_free(&out);
    }
  /* Integers are never NaN or infinite; a big tensor splits across threads. */
  DsTensor x = tensor_new(DS_DTYPE_INT32, "(70000,)"), out = tensor_new(DS_DTYPE_BOOL, "(70000,)");
  fill_random_coarse(&x, -5, 5, FALSE);
  run_ok(DS_OP_ISINF, NULL, &x, 1, &out, 1);
  for (int64_t i = 0; i < 70000; i++)
    g_assert_cmpint(((uint8_t *)out.data)[i], ==, 0);
  /* The output must be bool. */
  DsTensor wrong = tensor_new(DS_DTYPE_INT32, "(70000,)");
  g_assert_cmpint(run_kernel(DS_OP_ISNAN, NULL, &x, 1, &wrong, 1), ==, DS_STATUS_INVALID_ARGUMENT);
  tensor_free(&x);
  tensor_free(&out);
  tensor_free(&wrong);
}

/* Transcendental math splits across threads from a few thousand elements on (the math
 * grain): the pool's result must be bit for bit the single thread's, every element written. */
static void test_math_split_across_threads(void)
{
  static const DsOpId ops[] = {DS_OP_SIGMOID, DS_OP_TANH, DS_OP_EXP, DS_OP_ERF, DS_OP_SIN,
                               DS_OP_ARCTAN};
  const char *shape = "(5003,)";
  DsTensor x = rtensor(shape, -6.0, 6.0);
  DsTensor alone = tensor_new(DS_DTYPE_FLOAT32, shape), split = tensor_new(DS_DTYPE_FLOAT32, shape);
  for (guint k = 0; k <= G_N_ELEMENTS(ops); k++) {
    /* The last round: Activation's own sigmoid. */
    DsActivationParam act = {DS_ACT_SIGMOID};
    DsOpId op = k < G_N_ELEMENTS(ops) ? ops[k] : DS_OP_ACTIVATION;
    const void *param = k < G_N_ELEMENTS(ops) ? NULL : &act;
    g_assert_cmpint(run_kernel_on(op, param, &x, 1, &alone, 1, NULL), ==, DS_STATUS_OK);
    g_assert_cmpint(run_kernel_on(op, param, &x, 1, &split, 1, pool), ==, DS_STATUS_OK);
    g_assert_cmpmem(alone.data, ds_tensor_nbytes(&alone), split.data, ds_tensor_nbytes(&split));
  }
  tensor_free(&x);
  tensor_free(&alone);
  tensor_free(&split);
}

/* ---- kernels: reductions ---- */

/* The reduction of `x` over the axes `mask` marks, in double, at output index `o` (the kept
 * coordinates in order). */
static double ref_reduce(DsOpId op, const DsTensor *x, const bool *mask, int64_t o)
{
  int64_t kept_idx[DS_MAX_NDIM], idx[DS_MAX_NDIM];
  /* Kept coordinates of output o. */
  for (int d = x->ndim - 1; d >= 0; d--) {
    if (mask[d])
      continue;
    kept_idx[d] = o % x->shape[d];
    o /= x->shape[d];
  }
  double acc = op == DS_OP_NP_PROD  ? 1
               : op == DS_OP_NP_MAX ? -INFINITY
               : op == DS_OP_NP_MIN ? INFINITY
                                    : 0;
  double mx = -INFINITY;
  int64_t count = 0;
  gboolean integer = !ds_dtype_is_float(x->dtype);
  for (int pass = 0; pass < (op == DS_OP_LOG_SUM_EXP ? 2 : 1); pass++)
    for (int64_t i = 0; i < ds_tensor_numel(x); i++) {
      unravel(x, i, idx);
      gboolean match = TRUE;
      for (int d = 0; d < x->ndim && match; d++)
        match = mask[d] || idx[d] == kept_idx[d];
      if (!match)
        continue;
      double v = get(x, i);
      if (op == DS_OP_LOG_SUM_EXP && pass == 0) {
        mx = fmax(mx, v);
        continue;
      }
      count++;
      switch (op) {
      case DS_OP_NP_SUM:
      case DS_OP_NP_MEAN:
      case DS_OP_LOG_SUM:
        acc += v;
        break;
      case DS_OP_NP_MAX:
        acc = fmax(acc, v);
        break;
      case DS_OP_NP_MIN:
        acc = fmin(acc, v);
        break;
      case DS_OP_NP_PROD:
        acc *= v;
        break;
      case DS_OP_SUM_SQUARE:
      case DS_OP_L2_NORM:
        acc += v * v;
        break;
      case DS_OP_L1_NORM:
        acc += fabs(v);
        break;
      case DS_OP_LOG_SUM_EXP:
        acc += exp(v - mx);
        break;
      default:
        g_assert_not_reached();
      }
    }
  switch (op) {
  case DS_OP_NP_MEAN:
    return integer ? trunc(acc / (double)count) : acc / (double)count;
  case DS_OP_L2_NORM:
    return integer ? trunc(sqrt(acc)) : sqrt(acc);
  case DS_OP_LOG_SUM:
    return log(acc);
  case DS_OP_LOG_SUM_EXP:
    return isfinite(mx) ? mx + log(acc) : mx;
  default:
    return acc;
  }
}

static const DsOpId np_reduce_ops[] = {
    DS_OP_NP_SUM,     DS_OP_NP_MEAN, DS_OP_NP_MAX,  DS_OP_NP_MIN,  DS_OP_NP_PROD,
    DS_OP_SUM_SQUARE, DS_OP_L1_NORM, DS_OP_L2_NORM, DS_OP_LOG_SUM, DS_OP_LOG_SUM_EXP};

/* Runs `op` on x over every subset of its axes (as the NumPy-style param), against ref_reduce. */
static void check_reduce_all_subsets(DsOpId op, DsTensor *x)
{
  for (int subset = 0; subset < (1 << x->ndim); subset++) {
    DsNpReduceParam p = {.n_axes = 0, .keepdims = false};
    bool mask[DS_MAX_NDIM];
    int64_t dims[DS_MAX_NDIM];
    int nd = 0;
    for (int d = 0; d < x->ndim; d++) {
      mask[d] = (subset >> d) & 1;
      if (mask[d])
        p.axes[p.n_axes++] = (d % 2) ? d - x->ndim : d; /* some negative */
      else
        dims[nd++] = x->shape[d];
    }
    DsTensor out = tensor_dims(x->dtype, nd, dims);
    run_ok(op, &p, x, 1, &out, 1);
    gboolean f32 = x->dtype == DS_DTYPE_FLOAT32;
    for (int64_t o = 0; o < ds_tensor_numel(&out); o++) {
      double want = ref_reduce(op, x, mask, o);
      if (!ds_dtype_is_float(x->dtype) && isfinite(want))
        want = trunc(want);
      if (f32)
        want = (float)want;
      g_autofree char *what =
          g_strdup_printf("%s %s subset %d", ds_op_id_name(op), ds_dtype_name(x->dtype), subset);
      assert_close(get(&out, o), want, f32 ? 1e-5 : 1e-12, what, o);
    }
    tensor_free(&out);
  }
}

static void test_kernel_np_reduce(void)
{
  static const struct {
    DsDType t;
    const char *shape;
  } inputs[] = {
      {DS_DTYPE_FLOAT32, "(3, 4, 5)"}, {DS_DTYPE_FLOAT64, "(2, 3, 1, 4)"},
      {DS_DTYPE_INT32, "(4, 6)"},      {DS_DTYPE_INT64, "(3, 1, 5)"},
      {DS_DTYPE_UINT8, "(2, 7)"},      {DS_DTYPE_INT8, "(5,)"},
      {DS_DTYPE_FLOAT32, "(300, 2)"},  {DS_DTYPE_FLOAT32, "(2, 700)"},
      {DS_DTYPE_FLOAT32, "()"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(inputs); i++)
    for (guint k = 0; k < G_N_ELEMENTS(np_reduce_ops); k++) {
      DsOpId op = np_reduce_ops[k];
      gboolean logs = op == DS_OP_LOG_SUM || op == DS_OP_L2_NORM || op == DS_OP_LOG_SUM_EXP;
      if (!ds_dtype_is_float(inputs[i].t) && logs)
        continue; /* integer logs and roots truncate: covered by the float cases */
      DsTensor x = tensor_new(inputs[i].t, inputs[i].shape);
      /* Positive data for log_sum; small values keep products in range (integer products
       * of -1, 0 and 1). */
      double lo = op == DS_OP_LOG_SUM ? 0.1 : (inputs[i].t == DS_DTYPE_UINT8 ? 0 : -3);
      double hi = 3;
      if (op == DS_OP_NP_PROD) {
        lo = inputs[i].t == DS_DTYPE_UINT8 ? 0 : ds_dtype_is_float(inputs[i].t) ? -1.5 : -1;
        hi = ds_dtype_is_float(inputs[i].t) ? 1.5 : 2;
      }
      fill_random_coarse(&x, lo, hi, FALSE);
      check_reduce_all_subsets(op, &x);
      tensor_free(&x);
    }
}

static void test_kernel_np_reduce_edges(void)
{
  /* An empty reduction: the identities (0, NaN for the mean, 1, the infinities, -inf for the
   * logs). */
  static const double empty_want[] = {0, NAN, -INFINITY, INFINITY,  1,
                                      0, 0,   0,         -INFINITY, -INFINITY};
  DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(3, 0)");
  DsNpReduceParam p = {.n_axes = 1, .axes = {1}};
  for (guint k = 0; k < G_N_ELEMENTS(np_reduce_ops); k++) {
    DsTensor out = tensor_new(DS_DTYPE_FLOAT32, "(3,)");
    run_ok(np_reduce_ops[k], &p, &x, 1, &out, 1);
    for (int i = 0; i < 3; i++)
      assert_close(get(&out, i), empty_want[k], 1e-6, ds_op_id_name(np_reduce_ops[k]), i);
    tensor_free(&out);
  }
  /* Nothing kept: an empty output is a no-op. */
  DsNpReduceParam p0 = {.n_axes = 1, .axes = {0}};
  DsTensor none = tensor_new(DS_DTYPE_FLOAT32, "(0,)");
  g_assert_cmpint(run_kernel(DS_OP_NP_SUM, &p0, &x, 1, &none, 1), ==, DS_STATUS_OK);
  tensor_free(&x);
  tensor_free(&none);

  /* log_sum_exp stays finite where exp overflows; NaN propagates through max and sums. */
  DsTensor big = tensor_new(DS_DTYPE_FLOAT32, "(2, 2)");
  set(&big, 0, 1000), set(&big, 1, 1000), set(&big, 2, NAN), set(&big, 3, 1);
  DsNpReduceParam last = {.n_axes = 1, .axes = {-1}};
  DsTensor out = tensor_new(DS_DTYPE_FLOAT32, "(2,)");
  run_ok(DS_OP_LOG_SUM_EXP, &last, &big, 1, &out, 1);
  g_assert_cmpfloat_with_epsilon(get(&out, 0), 1000 + log(2.0), 1e-3);
  g_assert_true(isnan(get(&out, 1)));
  run_ok(DS_OP_NP_MAX, &last, &big, 1, &out, 1);
  g_assert_true(isnan(get(&out, 1)));
  run_ok(DS_OP_NP_MIN, &last, &big, 1, &out, 1);
  g_assert_true(isnan(get(&out, 1)));

  /* Long runs (few outputs, each over at least 32768 elements) are cut into pieces: against
   * the reference over the last axis and over both (a product of 10^5 factors is 0 or
   * infinite whatever the order, so it is left out). */
  static const struct {
    DsDType t;
    const char *shape;
  } longs[] = {{DS_DTYPE_FLOAT32, "(3, 40000)"}, {DS_DTYPE_INT32, "(2, 50000)"}};
  for (guint i = 0; i < G_N_ELEMENTS(longs); i++)
    for (guint k = 0; k < G_N_ELEMENTS(np_reduce_ops); k++) {
      DsOpId op = np_reduce_ops[k];
      gboolean logs = op == DS_OP_LOG_SUM || op == DS_OP_L2_NORM || op == DS_OP_LOG_SUM_EXP;
      if (op == DS_OP_NP_PROD || (logs && longs[i].t == DS_DTYPE_INT32))
        continue;
      DsTensor lx = tensor_new(longs[i].t, longs[i].shape);
      fill_random_coarse(&lx, 0.1, 3, FALSE); /* no cancellation: rel applies to float sums */
      for (int both = 0; both < 2; both++) {
        DsNpReduceParam rp = both ? (DsNpReduceParam){.n_axes = -1}
                                  : (DsNpReduceParam){.n_axes = 1, .axes = {1}};
        bool mask[2] = {both, true};
        DsTensor lo = tensor_dims(lx.dtype, both ? 0 : 1, lx.shape);
        run_ok(op, &rp, &lx, 1, &lo, 1);
        for (int64_t o = 0; o < ds_tensor_numel(&lo); o++) {
          double want = ref_reduce(op, &lx, mask, o);
          if (longs[i].t == DS_DTYPE_INT32)
            want = trunc(want);
          assert_close(get(&lo, o), want, 1e-5, ds_op_id_name(op), o);
        }
        tensor_free(&lo);
      }
      tensor_free(&lx);
    }

  /* A long run's pieces are fixed: the same bits on one thread and on the pool. */
  DsTensor longx = tensor_new(DS_DTYPE_FLOAT32, "(2, 100003)");
  fill_random(&longx, -1, 1);
  for (int axes = 0; axes < 2; axes++) {
    DsNpReduceParam rp = axes == 0 ? (DsNpReduceParam){.n_axes = 1, .axes = {1}}
                                   : (DsNpReduceParam){.n_axes = -1};
    DsTensor one = tensor_new(DS_DTYPE_FLOAT32, axes == 0 ? "(2,)" : "()");
    DsTensor two = tensor_new(DS_DTYPE_FLOAT32, axes == 0 ? "(2,)" : "()");
    g_assert_cmpint(run_kernel_on(DS_OP_NP_SUM, &rp, &longx, 1, &one, 1, NULL), ==, DS_STATUS_OK);
    g_assert_cmpint(run_kernel_on(DS_OP_NP_SUM, &rp, &longx, 1, &two, 1, pool), ==, DS_STATUS_OK);
    g_assert_cmpmem(one.data, ds_tensor_nbytes(&one), two.data, ds_tensor_nbytes(&two));
    tensor_free(&one);
    tensor_free(&two);
  }
  tensor_free(&longx);

  /* int64 sums and extremes are exact past 2^53. */
  DsTensor i64 = tensor_new(DS_DTYPE_INT64, "(3,)");
  int64_t *v = i64.data;
  v[0] = INT64_MAX - 10, v[1] = 3, v[2] = 4;
  DsNpReduceParam all = {.n_axes = -1};
  DsTensor r = tensor_new(DS_DTYPE_INT64, "()");
  run_ok(DS_OP_NP_SUM, &all, &i64, 1, &r, 1);
  g_assert_cmpint(*(int64_t *)r.data, ==, INT64_MAX - 3);
  run_ok(DS_OP_NP_MAX, &all, &i64, 1, &r, 1);
  g_assert_cmpint(*(int64_t *)r.data, ==, INT64_MAX - 10);
  /* Bad axes and output sizes are refused. */
  DsNpReduceParam dup = {.n_axes = 2, .axes = {0, -3}};
  g_assert_cmpint(run_kernel(DS_OP_NP_SUM, &dup, &i64, 1, &r, 1), ==, DS_STATUS_INVALID_ARGUMENT);
  DsNpReduceParam none_axes = {.n_axes = 0};
  g_assert_cmpint(run_kernel(DS_OP_NP_SUM, &none_axes, &i64, 1, &r, 1), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  /* A big full reduction, split across threads. */
  DsTensor huge = tensor_new(DS_DTYPE_FLOAT32, "(300, 500)");
  fill_random_coarse(&huge, -1, 1, FALSE);
  DsTensor hr = tensor_new(DS_DTYPE_FLOAT32, "()");
  bool mask[2] = {true, true};
  run_ok(DS_OP_L2_NORM, &all, &huge, 1, &hr, 1);
  assert_close(get(&hr, 0), ref_reduce(DS_OP_L2_NORM, &huge, mask, 0), 1e-6, "l2_norm", 0);
  tensor_free(&huge);
  tensor_free(&hr);
  tensor_free(&big);
  tensor_free(&out);
  tensor_free(&i64);
  tensor_free(&r);
}

/* The test allocator for _contrib_dynamic_sum's output: one buffer, freed by the caller. */
static DsStatus alloc_one(void *alloc_data, int index, DsTensor *output)
{
  (void)index;
  *(void **)alloc_data = output->data = g_malloc0(MAX(ds_tensor_nbytes(output), 1));
  return DS_STATUS_OK;
}

static DsStatus run_dynamic_sum(const DsDynamicSumParam *p, DsTensor *x, const int64_t *axes,
                                int n_axes, DsTensor *out)
{
  int64_t n = n_axes;
  DsTensor in[2] = {*x, tensor_dims(DS_DTYPE_INT64, 1, &n)};
  if (n_axes > 0)
    memcpy(in[1].data, axes, sizeof(int64_t) * (size_t)n_axes);
  void *buffer = NULL;
  DsStatus st = run_kernel_dynamic(DS_OP_DYNAMIC_SUM, p, in, 2, out, 1, alloc_one, &buffer);
  tensor_free(&in[1]);
  if (st != DS_STATUS_OK)
    g_free(buffer);
  return st;
}

static void test_kernel_dynamic_sum(void)
{
  DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(2, 3, 4)");
  fill_random_coarse(&x, -3, 3, FALSE);
  DsDynamicSumParam keep = {.keepdims = true}, drop = {0}, noop = {.noop_with_empty_axes = true};
  DsTensor out;
  /* Axis 1 (given as -2), kept as 1. */
  g_assert_cmpint(run_dynamic_sum(&keep, &x, (int64_t[]){-2}, 1, &out), ==, DS_STATUS_OK);
  g_assert_cmpint(out.ndim, ==, 3);
  g_assert_cmpint(out.shape[1], ==, 1);
  bool mask[3] = {false, true, false};
  for (int64_t o = 0; o < 8; o++)
    assert_close(get(&out, o), (float)ref_reduce(DS_OP_NP_SUM, &x, mask, o), 1e-5, "dynamic_sum",
                 o);
  tensor_free(&out);
  g_assert_cmpint(run_dynamic_sum(&drop, &x, (int64_t[]){2, 0}, 2, &out), ==, DS_STATUS_OK);
  g_assert_cmpint(out.ndim, ==, 1);
  g_assert_cmpint(out.shape[0], ==, 3);
  bool mask2[3] = {true, false, true};
  for (int64_t o = 0; o < 3; o++)
    assert_close(get(&out, o), (float)ref_reduce(DS_OP_NP_SUM, &x, mask2, o), 1e-5, "dynamic_sum",
                 o);
  tensor_free(&out);
  /* Empty axes: everything, or a copy with noop_with_empty_axes. */
  g_assert_cmpint(run_dynamic_sum(&drop, &x, NULL, 0, &out), ==, DS_STATUS_OK);
  g_assert_cmpint(out.ndim, ==, 0);
  bool all[3] = {true, true, true};
  assert_close(get(&out, 0), (float)ref_reduce(DS_OP_NP_SUM, &x, all, 0), 1e-5, "all", 0);
  tensor_free(&out);
  g_assert_cmpint(run_dynamic_sum(&noop, &x, NULL, 0, &out), ==, DS_STATUS_OK);
  g_assert_cmpint(out.ndim, ==, 3);
  g_assert_cmpmem(out.data, ds_tensor_nbytes(&x), x.data, ds_tensor_nbytes(&x));
  tensor_free(&out);
  /* Repeated or out-of-range axes are refused. */
  g_assert_cmpint(run_dynamic_sum(&drop, &x, (int64_t[]){1, -2}, 2, &out), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  g_assert_cmpint(run_dynamic_sum(&drop, &x, (int64_t[]){3}, 1, &out), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  tensor_free(&x);
}

static void check_arg_reduce(DsOpId op, DsDType t, const char *shape, const char *axis,
                             gboolean last)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = make_node(g, op == DS_OP_NP_ARGMAX ? "_npi_argmax" : "_npi_argmin", 1, "axis", axis,
                        "select_last_index", last ? "True" : "False", NULL);
  const DsArgReduceParam *p = n->param;
  DsTensor x = tensor_new(t, shape);
  /* Coarse values, so ties decide. */
  fill_random_coarse(&x, t == DS_DTYPE_UINT8 ? 0 : -3, 3, TRUE);
  int ax = p->has_axis ? (p->axis < 0 ? p->axis + x.ndim : p->axis) : 0;
  int64_t outer = p->has_axis ? ds_shape_span(x.shape, 0, ax) : 1;
  int64_t len = p->has_axis ? x.shape[ax] : ds_tensor_numel(&x);
  int64_t inner = p->has_axis ? ds_shape_span(x.shape, ax + 1, x.ndim) : 1;
  int64_t n_out = outer * inner;
  DsTensor out = tensor_dims(DS_DTYPE_INT64, 1, &n_out);
  run_ok(op, p, &x, 1, &out, 1);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t best = 0;
      for (int64_t j = 1; j < len; j++) {
        double v = get(&x, (o * len + j) * inner + i), b = get(&x, (o * len + best) * inner + i);
        gboolean better = op == DS_OP_NP_ARGMAX ? (last ? v >= b : v > b) : (last ? v <= b : v < b);
        if (better)
          best = j;
      }
      g_assert_cmpint(((int64_t *)out.data)[o * inner + i], ==, best);
    }
  tensor_free(&x);
  tensor_free(&out);
}

static void test_kernel_arg_reduce(void)
{
  static const DsDType types[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32,
                                  DS_DTYPE_INT64,   DS_DTYPE_UINT8,   DS_DTYPE_BOOL};
  static const struct {
    const char *shape, *axis;
  } cases[] = {
      {"(3, 4, 5)", "0"},    {"(3, 4, 5)", "1"},  {"(3, 4, 5)", "-1"},
      {"(7,)", "0"},         {"(2, 300)", "0"},   {"(300, 2)", "1"},
      {"(3, 4, 5)", "None"}, {"(2, 1000)", "-1"}, {"(1000, 3, 2)", "1"},
  };
  for (int op = DS_OP_NP_ARGMAX; op <= DS_OP_NP_ARGMIN; op++)
    for (guint t = 0; t < G_N_ELEMENTS(types); t++)
      for (guint c = 0; c < G_N_ELEMENTS(cases); c++)
        for (int last = 0; last < 2; last++)
          check_arg_reduce((DsOpId)op, types[t], cases[c].shape, cases[c].axis, last);
  /* NaN is the extreme both ways: the first one, or the last with select_last_index. */
  DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(5,)");
  set(&x, 0, 1), set(&x, 1, NAN), set(&x, 2, 7), set(&x, 3, NAN), set(&x, 4, -2);
  DsTensor out = tensor_new(DS_DTYPE_INT64, "()");
  DsArgReduceParam p = {.has_axis = true, .axis = 0};
  run_ok(DS_OP_NP_ARGMAX, &p, &x, 1, &out, 1);
  g_assert_cmpint(*(int64_t *)out.data, ==, 1);
  run_ok(DS_OP_NP_ARGMIN, &p, &x, 1, &out, 1);
  g_assert_cmpint(*(int64_t *)out.data, ==, 1);
  p.select_last_index = true;
  run_ok(DS_OP_NP_ARGMIN, &p, &x, 1, &out, 1);
  g_assert_cmpint(*(int64_t *)out.data, ==, 3);
  /* An empty axis has no extreme; an empty output is fine. */
  DsTensor e = tensor_new(DS_DTYPE_FLOAT32, "(0,)");
  g_assert_cmpint(run_kernel(DS_OP_NP_ARGMAX, &p, &e, 1, &out, 1), ==, DS_STATUS_INVALID_ARGUMENT);
  DsTensor e2 = tensor_new(DS_DTYPE_FLOAT32, "(0, 3)"), eo = tensor_new(DS_DTYPE_INT64, "(0,)");
  p.axis = 1;
  g_assert_cmpint(run_kernel(DS_OP_NP_ARGMAX, &p, &e2, 1, &eo, 1), ==, DS_STATUS_OK);
  tensor_free(&x);
  tensor_free(&out);
  tensor_free(&e);
  tensor_free(&e2);
  tensor_free(&eo);
}

/* ---- quantization ---- */

static void test_shape_quantize(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *q = make_node(g, "quantize_linear", 3, NULL);
  g_assert_cmpint(((DsQuantizeLinearParam *)q->param)->axis, ==, 1);
  /* Per tensor, per axis (the zero point's shape follows the scale's), and a bad scale. */
  DsShape in[3] = {shp("(2, 3, 4)"), shp("()"), shp("?")}, out[1] = {shp("?")};
  g_assert_null(infer(q, in, out));
  assert_shape(&out[0], "(2, 3, 4)");
  assert_shape(&in[2], "()");
  DsShape in2[3] = {shp("(2, 3, 4)"), shp("(?,)"), shp("?")}, out2[1] = {shp("?")};
  g_assert_null(infer(q, in2, out2));
  assert_shape(&in2[1], "(3,)");
  assert_shape(&in2[2], "(3,)");
  DsShape in3[3] = {shp("(2, 3, 4)"), shp("(4,)"), shp("(4,)")}, out3[1] = {shp("?")};
  g_autofree char *msg = infer(q, in3, out3);
  g_assert_nonnull(strstr(msg, "scale"));
  DsShape in4[3] = {shp("(2, 3)"), shp("(1, 3)"), shp("?")}, out4[1] = {shp("?")};
  g_autofree char *msg2 = infer(q, in4, out4);
  g_assert_nonnull(strstr(msg2, "scalar or 1-D"));
  DsNode *q2 = make_node(g, "quantize_linear", 3, "axis", "-1", NULL);
  DsShape in5[3] = {shp("(2, 3, 4)"), shp("(4,)"), shp("(4,)")}, out5[1] = {shp("?")};
  g_assert_null(infer(q2, in5, out5));
  g_autofree char *msg3 = parse_error("quantize_linear", 3, "axis", "9", NULL);
  g_assert_nonnull(strstr(msg3, "axis"));

  /* dtypes: the zero point's (uint8 or int8) for quantize, the scale's for dequantize. */
  DsDType t_in[3] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32, DS_DTYPE_INT8},
          t_out[1] = {DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(q->op->infer_type(q, q->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_INT8);
  DsDType bad[3] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32, DS_DTYPE_INT32};
  t_out[0] = DS_DTYPE_UNKNOWN;
  g_assert_false(q->op->infer_type(q, q->param, bad, t_out, &error));
  g_assert_nonnull(strstr(error->message, "uint8 or int8"));
  g_clear_error(&error);
  DsNode *dq = make_node(g, "dequantize_linear", 3, NULL);
  DsDType d_in[3] = {DS_DTYPE_UINT8, DS_DTYPE_FLOAT32, DS_DTYPE_INT32};
  t_out[0] = DS_DTYPE_UNKNOWN;
  g_assert_true(dq->op->infer_type(dq, dq->param, d_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT32);

  DsNode *dyn = make_node(g, "dynamic_quantize_linear", 1, NULL);
  g_assert_cmpint(dyn->op->num_outputs(dyn->param), ==, 3);
  DsShape din[1] = {shp("(5, 2)")}, dout[3] = {shp("?"), shp("?"), shp("?")};
  g_assert_null(infer(dyn, din, dout));
  assert_shape(&dout[0], "(5, 2)");
  assert_shape(&dout[1], "()");
  assert_shape(&dout[2], "()");
  DsDType y_in[1] = {DS_DTYPE_UNKNOWN},
          y_out[3] = {DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN};
  g_assert_true(dyn->op->infer_type(dyn, dyn->param, y_in, y_out, &error));
  g_assert_cmpint(y_in[0], ==, DS_DTYPE_FLOAT32);
  g_assert_cmpint(y_out[0], ==, DS_DTYPE_UINT8);
  g_assert_cmpint(y_out[1], ==, DS_DTYPE_FLOAT32);
  g_assert_cmpint(y_out[2], ==, DS_DTYPE_UINT8);
}

static void test_kernel_quantize(void)
{
  DsQuantizeLinearParam p = {.axis = 1};
  /* Per tensor into uint8: ties to even (1 / 2 = 0.5 -> 0, 3 / 2 -> 2), then saturation. */
  DsTensor in[3] = {tensor_new(DS_DTYPE_FLOAT32, "(7,)"), tensor_new(DS_DTYPE_FLOAT32, "()"),
                    tensor_new(DS_DTYPE_UINT8, "()")};
  const float xs[] = {0, 1, 3, 2, 1000, -254, -1000};
  memcpy(in[0].data, xs, sizeof xs);
  set(&in[1], 0, 2);
  set(&in[2], 0, 128);
  DsTensor out = tensor_new(DS_DTYPE_UINT8, "(7,)");
  run_ok(DS_OP_QUANTIZE_LINEAR, &p, in, 3, &out, 1);
  const uint8_t want[] = {128, 128, 130, 129, 255, 1, 0};
  g_assert_cmpmem(out.data, sizeof want, want, sizeof want);
  /* int8 with a zero point of -1. */
  tensor_free(&in[2]);
  tensor_free(&out);
  in[2] = tensor_new(DS_DTYPE_INT8, "()");
  set(&in[2], 0, -1);
  out = tensor_new(DS_DTYPE_INT8, "(7,)");
  run_ok(DS_OP_QUANTIZE_LINEAR, &p, in, 3, &out, 1);
  const int8_t want8[] = {-1, -1, 1, 0, 127, -128, -128};
  g_assert_cmpmem(out.data, sizeof want8, want8, sizeof want8);
  /* A dequantize of it: (q - zp) * scale. */
  DsTensor dq_in[3] = {out, in[1], in[2]};
  DsTensor back = tensor_new(DS_DTYPE_FLOAT32, "(7,)");
  run_ok(DS_OP_DEQUANTIZE_LINEAR, &p, dq_in, 3, &back, 1);
  for (int i = 0; i < 7; i++)
    g_assert_cmpfloat(get(&back, i), ==, (want8[i] + 1) * 2.0);
  tensor_free(&back);
  for (int k = 0; k < 3; k++)
    tensor_free(&in[k]);
  tensor_free(&out);

  /* Per axis (axis 1 of (2, 3, 4)), a big tensor, against a reference. */
  DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(20, 3, 1000)");
  DsTensor s = tensor_new(DS_DTYPE_FLOAT32, "(3,)"), z = tensor_new(DS_DTYPE_UINT8, "(3,)");
  fill_random_coarse(&x, -300, 300, FALSE);
  const float scales[] = {0.5f, 2, 3.25f};
  memcpy(s.data, scales, sizeof scales);
  set(&z, 0, 0), set(&z, 1, 100), set(&z, 2, 255);
  DsTensor qo = tensor_new(DS_DTYPE_UINT8, "(20, 3, 1000)");
  DsTensor qin[3] = {x, s, z};
  run_ok(DS_OP_QUANTIZE_LINEAR, &p, qin, 3, &qo, 1);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++) {
    int c = (int)((i / 1000) % 3);
    float q = rintf((float)get(&x, i) / scales[c]) + (float)get(&z, c);
    q = q < 0 ? 0 : q > 255 ? 255 : q;
    g_assert_cmpfloat(get(&qo, i), ==, q);
  }
  DsTensor dqo = tensor_new(DS_DTYPE_FLOAT32, "(20, 3, 1000)");
  DsTensor dqin[3] = {qo, s, z};
  run_ok(DS_OP_DEQUANTIZE_LINEAR, &p, dqin, 3, &dqo, 1);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++) {
    int c = (int)((i / 1000) % 3);
    g_assert_cmpfloat(get(&dqo, i), ==, (float)(get(&qo, i) - get(&z, c)) * scales[c]);
  }
  /* A scale that does not match the axis, or a float zero point's output, is refused. */
  DsQuantizeLinearParam p0 = {.axis = 0};
  g_assert_cmpint(run_kernel(DS_OP_QUANTIZE_LINEAR, &p0, qin, 3, &qo, 1), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  DsTensor fo = tensor_new(DS_DTYPE_FLOAT32, "(20, 3, 1000)");
  g_assert_cmpint(run_kernel(DS_OP_QUANTIZE_LINEAR, &p, qin, 3, &fo, 1), ==, DS_STATUS_UNSUPPORTED);
  tensor_free(&fo);
  tensor_free(&x);
  tensor_free(&s);
  tensor_free(&z);
  tensor_free(&qo);
  tensor_free(&dqo);
}

static void check_dynamic_quantize(const float *xs, int n)
{
  int64_t len = n;
  DsTensor x = tensor_dims(DS_DTYPE_FLOAT32, 1, &len);
  memcpy(x.data, xs, sizeof(float) * (size_t)n);
  DsTensor out[3] = {tensor_dims(DS_DTYPE_UINT8, 1, &len), tensor_new(DS_DTYPE_FLOAT32, "()"),
                     tensor_new(DS_DTYPE_UINT8, "()")};
  run_ok(DS_OP_DYNAMIC_QUANTIZE_LINEAR, NULL, &x, 1, out, 3);
  /* ONNX's reference formulas, in float32. */
  float lo = 0, hi = 0;
  for (int i = 0; i < n; i++)
    lo = fminf(lo, xs[i]), hi = fmaxf(hi, xs[i]);
  float scale = (hi - lo) / 255.0f;
  float zp = fminf(255, fmaxf(0, rintf((0 - lo) / scale)));
  g_assert_cmpfloat(get(&out[1], 0), ==, scale);
  g_assert_cmpfloat(get(&out[2], 0), ==, zp);
  for (int i = 0; i < n; i++)
    g_assert_cmpfloat(get(&out[0], i), ==, fminf(255, fmaxf(0, rintf(xs[i] / scale) + zp)));
  tensor_free(&x);
  tensor_free(&out[0]);
  tensor_free(&out[1]);
  tensor_free(&out[2]);
}

static void test_kernel_dynamic_quantize(void)
{
  check_dynamic_quantize((const float[]){0, 2, -3, -2.5f, 1.34f, 0.5f}, 6);
  check_dynamic_quantize((const float[]){-1, -2.1f, -1.3f, -2.5f, -3.34f, -4}, 6);
  check_dynamic_quantize((const float[]){1, 2.1f, 1.3f, 2.5f, 3.34f, 4, 1.5f, 2.6f, 3.9f}, 9);
  float big[50000];
  for (int i = 0; i < 50000; i++)
    big[i] = (float)g_rand_double_range(rng, -7, 11);
  check_dynamic_quantize(big, 50000);
  /* All zeros: scale 0, and everything (zero point included) is 0 rather than NaN. */
  DsTensor x = tensor_new(DS_DTYPE_FLOAT32, "(4,)");
  DsTensor out[3] = {tensor_new(DS_DTYPE_UINT8, "(4,)"), tensor_new(DS_DTYPE_FLOAT32, "()"),
                     tensor_new(DS_DTYPE_UINT8, "()")};
  run_ok(DS_OP_DYNAMIC_QUANTIZE_LINEAR, NULL, &x, 1, out, 3);
  g_assert_cmpfloat(get(&out[1], 0), ==, 0);
  g_assert_cmpfloat(get(&out[2], 0), ==, 0);
  for (int i = 0; i < 4; i++)
    g_assert_cmpfloat(get(&out[0], i), ==, 0);
  for (int k = 0; k < 3; k++)
    tensor_free(&out[k]);
  DsTensor d = tensor_new(DS_DTYPE_FLOAT64, "(4,)");
  DsTensor o2[3] = {tensor_new(DS_DTYPE_UINT8, "(4,)"), tensor_new(DS_DTYPE_FLOAT32, "()"),
                    tensor_new(DS_DTYPE_UINT8, "()")};
  g_assert_cmpint(run_kernel(DS_OP_DYNAMIC_QUANTIZE_LINEAR, NULL, &d, 1, o2, 3), ==,
                  DS_STATUS_UNSUPPORTED);
  for (int k = 0; k < 3; k++)
    tensor_free(&o2[k]);
  tensor_free(&d);
  tensor_free(&x);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ds_test_ops_init(20240611);

  g_test_add_func("/ops/elemwise/shape/same-both-ways", test_shape_elemwise_both_ways);
  g_test_add_func("/ops/elemwise/kernel/math-split-across-threads",
                  test_math_split_across_threads);
  g_test_add_func("/ops/elemwise/shape/broadcast", test_shape_broadcast);
  g_test_add_func("/ops/elemwise/shape/every-binary-op", test_shape_every_binary_op);
  g_test_add_func("/ops/elemwise/shape/every-scalar-op", test_shape_every_scalar_op);
  g_test_add_func("/ops/elemwise/shape/dequantize", test_shape_dequantize);
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
  g_test_add_func("/ops/elemwise/kernel/unary-table", test_kernel_unary_table);
  g_test_add_func("/ops/elemwise/kernel/transcendental-accuracy",
                  test_kernel_transcendental_accuracy);
  g_test_add_func("/ops/elemwise/kernel/clip", test_kernel_clip);
  g_test_add_func("/ops/elemwise/kernel/copy-fill", test_kernel_copy_fill);
  g_test_add_func("/ops/elemwise/kernel/where", test_kernel_where);
  g_test_add_func("/ops/elemwise/kernel/add-n", test_kernel_add_n);
  g_test_add_func("/ops/elemwise/dtype/np-binary", test_dtype_np_binary);
  g_test_add_func("/ops/elemwise/shape/np-where", test_shape_np_where);
  g_test_add_func("/ops/elemwise/shape/unary-predicates", test_shape_unary_predicates);
  g_test_add_func("/ops/elemwise/shape/unary-table", test_shape_unary_table);
  g_test_add_func("/ops/elemwise/shape/np-reduce", test_shape_np_reduce);
  g_test_add_func("/ops/elemwise/shape/arg-reduce", test_shape_arg_reduce);
  g_test_add_func("/ops/elemwise/shape/dynamic-sum", test_shape_dynamic_sum);
  g_test_add_func("/ops/elemwise/kernel/binary-new", test_kernel_binary_new);
  g_test_add_func("/ops/elemwise/kernel/binary-new-edges", test_kernel_binary_new_edges);
  g_test_add_func("/ops/elemwise/kernel/power-mixed", test_kernel_power_mixed);
  g_test_add_func("/ops/elemwise/kernel/np-where", test_kernel_np_where);
  g_test_add_func("/ops/elemwise/kernel/unary-special", test_kernel_unary_special);
  g_test_add_func("/ops/elemwise/kernel/predicates", test_kernel_predicates);
  g_test_add_func("/ops/elemwise/kernel/np-reduce", test_kernel_np_reduce);
  g_test_add_func("/ops/elemwise/kernel/np-reduce-edges", test_kernel_np_reduce_edges);
  g_test_add_func("/ops/elemwise/kernel/dynamic-sum", test_kernel_dynamic_sum);
  g_test_add_func("/ops/elemwise/kernel/arg-reduce", test_kernel_arg_reduce);
  g_test_add_func("/ops/elemwise/shape/quantize", test_shape_quantize);
  g_test_add_func("/ops/elemwise/kernel/quantize", test_kernel_quantize);
  g_test_add_func("/ops/elemwise/kernel/dynamic-quantize", test_kernel_dynamic_quantize);

  int status = g_test_run();
  g_rand_free(rng);
  ds_thread_pool_free(pool);
  return status;
}
