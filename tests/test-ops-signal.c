/* test-ops-signal.c: _contrib_dft: attributes, shape and dtype rules (concrete and symbolic),
 * and the kernel against the transform's definition summed in long double: radix-2 and
 * Bluestein lengths, real data (as a half-length transform) and complex data, inverse, one-sided,
 * cut and zero-padded lines, every axis, float32 and float64, single-threaded and on the pool. */
#include <math.h>

#include "ds-test-ops.h"

static void test_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[1], out[1];
  DsNode *n = node_new(g, "_contrib_dft", "axis", "1", NULL);
  infer_ok(n, (const char *[]){"(3, 10, 4, 1)"}, in, out);
  assert_shape(&out[0], "(3, 10, 4, 2)");
  DsNode *half = node_new(g, "_contrib_dft", "axis", "-2", "onesided", "True", NULL);
  infer_ok(half, (const char *[]){"(3, 10, 1)"}, in, out);
  assert_shape(&out[0], "(3, 6, 2)");
  DsNode *cut = node_new(g, "_contrib_dft", "axis", "0", "length", "7", "onesided", "1", NULL);
  infer_ok(cut, (const char *[]){"(16, 1)"}, in, out);
  assert_shape(&out[0], "(4, 2)");

  infer_fails(n, (const char *[]){"(4, 10, 3)"}, "must end in an axis of 1 (real) or 2 (complex)");
  infer_fails(n, (const char *[]){"(10,)"}, "needs an axis to transform");
  infer_fails(n, (const char *[]){"(10, 2)"}, "axis 1 is not one of data (10, 2)'s axes before");
  infer_fails(half, (const char *[]){"(3, 10, 2)"}, "complex, but a one-sided transform");
  parse_fails(DS_ERROR_INVALID, "onesided", "_contrib_dft", "inverse", "1", "onesided", "1", NULL);
  parse_fails(DS_ERROR_INVALID, "length", "_contrib_dft", "length", "-4", NULL);

  /* Symbolic: the one-sided bins of a symbolic length. */
  DsExprCtx *exprs = ds_expr_ctx_new();
  DsShape sin[1] = {{.ndim = 3, .dims = {sym_dim(exprs, "s0"), sym_dim(exprs, "s1"), ds_dim(1)}}};
  DsShape sout[1] = {DS_SHAPE_UNKNOWN};
  g_assert_cmpuint(infer_symbolic(half, exprs, sin, sout), ==, 0);
  g_autofree char *text = ds_shape_to_string(&sout[0]);
  g_assert_nonnull(strstr(text, "s1//2"));
  g_assert_true(g_str_has_prefix(text, "(s0, "));
  g_assert_true(g_str_has_suffix(text, ", 2)"));
  ds_expr_ctx_free(exprs);

  GError *error = NULL;
  DsDType t_in[1] = {DS_DTYPE_FLOAT64}, t_out[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(n->op->infer_type(n, n->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT64);
  t_in[0] = DS_DTYPE_INT32;
  t_out[0] = DS_DTYPE_UNKNOWN;
  g_assert_false(n->op->infer_type(n, n->param, t_in, t_out, &error));
  g_assert_nonnull(strstr(error->message, "float32 or float64"));
  g_clear_error(&error);
}

/* The transform of `x` (dims, last 1 or 2) by its definition, in long double. */
static double *reference(const DsTensor *x, const DsDftParam *p, const DsTensor *y)
{
  const int last = x->ndim - 1, axis = p->axis < 0 ? p->axis + x->ndim : p->axis;
  const int64_t outer = ds_shape_span(x->shape, 0, axis);
  const int64_t inner = ds_shape_span(x->shape, axis + 1, last);
  const int64_t in_len = x->shape[axis], parts = x->shape[last];
  const int64_t n = p->length > 0 ? p->length : in_len, bins = y->shape[axis];
  double *want = dalloc(ds_tensor_numel(y));
  const long double sign = p->inverse ? 1.0L : -1.0L;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++)
      for (int64_t k = 0; k < bins; k++) {
        long double re = 0, im = 0;
        for (int64_t j = 0; j < MIN(n, in_len); j++) {
          const int64_t e = ((o * in_len + j) * inner + i) * parts;
          const long double xr = get(x, e), xi = parts == 2 ? get(x, e + 1) : 0;
          const long double a = sign * 2 * acosl(-1) * (long double)((j * k) % n) / n;
          re += xr * cosl(a) - xi * sinl(a);
          im += xr * sinl(a) + xi * cosl(a);
        }
        const int64_t e = ((o * bins + k) * inner + i) * 2;
        want[e] = (double)(p->inverse ? re / n : re);
        want[e + 1] = (double)(p->inverse ? im / n : im);
      }
  return want;
}

typedef struct {
  const char *shape;
  const char *axis, *length, *inverse, *onesided;
} Case;

