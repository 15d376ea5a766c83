/* test-cuda-elemwise.c: the CUDA kernels of the elementwise and reduction families
 * (backends/cuda/ds-cuda-elemwise.c, ds-cuda-reduce.c) against the CPU kernels on random inputs.
 *
 * Every case that runs a kernel starts with cuda_ready() and skips without a device. Two cases
 * need none: /cuda/elemwise/coverage fails when either family registers a kernel that no case
 * here runs (so a new kernel comes with its test), and /cuda/elemwise/supports checks what the
 * kernels refuse. Before each comparison check() also asks the backend's supports() whether it
 * takes those dtypes, so the supports functions and the kernels cannot drift apart.
 *
 * Tolerances: ops computed by the same correctly rounded float operations on both sides
 * (add, sqrt, clip, division...) get EXACT; transcendental functions and normalisations, whose
 * CPU versions are within a few ulp of the correctly rounded result, TRANS; sums, whose
 * rounding depends on the order of the additions, an absolute tolerance that grows with the
 * number of terms.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "ds-backend.h"
#include "ds-cuda.h"
#include "ds-test-cuda.h"
#include "ds-test-unary.h"

#define EXACT_ATOL 1e-7
#define EXACT_RTOL 1e-6
#define TRANS_ATOL 1e-6
#define TRANS_RTOL 1e-5

/* ---- helpers ---- */

/* Random values by kind: any sign, positive, away from zero (divisors), or a few small
 * integers so that comparisons meet equal operands and logical ops meet zeros. */
typedef enum { VAL_ANY, VAL_POSITIVE, VAL_NONZERO, VAL_COARSE } ValKind;

static gboolean is_float_dtype(DsDType t)
{
  return t == DS_DTYPE_FLOAT32 || t == DS_DTYPE_FLOAT64;
}

static double random_value(DsDType t, ValKind kind, double lo, double hi)
{
  if (t == DS_DTYPE_BOOL)
    return g_rand_int_range(rng, 0, 2);
  gboolean ints = !is_float_dtype(t);
  int32_t min_int = t == DS_DTYPE_UINT8 ? 0 : -3; /* no negative values for uint8 */
  switch (kind) {
  case VAL_POSITIVE:
    return ints ? g_rand_int_range(rng, 1, 4) : g_rand_double_range(rng, 0.1, 3.0);
  case VAL_NONZERO: {
    double sign = t == DS_DTYPE_UINT8 || g_rand_boolean(rng) ? 1.0 : -1.0;
    return sign * (ints ? g_rand_int_range(rng, 1, 4) : g_rand_double_range(rng, 0.5, 2.0));
  }
  case VAL_COARSE:
    return g_rand_int_range(rng, min_int, 3);
  default:
    return ints ? g_rand_int_range(rng, min_int, 6) : g_rand_double_range(rng, lo, hi);
  }
}

/* A tensor of dtype t and shape text `shape` ("(2, 3)", "()") filled with random values. */
static DsTensor input(DsDType t, const char *shape, ValKind kind)
{
  DsTensor x = tensor_new(t, shape);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
    set(&x, i, random_value(t, kind, -3.0, 3.0));
  return x;
}

/* An output description (dtype and shape only) for compare_backends. */
static DsTensor like(DsDType t, int ndim, const int64_t *shape)
{
  DsTensor o = {.dtype = t, .ndim = ndim};
  memcpy(o.shape, shape, sizeof(int64_t) * (size_t)ndim);
  return o;
}

/* The NumPy broadcast of `n` tensors' shapes (they are known to broadcast). */
static DsTensor broadcast_like(DsDType t, const DsTensor *ops, int n)
{
  DsTensor o = {.dtype = t};
  for (int k = 0; k < n; k++)
    o.ndim = MAX(o.ndim, ops[k].ndim);
  for (int d = 0; d < o.ndim; d++) {
    o.shape[d] = 1;
    for (int k = 0; k < n; k++) {
      int dk = d - (o.ndim - ops[k].ndim);
      if (dk >= 0 && ops[k].shape[dk] != 1)
        o.shape[d] = ops[k].shape[dk];
    }
  }
  return o;
}

/* Node "layer0" of `op` with attributes `attrs` (key, value pairs ending in NULL; NULL for
 * none), its param parsed. */
static DsNode *parse_op(DsGraph *g, const char *op, const char *const *attrs)
{
  DsNode *n = ds_graph_add_node(g, "layer0", op);
  n->op = ds_op_lookup(op);
  g_assert_nonnull(n->op);
  for (int i = 0; attrs != NULL && attrs[i] != NULL; i += 2)
    ds_node_add_attr(n, attrs[i], attrs[i + 1]);
  n->param = n->op->param_size > 0 ? g_malloc0(n->op->param_size) : NULL;
  GError *error = NULL;
  if (n->op->parse != NULL)
    n->op->parse(n, n->param, &error);
  g_assert_no_error(error);
  return n;
}

/* Whether the CUDA backend says it takes op `id` with these dtypes. */
static gboolean cuda_supports(DsOpId id, const void *param, const DsTensor *in, int n_in,
                              const DsTensor *out, int n_out)
{
  DsDType din[16], dout[8];
  g_assert_cmpint(n_in, <=, 16);
  g_assert_cmpint(n_out, <=, 8);
  for (int i = 0; i < n_in; i++)
    din[i] = in[i].dtype;
  for (int i = 0; i < n_out; i++)
    dout[i] = out[i].dtype;
  return ds_backend_find("cuda")->supports(id, param, din, n_in, dout, n_out);
}

/* `op` (with `attrs`) on both backends: first supports() must accept the dtypes, then the
 * outputs must agree within atol + rtol * |cpu|. */
static void check(const char *what, const char *op, const char *const *attrs, const DsTensor *in,
                  int n_in, const DsTensor *out_like, int n_out, double atol, double rtol)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = parse_op(g, op, attrs);
  if (!cuda_supports(n->op->id, n->param, in, n_in, out_like, n_out)) {
    g_test_message("%s: the CUDA backend's supports() refuses it", what);
    g_test_fail();
    return;
  }
  compare_backends(what, n->op->id, n->param, in, n_in, out_like, n_out, atol, rtol);
}

/* ---- unary ops ---- */

/* The unary math ops: ds-test-unary.h's cases (its reference is for the CPU test; here the CPU
 * kernel is the reference). */
typedef struct {
  const char *op;
  double lo, hi; /* the inputs' range (float32) */
  gboolean exact;
  const char *attrs[7];
} UnaryCase;

