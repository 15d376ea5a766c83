/* test-ops-nn.c: the neural-network op family: attribute parsing and defaults, shape and dtype
 * rules (backward-filled weights and states included), the attribute spellings of the real
 * models, and the CPU kernels (looked up through the backend's table) against independent
 * double-precision reference loops on random data. */
#include <cjson/cJSON.h>
#include <float.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ds-config.h"
#include "ds-cpu-gemm.h"
#include "ds-cpu.h"
#include "ds-error.h"
#include "ds-op.h"
#include "ds-test-ops.h"

/* ---- tensors, kernels, comparison ----------------------------------------------------- */

static const float *fp(const DsTensor *t)
{
  return t->data;
}

/* ---- registry, model attribute spellings -------------------------------------------------- */

static const char *const nn_ops[] = {"Convolution",
                                     "Pooling",
                                     "FullyConnected",
                                     "BatchNorm",
                                     "LayerNorm",
                                     "Activation",
                                     "LeakyReLU",
                                     "softmax",
                                     "log_softmax",
                                     "SoftmaxOutput",
                                     "Dropout",
                                     "Embedding",
                                     "dot",
                                     "batch_dot",
                                     "RNN",
                                     "_npi_matmul",
                                     "InstanceNorm",
                                     "LRN",
                                     "_contrib_hardmax",
                                     "_contrib_RecurrentLayer",
                                     "_npi_einsum",
                                     NULL};

static void test_registry(void)
{
  for (int i = 0; nn_ops[i] != NULL; i++) {
    const DsOpDef *op = ds_op_lookup(nn_ops[i]);
    g_assert_nonnull(op);
    g_assert_cmpstr(op->name, ==, nn_ops[i]);
    g_assert_true(ds_op_get(op->id) == op);
    g_assert_nonnull(ds_cpu_backend_get()->get_kernel(op->id));
    g_assert_nonnull(op->output_names);
  }
  g_assert_true(ds_op_lookup("Softmax") == ds_op_lookup("SoftmaxOutput"));
  g_assert_true(ds_op_lookup("_npx_convolution") == ds_op_lookup("Convolution"));
  g_assert_cmpuint(ds_op_lookup("BatchNorm")->aux_input_mask, ==, (1u << 3) | (1u << 4));
}

/* Every nn node of every shared model parses with its file's attribute spellings. */
static void test_model_attrs(void)
{
  const char *dir = g_getenv("DS_SHARED_DIR");
  g_autofree char *models =
      g_build_filename(dir != NULL ? dir : DS_SHARED_DIR, "models", "mxnet", NULL);
  g_autoptr(GDir) d = g_dir_open(models, 0, NULL);
  if (d == NULL) {
    g_test_skip("no shared models");
    return;
  }
  int parsed = 0;
  for (const char *name; (name = g_dir_read_name(d)) != NULL;) {
    if (!g_str_has_suffix(name, ".json"))
      continue;
    g_autofree char *path = g_build_filename(models, name, NULL);
    g_autofree char *text = NULL;
    gsize len;
    g_assert_true(g_file_get_contents(path, &text, &len, NULL));
    cJSON *root = cJSON_ParseWithLength(text, len);
    g_assert_nonnull(root);
    const cJSON *node_json;
    cJSON_ArrayForEach(node_json, cJSON_GetObjectItem(root, "nodes"))
    {
      const char *op = cJSON_GetStringValue(cJSON_GetObjectItem(node_json, "op"));
      if (op == NULL || !g_strv_contains(nn_ops, op))
        continue;
      g_autoptr(DsGraph) g = ds_graph_new();
      DsNode *n = ds_graph_add_node(g, "layer0", op);
      n->op = ds_op_lookup(op);
      const char *const keys[] = {"param", "attr", "attrs"};
      for (int k = 0; k < 3; k++) {
        const cJSON *attr;
        cJSON_ArrayForEach(attr, cJSON_GetObjectItem(node_json, keys[k]))
        {
          if (cJSON_IsString(attr))
            ds_node_add_attr(n, attr->string, attr->valuestring);
        }
      }
      n->param = g_malloc0(n->op->param_size);
      GError *error = NULL;
      if (!n->op->parse(n, n->param, &error)) {
        g_test_fail_printf("%s: %s", name, error->message);
        g_error_free(error);
      }
      /* The pre-NNVM format leaves BatchNorm's moving statistics out of the inputs (the
       * loader adds them back), so only NNVM files' input counts are checked. */
      int n_in = cJSON_GetArraySize(cJSON_GetObjectItem(node_json, "inputs"));
      if (cJSON_GetObjectItem(root, "node_row_ptr") != NULL)
        g_assert_cmpint(n->op->num_inputs(n->param), ==, n_in);
      parsed++;
    }
    cJSON_Delete(root);
  }
  g_test_message("%d nn nodes parsed", parsed);
  g_assert_cmpint(parsed, >, 300);
}

/* ---- GEMM router and vector math ------------------------------------------------------- */

static void ref_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                     const float *b, int64_t ldb, double *c)
{
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double s = 0.0;
      for (int64_t p = 0; p < k; p++)
        s += (double)(ta ? a[p * lda + i] : a[i * lda + p]) *
             (double)(tb ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * n + j] = s;
    }
}

static void test_gemm(void)
{
  /* Shapes that route to sgemm, to sgemv (m == 1, n == 1), and a k == 0 product. */
  const int64_t sizes[][3] = {{5, 7, 3}, {1, 9, 6}, {8, 1, 5}, {1, 1, 4}, {3, 4, 0}};
  for (gsize s = 0; s < G_N_ELEMENTS(sizes); s++)
    for (int t = 0; t < 4; t++) {
      bool ta = t & 1, tb = t & 2;
      int64_t m = sizes[s][0], n = sizes[s][1], k = sizes[s][2];
      /* Leading dims larger than the rows, to catch stride mix-ups. */
      int64_t lda = (ta ? m : k) + 2, ldb = (tb ? k : n) + 3, ldc = n + 1;
      float *a = g_new(float, (ta ? k : m) * lda + 1);
      float *b = g_new(float, (tb ? n : k) * ldb + 1);
      float *c = g_new(float, m *ldc);
      for (int64_t i = 0; i < (ta ? k : m) * lda; i++)
        a[i] = (float)g_rand_double_range(rng, -1, 1);
      for (int64_t i = 0; i < (tb ? n : k) * ldb; i++)
        b[i] = (float)g_rand_double_range(rng, -1, 1);
      for (int64_t i = 0; i < m * ldc; i++)
        c[i] = NAN; /* beta = 0 must ignore what is there */
      g_assert_cmpint(ds_cpu_sgemm(ta, tb, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc), ==,
                      DS_STATUS_OK);
      double *want = dalloc(m * n);
      ref_gemm(ta, tb, m, n, k, a, lda, b, ldb, want);
      for (int64_t i = 0; i < m; i++)
        close_to(c + i * ldc, want + i * n, n, 1e-5, 1e-5, "sgemm");
      /* beta = 1 accumulates, alpha scales. */
      g_assert_cmpint(ds_cpu_sgemm(ta, tb, m, n, k, 2.0f, a, lda, b, ldb, 1.0f, c, ldc), ==,
                      DS_STATUS_OK);
      for (int64_t i = 0; i < m * n; i++)
        want[i] *= 3.0;
      for (int64_t i = 0; i < m; i++)
        close_to(c + i * ldc, want + i * n, n, 1e-5, 1e-5, "sgemm beta=1");
      g_free(a);
      g_free(b);
      g_free(c);
      g_free(want);
    }
  float dummy = 0.0f;
  g_assert_cmpint(ds_cpu_sgemm(false, false, (int64_t)1 << 33, 1, 1, 1.0f, &dummy, 1, &dummy, 1,
                               0.0f, &dummy, 1),
                  ==, DS_STATUS_INVALID_ARGUMENT);
}

static void test_conv_gemm_dims(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "Convolution", "kernel", "(3, 3)", "pad", "(1, 1)", "stride", "(2, 2)",
                       "num_filter", "64", "num_group", "2", NULL);
  const int64_t shape[] = {4, 32, 56, 56};
  DsConvGemmDims dims;
  g_assert_true(ds_cpu_conv_gemm_dims(n->param, shape, 4, &dims));
  g_assert_cmpint(dims.m, ==, 32);
  g_assert_cmpint(dims.n, ==, 28 * 28);
  g_assert_cmpint(dims.k, ==, 16 * 9);
  g_assert_cmpint(dims.count, ==, 8);
  const int64_t bad[] = {4, 31, 56, 56};
  g_assert_false(ds_cpu_conv_gemm_dims(n->param, bad, 4, &dims));
}

static void test_vmath(void)
{
  /* Against libm over a wide range, plus the special values. */
  double worst[6] = {0};
  for (int i = 0; i <= 200000; i++) {
    float x = (float)(-110.0 + 220.0 * i / 200000.0);
    double e = exp((double)x);
    double got = ds_vmath_exp(x);
    if (e > 1e-37 && e < 3e38)
      worst[0] = MAX(worst[0], fabs(got - e) / e);
    double t = tanh((double)x);
    worst[1] = MAX(worst[1], fabs(ds_vmath_tanh(x) - t) / MAX(fabs(t), 1e-30));
    double sg = 1.0 / (1.0 + exp(-(double)x));
    worst[2] = MAX(worst[2], fabs(ds_vmath_sigmoid(x) - sg) / MAX(sg, 1e-30));
    double sp = x > 20 ? x : log1p(exp((double)x));
    if (sp > 1e-37)
      worst[3] = MAX(worst[3], fabs(ds_vmath_softrelu(x) - sp) / sp);
    worst[4] = MAX(worst[4], fabs(ds_vmath_erf(x) - erf((double)x)));
    double em = expm1((double)x);
    if (em < 3e38) /* float overflows beyond */
      worst[5] = MAX(worst[5], fabs(ds_vmath_expm1(x) - em) / MAX(fabs(em), 1e-30));
  }
  for (int i = 1; i < 100000; i++) {
    float x = (float)(i * 1e-3);
    double l = log((double)x);
    g_assert_cmpfloat(fabs(ds_vmath_log(x) - l), <=, 3e-7 * MAX(fabs(l), 1.0));
  }
  g_test_message("relative errors: exp %.3g tanh %.3g sigmoid %.3g softrelu %.3g, erf abs "
                 "%.3g, expm1 %.3g",
                 worst[0], worst[1], worst[2], worst[3], worst[4], worst[5]);
  g_assert_cmpfloat(worst[0], <, 4e-7);
  g_assert_cmpfloat(worst[1], <, 6e-7);
  g_assert_cmpfloat(worst[2], <, 6e-7);
  g_assert_cmpfloat(worst[3], <, 1e-6);
  g_assert_cmpfloat(worst[4], <, 3e-7);
  g_assert_cmpfloat(worst[5], <, 1e-6);
  g_assert_true(isnan(ds_vmath_exp(NAN)) && isnan(ds_vmath_tanh(NAN)) &&
                isnan(ds_vmath_sigmoid(NAN)) && isnan(ds_vmath_log(-1.0f)) &&
                isnan(ds_vmath_erf(NAN)));
  g_assert_true(ds_vmath_exp(INFINITY) == INFINITY && ds_vmath_exp(-INFINITY) == 0.0f);
  g_assert_true(ds_vmath_exp(89.0f) == INFINITY && ds_vmath_log(0.0f) == -INFINITY);
  g_assert_true(ds_vmath_tanh(INFINITY) == 1.0f && ds_vmath_tanh(-INFINITY) == -1.0f);
  g_assert_true(ds_vmath_log(INFINITY) == INFINITY && ds_vmath_softrelu(100.0f) == 100.0f);
  g_assert_cmpfloat(ds_vmath_exp(88.7f), >, 3.3e38);
}

/* ---- Convolution ------------------------------------------------------------------------- */

static void test_convolution_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[3], out[1];
  DsNode *n = node_new(g, "Convolution", "kernel", "(7, 7)", "stride", "(2, 2)", "pad", "(3, 3)",
                       "num_filter", "64", NULL);
  const DsConvolutionParam *p = n->param;
  g_assert_cmpint(p->n_spatial, ==, 2);
  g_assert_cmpint(p->dilate[0], ==, 1);
  g_assert_cmpint(p->num_group, ==, 1);
  g_assert_false(p->no_bias);
  g_assert_cmpuint(n->n_inputs, ==, 3);
  infer_ok(n, (const char *[]){"(1, 3, 224, 224)", "?", "?"}, in, out);
  assert_shape(&out[0], "(1, 64, 112, 112)");
  assert_shape(&in[1], "(64, 3, 7, 7)");
  assert_shape(&in[2], "(64,)");
  /* Unknown batch and width stay unknown; the height still computes. */
  infer_ok(n, (const char *[]){"(?, 3, 32, ?)", "?", "?"}, in, out);
  assert_shape(&out[0], "(?, 64, 16, ?)");
  /* Channels come back from the weight; batch from the output. */
  in[0] = shp("(?, ?, 32, 32)");
  in[1] = shp("(64, 3, 7, 7)");
  in[2] = DS_SHAPE_UNKNOWN;
  out[0] = shp("(8, ?, ?, ?)");
  GError *error = NULL;
  g_assert_true(infer_err(n, in, out, &error));
  assert_shape(&in[0], "(8, 3, 32, 32)");
  assert_shape(&out[0], "(8, 64, 16, 16)");

  /* Grouped, dilated, no bias; stride 1 lets spatial dims flow back from the output. */
  DsNode *n2 = node_new(g, "Convolution", "kernel", "(3, 3)", "dilate", "(2, 2)", "num_filter", "8",
                        "num_group", "4", "no_bias", "True", "layout", "NCHW", NULL);
  g_assert_cmpuint(n2->n_inputs, ==, 2);
  infer_ok(n2, (const char *[]){"(2, 12, 10, 9)", "?"}, in, out);
  assert_shape(&out[0], "(2, 8, 6, 5)");
  assert_shape(&in[1], "(8, 3, 3, 3)");
  in[0] = shp("(2, 12, ?, ?)");
  in[1] = DS_SHAPE_UNKNOWN;
  out[0] = shp("(2, 8, 6, 5)");
  g_assert_true(infer_err(n2, in, out, &error));
  assert_shape(&in[0], "(2, 12, 10, 9)");

  /* 1-D and 3-D. */
  DsNode *n1 = node_new(g, "Convolution", "kernel", "(5,)", "num_filter", "4", NULL);
  infer_ok(n1, (const char *[]){"(2, 3, 20)", "?", "?"}, in, out);
  assert_shape(&out[0], "(2, 4, 16)");
  assert_shape(&in[1], "(4, 3, 5)");
  DsNode *n3 = node_new(g, "Convolution", "kernel", "(3, 3, 3)", "stride", "(1, 2, 2)", "pad",
                        "(1, 1, 1)", "num_filter", "4", NULL);
  infer_ok(n3, (const char *[]){"(1, 2, 8, 9, 9)", "?", "?"}, in, out);
  assert_shape(&out[0], "(1, 4, 8, 5, 5)");

  /* Errors name the node and the values. */
  infer_fails(n2, (const char *[]){"(2, 12, 4, 9)", "?"},
              "kernel size 5 exceeds the input size 4 padded to 4 on spatial axis 0");
  infer_fails(n, (const char *[]){"(1, 3, 224)", "?", "?"}, "data must have 4 dims");
  infer_fails(n, (const char *[]){"(1, 3, 224, 224)", "(64, 4, 7, 7)", "?"}, "weight");
  infer_fails(n2, (const char *[]){"(2, 10, 10, 9)", "?"}, "num_group=4");
  parse_fails(DS_ERROR_UNSUPPORTED, "NHWC", "Convolution", "kernel", "(3, 3)", "num_filter", "8",
              "layout", "NHWC", NULL);
  parse_fails(DS_ERROR_INVALID, "num_filter", "Convolution", "kernel", "(3, 3)", NULL);
  parse_fails(DS_ERROR_INVALID, "kernel", "Convolution", "num_filter", "8", NULL);
  parse_fails(DS_ERROR_INVALID, "stride", "Convolution", "kernel", "(3, 3)", "num_filter", "8",
              "stride", "(1, 1, 1)", NULL);
  parse_fails(DS_ERROR_INVALID, "num_group", "Convolution", "kernel", "(3, 3)", "num_filter", "6",
              "num_group", "4", NULL);
  parse_fails(DS_ERROR_PARSE, "pad", "Convolution", "kernel", "(3, 3)", "num_filter", "6", "pad",
              "(a, b)", NULL);
}

/* Direct convolution in double over 3-D-normalised spatial dims. */
static void ref_convolution(const DsConvolutionParam *p, const DsTensor *x, const DsTensor *w,
                            const DsTensor *b, const DsTensor *y, double *out)
{
  int ns = p->n_spatial;
  int64_t in[3] = {1, 1, 1}, o[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1},
          pd[3] = {0, 0, 0};
  for (int i = 0; i < ns; i++) {
    int j = 3 - ns + i;
    in[j] = x->shape[2 + i];
    o[j] = y->shape[2 + i];
    k[j] = p->kernel[i];
    s[j] = p->stride[i];
    d[j] = p->dilate[i];
    int64_t pad_end;
    ds_conv_axis_pads(p, i, in[j], &pd[j], &pad_end);
  }
  /* num_filter=0 takes the count from the weight (and so the output). */
  int64_t batch = x->shape[0], c_in = x->shape[1], f_n = y->shape[1];
  int64_t cg = c_in / p->num_group, fg = f_n / p->num_group;
  const float *xv = x->data, *wv = w->data, *bv = b != NULL ? b->data : NULL;
  for (int64_t n = 0; n < batch; n++)
    for (int64_t f = 0; f < f_n; f++)
      for (int64_t z = 0; z < o[0]; z++)
        for (int64_t yy = 0; yy < o[1]; yy++)
          for (int64_t xx = 0; xx < o[2]; xx++) {
            double acc = bv != NULL ? bv[f] : 0.0;
            int64_t grp = f / fg;
            for (int64_t c = 0; c < cg; c++)
              for (int64_t a = 0; a < k[0]; a++)
                for (int64_t bb = 0; bb < k[1]; bb++)
                  for (int64_t cc = 0; cc < k[2]; cc++) {
                    int64_t iz = z * s[0] - pd[0] + a * d[0];
                    int64_t iy = yy * s[1] - pd[1] + bb * d[1];
                    int64_t ix = xx * s[2] - pd[2] + cc * d[2];
                    if (iz < 0 || iz >= in[0] || iy < 0 || iy >= in[1] || ix < 0 || ix >= in[2])
                      continue;
                    double xval =
                        xv[(((n * c_in + grp * cg + c) * in[0] + iz) * in[1] + iy) * in[2] + ix];
                    double wval = wv[(((f * cg + c) * k[0] + a) * k[1] + bb) * k[2] + cc];
                    acc += xval * wval;
                  }
            out[(((n * f_n + f) * o[0] + z) * o[1] + yy) * o[2] + xx] = acc;
          }
}

/* Builds a Convolution with `attrs` (key, value, ..., NULL), infers its shapes from `data` (and
 * `weight`, when not "?"), runs the kernel on random data and compares with the reference. */
static void check_convolution_v(const char *data, const char *weight, va_list args)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  GError *error = NULL;
  DsNode *n = node_v(g, "Convolution", &error, args);
  g_assert_no_error(error);
  const DsConvolutionParam *p = n->param;
  DsShape in[3], out[1];
  infer_ok(n, (const char *[]){data, weight, "?"}, in, out);
  g_autofree char *ws = ds_shape_to_string(&in[1]);
  g_autofree char *os = ds_shape_to_string(&out[0]);
  g_autofree char *bs = g_strdup_printf("(%" G_GINT64_FORMAT ",)", out[0].dims[1].value);
  DsTensor t_in[3] = {rtensor(data, -1, 1), rtensor(ws, -1, 1), rtensor(bs, -1, 1)};
  int n_in = p->no_bias ? 2 : 3;
  DsTensor t_out = ftensor(os);
  run_ok(DS_OP_CONVOLUTION, p, t_in, n_in, &t_out, 1);
  double *want = dalloc(ds_tensor_numel(&t_out));
  ref_convolution(p, &t_in[0], &t_in[1], p->no_bias ? NULL : &t_in[2], &t_out, want);
  g_autofree char *what = g_strdup_printf("Convolution %s -> %s", data, os);
  close_to(t_out.data, want, ds_tensor_numel(&t_out), 1e-4, 1e-4, what);
  g_free(want);
  tensors_free(t_in, 3);
  g_free(t_out.data);
}

static void check_convolution(const char *data, ...)
{
  va_list args;
  va_start(args, data);
  check_convolution_v(data, "?", args);
  va_end(args);
}

/* The same with the weight's shape given (num_filter=0 takes the filter count from it). */
static void check_convolution_w(const char *data, const char *weight, ...)
{
  va_list args;
  va_start(args, weight);
  check_convolution_v(data, weight, args);
  va_end(args);
}

