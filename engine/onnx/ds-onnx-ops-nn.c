/* ds-onnx-ops-nn.c: ONNX's neural-network ops: matrix products, convolutions, pools,
 * normalisations, softmax and its kin, dropout and the recurrent layers.
 *
 * Most map onto one engine op. Where ONNX's semantics go beyond MXNet's, the engine op has an
 * extension attribute rather than a chain of nodes: asymmetric and run-time ("auto_pad")
 * padding on Convolution and Pooling, softmax and LayerNorm over every axis from `axis` on
 * (`trailing_axes`), and the recurrent layers run as _contrib_RecurrentLayer, which reads the
 * weights in ONNX's layout and gate order, so they may be graph inputs. Forms the engine cannot
 * run exactly are refused with ds_onnx_unsupported(), naming the attribute or input.
 */
#include "ds-onnx-translate.h"

#include <string.h>

#include "ds-attr.h"
#include "ds-op.h"

/* The spatial dims the engine's Convolution and Pooling handle. */
#define MAX_SPATIAL DS_NN_MAX_SPATIAL

/* ---- Helpers -------------------------------------------------------------------------------- */

/* Emits `op` and binds every output the ONNX node names. */
static gboolean emit_bind(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op,
                          const DsEntry *in, guint n_in, const char *const *keys,
                          const char *const *values, guint n_attrs, GError **error)
{
  DsNode *n = ds_onnx_emitv(b, node, op, NULL, in, n_in, keys, values, n_attrs, error);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

/* The node asks for output `i` (present and not the empty name). */
static gboolean wants_output(const DsOnnxNode *node, guint i)
{
  return i < node->n_outputs && node->outputs[i][0] != '\0';
}

/* Refuses a node whose input `i` ONNX's type information says is not float32: the engine's
 * kernels for these layers compute in float32 only. */
static gboolean require_float32(DsOnnxBuilder *b, const DsOnnxNode *node, guint i, GError **error)
{
  DsDType t = ds_onnx_input_dtype(b, node, i);
  if (t == DS_DTYPE_UNKNOWN || t == DS_DTYPE_FLOAT32)
    return TRUE;
  return ds_onnx_unsupported(error, "input %u is %s; only float32 is supported", i,
                             ds_dtype_name(t));
}

/* Refuses a pool whose input `i` has a dtype its kernel lacks: float32 and float64, and for
 * max pooling int8 and uint8 too. */
static gboolean require_pool_dtype(DsOnnxBuilder *b, const DsOnnxNode *node, gboolean is_max,
                                   GError **error)
{
  DsDType t = ds_onnx_input_dtype(b, node, 0);
  if (t == DS_DTYPE_FLOAT64 || (is_max && (t == DS_DTYPE_INT8 || t == DS_DTYPE_UINT8)))
    return TRUE;
  return require_float32(b, node, 0, error);
}

/* A tensor of `dtype` and shape, NULL on failure (which ds_ndarray_new reports). */
static DsNDArray *new_array(DsDType dtype, int ndim, const int64_t *shape, GError **error)
{
  return ds_ndarray_new(dtype, ndim, shape, "ONNX constant", error);
}

/* Element i of a float32 or float64 constant. */
static double const_elem(const DsNDArray *a, int64_t i)
{
  return a->view.dtype == DS_DTYPE_FLOAT64 ? ((const double *)a->view.data)[i]
                                           : ((const float *)a->view.data)[i];
}

static gboolean is_float_const(const DsNDArray *a)
{
  return a != NULL && (a->view.dtype == DS_DTYPE_FLOAT32 || a->view.dtype == DS_DTYPE_FLOAT64);
}

/* ---- MatMul, Gemm --------------------------------------------------------------------------- */

static gboolean translate_matmul(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  for (guint i = 0; i < 2; i++) {
    DsDType t = ds_onnx_input_dtype(b, node, i);
    if (t == DS_DTYPE_BOOL)
      return ds_onnx_unsupported(error,
                                 "input %u is %s; matmul computes in float32, float64 "
                                 "and the integer types",
                                 i, ds_dtype_name(t));
  }
  DsEntry in[2];
  if (!ds_onnx_input(b, node, 0, &in[0], error) || !ds_onnx_input(b, node, 1, &in[1], error))
    return FALSE;
  return emit_bind(b, node, "_npi_matmul", in, 2, NULL, NULL, 0, error);
}

/* Gemm's fast form: FullyConnected, whose weight is (N, K) and bias (N,). Possible when A is
 * not transposed and B is a float32 constant (transposed and scaled by alpha here when needed)
 * and C is absent or a constant that broadcasts along the rows ((N,), (1, N) or one value),
 * scaled by beta here. *out is the FullyConnected node, or NULL when the form does not apply;
 * FALSE is an error. */
static gboolean gemm_as_fully_connected(DsOnnxBuilder *b, const DsOnnxNode *node, DsEntry a,
                                        DsNode **out, GError **error)
{
  *out = NULL;
  const gboolean trans_a = ds_onnx_attr_int(node, "transA", 0) != 0;
  const gboolean trans_b = ds_onnx_attr_int(node, "transB", 0) != 0;
  const double alpha = ds_onnx_attr_float(node, "alpha", 1.0f);
  const double beta = ds_onnx_attr_float(node, "beta", 1.0f);
  const DsNDArray *bw = ds_onnx_input_const(b, node, 1);
  if (trans_a || bw == NULL || bw->view.dtype != DS_DTYPE_FLOAT32 || bw->view.ndim != 2)
    return TRUE;
  const int64_t n = trans_b ? bw->view.shape[0] : bw->view.shape[1];
  const int64_t k = trans_b ? bw->view.shape[1] : bw->view.shape[0];
  if (n < 1) /* FullyConnected needs num_hidden >= 1 */
    return TRUE;
  const gboolean has_c = ds_onnx_has_input(node, 2);
  const DsNDArray *c = has_c ? ds_onnx_input_const(b, node, 2) : NULL;
  if (has_c) {
    if (c == NULL || c->view.dtype != DS_DTYPE_FLOAT32)
      return TRUE;
    int64_t cn = ds_tensor_numel(&c->view);
    gboolean rows = c->view.ndim <= 1 || (c->view.ndim == 2 && c->view.shape[0] == 1);
    if (!rows || (cn != n && cn != 1))
      return TRUE;
  }
  DsEntry in[3];
  in[0] = a;
  /* The weight as FullyConnected wants it: (N, K), times alpha. */
  if (trans_b && alpha == 1.0) {
    if (!ds_onnx_input(b, node, 1, &in[1], error))
      return FALSE;
  } else {
    int64_t shape[2] = {n, k};
    DsNDArray *w = new_array(DS_DTYPE_FLOAT32, 2, shape, error);
    if (w == NULL)
      return FALSE;
    const float *src = bw->view.data;
    float *dst = w->view.data;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < k; j++)
        dst[i * k + j] = (float)(alpha * (trans_b ? src[i * k + j] : src[j * n + i]));
    in[1] = ds_onnx_add_constant(b, ds_onnx_printf(b, "%s_weight", node->inputs[1]), w);
  }
  if (has_c) {
    if (ds_tensor_numel(&c->view) == n && c->view.ndim == 1 && beta == 1.0) {
      if (!ds_onnx_input(b, node, 2, &in[2], error))
        return FALSE;
    } else {
      DsNDArray *bias = new_array(DS_DTYPE_FLOAT32, 1, &n, error);
      if (bias == NULL)
        return FALSE;
      const float *src = c->view.data;
      int64_t cn = ds_tensor_numel(&c->view);
      for (int64_t i = 0; i < n; i++)
        ((float *)bias->view.data)[i] = (float)(beta * src[cn == 1 ? 0 : i]);
      in[2] = ds_onnx_add_constant(b, ds_onnx_printf(b, "%s_bias", node->inputs[2]), bias);
    }
  }
  *out = ds_onnx_emit(b, node, "FullyConnected", NULL, in, has_c ? 3 : 2, error, "num_hidden",
                      ds_onnx_printf(b, "%" G_GINT64_FORMAT, n), "no_bias",
                      has_c ? "False" : "True", "flatten", "True", NULL);
  return *out != NULL;
}