#define GPU_EXACT TRUE
#define GPU_CLOSE FALSE
#define UNARY_CASE(NAME, LO, HI, GPU, INTS, ATTRS, REF)                                            \
  {#NAME, LO, HI, GPU_##GPU, {DS_TEST_UNPAREN ATTRS}},
static const UnaryCase unary_cases[] = {DS_TEST_UNARY_CASES(UNARY_CASE)};
#undef UNARY_CASE

/* Shapes every unary op runs on: odd sizes, a 0-dim scalar, an empty tensor, 10^6 + 3. */
static const char *const unary_shapes[] = {"(2, 3, 4)", "(7,)", "()", "(0, 4)", "(1000003,)"};

/* Runs `op` on float32 inputs in [lo, hi) of each unary shape. */
static void check_unary_shapes(const char *name, const char *op, const char *const *attrs,
                               double lo, double hi, double atol, double rtol)
{
  for (guint s = 0; s < G_N_ELEMENTS(unary_shapes); s++) {
    DsTensor x = rtensor(unary_shapes[s], lo, hi);
    if (strcmp(op, "logical_not") == 0) /* zeros must occur */
      for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
        set(&x, i, g_rand_int_range(rng, -1, 2));
    DsTensor out = like(DS_DTYPE_FLOAT32, x.ndim, x.shape);
    g_autofree char *what = g_strdup_printf("%s %s", name, unary_shapes[s]);
    check(what, op, attrs, &x, 1, &out, 1, atol, rtol);
    tensor_free(&x);
  }
}

static void test_unary(void)
{
  if (!cuda_ready())
    return;
  for (guint i = 0; i < G_N_ELEMENTS(unary_cases); i++) {
    const UnaryCase *c = &unary_cases[i];
    check_unary_shapes(c->op, c->op, c->attrs, c->lo, c->hi, c->exact ? EXACT_ATOL : TRANS_ATOL,
                       c->exact ? EXACT_RTOL : TRANS_RTOL);
  }
}

/* Activation: every act_type. */
static const char *const act_types[] = {"relu",     "sigmoid",     "tanh", "softrelu",
                                        "softsign", "log_sigmoid", "mish"};

static void test_activation(void)
{
  if (!cuda_ready())
    return;
  for (guint i = 0; i < G_N_ELEMENTS(act_types); i++) {
    const char *attrs[] = {"act_type", act_types[i], NULL};
    g_autofree char *name = g_strdup_printf("Activation(%s)", act_types[i]);
    /* Past 20 softrelu is x itself: the range crosses that switch. */
    check_unary_shapes(name, "Activation", attrs, -25, 25, TRANS_ATOL, TRANS_RTOL);
  }
}

/* LeakyReLU: the one-input modes, rrelu (two outputs), prelu with one slope and per channel. */
static void test_leaky_relu(void)
{
  if (!cuda_ready())
    return;
  static const char *const modes[][4] = {
      {"leaky", "slope", "0.1", NULL},
      {"elu", "slope", "0.7", NULL},
      {"selu", NULL},
      {"gelu", NULL},
  };
  for (guint i = 0; i < G_N_ELEMENTS(modes); i++) {
    const char *attrs[] = {"act_type", modes[i][0], modes[i][1], modes[i][2], NULL};
    g_autofree char *name = g_strdup_printf("LeakyReLU(%s)", modes[i][0]);
    check_unary_shapes(name, "LeakyReLU", attrs, -4, 4, TRANS_ATOL, TRANS_RTOL);
  }

  const char *rrelu[] = {"act_type", "rrelu", "lower_bound", "0.1", "upper_bound", "0.3", NULL};
  DsTensor x = rtensor("(3, 5, 7)", -2, 2);
  DsTensor outs[2] = {like(DS_DTYPE_FLOAT32, x.ndim, x.shape),
                      like(DS_DTYPE_FLOAT32, x.ndim, x.shape)};
  check("LeakyReLU(rrelu)", "LeakyReLU", rrelu, &x, 1, outs, 2, EXACT_ATOL, EXACT_RTOL);

  /* prelu: one slope; a slope per channel on axis 1; on axis 0 when axis 1 does not match. */
  const char *prelu[] = {"act_type", "prelu", NULL};
  static const char *const gammas[] = {"(1,)", "(5,)", "(3,)"};
  for (guint i = 0; i < G_N_ELEMENTS(gammas); i++) {
    DsTensor in[2] = {x, rtensor(gammas[i], 0.05, 0.5)};
    g_autofree char *what = g_strdup_printf("LeakyReLU(prelu) gamma %s", gammas[i]);
    check(what, "LeakyReLU", prelu, in, 2, outs, 1, EXACT_ATOL, EXACT_RTOL);
    tensor_free(&in[1]);
  }
  tensor_free(&x);
}

/* Dropout at inference: a copy, and a mask of ones (float32 and float64). */
static void test_dropout(void)
{
  if (!cuda_ready())
    return;
  const char *attrs[] = {"p", "0.5", NULL};
  static const DsDType dtypes[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64};
  for (guint i = 0; i < G_N_ELEMENTS(dtypes); i++) {
    DsTensor x = input(dtypes[i], "(4, 1001)", VAL_ANY);
    DsTensor outs[2] = {like(dtypes[i], x.ndim, x.shape), like(dtypes[i], x.ndim, x.shape)};
    g_autofree char *what = g_strdup_printf("Dropout %s", ds_dtype_name(dtypes[i]));
    check(what, "Dropout", attrs, &x, 1, outs, 2, 0, 0);
    tensor_free(&x);
  }
}

/* ---- copies, fills, predicates ---- */

static const char *const copy_fill_ops[] = {"_copy", "BlockGrad", "zeros_like", "ones_like"};
static const DsDType data_dtypes[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32,
                                      DS_DTYPE_INT64,   DS_DTYPE_INT8,    DS_DTYPE_UINT8,
                                      DS_DTYPE_BOOL};

static void test_copy_fill(void)
{
  if (!cuda_ready())
    return;
  static const char *const shapes[] = {"(3, 7)", "()", "(0,)", "(1000003,)"};
  for (guint o = 0; o < G_N_ELEMENTS(copy_fill_ops); o++)
    for (guint t = 0; t < G_N_ELEMENTS(data_dtypes); t++)
      for (guint s = 0; s < G_N_ELEMENTS(shapes); s++) {
        DsTensor x = input(data_dtypes[t], shapes[s], VAL_ANY);
        DsTensor out = like(data_dtypes[t], x.ndim, x.shape);
        g_autofree char *what =
            g_strdup_printf("%s %s %s", copy_fill_ops[o], ds_dtype_name(data_dtypes[t]), shapes[s]);
        check(what, copy_fill_ops[o], NULL, &x, 1, &out, 1, 0, 0);
        tensor_free(&x);
      }

  /* float16 is only moved: compare the bits of a copy. */
  DsTensor h = tensor_new(DS_DTYPE_FLOAT16, "(5, 3)");
  fill_random(&h, 0, 1);
  DsTensor out = tensor_new(DS_DTYPE_FLOAT16, "(5, 3)");
  g_assert_cmpint(run_cuda_kernel(DS_OP_IDENTITY, NULL, &h, 1, &out, 1), ==, DS_STATUS_OK);
  for (int64_t i = 0; i < ds_tensor_numel(&h); i++)
    g_assert_cmphex(bits(&out, i), ==, bits(&h, i));
  tensor_free(&out);
  tensor_free(&h);
}

static const char *const predicate_ops[] = {"_npi_isnan", "_npi_isinf", "_npi_isposinf",
                                            "_npi_isneginf"};

static void test_predicates(void)
{
  if (!cuda_ready())
    return;
  static const DsDType dtypes[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT32};
  for (guint o = 0; o < G_N_ELEMENTS(predicate_ops); o++)
    for (guint t = 0; t < G_N_ELEMENTS(dtypes); t++) {
      DsTensor x = input(dtypes[t], "(4, 257)", VAL_ANY);
      if (is_float_dtype(dtypes[t])) {
        static const double specials[] = {NAN, INFINITY, -INFINITY};
        for (int64_t i = 0; i < ds_tensor_numel(&x); i += 5)
          set(&x, i, specials[g_rand_int_range(rng, 0, 3)]);
      }
      DsTensor out = like(DS_DTYPE_BOOL, x.ndim, x.shape);
      g_autofree char *what = g_strdup_printf("%s %s", predicate_ops[o], ds_dtype_name(dtypes[t]));
      check(what, predicate_ops[o], NULL, &x, 1, &out, 1, 0, 0);
      tensor_free(&x);
    }
}

/* ---- scalar ops ---- */

typedef struct {
  const char *op;
  const char *scalar;
  ValKind kind; /* of the data */
  gboolean exact;
} ScalarCase;

/* Every op of DS_OPS_SCALAR (divisions by the data see no zeros, comparisons see equal
 * values), and two more powers; powers through double differ from the CPU's powf by an ulp. */
#define SCALAR_KIND(FN, REVERSE)                                                                   \
  ((REVERSE) && (DS_MATH_BIN_##FN == DS_MATH_BIN_DIV || DS_MATH_BIN_##FN == DS_MATH_BIN_MOD)       \
       ? VAL_NONZERO                                                                               \
   : DS_MATH_BIN_##FN >= DS_MATH_BIN_EQ && DS_MATH_BIN_##FN <= DS_MATH_BIN_LE ? VAL_COARSE          \
                                                                               : VAL_ANY)
#define SCALAR_CASE(ID, NAME, ALIAS, FN, REVERSE)                                                  \
  {NAME, "1.5", SCALAR_KIND(FN, REVERSE), DS_MATH_BIN_##FN != DS_MATH_BIN_POW},
static const ScalarCase scalar_cases[] = {
    DS_OPS_SCALAR(SCALAR_CASE){"_power_scalar", "2", VAL_ANY, TRUE},
    {"_power_scalar", "-1.5", VAL_POSITIVE, FALSE},
    {"_equal_scalar", "1", VAL_COARSE, TRUE},
};
#undef SCALAR_CASE
#undef SCALAR_KIND

static void test_scalar(void)
{
  if (!cuda_ready())
    return;
  static const DsDType dtypes[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64};
  static const char *const shapes[] = {"(3, 5, 7)", "()", "(0, 2)", "(1000003,)"};
  for (guint i = 0; i < G_N_ELEMENTS(scalar_cases); i++) {
    const ScalarCase *c = &scalar_cases[i];
    const char *attrs[] = {"scalar", c->scalar, NULL};
    for (guint t = 0; t < G_N_ELEMENTS(dtypes); t++)
      for (guint s = 0; s < G_N_ELEMENTS(shapes); s++) {
        DsTensor x = input(dtypes[t], shapes[s], c->kind);
        DsTensor out = like(dtypes[t], x.ndim, x.shape);
        g_autofree char *what =
            g_strdup_printf("%s(%s) %s %s", c->op, c->scalar, ds_dtype_name(dtypes[t]), shapes[s]);
        check(what, c->op, attrs, &x, 1, &out, 1, c->exact ? EXACT_ATOL : TRANS_ATOL,
              c->exact ? EXACT_RTOL : TRANS_RTOL);
        tensor_free(&x);
      }
  }
  DsTensor x = rtensor("(2, 3, 16)", -3, 3);
  DsTensor out = like(DS_DTYPE_FLOAT32, x.ndim, x.shape);
  check("_contrib_div_sqrt_dim", "_contrib_div_sqrt_dim", NULL, &x, 1, &out, 1, EXACT_ATOL,
        EXACT_RTOL);
  tensor_free(&x);
}

/* ---- binary and broadcast ops ---- */

typedef struct {
  const char *op;
  ValKind ka, kb;
  gboolean exact;
  gboolean ints;       /* also int32, int64 */
  gboolean bools;      /* also bool */
  gboolean same_shape; /* elemwise_*: no broadcasting */
} BinaryCase;

static const BinaryCase binary_cases[] = {
    {"elemwise_add", VAL_ANY, VAL_ANY, TRUE, TRUE, FALSE, TRUE},
    {"elemwise_sub", VAL_ANY, VAL_ANY, TRUE, TRUE, FALSE, TRUE},
    {"elemwise_mul", VAL_ANY, VAL_ANY, TRUE, TRUE, FALSE, TRUE},
    {"elemwise_div", VAL_ANY, VAL_NONZERO, TRUE, FALSE, FALSE, TRUE},
    {"broadcast_add", VAL_ANY, VAL_ANY, TRUE, TRUE, FALSE, FALSE},
    {"broadcast_sub", VAL_ANY, VAL_ANY, TRUE, TRUE, FALSE, FALSE},
    {"broadcast_mul", VAL_ANY, VAL_ANY, TRUE, TRUE, FALSE, FALSE},
    {"broadcast_div", VAL_ANY, VAL_NONZERO, TRUE, FALSE, FALSE, FALSE},
    {"broadcast_maximum", VAL_ANY, VAL_ANY, TRUE, TRUE, FALSE, FALSE},
    {"broadcast_minimum", VAL_ANY, VAL_ANY, TRUE, TRUE, FALSE, FALSE},
    {"broadcast_power", VAL_POSITIVE, VAL_ANY, FALSE, FALSE, FALSE, FALSE},
    {"broadcast_mod", VAL_ANY, VAL_NONZERO, TRUE, FALSE, FALSE, FALSE},
    {"_npi_fmod", VAL_ANY, VAL_NONZERO, TRUE, FALSE, FALSE, FALSE},
    {"broadcast_prelu", VAL_ANY, VAL_POSITIVE, TRUE, FALSE, FALSE, FALSE},
    {"broadcast_equal", VAL_COARSE, VAL_COARSE, TRUE, TRUE, TRUE, FALSE},
    {"broadcast_not_equal", VAL_COARSE, VAL_COARSE, TRUE, TRUE, TRUE, FALSE},
    {"broadcast_greater", VAL_COARSE, VAL_COARSE, TRUE, TRUE, TRUE, FALSE},
    {"broadcast_greater_equal", VAL_COARSE, VAL_COARSE, TRUE, TRUE, TRUE, FALSE},
    {"broadcast_lesser", VAL_COARSE, VAL_COARSE, TRUE, TRUE, TRUE, FALSE},
    {"broadcast_lesser_equal", VAL_COARSE, VAL_COARSE, TRUE, TRUE, TRUE, FALSE},
    {"broadcast_logical_and", VAL_COARSE, VAL_COARSE, TRUE, TRUE, TRUE, FALSE},
    {"broadcast_logical_or", VAL_COARSE, VAL_COARSE, TRUE, TRUE, TRUE, FALSE},
    {"broadcast_logical_xor", VAL_COARSE, VAL_COARSE, TRUE, TRUE, TRUE, FALSE},
    /* CUDA's hypot is within 2 ulp of the correctly rounded result, as glibc's */
    {"broadcast_hypot", VAL_ANY, VAL_ANY, FALSE, FALSE, FALSE, FALSE},
    {"_hypot", VAL_ANY, VAL_ANY, FALSE, FALSE, FALSE, TRUE},
};

/* Operand shapes: equal, a row, a 0-dim scalar on either side, (1,), both sides stretching,
 * five dims, an empty output, and 10^6 + 3 elements plain and against one value. */
static const char *const bcast_pairs[][2] = {
    {"(2, 3, 4)", "(2, 3, 4)"},
    {"(2, 3, 4)", "(3, 1)"},
    {"(2, 3, 4)", "()"},
    {"()", "(2, 3, 4)"},
    {"(1,)", "(5, 7)"},
    {"(4, 1, 5)", "(1, 3, 1)"},
    {"(2, 1, 3, 1, 2)", "(1, 4, 1, 5, 1)"},
    {"(7,)", "(1,)"},
    {"(0, 3)", "(1, 3)"},
    {"(1000003,)", "(1000003,)"},
    {"(1000003,)", "(1,)"},
};

static gboolean same_shape_pair(guint p)
{
  return strcmp(bcast_pairs[p][0], bcast_pairs[p][1]) == 0;
}

/* `op` on operands of dtype t and shapes of pair p; the output has dtype t_out. */
static void check_binary_pair(const BinaryCase *c, DsDType t, DsDType t_out, guint p)
{
  DsTensor in[2] = {input(t, bcast_pairs[p][0], c->ka), input(t, bcast_pairs[p][1], c->kb)};
  DsTensor out = broadcast_like(t_out, in, 2);
  g_autofree char *what =
      g_strdup_printf("%s %s %s %s", c->op, ds_dtype_name(t), bcast_pairs[p][0], bcast_pairs[p][1]);
  check(what, c->op, NULL, in, 2, &out, 1, c->exact ? EXACT_ATOL : TRANS_ATOL,
        c->exact ? EXACT_RTOL : TRANS_RTOL);
  tensors_free(in, 2);
}

static void test_binary_float(void)
{
  if (!cuda_ready())
    return;
  for (guint i = 0; i < G_N_ELEMENTS(binary_cases); i++) {
    const BinaryCase *c = &binary_cases[i];
    for (guint p = 0; p < G_N_ELEMENTS(bcast_pairs); p++) {
      if (c->same_shape && !same_shape_pair(p))
        continue;
      check_binary_pair(c, DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32, p);
      if (p < 3) /* float64 takes the same templates: a few shapes suffice */
        check_binary_pair(c, DS_DTYPE_FLOAT64, DS_DTYPE_FLOAT64, p);
    }
  }
}

static void test_binary_int_bool(void)
{
  if (!cuda_ready())
    return;
  static const DsDType ints[] = {DS_DTYPE_INT32, DS_DTYPE_INT64};
  for (guint i = 0; i < G_N_ELEMENTS(binary_cases); i++) {
    const BinaryCase *c = &binary_cases[i];
    for (guint p = 0; p < 9; p++) { /* the small shapes */
      if (c->same_shape && !same_shape_pair(p))
        continue;
      for (guint t = 0; c->ints && t < G_N_ELEMENTS(ints); t++)
        check_binary_pair(c, ints[t], ints[t], p);
      if (c->bools)
        check_binary_pair(c, DS_DTYPE_BOOL, DS_DTYPE_BOOL, p);
    }
  }
}

/* broadcast_power with the exponent 2 is x * x on both sides (exactly). */
static void test_power_square(void)
{
  if (!cuda_ready())
    return;
  static const char *const exps[] = {"()", "(1,)", "(3, 1)"};
  for (guint i = 0; i < G_N_ELEMENTS(exps); i++) {
    DsTensor in[2] = {rtensor("(2, 3, 4)", -10, 10), tensor_new(DS_DTYPE_FLOAT32, exps[i])};
    for (int64_t k = 0; k < ds_tensor_numel(&in[1]); k++)
      set(&in[1], k, 2.0);
    DsTensor out = broadcast_like(DS_DTYPE_FLOAT32, in, 2);
    g_autofree char *what = g_strdup_printf("broadcast_power x ** 2 %s", exps[i]);
    check(what, "broadcast_power", NULL, in, 2, &out, 1, 0, 0);
    tensors_free(in, 2);
  }
}

/* NumPy's comparisons: bool results from operands of every dtype. */
static const char *const np_compare_ops[] = {"_npi_equal",   "_npi_not_equal",
                                             "_npi_greater", "_npi_greater_equal",
                                             "_npi_less",    "_npi_less_equal"};

static void test_np_compare(void)
{
  if (!cuda_ready())
    return;
  for (guint o = 0; o < G_N_ELEMENTS(np_compare_ops); o++)
    for (guint t = 0; t < G_N_ELEMENTS(data_dtypes); t++)
      for (guint p = 0; p < 9; p++) {
        BinaryCase c = {np_compare_ops[o], VAL_COARSE, VAL_COARSE, TRUE, TRUE, TRUE, FALSE};
        check_binary_pair(&c, data_dtypes[t], DS_DTYPE_BOOL, p);
      }
}

/* ---- where, _npi_where, add_n ---- */

static const DsDType cond_dtypes[] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT32,   DS_DTYPE_BOOL,
                                      DS_DTYPE_UINT8,   DS_DTYPE_FLOAT64, DS_DTYPE_INT64};

static void check_where(const char *op, DsDType tc, DsDType t, const char *sc, const char *sx,
                        const char *sy)
{
  DsTensor in[3] = {input(tc, sc, VAL_COARSE), input(t, sx, VAL_ANY), input(t, sy, VAL_ANY)};
  DsTensor out =
      strcmp(op, "where") == 0 ? like(t, in[1].ndim, in[1].shape) : broadcast_like(t, in, 3);
  g_autofree char *what = g_strdup_printf("%s cond %s %s, %s x %s, y %s", op, ds_dtype_name(tc), sc,
                                          ds_dtype_name(t), sx, sy);
  check(what, op, NULL, in, 3, &out, 1, 0, 0);
  tensors_free(in, 3);
}

static void test_where(void)
{
  if (!cuda_ready())
    return;
  for (guint c = 0; c < G_N_ELEMENTS(cond_dtypes); c++)
    for (guint t = 0; t < G_N_ELEMENTS(data_dtypes); t++) {
      /* The condition of x's shape, then one flag per row. */
      check_where("where", cond_dtypes[c], data_dtypes[t], "(2, 3, 4)", "(2, 3, 4)", "(2, 3, 4)");
      check_where("where", cond_dtypes[c], data_dtypes[t], "(2,)", "(2, 3, 4)", "(2, 3, 4)");
    }
  check_where("where", DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32, "(1000003,)", "(1000003,)",
              "(1000003,)");
  check_where("where", DS_DTYPE_BOOL, DS_DTYPE_FLOAT32, "(5,)", "(5, 1)", "(5, 1)");
  check_where("where", DS_DTYPE_BOOL, DS_DTYPE_FLOAT32, "(0,)", "(0, 3)", "(0, 3)");
}

static void test_np_where(void)
{
  if (!cuda_ready())
    return;
  static const char *const shapes[][3] = {
      {"(2, 1, 4)", "(3, 1)", "()"},  {"()", "(5,)", "(5,)"},
      {"(3, 4)", "(3, 4)", "(3, 4)"}, {"(4, 1)", "(1, 6)", "(4, 6)"},
      {"(0, 2)", "(1, 2)", "()"},     {"(1000003,)", "()", "(1000003,)"},
  };
  for (guint s = 0; s < G_N_ELEMENTS(shapes); s++)
    for (guint c = 0; c < G_N_ELEMENTS(cond_dtypes); c++)
      for (guint t = 0; t < G_N_ELEMENTS(data_dtypes); t++) {
        if (s == G_N_ELEMENTS(shapes) - 1 && (c > 0 || t > 0))
          continue; /* the big one once */
        check_where("_npi_where", cond_dtypes[c], data_dtypes[t], shapes[s][0], shapes[s][1],
                    shapes[s][2]);
      }
}

/* add_n with more inputs than compare_backends takes (16): the CUDA kernel called through the
 * backend directly, the CPU kernel through run_kernel, the float32 sums compared exactly. */
static void check_add_n_many(int n_inputs, const char *shape)
{
  const DsBackend *b = ds_backend_find("cuda");
  const DsKernel *k = b->get_kernel(DS_OP_ADD_N);
  g_assert_nonnull(k);
  g_autoptr(DsGraph) g = ds_graph_new();
  g_autofree char *num = g_strdup_printf("%d", n_inputs);
  const char *attrs[] = {"num_args", num, NULL};
  DsNode *node = parse_op(g, "add_n", attrs);
  DsTensor *in = g_new(DsTensor, n_inputs), *dev = g_new(DsTensor, n_inputs);
  for (int i = 0; i < n_inputs; i++) {
    in[i] = input(DS_DTYPE_FLOAT32, shape, VAL_ANY);
    dev[i] = in[i];
    dev[i].data = b->alloc_buffer(ds_tensor_nbytes(&in[i]));
    dev[i].memory = DS_MEMORY_DEVICE;
    g_assert_nonnull(dev[i].data);
    g_assert_true(b->copy_to_device(dev[i].data, in[i].data, ds_tensor_nbytes(&in[i])));
  }
  DsTensor want = tensor_new(DS_DTYPE_FLOAT32, shape), got = tensor_new(DS_DTYPE_FLOAT32, shape);
  g_assert_cmpint(run_kernel(DS_OP_ADD_N, node->param, in, n_inputs, &want, 1), ==, DS_STATUS_OK);
  DsTensor dev_out = got;
  dev_out.data = b->alloc_buffer(ds_tensor_nbytes(&got));
  dev_out.memory = DS_MEMORY_DEVICE;
  DsKernelCtx ctx = {.param = node->param,
                     .inputs = dev,
                     .n_inputs = n_inputs,
                     .outputs = &dev_out,
                     .n_outputs = 1};
  g_assert_cmpint(k->run(&ctx), ==, DS_STATUS_OK);
  g_assert_true(b->synchronize());
  g_assert_true(b->copy_to_host(got.data, dev_out.data, ds_tensor_nbytes(&got)));
  for (int64_t i = 0; i < ds_tensor_numel(&got); i++)
    g_assert_cmpfloat(get(&got, i), ==, get(&want, i));
  b->free_buffer(dev_out.data);
  for (int i = 0; i < n_inputs; i++)
    b->free_buffer(dev[i].data);
  tensors_free(in, n_inputs);
  tensor_free(&want);
  tensor_free(&got);
  g_free(in);
  g_free(dev);
}

/* add_n: one input, a few, a launch's whole batch (16), and past the batch and past the
 * host's chunk of pointers (64). float32 adds in the CPU's order, so the sums agree exactly. */
static void test_add_n(void)
{
  if (!cuda_ready())
    return;
  static const struct {
    int n;
    const char *shape;
    DsDType t;
  } cases[] = {
      {1, "(3, 5)", DS_DTYPE_FLOAT32},     {2, "(3, 5)", DS_DTYPE_FLOAT32},
      {3, "(1000003,)", DS_DTYPE_FLOAT32}, {16, "(3, 5)", DS_DTYPE_FLOAT32},
      {4, "(7,)", DS_DTYPE_FLOAT64},       {2, "(0, 5)", DS_DTYPE_FLOAT32},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsTensor in[16];
    for (int k = 0; k < cases[i].n; k++)
      in[k] = input(cases[i].t, cases[i].shape, VAL_ANY);
    DsTensor out = like(cases[i].t, in[0].ndim, in[0].shape);
    g_autofree char *num = g_strdup_printf("%d", cases[i].n);
    const char *attrs[] = {"num_args", num, NULL};
    g_autofree char *what =
        g_strdup_printf("add_n x%d %s %s", cases[i].n, cases[i].shape, ds_dtype_name(cases[i].t));
    check(what, "add_n", attrs, in, cases[i].n, &out, 1, 0, 0);
    tensors_free(in, cases[i].n);
  }
  check_add_n_many(17, "(3, 5)");
  check_add_n_many(70, "(2, 333)");
}

/* ---- axis reductions ---- */

static const char *const reduce_ops[] = {"sum", "mean", "max", "min"};
static const char *const np_reduce_ops[] = {"_npi_sum", "_npi_mean", "_npi_max", "_npi_min"};

/* The output of reducing x as the node's param says (numpy: the _npi_ forms, where reducing
 * everything without keepdims gives a 0-dim result; MXNet's gives (1,)). */
static DsTensor reduced_like(const DsNode *n, const DsTensor *x, gboolean numpy)
{
  bool mask[DS_MAX_NDIM];
  bool keepdims;
  if (numpy) {
    const DsNpReduceParam *p = n->param;
    g_assert_true(ds_np_reduce_axes_mask(p, x->ndim, mask));
    keepdims = p->keepdims;
  } else {
    const DsReduceParam *p = n->param;
    g_assert_true(ds_reduce_axes_mask(p, x->ndim, mask));
    keepdims = p->keepdims;
  }
  DsTensor o = {.dtype = x->dtype};
  for (int d = 0; d < x->ndim; d++)
    if (!mask[d] || keepdims)
      o.shape[o.ndim++] = mask[d] ? 1 : x->shape[d];
  if (o.ndim == 0 && !numpy) {
    o.ndim = 1;
    o.shape[0] = 1;
  }
  return o;
}

/* Sums and means of `count` terms in [-1, 1): float32 rounding grows with the count. */
static void reduce_tolerance(const char *op, const DsTensor *x, const DsTensor *out, double *atol,
                             double *rtol)
{
  int64_t n_out = ds_tensor_numel(out);
  double count = n_out > 0 ? (double)ds_tensor_numel(x) / (double)n_out : 0.0;
  if (strstr(op, "max") != NULL || strstr(op, "min") != NULL) {
    *atol = *rtol = 0.0; /* exact */
  } else if (strstr(op, "mean") != NULL) {
    *atol = 1e-6;
    *rtol = TRANS_RTOL;
  } else {
    *atol = 1e-5 + 1e-7 * count;
    *rtol = TRANS_RTOL;
  }
}

static void check_reduce(const char *op, gboolean numpy, DsDType t, const char *shape,
                         const char *const *attrs)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = parse_op(g, op, attrs);
  DsTensor x = tensor_new(t, shape);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
    set(&x, i, g_rand_double_range(rng, -1.0, 1.0));
  DsTensor out = reduced_like(n, &x, numpy);
  double atol, rtol;
  reduce_tolerance(op, &x, &out, &atol, &rtol);
  GString *what = g_string_new(NULL);
  g_string_printf(what, "%s %s %s", op, ds_dtype_name(t), shape);
  for (int i = 0; attrs != NULL && attrs[i] != NULL; i += 2)
    g_string_append_printf(what, " %s=%s", attrs[i], attrs[i + 1]);
  check(what->str, op, attrs, &x, 1, &out, 1, atol, rtol);
  g_string_free(what, TRUE);
  tensor_free(&x);
}

/* Axis attributes: none (everything), each axis, -1, pairs that leave kept dims between
 * reduced ones, all four, and () (everything for MXNet's ops, nothing for NumPy's). */
static const char *const reduce_axes[] = {
    NULL, "0", "1", "2", "3", "-1", "(0, 2)", "(1, 3)", "(0, 1, 2, 3)", "()"};

static void check_reduce_axes(const char *op, gboolean numpy, DsDType t, const char *shape)
{
  for (guint a = 0; a < G_N_ELEMENTS(reduce_axes); a++)
    for (int keep = 0; keep < 2; keep++) {
      const char *keepdims = keep ? "True" : "False";
      const char *with_axis[] = {"axis", reduce_axes[a], "keepdims", keepdims, NULL};
      const char *without[] = {"keepdims", keepdims, NULL};
      check_reduce(op, numpy, t, shape, reduce_axes[a] != NULL ? with_axis : without);
    }
}

/* Large reductions: every shape of work (a block per output, a warp per 32 outputs, split
 * across blocks or not, full reductions) and an empty reduced axis. */
static const struct {
  const char *shape, *axis;
  gboolean empty; /* nothing to reduce */
} big_reductions[] = {
    {"(1000003,)", "0", FALSE},  {"(1000, 1000)", "0", FALSE}, {"(1000, 1000)", "1", FALSE},
    {"(3, 300001)", "1", FALSE}, {"(300001, 3)", "0", FALSE},  {"(50, 60, 70)", "(0, 2)", FALSE},
    {"(4, 0, 3)", "1", TRUE},
};

static void test_reduce(void)
{
  if (!cuda_ready())
    return;
  for (guint o = 0; o < G_N_ELEMENTS(reduce_ops); o++) {
    check_reduce_axes(reduce_ops[o], FALSE, DS_DTYPE_FLOAT32, "(2, 3, 4, 5)");
    check_reduce_axes(np_reduce_ops[o], TRUE, DS_DTYPE_FLOAT32, "(2, 3, 4, 5)");
    check_reduce_axes(reduce_ops[o], FALSE, DS_DTYPE_FLOAT64, "(3, 1, 4, 7)");
    const char *exclude[] = {"axis", "(1, 3)", "exclude", "True", NULL};
    check_reduce(reduce_ops[o], FALSE, DS_DTYPE_FLOAT32, "(2, 3, 4, 5)", exclude);
    for (guint b = 0; b < G_N_ELEMENTS(big_reductions); b++) {
      /* The extremes of nothing are infinite, which compare_backends cannot compare
       * (inf - inf is NaN): only the sums take the empty case. */
      if (o >= 2 && big_reductions[b].empty)
        continue;
      const char *attrs[] = {"axis", big_reductions[b].axis, NULL};
      check_reduce(reduce_ops[o], FALSE, DS_DTYPE_FLOAT32, big_reductions[b].shape, attrs);
      check_reduce(np_reduce_ops[o], TRUE, DS_DTYPE_FLOAT64, big_reductions[b].shape, attrs);
    }
  }
}

/* MXNet's prod, nansum, nanprod and norm (DsNormParam starts with sum's DsReduceParam, which
 * reduced_like reads): every axis pattern on small data (a product of many terms underflows),
 * NaNs for the nan-forms, and the norms over the large shapes too. */
static const char *const mx_reduce_ops[] = {"prod", "nansum", "nanprod", "norm"};

static void test_reduce_mxnet(void)
{
  if (!cuda_ready())
    return;
  for (guint o = 0; o < G_N_ELEMENTS(mx_reduce_ops); o++) {
    check_reduce_axes(mx_reduce_ops[o], FALSE, DS_DTYPE_FLOAT32, "(2, 3, 4, 5)");
    check_reduce_axes(mx_reduce_ops[o], FALSE, DS_DTYPE_FLOAT64, "(3, 1, 4, 7)");
  }
  const char *ord1[] = {"ord", "1", "axis", "(0, 2)", NULL};
  check_reduce("norm", FALSE, DS_DTYPE_FLOAT32, "(30, 40, 50)", ord1);
  for (guint b = 0; b < G_N_ELEMENTS(big_reductions); b++) {
    const char *attrs[] = {"axis", big_reductions[b].axis, NULL};
    check_reduce("norm", FALSE, DS_DTYPE_FLOAT32, big_reductions[b].shape, attrs);
    check_reduce("nansum", FALSE, DS_DTYPE_FLOAT64, big_reductions[b].shape, attrs);
  }
  static const char *const nan_ops[] = {"nansum", "nanprod"};
  for (guint o = 0; o < G_N_ELEMENTS(nan_ops); o++)
    for (int axis = 0; axis < 2; axis++) {
      DsTensor x = input(DS_DTYPE_FLOAT32, "(37, 41)", VAL_ANY);
      for (int64_t i = 0; i < ds_tensor_numel(&x); i += 3)
        set(&x, i, NAN);
      DsTensor out = like(DS_DTYPE_FLOAT32, 1, &x.shape[1 - axis]);
      const char *attrs[] = {"axis", axis ? "1" : "0", NULL};
      g_autofree char *what = g_strdup_printf("%s with NaNs axis %d", nan_ops[o], axis);
      check(what, nan_ops[o], attrs, &x, 1, &out, 1, 1e-5, TRANS_RTOL);
      tensor_free(&x);
    }
}

/* ---- softmax, log_softmax ---- */

static const char *const softmax_ops[] = {"softmax", "log_softmax"};

static void test_softmax(void)
{
  if (!cuda_ready())
    return;
  /* Last and middle axes; rows a block takes (inner < 32) and rows a thread takes
   * (inner >= 32); length 1; empty; long rows; a temperature. */
  static const struct {
    const char *shape, *axis, *temperature;
  } cases[] = {
      {"(2, 3, 4)", "-1", "1"}, {"(2, 3, 4)", "1", "1"},   {"(2, 3, 4)", "0", "1"},
      {"(4, 1000)", "-1", "1"}, {"(2, 50, 40)", "1", "1"}, {"(3, 7, 5)", "1", "2.5"},
      {"(5, 1)", "-1", "1"},    {"(0, 4)", "-1", "1"},     {"(3, 100003)", "1", "1"},
      {"(8, 77)", "-1", "0.5"},
  };
  for (guint o = 0; o < G_N_ELEMENTS(softmax_ops); o++)
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
      DsTensor x = rtensor(cases[i].shape, -5, 5);
      /* Masked positions (attention): -inf, for softmax only (log_softmax gives -inf there,
       * which compare_backends cannot compare). A row of one masked element is NaN on both
       * sides. */
      for (int64_t k = 3; o == 0 && k < ds_tensor_numel(&x); k += 11)
        set(&x, k, -INFINITY);
      DsTensor out = like(DS_DTYPE_FLOAT32, x.ndim, x.shape);
      const char *attrs[] = {"axis", cases[i].axis, "temperature", cases[i].temperature, NULL};
      g_autofree char *what = g_strdup_printf("%s %s axis %s t %s", softmax_ops[o], cases[i].shape,
                                              cases[i].axis, cases[i].temperature);
      check(what, softmax_ops[o], attrs, &x, 1, &out, 1, TRANS_ATOL, TRANS_RTOL);
      tensor_free(&x);
    }
}