static void test_convolution_kernel(void)
{
  check_convolution("(2, 4, 9, 11)", "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "6", NULL);
  check_convolution("(2, 4, 9, 11)", "kernel", "(3, 3)", "stride", "(2, 2)", "num_filter", "5",
                    "no_bias", "True", NULL);
  check_convolution("(1, 3, 12, 10)", "kernel", "(3, 2)", "stride", "(2, 3)", "pad", "(2, 1)",
                    "num_filter", "4", NULL);
  check_convolution("(2, 4, 13, 13)", "kernel", "(3, 3)", "dilate", "(2, 3)", "pad", "(2, 3)",
                    "num_filter", "6", NULL);
  check_convolution("(2, 6, 8, 8)", "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "4",
                    "num_group", "2", NULL);
  check_convolution("(1, 8, 7, 7)", "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "8",
                    "num_group", "8", "stride", "(2, 2)", NULL);                   /* depthwise */
  check_convolution("(3, 16, 5, 6)", "kernel", "(1, 1)", "num_filter", "7", NULL); /* direct */
  check_convolution("(2, 6, 5, 6)", "kernel", "(1, 1)", "num_filter", "4", "num_group", "2",
                    NULL); /* direct, grouped */
  check_convolution("(1, 6, 9, 9)", "kernel", "(1, 1)", "stride", "(2, 2)", "num_filter", "3",
                    NULL);
  check_convolution("(2, 3, 20)", "kernel", "(5,)", "stride", "(2,)", "pad", "(1,)", "dilate",
                    "(2,)", "num_filter", "4", NULL); /* 1-D */
  check_convolution("(1, 2, 6, 7, 5)", "kernel", "(3, 2, 3)", "stride", "(1, 2, 1)", "pad",
                    "(1, 0, 1)", "num_filter", "3", NULL); /* 3-D */
  check_convolution("(1, 2, 3, 3)", "kernel", "(3, 3)", "pad", "(4, 4)", "num_filter", "2",
                    NULL); /* padding wider than the input */
  /* Large enough for the im2col and bias fill to split across threads. */
  check_convolution("(1, 16, 40, 40)", "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "32",
                    NULL);
  check_convolution("(2, 8, 33, 31)", "kernel", "(5, 5)", "stride", "(2, 2)", "pad", "(2, 2)",
                    "num_filter", "16", "num_group", "2", NULL);
  /* Column matrices over 2 MiB: the GEMM runs in column blocks, which here split output rows
   * (8281 positions in blocks of 4141), also across 3-D planes. */
  check_convolution("(1, 8, 182, 181)", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)",
                    "num_filter", "4", NULL);
  check_convolution("(1, 4, 20, 20, 21)", "kernel", "(3, 3, 3)", "pad", "(1, 1, 1)", "num_filter",
                    "3", NULL);
  /* Outputs over 1024 positions: one GEMM per image even in a batch. */
  check_convolution("(2, 3, 40, 40)", "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "4", NULL);
}

/* ONNX's padding extensions: pad_end, auto_pad and num_filter=0. */
static void test_convolution_padding(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[3], out[1];
  /* ONNX's test_conv_with_strides_and_asymmetric_padding: pads (1, 0, 1, 0). */
  DsNode *n = node_new(g, "Convolution", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 0)",
                       "pad_end", "(1, 0)", "num_filter", "1", NULL);
  infer_ok(n, (const char *[]){"(1, 1, 7, 5)", "?", "?"}, in, out);
  assert_shape(&out[0], "(1, 1, 4, 2)");
  DsNode *na = node_new(g, "Convolution", "kernel", "(3, 3)", "pad", "(2, 0)", "pad_end", "(0, 1)",
                        "num_filter", "2", "no_bias", "True", NULL);
  const DsConvolutionParam *pa = na->param;
  g_assert_cmpint(pa->pad_end[0], ==, 0);
  g_assert_cmpint(pa->pad_end[1], ==, 1);
  infer_ok(na, (const char *[]){"(1, 3, 6, 6)", "?"}, in, out);
  assert_shape(&out[0], "(1, 2, 6, 5)");
  /* Stride 1: the input's size flows back from the output with both paddings. */
  in[0] = shp("(1, 3, ?, ?)");
  in[1] = DS_SHAPE_UNKNOWN;
  out[0] = shp("(1, 2, 6, 5)");
  GError *error = NULL;
  g_assert_true(infer_err(na, in, out, &error));
  assert_shape(&in[0], "(1, 3, 6, 6)");
  /* auto_pad: ceil(input / stride), symbolic too. */
  DsNode *ns = node_new(g, "Convolution", "kernel", "(3, 3)", "stride", "(2, 2)", "auto_pad",
                        "same_lower", "num_filter", "1", NULL);
  g_assert_cmpint(((const DsConvolutionParam *)ns->param)->auto_pad, ==, DS_AUTO_PAD_SAME_LOWER);
  infer_ok(ns, (const char *[]){"(1, 1, 5, 6)", "?", "?"}, in, out);
  assert_shape(&out[0], "(1, 1, 3, 3)");
  Sym sy = sym_new();
  in[0] = sym_shp(sy.exprs, "(N, 1, H, W)");
  in[1] = in[2] = DS_SHAPE_UNKNOWN;
  out[0] = DS_SHAPE_UNKNOWN;
  g_autofree char *msg = infer_in(sy.ctx, ns, in, out);
  g_assert_null(msg);
  g_autofree char *os = ds_shape_to_string(&out[0]);
  g_assert_nonnull(strstr(os, "H"));
  sym_free(&sy);
  /* num_filter=0: the filter count is the weight's. */
  DsNode *nf = node_new(g, "Convolution", "kernel", "(3,)", "num_filter", "0", NULL);
  g_assert_cmpint(((const DsConvolutionParam *)nf->param)->num_filter, ==, 0);
  infer_ok(nf, (const char *[]){"(2, 4, 10)", "(6, 4, 3)", "?"}, in, out);
  assert_shape(&out[0], "(2, 6, 8)");
  assert_shape(&in[2], "(6,)");
  in[0] = shp("(2, 4, 10)");
  in[1] = shp("(?, 4, 3)");
  in[2] = DS_SHAPE_UNKNOWN;
  out[0] = shp("(2, 5, ?)");
  g_assert_true(infer_err(nf, in, out, &error));
  assert_shape(&in[1], "(5, 4, 3)");
  DsNode *nfg =
      node_new(g, "Convolution", "kernel", "(3,)", "num_filter", "0", "num_group", "2", NULL);
  infer_fails(nfg, (const char *[]){"(2, 4, 10)", "(5, 2, 3)", "?"}, "not a multiple");
  parse_fails(DS_ERROR_INVALID, "auto_pad", "Convolution", "kernel", "(3, 3)", "num_filter", "8",
              "auto_pad", "same_upper", "pad", "(1, 1)", NULL);
  parse_fails(DS_ERROR_PARSE, "auto_pad", "Convolution", "kernel", "(3, 3)", "num_filter", "8",
              "auto_pad", "same", NULL);
  parse_fails(DS_ERROR_INVALID, "pad_end", "Convolution", "kernel", "(3, 3)", "num_filter", "8",
              "pad_end", "(1,)", NULL);

  /* Kernels against the reference: the im2col, shifted, batched and 1-D/3-D paths. */
  check_convolution("(1, 1, 7, 5)", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 0)",
                    "pad_end", "(1, 0)", "num_filter", "1", NULL);
  check_convolution("(2, 3, 9, 11)", "kernel", "(3, 3)", "pad", "(2, 0)", "pad_end", "(0, 2)",
                    "num_filter", "4", NULL);
  /* Wide images and few filters: the shifted path (ds-cpu-conv.c's cost model picks it for
   * these), its row overlap capped by the smaller of the two paddings. */
  check_convolution("(1, 16, 55, 56)", "kernel", "(3, 3)", "pad", "(0, 1)", "pad_end", "(1, 2)",
                    "num_filter", "4", "no_bias", "True", NULL);
  check_convolution("(1, 16, 55, 56)", "kernel", "(3, 3)", "pad", "(2, 2)", "pad_end", "(1, 0)",
                    "num_filter", "4", NULL);
  check_convolution("(1, 16, 55, 56)", "kernel", "(3, 3)", "auto_pad", "same_upper", "num_filter",
                    "4", NULL);
  check_convolution("(1, 4, 40, 41)", "kernel", "(3, 3)", "pad", "(0, 1)", "pad_end", "(1, 2)",
                    "num_filter", "2", "no_bias", "True", NULL); /* im2col */
  check_convolution("(30, 3, 6, 5)", "kernel", "(3, 2)", "stride", "(2, 1)", "pad", "(1, 0)",
                    "pad_end", "(0, 1)", "num_filter", "3", NULL); /* batched */
  check_convolution("(1, 1, 5, 5)", "kernel", "(3, 3)", "stride", "(2, 2)", "auto_pad",
                    "same_lower", "num_filter", "1", NULL);
  check_convolution("(2, 2, 8, 7)", "kernel", "(4, 3)", "stride", "(3, 2)", "dilate", "(1, 2)",
                    "auto_pad", "same_upper", "num_filter", "3", NULL);
  check_convolution("(2, 3, 17)", "kernel", "(4,)", "auto_pad", "same_upper", "num_filter", "2",
                    NULL);
  check_convolution("(1, 2, 5, 6, 4)", "kernel", "(2, 3, 2)", "pad", "(1, 0, 1)", "pad_end",
                    "(0, 2, 0)", "num_filter", "2", NULL);
  check_convolution_w("(2, 4, 9, 8)", "(6, 2, 3, 3)", "kernel", "(3, 3)", "pad", "(1, 1)",
                      "num_filter", "0", "num_group", "2", NULL);
  check_convolution_w("(3, 5, 6, 7)", "(4, 5, 1, 1)", "kernel", "(1, 1)", "num_filter", "0",
                      "no_bias", "True", NULL); /* direct */
}

/* Batches of small outputs, several images per GEMM (ds-cpu-conv.c's batched path). */
static void test_convolution_batched(void)
{
  /* 45 images of 49 positions: GEMMs of 23 and 22 images. */
  check_convolution("(45, 8, 7, 7)", "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "16", NULL);
  /* Groups, stride 2 and dilation: 300 images of 16 positions in 3 GEMMs. */
  check_convolution("(300, 6, 9, 9)", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)",
                    "dilate", "(2, 2)", "num_group", "3", "num_filter", "9", NULL);
  check_convolution("(50, 8, 6, 6)", "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "8",
                    "num_group", "8", "no_bias", "True", NULL);                     /* depthwise */
  check_convolution("(30, 16, 5, 6)", "kernel", "(1, 1)", "num_filter", "7", NULL); /* 1x1 */
  check_convolution("(9, 6, 5, 6)", "kernel", "(1, 1)", "num_filter", "4", "num_group", "2",
                    "no_bias", "True", NULL);
  check_convolution("(25, 6, 9, 9)", "kernel", "(1, 1)", "stride", "(2, 2)", "num_filter", "3",
                    NULL);
  check_convolution("(6, 4, 14, 14)", "kernel", "(3, 2)", "stride", "(2, 3)", "pad", "(2, 1)",
                    "num_filter", "5", NULL);
  check_convolution("(40, 3, 20)", "kernel", "(5,)", "stride", "(2,)", "pad", "(1,)", "dilate",
                    "(2,)", "num_filter", "4", NULL); /* 1-D */
  check_convolution("(5, 2, 6, 7, 5)", "kernel", "(3, 2, 3)", "stride", "(1, 2, 1)", "pad",
                    "(1, 0, 1)", "num_filter", "3", NULL); /* 3-D */
  /* 1x1 outputs, 2049 images: GEMMs of 1025 and 1024 columns. */
  check_convolution("(2049, 3, 3, 3)", "kernel", "(3, 3)", "num_filter", "2", NULL);
  /* 4608-row column matrices: the workspace bound allows 18 images per GEMM, here 14, 14 and 12. */
  check_convolution("(40, 512, 7, 7)", "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "8",
                    NULL);
  /* No images (a detector's head with no ROIs). */
  check_convolution("(0, 4, 7, 7)", "kernel", "(3, 3)", "pad", "(1, 1)", "num_filter", "6", NULL);
  check_convolution("(0, 4, 7, 7)", "kernel", "(1, 1)", "num_filter", "6", NULL);
}

/* ---- Pooling ------------------------------------------------------------------------------ */

static void test_pooling_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[1], out[1];
  DsNode *n = node_new(g, "Pooling", "kernel", "(3, 3)", "stride", "(2, 2)", NULL);
  const DsPoolingParam *p = n->param;
  g_assert_cmpint(p->pool_type, ==, DS_POOL_MAX);
  g_assert_cmpint(p->convention, ==, DS_POOL_VALID);
  g_assert_true(p->count_include_pad);
  g_assert_false(p->global_pool);
  g_assert_cmpint(p->pad[1], ==, 0);
  infer_ok(n, (const char *[]){"(1, 64, 112, 112)"}, in, out);
  assert_shape(&out[0], "(1, 64, 55, 55)");
  /* full rounds up: ceil((112 - 3) / 2) + 1 = 56 */
  DsNode *nf = node_new(g, "Pooling", "kernel", "(3, 3)", "stride", "(2, 2)", "pooling_convention",
                        "full", "pool_type", "avg", NULL);
  infer_ok(nf, (const char *[]){"(1, 64, 112, 112)"}, in, out);
  assert_shape(&out[0], "(1, 64, 56, 56)");
  infer_ok(nf, (const char *[]){"(1, 64, 113, 7)"}, in, out);
  assert_shape(&out[0], "(1, 64, 56, 3)");
  DsNode *ng =
      node_new(g, "Pooling", "kernel", "(7, 7)", "global_pool", "True", "pool_type", "avg", NULL);
  infer_ok(ng, (const char *[]){"(2, 512, 7, 9)"}, in, out);
  assert_shape(&out[0], "(2, 512, 1, 1)");
  infer_ok(ng, (const char *[]){"(2, 512, 4, 7, 9)"}, in, out);
  assert_shape(&out[0], "(2, 512, 1, 1, 1)");
  DsNode *ngk = node_new(g, "Pooling", "global_pool", "True", NULL);
  infer_ok(ngk, (const char *[]){"(2, 5, 9)"}, in, out);
  assert_shape(&out[0], "(2, 5, 1)");
  DsNode *ns = node_new(g, "Pooling", "kernel", "(3,)", "stride", "(2,)", "pooling_convention",
                        "same", NULL);
  infer_ok(ns, (const char *[]){"(2, 5, 9)"}, in, out);
  assert_shape(&out[0], "(2, 5, 5)");
  /* Batch and channels flow back. */
  in[0] = shp("(?, ?, 112, 112)");
  out[0] = shp("(4, 64, ?, ?)");
  GError *error = NULL;
  g_assert_true(infer_err(n, in, out, &error));
  assert_shape(&in[0], "(4, 64, 112, 112)");
  assert_shape(&out[0], "(4, 64, 55, 55)");

  infer_fails(n, (const char *[]){"(1, 64, 2, 112)"}, "kernel size 3 exceeds the input size 2");
  infer_fails(n, (const char *[]){"(1, 64, 112)"}, "data must have 4 dims");
  infer_fails(ns, (const char *[]){"(1, 2, 9, 9)"}, "same");
  parse_fails(DS_ERROR_INVALID, "kernel", "Pooling", "pool_type", "max", NULL);
  parse_fails(DS_ERROR_UNSUPPORTED, "NHWC", "Pooling", "kernel", "(2, 2)", "layout", "NHWC", NULL);
  parse_fails(DS_ERROR_INVALID, "p_value", "Pooling", "kernel", "(2, 2)", "pool_type", "lp", NULL);
  parse_fails(DS_ERROR_UNSUPPORTED, "p_value=4", "Pooling", "kernel", "(2, 2)", "pool_type", "lp",
              "p_value", "4", NULL);
  parse_fails(DS_ERROR_PARSE, "pool_type", "Pooling", "kernel", "(2, 2)", "pool_type", "median",
              NULL);
}

/* MXNet's CPU pooling, literally: each output's window, clipped as pool.h clips it; with
 * ONNX's extensions, the end padding (pe) may differ from the beginning's and max windows may
 * be dilated. */
/* A pool's geometry in three dims, the spatial ones right-aligned after leading 1s, as the
 * references walk it. */
typedef struct {
  int64_t in[3], o[3], k[3], s[3], pd[3], pe[3], dl[3];
} RefWindow;

static RefWindow ref_window(const DsPoolingParam *p, const DsTensor *x, const DsTensor *y)
{
  RefWindow w = {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}};
  int ns = x->ndim - 2;
  for (int i = 0; i < ns; i++) {
    int j = 3 - ns + i;
    w.in[j] = x->shape[2 + i];
    w.o[j] = y->shape[2 + i];
    w.k[j] = p->global_pool ? w.in[j] : p->kernel[i];
    w.s[j] = p->global_pool ? 1 : p->stride[i];
    w.dl[j] = p->global_pool ? 1 : p->dilate[i];
    ds_pool_axis_pads(p, i, w.in[j], &w.pd[j], &w.pe[j]);
  }
  return w;
}

static void ref_pooling(const DsPoolingParam *p, const DsTensor *x, const DsTensor *y, double *out)
{
  const RefWindow w = ref_window(p, x, y);
  const int64_t *in = w.in, *o = w.o, *k = w.k, *s = w.s, *pd = w.pd, *pe = w.pe, *dl = w.dl;
  int64_t planes = x->shape[0] * x->shape[1], plane = in[0] * in[1] * in[2];
  const float *xv = x->data;
  int64_t idx = 0;
  for (int64_t pl = 0; pl < planes; pl++)
    for (int64_t a = 0; a < o[0]; a++)
      for (int64_t b = 0; b < o[1]; b++)
        for (int64_t c = 0; c < o[2]; c++) {
          int64_t st[3] = {a * s[0] - pd[0], b * s[1] - pd[1], c * s[2] - pd[2]};
          int64_t lo[3], hi[3];
          int64_t size_pad = 1, size_in = 1;
          for (int j = 0; j < 3; j++) {
            int64_t end_pad = MIN(st[j] + k[j], in[j] + pe[j]);
            size_pad *= end_pad - st[j];
            lo[j] = MAX(st[j], 0);
            hi[j] = MIN(st[j] + (k[j] - 1) * dl[j] + 1, in[j]);
            size_in *= MIN(end_pad, in[j]) - lo[j];
          }
          double acc = p->pool_type == DS_POOL_MAX ? -FLT_MAX : 0.0;
          for (int64_t z = lo[0]; z < hi[0]; z++)
            for (int64_t yy = lo[1]; yy < hi[1]; yy++)
              for (int64_t xx = lo[2]; xx < hi[2]; xx++) {
                if ((z - st[0]) % dl[0] != 0 || (yy - st[1]) % dl[1] != 0 ||
                    (xx - st[2]) % dl[2] != 0)
                  continue; /* between the taps of a dilated window */
                double v = xv[pl * plane + (z * in[1] + yy) * in[2] + xx];
                if (p->pool_type == DS_POOL_MAX)
                  acc = v > acc ? v : acc;
                else if (p->pool_type == DS_POOL_LP)
                  acc += pow(v, p->p_value);
                else
                  acc += v;
              }
          if (p->pool_type == DS_POOL_AVG)
            acc /= (double)(p->count_include_pad ? size_pad : size_in);
          else if (p->pool_type == DS_POOL_LP)
            acc = p->p_value == 2 ? sqrt(acc) : p->p_value == 3 ? cbrt(acc) : acc;
          out[idx++] = acc;
        }
}

/* A Pooling node in `g` with the attributes `args` holds, inferred on input shape `data`; its
 * output shape as text in `out_shape` (caller frees). */
static DsNode *pooling_node_v(DsGraph *g, const char *data, va_list args, char **out_shape)
{
  GError *error = NULL;
  DsNode *n = node_v(g, "Pooling", &error, args);
  g_assert_no_error(error);
  DsShape in[1], out[1];
  infer_ok(n, (const char *[]){data}, in, out);
  *out_shape = ds_shape_to_string(&out[0]);
  return n;
}

static void check_pooling(const char *data, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  g_autofree char *os = NULL;
  va_list args;
  va_start(args, data);
  DsNode *n = pooling_node_v(g, data, args, &os);
  va_end(args);
  DsTensor x = rtensor(data, -2, 2), y = ftensor(os);
  run_ok(DS_OP_POOLING, n->param, &x, 1, &y, 1);
  double *want = dalloc(ds_tensor_numel(&y));
  ref_pooling(n->param, &x, &y, want);
  g_autofree char *what = g_strdup_printf("Pooling %s -> %s", data, os);
  close_to(y.data, want, ds_tensor_numel(&y), 1e-5, 1e-4, what);
  g_free(want);
  g_free(x.data);
  g_free(y.data);
}

