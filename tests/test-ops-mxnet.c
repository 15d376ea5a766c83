/* test-ops-mxnet.c: MXNet 1.x operators that symbol files use beyond the common layers: the
 * legacy argmax, argmin and argmax_channel, Pad, UpSampling (nearest and bilinear), one_hot,
 * pick, norm, L2Normalization, SequenceLast, SoftmaxActivation, softmin, prod, nansum and
 * nanprod, broadcast_hypot, _hypot and _hypot_scalar.
 *
 * Each op: its attributes (MXNet's defaults, one-line errors naming the node), its shape rule
 * (concrete, symbolic dims, negative axes, the errors) and its CPU kernel against the examples
 * of MXNet's documentation as literals and against references computed here in double, with
 * empty tensors where MXNet allows them. */
#include <math.h>
#include <string.h>

#include "ds-test-ops.h"

/* ---- helpers ---- */

/* A tensor of dtype t and shape text `shape` holding `v` (numel values). */
static DsTensor lit(DsDType t, const char *shape, const double *v)
{
  DsTensor x = tensor_new(t, shape);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
    set(&x, i, v[i]);
  return x;
}

/* Every element of `t` within tol of `want` (NaN matching NaN); the first miss fails. */
static void expect(const DsTensor *t, const double *want, double tol, const char *what)
{
  for (int64_t i = 0; i < ds_tensor_numel(t); i++) {
    double got = get(t, i);
    gboolean ok = isnan(want[i]) ? isnan(got) : fabs(got - want[i]) <= tol * (1 + fabs(want[i]));
    if (!ok)
      g_error("%s: element %" G_GINT64_FORMAT " is %.9g, want %.9g", what, i, got, want[i]);
  }
}

/* Runs node n's CPU kernel (single-threaded and on the pool) on `in` into `out`. */
static void run_node(DsNode *n, DsTensor *in, int n_in, DsTensor *out, int n_out)
{
  run_ok(n->op->id, n->param, in, n_in, out, n_out);
}

/* The node's shape rule under a symbolic context: the output printed. */
static char *symbolic_out(DsNode *n, const char *const *ins, int n_in)
{
  Sym s = sym_new();
  DsShape in[4], out[2] = {DS_SHAPE_UNKNOWN, DS_SHAPE_UNKNOWN};
  for (int i = 0; i < n_in; i++)
    in[i] = ins[i] != NULL ? sym_shp(s.exprs, ins[i]) : shp("?");
  g_autofree char *msg = infer_in(s.ctx, n, in, out);
  g_assert_null(msg);
  char *text = ds_shape_to_string(&out[0]);
  sym_free(&s);
  return text;
}

/* ---- argmax, argmin, argmax_channel ---- */

static void test_arg_reduce_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[1], out[1];
  static const struct {
    const char *op, *axis, *keepdims, *in, *out;
  } cases[] = {
      {"argmax", "1", "False", "(2, 3)", "(2,)"},
      {"argmax", "1", "True", "(2, 3)", "(2, 1)"},
      {"argmin", "0", "False", "(2, 3, 4)", "(3, 4)"},
      {"argmin", "-1", "False", "(2, 3, 4)", "(2, 3)"},
      {"argmax", NULL, "False", "(2, 3)", "(1,)"},
      {"argmax", NULL, "True", "(2, 3)", "(1, 1)"},
      {"argmax", "0", "False", "(5,)", "(1,)"},
      {"argmin", "-1", "True", "(5,)", "(1,)"},
      {"argmax", "0", "False", "(4, 0)", "(0,)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsNode *n =
        cases[i].axis != NULL
            ? node_new(g, cases[i].op, "axis", cases[i].axis, "keepdims", cases[i].keepdims, NULL)
            : node_new(g, cases[i].op, "keepdims", cases[i].keepdims, NULL);
    infer_ok(n, (const char *[]){cases[i].in}, in, out);
    assert_shape(&out[0], cases[i].out);
    /* The indices keep the data's dtype (MXNet's ElemwiseType). */
    g_assert_null(n->op->infer_type);
  }
  DsNode *ch = node_new(g, "argmax_channel", NULL);
  infer_ok(ch, (const char *[]){"(2, 3)"}, in, out);
  assert_shape(&out[0], "(2,)");
  infer_ok(ch, (const char *[]){"(4, 5, 6)"}, in, out);
  assert_shape(&out[0], "(4, 6)");
  g_autofree char *sym =
      symbolic_out(node_new(g, "argmin", "axis", "-2", NULL), (const char *[]){"(N, T, 8)"}, 1);
  g_assert_cmpstr(sym, ==, "(N, 8)");

  DsNode *n = node_new(g, "argmax", "axis", "2", NULL);
  infer_fails(n, (const char *[]){"(2, 3)"}, "axis");
  DsNode *e = node_new(g, "argmax", "axis", "1", NULL);
  infer_fails(e, (const char *[]){"(2, 0)"}, "empty axis 1");
  parse_fails(DS_ERROR_INVALID, "out of range", "argmin", "axis", "99", NULL);
  parse_fails(DS_ERROR_PARSE, "keepdims", "argmax", "keepdims", "maybe", NULL);
}