/* softmin (softmax of -x, on the device through the same kernels with the sign flipped) and
 * SoftmaxActivation (softmax over the last axis, or axis 1 with mode=channel). */
static void test_softmin_softmax_activation(void)
{
  if (!cuda_ready())
    return;
  static const struct {
    const char *op, *shape, *key, *value;
  } cases[] = {
      {"softmin", "(2, 3, 4)", "axis", "-1"},
      {"softmin", "(2, 50, 40)", "axis", "1"},
      {"softmin", "(4, 1000)", "temperature", "0.5"},
      {"softmin", "(0, 4)", "axis", "-1"},
      {"SoftmaxActivation", "(8, 77)", "mode", "instance"},
      {"SoftmaxActivation", "(2, 3, 4, 5)", "mode", "instance"},
      {"SoftmaxActivation", "(2, 3, 4, 5)", "mode", "channel"},
      {"SoftmaxActivation", "(2, 7, 64)", "mode", "channel"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsTensor x = rtensor(cases[i].shape, -5, 5);
    DsTensor out = like(DS_DTYPE_FLOAT32, x.ndim, x.shape);
    const char *attrs[] = {cases[i].key, cases[i].value, NULL};
    g_autofree char *what =
        g_strdup_printf("%s %s %s=%s", cases[i].op, cases[i].shape, cases[i].key, cases[i].value);
    check(what, cases[i].op, attrs, &x, 1, &out, 1, TRANS_ATOL, TRANS_RTOL);
    tensor_free(&x);
  }
}

/* ---- LayerNorm, BatchNorm, InstanceNorm ---- */

static const char *const norm_ops[] = {"LayerNorm", "BatchNorm", "InstanceNorm"};

static void test_layer_norm(void)
{
  if (!cuda_ready())
    return;
  static const struct {
    const char *shape, *axis;
  } cases[] = {
      {"(4, 10)", "-1"},   {"(2, 3, 40)", "1"}, {"(2, 5, 3)", "1"},
      {"(3, 1000)", "-1"}, {"(2, 3, 4)", "0"},  {"(0, 6)", "-1"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(DsGraph) g = ds_graph_new();
    const char *attrs[] = {"axis", cases[i].axis, "eps", "1e-5", "output_mean_var", "True", NULL};
    const DsLayerNormParam *p = parse_op(g, norm_ops[0], attrs)->param;
    DsTensor x = rtensor(cases[i].shape, 1, 5); /* a mean away from 0 */
    int axis = p->axis < 0 ? p->axis + x.ndim : p->axis;
    char len[32];
    g_snprintf(len, sizeof len, "(%" G_GINT64_FORMAT ",)", x.shape[axis]);
    DsTensor in[3] = {x, rtensor(len, 0.5, 1.5), rtensor(len, -1, 1)};
    DsTensor moments = like(DS_DTYPE_FLOAT32, x.ndim, x.shape);
    moments.shape[axis] = 1;
    DsTensor outs[3] = {like(DS_DTYPE_FLOAT32, x.ndim, x.shape), moments, moments};
    g_autofree char *what = g_strdup_printf("LayerNorm %s axis %s", cases[i].shape, cases[i].axis);
    check(what, norm_ops[0], attrs, in, 3, outs, 3, 1e-5, TRANS_RTOL);
    tensors_free(in, 3);
  }
}

static void test_batch_norm(void)
{
  if (!cuda_ready())
    return;
  static const struct {
    const char *shape, *axis;
  } cases[] = {
      {"(2, 3, 4, 5)", "1"}, {"(6, 8)", "1"}, {"(2, 3, 4)", "-1"}, {"(5, 3)", "0"}, {"(0, 4)", "1"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++)
    for (int fix = 0; fix < 2; fix++) {
      g_autoptr(DsGraph) g = ds_graph_new();
      const char *attrs[] = {"axis", cases[i].axis, "fix_gamma", fix ? "True" : "False", NULL};
      const DsBatchNormParam *p = parse_op(g, norm_ops[1], attrs)->param;
      DsTensor x = rtensor(cases[i].shape, -3, 3);
      int axis = p->axis < 0 ? p->axis + x.ndim : p->axis;
      char c[32];
      g_snprintf(c, sizeof c, "(%" G_GINT64_FORMAT ",)", x.shape[axis]);
      DsTensor in[5] = {x, rtensor(c, 0.5, 1.5), rtensor(c, -1, 1), rtensor(c, -1, 1),
                        rtensor(c, 0.5, 2)}; /* the variance is positive */
      DsTensor stats = like(DS_DTYPE_FLOAT32, 1, &x.shape[axis]);
      DsTensor outs[3] = {like(DS_DTYPE_FLOAT32, x.ndim, x.shape), stats, stats};
      g_autofree char *what =
          g_strdup_printf("BatchNorm %s axis %s fix_gamma %d", cases[i].shape, cases[i].axis, fix);
      check(what, norm_ops[1], attrs, in, 5, outs, 3, TRANS_ATOL, TRANS_RTOL);
      tensors_free(in, 5);
    }
}

static void test_instance_norm(void)
{
  if (!cuda_ready())
    return;
  static const char *const shapes[] = {"(2, 3, 5, 7)", "(1, 2, 1000)", "(2, 4, 2)", "(2, 3, 0)"};
  for (guint i = 0; i < G_N_ELEMENTS(shapes); i++) {
    DsTensor x = rtensor(shapes[i], -2, 4);
    char c[32];
    g_snprintf(c, sizeof c, "(%" G_GINT64_FORMAT ",)", x.shape[1]);
    DsTensor in[3] = {x, rtensor(c, 0.5, 1.5), rtensor(c, -1, 1)};
    DsTensor out = like(DS_DTYPE_FLOAT32, x.ndim, x.shape);
    const char *attrs[] = {"eps", "1e-3", NULL};
    g_autofree char *what = g_strdup_printf("InstanceNorm %s", shapes[i]);
    check(what, norm_ops[2], attrs, in, 3, &out, 1, 1e-5, TRANS_RTOL);
    tensors_free(in, 3);
  }
}

/* ---- no device needed ---- */

/* The two families' tables, as they register them (another family registered later could
 * replace an entry in the backend's own table). */
static DsKernel family_kernels[DS_OP_COUNT];
static DsCudaSupportsFn family_supports[DS_OP_COUNT];

static void family_tables_init(void)
{
  static gsize done;
  if (g_once_init_enter(&done)) {
    ds_cuda_elemwise_register(family_kernels, family_supports);
    ds_cuda_reduce_register(family_kernels, family_supports);
    g_once_init_leave(&done, 1);
  }
}

/* What the family's supports function says of op `id` with these dtypes. */
static gboolean family_says(DsOpId id, const void *param, const DsDType *in, int n_in,
                            const DsDType *out, int n_out)
{
  family_tables_init();
  g_assert_nonnull(family_kernels[id].run);
  g_assert_nonnull(family_supports[id]);
  return family_supports[id](id, param, in, n_in, out, n_out);
}

/* Ops whose test above names them one at a time rather than from a table. */
static const char *const single_ops[] = {"Activation", "LeakyReLU",  "Dropout",
                                         "where",      "_npi_where", "add_n",
                                         "_contrib_div_sqrt_dim", "softmin",
                                         "SoftmaxActivation"};

static void add_names(GHashTable *set, const char *const *names, guint n)
{
  for (guint i = 0; i < n; i++)
    g_hash_table_add(set, (gpointer)names[i]);
}

/* Every op the two families register has a case here, and every op named here has a
 * kernel (an op renamed or dropped would otherwise test nothing). */
static void test_coverage(void)
{
  g_autoptr(GHashTable) tested = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < G_N_ELEMENTS(unary_cases); i++)
    g_hash_table_add(tested, (gpointer)unary_cases[i].op);
  for (guint i = 0; i < G_N_ELEMENTS(scalar_cases); i++)
    g_hash_table_add(tested, (gpointer)scalar_cases[i].op);
  for (guint i = 0; i < G_N_ELEMENTS(binary_cases); i++)
    g_hash_table_add(tested, (gpointer)binary_cases[i].op);
  add_names(tested, copy_fill_ops, G_N_ELEMENTS(copy_fill_ops));
  add_names(tested, predicate_ops, G_N_ELEMENTS(predicate_ops));
  add_names(tested, np_compare_ops, G_N_ELEMENTS(np_compare_ops));
  add_names(tested, reduce_ops, G_N_ELEMENTS(reduce_ops));
  add_names(tested, np_reduce_ops, G_N_ELEMENTS(np_reduce_ops));
  add_names(tested, mx_reduce_ops, G_N_ELEMENTS(mx_reduce_ops));
  add_names(tested, softmax_ops, G_N_ELEMENTS(softmax_ops));
  add_names(tested, norm_ops, G_N_ELEMENTS(norm_ops));
  add_names(tested, single_ops, G_N_ELEMENTS(single_ops));

  family_tables_init();
  const DsKernel *table = family_kernels;
  const DsCudaSupportsFn *supports = family_supports;
  int registered = 0;
  for (int op = 0; op < DS_OP_COUNT; op++) {
    if (table[op].run == NULL)
      continue;
    registered++;
    const char *name = ds_op_id_name((DsOpId)op);
    if (!g_hash_table_contains(tested, name)) {
      g_test_message("%s has a CUDA kernel but no cross-backend case", name);
      g_test_fail();
    }
    if (supports[op] == NULL) {
      g_test_message("%s has a CUDA kernel but no supports function", name);
      g_test_fail();
    }
  }
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, tested);
  while (g_hash_table_iter_next(&it, &key, NULL)) {
    const DsOpDef *def = ds_op_lookup(key);
    if (def == NULL || table[def->id].run == NULL) {
      g_test_message("%s is tested here but has no kernel in these families", (char *)key);
      g_test_fail();
    } else {
      ds_test_cover("cuda", def->id);
    }
  }
  g_assert_cmpint(registered, ==, (int)g_hash_table_size(tested));
}

/* What supports() refuses, so that placement keeps those nodes on the CPU. */
static void test_supports(void)
{
  const DsDType f32[5] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT32,
                          DS_DTYPE_FLOAT32};
  const DsDType f64[3] = {DS_DTYPE_FLOAT64, DS_DTYPE_FLOAT64, DS_DTYPE_FLOAT64};
  const DsDType i32[3] = {DS_DTYPE_INT32, DS_DTYPE_INT32, DS_DTYPE_INT32};
  const DsDType f16[2] = {DS_DTYPE_FLOAT16, DS_DTYPE_FLOAT16};
  const DsDType boolean[1] = {DS_DTYPE_BOOL};

  /* Unary math: float32 only. */
  g_assert_true(family_says(DS_OP_EXP, NULL, f32, 1, f32, 1));
  g_assert_false(family_says(DS_OP_EXP, NULL, f64, 1, f64, 1));
  g_assert_false(family_says(DS_OP_RELU, NULL, i32, 1, i32, 1));
  /* Integer arithmetic: no division or power; comparisons yes. */
  g_assert_true(family_says(DS_OP_BROADCAST_ADD, NULL, i32, 2, i32, 1));
  g_assert_false(family_says(DS_OP_BROADCAST_DIV, NULL, i32, 2, i32, 1));
  g_assert_false(family_says(DS_OP_BROADCAST_POWER, NULL, i32, 2, i32, 1));
  g_assert_true(family_says(DS_OP_BROADCAST_LESSER, NULL, i32, 2, i32, 1));
  g_assert_true(family_says(DS_OP_NP_LESS, NULL, i32, 2, boolean, 1));
  /* Mixed operand dtypes (broadcast_power's float base, integer exponent) stay on the CPU. */
  const DsDType mixed[2] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT64};
  g_assert_false(family_says(DS_OP_BROADCAST_POWER, NULL, mixed, 2, f32, 1));
  /* Scalar ops on integers (NumPy's mixed-type rules) stay on the CPU. */
  g_assert_false(family_says(DS_OP_PLUS_SCALAR, NULL, i32, 1, i32, 1));
  g_assert_true(family_says(DS_OP_PLUS_SCALAR, NULL, f64, 1, f64, 1));
  /* float16 is moved, never computed. */
  g_assert_true(family_says(DS_OP_IDENTITY, NULL, f16, 1, f16, 1));
  g_assert_false(family_says(DS_OP_ONES_LIKE, NULL, f16, 1, f16, 1));
  g_assert_false(family_says(DS_OP_ISNAN, NULL, f16, 1, boolean, 1));

  g_autoptr(DsGraph) g = ds_graph_new();
  const char *length[] = {"axis", "-1", "use_length", "True", NULL};
  DsNode *sm = parse_op(g, "softmax", length);
  DsDType sm_in[2] = {DS_DTYPE_FLOAT32, DS_DTYPE_INT32};
  g_assert_false(family_says(DS_OP_SOFTMAX, sm->param, sm_in, 2, f32, 1));
  const char *always[] = {"p", "0.5", "mode", "always", NULL};
  DsNode *drop = parse_op(g, "Dropout", always);
  g_assert_false(family_says(DS_OP_DROPOUT, drop->param, f32, 1, f32, 2));
  const char *prelu[] = {"act_type", "prelu", NULL};
  DsNode *leaky = parse_op(g, "LeakyReLU", prelu);
  g_assert_true(family_says(DS_OP_LEAKY_RELU, leaky->param, f32, 2, f32, 1));
  g_assert_false(family_says(DS_OP_LEAKY_RELU, leaky->param, f64, 2, f64, 1));
  /* Reductions: float32 and float64; normalisations float32. */
  g_assert_true(family_says(DS_OP_SUM, NULL, f64, 1, f64, 1));
  g_assert_false(family_says(DS_OP_SUM, NULL, i32, 1, i32, 1));
  g_assert_false(family_says(DS_OP_LAYER_NORM, NULL, f64, 3, f64, 3));
  g_assert_true(family_says(DS_OP_BATCH_NORM, NULL, f32, 5, f32, 3));
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ds_test_ops_init(20250611);

  g_test_add_func("/cuda/elemwise/coverage", test_coverage);
  g_test_add_func("/cuda/elemwise/supports", test_supports);
  g_test_add_func("/cuda/elemwise/unary", test_unary);
  g_test_add_func("/cuda/elemwise/activation", test_activation);
  g_test_add_func("/cuda/elemwise/leaky-relu", test_leaky_relu);
  g_test_add_func("/cuda/elemwise/dropout", test_dropout);
  g_test_add_func("/cuda/elemwise/copy-fill", test_copy_fill);
  g_test_add_func("/cuda/elemwise/predicates", test_predicates);
  g_test_add_func("/cuda/elemwise/scalar", test_scalar);
  g_test_add_func("/cuda/elemwise/binary-float", test_binary_float);
  g_test_add_func("/cuda/elemwise/binary-int-bool", test_binary_int_bool);
  g_test_add_func("/cuda/elemwise/power-square", test_power_square);
  g_test_add_func("/cuda/elemwise/np-compare", test_np_compare);
  g_test_add_func("/cuda/elemwise/where", test_where);
  g_test_add_func("/cuda/elemwise/np-where", test_np_where);
  g_test_add_func("/cuda/elemwise/add-n", test_add_n);
  g_test_add_func("/cuda/reduce/axes", test_reduce);
  g_test_add_func("/cuda/reduce/mxnet", test_reduce_mxnet);
  g_test_add_func("/cuda/reduce/softmax", test_softmax);
  g_test_add_func("/cuda/reduce/softmin-softmax-activation", test_softmin_softmax_activation);
  g_test_add_func("/cuda/reduce/layer-norm", test_layer_norm);
  g_test_add_func("/cuda/reduce/batch-norm", test_batch_norm);
  g_test_add_func("/cuda/reduce/instance-norm", test_instance_norm);
  return g_test_run();
}