/* _backward_Pooling: the gradient goes to each max window's first largest element, or spread
 * over an average window; its shape is the data's. */
static void test_backward_pooling(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[3], out[1];
  DsNode *n = node_new(g, "_backward_Pooling", "kernel", "(2, 2)", "stride", "(2, 2)", NULL);
  infer_ok(n, (const char *[]){"(1, 2, 2, 3)", "(1, 2, 4, 6)", "(1, 2, 2, 3)"}, in, out);
  assert_shape(&out[0], "(1, 2, 4, 6)");
  parse_fails(DS_ERROR_UNSUPPORTED, "gradient", "_backward_Pooling", "kernel", "(2, 2)",
              "pool_type", "lp", "p_value", "2", NULL);

  /* max, 2x2 windows of a 4x4 plane: 1 at each window's largest (the first of a tie) */
  DsTensor x = ftensor("(1, 1, 4, 4)"), y = ftensor("(1, 1, 2, 2)"), gy = ftensor("(1, 1, 2, 2)");
  DsTensor dx = ftensor("(1, 1, 4, 4)");
  static const float xs[16] = {1, 5, 2, 2, 3, 0, 2, 1, 0, 0, 9, 8, 7, 0, 1, 1};
  for (int i = 0; i < 16; i++)
    set(&x, i, xs[i]);
  for (int i = 0; i < 4; i++)
    set(&gy, i, i + 1);
  run_ok(DS_OP_POOLING, n->param, &x, 1, &y, 1);
  DsTensor ins[3] = {gy, x, y};
  run_ok(DS_OP_BACKWARD_POOLING, n->param, ins, 3, &dx, 1);
  static const float want_max[16] = {0, 1, 2, 0, 0, 0, 0, 0, 0, 0, 4, 0, 3, 0, 0, 0};
  for (int i = 0; i < 16; i++)
    g_assert_cmpfloat(get(&dx, i), ==, want_max[i]);

  /* avg over 3x3 windows, stride 1, padding 1 not counted: each output's gradient divided by
   * the elements its window covers */
  DsNode *na = node_new(g, "_backward_Pooling", "kernel", "(3, 3)", "pad", "(1, 1)", "pool_type",
                        "avg", "count_include_pad", "False", NULL);
  DsTensor ya = ftensor("(1, 1, 4, 4)"), ga = ftensor("(1, 1, 4, 4)");
  for (int i = 0; i < 16; i++)
    set(&ga, i, 1.0);
  DsTensor ains[3] = {ga, x, ya};
  run_ok(DS_OP_BACKWARD_POOLING, na->param, ains, 3, &dx, 1);
  /* corner (0, 0) lies in 4 windows covering 4, 6, 6 and 9 elements */
  g_assert_cmpfloat_with_epsilon(get(&dx, 0), 1.0 / 4 + 2.0 / 6 + 1.0 / 9, 1e-6);
  /* the sum of the gradient is the number of windows */
  double total = 0;
  for (int i = 0; i < 16; i++)
    total += get(&dx, i);
  g_assert_cmpfloat_with_epsilon(total, 16.0, 1e-5);
  tensors_free((DsTensor[]){x, y, gy, dx, ya, ga}, 6);
}

static void test_pooling_kernel(void)
{
  check_pooling("(2, 3, 11, 12)", "kernel", "(3, 3)", "stride", "(2, 2)", NULL);
  check_pooling("(2, 3, 11, 12)", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)", NULL);
  check_pooling("(1, 4, 12, 13)", "kernel", "(3, 2)", "stride", "(2, 3)", "pooling_convention",
                "full", NULL);
  check_pooling("(2, 3, 11, 12)", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)",
                "pool_type", "avg", NULL);
  check_pooling("(2, 3, 11, 12)", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)",
                "pool_type", "avg", "count_include_pad", "False", NULL);
  check_pooling("(2, 3, 10, 10)", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)",
                "pool_type", "avg", "pooling_convention", "full", NULL);
  check_pooling("(1, 2, 13, 13)", "kernel", "(13, 13)", "stride", "(13, 13)", "pool_type", "avg",
                "pooling_convention", "full", NULL); /* squeezenet's last pool */
  check_pooling("(2, 3, 7, 8)", "kernel", "(2, 2)", "pool_type", "sum", NULL);
  check_pooling("(2, 3, 7, 8)", "kernel", "(2, 3)", "pool_type", "lp", "p_value", "2", NULL);
  check_pooling("(2, 3, 7, 8)", "kernel", "(2, 2)", "stride", "(2, 1)", "pool_type", "lp",
                "p_value", "3", NULL);
  check_pooling("(2, 3, 7, 8)", "kernel", "(2, 2)", "pool_type", "lp", "p_value", "1", NULL);
  check_pooling("(2, 5, 7, 9)", "kernel", "(7, 7)", "global_pool", "True", "pool_type", "avg",
                NULL);
  check_pooling("(2, 5, 7, 9)", "global_pool", "True", NULL);
  check_pooling("(2, 5, 7, 9)", "global_pool", "True", "pool_type", "sum", NULL);
  check_pooling("(2, 5, 7, 9)", "global_pool", "True", "pool_type", "lp", "p_value", "2", NULL);
  check_pooling("(2, 3, 17)", "kernel", "(4,)", "stride", "(3,)", "pad", "(2,)", NULL);
  check_pooling("(2, 3, 17)", "kernel", "(3,)", "stride", "(2,)", "pooling_convention", "same",
                NULL);
  check_pooling("(1, 2, 5, 6, 7)", "kernel", "(2, 3, 2)", "stride", "(2, 2, 1)", "pad", "(1, 1, 0)",
                "pool_type", "avg", NULL);
  check_pooling("(1, 2, 5, 6, 7)", "kernel", "(2, 2, 2)", "pooling_convention", "full", "stride",
                "(2, 2, 2)", NULL);
  /* Windows past the end under "full" (start beyond the input): MXNet's divisor rules. */
  check_pooling("(1, 1, 5, 5)", "kernel", "(1, 1)", "stride", "(3, 3)", "pooling_convention",
                "full", "pool_type", "avg", NULL);
  check_pooling("(1, 1, 5, 5)", "kernel", "(1, 1)", "stride", "(3, 3)", "pooling_convention",
                "full", NULL);
  /* Windows too large for the separable path's scratch: the direct fold. */
  check_pooling("(1, 2, 20, 21)", "kernel", "(17, 17)", "stride", "(2, 3)", "pad", "(1, 2)",
                "pool_type", "avg", NULL);
  check_pooling("(1, 2, 1300)", "kernel", "(1100,)", "stride", "(50,)", "pad", "(3,)", NULL);
  check_pooling("(1, 2, 3000)", "kernel", "(1000,)", "pool_type", "lp", "p_value", "2",
                NULL); /* two scratch chunks per row */
  /* Big enough to split planes across threads. */
  check_pooling("(1, 64, 56, 56)", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 1)", NULL);
  check_pooling("(1, 64, 56, 56)", "global_pool", "True", "pool_type", "avg", NULL);
}

/* Pooling in dtype `t` against the float32 kernel on the same (integer-valued) data. */
static void check_pooling_dtype(DsDType t, const char *data, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  g_autofree char *os = NULL;
  va_list args;
  va_start(args, data);
  DsNode *n = pooling_node_v(g, data, args, &os);
  va_end(args);
  DsTensor xf = ftensor(data), yf = ftensor(os);
  DsTensor x = tensor_new(t, data), y = tensor_new(t, os);
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++) {
    double v = (double)g_rand_int_range(rng, t == DS_DTYPE_UINT8 ? 0 : -100, 100);
    if (t == DS_DTYPE_FLOAT64)
      v = g_rand_double_range(rng, -2, 2);
    set(&x, i, v);
    ((float *)xf.data)[i] = (float)v;
  }
  run_ok(DS_OP_POOLING, n->param, &xf, 1, &yf, 1);
  run_ok(DS_OP_POOLING, n->param, &x, 1, &y, 1);
  for (int64_t i = 0; i < ds_tensor_numel(&y); i++)
    if (fabs(get(&y, i) - fp(&yf)[i]) > 1e-5 * (1 + fabs(fp(&yf)[i]))) {
      g_test_fail_printf("Pooling %s %s: element %" G_GINT64_FORMAT " is %g, want %g",
                         ds_dtype_name(t), data, i, get(&y, i), (double)fp(&yf)[i]);
      break;
    }
  tensor_free(&xf);
  tensor_free(&yf);
  tensor_free(&x);
  tensor_free(&y);
}

/* ONNX's extensions: pad_end, auto_pad and dilated max windows. */
static void test_pooling_padding(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[1], out[1];
  DsNode *n = node_new(g, "Pooling", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 0)",
                       "pad_end", "(2, 1)", NULL);
  infer_ok(n, (const char *[]){"(1, 2, 9, 9)"}, in, out);
  assert_shape(&out[0], "(1, 2, 5, 4)");
  DsNode *ns = node_new(g, "Pooling", "kernel", "(2, 2)", "auto_pad", "same_upper", "pool_type",
                        "avg", "count_include_pad", "False", NULL);
  infer_ok(ns, (const char *[]){"(1, 3, 32, 31)"}, in, out);
  assert_shape(&out[0], "(1, 3, 32, 31)");
  DsNode *nd = node_new(g, "Pooling", "kernel", "(2, 2)", "dilate", "(2, 2)", NULL);
  infer_ok(nd, (const char *[]){"(1, 1, 4, 4)"}, in, out);
  assert_shape(&out[0], "(1, 1, 2, 2)");
  DsNode *nds = node_new(g, "Pooling", "kernel", "(3,)", "dilate", "(2,)", "stride", "(2,)",
                         "auto_pad", "same_lower", NULL);
  infer_ok(nds, (const char *[]){"(1, 1, 9)"}, in, out);
  assert_shape(&out[0], "(1, 1, 5)");
  infer_fails(nd, (const char *[]){"(1, 1, 2, 4)"}, "kernel size 3 exceeds");
  parse_fails(DS_ERROR_UNSUPPORTED, "dilate", "Pooling", "kernel", "(2, 2)", "dilate", "(2, 2)",
              "pool_type", "avg", NULL);
  parse_fails(DS_ERROR_INVALID, "auto_pad", "Pooling", "kernel", "(2, 2)", "auto_pad", "same_upper",
              "pad_end", "(1, 1)", NULL);

  check_pooling("(1, 2, 9, 9)", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 0)", "pad_end",
                "(2, 1)", NULL);
  check_pooling("(1, 2, 9, 9)", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 0)", "pad_end",
                "(2, 1)", "pool_type", "avg", NULL);
  check_pooling("(1, 2, 9, 9)", "kernel", "(3, 3)", "stride", "(2, 2)", "pad", "(1, 0)", "pad_end",
                "(2, 1)", "pool_type", "avg", "count_include_pad", "False", NULL);
  /* ONNX's SAME cases. */
  check_pooling("(1, 3, 32, 32)", "kernel", "(2, 2)", "auto_pad", "same_upper", "pool_type", "avg",
                "count_include_pad", "False", NULL);
  check_pooling("(1, 3, 32, 32)", "kernel", "(2, 2)", "auto_pad", "same_lower", NULL);
  check_pooling("(1, 1, 5, 5)", "kernel", "(3, 3)", "stride", "(2, 2)", "auto_pad", "same_upper",
                NULL);
  check_pooling("(2, 3, 17)", "kernel", "(4,)", "stride", "(3,)", "auto_pad", "same_lower",
                "pool_type", "lp", "p_value", "2", NULL);
  /* Dilation (the direct path). */
  check_pooling("(1, 1, 4, 4)", "kernel", "(2, 2)", "dilate", "(2, 2)", NULL);
  check_pooling("(2, 3, 11, 10)", "kernel", "(3, 2)", "dilate", "(2, 3)", "stride", "(2, 1)", "pad",
                "(1, 2)", NULL);
  check_pooling("(1, 2, 5, 6, 7)", "kernel", "(2, 2, 2)", "dilate", "(2, 1, 3)", "auto_pad",
                "same_upper", NULL);

  /* The other dtypes: max pooling in the integers, everything in float64. */
  const DsDType ints[] = {DS_DTYPE_UINT8, DS_DTYPE_INT8, DS_DTYPE_INT32, DS_DTYPE_INT64,
                          DS_DTYPE_FLOAT64};
  for (gsize i = 0; i < G_N_ELEMENTS(ints); i++) {
    check_pooling_dtype(ints[i], "(1, 2, 5, 5)", "kernel", "(5, 5)", "pad", "(2, 2)", NULL);
    check_pooling_dtype(ints[i], "(2, 3, 9, 8)", "kernel", "(3, 2)", "dilate", "(2, 1)", "stride",
                        "(2, 2)", "auto_pad", "same_upper", NULL);
    check_pooling_dtype(ints[i], "(2, 3, 7)", "global_pool", "True", NULL);
  }
  check_pooling_dtype(DS_DTYPE_FLOAT64, "(2, 3, 9, 8)", "kernel", "(3, 3)", "stride", "(2, 2)",
                      "pad", "(1, 0)", "pad_end", "(2, 1)", "pool_type", "avg", NULL);
  check_pooling_dtype(DS_DTYPE_FLOAT64, "(2, 3, 9, 8)", "kernel", "(3, 3)", "pad", "(1, 1)",
                      "pool_type", "avg", "count_include_pad", "False", "pooling_convention",
                      "full", NULL);
  check_pooling_dtype(DS_DTYPE_FLOAT64, "(1, 2, 6, 7)", "kernel", "(2, 3)", "pool_type", "lp",
                      "p_value", "2", NULL);
  check_pooling_dtype(DS_DTYPE_FLOAT64, "(1, 2, 6, 7)", "kernel", "(2, 2)", "pool_type", "sum",
                      NULL);
  check_pooling_dtype(DS_DTYPE_FLOAT64, "(2, 3, 4, 5)", "global_pool", "True", "pool_type", "avg",
                      NULL);
  /* Sums in the integers are refused. */
  g_autoptr(DsGraph) g2 = ds_graph_new();
  DsNode *na = node_new(g2, "Pooling", "kernel", "(2, 2)", "pool_type", "avg", NULL);
  DsTensor xi = tensor_new(DS_DTYPE_INT32, "(1, 1, 4, 4)"),
           yi = tensor_new(DS_DTYPE_INT32, "(1, 1, 3, 3)");
  g_assert_cmpint(run_kernel(DS_OP_POOLING, na->param, &xi, 1, &yi, 1), ==, DS_STATUS_UNSUPPORTED);
  tensor_free(&xi);
  tensor_free(&yi);
}

/* Max pooling's indices, literally: each window scanned in order, the first maximum kept, its
 * position in the whole tensor (plane offset + row- or column-major position in the plane). */
static void ref_pool_indices(const DsPoolingParam *p, const DsTensor *x, const DsTensor *y,
                             double *values, int64_t *indices)
{
  const RefWindow w = ref_window(p, x, y);
  const int64_t *in = w.in, *o = w.o, *k = w.k, *s = w.s, *pd = w.pd, *dl = w.dl;
  const int64_t plane = in[0] * in[1] * in[2];
  int64_t out = 0;
  for (int64_t pl = 0; pl < x->shape[0] * x->shape[1]; pl++)
    for (int64_t a = 0; a < o[0]; a++)
      for (int64_t b = 0; b < o[1]; b++)
        for (int64_t c = 0; c < o[2]; c++, out++) {
          double best = 0;
          int64_t at = -1;
          for (int64_t ka = 0; ka < k[0]; ka++)
            for (int64_t kb = 0; kb < k[1]; kb++)
              for (int64_t kc = 0; kc < k[2]; kc++) {
                int64_t z = a * s[0] - pd[0] + ka * dl[0], yy = b * s[1] - pd[1] + kb * dl[1],
                        xx = c * s[2] - pd[2] + kc * dl[2];
                if (z < 0 || z >= in[0] || yy < 0 || yy >= in[1] || xx < 0 || xx >= in[2])
                  continue;
                double v = get(x, pl * plane + (z * in[1] + yy) * in[2] + xx);
                if (at >= 0 && !(v > best))
                  continue;
                best = v;
                at = p->indices == DS_POOL_INDICES_COLUMN_MAJOR ? z + in[0] * (yy + in[1] * xx)
                                                                : (z * in[1] + yy) * in[2] + xx;
              }
          values[out] = best;
          indices[out] = pl * plane + at;
        }
}

/* Pooling with indices on `data` in dtype `t` (small integers: many tied maxima). */
static void check_pool_indices(DsDType t, const char *data, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  GError *error = NULL;
  va_list args;
  va_start(args, data);
  DsNode *n = node_v(g, "Pooling", &error, args);
  va_end(args);
  g_assert_no_error(error);
  g_assert_cmpuint(n->n_outputs, ==, 2);
  DsShape in[1], out[2];
  infer_ok(n, (const char *[]){data}, in, out);
  g_autofree char *os = ds_shape_to_string(&out[0]);
  g_autofree char *is = ds_shape_to_string(&out[1]);
  g_assert_cmpstr(os, ==, is);
  DsDType din[1] = {t}, dout[2] = {DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN};
  g_assert_true(n->op->infer_type(n, n->param, din, dout, &error));
  g_assert_cmpint(dout[0], ==, t);
  g_assert_cmpint(dout[1], ==, DS_DTYPE_INT64);
  DsTensor x = tensor_new(t, data);
  DsTensor y[2] = {tensor_new(t, os), tensor_new(DS_DTYPE_INT64, os)};
  for (int64_t i = 0; i < ds_tensor_numel(&x); i++)
    set(&x, i, g_rand_int_range(rng, t == DS_DTYPE_UINT8 ? 0 : -2, 3));
  run_ok(DS_OP_POOLING, n->param, &x, 1, y, 2);
  int64_t count = ds_tensor_numel(&y[0]);
  double *values = dalloc(count);
  int64_t *indices = g_new(int64_t, count);
  ref_pool_indices(n->param, &x, &y[0], values, indices);
  for (int64_t i = 0; i < count; i++)
    if (get(&y[0], i) != values[i] || ((int64_t *)y[1].data)[i] != indices[i]) {
      g_test_fail_printf("Pooling indices %s %s: output %" G_GINT64_FORMAT
                         " is %g at %" G_GINT64_FORMAT ", want %g at %" G_GINT64_FORMAT,
                         ds_dtype_name(t), data, i, get(&y[0], i), ((int64_t *)y[1].data)[i],
                         values[i], indices[i]);
      break;
    }
  g_free(values);
  g_free(indices);
  tensor_free(&x);
  tensor_free(&y[0]);
  tensor_free(&y[1]);
}

/* ONNX MaxPool's second output: where each maximum was, in either storage order. */
static void test_pooling_indices(void)
{
  const DsDType dtypes[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64, DS_DTYPE_INT8, DS_DTYPE_UINT8,
                            DS_DTYPE_INT64};
  for (gsize i = 0; i < G_N_ELEMENTS(dtypes); i++) {
    DsDType t = dtypes[i];
    check_pool_indices(t, "(2, 3, 7, 9)", "kernel", "(2, 2)", "stride", "(2, 2)", "indices",
                       "row_major", NULL);
    check_pool_indices(t, "(2, 3, 7, 9)", "kernel", "(2, 2)", "stride", "(2, 2)", "indices",
                       "column_major", NULL);
  }
  /* Padding, uneven ends, dilation, 1-D and 3-D. */
  check_pool_indices(DS_DTYPE_FLOAT32, "(1, 2, 9, 8)", "kernel", "(3, 3)", "stride", "(2, 2)",
                     "pad", "(1, 0)", "pad_end", "(2, 1)", "indices", "column_major", NULL);
  check_pool_indices(DS_DTYPE_FLOAT32, "(2, 3, 11, 10)", "kernel", "(3, 2)", "dilate", "(2, 3)",
                     "stride", "(2, 1)", "pad", "(1, 2)", "indices", "row_major", NULL);
  check_pool_indices(DS_DTYPE_FLOAT32, "(2, 3, 17)", "kernel", "(4,)", "stride", "(3,)", "pad",
                     "(2,)", "indices", "column_major", NULL);
  check_pool_indices(DS_DTYPE_FLOAT32, "(1, 2, 5, 6, 7)", "kernel", "(2, 3, 2)", "stride",
                     "(2, 2, 1)", "indices", "column_major", NULL);
  check_pool_indices(DS_DTYPE_FLOAT32, "(1, 2, 5, 6, 7)", "kernel", "(2, 2, 2)", "dilate",
                     "(2, 1, 3)", "auto_pad", "same_upper", "indices", "row_major", NULL);
  /* Big enough to split planes across threads. */
  check_pool_indices(DS_DTYPE_FLOAT32, "(1, 64, 28, 28)", "kernel", "(3, 3)", "stride", "(2, 2)",
                     "pad", "(1, 1)", "indices", "row_major", NULL);

  /* Without the attribute, one output; indices belong to max pooling only. */
  g_autoptr(DsGraph) g = ds_graph_new();
  g_assert_cmpuint(node_new(g, "Pooling", "kernel", "(2, 2)", NULL)->n_outputs, ==, 1);
  parse_fails(DS_ERROR_INVALID, "indices", "Pooling", "kernel", "(2, 2)", "pool_type", "avg",
              "indices", "row_major", NULL);
  parse_fails(DS_ERROR_PARSE, "indices", "Pooling", "kernel", "(2, 2)", "indices", "diagonal",
              NULL);
}

