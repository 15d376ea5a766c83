/* test-ops-linalg.c: _linalg_det: the shape rule (concrete, symbolic, the square check and its
 * errors), the dtype rule, and the CPU kernel against numpy.linalg.det (values computed with
 * NumPy and written here: a 2x2, a 3x3 whose zero pivot needs a row swap, a singular matrix,
 * batched (2, 3, 4, 4) in float32 and float64, n = 1, an empty batch and 0 x 0 matrices), the
 * hidden LU and pivot outputs as MXNet's getrf leaves them, and many matrices shared out on
 * the pool against a long double elimination. */
#include <math.h>

#include "ds-test-ops.h"

static DsNode *det_node(DsGraph *g)
{
  return node_new(g, "_linalg_det", NULL);
}

static void test_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = det_node(g);
  g_assert_true(ds_op_lookup("linalg_det") == n->op);
  g_assert_cmpint(n->op->num_outputs(n->param), ==, 3);
  g_assert_cmpint(n->op->num_visible_outputs(n->param), ==, 1);
  DsShape in[1], out[3];
  infer_ok(n, (const char *[]){"(2, 3, 4, 4)"}, in, out);
  assert_shape(&out[0], "(2, 3)");
  assert_shape(&out[1], "(2, 3, 4, 4)");
  assert_shape(&out[2], "(2, 3, 4)");
  /* One matrix: MXNet's legacy (1,), not a 0-dim result. */
  infer_ok(n, (const char *[]){"(5, 5)"}, in, out);
  assert_shape(&out[0], "(1,)");
  assert_shape(&out[2], "(5,)");
  infer_ok(n, (const char *[]){"(0, 3, 3)"}, in, out);
  assert_shape(&out[0], "(0,)");
  infer_ok(n, (const char *[]){"(2, 0, 0)"}, in, out);
  assert_shape(&out[0], "(2,)");
  assert_shape(&out[2], "(2, 0)");
  /* An unknown matrix dim is the other one. */
  infer_ok(n, (const char *[]){"(7, ?, 3)"}, in, out);
  assert_shape(&in[0], "(7, 3, 3)");
  assert_shape(&out[1], "(7, 3, 3)");
  assert_shape(&out[2], "(7, 3)");

  /* A known LU output gives an unknown A back. */
  DsShape bin[1] = {DS_SHAPE_UNKNOWN},
          bout[3] = {DS_SHAPE_UNKNOWN, shp("(4, 2, 2)"), DS_SHAPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(infer_err(n, bin, bout, &error));
  g_assert_no_error(error);
  assert_shape(&bin[0], "(4, 2, 2)");
  assert_shape(&bout[0], "(4,)");

  infer_fails(n, (const char *[]){"(2, 3, 4)"},
              "A (2, 3, 4) is not a stack of square matrices: its last two dims 3 and 4 differ");
  infer_fails(n, (const char *[]){"(6,)"}, "A (6,) is not a matrix");
  infer_fails(n, (const char *[]){"()"}, "is not a matrix");
  /* The output disagreeing with A. */
  DsShape xin[1] = {shp("(3, 2, 2)")}, xout[3] = {shp("(4,)"), DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN};
  g_assert_false(infer_err(n, xin, xout, &error));
  g_assert_nonnull(strstr(error->message, "output has shape (4,), but (3,) is expected"));
  g_clear_error(&error);
}