/* y * scalar, unless the scalar is 1. */
static gboolean scale_entry(DsOnnxBuilder *b, const DsOnnxNode *node, const char *suffix,
                            double scalar, DsEntry *inout, GError **error)
{
  if (scalar == 1.0)
    return TRUE;
  DsNode *n = ds_onnx_emit(b, node, "_mul_scalar", suffix, inout, 1, error, "scalar",
                           ds_onnx_fmt_float(b, scalar), "is_int", "False", NULL);
  if (n == NULL)
    return FALSE;
  *inout = ds_onnx_entry(n, 0);
  return TRUE;
}

/* Gemm: alpha * op(A) * op(B) + beta * C, C broadcasting to (M, N). */
static gboolean translate_gemm(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsDType t = ds_onnx_input_dtype(b, node, 0);
  if (t != DS_DTYPE_UNKNOWN && t != DS_DTYPE_FLOAT32 && t != DS_DTYPE_FLOAT64)
    return ds_onnx_unsupported(error, "input 0 is %s; Gemm runs in float32 and float64",
                               ds_dtype_name(t));
  DsEntry a;
  if (!ds_onnx_input(b, node, 0, &a, error))
    return FALSE;
  DsNode *fc;
  if (!gemm_as_fully_connected(b, node, a, &fc, error))
    return FALSE;
  if (fc != NULL)
    return ds_onnx_set_output(b, node, 0, ds_onnx_entry(fc, 0), error);

  /* The general form: dot (2-D products with transposes), then the scalings and C. */
  DsEntry in[2] = {a, {0, 0, 0}};
  if (!ds_onnx_input(b, node, 1, &in[1], error))
    return FALSE;
  const gboolean trans_a = ds_onnx_attr_int(node, "transA", 0) != 0;
  const gboolean trans_b = ds_onnx_attr_int(node, "transB", 0) != 0;
  DsNode *prod = ds_onnx_emit(b, node, "dot", ds_onnx_has_input(node, 2) ? "matmul" : NULL, in, 2,
                              error, "transpose_a", trans_a ? "True" : "False", "transpose_b",
                              trans_b ? "True" : "False", NULL);
  if (prod == NULL)
    return FALSE;
  DsEntry y = ds_onnx_entry(prod, 0);
  if (!scale_entry(b, node, "alpha", ds_onnx_attr_float(node, "alpha", 1.0f), &y, error))
    return FALSE;
  if (ds_onnx_has_input(node, 2)) {
    DsEntry sum[2] = {y, {0, 0, 0}};
    if (!ds_onnx_input(b, node, 2, &sum[1], error) ||
        !scale_entry(b, node, "beta", ds_onnx_attr_float(node, "beta", 1.0f), &sum[1], error))
      return FALSE;
    DsNode *add = ds_onnx_emit(b, node, "broadcast_add", NULL, sum, 2, error, NULL);
    if (add == NULL)
      return FALSE;
    y = ds_onnx_entry(add, 0);
  }
  return ds_onnx_set_output(b, node, 0, y, error);
}

/* ---- Convolutions and pools: the shared attributes --------------------------------------- */

typedef struct {
  int n; /* spatial dims */
  gint64 kernel[MAX_SPATIAL];
  gint64 stride[MAX_SPATIAL];
  gint64 dilate[MAX_SPATIAL];
  gint64 pad[MAX_SPATIAL]; /* before each axis */
  gint64 pad_end[MAX_SPATIAL];
  const char *auto_pad; /* NULL, "same_upper" or "same_lower" */
} Window;

/* An INTS attribute of exactly `n` values, or `fallback` for each when absent. */
static gboolean window_ints(const DsOnnxNode *node, const char *name, int n, gint64 fallback,
                            gint64 *out, GError **error)
{
  gint64 v[2 * MAX_SPATIAL + 2];
  int k = ds_onnx_attr_ints(node, name, v, G_N_ELEMENTS(v));
  if (k < 0) {
    for (int i = 0; i < n; i++)
      out[i] = fallback;
    return TRUE;
  }
  if (k != n)
    return ds_onnx_invalid(error, "attribute %s has %d values, but the kernel has %d dims", name, k,
                           n);
  memcpy(out, v, sizeof(gint64) * (size_t)n);
  return TRUE;
}

/* strides, dilations, pads and auto_pad for a kernel of `w->n` dims (kernel already set). */
static gboolean window_parse(const DsOnnxNode *node, Window *w, GError **error)
{
  gint64 pads[2 * MAX_SPATIAL];
  if (!window_ints(node, "strides", w->n, 1, w->stride, error) ||
      !window_ints(node, "dilations", w->n, 1, w->dilate, error) ||
      !window_ints(node, "pads", 2 * w->n, 0, pads, error))
    return FALSE;
  for (int i = 0; i < w->n; i++) {
    if (w->stride[i] < 1 || w->dilate[i] < 1 || pads[i] < 0 || pads[w->n + i] < 0)
      return ds_onnx_invalid(error, "strides and dilations must be positive, pads not negative");
    w->pad[i] = pads[i];
    w->pad_end[i] = pads[w->n + i];
  }
  const char *mode = ds_onnx_attr_string(node, "auto_pad", "NOTSET");
  w->auto_pad = NULL;
  if (strcmp(mode, "SAME_UPPER") == 0 || strcmp(mode, "SAME_LOWER") == 0) {
    w->auto_pad = mode[5] == 'U' ? "same_upper" : "same_lower";
    memset(w->pad, 0, sizeof w->pad);
    memset(w->pad_end, 0, sizeof w->pad_end);
  } else if (strcmp(mode, "VALID") == 0) {
    memset(w->pad, 0, sizeof w->pad);
    memset(w->pad_end, 0, sizeof w->pad_end);
  } else if (strcmp(mode, "NOTSET") != 0) {
    return ds_onnx_invalid(error, "auto_pad=%s is not an ONNX padding mode", mode);
  }
  return TRUE;
}

/* The attribute keys and values of a window: kernel, stride, dilate, pad, pad_end, auto_pad. */
typedef struct {
  const char *keys[16];
  const char *values[16];
  guint n;
} Attrs;

static void attrs_add(Attrs *a, const char *key, const char *value)
{
  g_assert(a->n < G_N_ELEMENTS(a->keys));
  a->keys[a->n] = key;
  a->values[a->n++] = value;
}

static void window_attrs(DsOnnxBuilder *b, const Window *w, gboolean with_dilate, Attrs *a)
{
  attrs_add(a, "kernel", ds_onnx_fmt_ints(b, w->kernel, w->n));
  attrs_add(a, "stride", ds_onnx_fmt_ints(b, w->stride, w->n));
  if (with_dilate)
    attrs_add(a, "dilate", ds_onnx_fmt_ints(b, w->dilate, w->n));
  attrs_add(a, "pad", ds_onnx_fmt_ints(b, w->pad, w->n));
  if (memcmp(w->pad, w->pad_end, sizeof(gint64) * (size_t)w->n) != 0)
    attrs_add(a, "pad_end", ds_onnx_fmt_ints(b, w->pad_end, w->n));
  if (w->auto_pad != NULL)
    attrs_add(a, "auto_pad", w->auto_pad);
}

/* The static shape of input `i`: a constant's, or the one a graph input declares with every
 * dim fixed (its `__shape__`, where the importer writes 0 for a symbolic dim). Its rank, or -1
 * when unknown. */
static int static_shape(DsOnnxBuilder *b, const DsOnnxNode *node, guint i, gint64 *dims)
{
  const DsNDArray *c = ds_onnx_input_const(b, node, i);
  if (c != NULL) {
    for (int k = 0; k < c->view.ndim; k++)
      dims[k] = c->view.shape[k];
    return c->view.ndim;
  }
  DsEntry e;
  GError *ignored = NULL;
  if (!ds_onnx_input(b, node, i, &e, &ignored)) {
    g_clear_error(&ignored);
    return -1;
  }
  const DsNode *var = ds_onnx_builder_graph(b)->nodes[e.node_id];
  const char *text = ds_node_is_variable(var) ? ds_node_get_attr(var, "__shape__") : NULL;
  int n;
  if (text == NULL || !ds_attr_parse_tuple(text, dims, DS_MAX_NDIM, 0, &n))
    return -1;
  for (int k = 0; k < n; k++)
    if (dims[k] < 1)
      return -1;
  return n;
}

/* The kernel's spatial size: kernel_shape, or the weight's static dims after the first two
 * (`w_rank` of them in `w_dims`, or -1 when unknown). */