/* ---- FullyConnected, dot, batch_dot -------------------------------------------------------- */

static void test_fully_connected_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[3], out[1];
  DsNode *n = node_new(g, "FullyConnected", "num_hidden", "10", NULL);
  const DsFullyConnectedParam *p = n->param;
  g_assert_true(p->flatten);
  g_assert_false(p->no_bias);
  infer_ok(n, (const char *[]){"(4, 3, 5, 2)", "?", "?"}, in, out);
  assert_shape(&out[0], "(4, 10)");
  assert_shape(&in[1], "(10, 30)");
  assert_shape(&in[2], "(10,)");
  DsNode *nf = node_new(g, "FullyConnected", "num_hidden", "768", "flatten", "False", "no_bias",
                        "True", NULL);
  g_assert_cmpuint(nf->n_inputs, ==, 2);
  infer_ok(nf, (const char *[]){"(1, 384, 3072)", "?"}, in, out);
  assert_shape(&out[0], "(1, 384, 768)");
  assert_shape(&in[1], "(768, 3072)");
  /* Features flow back from the weight, leading dims from the output. */
  in[0] = shp("(?, ?, ?)");
  in[1] = shp("(768, 64)");
  out[0] = shp("(2, 7, ?)");
  GError *error = NULL;
  g_assert_true(infer_err(nf, in, out, &error));
  assert_shape(&in[0], "(2, 7, 64)");
  assert_shape(&out[0], "(2, 7, 768)");
  /* (num_hidden, 1) biases are accepted, as MXNet does. */
  infer_ok(n, (const char *[]){"(4, 30)", "?", "(10, 1)"}, in, out);
  assert_shape(&in[2], "(10, 1)");
  infer_fails(n, (const char *[]){"(4, 30)", "(10, 31)", "?"}, "weight has shape (10, 31)");
  infer_fails(n, (const char *[]){"(4, 30)", "?", "(11,)"}, "bias");
  parse_fails(DS_ERROR_INVALID, "num_hidden", "FullyConnected", NULL);
  parse_fails(DS_ERROR_PARSE, "flatten", "FullyConnected", "num_hidden", "3", "flatten", "maybe",
              NULL);
}

static void check_fully_connected(const char *data, const char *hidden, const char *flatten,
                                  const char *no_bias)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "FullyConnected", "num_hidden", hidden, "flatten", flatten, "no_bias",
                       no_bias, NULL);
  const DsFullyConnectedParam *p = n->param;
  DsShape in[3], out[1];
  infer_ok(n, (const char *[]){data, "?", "?"}, in, out);
  g_autofree char *ws = ds_shape_to_string(&in[1]);
  g_autofree char *os = ds_shape_to_string(&out[0]);
  g_autofree char *bs = g_strdup_printf("(%s,)", hidden);
  DsTensor t[3] = {rtensor(data, -1, 1), rtensor(ws, -1, 1), rtensor(bs, -1, 1)};
  DsTensor y = ftensor(os);
  run_ok(DS_OP_FULLY_CONNECTED, p, t, p->no_bias ? 2 : 3, &y, 1);
  int64_t rows = ds_tensor_numel(&y) / p->num_hidden, k = in[1].dims[1].value;
  double *want = dalloc(ds_tensor_numel(&y));
  for (int64_t r = 0; r < rows; r++)
    for (int64_t h = 0; h < p->num_hidden; h++) {
      double s = p->no_bias ? 0.0 : fp(&t[2])[h];
      for (int64_t i = 0; i < k; i++)
        s += (double)fp(&t[0])[r * k + i] * fp(&t[1])[h * k + i];
      want[r * p->num_hidden + h] = s;
    }
  close_to(y.data, want, ds_tensor_numel(&y), 1e-4, 1e-4, "FullyConnected");
  g_free(want);
  tensors_free(t, 3);
  g_free(y.data);
}

static void test_fully_connected_kernel(void)
{
  check_fully_connected("(4, 3, 5, 2)", "10", "True", "False");
  check_fully_connected("(1, 64)", "33", "True", "False"); /* batch 1: the sgemv route */
  check_fully_connected("(1, 64)", "33", "True", "True");
  check_fully_connected("(2, 5, 16)", "7", "False", "False");
  check_fully_connected("(1, 1, 16)", "7", "False", "True");
  check_fully_connected("(300, 40)", "200", "True", "False"); /* bias rows on the pool */
}

static void test_dot_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[2], out[1];
  DsNode *n = node_new(g, "dot", NULL);
  infer_ok(n, (const char *[]){"(2, 3, 4)", "(4, 5, 6)"}, in, out);
  assert_shape(&out[0], "(2, 3, 5, 6)");
  infer_ok(n, (const char *[]){"(7,)", "(7,)"}, in, out);
  assert_shape(&out[0], "(1,)");
  infer_ok(n, (const char *[]){"(7,)", "(7, 3)"}, in, out);
  assert_shape(&out[0], "(3,)");
  infer_ok(n, (const char *[]){"(?, 4)", "(?, 5)"}, in, out);
  assert_shape(&out[0], "(?, 5)");
  DsNode *nt = node_new(g, "dot", "transpose_a", "True", "transpose_b", "True", NULL);
  infer_ok(nt, (const char *[]){"(4, 2, 3)", "(5, 6, 4)"}, in, out);
  assert_shape(&out[0], "(2, 3, 5, 6)");
  /* The contracted dim fills across. */
  infer_ok(nt, (const char *[]){"(?, 2)", "(5, 6)"}, in, out);
  assert_shape(&in[0], "(6, 2)");
  infer_fails(n, (const char *[]){"(2, 3)", "(4, 5)"}, "do not multiply");
  infer_fails(nt, (const char *[]){"(3,)", "(3,)"}, "cannot transpose vectors");

  DsNode *nb = node_new(g, "batch_dot", "transpose_b", "True", NULL);
  infer_ok(nb, (const char *[]){"(12, 384, 64)", "(12, 384, 64)"}, in, out);
  assert_shape(&out[0], "(12, 384, 384)");
  infer_ok(nb, (const char *[]){"(?, 5, 8)", "(3, ?, 8)"}, in, out);
  assert_shape(&out[0], "(3, 5, ?)");
  assert_shape(&in[0], "(3, 5, 8)");
  infer_ok(nb, (const char *[]){"(2, 3, 5, 8)", "(2, 3, 4, 8)"}, in, out);
  assert_shape(&out[0], "(2, 3, 5, 4)");
  infer_fails(nb, (const char *[]){"(12, 384, 64)", "(11, 384, 64)"}, "batch dim 0");
  infer_fails(nb, (const char *[]){"(12, 384, 64)", "(12, 384, 63)"}, "do not multiply");
  infer_fails(nb, (const char *[]){"(384, 64)", "(384, 64)"}, "at least 3");
}

static void check_dot(DsOpId id, const char *a_shape, const char *b_shape, const char *ta,
                      const char *tb)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, id == DS_OP_DOT ? "dot" : "batch_dot", "transpose_a", ta, "transpose_b",
                       tb, NULL);
  const DsDotParam *p = n->param;
  DsShape in[2], out[1];
  infer_ok(n, (const char *[]){a_shape, b_shape}, in, out);
  g_autofree char *os = ds_shape_to_string(&out[0]);
  DsTensor t[2] = {rtensor(a_shape, -1, 1), rtensor(b_shape, -1, 1)};
  DsTensor y = ftensor(os);
  run_ok(id, p, t, 2, &y, 1);
  double *want = dalloc(ds_tensor_numel(&y));
  if (id == DS_OP_DOT) {
    /* Flattened as MXNet does: lhs (M, K) or (K, M); rhs (K, N) or (N, K). */
    int64_t k = p->transpose_a ? t[0].shape[0] : t[0].shape[t[0].ndim - 1];
    int64_t m = ds_tensor_numel(&t[0]) / k, nn = ds_tensor_numel(&t[1]) / k;
    ref_gemm(p->transpose_a, p->transpose_b, m, nn, k, t[0].data, p->transpose_a ? m : k, t[1].data,
             p->transpose_b ? k : nn, want);
  } else {
    int nd = t[0].ndim;
    int64_t batch = ds_shape_span(t[0].shape, 0, nd - 2);
    int64_t ar = t[0].shape[nd - 2], ac = t[0].shape[nd - 1];
    int64_t br = t[1].shape[nd - 2], bc = t[1].shape[nd - 1];
    int64_t m = p->transpose_a ? ac : ar, k = p->transpose_a ? ar : ac;
    int64_t nn = p->transpose_b ? br : bc;
    for (int64_t b = 0; b < batch; b++)
      ref_gemm(p->transpose_a, p->transpose_b, m, nn, k, fp(&t[0]) + b * ar * ac, ac,
               fp(&t[1]) + b * br * bc, bc, want + b * m * nn);
  }
  close_to(y.data, want, ds_tensor_numel(&y), 1e-4, 1e-4, id == DS_OP_DOT ? "dot" : "batch_dot");
  g_free(want);
  tensors_free(t, 2);
  g_free(y.data);
}

static void test_dot_kernel(void)
{
  const char *const f[] = {"False", "True"};
  for (int t = 0; t < 4; t++) {
    const char *ta = f[t & 1], *tb = f[(t >> 1) & 1];
    check_dot(DS_OP_DOT, (t & 1) ? "(6, 5)" : "(5, 6)", (t & 2) ? "(7, 6)" : "(6, 7)", ta, tb);
    check_dot(DS_OP_BATCH_DOT, (t & 1) ? "(3, 6, 5)" : "(3, 5, 6)",
              (t & 2) ? "(3, 7, 6)" : "(3, 6, 7)", ta, tb);
  }
  check_dot(DS_OP_DOT, "(2, 3, 4)", "(4, 5, 2)", "False", "False");
  check_dot(DS_OP_DOT, "(4, 2, 3)", "(5, 2, 4)", "True", "True");
  check_dot(DS_OP_DOT, "(9,)", "(9,)", "False", "False");
  check_dot(DS_OP_DOT, "(9,)", "(9, 4)", "False", "False");
  check_dot(DS_OP_DOT, "(4, 9)", "(9,)", "False", "False");
  check_dot(DS_OP_DOT, "(1, 9)", "(9, 4)", "False", "False");
  check_dot(DS_OP_BATCH_DOT, "(2, 2, 1, 6)", "(2, 2, 5, 6)", "False", "True");
  check_dot(DS_OP_BATCH_DOT, "(2, 3, 4, 6)", "(2, 3, 6, 1)", "False", "False");
}

/* ---- BatchNorm, LayerNorm ------------------------------------------------------------------- */

static void test_batch_norm_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[5], out[3];
  DsNode *n = node_new(g, "BatchNorm", NULL);
  const DsBatchNormParam *p = n->param;
  g_assert_true(p->fix_gamma);
  g_assert_cmpfloat(p->eps, ==, 1e-3);
  g_assert_cmpfloat(p->momentum, ==, 0.9);
  g_assert_cmpint(p->axis, ==, 1);
  g_assert_false(p->use_global_stats);
  g_assert_cmpuint(n->n_inputs, ==, 5);
  g_assert_cmpuint(n->n_outputs, ==, 3);
  g_assert_cmpint(n->op->num_visible_outputs(p), ==, 1);
  infer_ok(n, (const char *[]){"(2, 64, 7, 7)", "?", "?", "?", "?"}, in, out);
  for (int i = 1; i < 5; i++)
    assert_shape(&in[i], "(64,)");
  assert_shape(&out[0], "(2, 64, 7, 7)");
  assert_shape(&out[1], "(64,)");
  assert_shape(&out[2], "(64,)");
  /* C comes back from a parameter when the data's channel dim is unknown. */
  infer_ok(n, (const char *[]){"(2, ?, 7, 7)", "?", "?", "(32,)", "?"}, in, out);
  assert_shape(&in[0], "(2, 32, 7, 7)");
  assert_shape(&in[1], "(32,)");
  DsNode *na = node_new(g, "BatchNorm", "axis", "-1", "output_mean_var", "True", "fix_gamma",
                        "False", "eps", "1e-5", NULL);
  g_assert_cmpint(n->op->num_visible_outputs(na->param), ==, 3);
  infer_ok(na, (const char *[]){"(2, 5, 6)", "?", "?", "?", "?"}, in, out);
  assert_shape(&in[1], "(6,)");
  infer_fails(n, (const char *[]){"(2, 64, 7, 7)", "(63,)", "?", "?", "?"}, "gamma");
  DsNode *nb = node_new(g, "BatchNorm", "axis", "4", NULL);
  infer_fails(nb, (const char *[]){"(2, 64, 7, 7)", "?", "?", "?", "?"}, "axis 4");

  /* dtypes: float16 data keeps float32 statistics. */
  DsDType tin[5] = {DS_DTYPE_FLOAT16, DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN,
                    DS_DTYPE_UNKNOWN};
  DsDType tout[3] = {DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(n->op->infer_type(n, n->param, tin, tout, &error));
  g_assert_cmpint(tin[1], ==, DS_DTYPE_FLOAT32);
  g_assert_cmpint(tout[0], ==, DS_DTYPE_FLOAT16);
  g_assert_cmpint(tout[2], ==, DS_DTYPE_FLOAT32);
}

static void check_batch_norm(const char *data, int axis, gboolean fix_gamma)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  g_autofree char *axis_s = g_strdup_printf("%d", axis);
  DsNode *n = node_new(g, "BatchNorm", "axis", axis_s, "fix_gamma", fix_gamma ? "True" : "False",
                       "eps", "2e-5", NULL);
  const DsBatchNormParam *p = n->param;
  DsShape in[5], out[3];
  infer_ok(n, (const char *[]){data, "?", "?", "?", "?"}, in, out);
  g_autofree char *cs = ds_shape_to_string(&in[1]);
  DsTensor t[5] = {rtensor(data, -3, 3), rtensor(cs, 0.5, 2), rtensor(cs, -1, 1),
                   rtensor(cs, -1, 1), rtensor(cs, 0.1, 2)};
  DsTensor y[3] = {ftensor(data), ftensor(cs), ftensor(cs)};
  run_ok(DS_OP_BATCH_NORM, p, t, 5, y, 3);
  int ax = axis < 0 ? axis + t[0].ndim : axis;
  int64_t outer = ds_shape_span(t[0].shape, 0, ax), c_n = t[0].shape[ax];
  int64_t inner = ds_shape_span(t[0].shape, ax + 1, t[0].ndim);
  double *want = dalloc(ds_tensor_numel(&t[0]));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t c = 0; c < c_n; c++)
      for (int64_t i = 0; i < inner; i++) {
        int64_t k = (o * c_n + c) * inner + i;
        double gamma = fix_gamma ? 1.0 : fp(&t[1])[c];
        want[k] = (fp(&t[0])[k] - fp(&t[3])[c]) / sqrt(fp(&t[4])[c] + 2e-5) * gamma + fp(&t[2])[c];
      }
  close_to(y[0].data, want, ds_tensor_numel(&t[0]), 1e-5, 1e-5, "BatchNorm");
  double *stats = dalloc(c_n);
  for (int64_t c = 0; c < c_n; c++)
    stats[c] = fp(&t[3])[c];
  close_to(y[1].data, stats, c_n, 0, 0, "BatchNorm mean");
  for (int64_t c = 0; c < c_n; c++)
    stats[c] = fp(&t[4])[c];
  close_to(y[2].data, stats, c_n, 0, 0, "BatchNorm var");
  g_free(stats);
  g_free(want);
  tensors_free(t, 5);
  tensors_free(y, 3);
}

static void test_batch_norm_kernel(void)
{
  check_batch_norm("(2, 8, 5, 7)", 1, TRUE);
  check_batch_norm("(2, 8, 5, 7)", 1, FALSE);
  check_batch_norm("(3, 4, 16)", -1, FALSE); /* channels innermost */
  check_batch_norm("(6, 10)", 1, FALSE);
  check_batch_norm("(2, 64, 28, 28)", 1, FALSE); /* planes on the pool */
}

static void test_layer_norm_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[3], out[3];
  DsNode *n = node_new(g, "LayerNorm", NULL);
  const DsLayerNormParam *p = n->param;
  g_assert_cmpint(p->axis, ==, -1);
  g_assert_cmpfloat(p->eps, ==, 1e-5);
  g_assert_false(p->output_mean_var);
  g_assert_cmpint(n->op->num_visible_outputs(p), ==, 1);
  infer_ok(n, (const char *[]){"(1, 384, 768)", "?", "?"}, in, out);
  assert_shape(&in[1], "(768,)");
  assert_shape(&in[2], "(768,)");
  assert_shape(&out[0], "(1, 384, 768)");
  assert_shape(&out[1], "(1, 384, 1)");
  assert_shape(&out[2], "(1, 384, 1)");
  infer_ok(n, (const char *[]){"(1, 384, ?)", "(768,)", "?"}, in, out);
  assert_shape(&in[0], "(1, 384, 768)");
  DsNode *n1 = node_new(g, "LayerNorm", "axis", "1", "eps", "1e-12", NULL);
  infer_ok(n1, (const char *[]){"(2, 5, 6)", "?", "?"}, in, out);
  assert_shape(&out[1], "(2, 1, 6)");
  infer_fails(n, (const char *[]){"(1, 384, 768)", "(767,)", "?"}, "gamma");
}

static void check_layer_norm(const char *data, int axis)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  g_autofree char *axis_s = g_strdup_printf("%d", axis);
  DsNode *n =
      node_new(g, "LayerNorm", "axis", axis_s, "eps", "1e-5", "output_mean_var", "True", NULL);
  DsShape in[3], out[3];
  infer_ok(n, (const char *[]){data, "?", "?"}, in, out);
  g_autofree char *cs = ds_shape_to_string(&in[1]);
  g_autofree char *ms = ds_shape_to_string(&out[1]);
  DsTensor t[3] = {rtensor(data, -2, 3), rtensor(cs, 0.5, 2), rtensor(cs, -1, 1)};
  DsTensor y[3] = {ftensor(data), ftensor(ms), ftensor(ms)};
  run_ok(DS_OP_LAYER_NORM, n->param, t, 3, y, 3);
  int ax = axis < 0 ? axis + t[0].ndim : axis;
  int64_t outer = ds_shape_span(t[0].shape, 0, ax), len = t[0].shape[ax];
  int64_t inner = ds_shape_span(t[0].shape, ax + 1, t[0].ndim);
  double *want = dalloc(ds_tensor_numel(&t[0])), *mean = dalloc(outer * inner),
         *std = dalloc(outer * inner);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      double s = 0, ss = 0;
      for (int64_t k = 0; k < len; k++)
        s += fp(&t[0])[(o * len + k) * inner + i];
      double m = s / len;
      for (int64_t k = 0; k < len; k++) {
        double d = fp(&t[0])[(o * len + k) * inner + i] - m;
        ss += d * d;
      }
      double sd = sqrt(ss / len + 1e-5);
      mean[o * inner + i] = m;
      std[o * inner + i] = sd;
      for (int64_t k = 0; k < len; k++) {
        int64_t j = (o * len + k) * inner + i;
        want[j] = (fp(&t[0])[j] - m) / sd * fp(&t[1])[k] + fp(&t[2])[k];
      }
    }
  close_to(y[0].data, want, ds_tensor_numel(&t[0]), 1e-5, 1e-5, "LayerNorm");
  close_to(y[1].data, mean, outer * inner, 1e-6, 1e-5, "LayerNorm mean");
  close_to(y[2].data, std, outer * inner, 1e-6, 1e-5, "LayerNorm std");
  g_free(want);
  g_free(mean);
  g_free(std);
  tensors_free(t, 3);
  tensors_free(y, 3);
}

static void test_layer_norm_kernel(void)
{
  check_layer_norm("(2, 7, 33)", -1);
  check_layer_norm("(2, 9, 70)", 1); /* strided path with a partial block */
  check_layer_norm("(3, 4)", 0);
  check_layer_norm("(256, 768)", -1); /* rows on the pool */
}

/* ---- Activation, LeakyReLU --------------------------------------------------------------------
 */