static void test_arg_reduce_kernel(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  /* MXNet's documented example. */
  static const double xv[] = {0, 1, 2, 3, 4, 5};
  DsTensor x = lit(DS_DTYPE_FLOAT32, "(2, 3)", xv);
  static const struct {
    const char *op, *axis, *keepdims, *out;
    double want[3];
  } cases[] = {
      {"argmax", "0", "False", "(3,)", {1, 1, 1}}, {"argmax", "1", "False", "(2,)", {2, 2}},
      {"argmax", "1", "True", "(2, 1)", {2, 2}},   {"argmin", "0", "False", "(3,)", {0, 0, 0}},
      {"argmin", "1", "False", "(2,)", {0, 0}},    {"argmin", "1", "True", "(2, 1)", {0, 0}},
      {"argmax", NULL, "False", "(1,)", {5}},      {"argmin", NULL, "True", "(1, 1)", {0}},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsNode *n = cases[i].axis != NULL
                    ? make_node(g, cases[i].op, 1, "axis", cases[i].axis, "keepdims",
                                cases[i].keepdims, NULL)
                    : make_node(g, cases[i].op, 1, "keepdims", cases[i].keepdims, NULL);
    DsTensor out = tensor_new(DS_DTYPE_FLOAT32, cases[i].out);
    run_node(n, &x, 1, &out, 1);
    expect(&out, cases[i].want, 0, cases[i].op);
    tensor_free(&out);
  }
  DsNode *ch = make_node(g, "argmax_channel", 1, NULL);
  DsTensor co = tensor_new(DS_DTYPE_FLOAT32, "(2,)");
  run_node(ch, &x, 1, &co, 1);
  expect(&co, (const double[]){2, 2}, 0, "argmax_channel");
  tensor_free(&co);
  /* Float indices must be the input's dtype: an int64 output is refused. */
  DsNode *am = make_node(g, "argmax", 1, "axis", "1", NULL);
  DsTensor bad = tensor_new(DS_DTYPE_INT64, "(2,)");
  g_assert_cmpint(run_kernel(am->op->id, am->param, &x, 1, &bad, 1), ==,
                  DS_STATUS_INVALID_ARGUMENT);
  tensor_free(&bad);
  tensor_free(&x);

  /* Ties go to the first index; int32 and float64 data give indices of their dtype; a long
   * axis and a middle axis against a reference scan. */
  static const double tv[] = {3, 7, 7, 1, 1, 0};
  DsTensor ti = lit(DS_DTYPE_INT32, "(2, 3)", tv);
  DsTensor to = tensor_new(DS_DTYPE_INT32, "(2,)");
  run_node(am, &ti, 1, &to, 1);
  expect(&to, (const double[]){1, 0}, 0, "argmax int32 ties");
  DsNode *amin = make_node(g, "argmin", 1, "axis", "1", NULL);
  run_node(amin, &ti, 1, &to, 1);
  expect(&to, (const double[]){0, 2}, 0, "argmin int32");
  tensors_free((DsTensor[]){ti, to}, 2);
  DsTensor big = tensor_new(DS_DTYPE_FLOAT64, "(3, 1000, 5)");
  fill_random(&big, -10, 10);
  DsNode *mid = make_node(g, "argmin", 1, "axis", "-2", NULL);
  DsTensor bo = tensor_new(DS_DTYPE_FLOAT64, "(3, 5)");
  run_node(mid, &big, 1, &bo, 1);
  double want[15];
  for (int o = 0; o < 3; o++)
    for (int i = 0; i < 5; i++) {
      int best = 0;
      for (int k = 1; k < 1000; k++)
        if (get(&big, (o * 1000 + k) * 5 + i) < get(&big, (o * 1000 + best) * 5 + i))
          best = k;
      want[o * 5 + i] = best;
    }
  expect(&bo, want, 0, "argmin float64 middle axis");
  tensors_free((DsTensor[]){big, bo}, 2);
  /* Empty: no outputs, nothing to search. */
  DsTensor ex = tensor_new(DS_DTYPE_FLOAT32, "(0, 3)"), eo = tensor_new(DS_DTYPE_FLOAT32, "(0,)");
  run_node(am, &ex, 1, &eo, 1);
  tensors_free((DsTensor[]){ex, eo}, 2);
}

/* ---- Pad ---- */

static void test_pad_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[1], out[1];
  DsNode *n = node_new(g, "Pad", "mode", "constant", "pad_width", "(0, 0, 0, 0, 1, 2, 3, 4)", NULL);
  infer_ok(n, (const char *[]){"(1, 2, 3, 4)"}, in, out);
  assert_shape(&out[0], "(1, 2, 6, 11)");
  DsNode *five =
      node_new(g, "pad", "mode", "edge", "pad_width", "(0, 0, 0, 0, 1, 1, 0, 0, 2, 2)", NULL);
  infer_ok(five, (const char *[]){"(2, 3, 4, 5, 6)"}, in, out);
  assert_shape(&out[0], "(2, 3, 6, 5, 10)");
  g_autofree char *sym = symbolic_out(n, (const char *[]){"(N, C, H, W)"}, 1);
  g_assert_cmpstr(sym, ==, "(N, C, H + 3, W + 7)");

  infer_fails(n, (const char *[]){"(1, 2, 3)"}, "rank 4");
  DsNode *refl =
      node_new(g, "Pad", "mode", "reflect", "pad_width", "(0, 0, 0, 0, 2, 2, 1, 1)", NULL);
  infer_ok(refl, (const char *[]){"(1, 1, 3, 2)"}, in, out);
  assert_shape(&out[0], "(1, 1, 7, 4)");
  infer_fails(refl, (const char *[]){"(1, 1, 2, 5)"}, "less than axis 2's size 2");
  parse_fails(DS_ERROR_INVALID, "mode", "Pad", "pad_width", "(0, 0, 0, 0, 1, 1, 1, 1)", NULL);
  parse_fails(DS_ERROR_INVALID, "4-D and 5-D", "Pad", "mode", "constant", "pad_width",
              "(0, 0, 1, 1, 1, 1)", NULL);
  parse_fails(DS_ERROR_INVALID, "first two axes", "Pad", "mode", "constant", "pad_width",
              "(0, 1, 0, 0, 1, 1, 1, 1)", NULL);
  parse_fails(DS_ERROR_PARSE, "mode", "Pad", "mode", "wrap", "pad_width",
              "(0, 0, 0, 0, 1, 1, 1, 1)", NULL);
}

static void test_pad_kernel(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  static const double xv[] = {1, 2, 3, 4, 5, 6};
  DsTensor x = lit(DS_DTYPE_FLOAT32, "(1, 1, 2, 3)", xv);
  /* numpy.pad(x, ((0,0),(0,0),(1,1),(2,1)), mode) for each mode. */
  static const struct {
    const char *mode;
    double want[24];
  } cases[] = {
      {"constant", {2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 1,   2,   3,   2.5,
                    2.5, 2.5, 4,   5,   6,   2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5}},
      {"edge", {1, 1, 1, 2, 3, 3, 1, 1, 1, 2, 3, 3, 4, 4, 4, 5, 6, 6, 4, 4, 4, 5, 6, 6}},
      {"reflect", {6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5, 3, 2, 1, 2, 3, 2}},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsNode *n = make_node(g, "Pad", 1, "mode", cases[i].mode, "pad_width",
                          "(0, 0, 0, 0, 1, 1, 2, 1)", "constant_value", "2.5", NULL);
    DsTensor out = tensor_new(DS_DTYPE_FLOAT32, "(1, 1, 4, 6)");
    run_node(n, &x, 1, &out, 1);
    expect(&out, cases[i].want, 0, cases[i].mode);
    tensor_free(&out);
  }
  tensor_free(&x);
  /* An empty batch pads to an empty result. */
  DsNode *n = make_node(g, "Pad", 1, "mode", "edge", "pad_width", "(0, 0, 0, 0, 1, 1, 1, 1)", NULL);
  DsTensor e = tensor_new(DS_DTYPE_FLOAT32, "(0, 2, 3, 3)"),
           eo = tensor_new(DS_DTYPE_FLOAT32, "(0, 2, 5, 5)");
  run_node(n, &e, 1, &eo, 1);
  tensors_free((DsTensor[]){e, eo}, 2);
}

/* ---- UpSampling ---- */