static gboolean window_kernel(DsOnnxBuilder *b, const DsOnnxNode *node, const gint64 *w_dims,
                              int w_rank, Window *w, GError **error)
{
  (void)b;
  int n = ds_onnx_attr_ints(node, "kernel_shape", w->kernel, MAX_SPATIAL);
  if (n < 0 && w_rank >= 3) {
    n = w_rank - 2;
    for (int i = 0; i < n && i < MAX_SPATIAL; i++)
      w->kernel[i] = w_dims[2 + i];
  }
  if (n < 0)
    return ds_onnx_unsupported(error, "kernel_shape is absent and the weight's shape is not "
                                      "static");
  if (n < 1 || n > MAX_SPATIAL)
    return ds_onnx_unsupported(error, "%d-D kernels are not supported (1-D to %d-D are)", n,
                               MAX_SPATIAL);
  for (int i = 0; i < n; i++)
    if (w->kernel[i] < 1)
      return ds_onnx_invalid(error, "kernel_shape values must be positive");
  w->n = n;
  return TRUE;
}

/* ---- Conv, ConvTranspose ---------------------------------------------------------------- */

DsNode *ds_onnx_emit_conv(DsOnnxBuilder *b, const DsOnnxNode *node, guint weight_input,
                          const DsEntry *in, gboolean has_bias, GError **error)
{
  gint64 w_dims[DS_MAX_NDIM];
  int w_rank = static_shape(b, node, weight_input, w_dims);
  Window w;
  if (!window_kernel(b, node, w_dims, w_rank, &w, error) || !window_parse(node, &w, error))
    return NULL;
  const gint64 group = ds_onnx_attr_int(node, "group", 1);
  if (group < 1) {
    ds_onnx_invalid(error, "group=%" G_GINT64_FORMAT " must be positive", group);
    return NULL;
  }
  /* The filter count: the weight's static one, else the weight's at run time (num_filter=0). */
  gint64 filters = w_rank == w.n + 2 ? w_dims[0] : 0;
  Attrs a = {0};
  window_attrs(b, &w, TRUE, &a);
  attrs_add(&a, "num_filter", ds_onnx_printf(b, "%" G_GINT64_FORMAT, filters));
  attrs_add(&a, "num_group", ds_onnx_printf(b, "%" G_GINT64_FORMAT, group));
  attrs_add(&a, "no_bias", has_bias ? "False" : "True");
  return ds_onnx_emitv(b, node, "Convolution", NULL, in, has_bias ? 3 : 2, a.keys, a.values, a.n,
                       error);
}