static double ref_act(const char *type, double x, double slope)
{
  if (strcmp(type, "relu") == 0)
    return isnan(x) ? x : x > 0 ? x : 0;
  if (strcmp(type, "sigmoid") == 0)
    return 1.0 / (1.0 + exp(-x));
  if (strcmp(type, "tanh") == 0)
    return tanh(x);
  if (strcmp(type, "softrelu") == 0)
    return x > 20 ? x : log1p(exp(x));
  if (strcmp(type, "softsign") == 0)
    return x / (1 + fabs(x));
  if (strcmp(type, "log_sigmoid") == 0)
    return -(-x > 20 ? -x : log1p(exp(-x)));
  if (strcmp(type, "mish") == 0)
    return x * tanh(x > 20 ? x : log1p(exp(x)));
  if (strcmp(type, "leaky") == 0 || strcmp(type, "rrelu") == 0)
    return x > 0 ? x : x * slope;
  if (strcmp(type, "elu") == 0)
    return x > 0 ? x : slope * expm1(x);
  if (strcmp(type, "selu") == 0)
    return 1.0507009873554804934 * (x > 0 ? x : 1.6732632423543772848 * expm1(x));
  if (strcmp(type, "gelu") == 0)
    return 0.5 * x * (1 + erf(x / sqrt(2.0)));
  g_assert_not_reached();
}

static void check_unary(const char *op, const char *type, const char *slope_attr, double slope)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = strcmp(op, "Activation") == 0
                  ? node_new(g, op, "act_type", type, NULL)
                  : node_new(g, op, "act_type", type, "slope", slope_attr, NULL);
  DsShape in[1], out[2];
  infer_ok(n, (const char *[]){"(3, 50001)"}, in, out);
  assert_shape(&out[0], "(3, 50001)");
  DsTensor x = rtensor("(3, 50001)", -12, 12);
  float *xv = x.data;
  const float special[] = {0.0f, -0.0f, 1e-6f, -1e-6f, 25.0f, -25.0f, 90.0f, -90.0f, NAN};
  for (gsize i = 0; i < G_N_ELEMENTS(special); i++)
    xv[i * 997] = special[i];
  DsTensor y[2] = {ftensor("(3, 50001)"), ftensor("(3, 50001)")};
  int n_out = (int)n->n_outputs;
  DsOpId id = strcmp(op, "Activation") == 0 ? DS_OP_ACTIVATION : DS_OP_LEAKY_RELU;
  run_ok(id, n->param, &x, 1, y, n_out);
  int64_t numel = ds_tensor_numel(&x);
  double *want = dalloc(numel);
  for (int64_t i = 0; i < numel; i++)
    want[i] = ref_act(type, xv[i], slope);
  g_autofree char *what = g_strdup_printf("%s %s", op, type);
  close_to(y[0].data, want, numel, 2e-6, 2e-6, what);
  if (n_out == 2) { /* rrelu's mask: the mean slope used */
    for (int64_t i = 0; i < numel; i++)
      want[i] = (float)slope;
    close_to(y[1].data, want, numel, 0, 0, "rrelu mask");
  }
  g_free(want);
  g_free(x.data);
  tensors_free(y, 2);
}

static void test_activation(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "Activation", "act_type", "relu", NULL);
  DsShape in[1], out[1];
  in[0] = DS_SHAPE_UNKNOWN;
  out[0] = shp("(2, 3)");
  GError *error = NULL;
  g_assert_true(infer_err(n, in, out, &error));
  assert_shape(&in[0], "(2, 3)");
  parse_fails(DS_ERROR_INVALID, "act_type", "Activation", NULL);
  parse_fails(DS_ERROR_PARSE, "act_type='swish'", "Activation", "act_type", "swish", NULL);
  const char *const types[] = {"relu",     "sigmoid",     "tanh", "softrelu",
                               "softsign", "log_sigmoid", "mish"};
  for (gsize i = 0; i < G_N_ELEMENTS(types); i++)
    check_unary("Activation", types[i], NULL, 0);
}

static void test_leaky_relu(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "LeakyReLU", NULL);
  const DsLeakyReLUParam *p = n->param;
  g_assert_cmpint(p->act_type, ==, DS_LEAKY_LEAKY);
  g_assert_cmpfloat(p->slope, ==, 0.25);
  g_assert_cmpfloat(p->lower_bound, ==, 0.125);
  g_assert_cmpfloat(p->upper_bound, ==, 0.334);
  g_assert_cmpuint(n->n_inputs, ==, 1);
  check_unary("LeakyReLU", "leaky", "0.1", 0.1);
  check_unary("LeakyReLU", "elu", "0.7", 0.7);
  check_unary("LeakyReLU", "selu", "0.25", 0.25);
  check_unary("LeakyReLU", "gelu", "0.25", 0.25);
  check_unary("LeakyReLU", "rrelu", "0.25", (0.125 + 0.334) / 2);

  /* prelu: gamma per channel, filled from the data's axis 1, or one shared slope. */
  DsNode *np = node_new(g, "LeakyReLU", "act_type", "prelu", NULL);
  g_assert_cmpuint(np->n_inputs, ==, 2);
  DsShape in[2], out[1];
  infer_ok(np, (const char *[]){"(2, 5, 3, 4)", "?"}, in, out);
  assert_shape(&in[1], "(5,)");
  infer_ok(np, (const char *[]){"(2, 5, 3, 4)", "(1,)"}, in, out);
  infer_fails(np, (const char *[]){"(2, 5, 3, 4)", "(7,)"}, "gamma of shape (7,)");
  for (int shared = 0; shared < 2; shared++) {
    DsTensor t[2] = {rtensor("(2, 5, 3, 4)", -2, 2), rtensor(shared ? "(1,)" : "(5,)", 0, 1)};
    DsTensor y = ftensor("(2, 5, 3, 4)");
    run_ok(DS_OP_LEAKY_RELU, np->param, t, 2, &y, 1);
    double want[120];
    for (int i = 0; i < 120; i++) {
      double x = fp(&t[0])[i], gm = fp(&t[1])[shared ? 0 : (i / 12) % 5];
      want[i] = x > 0 ? x : x * gm;
    }
    close_to(y.data, want, 120, 0, 1e-6, "prelu");
    tensors_free(t, 2);
    g_free(y.data);
  }
}

/* ---- softmax, log_softmax, SoftmaxOutput ------------------------------------------------------
 */

static void test_softmax_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[2], out[1];
  DsNode *n = node_new(g, "softmax", NULL);
  const DsSoftmaxParam *p = n->param;
  g_assert_cmpint(p->axis, ==, -1);
  g_assert_cmpfloat(p->temperature, ==, 1.0);
  g_assert_cmpint(p->dtype, ==, DS_DTYPE_UNKNOWN);
  g_assert_false(p->use_length);
  infer_ok(n, (const char *[]){"(2, 3, 4)"}, in, out);
  assert_shape(&out[0], "(2, 3, 4)");
  DsNode *nl = node_new(g, "softmax", "axis", "1", "use_length", "True", NULL);
  g_assert_cmpuint(nl->n_inputs, ==, 2);
  infer_ok(nl, (const char *[]){"(2, 3, 4)", "?"}, in, out);
  assert_shape(&in[1], "(2, 4)");
  infer_fails(n, (const char *[]){"()"}, "axis -1 is out of range");
  infer_fails(nl, (const char *[]){"(2, 3, 4)", "(2, 3)"}, "length");

  DsNode *nd = node_new(g, "softmax", "dtype", "float64", NULL);
  DsDType tin[1] = {DS_DTYPE_FLOAT32}, tout[1] = {DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(nd->op->infer_type(nd, nd->param, tin, tout, &error));
  g_assert_cmpint(tout[0], ==, DS_DTYPE_FLOAT64);
  parse_fails(DS_ERROR_INVALID, "temperature", "softmax", "temperature", "0", NULL);

  DsNode *so = node_new(g, "SoftmaxOutput", NULL);
  infer_ok(so, (const char *[]){"(32, 10000)", "?"}, in, out);
  assert_shape(&in[1], "(32,)");
  assert_shape(&out[0], "(32, 10000)");
  infer_ok(so, (const char *[]){"(32, 10)", "(32, 10)"}, in, out); /* probability labels */
  DsNode *sm = node_new(g, "SoftmaxOutput", "multi_output", "True", NULL);
  infer_ok(sm, (const char *[]){"(2, 5, 3, 4)", "?"}, in, out);
  assert_shape(&in[1], "(2, 12)");
  infer_ok(sm, (const char *[]){"(2, 5, 3, 4)", "(2, 3, 4)"}, in, out);
  infer_ok(sm, (const char *[]){"(2, 5, 3, 4)", "(2, 1, 3, 4)"}, in, out);
  infer_fails(sm, (const char *[]){"(2, 5, 3, 4)", "(2, 7)"}, "label has shape (2, 7)");
  infer_fails(so, (const char *[]){"(32, 10)", "(31,)"}, "label");
}

static void ref_softmax(const float *x, double *y, int64_t outer, int64_t len, int64_t inner,
                        double t, bool log_sm, const int64_t *lens)
{
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t n = lens != NULL ? lens[o * inner + i] : len;
      double m = -INFINITY, s = 0;
      for (int64_t k = 0; k < n; k++)
        m = MAX(m, x[(o * len + k) * inner + i]);
      for (int64_t k = 0; k < n; k++)
        s += exp((x[(o * len + k) * inner + i] - m) / t);
      for (int64_t k = 0; k < len; k++) {
        double v = x[(o * len + k) * inner + i];
        y[(o * len + k) * inner + i] = k >= n   ? 0.0
                                       : log_sm ? (v - m) / t - log(s)
                                                : exp((v - m) / t) / s;
      }
    }
}

static void check_softmax(const char *op, const char *data, int axis, const char *temp,
                          bool with_length)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  g_autofree char *axis_s = g_strdup_printf("%d", axis);
  DsNode *n = node_new(g, op, "axis", axis_s, "temperature", temp, "use_length",
                       with_length ? "True" : "False", NULL);
  DsShape in[2], out[1];
  infer_ok(n, (const char *[]){data, "?"}, in, out);
  DsTensor t[2] = {rtensor(data, -5, 5), ftensor("(1,)")};
  int ax = axis < 0 ? axis + t[0].ndim : axis;
  int64_t outer = ds_shape_span(t[0].shape, 0, ax), len = t[0].shape[ax];
  int64_t inner = ds_shape_span(t[0].shape, ax + 1, t[0].ndim);
  int64_t *lens = NULL;
  if (with_length) {
    g_autofree char *ls = ds_shape_to_string(&in[1]);
    g_free(t[1].data);
    t[1] = tensor_new(DS_DTYPE_INT32, ls);
    lens = g_new(int64_t, outer * inner);
    for (int64_t i = 0; i < outer * inner; i++) {
      /* Include 0, the full length, and out-of-range lengths (clamped). */
      int32_t v = (int32_t)g_rand_int_range(rng, -1, (gint32)len + 2);
      ((int32_t *)t[1].data)[i] = v;
      lens[i] = CLAMP(v, 0, len);
    }
  }
  DsTensor y = ftensor(data);
  DsOpId id = strcmp(op, "softmax") == 0 ? DS_OP_SOFTMAX : DS_OP_LOG_SOFTMAX;
  run_ok(id, n->param, t, with_length ? 2 : 1, &y, 1);
  double *want = dalloc(ds_tensor_numel(&y));
  ref_softmax(t[0].data, want, outer, len, inner, g_ascii_strtod(temp, NULL),
              id == DS_OP_LOG_SOFTMAX, lens);
  g_autofree char *what = g_strdup_printf("%s %s axis %d", op, data, axis);
  close_to(y.data, want, ds_tensor_numel(&y), 1e-6, 1e-5, what);
  g_free(want);
  g_free(lens);
  tensors_free(t, 2);
  g_free(y.data);
}

static void test_softmax_kernel(void)
{
  const char *const ops[] = {"softmax", "log_softmax"};
  for (int i = 0; i < 2; i++) {
    check_softmax(ops[i], "(3, 4, 37)", -1, "1", false);
    check_softmax(ops[i], "(3, 37, 70)", 1, "1", false); /* strided, partial block */
    check_softmax(ops[i], "(5, 6)", 0, "2.5", false);
    check_softmax(ops[i], "(3, 4, 37)", -1, "0.5", true);
    check_softmax(ops[i], "(3, 9, 70)", 1, "1", true);
    check_softmax(ops[i], "(12, 384, 384)", -1, "1", false); /* rows on the pool */
  }
}

static void check_softmax_output(const char *data, const char *multi, const char *preserve)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "SoftmaxOutput", "multi_output", multi, "preserve_shape", preserve, NULL);
  const DsSoftmaxOutputParam *p = n->param;
  DsShape in[2], out[1];
  infer_ok(n, (const char *[]){data, "?"}, in, out);
  g_autofree char *ls = ds_shape_to_string(&in[1]);
  DsTensor t[2] = {rtensor(data, -4, 4), ftensor(ls)};
  DsTensor y = ftensor(data);
  run_ok(DS_OP_SOFTMAX_OUTPUT, p, t, 2, &y, 1);
  int64_t numel = ds_tensor_numel(&y), outer, len, inner;
  if (p->multi_output) {
    outer = t[0].shape[0];
    len = t[0].shape[1];
    inner = numel / outer / len;
  } else if (p->preserve_shape) {
    len = t[0].shape[t[0].ndim - 1];
    outer = numel / len;
    inner = 1;
  } else {
    outer = t[0].shape[0];
    len = numel / outer;
    inner = 1;
  }
  double *want = dalloc(numel);
  ref_softmax(t[0].data, want, outer, len, inner, 1.0, false, NULL);
  close_to(y.data, want, numel, 1e-6, 1e-5, "SoftmaxOutput");
  g_free(want);
  tensors_free(t, 2);
  g_free(y.data);
}

static void test_softmax_output_kernel(void)
{
  check_softmax_output("(7, 13)", "False", "False");
  check_softmax_output("(3, 4, 5)", "False", "False"); /* over everything but axis 0 */
  check_softmax_output("(3, 4, 5)", "False", "True");
  check_softmax_output("(2, 5, 3, 4)", "True", "False");
}

/* ---- Dropout, Embedding --------------------------------------------------------------------- */

static void test_dropout(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "Dropout", "p", "0.1", "axes", "()", NULL);
  const DsDropoutParam *p = n->param;
  g_assert_cmpint(p->mode, ==, DS_DROPOUT_TRAINING);
  g_assert_cmpint(p->n_axes, ==, 0);
  g_assert_cmpuint(n->n_outputs, ==, 2);
  g_assert_cmpint(n->op->num_visible_outputs(p), ==, 1);
  DsShape in[1], out[2];
  infer_ok(n, (const char *[]){"(2, 3, 4)"}, in, out);
  assert_shape(&out[0], "(2, 3, 4)");
  assert_shape(&out[1], "(2, 3, 4)");
  DsNode *na = node_new(g, "Dropout", "axes", "(1, -1)", NULL);
  infer_ok(na, (const char *[]){"(2, 3, 4)"}, in, out);
  assert_shape(&out[1], "(2, 1, 1)");
  g_assert_cmpfloat(((const DsDropoutParam *)na->param)->p, ==, 0.5);
  parse_fails(DS_ERROR_INVALID, "p=1.5", "Dropout", "p", "1.5", NULL);

  DsTensor x = rtensor("(2, 3, 4)", -1, 1), y[2] = {ftensor("(2, 3, 4)"), ftensor("(2, 1, 1)")};
  run_ok(DS_OP_DROPOUT, na->param, &x, 1, y, 2);
  g_assert_cmpmem(x.data, 24 * sizeof(float), y[0].data, 24 * sizeof(float));
  double ones[2] = {1.0, 1.0};
  close_to(y[1].data, ones, 2, 0, 0, "Dropout mask");
  /* Large enough for the copy and the fill to split across threads. */
  DsTensor bx = rtensor("(3, 200, 301)", -1, 1),
           by[2] = {ftensor("(3, 200, 301)"), ftensor("(3, 200, 301)")};
  run_ok(DS_OP_DROPOUT, n->param, &bx, 1, by, 2);
  g_assert_cmpmem(bx.data, ds_tensor_nbytes(&bx), by[0].data, ds_tensor_nbytes(&bx));
  for (int64_t i = 0; i < ds_tensor_numel(&by[1]); i++)
    g_assert_cmpfloat(fp(&by[1])[i], ==, 1.0f);
  g_free(bx.data);
  tensors_free(by, 2);
  /* mode='always' would drop at random at inference: refused. */
  DsNode *nal = node_new(g, "Dropout", "mode", "always", NULL);
  g_assert_cmpint(run_kernel_on(DS_OP_DROPOUT, nal->param, &x, 1, y, 2, NULL), ==,
                  DS_STATUS_UNSUPPORTED);
  g_free(x.data);
  tensors_free(y, 2);
}

static void test_embedding(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "Embedding", "input_dim", "10", "output_dim", "6", NULL);
  const DsEmbeddingParam *p = n->param;
  g_assert_cmpint(p->dtype, ==, DS_DTYPE_FLOAT32);
  DsShape in[2], out[1];
  infer_ok(n, (const char *[]){"(3, 4)", "?"}, in, out);
  assert_shape(&in[1], "(10, 6)");
  assert_shape(&out[0], "(3, 4, 6)");
  in[0] = DS_SHAPE_UNKNOWN;
  in[1] = DS_SHAPE_UNKNOWN;
  out[0] = shp("(5, 6)");
  GError *error = NULL;
  g_assert_true(infer_err(n, in, out, &error));
  assert_shape(&in[0], "(5,)");
  infer_fails(n, (const char *[]){"(3, 4)", "(10, 7)"}, "weight has shape (10, 7)");
  parse_fails(DS_ERROR_INVALID, "input_dim", "Embedding", "output_dim", "6", NULL);

  DsDType tin[2] = {DS_DTYPE_INT32, DS_DTYPE_UNKNOWN}, tout[1] = {DS_DTYPE_UNKNOWN};
  g_assert_true(n->op->infer_type(n, n->param, tin, tout, &error));
  g_assert_cmpint(tin[0], ==, DS_DTYPE_INT32);
  g_assert_cmpint(tin[1], ==, DS_DTYPE_FLOAT32);
  g_assert_cmpint(tout[0], ==, DS_DTYPE_FLOAT32);

  /* Indices are truncated and clipped to [0, input_dim), as MXNet's Embedding does. */
  const float idx_f[] = {0, 3, 9, 9.7f, 10, 25, -1, -0.5f, 2.9f, NAN, 5, 1};
  const int64_t rows[] = {0, 3, 9, 9, 9, 9, 0, 0, 2, 0, 5, 1};
  DsTensor w = rtensor("(10, 6)", -1, 1);
  for (int dt = 0; dt < 3; dt++) {
    DsTensor t[2] = {tensor_new(dt == 0   ? DS_DTYPE_FLOAT32
                                : dt == 1 ? DS_DTYPE_INT32
                                          : DS_DTYPE_INT64,
                                "(3, 4)"),
                     w};
    for (int i = 0; i < 12; i++) {
      if (dt == 0)
        ((float *)t[0].data)[i] = idx_f[i];
      else if (dt == 1)
        ((int32_t *)t[0].data)[i] = isnan(idx_f[i]) ? 0 : (int32_t)idx_f[i];
      else
        ((int64_t *)t[0].data)[i] = isnan(idx_f[i]) ? 0 : (int64_t)idx_f[i];
    }
    DsTensor y = ftensor("(3, 4, 6)");
    run_ok(DS_OP_EMBEDDING, n->param, t, 2, &y, 1);
    double want[72];
    for (int i = 0; i < 12; i++)
      for (int j = 0; j < 6; j++)
        want[i * 6 + j] = fp(&w)[rows[i] * 6 + j];
    close_to(y.data, want, 72, 0, 0, "Embedding");
    g_free(t[0].data);
    g_free(y.data);
  }
  g_free(w.data);
}

/* ---- RNN ---------------------------------------------------------------------------------- */