/* Symbolic: batch dims pass through; the two matrix dims are merged into one. */
static void test_shape_symbolic(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = det_node(g);
  DsExprCtx *exprs = ds_expr_ctx_new();
  DsShape in[1] = {sym_shp(exprs, "(s0, s1, s2, s2)")}, out[3];
  for (int i = 0; i < 3; i++)
    out[i] = DS_SHAPE_UNKNOWN;
  g_assert_cmpuint(infer_symbolic(n, exprs, in, out), ==, 0);
  assert_shape(&out[0], "(s0, s1)");
  assert_shape(&out[1], "(s0, s1, s2, s2)");
  assert_shape(&out[2], "(s0, s1, s2)");

  /* Two different symbols for rows and columns: the engine learns they are equal. */
  DsShape in2[1] = {sym_shp(exprs, "(s0, s3, s4)")}, out2[3];
  for (int i = 0; i < 3; i++)
    out2[i] = DS_SHAPE_UNKNOWN;
  g_assert_cmpuint(infer_symbolic(n, exprs, in2, out2), ==, 0);
  assert_shape(&out2[0], "(s0,)");
  g_autofree char *rows = ds_dim_to_string(out2[1].dims[1]);
  g_autofree char *cols = ds_dim_to_string(out2[1].dims[2]);
  g_autofree char *piv = ds_dim_to_string(out2[2].dims[1]);
  g_assert_cmpstr(rows, ==, cols);
  g_assert_cmpstr(piv, ==, rows);
  g_autofree char *a_rows = ds_dim_to_string(in2[0].dims[1]);
  g_autofree char *a_cols = ds_dim_to_string(in2[0].dims[2]);
  g_assert_cmpstr(a_rows, ==, a_cols);

  /* A symbol against a constant takes the constant's value. */
  DsShape in3[1] = {sym_shp(exprs, "(s5, 3)")}, out3[3];
  for (int i = 0; i < 3; i++)
    out3[i] = DS_SHAPE_UNKNOWN;
  g_assert_cmpuint(infer_symbolic(n, exprs, in3, out3), ==, 0);
  assert_shape(&out3[0], "(1,)");
  g_autofree char *r3 = ds_dim_to_string(out3[1].dims[0]);
  g_autofree char *c3 = ds_dim_to_string(out3[1].dims[1]);
  g_assert_cmpstr(r3, ==, c3);
  ds_expr_ctx_free(exprs);

  /* Symbolic batch dims with constant matrix dims that differ: still an error, on one line. */
  n = make_node(g, "_linalg_det", 1, NULL);
  Sym s = sym_new();
  DsShape in4[1] = {sym_shp(s.exprs, "(s0, 3, 4)")}, out4[3];
  for (int i = 0; i < 3; i++)
    out4[i] = DS_SHAPE_UNKNOWN;
  g_autofree char *msg = infer_in(s.ctx, n, in4, out4);
  g_assert_nonnull(msg);
  g_assert_nonnull(strstr(msg, "(_linalg_det): A (s0, 3, 4) is not a stack of square matrices"));
  g_assert_null(strchr(msg, '\n'));
  sym_free(&s);
}

static void test_type(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = det_node(g);
  GError *error = NULL;
  DsDType in[1] = {DS_DTYPE_FLOAT64},
          out[3] = {DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN};
  g_assert_true(n->op->infer_type(n, n->param, in, out, &error));
  g_assert_cmpint(out[0], ==, DS_DTYPE_FLOAT64);
  g_assert_cmpint(out[1], ==, DS_DTYPE_FLOAT64);
  g_assert_cmpint(out[2], ==, DS_DTYPE_INT32);
  /* Backwards from the result. */
  DsDType bin[1] = {DS_DTYPE_UNKNOWN},
          bout[3] = {DS_DTYPE_FLOAT32, DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN};
  g_assert_true(n->op->infer_type(n, n->param, bin, bout, &error));
  g_assert_cmpint(bin[0], ==, DS_DTYPE_FLOAT32);
  g_assert_cmpint(bout[1], ==, DS_DTYPE_FLOAT32);
  DsDType iin[1] = {DS_DTYPE_INT32},
          iout[3] = {DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN};
  g_assert_false(n->op->infer_type(n, n->param, iin, iout, &error));
  g_assert_nonnull(strstr(error->message, "float32 or float64"));
  g_clear_error(&error);
}

/* The three outputs of A's shape (concrete), zeroed. */
static void det_outputs(DsNode *n, DsTensor *a, DsTensor out[3])
{
  DsShape in[1] = {{.ndim = a->ndim}}, shapes[3];
  for (int d = 0; d < a->ndim; d++)
    in[0].dims[d] = ds_dim(a->shape[d]);
  for (int i = 0; i < 3; i++)
    shapes[i] = DS_SHAPE_UNKNOWN;
  g_assert_null(infer(n, in, shapes));
  const DsDType types[3] = {a->dtype, a->dtype, DS_DTYPE_INT32};
  for (int i = 0; i < 3; i++) {
    int64_t dims[DS_MAX_NDIM];
    g_assert_true(ds_shape_get_concrete(&shapes[i], dims));
    out[i] = tensor_dims(types[i], shapes[i].ndim, dims);
  }
}

/* Runs _linalg_det on `a` and checks its determinants against `want` within a relative `tol`
 * (and an absolute one for the zeros); `out` keeps the outputs for more checks. */
static void check_det(DsTensor *a, const double *want, double tol, DsTensor out[3])
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = det_node(g);
  det_outputs(n, a, out);
  run_ok(DS_OP_LINALG_DET, n->param, a, 1, out, 3);
  for (int64_t i = 0; i < ds_tensor_numel(&out[0]); i++) {
    const double got = get(&out[0], i);
    if (fabs(got - want[i]) > tol * MAX(fabs(want[i]), 1e-3))
      g_error("det %" G_GINT64_FORMAT ": got %.17g, numpy.linalg.det gives %.17g", i, got, want[i]);
  }
}