static void check_case(const Case *c, DsDType dtype)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "_contrib_dft", "axis", c->axis, "length", c->length, "inverse",
                       c->inverse, "onesided", c->onesided, NULL);
  DsShape in[1], out[1];
  infer_ok(n, (const char *[]){c->shape}, in, out);
  int64_t xd[DS_MAX_NDIM], yd[DS_MAX_NDIM];
  g_assert_true(ds_shape_get_concrete(&in[0], xd));
  g_assert_true(ds_shape_get_concrete(&out[0], yd));
  DsTensor x = tensor_dims(dtype, in[0].ndim, xd), y = tensor_dims(dtype, out[0].ndim, yd);
  fill_random(&x, -1, 1);
  run_ok(DS_OP_DFT, n->param, &x, 1, &y, 1);
  g_autofree double *want = reference(&x, n->param, &y);
  const int64_t count = ds_tensor_numel(&y);
  g_autofree float *got = g_new(float, count);
  for (int64_t i = 0; i < count; i++)
    got[i] = (float)get(&y, i);
  g_autofree char *what =
      g_strdup_printf("dft %s axis %s length %s inverse %s onesided %s %s", c->shape, c->axis,
                      c->length, c->inverse, c->onesided, ds_dtype_name(dtype));
  /* Float32 output rounds sums of up to a few hundred terms of size 1. */
  g_assert_true(close_to(got, want, count, dtype == DS_DTYPE_FLOAT32 ? 2e-5 : 1e-6, 1e-6, what));
  if (dtype == DS_DTYPE_FLOAT64)
    for (int64_t i = 0; i < count; i++)
      g_assert_cmpfloat(fabs(get(&y, i) - want[i]), <, 1e-11);
  tensor_free(&x);
  tensor_free(&y);
}

static void test_kernel(void)
{
  static const Case cases[] = {
      {"(2, 16, 1)", "1", "0", "0", "0"},    /* radix 2, real */
      {"(2, 10, 2)", "1", "0", "0", "0"},    /* direct, complex */
      {"(3, 64, 5, 2)", "1", "0", "1", "0"}, /* inverse, lines with an inner stride */
      {"(4, 3, 12, 1)", "2", "0", "0", "1"}, /* one-sided, even length */
      {"(4, 3, 9, 1)", "-2", "0", "0", "1"}, /* one-sided, odd length */
      {"(2, 20, 1)", "1", "8", "0", "0"},    /* cut to 8 */
      {"(2, 5, 2)", "1", "12", "1", "0"},    /* zero-padded to 12, inverse */
      {"(7, 3, 1)", "0", "0", "0", "0"},     /* the first axis */
      {"(1, 400, 1)", "1", "0", "0", "1"},   /* an audio frame: 201 bins, Bluestein */
      {"(96, 256, 1)", "1", "0", "0", "1"},  /* enough lines to share out */
      {"(2, 1, 1)", "1", "0", "0", "0"},     /* length 1 */
      {"(3, 2, 1)", "1", "0", "0", "0"},     /* length 2: its half is 1 */
      {"(2, 5, 1)", "1", "6", "0", "1"},     /* real, zero-padded to 6, one-sided */
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    check_case(&cases[i], DS_DTYPE_FLOAT32);
    check_case(&cases[i], DS_DTYPE_FLOAT64);
  }
}

/* ifft(fft(x)) is x; a pure tone lands in one bin. */
static void test_identities(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *fwd = node_new(g, "_contrib_dft", "axis", "1", NULL);
  DsNode *inv = node_new(g, "_contrib_dft", "axis", "1", "inverse", "1", NULL);
  DsTensor x = tensor_new(DS_DTYPE_FLOAT64, "(1, 24, 1)");
  for (int j = 0; j < 24; j++)
    set(&x, j, cos(2 * G_PI * 5 * j / 24.0));
  DsTensor f = tensor_new(DS_DTYPE_FLOAT64, "(1, 24, 2)");
  DsTensor back = tensor_new(DS_DTYPE_FLOAT64, "(1, 24, 2)");
  run_ok(DS_OP_DFT, fwd->param, &x, 1, &f, 1);
  for (int k = 0; k < 24; k++) {
    double want = k == 5 || k == 19 ? 12.0 : 0.0;
    g_assert_cmpfloat(fabs(get(&f, 2 * k) - want), <, 1e-12);
    g_assert_cmpfloat(fabs(get(&f, 2 * k + 1)), <, 1e-12);
  }
  run_ok(DS_OP_DFT, inv->param, &f, 1, &back, 1);
  for (int j = 0; j < 24; j++) {
    g_assert_cmpfloat(fabs(get(&back, 2 * j) - get(&x, j)), <, 1e-13);
    g_assert_cmpfloat(fabs(get(&back, 2 * j + 1)), <, 1e-13);
  }
  tensors_free((DsTensor[]){x, f, back}, 3);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ds_test_ops_init(20261128);
  g_test_add_func("/ops/signal/dft/shape", test_shape);
  g_test_add_func("/ops/signal/dft/kernel", test_kernel);
  g_test_add_func("/ops/signal/dft/identities", test_identities);
  return g_test_run();
}