static void test_rnn_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[5], out[3];
  /* mms_lstm_ptb: 2-layer LSTM, H = 200, embedding 200; begin states (2, 0, 200) where 0 is
   * unknown. */
  DsNode *n = node_new(g, "RNN", "bidirectional", "False", "mode", "lstm", "num_layers", "2", "p",
                       "0.0", "state_outputs", "False", "state_size", "200", NULL);
  g_assert_cmpuint(n->n_inputs, ==, 4);
  g_assert_cmpuint(n->n_outputs, ==, 1);
  infer_ok(n, (const char *[]){"(35, 32, 200)", "?", "(2, ?, 200)", "(2, ?, 200)"}, in, out);
  assert_shape(&in[1], "(643200,)");
  assert_shape(&in[2], "(2, 32, 200)");
  assert_shape(&in[3], "(2, 32, 200)");
  assert_shape(&out[0], "(35, 32, 200)");
  /* The batch comes back from a state when the data does not know it. */
  infer_ok(n, (const char *[]){"(35, ?, 200)", "?", "(2, 8, 200)", "?"}, in, out);
  assert_shape(&in[0], "(35, 8, 200)");
  assert_shape(&out[0], "(35, 8, 200)");

  /* GRU, bidirectional, 3 layers, state outputs and lengths: MXNet's size formula. */
  DsNode *ng =
      node_new(g, "RNN", "mode", "gru", "num_layers", "3", "state_size", "16", "bidirectional",
               "True", "state_outputs", "True", "use_sequence_length", "True", NULL);
  g_assert_cmpuint(ng->n_inputs, ==, 4);
  g_assert_cmpuint(ng->n_outputs, ==, 2);
  infer_ok(ng, (const char *[]){"(5, 4, 10)", "?", "?", "?"}, in, out);
  int64_t g3 = 3 * 16;
  int64_t size = 2 * ((10 + 16 + 2) * g3 + 2 * (2 * 16 + 16 + 2) * g3);
  g_autofree char *want = g_strdup_printf("(%" G_GINT64_FORMAT ",)", size);
  assert_shape(&in[1], want);
  assert_shape(&in[2], "(6, 4, 16)");
  assert_shape(&in[3], "(4,)");
  assert_shape(&out[0], "(5, 4, 32)");
  assert_shape(&out[1], "(6, 4, 16)");
  g_assert_cmpstr(n->op->output_names[1], ==, "state_output");

  infer_fails(n, (const char *[]){"(35, 32, 200)", "(5,)", "?", "?"}, "parameters");
  infer_fails(n, (const char *[]){"(35, 32, 200)", "?", "(2, 31, 200)", "?"}, "state");
  infer_fails(n, (const char *[]){"(35, 200)", "?", "?", "?"}, "data must have 3 dims");
  parse_fails(DS_ERROR_UNSUPPORTED, "projection_size", "RNN", "mode", "lstm", "state_size", "8",
              "num_layers", "1", "projection_size", "4", NULL);
  parse_fails(DS_ERROR_UNSUPPORTED, "clip", "RNN", "mode", "lstm", "state_size", "8", "num_layers",
              "1", "lstm_state_clip_min", "-1", NULL);
  parse_fails(DS_ERROR_INVALID, "state_size", "RNN", "mode", "lstm", "num_layers", "1", NULL);
  parse_fails(DS_ERROR_PARSE, "mode", "RNN", "mode", "lstmp", "state_size", "8", "num_layers", "1",
              NULL);
}

static double sigm(double x)
{
  return 1.0 / (1.0 + exp(-x));
}

/* A reference multi-layer (bi)directional RNN on MXNet's flat parameter layout. */
static void ref_rnn(const DsRNNParam *p, const DsTensor *x, const float *params, const float *h0,
                    const float *c0, const int64_t *lens, double *y, double *hy, double *cy)
{
  int64_t T = x->shape[0], N = x->shape[1], I = x->shape[2], H = p->state_size;
  int64_t L = p->num_layers, D = p->bidirectional ? 2 : 1;
  int64_t G = ds_rnn_n_gates(p->mode);
  /* Offsets of each (layer, direction)'s matrices and biases. */
  int64_t off = 0;
  int64_t wx_off[16], wh_off[16], bx_off[16], bh_off[16];
  for (int64_t l = 0; l < L; l++)
    for (int64_t d = 0; d < D; d++) {
      int64_t in_l = l == 0 ? I : D * H;
      wx_off[l * D + d] = off;
      off += G * H * in_l;
      wh_off[l * D + d] = off;
      off += G * H * H;
    }
  for (int64_t l = 0; l < L; l++)
    for (int64_t d = 0; d < D; d++) {
      bx_off[l * D + d] = off;
      off += G * H;
      bh_off[l * D + d] = off;
      off += G * H;
    }
  double *layer_in = dalloc(T * N * MAX(I, D * H)), *layer_out = dalloc(T * N * D * H);
  for (int64_t i = 0; i < T * N * I; i++)
    layer_in[i] = fp(x)[i];
  double *h = dalloc(H), *c = dalloc(H), *gx = dalloc(G * H), *gh = dalloc(G * H);
  for (int64_t l = 0; l < L; l++) {
    int64_t in_l = l == 0 ? I : D * H;
    for (int64_t d = 0; d < D; d++) {
      int64_t li = l * D + d;
      const float *wx = params + wx_off[li], *wh = params + wh_off[li];
      const float *bx = params + bx_off[li], *bh = params + bh_off[li];
      for (int64_t b = 0; b < N; b++) {
        for (int64_t j = 0; j < H; j++) {
          h[j] = h0[(li * N + b) * H + j];
          c[j] = c0 != NULL ? c0[(li * N + b) * H + j] : 0;
        }
        int64_t len = lens != NULL ? lens[b] : T;
        for (int64_t s = 0; s < T; s++) {
          int64_t t = d == 0 ? s : T - 1 - s;
          double *out = layer_out + (t * N + b) * D * H + d * H;
          if (t >= len) {
            for (int64_t j = 0; j < H; j++)
              out[j] = 0;
            continue;
          }
          const double *xt = layer_in + (t * N + b) * in_l;
          for (int64_t r = 0; r < G * H; r++) {
            double sx = bx[r], sh = bh[r];
            for (int64_t k = 0; k < in_l; k++)
              sx += wx[r * in_l + k] * xt[k];
            for (int64_t k = 0; k < H; k++)
              sh += wh[r * H + k] * h[k];
            gx[r] = sx;
            gh[r] = sh;
          }
          for (int64_t j = 0; j < H; j++) {
            switch (p->mode) {
            case DS_RNN_LSTM: {
              double ig = sigm(gx[j] + gh[j]), fg = sigm(gx[H + j] + gh[H + j]);
              double gg = tanh(gx[2 * H + j] + gh[2 * H + j]);
              double og = sigm(gx[3 * H + j] + gh[3 * H + j]);
              c[j] = fg * c[j] + ig * gg;
              h[j] = og * tanh(c[j]);
              break;
            }
            case DS_RNN_GRU: {
              double rg = sigm(gx[j] + gh[j]), zg = sigm(gx[H + j] + gh[H + j]);
              double ng = tanh(gx[2 * H + j] + rg * gh[2 * H + j]);
              h[j] = (1 - zg) * ng + zg * h[j];
              break;
            }
            case DS_RNN_TANH:
              h[j] = tanh(gx[j] + gh[j]);
              break;
            case DS_RNN_RELU:
              h[j] = MAX(gx[j] + gh[j], 0.0);
              break;
            }
          }
          for (int64_t j = 0; j < H; j++)
            out[j] = h[j];
        }
        for (int64_t j = 0; j < H; j++) {
          hy[(li * N + b) * H + j] = h[j];
          if (cy != NULL)
            cy[(li * N + b) * H + j] = c[j];
        }
      }
    }
    for (int64_t i = 0; i < T * N * D * H; i++)
      layer_in[i] = layer_out[i];
  }
  for (int64_t i = 0; i < T * N * D * H; i++)
    y[i] = layer_out[i];
  g_free(layer_in);
  g_free(layer_out);
  g_free(h);
  g_free(c);
  g_free(gx);
  g_free(gh);
}

static void check_rnn(const char *mode, const char *data, const char *layers, const char *hidden,
                      const char *bidir, bool with_lengths)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "RNN", "mode", mode, "state_size", hidden, "num_layers", layers,
                       "bidirectional", bidir, "state_outputs", "True", "use_sequence_length",
                       with_lengths ? "True" : "False", NULL);
  const DsRNNParam *p = n->param;
  bool lstm = p->mode == DS_RNN_LSTM;
  DsShape in[5], out[3];
  infer_ok(n, (const char *[]){data, "?", "?", "?", "?"}, in, out);
  int n_in = (int)n->n_inputs, n_out = (int)n->n_outputs;
  DsTensor t[5] = {{0}};
  for (int i = 0; i < n_in; i++) {
    g_autofree char *s = ds_shape_to_string(&in[i]);
    bool is_len = with_lengths && i == n_in - 1;
    t[i] =
        is_len ? tensor_new(DS_DTYPE_INT64, s) : rtensor(s, i == 1 ? -0.4 : -1, i == 1 ? 0.4 : 1);
  }
  int64_t N = t[0].shape[1], T = t[0].shape[0];
  int64_t *lens = NULL;
  if (with_lengths) {
    lens = t[n_in - 1].data;
    for (int64_t b = 0; b < N; b++)
      lens[b] = b == 0 ? T : (int64_t)g_rand_int_range(rng, 0, (gint32)T + 1);
  }
  DsTensor y[3] = {{0}};
  for (int i = 0; i < n_out; i++) {
    g_autofree char *s = ds_shape_to_string(&out[i]);
    y[i] = ftensor(s);
  }
  run_ok(DS_OP_RNN, p, t, n_in, y, n_out);
  double *wy = dalloc(ds_tensor_numel(&y[0])), *why = dalloc(ds_tensor_numel(&y[1]));
  double *wcy = lstm ? dalloc(ds_tensor_numel(&y[1])) : NULL;
  ref_rnn(p, &t[0], t[1].data, t[2].data, lstm ? t[3].data : NULL, lens, wy, why, wcy);
  g_autofree char *what = g_strdup_printf("RNN %s %s L=%s bidir=%s", mode, data, layers, bidir);
  close_to(y[0].data, wy, ds_tensor_numel(&y[0]), 2e-5, 1e-4, what);
  close_to(y[1].data, why, ds_tensor_numel(&y[1]), 2e-5, 1e-4, what);
  if (lstm)
    close_to(y[2].data, wcy, ds_tensor_numel(&y[2]), 2e-5, 1e-4, what);
  g_free(wy);
  g_free(why);
  g_free(wcy);
  tensors_free(t, 5);
  tensors_free(y, 3);
}

static void test_rnn_kernel(void)
{
  const char *const modes[] = {"lstm", "gru", "rnn_tanh", "rnn_relu"};
  for (int m = 0; m < 4; m++) {
    check_rnn(modes[m], "(6, 3, 5)", "1", "7", "False", false);
    check_rnn(modes[m], "(5, 2, 4)", "2", "6", "True", false);
    check_rnn(modes[m], "(4, 1, 3)", "3", "5", "False", false); /* batch 1: sgemv steps */
    check_rnn(modes[m], "(7, 4, 3)", "2", "5", "True", true);
  }
  /* The lstm_ptb configuration at a small batch. */
  check_rnn("lstm", "(5, 4, 200)", "2", "200", "False", false);
  /* Outputs only, no state outputs: the single-output form. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "RNN", "mode", "gru", "state_size", "4", "num_layers", "1", NULL);
  DsShape in[3], out[1];
  infer_ok(n, (const char *[]){"(3, 2, 5)", "?", "?"}, in, out);
  g_autofree char *ps = ds_shape_to_string(&in[1]);
  DsTensor t[3] = {rtensor("(3, 2, 5)", -1, 1), rtensor(ps, -0.5, 0.5),
                   rtensor("(1, 2, 4)", -1, 1)};
  DsTensor y = ftensor("(3, 2, 4)");
  run_ok(DS_OP_RNN, n->param, t, 3, &y, 1);
  double wy[24], why[8];
  ref_rnn(n->param, &t[0], t[1].data, t[2].data, NULL, NULL, wy, why, NULL);
  close_to(y.data, wy, 24, 2e-5, 1e-4, "RNN gru single output");
  tensors_free(t, 3);
  g_free(y.data);
}

/* ---- _npi_matmul, float64 dot ------------------------------------------------------------- */

static void test_matmul_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "_npi_matmul", NULL);
  g_assert_true(ds_op_lookup("matmul") == n->op);
  DsShape in[2], out[1];
  infer_ok(n, (const char *[]){"(3, 4)", "(4, 5)"}, in, out);
  assert_shape(&out[0], "(3, 5)");
  infer_ok(n, (const char *[]){"(2, 1, 3, 4)", "(6, 4, 5)"}, in, out);
  assert_shape(&out[0], "(2, 6, 3, 5)");
  infer_ok(n, (const char *[]){"(4,)", "(2, 4, 5)"}, in, out); /* a row, dropped */
  assert_shape(&out[0], "(2, 5)");
  infer_ok(n, (const char *[]){"(2, 3, 4)", "(4,)"}, in, out); /* a column, dropped */
  assert_shape(&out[0], "(2, 3)");
  infer_ok(n, (const char *[]){"(4,)", "(4,)"}, in, out);
  assert_shape(&out[0], "()");
  infer_ok(n, (const char *[]){"(0, 3, 4)", "(4, 0)"}, in, out);
  assert_shape(&out[0], "(0, 3, 0)");
  /* K flows between the operands; rows and columns back from the output. */
  infer_ok(n, (const char *[]){"(7, ?)", "(5, ?)"}, in, out);
  assert_shape(&in[0], "(7, 5)");
  in[0] = shp("(?, 3)");
  in[1] = shp("(3, ?)");
  out[0] = shp("(2, 9)");
  GError *error = NULL;
  g_assert_true(infer_err(n, in, out, &error));
  assert_shape(&in[0], "(2, 3)");
  assert_shape(&in[1], "(3, 9)");
  infer_fails(n, (const char *[]){"(3, 4)", "(5, 6)"}, "do not multiply");
  infer_fails(n, (const char *[]){"(2, 3, 4)", "(3, 4, 5)"}, "lhs");
  infer_fails(n, (const char *[]){"()", "(3,)"}, "scalars");
}

/* NumPy's matmul in double for any of the test dtypes, reading through get(). */
static void ref_matmul(const DsTensor *a, const DsTensor *b, const DsTensor *y, double *out)
{
  int64_t m = a->ndim > 1 ? a->shape[a->ndim - 2] : 1, k = a->shape[a->ndim - 1];
  int64_t n = b->ndim > 1 ? b->shape[b->ndim - 1] : 1;
  int nb = y->ndim - (a->ndim > 1) - (b->ndim > 1);
  int64_t count = ds_shape_span(y->shape, 0, nb);
  for (int64_t i = 0; i < count; i++) {
    /* The operands' matrix indices under broadcasting. */
    int64_t ai = 0, bi = 0, rem = i, a_stride = 1, b_stride = 1;
    for (int d = nb - 1; d >= 0; d--) {
      int64_t idx = rem % y->shape[d];
      rem /= y->shape[d];
      int ja = d - (nb - (a->ndim - 2)), jb = d - (nb - (b->ndim - 2));
      if (ja >= 0) {
        ai += (a->shape[ja] == 1 ? 0 : idx) * a_stride;
        a_stride *= a->shape[ja];
      }
      if (jb >= 0) {
        bi += (b->shape[jb] == 1 ? 0 : idx) * b_stride;
        b_stride *= b->shape[jb];
      }
    }
    for (int64_t r = 0; r < m; r++)
      for (int64_t c = 0; c < n; c++) {
        double acc = 0;
        for (int64_t p = 0; p < k; p++)
          acc += get(a, ai * m * k + r * k + p) * get(b, bi * k * n + p * n + c);
        out[(i * m + r) * n + c] = acc;
      }
  }
}

/* An exact integer result as the dtype's wrapping arithmetic leaves it. */
static double wrap_int(DsDType t, double v)
{
  int64_t i = (int64_t)v;
  switch (t) {
  case DS_DTYPE_INT8:
    return (int8_t)(uint8_t)(i & 0xff);
  case DS_DTYPE_UINT8:
    return (uint8_t)(i & 0xff);
  case DS_DTYPE_INT32:
    return (int32_t)(uint32_t)(i & 0xffffffff);
  default:
    return v;
  }
}

static void check_matmul(DsDType t, const char *as, const char *bs)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "_npi_matmul", NULL);
  DsShape in[2], out[1];
  infer_ok(n, (const char *[]){as, bs}, in, out);
  g_autofree char *os = ds_shape_to_string(&out[0]);
  DsTensor x[2] = {tensor_new(t, as), tensor_new(t, bs)};
  fill_random(&x[0], -2, 2);
  fill_random(&x[1], -2, 2);
  DsTensor y = tensor_new(t, os);
  run_ok(DS_OP_MATMUL, n->param, x, 2, &y, 1);
  int64_t numel = ds_tensor_numel(&y);
  double *want = dalloc(numel);
  ref_matmul(&x[0], &x[1], &y, want);
  for (int64_t i = 0; i < numel; i++) {
    double got = get(&y, i);
    double tol = t == DS_DTYPE_FLOAT32 ? 1e-4 * (1 + fabs(want[i])) : 1e-9 * (1 + fabs(want[i]));
    if (t != DS_DTYPE_FLOAT32 && t != DS_DTYPE_FLOAT64)
      want[i] = wrap_int(t, want[i]);
    if (fabs(got - want[i]) > tol) {
      g_test_fail_printf("matmul %s %s x %s: element %" G_GINT64_FORMAT " is %g, want %g",
                         ds_dtype_name(t), as, bs, i, got, want[i]);
      break;
    }
  }
  g_free(want);
  tensors_free(x, 2);
  tensor_free(&y);
}

static void test_matmul_kernel(void)
{
  check_matmul(DS_DTYPE_FLOAT32, "(3, 4)", "(4, 5)");
  check_matmul(DS_DTYPE_FLOAT32, "(2, 3, 7, 4)", "(4, 5)");    /* one GEMM */
  check_matmul(DS_DTYPE_FLOAT32, "(2, 3, 7, 4)", "(1, 4, 5)"); /* one GEMM, unit batch */
  check_matmul(DS_DTYPE_FLOAT32, "(7, 4)", "(3, 4, 5)");       /* a broadcast */
  check_matmul(DS_DTYPE_FLOAT32, "(2, 1, 3, 4)", "(5, 4, 6)"); /* both broadcast */
  check_matmul(DS_DTYPE_FLOAT32, "(4,)", "(2, 4, 5)");         /* gemv rows */
  check_matmul(DS_DTYPE_FLOAT32, "(2, 3, 4)", "(4,)");         /* gemv column */
  check_matmul(DS_DTYPE_FLOAT32, "(6,)", "(6,)");              /* dot product */
  check_matmul(DS_DTYPE_FLOAT32, "(1, 9)", "(9, 1)");
  check_matmul(DS_DTYPE_FLOAT32, "(64, 96)", "(96, 80)");
  check_matmul(DS_DTYPE_FLOAT32, "(0, 3, 4)", "(4, 5)"); /* empty */
  check_matmul(DS_DTYPE_FLOAT32, "(2, 3, 0)", "(0, 5)"); /* K = 0: zeros */
  check_matmul(DS_DTYPE_FLOAT64, "(2, 5, 3)", "(2, 3, 4)");
  check_matmul(DS_DTYPE_FLOAT64, "(3,)", "(3, 2)");
  check_matmul(DS_DTYPE_INT32, "(2, 3, 4)", "(4, 5)");
  check_matmul(DS_DTYPE_INT64, "(3, 1, 2, 4)", "(2, 4, 3)");
  check_matmul(DS_DTYPE_INT8, "(3, 4)", "(4, 2)");
  check_matmul(DS_DTYPE_UINT8, "(5,)", "(5, 3)");
  /* Integer products wrap as the dtype's arithmetic: 100 * 100 * 2 in int8. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "_npi_matmul", NULL);
  DsTensor x[2] = {tensor_new(DS_DTYPE_INT8, "(1, 2)"), tensor_new(DS_DTYPE_INT8, "(2, 1)")};
  for (int i = 0; i < 2; i++) {
    set(&x[0], i, 100);
    set(&x[1], i, 100);
  }
  DsTensor y = tensor_new(DS_DTYPE_INT8, "(1, 1)");
  run_ok(DS_OP_MATMUL, n->param, x, 2, &y, 1);
  g_assert_cmpfloat(get(&y, 0), ==, wrap_int(DS_DTYPE_INT8, 20000));
  tensors_free(x, 2);
  tensor_free(&y);
  /* Mixed dtypes are refused. */
  DsTensor m[2] = {tensor_new(DS_DTYPE_FLOAT32, "(2, 2)"), tensor_new(DS_DTYPE_FLOAT64, "(2, 2)")};
  DsTensor my = tensor_new(DS_DTYPE_FLOAT32, "(2, 2)");
  g_assert_cmpint(run_kernel(DS_OP_MATMUL, n->param, m, 2, &my, 1), ==, DS_STATUS_UNSUPPORTED);
  tensors_free(m, 2);
  tensor_free(&my);
}