static DsTensor matrix(DsDType t, const char *shape, const double *values)
{
  DsTensor a = tensor_new(t, shape);
  for (int64_t i = 0; i < ds_tensor_numel(&a); i++)
    set(&a, i, values[i]);
  return a;
}

static void test_small(void)
{
  DsTensor out[3];
  for (int f64 = 0; f64 < 2; f64++) {
    const DsDType t = f64 ? DS_DTYPE_FLOAT64 : DS_DTYPE_FLOAT32;
    /* MXNet's own example. The factored matrix is A^T, whose first column (A's first row) has
     * its largest value below the diagonal: LU [[4, 3], [0.25, 1.25]] read column-major. */
    DsTensor a = matrix(t, "(2, 2)", (const double[]){1, 4, 2, 3});
    check_det(&a, (const double[]){-5.000000000000001}, 1e-7, out);
    g_assert_cmpint(out[0].ndim, ==, 1);
    g_assert_cmpint(out[0].shape[0], ==, 1);
    const double lu[] = {4, 0.25, 3, 1.25};
    for (int i = 0; i < 4; i++)
      g_assert_cmpfloat(get(&out[1], i), ==, lu[i]);
    g_assert_cmpint(((int32_t *)out[2].data)[0], ==, 2);
    g_assert_cmpint(((int32_t *)out[2].data)[1], ==, 2);
    tensors_free(out, 3);
    tensor_free(&a);

    /* A zero on the diagonal: both steps swap rows. */
    a = matrix(t, "(3, 3)", (const double[]){0, 2, 1, 1, 0, 3, 2, 1, 0});
    check_det(&a, (const double[]){13.0}, 1e-7, out);
    const int32_t piv[] = {2, 3, 3};
    for (int i = 0; i < 3; i++)
      g_assert_cmpint(((int32_t *)out[2].data)[i], ==, piv[i]);
    const double lu3[] = {2, 0.5, 0, 0, 3, 1.0 / 3, 1, -0.5, 13.0 / 6};
    for (int i = 0; i < 9; i++)
      g_assert_cmpfloat(fabs(get(&out[1], i) - lu3[i]), <, 1e-7);
    tensors_free(out, 3);
    tensor_free(&a);

    /* Singular, with every step of the elimination exact (multipliers are powers of two), so
     * the second column is zero from the diagonal down: exactly 0, as numpy.linalg.det gives. */
    a = matrix(t, "(3, 3)", (const double[]){1, 2, 4, 2, 4, 8, 4, 1, 3});
    check_det(&a, (const double[]){0.0}, 0, out);
    tensors_free(out, 3);
    tensor_free(&a);
    /* Singular with inexact multipliers (1/3, 2/3): 0 up to rounding, however the products
     * are fused. */
    a = matrix(t, "(3, 3)", (const double[]){1, 2, 3, 4, 5, 6, 7, 8, 9});
    check_det(&a, (const double[]){0.0}, 1e-11, out);
    tensors_free(out, 3);
    tensor_free(&a);

    /* n = 1: the values themselves, pivots 1. */
    a = matrix(t, "(5, 1, 1)", (const double[]){-1.375, -0.5, 0.375, 1.25, -0.75});
    check_det(&a, (const double[]){-1.375, -0.5, 0.375, 1.25, -0.75}, 0, out);
    for (int i = 0; i < 5; i++)
      g_assert_cmpint(((int32_t *)out[2].data)[i], ==, 1);
    tensors_free(out, 3);
    tensor_free(&a);

    /* 0 x 0 matrices have determinant 1; an empty batch has none. */
    a = tensor_new(t, "(2, 0, 0)");
    check_det(&a, (const double[]){1.0, 1.0}, 0, out);
    tensors_free(out, 3);
    tensor_free(&a);
    a = tensor_new(t, "(0, 3, 3)");
    check_det(&a, NULL, 0, out);
    g_assert_cmpint(ds_tensor_numel(&out[0]), ==, 0);
    tensors_free(out, 3);
    tensor_free(&a);
  }
}

/* Element i of the batched cases: small multiples of 1/8, exact in float32. */
static double fill_value(int64_t i)
{
  return (double)((i * i * 7 + 3 * i) % 23 - 11) / 8.0;
}