static void test_upsampling_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[2], out[1];
  DsNode *one =
      node_new(g, "UpSampling", "scale", "2", "sample_type", "nearest", "num_args", "1", NULL);
  infer_ok(one, (const char *[]){"(1, 3, 4, 5)"}, in, out);
  assert_shape(&out[0], "(1, 3, 8, 10)");
  DsNode *cat =
      node_new(g, "UpSampling", "scale", "2", "sample_type", "nearest", "num_args", "2", NULL);
  infer_ok(cat, (const char *[]){"(2, 3, 4, 4)", "(2, 5, 2, 2)"}, in, out);
  assert_shape(&out[0], "(2, 8, 8, 8)");
  DsNode *sum = node_new(g, "UpSampling", "scale", "3", "sample_type", "nearest", "num_args", "2",
                         "multi_input_mode", "sum", NULL);
  infer_ok(sum, (const char *[]){"(2, 3, 2, 2)", "(2, 3, 1, 1)"}, in, out);
  assert_shape(&out[0], "(2, 3, 6, 6)");
  g_autofree char *sym = symbolic_out(one, (const char *[]){"(N, 3, H, W)"}, 1);
  g_assert_cmpstr(sym, ==, "(N, 3, 2*H, 2*W)");

  infer_fails(one, (const char *[]){"(1, 3, 4)"}, "must have 4 dims");
  infer_fails(cat, (const char *[]){"(2, 3, 4, 4)", "(2, 5, 3, 3)"}, "does not divide");
  infer_fails(cat, (const char *[]){"(2, 3, 4, 4)", "(2, 5, 2, 4)"}, "scaled by 4 in y but 2");
  infer_fails(sum, (const char *[]){"(2, 3, 2, 2)", "(2, 4, 1, 1)"}, "channels");

  DsNode *bil = node_new(g, "UpSampling", "scale", "2", "sample_type", "bilinear", "num_args", "2",
                         "num_filter", "3", NULL);
  infer_ok(bil, (const char *[]){"(1, 3, 5, 7)", "?"}, in, out);
  assert_shape(&out[0], "(1, 3, 10, 14)");
  assert_shape(&in[1], "(3, 1, 4, 4)");
  DsNode *bil3 = node_new(g, "UpSampling", "scale", "3", "sample_type", "bilinear", "num_args", "2",
                          "num_filter", "2", NULL);
  infer_ok(bil3, (const char *[]){"(1, 2, 2, 2)", "?"}, in, out);
  assert_shape(&in[1], "(2, 1, 5, 5)");
  infer_fails(bil, (const char *[]){"(1, 4, 5, 7)", "?"}, "num_filter=3");

  parse_fails(DS_ERROR_INVALID, "num_args", "UpSampling", "scale", "2", "sample_type", "bilinear",
              "num_args", "1", NULL);
  parse_fails(DS_ERROR_INVALID, "scale", "UpSampling", "scale", "0", "sample_type", "nearest",
              "num_args", "1", NULL);
  parse_fails(DS_ERROR_INVALID, "sample_type", "UpSampling", "scale", "2", "num_args", "1", NULL);
  parse_fails(DS_ERROR_PARSE, "sample_type", "UpSampling", "scale", "2", "sample_type", "cubic",
              "num_args", "1", NULL);
}

/* MXNet's bilinear filter ("bilinear" initializer) of size k: weight[y][x] = w(y) * w(x). */
static double bilinear_tap(int64_t k, int64_t i)
{
  double f = ceil(k / 2.0), c = (2 * f - 1 - fmod(f, 2)) / (2 * f);
  return 1 - fabs(i / f - c);
}

static void test_upsampling_kernel(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *one =
      make_node(g, "UpSampling", 1, "scale", "2", "sample_type", "nearest", "num_args", "1", NULL);
  DsTensor x = lit(DS_DTYPE_FLOAT32, "(1, 1, 2, 2)", (const double[]){1, 2, 3, 4});
  DsTensor y = tensor_new(DS_DTYPE_FLOAT32, "(1, 1, 4, 4)");
  run_node(one, &x, 1, &y, 1);
  static const double up[] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  expect(&y, up, 0, "nearest");
  tensor_free(&y);
  /* Two inputs: the second (1x1) is repeated 4x to the first's output size. */
  DsTensor two[2] = {x, lit(DS_DTYPE_FLOAT32, "(1, 1, 1, 1)", (const double[]){9})};
  DsNode *cat =
      make_node(g, "UpSampling", 2, "scale", "2", "sample_type", "nearest", "num_args", "2", NULL);
  DsTensor yc = tensor_new(DS_DTYPE_FLOAT32, "(1, 2, 4, 4)");
  run_node(cat, two, 2, &yc, 1);
  double want_cat[32];
  for (int i = 0; i < 16; i++)
    want_cat[i] = up[i], want_cat[16 + i] = 9;
  expect(&yc, want_cat, 0, "nearest concat");
  DsNode *sum = make_node(g, "UpSampling", 2, "scale", "2", "sample_type", "nearest", "num_args",
                          "2", "multi_input_mode", "sum", NULL);
  DsTensor ys = tensor_new(DS_DTYPE_FLOAT32, "(1, 1, 4, 4)");
  run_node(sum, two, 2, &ys, 1);
  double want_sum[16];
  for (int i = 0; i < 16; i++)
    want_sum[i] = up[i] + 9;
  expect(&ys, want_sum, 0, "nearest sum");
  tensors_free((DsTensor[]){yc, ys, two[1]}, 3);
  tensor_free(&x);

  /* bilinear, scale 2 (k 4, pad 1) with MXNet's bilinear filter [.25 .75 .75 .25]: a 1x2 image
   * [1 2] becomes rows .75 * [.75, 1.25, 1.75, 1.5]. */
  DsNode *bil = make_node(g, "UpSampling", 2, "scale", "2", "sample_type", "bilinear", "num_args",
                          "2", "num_filter", "1", NULL);
  DsTensor bin[2] = {lit(DS_DTYPE_FLOAT32, "(1, 1, 1, 2)", (const double[]){1, 2}),
                     tensor_new(DS_DTYPE_FLOAT32, "(1, 1, 4, 4)")};
  for (int ky = 0; ky < 4; ky++)
    for (int kx = 0; kx < 4; kx++)
      set(&bin[1], ky * 4 + kx, bilinear_tap(4, ky) * bilinear_tap(4, kx));
  DsTensor bo = tensor_new(DS_DTYPE_FLOAT32, "(1, 1, 2, 4)");
  run_node(bil, bin, 2, &bo, 1);
  static const double bil_want[] = {0.5625, 0.9375, 1.3125, 1.125, 0.5625, 0.9375, 1.3125, 1.125};
  expect(&bo, bil_want, 1e-6, "bilinear literal");
  tensors_free(bin, 2);
  tensor_free(&bo);

  /* bilinear at scales 2, 3 and 4 against the deconvolution written as a gather. */
  for (int64_t s = 2; s <= 4; s++) {
    int64_t k = 2 * s - s % 2, pad = (int64_t)ceil((s - 1) / 2.0), C = 2, H = 3, W = 4;
    char sc[8], shape_w[48], shape_o[48];
    g_snprintf(sc, sizeof sc, "%" G_GINT64_FORMAT, s);
    g_snprintf(shape_w, sizeof shape_w, "(2, 1, %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", k, k);
    g_snprintf(shape_o, sizeof shape_o, "(2, 2, %" G_GINT64_FORMAT ", %" G_GINT64_FORMAT ")", H * s,
               W * s);
    DsNode *n = make_node(g, "UpSampling", 2, "scale", sc, "sample_type", "bilinear", "num_args",
                          "2", "num_filter", "2", NULL);
    DsTensor in[2] = {rtensor("(2, 2, 3, 4)", -1, 1), rtensor(shape_w, 0, 1)};
    DsTensor out = tensor_new(DS_DTYPE_FLOAT32, shape_o);
    run_node(n, in, 2, &out, 1);
    double *want = dalloc(ds_tensor_numel(&out));
    for (int64_t b = 0; b < 2; b++)
      for (int64_t c = 0; c < C; c++)
        for (int64_t oy = 0; oy < H * s; oy++)
          for (int64_t ox = 0; ox < W * s; ox++) {
            double acc = 0;
            for (int64_t ky = 0; ky < k; ky++)
              for (int64_t kx = 0; kx < k; kx++) {
                int64_t ty = oy + pad - ky, tx = ox + pad - kx;
                if (ty < 0 || tx < 0 || ty % s || tx % s || ty / s >= H || tx / s >= W)
                  continue;
                acc += get(&in[0], ((b * C + c) * H + ty / s) * W + tx / s) *
                       get(&in[1], (c * k + ky) * k + kx);
              }
            want[((b * C + c) * H * s + oy) * W * s + ox] = acc;
          }
    expect(&out, want, 1e-5, "bilinear gather");
    g_free(want);
    tensors_free(in, 2);
    tensor_free(&out);
  }
}