/* dot and batch_dot in float64 (dgemm). */
static void test_dot_float64(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "dot", "transpose_a", "True", "transpose_b", "True", NULL);
  DsTensor x[2] = {tensor_new(DS_DTYPE_FLOAT64, "(4, 3)"), tensor_new(DS_DTYPE_FLOAT64, "(5, 4)")};
  fill_random(&x[0], -1, 1);
  fill_random(&x[1], -1, 1);
  DsTensor y = tensor_new(DS_DTYPE_FLOAT64, "(3, 5)");
  run_ok(DS_OP_DOT, n->param, x, 2, &y, 1);
  for (int64_t i = 0; i < 3; i++)
    for (int64_t j = 0; j < 5; j++) {
      double acc = 0;
      for (int64_t p = 0; p < 4; p++)
        acc += get(&x[0], p * 3 + i) * get(&x[1], j * 4 + p);
      g_assert_cmpfloat_with_epsilon(get(&y, i * 5 + j), acc, 1e-12);
    }
  tensors_free(x, 2);
  tensor_free(&y);
  DsNode *nb = node_new(g, "batch_dot", NULL);
  DsTensor z[2] = {tensor_new(DS_DTYPE_FLOAT64, "(2, 3, 4)"),
                   tensor_new(DS_DTYPE_FLOAT64, "(2, 4, 2)")};
  fill_random(&z[0], -1, 1);
  fill_random(&z[1], -1, 1);
  DsTensor zy = tensor_new(DS_DTYPE_FLOAT64, "(2, 3, 2)");
  run_ok(DS_OP_BATCH_DOT, nb->param, z, 2, &zy, 1);
  double want[12];
  ref_matmul(&z[0], &z[1], &zy, want);
  for (int i = 0; i < 12; i++)
    g_assert_cmpfloat_with_epsilon(get(&zy, i), want[i], 1e-12);
  tensors_free(z, 2);
  tensor_free(&zy);
}

/* ---- LayerNorm and softmax over trailing axes, hardmax ------------------------------------- */

static void test_layer_norm_trailing(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "LayerNorm", "axis", "1", "trailing_axes", "True", "output_mean_var",
                       "True", "eps", "0.1", NULL);
  DsShape in[3], out[3];
  infer_ok(n, (const char *[]){"(2, 3, 4, 5)", "?", "?"}, in, out);
  assert_shape(&in[1], "(3, 4, 5)");
  assert_shape(&in[2], "(3, 4, 5)");
  assert_shape(&out[1], "(2, 1, 1, 1)");
  /* The data's trailing dims come back from gamma. */
  infer_ok(n, (const char *[]){"(2, ?, ?, 5)", "(3, 4, 5)", "?"}, in, out);
  assert_shape(&in[0], "(2, 3, 4, 5)");
  infer_fails(n, (const char *[]){"(2, 3, 4, 5)", "(3, 4, 6)", "?"}, "gamma has shape (3, 4, 6)");
  infer_fails(n, (const char *[]){"(2, ?, ?, ?)", "(3, 4, 6)", "(3, 4, 5)"}, "beta");
  /* The kernel: rows of 60, normalised together. */
  DsTensor t[3] = {rtensor("(2, 3, 4, 5)", -2, 3), rtensor("(3, 4, 5)", 0.5, 2),
                   rtensor("(3, 4, 5)", -1, 1)};
  DsTensor y[3] = {ftensor("(2, 3, 4, 5)"), ftensor("(2, 1, 1, 1)"), ftensor("(2, 1, 1, 1)")};
  run_ok(DS_OP_LAYER_NORM, n->param, t, 3, y, 3);
  double want[120], mean[2], std[2];
  for (int o = 0; o < 2; o++) {
    double sum = 0, ss = 0;
    for (int k = 0; k < 60; k++)
      sum += fp(&t[0])[o * 60 + k];
    mean[o] = sum / 60;
    for (int k = 0; k < 60; k++)
      ss += (fp(&t[0])[o * 60 + k] - mean[o]) * (fp(&t[0])[o * 60 + k] - mean[o]);
    std[o] = sqrt(ss / 60 + 0.1);
    for (int k = 0; k < 60; k++)
      want[o * 60 + k] = (fp(&t[0])[o * 60 + k] - mean[o]) / std[o] * fp(&t[1])[k] + fp(&t[2])[k];
  }
  close_to(y[0].data, want, 120, 1e-5, 1e-5, "LayerNorm trailing");
  close_to(y[1].data, mean, 2, 1e-6, 1e-5, "LayerNorm trailing mean");
  close_to(y[2].data, std, 2, 1e-6, 1e-5, "LayerNorm trailing std");
  tensors_free(t, 3);
  tensors_free(y, 3);
}

static void test_softmax_trailing(void)
{
  const char *const ops[] = {"softmax", "log_softmax"};
  for (int i = 0; i < 2; i++) {
    g_autoptr(DsGraph) g = ds_graph_new();
    DsNode *n = node_new(g, ops[i], "axis", "1", "trailing_axes", "True", NULL);
    DsShape in[1], out[1];
    infer_ok(n, (const char *[]){"(3, 4, 5)"}, in, out);
    DsTensor x = rtensor("(3, 4, 5)", -5, 5), y = ftensor("(3, 4, 5)");
    run_ok(i == 0 ? DS_OP_SOFTMAX : DS_OP_LOG_SOFTMAX, n->param, &x, 1, &y, 1);
    double want[60];
    ref_softmax(x.data, want, 3, 20, 1, 1.0, i == 1, NULL); /* rows of 4 x 5 */
    close_to(y.data, want, 60, 1e-6, 1e-5, ops[i]);
    g_free(x.data);
    g_free(y.data);
  }
  parse_fails(DS_ERROR_INVALID, "trailing_axes", "softmax", "use_length", "True", "trailing_axes",
              "True", NULL);
}

static void check_hardmax(DsDType t, const char *shape, int axis, bool trailing)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  g_autofree char *axis_s = g_strdup_printf("%d", axis);
  DsNode *n = node_new(g, "_contrib_hardmax", "axis", axis_s, "trailing_axes",
                       trailing ? "True" : "False", NULL);
  DsShape in[1], out[1];
  infer_ok(n, (const char *[]){shape}, in, out);
  DsTensor x = tensor_new(t, shape), y = tensor_new(t, shape);
  fill_random(&x, -3, 3);
  int64_t numel = ds_tensor_numel(&x);
  for (int64_t i = 0; i < numel; i += 3) /* ties: the first maximum wins */
    set(&x, i, 2.5);
  run_ok(DS_OP_HARDMAX, n->param, &x, 1, &y, 1);
  int ax = axis < 0 ? axis + x.ndim : axis;
  int64_t outer = ds_shape_span(x.shape, 0, ax), len = x.shape[ax];
  int64_t inner = ds_shape_span(x.shape, ax + 1, x.ndim);
  if (trailing) {
    len *= inner;
    inner = 1;
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t best = 0;
      for (int64_t k = 1; k < len; k++)
        if (get(&x, (o * len + k) * inner + i) > get(&x, (o * len + best) * inner + i))
          best = k;
      for (int64_t k = 0; k < len; k++)
        g_assert_cmpfloat(get(&y, (o * len + k) * inner + i), ==, k == best ? 1.0 : 0.0);
    }
  tensor_free(&x);
  tensor_free(&y);
}

static void test_hardmax(void)
{
  check_hardmax(DS_DTYPE_FLOAT32, "(3, 4, 5)", -1, false);
  check_hardmax(DS_DTYPE_FLOAT32, "(3, 4, 5)", 1, false);
  check_hardmax(DS_DTYPE_FLOAT32, "(3, 4, 5)", 0, false);
  check_hardmax(DS_DTYPE_FLOAT32, "(3, 4, 5)", 1, true);
  check_hardmax(DS_DTYPE_FLOAT64, "(2, 300)", 1, false);
  check_hardmax(DS_DTYPE_FLOAT32, "(0, 4)", 1, false);
  /* A NaN counts as the maximum (NumPy's argmax). */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "_contrib_hardmax", NULL);
  DsTensor x = ftensor("(1, 4)"), y = ftensor("(1, 4)");
  const float v[] = {1.0f, 5.0f, NAN, 7.0f};
  memcpy(x.data, v, sizeof v);
  run_ok(DS_OP_HARDMAX, n->param, &x, 1, &y, 1);
  g_assert_cmpfloat(fp(&y)[2], ==, 1.0f);
  g_assert_cmpfloat(fp(&y)[3], ==, 0.0f);
  infer_fails(n, (const char *[]){"()"}, "axis");
  g_free(x.data);
  g_free(y.data);
}

/* ---- InstanceNorm, LRN ------------------------------------------------------------------ */

static void test_instance_norm(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "InstanceNorm", "eps", "0.01", NULL);
  g_assert_cmpfloat(((const DsInstanceNormParam *)n->param)->eps, ==, 0.01);
  DsShape in[3], out[1];
  infer_ok(n, (const char *[]){"(2, 3, 4, 5)", "?", "?"}, in, out);
  assert_shape(&in[1], "(3,)");
  assert_shape(&out[0], "(2, 3, 4, 5)");
  infer_ok(n, (const char *[]){"(2, ?, 7)", "(6,)", "?"}, in, out);
  assert_shape(&in[0], "(2, 6, 7)");
  infer_fails(n, (const char *[]){"(2, 3)", "?", "?"}, "at least 3 dims");
  infer_fails(n, (const char *[]){"(2, 3, 4)", "(4,)", "?"}, "gamma");
  const char *const shapes[] = {"(2, 3, 4, 5)", "(1, 2, 1, 3)", "(3, 4, 9000)"};
  for (int s = 0; s < 3; s++) {
    infer_ok(n, (const char *[]){shapes[s], "?", "?"}, in, out);
    g_autofree char *cs = ds_shape_to_string(&in[1]);
    DsTensor t[3] = {rtensor(shapes[s], -2, 3), rtensor(cs, 0.5, 2), rtensor(cs, -1, 1)};
    DsTensor y = ftensor(shapes[s]);
    run_ok(DS_OP_INSTANCE_NORM, n->param, t, 3, &y, 1);
    int64_t c_n = t[0].shape[1], planes = t[0].shape[0] * c_n;
    int64_t plane = ds_tensor_numel(&t[0]) / planes;
    double *want = dalloc(planes * plane);
    for (int64_t pl = 0; pl < planes; pl++) {
      const float *x = fp(&t[0]) + pl * plane;
      double m = 0, v = 0;
      for (int64_t i = 0; i < plane; i++)
        m += x[i];
      m /= plane;
      for (int64_t i = 0; i < plane; i++)
        v += (x[i] - m) * (x[i] - m);
      v /= plane;
      for (int64_t i = 0; i < plane; i++)
        want[pl * plane + i] =
            (x[i] - m) / sqrt(v + 0.01) * fp(&t[1])[pl % c_n] + fp(&t[2])[pl % c_n];
    }
    close_to(y.data, want, planes * plane, 1e-5, 1e-4, "InstanceNorm");
    g_free(want);
    tensors_free(t, 3);
    g_free(y.data);
  }
}

static void check_lrn(const char *shape, const char *nsize, double alpha, double beta, double knorm)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  g_autofree char *as = g_strdup_printf("%.9g", alpha), *bs = g_strdup_printf("%.9g", beta),
                  *ks = g_strdup_printf("%.9g", knorm);
  DsNode *n = node_new(g, "LRN", "nsize", nsize, "alpha", as, "beta", bs, "knorm", ks, NULL);
  const DsLRNParam *p = n->param;
  DsShape in[1], out[2];
  infer_ok(n, (const char *[]){shape}, in, out);
  assert_shape(&out[1], shape);
  DsTensor x = rtensor(shape, -3, 3);
  DsTensor y[2] = {ftensor(shape), ftensor(shape)};
  run_ok(DS_OP_LRN, p, &x, 1, y, 2);
  int64_t c_n = x.shape[1], inner = ds_shape_span(x.shape, 2, x.ndim);
  int64_t numel = ds_tensor_numel(&x);
  double *want = dalloc(numel), *norm = dalloc(numel);
  /* ONNX's window: floor((size - 1) / 2) channels before, ceil((size - 1) / 2) after. */
  int64_t before = (p->nsize - 1) / 2, after = p->nsize - 1 - before;
  for (int64_t i = 0; i < numel; i++) {
    int64_t c = i / inner % c_n, base = i - c * inner;
    double sq = 0;
    for (int64_t cc = MAX(0, c - before); cc <= MIN(c_n - 1, c + after); cc++)
      sq += (double)fp(&x)[base + cc * inner] * fp(&x)[base + cc * inner];
    norm[i] = knorm + alpha / p->nsize * sq;
    want[i] = fp(&x)[i] / pow(norm[i], beta);
  }
  close_to(y[0].data, want, numel, 1e-6, 1e-5, "LRN");
  close_to(y[1].data, norm, numel, 1e-6, 1e-5, "LRN norm");
  g_free(want);
  g_free(norm);
  g_free(x.data);
  tensors_free(y, 2);
}

static void test_lrn(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "LRN", "nsize", "5", NULL);
  const DsLRNParam *p = n->param;
  g_assert_cmpfloat(p->alpha, ==, 1e-4);
  g_assert_cmpfloat(p->beta, ==, 0.75);
  g_assert_cmpfloat(p->knorm, ==, 2.0);
  g_assert_cmpint(n->op->num_visible_outputs(p), ==, 1);
  parse_fails(DS_ERROR_INVALID, "nsize", "LRN", NULL);
  parse_fails(DS_ERROR_INVALID, "nsize", "LRN", "nsize", "0", NULL);
  infer_fails(n, (const char *[]){"(5,)"}, "at least 2 dims");
  check_lrn("(5, 5, 5, 5)", "3", 0.0002, 0.5, 2.0);
  check_lrn("(2, 7, 3, 4)", "5", 1e-4, 0.75, 1.0);
  check_lrn("(2, 6, 9)", "4", 0.01, 0.75, 1.0); /* even: one more channel after */
  check_lrn("(1, 3)", "1", 0.5, 1.0, 1.0);
  check_lrn("(2, 16, 40, 40)", "5", 1e-3, 0.75, 2.0); /* rows on the pool */
}

/* ---- _contrib_RecurrentLayer ------------------------------------------------------------- */

static double rsig(double x)
{
  return 1.0 / (1.0 + exp(-x));
}

static double rclip(double v, double c)
{
  return c > 0 ? fmin(fmax(v, -c), c) : v;
}

/* ONNX's equations in double, step by step; inputs in the op's order (flags decide), outputs
 * y, yh and (LSTM) yc in the op's layouts. */
static void ref_recurrent(const DsRecurrentLayerParam *p, const DsTensor *in, double *y, double *yh,
                          double *yc)
{
  const bool bf = p->batch_first;
  const int64_t T = in[0].shape[bf ? 1 : 0], N = in[0].shape[bf ? 0 : 1], I = in[0].shape[2];
  const int64_t H = p->state_size, D = ds_recurrent_dirs(p), G = ds_rnn_n_gates(p->mode);
  int slot = 3;
  const DsTensor *bias = p->use_bias ? &in[slot++] : NULL;
  const DsTensor *lens = p->use_sequence_length ? &in[slot++] : NULL;
  const DsTensor *h0 = p->use_initial_h ? &in[slot++] : NULL;
  const DsTensor *c0 = p->use_initial_c ? &in[slot++] : NULL;
  const DsTensor *pp = p->use_peephole ? &in[slot++] : NULL;
  double *h = dalloc(N * H), *c = dalloc(N * H), *xw = dalloc(G * H), *hr = dalloc(G * H);
  double *nh = dalloc(H), *nc = dalloc(H);
#define STATE_AT(d, b) (bf ? ((b)*D + (d)) * H : ((d)*N + (b)) * H)
  for (int64_t d = 0; d < D; d++) {
    bool backward = p->direction == DS_RNN_REVERSE || d == 1;
    const float *W = fp(&in[1]) + d * G * H * I, *R = fp(&in[2]) + d * G * H * H;
    const float *wb = bias != NULL ? fp(bias) + d * 2 * G * H : NULL;
    for (int64_t b = 0; b < N; b++)
      for (int64_t j = 0; j < H; j++) {
        h[b * H + j] = h0 != NULL ? fp(h0)[STATE_AT(d, b) + j] : 0.0;
        c[b * H + j] = c0 != NULL ? fp(c0)[STATE_AT(d, b) + j] : 0.0;
      }
    for (int64_t s = 0; s < T; s++) {
      int64_t t = backward ? T - 1 - s : s;
      for (int64_t b = 0; b < N; b++) {
        double *yr = y + (bf ? ((b * T + t) * D + d) * H : ((t * D + d) * N + b) * H);
        if (lens != NULL && t >= (int64_t)get(lens, b)) {
          for (int64_t j = 0; j < H; j++)
            yr[j] = 0.0;
          continue;
        }
        const float *x = fp(&in[0]) + (bf ? b * T + t : t * N + b) * I;
        double *hb = h + b * H, *cb = c + b * H;
        for (int64_t g = 0; g < G * H; g++) {
          xw[g] = wb != NULL ? wb[g] : 0.0;
          hr[g] = wb != NULL ? wb[G * H + g] : 0.0;
          for (int64_t i = 0; i < I; i++)
            xw[g] += x[i] * W[g * I + i];
          for (int64_t j = 0; j < H; j++)
            hr[g] += hb[j] * R[g * H + j];
        }
        for (int64_t j = 0; j < H; j++) {
          double cl = p->clip;
          if (p->mode == DS_RNN_LSTM) {
            const float *pd = pp != NULL ? fp(pp) + d * 3 * H : NULL;
            double gi = rsig(rclip(xw[j] + hr[j] + (pd ? pd[j] * cb[j] : 0), cl));
            double gf =
                rsig(rclip(xw[2 * H + j] + hr[2 * H + j] + (pd ? pd[2 * H + j] * cb[j] : 0), cl));
            double gc = tanh(rclip(xw[3 * H + j] + hr[3 * H + j], cl));
            nc[j] = gf * cb[j] + gi * gc;
            double go = rsig(rclip(xw[H + j] + hr[H + j] + (pd ? pd[H + j] * nc[j] : 0), cl));
            nh[j] = go * tanh(nc[j]);
          } else if (p->mode == DS_RNN_GRU) {
            double z = rsig(rclip(xw[j] + hr[j], cl));
            double r = rsig(rclip(xw[H + j] + hr[H + j], cl));
            double cand;
            if (p->linear_before_reset) {
              cand = tanh(rclip(xw[2 * H + j] + r * hr[2 * H + j], cl));
            } else {
              double acc = wb != NULL ? wb[G * H + 2 * H + j] : 0.0;
              for (int64_t k = 0; k < H; k++) {
                double rk = rsig(rclip(xw[H + k] + hr[H + k], cl));
                acc += rk * hb[k] * R[(2 * H + j) * H + k];
              }
              cand = tanh(rclip(xw[2 * H + j] + acc, cl));
            }
            nh[j] = (1 - z) * cand + z * hb[j];
          } else {
            double v = rclip(xw[j] + hr[j], cl);
            nh[j] = p->mode == DS_RNN_TANH ? tanh(v) : (v > 0 ? v : 0);
          }
        }
        for (int64_t j = 0; j < H; j++) {
          hb[j] = nh[j];
          if (p->mode == DS_RNN_LSTM)
            cb[j] = nc[j];
          yr[j] = nh[j];
        }
      }
    }
    for (int64_t b = 0; b < N; b++)
      for (int64_t j = 0; j < H; j++) {
        yh[STATE_AT(d, b) + j] = h[b * H + j];
        if (yc != NULL)
          yc[STATE_AT(d, b) + j] = c[b * H + j];
      }
  }
#undef STATE_AT
  g_free(h);
  g_free(c);
  g_free(xw);
  g_free(hr);
  g_free(nh);
  g_free(nc);
}

/* A layer with `attrs` (key, value, ..., NULL) on data of `shape`: shapes inferred, random
 * inputs (lengths from 0 to T), kernel against the reference. */
static void check_recurrent(const char *shape, ...)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  va_list args;
  va_start(args, shape);
  GError *error = NULL;
  DsNode *n = node_v(g, "_contrib_RecurrentLayer", &error, args);
  va_end(args);
  g_assert_no_error(error);
  const DsRecurrentLayerParam *p = n->param;
  int n_in = (int)n->n_inputs, n_out = (int)n->n_outputs;
  DsShape in[8], out[3];
  const char *ins[8] = {shape, "?", "?", "?", "?", "?", "?", "?"};
  infer_ok(n, ins, in, out);
  DsTensor t[8], y[3];
  int len_slot = p->use_sequence_length ? 3 + p->use_bias : -1;
  for (int i = 0; i < n_in; i++) {
    g_autofree char *s = ds_shape_to_string(&in[i]);
    if (i == len_slot) {
      t[i] = tensor_new(DS_DTYPE_INT32, s);
      int64_t steps = in[0].dims[p->batch_first ? 1 : 0].value;
      for (int64_t b = 0; b < ds_tensor_numel(&t[i]); b++)
        set(&t[i], b, (double)((b * 7 + 3) % (steps + 1)));
    } else {
      t[i] = rtensor(s, i == 0 ? -1.5 : -0.6, i == 0 ? 1.5 : 0.6);
    }
  }
  for (int i = 0; i < n_out; i++) {
    g_autofree char *s = ds_shape_to_string(&out[i]);
    y[i] = ftensor(s);
  }
  run_ok(DS_OP_RECURRENT_LAYER, p, t, n_in, y, n_out);
  double *wy = dalloc(ds_tensor_numel(&y[0])), *wh = dalloc(ds_tensor_numel(&y[1]));
  double *wc = n_out > 2 ? dalloc(ds_tensor_numel(&y[2])) : NULL;
  ref_recurrent(p, t, wy, wh, wc);
  g_autofree char *what = g_strdup_printf("_contrib_RecurrentLayer %s", shape);
  close_to(y[0].data, wy, ds_tensor_numel(&y[0]), 2e-5, 1e-4, what);
  close_to(y[1].data, wh, ds_tensor_numel(&y[1]), 2e-5, 1e-4, what);
  if (wc != NULL)
    close_to(y[2].data, wc, ds_tensor_numel(&y[2]), 2e-5, 1e-4, what);
  g_free(wy);
  g_free(wh);
  g_free(wc);
  tensors_free(t, n_in);
  tensors_free(y, n_out);
}