static void test_batched(void)
{
  /* numpy.linalg.det of the float64 arrays. */
  static const double want4[] = {-1.8193359375,       2.4033203125,       3.661132812499999,
                                 -1.0107421875000002, 3.7902832031250004, 0.8535156249999996};
  static const double want5[] = {-5.90863037109375, -0.9686279296875001, -2.4700012207031254};
  DsTensor out[3];
  for (int f64 = 0; f64 < 2; f64++) {
    const DsDType t = f64 ? DS_DTYPE_FLOAT64 : DS_DTYPE_FLOAT32;
    DsTensor a = tensor_new(t, "(2, 3, 4, 4)");
    for (int64_t i = 0; i < ds_tensor_numel(&a); i++)
      set(&a, i, fill_value(i));
    check_det(&a, want4, f64 ? 1e-12 : 1e-6, out);
    g_assert_cmpint(out[0].ndim, ==, 2);
    tensors_free(out, 3);
    tensor_free(&a);
  }
  DsTensor b = tensor_new(DS_DTYPE_FLOAT64, "(3, 5, 5)");
  for (int64_t i = 0; i < ds_tensor_numel(&b); i++)
    set(&b, i, fill_value(i));
  check_det(&b, want5, 1e-12, out);
  tensors_free(out, 3);
  tensor_free(&b);
}

/* det(A) by elimination with row pivoting on A itself, in long double. */
static double reference_det(const DsTensor *a, int64_t m, int64_t n)
{
  g_autofree long double *w = g_new(long double, n *n);
  for (int64_t i = 0; i < n * n; i++)
    w[i] = get(a, m * n * n + i);
  long double det = 1;
  for (int64_t k = 0; k < n; k++) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; i++)
      if (fabsl(w[i * n + k]) > fabsl(w[p * n + k]))
        p = i;
    if (p != k) {
      det = -det;
      for (int64_t j = 0; j < n; j++) {
        long double t = w[k * n + j];
        w[k * n + j] = w[p * n + j], w[p * n + j] = t;
      }
    }
    det *= w[k * n + k];
    if (w[k * n + k] == 0)
      return 0;
    for (int64_t i = k + 1; i < n; i++) {
      const long double f = w[i * n + k] / w[k * n + k];
      for (int64_t j = k; j < n; j++)
        w[i * n + j] -= f * w[k * n + j];
    }
  }
  return (double)det;
}

/* Enough matrices to share out on the pool; the hidden outputs rebuild A^T: L U with the row
 * swaps undone in reverse order. */
static void test_many(void)
{
  const int64_t count = 200, n = 12;
  for (int f64 = 0; f64 < 2; f64++) {
    DsTensor a = tensor_new(f64 ? DS_DTYPE_FLOAT64 : DS_DTYPE_FLOAT32, "(200, 12, 12)");
    fill_random(&a, -1, 1);
    g_autofree double *want = dalloc(count);
    for (int64_t m = 0; m < count; m++)
      want[m] = reference_det(&a, m, n);
    DsTensor out[3];
    check_det(&a, want, f64 ? 1e-10 : 1e-6, out);
    g_autofree double *b = dalloc(n * n);
    for (int64_t m = 0; m < count; m++) {
      const int64_t base = m * n * n;
      /* (L U)(i, j) with B(i, j) at [j * n + i]. */
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < n; j++) {
          double s = 0;
          for (int64_t k = 0; k <= MIN(i, j); k++) {
            const double l = k == i ? 1.0 : get(&out[1], base + k * n + i);
            s += l * get(&out[1], base + j * n + k);
          }
          b[j * n + i] = s;
        }
      const int32_t *piv = (const int32_t *)out[2].data + m * n;
      for (int64_t k = n - 1; k >= 0; k--) {
        const int64_t p = piv[k] - 1;
        g_assert_cmpint(p, >=, k);
        g_assert_cmpint(p, <, n);
        for (int64_t j = 0; j < n; j++) {
          double t = b[j * n + k];
          b[j * n + k] = b[j * n + p], b[j * n + p] = t;
        }
      }
      for (int64_t i = 0; i < n * n; i++)
        g_assert_cmpfloat(fabs(b[i] - get(&a, base + i)), <, f64 ? 1e-12 : 1e-5);
    }
    tensors_free(out, 3);
    tensor_free(&a);
  }
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ds_test_ops_init(20261205);
  g_test_add_func("/ops/linalg/det/shape", test_shape);
  g_test_add_func("/ops/linalg/det/shape-symbolic", test_shape_symbolic);
  g_test_add_func("/ops/linalg/det/type", test_type);
  g_test_add_func("/ops/linalg/det/small", test_small);
  g_test_add_func("/ops/linalg/det/batched", test_batched);
  g_test_add_func("/ops/linalg/det/many", test_many);
  return g_test_run();
}