/* ---- one_hot ---- */

static void test_one_hot(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[1], out[1];
  DsNode *n = node_new(g, "one_hot", "depth", "3", NULL);
  infer_ok(n, (const char *[]){"(4,)"}, in, out);
  assert_shape(&out[0], "(4, 3)");
  infer_ok(n, (const char *[]){"(3, 2)"}, in, out);
  assert_shape(&out[0], "(3, 2, 3)");
  infer_ok(n, (const char *[]){"(0,)"}, in, out);
  assert_shape(&out[0], "(0, 3)");
  g_autofree char *sym = symbolic_out(n, (const char *[]){"(N, T)"}, 1);
  g_assert_cmpstr(sym, ==, "(N, T, 3)");
  DsDType t_in[1] = {DS_DTYPE_INT64}, t_out[1] = {DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(n->op->infer_type(n, n->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT32);
  parse_fails(DS_ERROR_INVALID, "depth", "one_hot", NULL);
  parse_fails(DS_ERROR_INVALID, "depth", "one_hot", "depth", "-1", NULL);
  parse_fails(DS_ERROR_PARSE, "dtype", "one_hot", "depth", "2", "dtype", "float128", NULL);

  /* MXNet's examples: one_hot([1,0,2,0], 3); with on 8, off 1 and int32; a 2-D index. */
  DsNode *k = make_node(g, "one_hot", 1, "depth", "3", NULL);
  DsTensor idx = lit(DS_DTYPE_FLOAT32, "(4,)", (const double[]){1, 0, 2, 0});
  DsTensor o = tensor_new(DS_DTYPE_FLOAT32, "(4, 3)");
  run_node(k, &idx, 1, &o, 1);
  expect(&o, (const double[]){0, 1, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0}, 0, "one_hot");
  DsNode *k8 = make_node(g, "one_hot", 1, "depth", "3", "on_value", "8", "off_value", "1", "dtype",
                         "int32", NULL);
  DsTensor oi = tensor_new(DS_DTYPE_INT32, "(4, 3)");
  run_node(k8, &idx, 1, &oi, 1);
  expect(&oi, (const double[]){1, 8, 1, 8, 1, 1, 1, 1, 8, 8, 1, 1}, 0, "one_hot int32");
  tensors_free((DsTensor[]){idx, o, oi}, 3);
  DsTensor i2 = lit(DS_DTYPE_INT64, "(3, 2)", (const double[]){1, 0, 1, 0, 2, 0});
  DsTensor o2 = tensor_new(DS_DTYPE_FLOAT32, "(3, 2, 3)");
  run_node(k, &i2, 1, &o2, 1);
  expect(&o2, (const double[]){0, 1, 0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 1, 1, 0, 0}, 0,
         "one_hot 2-D");
  tensors_free((DsTensor[]){i2, o2}, 2);
  /* Out of range (and negative) indices give a row of off_value; 1.7 truncates to 1. */
  DsTensor ir = lit(DS_DTYPE_FLOAT64, "(4,)", (const double[]){-1, 3, 1.7, NAN});
  DsTensor orr = tensor_new(DS_DTYPE_FLOAT32, "(4, 3)");
  run_node(k, &ir, 1, &orr, 1);
  expect(&orr, (const double[]){0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}, 0, "one_hot range");
  tensors_free((DsTensor[]){ir, orr}, 2);
  DsTensor ie = tensor_new(DS_DTYPE_INT32, "(0,)"), oe = tensor_new(DS_DTYPE_FLOAT32, "(0, 3)");
  run_node(k, &ie, 1, &oe, 1);
  tensors_free((DsTensor[]){ie, oe}, 2);
}

/* ---- pick ---- */

static void test_pick(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[2], out[1];
  DsNode *n = node_new(g, "pick", "axis", "1", NULL);
  /* As in MXNet, an index of unknown rank stays unknown: its rank picks the rule. */
  infer_ok(n, (const char *[]){"(3, 2)", "?"}, in, out);
  assert_shape(&out[0], "(3,)");
  assert_shape(&in[1], "?");
  infer_ok(n, (const char *[]){"(3, 2)", "(?,)"}, in, out);
  assert_shape(&in[1], "(3,)");
  infer_ok(n, (const char *[]){"(3, 2)", "(?, ?)"}, in, out);
  assert_shape(&in[1], "(3, 1)");
  DsNode *kd = node_new(g, "pick", "axis", "0", "keepdims", "True", NULL);
  infer_ok(kd, (const char *[]){"(3, 2, 4)", "?"}, in, out);
  assert_shape(&out[0], "(1, 2, 4)");
  DsNode *dflt = node_new(g, "choose_element_0index", NULL);
  infer_ok(dflt, (const char *[]){"(5,)", "?"}, in, out);
  assert_shape(&out[0], "(1,)");
  g_autofree char *sym = symbolic_out(dflt, (const char *[]){"(N, V)", NULL}, 2);
  g_assert_cmpstr(sym, ==, "(N,)");
  infer_fails(n, (const char *[]){"(3, 2)", "(4,)"}, "index");
  DsNode *far = node_new(g, "pick", "axis", "-3", NULL);
  infer_fails(far, (const char *[]){"(3, 2)", "?"}, "axis");
  parse_fails(DS_ERROR_INVALID, "axis=None", "pick", "axis", "None", NULL);
  parse_fails(DS_ERROR_PARSE, "mode", "pick", "mode", "raise", NULL);

  /* MXNet's examples. */
  static const double xv[] = {1, 2, 3, 4, 5, 6};
  DsTensor x = lit(DS_DTYPE_FLOAT32, "(3, 2)", xv);
  static const struct {
    const char *axis, *mode, *keepdims, *ishape, *oshape;
    double index[3], want[3];
  } cases[] = {
      {"0", "clip", "False", "(2,)", "(2,)", {0, 1}, {1, 4}},
      {"1", "clip", "False", "(3,)", "(3,)", {0, 1, 0}, {1, 4, 5}},
      {"1", "wrap", "False", "(3,)", "(3,)", {2, -1, -2}, {1, 4, 5}},
      {"1", "clip", "True", "(3, 1)", "(3, 1)", {1, 0, 2}, {2, 3, 6}},
      {"-1", "clip", "False", "(3,)", "(3,)", {-4, 9, 1}, {1, 4, 6}},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    DsNode *p = make_node(g, "pick", 2, "axis", cases[i].axis, "mode", cases[i].mode, "keepdims",
                          cases[i].keepdims, NULL);
    DsTensor io[2] = {x, lit(DS_DTYPE_INT32, cases[i].ishape, cases[i].index)};
    DsTensor o = tensor_new(DS_DTYPE_FLOAT32, cases[i].oshape);
    run_node(p, io, 2, &o, 1);
    expect(&o, cases[i].want, 0, "pick");
    tensors_free((DsTensor[]){io[1], o}, 2);
  }
  tensor_free(&x);
  /* float indices, int64 data. */
  DsNode *p = make_node(g, "pick", 2, NULL);
  DsTensor pi[2] = {lit(DS_DTYPE_INT64, "(2, 3)", (const double[]){10, 11, 12, 13, 14, 15}),
                    lit(DS_DTYPE_FLOAT32, "(2,)", (const double[]){2, 0.9})};
  DsTensor po = tensor_new(DS_DTYPE_INT64, "(2,)");
  run_node(p, pi, 2, &po, 1);
  expect(&po, (const double[]){12, 13}, 0, "pick int64");
  tensors_free(pi, 2);
  tensor_free(&po);
}

/* ---- norm, prod, nansum, nanprod ---- */

static void test_reduce_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[1], out[1];
  static const char *const ops[] = {"prod", "nansum", "nanprod", "norm"};
  static const struct {
    const char *axis, *keepdims, *in, *out;
  } cases[] = {
      {NULL, "False", "(2, 3, 4)", "(1,)"},  {NULL, "True", "(2, 3, 4)", "(1, 1, 1)"},
      {"1", "False", "(2, 3, 4)", "(2, 4)"}, {"(0, -1)", "True", "(2, 3, 4)", "(1, 3, 1)"},
      {"()", "False", "(2, 3)", "(1,)"},     {"0", "False", "(0, 3)", "(3,)"},
  };
  for (guint k = 0; k < G_N_ELEMENTS(ops); k++)
    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
      DsNode *n = cases[i].axis != NULL ? node_new(g, ops[k], "axis", cases[i].axis, "keepdims",
                                                   cases[i].keepdims, NULL)
                                        : node_new(g, ops[k], "keepdims", cases[i].keepdims, NULL);
      infer_ok(n, (const char *[]){cases[i].in}, in, out);
      assert_shape(&out[0], cases[i].out);
    }
  DsNode *ex = node_new(g, "nansum", "axis", "1", "exclude", "True", NULL);
  infer_ok(ex, (const char *[]){"(2, 3, 4)"}, in, out);
  assert_shape(&out[0], "(3,)");
  g_autofree char *sym =
      symbolic_out(node_new(g, "norm", "axis", "-1", NULL), (const char *[]){"(B, T, 16)"}, 1);
  g_assert_cmpstr(sym, ==, "(B, T)");
  infer_fails(node_new(g, "prod", "axis", "(1, 1)", NULL), (const char *[]){"(2, 3)"},
              "duplicates");
  infer_fails(node_new(g, "norm", "axis", "3", NULL), (const char *[]){"(2, 3)"}, "axis");
  parse_fails(DS_ERROR_INVALID, "must be 1 or 2", "norm", "ord", "3", NULL);

  /* norm's out_dtype names the output's dtype; without it the data's passes through. */
  DsNode *od = node_new(g, "norm", "out_dtype", "float64", NULL);
  DsDType t_in[1] = {DS_DTYPE_FLOAT32}, t_out[1] = {DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(od->op->infer_type(od, od->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT64);
  DsNode *plain = node_new(g, "norm", NULL);
  t_out[0] = DS_DTYPE_UNKNOWN;
  g_assert_true(plain->op->infer_type(plain, plain->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT32);
}

static void test_reduce_kernel(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  /* norm's documented example. */
  static const double xv[] = {1, 2, 3, 4, 2, 2, 5, 6};
  DsTensor x = lit(DS_DTYPE_FLOAT32, "(2, 2, 2)", xv);
  DsTensor o = tensor_new(DS_DTYPE_FLOAT32, "(2, 2)");
  run_node(make_node(g, "norm", 1, "ord", "2", "axis", "1", NULL), &x, 1, &o, 1);
  expect(&o, (const double[]){3.1622777, 4.472136, 5.3851647, 6.3245554}, 1e-6, "norm ord 2");
  run_node(make_node(g, "norm", 1, "ord", "1", "axis", "1", NULL), &x, 1, &o, 1);
  expect(&o, (const double[]){4, 6, 7, 8}, 0, "norm ord 1");
  DsTensor all = tensor_new(DS_DTYPE_FLOAT32, "(1,)");
  run_node(make_node(g, "norm", 1, NULL), &x, 1, &all, 1);
  expect(&all, (const double[]){sqrt(99.0)}, 1e-6, "norm of everything");
  DsTensor all64 = tensor_new(DS_DTYPE_FLOAT64, "(1,)");
  run_node(make_node(g, "norm", 1, "out_dtype", "float64", NULL), &x, 1, &all64, 1);
  expect(&all64, (const double[]){sqrt(99.0)}, 1e-12, "norm into float64");
  /* prod over axis 0 and everything; exclude keeps the named axis. */
  DsTensor p = tensor_new(DS_DTYPE_FLOAT32, "(2, 2)");
  run_node(make_node(g, "prod", 1, "axis", "0", NULL), &x, 1, &p, 1);
  expect(&p, (const double[]){2, 4, 15, 24}, 0, "prod axis 0");
  run_node(make_node(g, "prod", 1, NULL), &x, 1, &all, 1);
  expect(&all, (const double[]){2880}, 0, "prod of everything");
  DsTensor pe = tensor_new(DS_DTYPE_FLOAT32, "(2,)");
  run_node(make_node(g, "prod", 1, "axis", "1", "exclude", "True", NULL), &x, 1, &pe, 1);
  expect(&pe, (const double[]){1 * 2 * 2 * 2, 3 * 4 * 5 * 6}, 0, "prod exclude");
  tensors_free((DsTensor[]){x, o, all, all64, p, pe}, 6);

  /* nansum and nanprod: a NaN counts as 0 (1); a row of NaNs gives 0 (1). */
  static const double nv[] = {1, NAN, 3, 4, 5, NAN, NAN, NAN, NAN};
  DsTensor nx = lit(DS_DTYPE_FLOAT32, "(3, 3)", nv);
  DsTensor no = tensor_new(DS_DTYPE_FLOAT32, "(3,)");
  run_node(make_node(g, "nansum", 1, "axis", "1", NULL), &nx, 1, &no, 1);
  expect(&no, (const double[]){4, 9, 0}, 0, "nansum");
  run_node(make_node(g, "nanprod", 1, "axis", "-1", NULL), &nx, 1, &no, 1);
  expect(&no, (const double[]){3, 20, 1}, 0, "nanprod");
  run_node(make_node(g, "prod", 1, "axis", "1", NULL), &nx, 1, &no, 1);
  expect(&no, (const double[]){NAN, NAN, NAN}, 0, "prod keeps NaN");
  tensors_free((DsTensor[]){nx, no}, 2);
  /* Integers: exact, and float64 data against a double reference over a long axis. */
  DsTensor ix = lit(DS_DTYPE_INT32, "(2, 3)", (const double[]){1, -2, 3, 4, 5, 6});
  DsTensor io = tensor_new(DS_DTYPE_INT32, "(2,)");
  run_node(make_node(g, "nanprod", 1, "axis", "1", NULL), &ix, 1, &io, 1);
  expect(&io, (const double[]){-6, 120}, 0, "nanprod int32");
  run_node(make_node(g, "nansum", 1, "axis", "1", NULL), &ix, 1, &io, 1);
  expect(&io, (const double[]){2, 15}, 0, "nansum int32");
  tensors_free((DsTensor[]){ix, io}, 2);
  DsTensor big = rtensor("(3, 5000)", -1, 1);
  DsTensor bo = tensor_new(DS_DTYPE_FLOAT32, "(3,)");
  run_node(make_node(g, "norm", 1, "axis", "1", NULL), &big, 1, &bo, 1);
  double want[3] = {0};
  for (int r = 0; r < 3; r++) {
    for (int k = 0; k < 5000; k++)
      want[r] += get(&big, r * 5000 + k) * get(&big, r * 5000 + k);
    want[r] = sqrt(want[r]);
  }
  expect(&bo, want, 1e-6, "norm long rows");
  tensors_free((DsTensor[]){big, bo}, 2);
  /* Empty: a sum of nothing is 0, a product 1. */
  DsTensor e = tensor_new(DS_DTYPE_FLOAT32, "(0, 3)"), eo = tensor_new(DS_DTYPE_FLOAT32, "(3,)");
  run_node(make_node(g, "nansum", 1, "axis", "0", NULL), &e, 1, &eo, 1);
  expect(&eo, (const double[]){0, 0, 0}, 0, "nansum of nothing");
  run_node(make_node(g, "prod", 1, "axis", "0", NULL), &e, 1, &eo, 1);
  expect(&eo, (const double[]){1, 1, 1}, 0, "prod of nothing");
  tensors_free((DsTensor[]){e, eo}, 2);
}

/* ---- L2Normalization ---- */

static void test_l2_normalization(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[1], out[2];
  static const struct {
    const char *mode, *in, *norm;
  } shapes[] = {
      {"instance", "(2, 3, 4)", "(2,)"},
      {"channel", "(2, 3, 4, 5)", "(2, 1, 4, 5)"},
      {"spatial", "(2, 3, 4, 5)", "(2, 3)"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(shapes); i++) {
    DsNode *n = node_new(g, "L2Normalization", "mode", shapes[i].mode, NULL);
    infer_ok(n, (const char *[]){shapes[i].in}, in, out);
    assert_shape(&out[0], shapes[i].in);
    assert_shape(&out[1], shapes[i].norm);
  }
  DsNode *dflt = node_new(g, "L2Normalization", NULL);
  g_assert_cmpint(dflt->op->num_visible_outputs(dflt->param), ==, 1);
  g_assert_cmpfloat(((const DsL2NormalizationParam *)dflt->param)->eps, ==, 1e-10f);
  g_autofree char *sym = symbolic_out(dflt, (const char *[]){"(N, D)"}, 1);
  g_assert_cmpstr(sym, ==, "(N, D)");
  infer_fails(node_new(g, "L2Normalization", "mode", "channel", NULL), (const char *[]){"(2, 3)"},
              "too few dims");
  parse_fails(DS_ERROR_PARSE, "mode", "L2Normalization", "mode", "batch", NULL);

  /* Each mode against the norm summed here in double. */
  static const struct {
    const char *mode;
    int64_t outer, len, inner;
  } modes[] = {{"instance", 2, 24, 1}, {"channel", 2, 3, 8}, {"spatial", 6, 8, 1}};
  for (guint m = 0; m < G_N_ELEMENTS(modes); m++) {
    DsNode *n = make_node(g, "L2Normalization", 1, "mode", modes[m].mode, "eps", "0.001", NULL);
    DsTensor x = rtensor("(2, 3, 2, 4)", -2, 2);
    DsTensor o[2] = {
        tensor_new(DS_DTYPE_FLOAT32, "(2, 3, 2, 4)"),
        tensor_new(DS_DTYPE_FLOAT32, m == 0 ? "(2,)" : (m == 1 ? "(2, 1, 2, 4)" : "(2, 3)"))};
    run_node(n, &x, 1, o, 2);
    double *want = dalloc(48), *norms = dalloc(16);
    for (int64_t a = 0; a < modes[m].outer; a++)
      for (int64_t i = 0; i < modes[m].inner; i++) {
        double ss = 0;
        for (int64_t k = 0; k < modes[m].len; k++) {
          double v = get(&x, (a * modes[m].len + k) * modes[m].inner + i);
          ss += v * v;
        }
        norms[a * modes[m].inner + i] = sqrt(ss + 0.001);
        for (int64_t k = 0; k < modes[m].len; k++) {
          int64_t at = (a * modes[m].len + k) * modes[m].inner + i;
          want[at] = get(&x, at) / sqrt(ss + 0.001);
        }
      }
    expect(&o[0], want, 1e-6, modes[m].mode);
    expect(&o[1], norms, 1e-6, "norms");
    g_free(want);
    g_free(norms);
    tensor_free(&x);
    tensors_free(o, 2);
  }
}

/* ---- SequenceLast ---- */

static void test_sequence_last(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[2], out[1];
  DsNode *n = node_new(g, "SequenceLast", NULL);
  infer_ok(n, (const char *[]){"(5, 2, 3)"}, in, out);
  assert_shape(&out[0], "(2, 3)");
  infer_ok(n, (const char *[]){"(5, 2)"}, in, out);
  assert_shape(&out[0], "(2,)");
  DsNode *len = node_new(g, "SequenceLast", "use_sequence_length", "True", "axis", "1", NULL);
  infer_ok(len, (const char *[]){"(4, 7, 3, 2)", "?"}, in, out);
  assert_shape(&out[0], "(4, 3, 2)");
  assert_shape(&in[1], "(4,)");
  DsNode *len0 = node_new(g, "SequenceLast", "use_sequence_length", "True", NULL);
  g_autofree char *sym = symbolic_out(len0, (const char *[]){"(T, B, 16)", NULL}, 2);
  g_assert_cmpstr(sym, ==, "(B, 16)");
  infer_fails(n, (const char *[]){"(5,)"}, "rank 2 or more");
  infer_fails(len, (const char *[]){"(4, 7, 3)", "(5,)"}, "sequence_length");
  parse_fails(DS_ERROR_INVALID, "0 or 1", "SequenceLast", "axis", "2", NULL);

  /* MXNet's example: x (3, 3, 2) time-major, values 1..18. */
  double xv[18];
  for (int i = 0; i < 18; i++)
    xv[i] = i + 1;
  DsTensor x = lit(DS_DTYPE_FLOAT32, "(3, 3, 2)", xv);
  DsTensor o = tensor_new(DS_DTYPE_FLOAT32, "(3, 2)");
  run_node(make_node(g, "SequenceLast", 1, NULL), &x, 1, &o, 1);
  expect(&o, (const double[]){13, 14, 15, 16, 17, 18}, 0, "SequenceLast");
  DsTensor xl[2] = {x, lit(DS_DTYPE_FLOAT32, "(3,)", (const double[]){1, 1, 1})};
  DsNode *k = make_node(g, "SequenceLast", 2, "use_sequence_length", "True", NULL);
  run_node(k, xl, 2, &o, 1);
  expect(&o, (const double[]){1, 2, 3, 4, 5, 6}, 0, "SequenceLast lengths 1");
  set(&xl[1], 0, 1), set(&xl[1], 1, 2), set(&xl[1], 2, 3);
  run_node(k, xl, 2, &o, 1);
  expect(&o, (const double[]){1, 2, 9, 10, 17, 18}, 0, "SequenceLast lengths 1 2 3");
  /* axis 1: the same data read batch-major, (batch 3, time 3, 2). */
  DsNode *k1 = make_node(g, "SequenceLast", 2, "use_sequence_length", "True", "axis", "1", NULL);
  run_node(k1, xl, 2, &o, 1);
  expect(&o, (const double[]){1, 2, 9, 10, 17, 18}, 0, "SequenceLast axis 1");
  set(&xl[1], 0, 3);
  run_node(k1, xl, 2, &o, 1);
  expect(&o, (const double[]){5, 6, 9, 10, 17, 18}, 0, "SequenceLast axis 1 full");
  /* A length outside [1, T] has no last step. */
  set(&xl[1], 1, 0);
  g_assert_cmpint(run_kernel(k->op->id, k->param, xl, 2, &o, 1), ==, DS_STATUS_INVALID_ARGUMENT);
  set(&xl[1], 1, 4);
  g_assert_cmpint(run_kernel(k->op->id, k->param, xl, 2, &o, 1), ==, DS_STATUS_INVALID_ARGUMENT);
  tensors_free(xl, 2);
  tensor_free(&o);
  /* An empty batch. */
  DsTensor e = tensor_new(DS_DTYPE_FLOAT32, "(4, 0, 3)"),
           eo = tensor_new(DS_DTYPE_FLOAT32, "(0, 3)");
  run_node(make_node(g, "SequenceLast", 1, NULL), &e, 1, &eo, 1);
  tensors_free((DsTensor[]){e, eo}, 2);
}

/* ---- softmin, SoftmaxActivation ---- */

/* softmax of sign * x / t along (outer, len, inner) rows, in double. */
static double *softmax_ref(const DsTensor *x, int64_t outer, int64_t len, int64_t inner,
                           double sign, double t)
{
  double *want = dalloc(ds_tensor_numel(x));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double m = -INFINITY, s = 0;
      for (int64_t k = 0; k < len; k++)
        m = fmax(m, sign * get(x, (o * len + k) * inner + i));
      for (int64_t k = 0; k < len; k++)
        s += exp((sign * get(x, (o * len + k) * inner + i) - m) / t);
      for (int64_t k = 0; k < len; k++) {
        int64_t at = (o * len + k) * inner + i;
        want[at] = exp((sign * get(x, at) - m) / t) / s;
      }
    }
  return want;
}

static void test_softmin(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[1], out[1];
  DsNode *n = node_new(g, "softmin", "axis", "0", NULL);
  infer_ok(n, (const char *[]){"(2, 3)"}, in, out);
  assert_shape(&out[0], "(2, 3)");
  g_autofree char *sym = symbolic_out(n, (const char *[]){"(N, 7)"}, 1);
  g_assert_cmpstr(sym, ==, "(N, 7)");
  infer_fails(node_new(g, "softmin", "axis", "-3", NULL), (const char *[]){"(2, 3)"}, "axis");
  parse_fails(DS_ERROR_INVALID, "use_length", "softmin", "use_length", "True", NULL);
  parse_fails(DS_ERROR_INVALID, "temperature", "softmin", "temperature", "0", NULL);
  DsNode *f64 = node_new(g, "softmin", "dtype", "float64", NULL);
  DsDType t_in[1] = {DS_DTYPE_FLOAT32}, t_out[1] = {DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(f64->op->infer_type(f64, f64->param, t_in, t_out, &error));
  g_assert_cmpint(t_out[0], ==, DS_DTYPE_FLOAT64);

  /* MXNet's example. */
  DsTensor x = lit(DS_DTYPE_FLOAT32, "(2, 3)", (const double[]){1, 2, 3, 3, 2, 1});
  DsTensor o = tensor_new(DS_DTYPE_FLOAT32, "(2, 3)");
  run_node(make_node(g, "softmin", 1, "axis", "0", NULL), &x, 1, &o, 1);
  expect(&o, (const double[]){0.88079703, 0.5, 0.11920292, 0.11920292, 0.5, 0.88079703}, 1e-6,
         "softmin axis 0");
  run_node(make_node(g, "softmin", 1, NULL), &x, 1, &o, 1);
  expect(&o,
         (const double[]){0.66524094, 0.24472848, 0.09003057, 0.09003057, 0.24472848, 0.66524094},
         1e-6, "softmin axis 1");
  tensors_free((DsTensor[]){x, o}, 2);
  /* Large values stay finite (the shift is the minimum); a temperature; middle axis. */
  DsTensor big = lit(DS_DTYPE_FLOAT32, "(1, 3)", (const double[]){1000, 1001, 3000});
  DsTensor bo = tensor_new(DS_DTYPE_FLOAT32, "(1, 3)");
  run_node(make_node(g, "softmin", 1, NULL), &big, 1, &bo, 1);
  g_autofree double *bw = softmax_ref(&big, 1, 3, 1, -1, 1);
  expect(&bo, bw, 1e-6, "softmin large");
  tensors_free((DsTensor[]){big, bo}, 2);
  DsTensor r = rtensor("(3, 5, 70)", -4, 4), ro = tensor_new(DS_DTYPE_FLOAT32, "(3, 5, 70)");
  run_node(make_node(g, "softmin", 1, "axis", "1", "temperature", "2.5", NULL), &r, 1, &ro, 1);
  g_autofree double *rw = softmax_ref(&r, 3, 5, 70, -1, 2.5);
  expect(&ro, rw, 1e-5, "softmin middle axis");
  tensors_free((DsTensor[]){r, ro}, 2);
}

static void test_softmax_activation(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[1], out[1];
  DsNode *inst = node_new(g, "SoftmaxActivation", NULL);
  infer_ok(inst, (const char *[]){"(4, 10)"}, in, out);
  assert_shape(&out[0], "(4, 10)");
  DsNode *ch = node_new(g, "SoftmaxActivation", "mode", "channel", NULL);
  infer_ok(ch, (const char *[]){"(2, 3, 4, 5)"}, in, out);
  assert_shape(&out[0], "(2, 3, 4, 5)");
  g_autofree char *sym = symbolic_out(ch, (const char *[]){"(N, C, H, W)"}, 1);
  g_assert_cmpstr(sym, ==, "(N, C, H, W)");
  infer_fails(ch, (const char *[]){"(2, 3)"}, "mode=channel needs data of rank 3");
  parse_fails(DS_ERROR_PARSE, "mode", "SoftmaxActivation", "mode", "spatial", NULL);

  /* instance: over the last axis (MXNet flattens to 2-D keeping it); channel: over axis 1. */
  DsTensor x = rtensor("(2, 3, 4)", -3, 3), o = tensor_new(DS_DTYPE_FLOAT32, "(2, 3, 4)");
  run_node(make_node(g, "SoftmaxActivation", 1, NULL), &x, 1, &o, 1);
  g_autofree double *wi = softmax_ref(&x, 6, 4, 1, 1, 1);
  expect(&o, wi, 1e-6, "SoftmaxActivation instance");
  run_node(make_node(g, "SoftmaxActivation", 1, "mode", "channel", NULL), &x, 1, &o, 1);
  g_autofree double *wc = softmax_ref(&x, 2, 3, 4, 1, 1);
  expect(&o, wc, 1e-6, "SoftmaxActivation channel");
  tensors_free((DsTensor[]){x, o}, 2);
  DsTensor e = tensor_new(DS_DTYPE_FLOAT32, "(0, 5)"), eo = tensor_new(DS_DTYPE_FLOAT32, "(0, 5)");
  run_node(make_node(g, "SoftmaxActivation", 1, NULL), &e, 1, &eo, 1);
  tensors_free((DsTensor[]){e, eo}, 2);
}

/* ---- broadcast_hypot, _hypot, _hypot_scalar ---- */

static void test_hypot(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[2], out[1];
  DsNode *b = node_new(g, "broadcast_hypot", NULL);
  infer_ok(b, (const char *[]){"(2, 3)", "(3,)"}, in, out);
  assert_shape(&out[0], "(2, 3)");
  DsNode *same = node_new(g, "_hypot", NULL);
  infer_ok(same, (const char *[]){"(2, 3)", "?"}, in, out);
  assert_shape(&out[0], "(2, 3)");
  assert_shape(&in[1], "(2, 3)");
  infer_fails(same, (const char *[]){"(2, 3)", "(3,)"}, "");
  DsNode *sc = node_new(g, "_hypot_scalar", "scalar", "4", NULL);
  infer_ok(sc, (const char *[]){"(5,)"}, in, out);
  assert_shape(&out[0], "(5,)");
  g_autofree char *sym = symbolic_out(b, (const char *[]){"(N, 1)", "(1, M)"}, 2);
  g_assert_cmpstr(sym, ==, "(N, M)");

  /* hypot(3, 4) = 5 and friends; integers truncate (hypot(1, 1) = 1); the scalar form. */
  DsTensor a = lit(DS_DTYPE_FLOAT32, "(2, 2)", (const double[]){3, 5, -6, 0});
  DsTensor c = lit(DS_DTYPE_FLOAT32, "(2,)", (const double[]){4, 12});
  DsTensor o = tensor_new(DS_DTYPE_FLOAT32, "(2, 2)");
  run_node(make_node(g, "broadcast_hypot", 2, NULL), (DsTensor[]){a, c}, 2, &o, 1);
  expect(&o, (const double[]){5, 13, sqrt(52.0), 12}, 1e-7, "broadcast_hypot");
  DsTensor a2 = lit(DS_DTYPE_FLOAT32, "(2, 2)", (const double[]){4, 12, 8, 1e30});
  run_node(make_node(g, "_hypot", 2, NULL), (DsTensor[]){a, a2}, 2, &o, 1);
  expect(&o, (const double[]){5, 13, 10, 1e30}, 1e-7, "_hypot (no overflow)");
  run_node(make_node(g, "_hypot_scalar", 1, "scalar", "4", NULL), &a, 1, &o, 1);
  expect(&o, (const double[]){5, sqrt(41.0), sqrt(52.0), 4}, 1e-7, "_hypot_scalar");
  DsTensor ia = lit(DS_DTYPE_INT32, "(3,)", (const double[]){3, 1, -5});
  DsTensor ib = lit(DS_DTYPE_INT32, "(3,)", (const double[]){4, 1, 12});
  DsTensor io = tensor_new(DS_DTYPE_INT32, "(3,)");
  run_node(make_node(g, "_hypot", 2, NULL), (DsTensor[]){ia, ib}, 2, &io, 1);
  expect(&io, (const double[]){5, 1, 13}, 0, "_hypot int32");
  tensors_free((DsTensor[]){a, c, o, a2, ia, ib, io}, 7);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ds_test_ops_init(20260517);
  g_test_add_func("/ops/mxnet/arg-reduce/shape", test_arg_reduce_shape);
  g_test_add_func("/ops/mxnet/arg-reduce/kernel", test_arg_reduce_kernel);
  g_test_add_func("/ops/mxnet/pad/shape", test_pad_shape);
  g_test_add_func("/ops/mxnet/pad/kernel", test_pad_kernel);
  g_test_add_func("/ops/mxnet/upsampling/shape", test_upsampling_shape);
  g_test_add_func("/ops/mxnet/upsampling/kernel", test_upsampling_kernel);
  g_test_add_func("/ops/mxnet/one-hot", test_one_hot);
  g_test_add_func("/ops/mxnet/pick", test_pick);
  g_test_add_func("/ops/mxnet/reduce/shape", test_reduce_shape);
  g_test_add_func("/ops/mxnet/reduce/kernel", test_reduce_kernel);
  g_test_add_func("/ops/mxnet/l2-normalization", test_l2_normalization);
  g_test_add_func("/ops/mxnet/sequence-last", test_sequence_last);
  g_test_add_func("/ops/mxnet/softmin", test_softmin);
  g_test_add_func("/ops/mxnet/softmax-activation", test_softmax_activation);
  g_test_add_func("/ops/mxnet/hypot", test_hypot);
  return g_test_run();
}