static void test_recurrent_layer_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n =
      node_new(g, "_contrib_RecurrentLayer", "mode", "lstm", "state_size", "4", "use_bias", "True",
               "use_sequence_length", "True", "use_initial_h", "True", "use_initial_c", "True",
               "use_peephole", "True", "direction", "bidirectional", NULL);
  const DsRecurrentLayerParam *p = n->param;
  g_assert_cmpint(p->direction, ==, DS_RNN_BIDIRECTIONAL);
  g_assert_false(p->batch_first);
  g_assert_cmpuint(n->n_inputs, ==, 8);
  g_assert_cmpuint(n->n_outputs, ==, 3);
  DsShape in[8], out[3];
  infer_ok(n, (const char *[]){"(5, 3, 7)", "?", "?", "?", "?", "?", "?", "?"}, in, out);
  assert_shape(&in[1], "(2, 16, 7)");
  assert_shape(&in[2], "(2, 16, 4)");
  assert_shape(&in[3], "(2, 32)");
  assert_shape(&in[4], "(3,)");
  assert_shape(&in[5], "(2, 3, 4)");
  assert_shape(&in[6], "(2, 3, 4)");
  assert_shape(&in[7], "(2, 12)");
  assert_shape(&out[0], "(5, 2, 3, 4)");
  assert_shape(&out[1], "(2, 3, 4)");
  assert_shape(&out[2], "(2, 3, 4)");
  /* The batch from an initial state, the input size from W. */
  infer_ok(n, (const char *[]){"(5, ?, ?)", "(2, 16, 9)", "?", "?", "?", "(2, 6, 4)", "?", "?"}, in,
           out);
  assert_shape(&in[0], "(5, 6, 9)");
  /* Batch-first GRU, no optional inputs. */
  DsNode *nb = node_new(g, "_contrib_RecurrentLayer", "mode", "gru", "state_size", "6", "layout",
                        "NTC", NULL);
  g_assert_cmpuint(nb->n_inputs, ==, 3);
  g_assert_cmpuint(nb->n_outputs, ==, 2);
  infer_ok(nb, (const char *[]){"(3, 1, 2)", "?", "?"}, in, out);
  assert_shape(&out[0], "(3, 1, 1, 6)");
  assert_shape(&out[1], "(3, 1, 6)");
  assert_shape(&in[1], "(1, 18, 2)");
  infer_fails(nb, (const char *[]){"(3, 1, 2)", "(1, 18, 3)", "?"}, "W");
  infer_fails(nb, (const char *[]){"(3, 2)", "?", "?"}, "data must have 3 dims");
  /* Dtypes: floats throughout, integer lengths. */
  DsDType ti[8] = {DS_DTYPE_FLOAT32, DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN,
                   DS_DTYPE_INT32,   DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN};
  DsDType to[3] = {DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN, DS_DTYPE_UNKNOWN};
  GError *error = NULL;
  g_assert_true(n->op->infer_type(n, n->param, ti, to, &error));
  g_assert_cmpint(ti[7], ==, DS_DTYPE_FLOAT32);
  g_assert_cmpint(ti[4], ==, DS_DTYPE_INT32);
  g_assert_cmpint(to[2], ==, DS_DTYPE_FLOAT32);
  ti[4] = DS_DTYPE_FLOAT32;
  g_assert_false(n->op->infer_type(n, n->param, ti, to, &error));
  g_assert_nonnull(strstr(error->message, "sequence_length"));
  g_clear_error(&error);
  parse_fails(DS_ERROR_INVALID, "mode", "_contrib_RecurrentLayer", "state_size", "3", NULL);
  parse_fails(DS_ERROR_INVALID, "use_peephole", "_contrib_RecurrentLayer", "mode", "gru",
              "state_size", "3", "use_peephole", "True", NULL);
  parse_fails(DS_ERROR_INVALID, "clip", "_contrib_RecurrentLayer", "mode", "gru", "state_size", "3",
              "clip", "0", NULL);
  parse_fails(DS_ERROR_PARSE, "direction", "_contrib_RecurrentLayer", "mode", "gru", "state_size",
              "3", "direction", "both", NULL);
}

static void test_recurrent_layer_kernel(void)
{
  const char *const modes[] = {"lstm", "gru", "rnn_tanh", "rnn_relu"};
  for (int m = 0; m < 4; m++) {
    check_recurrent("(6, 3, 5)", "mode", modes[m], "state_size", "4", NULL);
    check_recurrent("(5, 2, 3)", "mode", modes[m], "state_size", "6", "use_bias", "True",
                    "direction", "bidirectional", "use_initial_h", "True", NULL);
    check_recurrent("(4, 5, 3)", "mode", modes[m], "state_size", "3", "use_bias", "True",
                    "direction", "reverse", "use_sequence_length", "True", NULL);
    check_recurrent("(3, 4, 2)", "mode", modes[m], "state_size", "5", "layout", "NTC", "direction",
                    "bidirectional", "use_sequence_length", "True", "use_bias", "True",
                    "use_initial_h", "True", NULL);
    check_recurrent("(7, 1, 3)", "mode", modes[m], "state_size", "4", "use_bias", "True", "clip",
                    "0.3", NULL); /* batch 1: gemv steps; clipped gates */
    check_recurrent("(0, 2, 3)", "mode", modes[m], "state_size", "2", "use_initial_h", "True",
                    NULL); /* no steps: the initial state */
  }
  for (int lbr = 0; lbr < 2; lbr++) {
    const char *v = lbr ? "True" : "False";
    check_recurrent("(5, 3, 4)", "mode", "gru", "state_size", "5", "use_bias", "True",
                    "linear_before_reset", v, "direction", "bidirectional", "use_sequence_length",
                    "True", NULL);
    check_recurrent("(4, 2, 3)", "mode", "gru", "state_size", "3", "linear_before_reset", v,
                    "layout", "NTC", "use_initial_h", "True", NULL);
  }
  check_recurrent("(5, 3, 4)", "mode", "lstm", "state_size", "3", "use_bias", "True",
                  "use_sequence_length", "True", "use_initial_h", "True", "use_initial_c", "True",
                  "use_peephole", "True", "direction", "bidirectional", NULL);
  check_recurrent("(4, 3, 2)", "mode", "lstm", "state_size", "4", "use_initial_c", "True", "layout",
                  "NTC", NULL);
  /* Big enough for the gate math to split across threads. */
  check_recurrent("(3, 64, 16)", "mode", "lstm", "state_size", "128", "use_bias", "True", NULL);
}

/* ---- _npi_einsum -------------------------------------------------------------------------- */

static void test_einsum_shape(void)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  DsShape in[3], out[1];
  DsNode *n = node_new(g, "_npi_einsum", "subscripts", "bij, bjk -> bik", "num_args", "2", NULL);
  infer_ok(n, (const char *[]){"(5, 2, 3)", "(5, 3, 4)"}, in, out);
  assert_shape(&out[0], "(5, 2, 4)");
  infer_ok(n, (const char *[]){"(5, ?, 3)", "(?, ?, 4)"}, in, out);
  assert_shape(&in[1], "(5, 3, 4)");
  infer_fails(n, (const char *[]){"(5, 2, 3)", "(5, 4, 4)"}, "operand");
  infer_fails(n, (const char *[]){"(5, 2)", "(5, 3, 4)"}, "does not fit");
  /* Implicit output: the labels used once, in ASCII order. */
  DsNode *ni = node_new(g, "_npi_einsum", "subscripts", "ij,jk", "num_args", "2", NULL);
  infer_ok(ni, (const char *[]){"(2, 3)", "(3, 4)"}, in, out);
  assert_shape(&out[0], "(2, 4)");
  DsNode *nt = node_new(g, "_npi_einsum", "subscripts", "ba", "num_args", "1", NULL);
  infer_ok(nt, (const char *[]){"(2, 3)"}, in, out);
  assert_shape(&out[0], "(3, 2)");
  /* Ellipses broadcast, and a repeated label is a diagonal. */
  DsNode *ne = node_new(g, "_npi_einsum", "subscripts", "...ii->...i", "num_args", "1", NULL);
  infer_ok(ne, (const char *[]){"(3, 5, 5)"}, in, out);
  assert_shape(&out[0], "(3, 5)");
  infer_fails(ne, (const char *[]){"(3, 5, 4)"}, "operand");
  DsNode *nb = node_new(g, "_npi_einsum", "subscripts", "...ij,...jk", "num_args", "2", NULL);
  infer_ok(nb, (const char *[]){"(2, 1, 3, 4)", "(5, 4, 6)"}, in, out);
  assert_shape(&out[0], "(2, 5, 3, 6)");
  DsNode *ns = node_new(g, "_npi_einsum", "subscripts", "i,i->", "num_args", "2", NULL);
  infer_ok(ns, (const char *[]){"(7,)", "(7,)"}, in, out);
  assert_shape(&out[0], "()");
  DsNode *n3 = node_new(g, "_npi_einsum", "subscripts", "a,b,c->abc", "num_args", "3", NULL);
  infer_ok(n3, (const char *[]){"(2,)", "(3,)", "(4,)"}, in, out);
  assert_shape(&out[0], "(2, 3, 4)");
  parse_fails(DS_ERROR_INVALID, "num_args", "_npi_einsum", "subscripts", "ij,jk", "num_args", "1",
              NULL);
  parse_fails(DS_ERROR_INVALID, "subscripts", "_npi_einsum", "subscripts", "ij->k", "num_args", "1",
              NULL);
  parse_fails(DS_ERROR_INVALID, "subscripts", "_npi_einsum", "subscripts", "ij->ii", "num_args",
              "1", NULL);
  parse_fails(DS_ERROR_INVALID, "subscripts", "_npi_einsum", "subscripts", "i1", "num_args", "1",
              NULL);
  parse_fails(DS_ERROR_INVALID, "subscripts", "_npi_einsum", "subscripts", "..i..", "num_args", "1",
              NULL);
  parse_fails(DS_ERROR_INVALID, "subscripts", "_npi_einsum", NULL);
}

/* Einsum by brute force over every assignment of every label, in double. */
static void ref_einsum(const DsEinsumParam *p, const DsTensor *in, const DsTensor *y, double *out)
{
  int ranks[DS_EINSUM_MAX_OPERANDS], labels[DS_EINSUM_MAX_OPERANDS][DS_MAX_NDIM],
      out_l[DS_MAX_NDIM];
  for (int k = 0; k < p->num_args; k++)
    ranks[k] = in[k].ndim;
  int total_ell = ds_einsum_ellipsis_rank(p, ranks);
  int64_t size[DS_EINSUM_MAX_LABELS];
  bool used[DS_EINSUM_MAX_LABELS] = {false};
  for (int l = 0; l < DS_EINSUM_MAX_LABELS; l++)
    size[l] = 1;
  for (int k = 0; k < p->num_args; k++) {
    g_assert_cmpint(ds_einsum_expand_term(&p->in[k], ranks[k], total_ell, labels[k]), ==, ranks[k]);
    for (int i = 0; i < ranks[k]; i++) {
      int l = labels[k][i];
      if (!used[l] || size[l] == 1) /* a 1 broadcasts */
        size[l] = in[k].shape[i];
      used[l] = true;
    }
  }
  int n_out = ds_einsum_expand_term(&p->out, -1, total_ell, out_l);
  for (int64_t i = 0; i < ds_tensor_numel(y); i++)
    out[i] = 0;
  int all[DS_EINSUM_MAX_LABELS], n_all = 0;
  for (int l = 0; l < DS_EINSUM_MAX_LABELS; l++) {
    if (used[l] && size[l] == 0)
      return; /* nothing to sum */
    if (used[l])
      all[n_all++] = l;
  }
  int64_t idx[DS_EINSUM_MAX_LABELS] = {0};
  for (;;) {
    double prod = 1;
    for (int k = 0; k < p->num_args; k++) {
      int64_t off = 0;
      for (int i = 0; i < ranks[k]; i++)
        off = off * in[k].shape[i] + (in[k].shape[i] == 1 ? 0 : idx[labels[k][i]]);
      prod *= get(&in[k], off);
    }
    int64_t o = 0;
    for (int i = 0; i < n_out; i++)
      o = o * size[out_l[i]] + idx[out_l[i]];
    out[o] += prod;
    int d = n_all - 1;
    for (; d >= 0; d--) {
      if (++idx[all[d]] < size[all[d]])
        break;
      idx[all[d]] = 0;
    }
    if (d < 0)
      break;
  }
}

static void check_einsum(DsDType t, const char *subscripts, int n_ops, const char *s0,
                         const char *s1)
{
  g_autoptr(DsGraph) g = ds_graph_new();
  g_autofree char *na = g_strdup_printf("%d", n_ops);
  DsNode *n = node_new(g, "_npi_einsum", "subscripts", subscripts, "num_args", na, NULL);
  DsShape in[2], out[1];
  infer_ok(n, (const char *[]){s0, s1}, in, out);
  g_autofree char *os = ds_shape_to_string(&out[0]);
  DsTensor x[2] = {tensor_new(t, s0), tensor_new(t, n_ops > 1 ? s1 : "(1,)")};
  fill_random(&x[0], -2, 2);
  fill_random(&x[1], -2, 2);
  DsTensor y = tensor_new(t, os);
  run_ok(DS_OP_EINSUM, n->param, x, n_ops, &y, 1);
  int64_t numel = ds_tensor_numel(&y);
  double *want = dalloc(numel);
  ref_einsum(n->param, x, &y, want);
  for (int64_t i = 0; i < numel; i++) {
    double w = t == DS_DTYPE_INT32 || t == DS_DTYPE_INT64 ? wrap_int(t, want[i]) : want[i];
    if (fabs(get(&y, i) - w) > 1e-4 * (1 + fabs(w))) {
      g_test_fail_printf("einsum %s %s: element %" G_GINT64_FORMAT " is %g, want %g", subscripts,
                         ds_dtype_name(t), i, get(&y, i), w);
      break;
    }
  }
  g_free(want);
  tensors_free(x, 2);
  tensor_free(&y);
}

static void test_einsum_kernel(void)
{
  const DsDType floats[] = {DS_DTYPE_FLOAT32, DS_DTYPE_FLOAT64};
  for (int f = 0; f < 2; f++) {
    DsDType t = floats[f];
    /* The BLAS path: batch, M, N and contracted labels in any order. */
    check_einsum(t, "bij,bjk->bik", 2, "(5, 2, 3)", "(5, 3, 4)");
    check_einsum(t, "i,i", 2, "(7,)", "(7,)");
    check_einsum(t, "bhqd,bhkd->bhqk", 2, "(2, 3, 5, 4)", "(2, 3, 6, 4)");
    check_einsum(t, "kj,jbi->ibk", 2, "(3, 4)", "(4, 2, 5)");
    check_einsum(t, "i,j->ji", 2, "(3,)", "(4,)");                  /* outer product */
    check_einsum(t, "...ij,...jk", 2, "(2, 1, 3, 4)", "(5, 4, 6)"); /* broadcast batch */
    check_einsum(t, "ij,jk->ik", 2, "(0, 3)", "(3, 4)");            /* empty */
    /* The direct path: one operand, diagonals, labels summed in one operand. */
    check_einsum(t, "ij->ji", 1, "(3, 4)", NULL);
    check_einsum(t, "ij->i", 1, "(3, 4)", NULL);
    check_einsum(t, "...ii ->...i", 1, "(3, 5, 5)", NULL);
    check_einsum(t, "ii", 1, "(4, 4)", NULL);
    check_einsum(t, "ij,jk->k", 2, "(3, 4)", "(4, 5)");
    check_einsum(t, "iij,j->i", 2, "(3, 3, 2)", "(2,)");
  }
  check_einsum(DS_DTYPE_INT64, "bij,bjk->bik", 2, "(2, 2, 3)", "(2, 3, 4)");
  check_einsum(DS_DTYPE_INT32, "ij->j", 1, "(5, 3)", NULL);
  /* Three operands. */
  g_autoptr(DsGraph) g = ds_graph_new();
  DsNode *n = node_new(g, "_npi_einsum", "subscripts", "i,ij,j->", "num_args", "3", NULL);
  DsTensor x[3] = {rtensor("(3,)", -1, 1), rtensor("(3, 4)", -1, 1), rtensor("(4,)", -1, 1)};
  DsTensor y = ftensor("()");
  run_ok(DS_OP_EINSUM, n->param, x, 3, &y, 1);
  double want = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 4; j++)
      want += (double)fp(&x[0])[i] * fp(&x[1])[i * 4 + j] * fp(&x[2])[j];
  close_to(y.data, &want, 1, 1e-6, 1e-5, "einsum i,ij,j->");
  tensors_free(x, 3);
  tensor_free(&y);
}

int main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  ds_test_ops_init(20240611);
  g_test_add_func("/ops/nn/registry", test_registry);
  g_test_add_func("/ops/nn/model-attrs", test_model_attrs);
  g_test_add_func("/ops/nn/gemm", test_gemm);
  g_test_add_func("/ops/nn/conv-gemm-dims", test_conv_gemm_dims);
  g_test_add_func("/ops/nn/vmath", test_vmath);
  g_test_add_func("/ops/nn/convolution/shape", test_convolution_shape);
  g_test_add_func("/ops/nn/convolution/kernel", test_convolution_kernel);
  g_test_add_func("/ops/nn/convolution/batched", test_convolution_batched);
  g_test_add_func("/ops/nn/pooling/shape", test_pooling_shape);
  g_test_add_func("/ops/nn/pooling/kernel", test_pooling_kernel);
  g_test_add_func("/ops/nn/pooling/backward", test_backward_pooling);
  g_test_add_func("/ops/nn/fully-connected/shape", test_fully_connected_shape);
  g_test_add_func("/ops/nn/fully-connected/kernel", test_fully_connected_kernel);
  g_test_add_func("/ops/nn/dot/shape", test_dot_shape);
  g_test_add_func("/ops/nn/dot/kernel", test_dot_kernel);
  g_test_add_func("/ops/nn/batch-norm/shape", test_batch_norm_shape);
  g_test_add_func("/ops/nn/batch-norm/kernel", test_batch_norm_kernel);
  g_test_add_func("/ops/nn/layer-norm/shape", test_layer_norm_shape);
  g_test_add_func("/ops/nn/layer-norm/kernel", test_layer_norm_kernel);
  g_test_add_func("/ops/nn/activation", test_activation);
  g_test_add_func("/ops/nn/leaky-relu", test_leaky_relu);
  g_test_add_func("/ops/nn/softmax/shape", test_softmax_shape);
  g_test_add_func("/ops/nn/softmax/kernel", test_softmax_kernel);
  g_test_add_func("/ops/nn/softmax-output/kernel", test_softmax_output_kernel);
  g_test_add_func("/ops/nn/dropout", test_dropout);
  g_test_add_func("/ops/nn/embedding", test_embedding);
  g_test_add_func("/ops/nn/rnn/shape", test_rnn_shape);
  g_test_add_func("/ops/nn/rnn/kernel", test_rnn_kernel);
  g_test_add_func("/ops/nn/convolution/padding", test_convolution_padding);
  g_test_add_func("/ops/nn/pooling/padding", test_pooling_padding);
  g_test_add_func("/ops/nn/pooling/indices", test_pooling_indices);
  g_test_add_func("/ops/nn/matmul/shape", test_matmul_shape);
  g_test_add_func("/ops/nn/matmul/kernel", test_matmul_kernel);
  g_test_add_func("/ops/nn/dot/float64", test_dot_float64);
  g_test_add_func("/ops/nn/layer-norm/trailing", test_layer_norm_trailing);
  g_test_add_func("/ops/nn/softmax/trailing", test_softmax_trailing);
  g_test_add_func("/ops/nn/hardmax", test_hardmax);
  g_test_add_func("/ops/nn/instance-norm", test_instance_norm);
  g_test_add_func("/ops/nn/lrn", test_lrn);
  g_test_add_func("/ops/nn/recurrent-layer/shape", test_recurrent_layer_shape);
  g_test_add_func("/ops/nn/recurrent-layer/kernel", test_recurrent_layer_kernel);
  g_test_add_func("/ops/nn/einsum/shape", test_einsum_shape);
  g_test_add_func("/ops/nn/einsum/kernel", test_einsum_kernel);
  int rc = g_test_run();
  ds_thread_pool_free(pool);
  g_rand_free(rng);
  return rc;
}