static gboolean translate_conv(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  if (!require_float32(b, node, 0, error))
    return FALSE;
  const gboolean has_bias = ds_onnx_has_input(node, 2);
  DsEntry in[3];
  for (guint i = 0; i < (has_bias ? 3u : 2u); i++)
    if (!ds_onnx_input(b, node, i, &in[i], error))
      return FALSE;
  DsNode *n = ds_onnx_emit_conv(b, node, 1, in, has_bias, error);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

static gint64 floor_div(gint64 a, gint64 b)
{
  gint64 q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* Crops `x` on spatial axis `axis` by `begin` and `end` elements. */
static gboolean crop_axis(DsOnnxBuilder *b, const DsOnnxNode *node, int axis, gint64 begin,
                          gint64 end, DsEntry *x, GError **error)
{
  if (begin == 0 && end == 0)
    return TRUE;
  DsNode *n = ds_onnx_emit(b, node, "slice_axis", ds_onnx_printf(b, "crop%d", axis), x, 1, error,
                           "axis", ds_onnx_printf(b, "%d", axis), "begin",
                           ds_onnx_printf(b, "%" G_GINT64_FORMAT, begin), "end",
                           end > 0 ? ds_onnx_printf(b, "%" G_GINT64_FORMAT, -end) : "None", NULL);
  if (n == NULL)
    return FALSE;
  *x = ds_onnx_entry(n, 0);
  return TRUE;
}

/* ConvTranspose's padding (begin, end) of axis i: the pads, or what output_shape or auto_pad
 * derive (ONNX's rule: the odd element at the end with SAME_UPPER, else at the beginning).
 * `x_dims` is the data's static shape or NULL. */
static gboolean conv_transpose_pads(const DsOnnxNode *node, const Window *w, int i,
                                    const gint64 *out_pad, const gint64 *out_shape, int n_shape,
                                    const gint64 *x_dims, gint64 *pb, gint64 *pe, GError **error)
{
  const gint64 dk = w->dilate[i] * (w->kernel[i] - 1) + 1, s = w->stride[i];
  const gboolean upper = w->auto_pad != NULL && strcmp(w->auto_pad, "same_upper") == 0;
  gint64 total;
  if (n_shape >= 0) {
    if (x_dims == NULL)
      return ds_onnx_unsupported(error, "output_shape needs the input's spatial size, which is "
                                        "not static");
    total = s * (x_dims[2 + i] - 1) + out_pad[i] + dk - out_shape[n_shape - w->n + i];
  } else if (w->auto_pad != NULL) {
    /* Output input * stride: a total padding independent of the input size. */
    total = out_pad[i] + dk - s;
  } else {
    *pb = w->pad[i];
    *pe = w->pad_end[i];
    return TRUE;
  }
  (void)node;
  gint64 half = floor_div(total, 2);
  *pb = upper ? half : total - half;
  *pe = total - *pb;
  return TRUE;
}

/* ConvTranspose onto Deconvolution (1-D and 2-D), which crops its full output by a symmetric
 * `pad` and extends it by `adj` (< stride) at the end: ONNX's (begin b, end e) padding is pad b
 * and adj b - e + output_padding where that fits, else pad min(b, e) and adj output_padding
 * with the rest cropped by slice_axis. Deconvolution takes its filter count and kernel as
 * attributes: the weight's shape must be static. */
static gboolean translate_conv_transpose(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  if (!require_float32(b, node, 0, error))
    return FALSE;
  gint64 w_dims[DS_MAX_NDIM], x_dims[DS_MAX_NDIM];
  int w_rank = static_shape(b, node, 1, w_dims);
  if (w_rank < 3)
    return ds_onnx_unsupported(error, "the weight W's shape is not static (Deconvolution needs "
                                      "its filter count)");
  Window w;
  if (!window_kernel(b, node, w_dims, w_rank, &w, error) || !window_parse(node, &w, error))
    return FALSE;
  if (w.n != w_rank - 2)
    return ds_onnx_invalid(error, "kernel_shape has %d values, but W has %d dims", w.n, w_rank);
  if (w.n > 3)
    return ds_onnx_unsupported(error, "%d-D transposed convolutions are not supported", w.n);
  const gint64 group = ds_onnx_attr_int(node, "group", 1);
  if (group < 1)
    return ds_onnx_invalid(error, "group must be positive");
  gint64 out_pad[MAX_SPATIAL], out_shape[MAX_SPATIAL + 2];
  if (!window_ints(node, "output_padding", w.n, 0, out_pad, error))
    return FALSE;
  int n_shape = ds_onnx_attr_ints(node, "output_shape", out_shape, MAX_SPATIAL + 2);
  if (n_shape >= 0 && n_shape != w.n && n_shape != w.n + 2)
    return ds_onnx_invalid(error, "output_shape has %d values for a %d-D kernel", n_shape, w.n);
  const gboolean x_static = static_shape(b, node, 0, x_dims) == w.n + 2;
  gint64 pad[MAX_SPATIAL], adj[MAX_SPATIAL], crop_begin[MAX_SPATIAL], crop_end[MAX_SPATIAL];
  for (int i = 0; i < w.n; i++) {
    gint64 pb = 0, pe = 0;
    if (!conv_transpose_pads(node, &w, i, out_pad, out_shape, n_shape, x_static ? x_dims : NULL,
                             &pb, &pe, error))
      return FALSE;
    if (out_pad[i] < 0 || out_pad[i] >= w.stride[i])
      return ds_onnx_unsupported(error, "output_padding must be below the stride");
    crop_begin[i] = crop_end[i] = 0;
    if (pb >= 0 && pb >= pe && pb - pe + out_pad[i] < w.stride[i]) {
      pad[i] = pb;
      adj[i] = pb - pe + out_pad[i];
    } else if (pb >= 0 && pe >= 0) {
      pad[i] = MIN(pb, pe);
      adj[i] = out_pad[i];
      crop_begin[i] = pb - pad[i];
      crop_end[i] = pe - pad[i];
    } else {
      return ds_onnx_unsupported(error,
                                 "padding (%" G_GINT64_FORMAT ", %" G_GINT64_FORMAT
                                 ") on spatial axis %d does not fit Deconvolution",
                                 pb, pe, i);
    }
  }
  const gboolean has_bias = ds_onnx_has_input(node, 2);
  Attrs a = {0};
  attrs_add(&a, "kernel", ds_onnx_fmt_ints(b, w.kernel, w.n));
  attrs_add(&a, "stride", ds_onnx_fmt_ints(b, w.stride, w.n));
  attrs_add(&a, "dilate", ds_onnx_fmt_ints(b, w.dilate, w.n));
  attrs_add(&a, "pad", ds_onnx_fmt_ints(b, pad, w.n));
  attrs_add(&a, "adj", ds_onnx_fmt_ints(b, adj, w.n));
  attrs_add(&a, "num_filter", ds_onnx_printf(b, "%" G_GINT64_FORMAT, w_dims[1] * group));
  attrs_add(&a, "num_group", ds_onnx_printf(b, "%" G_GINT64_FORMAT, group));
  attrs_add(&a, "no_bias", has_bias ? "False" : "True");
  DsEntry in[3];
  for (guint i = 0; i < (has_bias ? 3u : 2u); i++)
    if (!ds_onnx_input(b, node, i, &in[i], error))
      return FALSE;
  gboolean crops = FALSE;
  for (int i = 0; i < w.n; i++)
    crops |= crop_begin[i] != 0 || crop_end[i] != 0;
  DsNode *deconv = ds_onnx_emitv(b, node, "Deconvolution", crops ? "deconv" : NULL, in,
                                 has_bias ? 3 : 2, a.keys, a.values, a.n, error);
  if (deconv == NULL)
    return FALSE;
  DsEntry y = ds_onnx_entry(deconv, 0);
  for (int i = 0; i < w.n; i++)
    if (!crop_axis(b, node, 2 + i, crop_begin[i], crop_end[i], &y, error))
      return FALSE;
  return ds_onnx_set_output(b, node, 0, y, error);
}

/* ---- Pools ------------------------------------------------------------------------------- */

/* MaxPool, AveragePool and LpPool: `type` is Pooling's pool_type. */
static gboolean translate_pool(DsOnnxBuilder *b, const DsOnnxNode *node, const char *type,
                               GError **error)
{
  if (!require_pool_dtype(b, node, strcmp(type, "max") == 0, error))
    return FALSE;
  Window w;
  if (!window_kernel(b, node, NULL, -1, &w, error) || !window_parse(node, &w, error))
    return FALSE;
  const gboolean is_max = strcmp(type, "max") == 0;
  for (int i = 0; i < w.n; i++)
    if (w.dilate[i] != 1 && !is_max)
      return ds_onnx_unsupported(error, "dilations are supported for MaxPool only");
  Attrs a = {0};
  window_attrs(b, &w, is_max, &a);
  attrs_add(&a, "pool_type", type);
  if (ds_onnx_attr_int(node, "ceil_mode", 0) != 0)
    attrs_add(&a, "pooling_convention", "full");
  if (strcmp(type, "avg") == 0)
    attrs_add(&a, "count_include_pad",
              ds_onnx_attr_int(node, "count_include_pad", 0) != 0 ? "True" : "False");
  /* MaxPool's Indices: flat positions in X, row-major (storage_order 0) or column-major. */
  const gboolean with_indices = is_max && wants_output(node, 1);
  if (with_indices)
    attrs_add(&a, "indices",
              ds_onnx_attr_int(node, "storage_order", 0) != 0 ? "column_major" : "row_major");
  if (strcmp(type, "lp") == 0) {
    /* MXNet's lp pooling sums x^p, ONNX's |x|^p: the same only for p = 2. */
    gint64 p = ds_onnx_attr_int(node, "p", 2);
    if (p != 2)
      return ds_onnx_unsupported(error, "p=%" G_GINT64_FORMAT " is not supported (p=2 is)", p);
    attrs_add(&a, "p_value", "2");
  }
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  DsNode *n = ds_onnx_emitv(b, node, "Pooling", NULL, &x, 1, a.keys, a.values, a.n, error);
  return n != NULL && ds_onnx_set_output(b, node, 0, ds_onnx_entry(n, 0), error) &&
         (!with_indices || ds_onnx_set_output(b, node, 1, ds_onnx_entry(n, 1), error));
}

static gboolean translate_max_pool(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return translate_pool(b, node, "max", error);
}

static gboolean translate_average_pool(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return translate_pool(b, node, "avg", error);
}

static gboolean translate_lp_pool(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return translate_pool(b, node, "lp", error);
}

/* MaxUnpool: MaxPool undone by its Indices. X's values go to their flat positions in zeros of
 * the output shape: the output_shape input when given (the indices number it, as in ONNX
 * Runtime and PyTorch), otherwise (in - 1) * stride + kernel - pads along each spatial axis.
 * Built from engine ops: zeros, a scatter into their flat view, a reshape. The output's shape
 * stays symbolic where it can: output_shape = Shape(v) (PyTorch's export of
 * max_unpool(..., output_size=v.size())) gives v's shape, a constant one its values; otherwise
 * the dims are read at run time. */
static gboolean translate_max_unpool(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  Window w;
  if (!window_kernel(b, node, NULL, -1, &w, error) || !window_parse(node, &w, error))
    return FALSE;
  for (int i = 0; i < w.n; i++)
    if (w.dilate[i] != 1 || w.auto_pad != NULL)
      return ds_onnx_invalid(error, "MaxUnpool has no dilations or auto_pad");
  DsEntry x, indices, shape, like, in[3], flat;
  if (!ds_onnx_input(b, node, 0, &x, error) || !ds_onnx_input(b, node, 1, &indices, error))
    return FALSE;
  const int rank = 2 + w.n;
  DsDType dtype = ds_onnx_input_dtype(b, node, 0);
  const char *dtype_name = ds_dtype_name(dtype == DS_DTYPE_UNKNOWN ? DS_DTYPE_FLOAT32 : dtype);
  const DsNDArray *given = ds_onnx_has_input(node, 2) ? ds_onnx_input_const(b, node, 2) : NULL;
  gint64 dims[DS_MAX_NDIM + 1];
  enum { BY_VALUES, LIKE_TENSOR, AT_RUN_TIME } how = AT_RUN_TIME;
  if (given != NULL) {
    if (ds_onnx_const_ints(given, dims, DS_MAX_NDIM + 1) != rank)
      return ds_onnx_invalid(error, "output_shape must hold %d integers, one per dim of X", rank);
    gint64 numel = 1;
    for (int d = 0; d < rank; d++) {
      if (dims[d] < 0)
        return ds_onnx_invalid(error, "output_shape has a negative dim");
      numel *= dims[d];
    }
    how = BY_VALUES;
    if (!ds_onnx_emit1(b, node, "_zeros", "zeros", NULL, 0, &in[0], error, "shape",
                       ds_onnx_fmt_ints(b, &numel, 1), "dtype", dtype_name, NULL))
      return FALSE;
  } else if (ds_onnx_has_input(node, 2)) {
    if (!ds_onnx_input(b, node, 2, &shape, error))
      return FALSE;
    if (ds_onnx_shape_source(b, shape, &like)) {
      how = LIKE_TENSOR;
      if (!ds_onnx_emit1(b, node, "_npi_full_like", "zeros", &like, 1, &in[0], error, "fill_value",
                         "0", "dtype", dtype_name, NULL) ||
          !ds_onnx_emit1(b, node, "_np_reshape", "flat_zeros", &in[0], 1, &in[0], error, "newshape",
                         "(-1,)", NULL))
        return FALSE;
    }
  } else {
    gint64 scale[2 + MAX_SPATIAL] = {1, 1}, offset[2 + MAX_SPATIAL] = {0, 0};
    for (int i = 0; i < w.n; i++) {
      scale[2 + i] = w.stride[i];
      offset[2 + i] = w.kernel[i] - w.stride[i] - w.pad[i] - w.pad_end[i];
    }
    /* Shape(X) * scale + offset */
    if (!ds_onnx_emit1(b, node, "shape_array", "in_shape", &x, 1, &in[0], error, NULL))
      return FALSE;
    in[1] = ds_onnx_add_ints(b, "unpool_scale", scale, rank, FALSE);
    if (!ds_onnx_emit1(b, node, "broadcast_mul", "scaled", in, 2, &in[0], error, NULL))
      return FALSE;
    in[1] = ds_onnx_add_ints(b, "unpool_offset", offset, rank, FALSE);
    if (!ds_onnx_emit1(b, node, "broadcast_add", "out_shape", in, 2, &shape, error, NULL))
      return FALSE;
  }
  if (how == AT_RUN_TIME) {
    DsEntry numel;
    if (!ds_onnx_emit1(b, node, "_npi_prod", "numel", &shape, 1, &numel, error, "axis", "0",
                       "keepdims", "True", NULL) ||
        !ds_onnx_emit1(b, node, "_zeros_shape", "zeros", &numel, 1, &in[0], error, "dtype",
                       dtype_name, NULL))
      return FALSE;
  }
  if (!ds_onnx_emit1(b, node, "_np_reshape", "flat_indices", &indices, 1, &in[1], error, "newshape",
                     "(-1, 1)", NULL) ||
      !ds_onnx_emit1(b, node, "_np_reshape", "flat_values", &x, 1, &in[2], error, "newshape",
                     "(-1,)", NULL) ||
      !ds_onnx_emit1(b, node, "scatter_nd_update", "scatter", in, 3, &flat, error, NULL))
    return FALSE;
  DsNode *y;
  if (how == BY_VALUES) {
    y = ds_onnx_emit(b, node, "_np_reshape", NULL, &flat, 1, error, "newshape",
                     ds_onnx_fmt_ints(b, dims, rank), NULL);
  } else {
    DsEntry pair[2] = {flat, how == LIKE_TENSOR ? like : shape};
    y = ds_onnx_emit(b, node, how == LIKE_TENSOR ? "reshape_like" : "_contrib_dynamic_reshape",
                     NULL, pair, 2, error, NULL);
  }
  return y != NULL && ds_onnx_set_output(b, node, 0, ds_onnx_entry(y, 0), error);
}

static gboolean global_pool(DsOnnxBuilder *b, const DsOnnxNode *node, const char *type,
                            GError **error)
{
  if (!require_pool_dtype(b, node, strcmp(type, "max") == 0, error))
    return FALSE;
  if (strcmp(type, "lp") == 0 && ds_onnx_attr_int(node, "p", 2) != 2)
    return ds_onnx_unsupported(error, "p=%" G_GINT64_FORMAT " is not supported (p=2 is)",
                               ds_onnx_attr_int(node, "p", 2));
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  DsNode *n =
      ds_onnx_emit(b, node, "Pooling", NULL, &x, 1, error, "global_pool", "True", "pool_type", type,
                   strcmp(type, "lp") == 0 ? "p_value" : NULL, "2", NULL);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

static gboolean translate_global_average_pool(DsOnnxBuilder *b, const DsOnnxNode *node,
                                              GError **error)
{
  return global_pool(b, node, "avg", error);
}

static gboolean translate_global_max_pool(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return global_pool(b, node, "max", error);
}

static gboolean translate_global_lp_pool(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return global_pool(b, node, "lp", error);
}

/* ---- Normalisations ------------------------------------------------------------------------ */

/* BatchNormalization at inference: the given statistics normalise. */
/* One channel's statistic of x (N, C, d...) over every other axis, kept as (1, C, 1...). */
static gboolean channel_mean(DsOnnxBuilder *b, const DsOnnxNode *node, const char *suffix,
                             DsEntry x, DsEntry *out, GError **error)
{
  return ds_onnx_emit1(b, node, "mean", suffix, &x, 1, out, error, "axis", "1", "exclude", "True",
                       "keepdims", "True", NULL);
}

/* Training mode (opset 14): normalises with the batch's mean and (biased) variance per channel,
 * and outputs the running statistics input * momentum + batch * (1 - momentum). */
static gboolean batch_statistics(DsOnnxBuilder *b, const DsOnnxNode *node, DsEntry *in,
                                 GError **error)
{
  const double momentum = ds_onnx_attr_float(node, "momentum", 0.9f);
  DsEntry mean_k, diff, square, var_k, running[2];
  DsEntry sub[2] = {in[0], {0, 0, 0}};
  if (!channel_mean(b, node, "batch_mean", in[0], &mean_k, error))
    return FALSE;
  sub[1] = mean_k;
  if (!ds_onnx_emit1(b, node, "broadcast_sub", "centered", sub, 2, &diff, error, NULL) ||
      !ds_onnx_emit1(b, node, "square", "squared", &diff, 1, &square, error, NULL) ||
      !channel_mean(b, node, "batch_var", square, &var_k, error))
    return FALSE;
  /* The batch's statistics replace the moving ones the inference form reads. */
  DsEntry stats[2] = {mean_k, var_k};
  static const char *const names[2] = {"mean", "var"};
  for (int k = 0; k < 2; k++) {
    const DsEntry moving = in[3 + k];
    DsEntry kept, added;
    if (!ds_onnx_emit1(b, node, "Reshape", ds_onnx_printf(b, "batch_%s_vector", names[k]),
                       &stats[k], 1, &in[3 + k], error, "shape", "(-1,)", NULL) ||
        !ds_onnx_emit1(b, node, "_mul_scalar", ds_onnx_printf(b, "kept_%s", names[k]), &moving, 1,
                       &kept, error, "scalar", ds_onnx_fmt_float(b, momentum), NULL) ||
        !ds_onnx_emit1(b, node, "_mul_scalar", ds_onnx_printf(b, "added_%s", names[k]), &in[3 + k],
                       1, &added, error, "scalar", ds_onnx_fmt_float(b, 1.0 - momentum), NULL))
      return FALSE;
    DsEntry sum[2] = {kept, added};
    if (!ds_onnx_emit1(b, node, "broadcast_add", ds_onnx_printf(b, "running_%s", names[k]), sum, 2,
                       &running[k], error, NULL) ||
        !ds_onnx_set_output(b, node, 1 + k, running[k], error))
      return FALSE;
  }
  return TRUE;
}

static gboolean translate_batch_norm(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  if (ds_onnx_attr_int(node, "spatial", 1) == 0)
    return ds_onnx_unsupported(error, "spatial=0 (per-element statistics) is not supported");
  const gboolean training = ds_onnx_attr_int(node, "training_mode", 0) != 0;
  /* Before opset 14 the extra outputs (running and saved statistics) asked for training
   * without saying so; from 14 training_mode says it and outputs 1 and 2 are the running ones. */
  for (guint i = 1; i < node->n_outputs; i++)
    if (wants_output(node, i) && (!training || i > 2))
      return ds_onnx_unsupported(error, training ? "outputs past running_var are not supported"
                                                 : "the training outputs (running or saved "
                                                   "statistics) are not supported before "
                                                   "opset 14's training_mode");
  if (!require_float32(b, node, 0, error))
    return FALSE;
  DsEntry in[5];
  for (guint i = 0; i < 5; i++)
    if (!ds_onnx_input(b, node, i, &in[i], error))
      return FALSE;
  if (training && !batch_statistics(b, node, in, error))
    return FALSE;
  DsNode *n =
      ds_onnx_emit(b, node, "BatchNorm", NULL, in, 5, error, "eps",
                   ds_onnx_fmt_float(b, ds_onnx_attr_float(node, "epsilon", 1e-5f)), "momentum",
                   ds_onnx_fmt_float(b, ds_onnx_attr_float(node, "momentum", 0.9f)), "fix_gamma",
                   "False", "use_global_stats", "True", NULL);
  return n != NULL && ds_onnx_set_output(b, node, 0, ds_onnx_entry(n, 0), error);
}

static gboolean translate_instance_norm(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  if (!require_float32(b, node, 0, error))
    return FALSE;
  DsEntry in[3];
  for (guint i = 0; i < 3; i++)
    if (!ds_onnx_input(b, node, i, &in[i], error))
      return FALSE;
  DsNode *n = ds_onnx_emit(b, node, "InstanceNorm", NULL, in, 3, error, "eps",
                           ds_onnx_fmt_float(b, ds_onnx_attr_float(node, "epsilon", 1e-5f)), NULL);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

/* LayerNormalization (opset 17): over `axis` and every axis after it. Without B the shift is
 * zeros of Scale's shape; InvStdDev is the reciprocal of LayerNorm's std output. */
static gboolean translate_layer_norm(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  if (!require_float32(b, node, 0, error))
    return FALSE;
  /* Scale and B must have the normalised axes' shape: LayerNorm does not broadcast them. */
  const gint64 axis = ds_onnx_attr_int(node, "axis", -1);
  const int rank = ds_onnx_input_rank(b, node, 0);
  for (guint i = 1; i < 3 && rank >= 0; i++) {
    int r = ds_onnx_input_rank(b, node, i);
    if (r >= 0 && r != (axis < 0 ? -axis : rank - axis))
      return ds_onnx_unsupported(error,
                                 "input %u of rank %d would broadcast to the normalised "
                                 "axes (%" G_GINT64_FORMAT " on)",
                                 i, r, axis);
  }
  DsEntry in[3];
  if (!ds_onnx_input(b, node, 0, &in[0], error) || !ds_onnx_input(b, node, 1, &in[1], error))
    return FALSE;
  if (ds_onnx_has_input(node, 2)) {
    if (!ds_onnx_input(b, node, 2, &in[2], error))
      return FALSE;
  } else {
    DsNode *zeros = ds_onnx_emit(b, node, "zeros_like", "beta", &in[1], 1, error, NULL);
    if (zeros == NULL)
      return FALSE;
    in[2] = ds_onnx_entry(zeros, 0);
  }
  const gboolean stats = wants_output(node, 1) || wants_output(node, 2);
  DsNode *n =
      ds_onnx_emit(b, node, "LayerNorm", NULL, in, 3, error, "axis",
                   ds_onnx_printf(b, "%" G_GINT64_FORMAT, axis), "eps",
                   ds_onnx_fmt_float(b, ds_onnx_attr_float(node, "epsilon", 1e-5f)),
                   "trailing_axes", "True", "output_mean_var", stats ? "True" : "False", NULL);
  if (n == NULL || !ds_onnx_set_output(b, node, 0, ds_onnx_entry(n, 0), error) ||
      !ds_onnx_set_output(b, node, 1, ds_onnx_entry(n, 1), error))
    return FALSE;
  if (!wants_output(node, 2))
    return TRUE;
  DsEntry std = ds_onnx_entry(n, 2);
  DsNode *inv = ds_onnx_emit(b, node, "reciprocal", "inv_std", &std, 1, error, NULL);
  return inv != NULL && ds_onnx_set_output(b, node, 2, ds_onnx_entry(inv, 0), error);
}

static gboolean translate_lrn(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  if (!require_float32(b, node, 0, error))
    return FALSE;
  gint64 size = ds_onnx_attr_int(node, "size", 0);
  if (size < 1)
    return ds_onnx_invalid(error, "size must be a positive integer");
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  DsNode *n = ds_onnx_emit(b, node, "LRN", NULL, &x, 1, error, "nsize",
                           ds_onnx_printf(b, "%" G_GINT64_FORMAT, size), "alpha",
                           ds_onnx_fmt_float(b, ds_onnx_attr_float(node, "alpha", 1e-4f)), "beta",
                           ds_onnx_fmt_float(b, ds_onnx_attr_float(node, "beta", 0.75f)), "knorm",
                           ds_onnx_fmt_float(b, ds_onnx_attr_float(node, "bias", 1.0f)), NULL);
  return n != NULL && ds_onnx_set_output(b, node, 0, ds_onnx_entry(n, 0), error);
}

/* MeanVarianceNormalization: (x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9) over `axes`, the
 * statistics kept with their axes reduced to 1. ONNX's function computes the variance as
 * E[x^2] - E[x]^2, which is the same up to rounding. */
static gboolean translate_mvn(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  gint64 axes[DS_MAX_NDIM];
  int n_axes = ds_onnx_attr_ints(node, "axes", axes, DS_MAX_NDIM);
  if (n_axes < 0) {
    axes[0] = 0, axes[1] = 2, axes[2] = 3;
    n_axes = 3;
  }
  if (n_axes > DS_MAX_NDIM)
    return ds_onnx_invalid(error, "too many axes");
  const char *axis = ds_onnx_fmt_ints(b, axes, n_axes);
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  DsNode *mean =
      ds_onnx_emit(b, node, "mean", "mean", &x, 1, error, "axis", axis, "keepdims", "True", NULL);
  if (mean == NULL)
    return FALSE;
  DsEntry centre_in[2] = {x, ds_onnx_entry(mean, 0)};
  DsNode *centred = ds_onnx_emit(b, node, "broadcast_sub", "centred", centre_in, 2, error, NULL);
  if (centred == NULL)
    return FALSE;
  DsEntry c = ds_onnx_entry(centred, 0);
  DsNode *sq = ds_onnx_emit(b, node, "square", "square", &c, 1, error, NULL);
  if (sq == NULL)
    return FALSE;
  DsEntry sqe = ds_onnx_entry(sq, 0);
  DsNode *var =
      ds_onnx_emit(b, node, "mean", "var", &sqe, 1, error, "axis", axis, "keepdims", "True", NULL);
  if (var == NULL)
    return FALSE;
  DsEntry ve = ds_onnx_entry(var, 0);
  DsNode *std = ds_onnx_emit(b, node, "sqrt", "std", &ve, 1, error, NULL);
  if (std == NULL)
    return FALSE;
  DsEntry se = ds_onnx_entry(std, 0);
  DsNode *den = ds_onnx_emit(b, node, "_plus_scalar", "denominator", &se, 1, error, "scalar",
                             "1e-09", "is_int", "False", NULL);
  if (den == NULL)
    return FALSE;
  DsEntry div_in[2] = {c, ds_onnx_entry(den, 0)};
  DsNode *y = ds_onnx_emit(b, node, "broadcast_div", NULL, div_in, 2, error, NULL);
  return y != NULL && ds_onnx_set_output(b, node, 0, ds_onnx_entry(y, 0), error);
}

/* ---- Softmax, LogSoftmax, Hardmax ----------------------------------------------------------- */

/* Before opset 13 these coerce the input to 2-D at `axis` (default 1): a row is every axis
 * from `axis` on; from 13 a row is the one axis (default -1). */
static gboolean softmax_like(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op,
                             GError **error)
{
  const gboolean coerce = ds_onnx_opset(b) < 13;
  const gint64 axis = ds_onnx_attr_int(node, "axis", coerce ? 1 : -1);
  if (strcmp(op, "_contrib_hardmax") != 0 && !require_float32(b, node, 0, error))
    return FALSE;
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  DsNode *n = ds_onnx_emit(b, node, op, NULL, &x, 1, error, "axis",
                           ds_onnx_printf(b, "%" G_GINT64_FORMAT, axis), "trailing_axes",
                           coerce ? "True" : "False", NULL);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

static gboolean translate_softmax(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return softmax_like(b, node, "softmax", error);
}

static gboolean translate_log_softmax(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return softmax_like(b, node, "log_softmax", error);
}

static gboolean translate_hardmax(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return softmax_like(b, node, "_contrib_hardmax", error);
}

/* ---- Dropout ------------------------------------------------------------------------------ */

/* Dropout at inference is the identity, its mask all ones (bool from opset 10, the data's
 * type before). From opset 12 a training_mode input may ask for training: refused unless it is
 * a constant false, or the ratio a constant 0. */
static gboolean translate_dropout(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  if (ds_onnx_has_input(node, 2)) {
    const DsNDArray *training = ds_onnx_input_const(b, node, 2);
    const DsNDArray *ratio = ds_onnx_input_const(b, node, 1);
    double t = 1.0, r = 0.5;
    if (training == NULL || !ds_onnx_const_scalar(training, &t))
      return ds_onnx_unsupported(error, "training_mode is not a constant");
    if (ds_onnx_has_input(node, 1) && (ratio == NULL || !ds_onnx_const_scalar(ratio, &r)))
      return ds_onnx_unsupported(error, "training_mode is set and the ratio is not a "
                                        "constant");
    if (t != 0.0 && r != 0.0)
      return ds_onnx_unsupported(error, "training_mode=1 drops at random: not supported");
  }
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  DsNode *copy = ds_onnx_emit(b, node, "_copy", NULL, &x, 1, error, NULL);
  if (copy == NULL || !ds_onnx_set_output(b, node, 0, ds_onnx_entry(copy, 0), error))
    return FALSE;
  if (!wants_output(node, 1))
    return TRUE;
  DsNode *ones = ds_onnx_emit(b, node, "ones_like", "mask", &x, 1, error, NULL);
  if (ones == NULL)
    return FALSE;
  DsEntry mask = ds_onnx_entry(ones, 0);
  if (ds_onnx_opset(b) >= 10) {
    DsNode *cast =
        ds_onnx_emit(b, node, "Cast", "mask_bool", &mask, 1, error, "dtype", "bool", NULL);
    if (cast == NULL)
      return FALSE;
    mask = ds_onnx_entry(cast, 0);
  }
  return ds_onnx_set_output(b, node, 1, mask, error);
}

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ------------------------------------ */

/* loss[n, d...] = -x[n, t[n, d...], d...] * w[t[n, d...]], from scores x (N, C, d...), integer
 * targets t (N, d...) and the optional class weights w (C). A target equal to ignore_index
 * weighs 0, its index read as class 0 so that any value is safe. `reduction` none keeps the
 * losses; sum adds them; mean (the default) divides that sum by the sum of the weights taken,
 * which without weights is the number of targets not ignored (ONNX's definition). Output
 * `output` of the node gets the result. */
static gboolean nll_loss(DsOnnxBuilder *b, const DsOnnxNode *node, DsEntry x, DsEntry t,
                         const DsEntry *w, guint output, GError **error)
{
  const char *reduction = ds_onnx_attr_string(node, "reduction", "mean");
  if (strcmp(reduction, "none") != 0 && strcmp(reduction, "sum") != 0 &&
      strcmp(reduction, "mean") != 0)
    return ds_onnx_invalid(error, "reduction '%s' is not none, sum or mean", reduction);
  const gint64 one = 1;
  const char *axis1 = ds_onnx_fmt_ints(b, &one, 1);
  DsEntry target = t, weight, kept;
  const gboolean ignores = ds_onnx_has_attr(node, "ignore_index");
  if (ignores) {
    /* ignored: 1 where t == ignore_index (in t's dtype); the safe target t - t * ignored. */
    DsEntry ignored, scaled;
    if (!ds_onnx_emit1(
            b, node, "_equal_scalar", "ignored", &t, 1, &ignored, error, "scalar",
            ds_onnx_printf(b, "%" G_GINT64_FORMAT, ds_onnx_attr_int(node, "ignore_index", 0)),
            "is_int", "True", NULL))
      return FALSE;
    DsEntry mul_in[2] = {t, ignored};
    if (!ds_onnx_emit1(b, node, "broadcast_mul", "ignored_target", mul_in, 2, &scaled, error, NULL))
      return FALSE;
    DsEntry sub_in[2] = {t, scaled};
    if (!ds_onnx_emit1(b, node, "broadcast_sub", "safe_target", sub_in, 2, &target, error, NULL))
      return FALSE;
    DsEntry ignored_f;
    if (!ds_onnx_emit1(b, node, "Cast", "ignored_float", &ignored, 1, &ignored_f, error, "dtype",
                       "float32", NULL) ||
        !ds_onnx_emit1(b, node, "_rminus_scalar", "kept", &ignored_f, 1, &kept, error, "scalar",
                       "1", "is_int", "False", NULL))
      return FALSE;
  }
  DsEntry column, picked, rows, loss;
  if (!ds_onnx_emit1(b, node, "expand_dims", "target_column", &target, 1, &column, error, "axis",
                     axis1, NULL))
    return FALSE;
  DsEntry pick_in[2] = {x, column};
  if (!ds_onnx_emit1(b, node, "take_along_axis", "picked", pick_in, 2, &picked, error, "axis", "1",
                     NULL) ||
      !ds_onnx_emit1(b, node, "_np_squeeze", "picked_rows", &picked, 1, &rows, error, "axis", axis1,
                     NULL) ||
      !ds_onnx_emit1(b, node, "negative", "unweighted", &rows, 1, &loss, error, NULL))
    return FALSE;
  if (w != NULL) {
    DsEntry take_in[2] = {*w, target};
    if (!ds_onnx_emit1(b, node, "take", "target_weight", take_in, 2, &weight, error, "axis", "0",
                       NULL))
      return FALSE;
    if (ignores) {
      DsEntry both[2] = {weight, kept};
      if (!ds_onnx_emit1(b, node, "broadcast_mul", "kept_weight", both, 2, &weight, error, NULL))
        return FALSE;
    }
  } else if (ignores) {
    weight = kept;
  }
  const gboolean weighted = w != NULL || ignores;
  if (weighted) {
    DsEntry both[2] = {loss, weight};
    if (!ds_onnx_emit1(b, node, "broadcast_mul", "weighted", both, 2, &loss, error, NULL))
      return FALSE;
  }
  if (strcmp(reduction, "none") == 0)
    return ds_onnx_set_output(b, node, output, loss, error);
  if (strcmp(reduction, "mean") == 0 && !weighted) {
    DsEntry mean;
    return ds_onnx_emit1(b, node, "_npi_mean", "mean", &loss, 1, &mean, error, NULL) &&
           ds_onnx_set_output(b, node, output, mean, error);
  }
  DsEntry total;
  if (!ds_onnx_emit1(b, node, "_npi_sum", "total", &loss, 1, &total, error, NULL))
    return FALSE;
  if (strcmp(reduction, "sum") == 0)
    return ds_onnx_set_output(b, node, output, total, error);
  DsEntry weight_total, mean;
  if (!ds_onnx_emit1(b, node, "_npi_sum", "weight_total", &weight, 1, &weight_total, error, NULL))
    return FALSE;
  DsEntry div_in[2] = {total, weight_total};
  return ds_onnx_emit1(b, node, "broadcast_div", "mean", div_in, 2, &mean, error, NULL) &&
         ds_onnx_set_output(b, node, output, mean, error);
}

/* The integer targets (input 1) and, when given, the class weights (input 2). */
static gboolean loss_inputs(DsOnnxBuilder *b, const DsOnnxNode *node, DsEntry *target,
                            DsEntry *weight, gboolean *has_weight, GError **error)
{
  if (!require_float32(b, node, 0, error))
    return FALSE;
  DsDType tt = ds_onnx_input_dtype(b, node, 1);
  if (tt != DS_DTYPE_UNKNOWN && tt != DS_DTYPE_INT32 && tt != DS_DTYPE_INT64)
    return ds_onnx_invalid(error, "the targets are %s; they must be int32 or int64",
                           ds_dtype_name(tt));
  *has_weight = ds_onnx_has_input(node, 2);
  return ds_onnx_input(b, node, 1, target, error) &&
         (!*has_weight ||
          (require_float32(b, node, 2, error) && ds_onnx_input(b, node, 2, weight, error)));
}

static gboolean translate_nll_loss(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry x, target, weight;
  gboolean has_weight;
  return loss_inputs(b, node, &target, &weight, &has_weight, error) &&
         ds_onnx_input(b, node, 0, &x, error) &&
         nll_loss(b, node, x, target, has_weight ? &weight : NULL, 0, error);
}

/* SoftmaxCrossEntropyLoss: the negative log-likelihood of log_softmax over the class axis (1),
 * which is its second, optional output. */
static gboolean translate_sce_loss(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry x, target, weight, log_prob;
  gboolean has_weight;
  if (!loss_inputs(b, node, &target, &weight, &has_weight, error) ||
      !ds_onnx_input(b, node, 0, &x, error) ||
      !ds_onnx_emit1(b, node, "log_softmax", "log_prob", &x, 1, &log_prob, error, "axis", "1",
                     NULL))
    return FALSE;
  if (wants_output(node, 1) && !ds_onnx_set_output(b, node, 1, log_prob, error))
    return FALSE;
  return nll_loss(b, node, log_prob, target, has_weight ? &weight : NULL, 0, error);
}

/* ---- Einsum ------------------------------------------------------------------------------- */

static gboolean translate_einsum(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  const char *equation = ds_onnx_attr_string(node, "equation", NULL);
  if (equation == NULL)
    return ds_onnx_invalid(error, "the equation attribute is required");
  if (node->n_inputs < 1 || node->n_inputs > DS_EINSUM_MAX_OPERANDS)
    return ds_onnx_unsupported(error, "%u operands (1 to %d are supported)", (guint)node->n_inputs,
                               DS_EINSUM_MAX_OPERANDS);
  for (guint i = 0; i < node->n_inputs; i++) {
    DsDType t = ds_onnx_input_dtype(b, node, i);
    if (t == DS_DTYPE_BOOL)
      return ds_onnx_unsupported(error, "input %u is %s", i, ds_dtype_name(t));
  }
  DsEntry in[DS_EINSUM_MAX_OPERANDS];
  for (guint i = 0; i < node->n_inputs; i++)
    if (!ds_onnx_input(b, node, i, &in[i], error))
      return FALSE;
  DsNode *n =
      ds_onnx_emit(b, node, "_npi_einsum", NULL, in, (guint)node->n_inputs, error, "subscripts",
                   equation, "num_args", ds_onnx_printf(b, "%u", (guint)node->n_inputs), NULL);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

/* ---- LSTM, GRU, RNN ------------------------------------------------------------------------ */

/* Whether the activations attribute lists `want` (per direction, repeated for the second) or
 * is absent. Names compare case-insensitively. */
static gboolean default_activations(const DsOnnxNode *node, const char *const *want, int n_want,
                                    int dirs)
{
  const DsOnnxAttribute *a = ds_onnx_node_find_attribute(node, "activations");
  if (a == NULL)
    return TRUE;
  if (a->type != DS_ONNX_ATTR_STRINGS || a->n_strings != (gsize)(n_want * dirs))
    return FALSE;
  for (gsize i = 0; i < a->n_strings; i++) {
    const DsOnnxBytes *s = &a->strings[i];
    const char *w = want[i % (gsize)n_want];
    if (s->len != strlen(w) || g_ascii_strncasecmp(s->data, w, s->len) != 0)
      return FALSE;
  }
  return TRUE;
}

/* The plain RNN's activation: "rnn_tanh" or "rnn_relu" (the same for every direction), or
 * NULL. */
static const char *rnn_activation(const DsOnnxNode *node, int dirs)
{
  static const char *const tanh_names[] = {"Tanh"}, *const relu_names[] = {"Relu"};
  if (default_activations(node, tanh_names, 1, dirs))
    return "rnn_tanh";
  if (default_activations(node, relu_names, 1, dirs))
    return "rnn_relu";
  return NULL;
}

/* One recurrent layer: `mode` is the RNN mode ("lstm", "gru"; NULL for RNN, which picks its
 * activation). */
static gboolean translate_recurrent(DsOnnxBuilder *b, const DsOnnxNode *node, const char *mode,
                                    GError **error)
{
  const char *direction = ds_onnx_attr_string(node, "direction", "forward");
  if (strcmp(direction, "forward") != 0 && strcmp(direction, "reverse") != 0 &&
      strcmp(direction, "bidirectional") != 0)
    return ds_onnx_invalid(error, "direction=%s is not an ONNX direction", direction);
  const int dirs = strcmp(direction, "bidirectional") == 0 ? 2 : 1;
  static const char *const lstm_acts[] = {"Sigmoid", "Tanh", "Tanh"};
  static const char *const gru_acts[] = {"Sigmoid", "Tanh"};
  const gboolean lstm = mode != NULL && strcmp(mode, "lstm") == 0;
  if (mode == NULL) {
    mode = rnn_activation(node, dirs);
    if (mode == NULL)
      return ds_onnx_unsupported(error, "only the Tanh and Relu activations are supported");
  } else if (!default_activations(node, lstm ? lstm_acts : gru_acts, lstm ? 3 : 2, dirs)) {
    return ds_onnx_unsupported(error, "only the default activations are supported");
  }
  if (ds_onnx_has_attr(node, "activation_alpha") || ds_onnx_has_attr(node, "activation_beta"))
    return ds_onnx_unsupported(error, "activation_alpha and activation_beta are not supported");
  if (lstm && ds_onnx_attr_int(node, "input_forget", 0) != 0)
    return ds_onnx_unsupported(error, "input_forget=1 is not supported");
  if (!require_float32(b, node, 0, error))
    return FALSE;
  gint64 hidden = ds_onnx_attr_int(node, "hidden_size", 0), r_dims[DS_MAX_NDIM];
  if (hidden < 1 && static_shape(b, node, 2, r_dims) == 3)
    hidden = r_dims[2];
  if (hidden < 1)
    return ds_onnx_unsupported(error, "hidden_size is absent and R's shape is not static");
  const gint64 layout = ds_onnx_attr_int(node, "layout", 0);
  if (layout != 0 && layout != 1)
    return ds_onnx_invalid(error, "layout=%" G_GINT64_FORMAT " is not 0 or 1", layout);

  /* Inputs X, W, R, then the optional ones the flags announce, in the op's order. */
  static const char *const flags[] = {NULL,
                                      NULL,
                                      NULL,
                                      "use_bias",
                                      "use_sequence_length",
                                      "use_initial_h",
                                      "use_initial_c",
                                      "use_peephole"};
  DsEntry in[8];
  guint n_in = 0;
  Attrs a = {0};
  attrs_add(&a, "mode", mode);
  attrs_add(&a, "state_size", ds_onnx_printf(b, "%" G_GINT64_FORMAT, hidden));
  attrs_add(&a, "direction", direction);
  attrs_add(&a, "layout", layout == 1 ? "NTC" : "TNC");
  if (strcmp(mode, "gru") == 0)
    attrs_add(&a, "linear_before_reset",
              ds_onnx_attr_int(node, "linear_before_reset", 0) != 0 ? "True" : "False");
  if (ds_onnx_has_attr(node, "clip"))
    attrs_add(&a, "clip", ds_onnx_fmt_float(b, ds_onnx_attr_float(node, "clip", 0.0f)));
  const guint n_inputs = lstm ? 8 : 6;
  for (guint i = 0; i < n_inputs; i++) {
    if (i >= 3 && !ds_onnx_has_input(node, i))
      continue;
    if (i == 7) {
      /* Zero peepholes are no peepholes (exporters write them for plain LSTMs). */
      const DsNDArray *pp = ds_onnx_input_const(b, node, 7);
      gboolean zero = is_float_const(pp);
      for (int64_t k = 0; zero && k < ds_tensor_numel(&pp->view); k++)
        zero = const_elem(pp, k) == 0.0;
      if (zero)
        continue;
    }
    if (!ds_onnx_input(b, node, i, &in[n_in++], error))
      return FALSE;
    if (flags[i] != NULL)
      attrs_add(&a, flags[i], "True");
  }
  DsNode *n = ds_onnx_emitv(b, node, "_contrib_RecurrentLayer", NULL, in, n_in, a.keys, a.values,
                            a.n, error);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

static gboolean translate_lstm(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return translate_recurrent(b, node, "lstm", error);
}

static gboolean translate_gru(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return translate_recurrent(b, node, "gru", error);
}

static gboolean translate_rnn(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return translate_recurrent(b, node, NULL, error);
}

const DsOnnxOpTranslator ds_onnx_nn_ops[] = {
    {"MatMul", 1, translate_matmul},
    {"Gemm", 7, translate_gemm},
    {"Conv", 1, translate_conv},
    {"ConvTranspose", 1, translate_conv_transpose},
    {"MaxPool", 1, translate_max_pool},
    {"MaxUnpool", 9, translate_max_unpool},
    {"AveragePool", 1, translate_average_pool, 19},
    {"LpPool", 1, translate_lp_pool, 18},
    {"GlobalAveragePool", 1, translate_global_average_pool},
    {"GlobalMaxPool", 1, translate_global_max_pool},
    {"GlobalLpPool", 2, translate_global_lp_pool},
    {"BatchNormalization", 7, translate_batch_norm},
    {"InstanceNormalization", 6, translate_instance_norm},
    {"LayerNormalization", 17, translate_layer_norm},
    {"LRN", 1, translate_lrn},
    {"MeanVarianceNormalization", 9, translate_mvn},
    {"Softmax", 1, translate_softmax},
    {"LogSoftmax", 1, translate_log_softmax},
    {"Hardmax", 1, translate_hardmax},
    {"Dropout", 7, translate_dropout},
    {"LSTM", 7, translate_lstm},
    {"GRU", 7, translate_gru},
    {"RNN", 7, translate_rnn},
    {"Einsum", 12, translate_einsum},
    {"NegativeLogLikelihoodLoss", 12, translate_nll_loss},
    {"SoftmaxCrossEntropyLoss", 12, translate_sce_loss},
    {NULL, 0, NULL},
};
