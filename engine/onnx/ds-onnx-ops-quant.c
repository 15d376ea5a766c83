/* ds-onnx-ops-quant.c: ONNX's quantized ops.
 *
 * QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear map onto the engine ops of those
 * names. The integer products (MatMulInteger, ConvInteger) and the quantized layers
 * (QLinearMatMul, QLinearConv) are built from engine ops the way ONNX defines them, so every
 * step shows in the graph: the zero points are subtracted in a float dtype, the product runs on
 * the float kernels, and the quantized layers requantize as ONNX Runtime does, the accumulator
 * as a float32 times the float32 scale a_scale * b_scale / y_scale, rounded half to even, plus
 * the output's zero point, saturated to the output's type.
 *
 * Products run in float64, where every int32 accumulator is exact. Convolutions run in float32,
 * the one dtype the engine's convolution computes in: exact while partial sums stay below 2^24
 * in magnitude, which uint8 data and weights can pass only with more than 258 products per
 * output, all near their extremes.
 */
#include "ds-onnx-translate.h"

/* ---- Steps ----------------------------------------------------------------------------------- */

static gboolean pair_step(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op,
                          const char *suffix, DsEntry x, DsEntry y, DsEntry *out, GError **error)
{
  DsEntry in[2] = {x, y};
  return ds_onnx_emit1(b, node, op, suffix, in, 2, out, error, NULL);
}

/* Input `i` cast to `dtype`, by a node "<node>/<tag>_<dtype>". */
static gboolean input_as(DsOnnxBuilder *b, const DsOnnxNode *node, guint i, DsDType dtype,
                         const char *tag, DsEntry *out, GError **error)
{
  DsEntry x;
  if (!ds_onnx_input(b, node, i, &x, error))
    return FALSE;
  return ds_onnx_emit1(b, node, "Cast", ds_onnx_printf(b, "%s_%s", tag, ds_dtype_name(dtype)), &x,
                       1, out, error, "dtype", ds_dtype_name(dtype), NULL);
}

/* Input `i` reshaped to `shape` (a per-row or per-channel vector made to broadcast), or as it is
 * when `shape` is NULL. */
static gboolean input_shaped(DsOnnxBuilder *b, const DsOnnxNode *node, guint i, const char *shape,
                             const char *tag, DsEntry *out, GError **error)
{
  if (!ds_onnx_input(b, node, i, out, error))
    return FALSE;
  return shape == NULL || ds_onnx_emit1(b, node, "Reshape", ds_onnx_printf(b, "%s_shaped", tag),
                                        out, 1, out, error, "shape", shape, NULL);
}

/* Input `data` minus zero point input `zp` (none when absent), in `dtype`. The zero point is
 * reshaped to `zp_shape` first unless that is NULL. */
static gboolean centered(DsOnnxBuilder *b, const DsOnnxNode *node, guint data, guint zp,
                         const char *zp_shape, DsDType dtype, const char *tag, DsEntry *out,
                         GError **error)
{
  if (!input_as(b, node, data, dtype, tag, out, error))
    return FALSE;
  if (!ds_onnx_has_input(node, zp))
    return TRUE;
  const char *zp_tag = ds_onnx_printf(b, "%s_zero_point", tag);
  DsEntry z;
  if (!input_as(b, node, zp, dtype, zp_tag, &z, error))
    return FALSE;
  if (zp_shape != NULL && !ds_onnx_emit1(b, node, "Reshape", ds_onnx_printf(b, "%s_shaped", zp_tag),
                                         &z, 1, &z, error, "shape", zp_shape, NULL))
    return FALSE;
  return pair_step(b, node, "broadcast_sub", ds_onnx_printf(b, "%s_centered", tag), *out, z, out,
                   error);
}

/* "(1, -1, 1, 1)" for a rank-4 convolution weight: a per-channel vector along the output's
 * channel axis (`leading` 1) or the weight's filter axis (`leading` 0). */
static const char *channel_shape(DsOnnxBuilder *b, int rank, int leading)
{
  gint64 dims[DS_MAX_NDIM];
  for (int i = 0; i < rank; i++)
    dims[i] = i == leading ? -1 : 1;
  return ds_onnx_fmt_ints(b, dims, rank);
}

/* The rank of input `i`, which must be known while importing and between 3 and DS_MAX_NDIM
 * (a convolution weight). */
static gboolean weight_rank(DsOnnxBuilder *b, const DsOnnxNode *node, guint i, int *rank,
                            GError **error)
{
  *rank = ds_onnx_input_rank(b, node, i);
  if (*rank < 3 || *rank > DS_MAX_NDIM)
    return ds_onnx_unsupported(error, "the weight's rank must be known while importing (3 to %d)",
                               DS_MAX_NDIM);
  return TRUE;
}

/* The output's dtype: its zero point's, uint8 when there is none. */
static gboolean output_dtype(DsOnnxBuilder *b, const DsOnnxNode *node, guint zp, DsDType *out,
                             GError **error)
{
  *out = ds_onnx_has_input(node, zp) ? ds_onnx_input_dtype(b, node, zp) : DS_DTYPE_UINT8;
  if (*out == DS_DTYPE_UINT8 || *out == DS_DTYPE_INT8)
    return TRUE;
  if (*out == DS_DTYPE_UNKNOWN)
    return ds_onnx_unsupported(error,
                               "the dtype of input %u (the output's zero point) must be "
                               "known while importing",
                               zp);
  return ds_onnx_unsupported(error, "the output's zero point is %s; uint8 and int8 are supported",
                             ds_dtype_name(*out));
}

/* Binds the node's output to `acc` (an exact integer accumulator in a float dtype) requantized:
 * saturate(rint(float32(acc) * (a_scale * b_scale / y_scale)) + y_zero_point). The scales are
 * inputs `a_scale`, `b_scale`, `y_scale`, the first two reshaped to `a_shape`, `b_shape` unless
 * NULL; `y_zp` is the output's zero point input. */
static gboolean requantize(DsOnnxBuilder *b, const DsOnnxNode *node, DsEntry acc, guint a_scale,
                           const char *a_shape, guint b_scale, const char *b_shape, guint y_scale,
                           guint y_zp, GError **error)
{
  DsDType out_dtype;
  if (!output_dtype(b, node, y_zp, &out_dtype, error))
    return FALSE;
  DsEntry as, bs, ys, scale, acc32, y;
  if (!input_shaped(b, node, a_scale, a_shape, "a_scale", &as, error) ||
      !input_shaped(b, node, b_scale, b_shape, "b_scale", &bs, error) ||
      !ds_onnx_input(b, node, y_scale, &ys, error) ||
      !pair_step(b, node, "broadcast_mul", "input_scale", as, bs, &scale, error) ||
      !pair_step(b, node, "broadcast_div", "requantize_scale", scale, ys, &scale, error) ||
      !ds_onnx_emit1(b, node, "Cast", "accumulator_float32", &acc, 1, &acc32, error, "dtype",
                     "float32", NULL) ||
      !pair_step(b, node, "broadcast_mul", "scaled", acc32, scale, &y, error) ||
      !ds_onnx_emit1(b, node, "rint", "rounded", &y, 1, &y, error, NULL))
    return FALSE;
  if (ds_onnx_has_input(node, y_zp)) {
    DsEntry z;
    if (!input_as(b, node, y_zp, DS_DTYPE_FLOAT32, "y_zero_point", &z, error) ||
        !pair_step(b, node, "broadcast_add", "shifted", y, z, &y, error))
      return FALSE;
  }
  const gboolean is_signed = out_dtype == DS_DTYPE_INT8;
  if (!ds_onnx_emit1(b, node, "clip", "saturated", &y, 1, &y, error, "a_min",
                     is_signed ? "-128" : "0", "a_max", is_signed ? "127" : "255", NULL) ||
      !ds_onnx_emit1(b, node, "Cast", NULL, &y, 1, &y, error, "dtype", ds_dtype_name(out_dtype),
                     NULL))
    return FALSE;
  return ds_onnx_set_output(b, node, 0, y, error);
}

/* ---- QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear --------------------------------- */

/* QuantizeLinear-10 and DequantizeLinear-10 (per-tensor) and -13 (per-axis along `axis`). A
 * missing zero point is 0: uint8 for QuantizeLinear (its output dtype), and for
 * DequantizeLinear an int32 0, which the engine op takes whatever the data's integer dtype. */
static gboolean quantize(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op,
                         DsDType zero_dtype, GError **error)
{
  DsEntry in[3];
  if (!ds_onnx_input(b, node, 0, &in[0], error) || !ds_onnx_input(b, node, 1, &in[1], error) ||
      !ds_onnx_input_or_scalar(b, node, 2, "zero_point", zero_dtype, 0.0, &in[2], error))
    return FALSE;
  gint64 axis = ds_onnx_attr_int(node, "axis", 1);
  DsNode *n = ds_onnx_emit(b, node, op, NULL, in, 3, error, "axis",
                           ds_onnx_printf(b, "%" G_GINT64_FORMAT, axis), NULL);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

static gboolean translate_quantize_linear(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  return quantize(b, node, "quantize_linear", DS_DTYPE_UINT8, error);
}

static gboolean translate_dequantize_linear(DsOnnxBuilder *b, const DsOnnxNode *node,
                                            GError **error)
{
  return quantize(b, node, "dequantize_linear", DS_DTYPE_INT32, error);
}

static gboolean translate_dynamic_quantize_linear(DsOnnxBuilder *b, const DsOnnxNode *node,
                                                  GError **error)
{
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  DsNode *n = ds_onnx_emit(b, node, "dynamic_quantize_linear", NULL, &x, 1, error, NULL);
  return n != NULL && ds_onnx_bind_outputs(b, node, n, error);
}

/* ---- Integer products ------------------------------------------------------------------------ */

/* A's zero point may be per row (a vector of A's row count): a column that broadcasts along the
 * rows. B's may be per column, which broadcasts as it is. */
#define PER_ROW "(-1, 1)"

/* MatMulInteger-10: (A - a_zero_point) x (B - b_zero_point) as int32. */
static gboolean translate_matmul_integer(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry a, w, acc;
  if (!centered(b, node, 0, 2, PER_ROW, DS_DTYPE_FLOAT64, "a", &a, error) ||
      !centered(b, node, 1, 3, NULL, DS_DTYPE_FLOAT64, "b", &w, error) ||
      !pair_step(b, node, "_npi_matmul", "product", a, w, &acc, error) ||
      !ds_onnx_emit1(b, node, "Cast", NULL, &acc, 1, &acc, error, "dtype", "int32", NULL))
    return FALSE;
  return ds_onnx_set_output(b, node, 0, acc, error);
}

/* QLinearMatMul-10: inputs a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale,
 * y_zero_point; a's scale and zero point may be per row, b's per column. */
static gboolean translate_qlinear_matmul(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  DsEntry a, w, acc;
  return centered(b, node, 0, 2, PER_ROW, DS_DTYPE_FLOAT64, "a", &a, error) &&
         centered(b, node, 3, 5, NULL, DS_DTYPE_FLOAT64, "b", &w, error) &&
         pair_step(b, node, "_npi_matmul", "product", a, w, &acc, error) &&
         requantize(b, node, acc, 1, PER_ROW, 4, NULL, 6, 7, error);
}

/* ConvInteger-10: Conv of (x - x_zero_point) with (w - w_zero_point) as int32, the weight's zero
 * point per tensor or per output channel; padding adds zeros after the zero point is taken. */
static gboolean translate_conv_integer(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  int rank;
  if (!weight_rank(b, node, 1, &rank, error))
    return FALSE;
  DsEntry in[2], acc;
  if (!centered(b, node, 0, 2, NULL, DS_DTYPE_FLOAT32, "x", &in[0], error) ||
      !centered(b, node, 1, 3, channel_shape(b, rank, 0), DS_DTYPE_FLOAT32, "w", &in[1], error))
    return FALSE;
  DsNode *conv = ds_onnx_emit_conv(b, node, 1, in, FALSE, error);
  if (conv == NULL)
    return FALSE;
  acc = ds_onnx_entry(conv, 0);
  return ds_onnx_emit1(b, node, "Cast", "int32", &acc, 1, &acc, error, "dtype", "int32", NULL) &&
         ds_onnx_set_output(b, node, 0, acc, error);
}

/* QLinearConv-10: inputs x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale,
 * y_zero_point and an optional int32 bias B (in the scale x_scale * w_scale); the weight's scale
 * and zero point per tensor or per output channel. */
static gboolean translate_qlinear_conv(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  int rank;
  if (!weight_rank(b, node, 3, &rank, error))
    return FALSE;
  const gboolean has_bias = ds_onnx_has_input(node, 8);
  DsEntry in[3];
  if (!centered(b, node, 0, 2, NULL, DS_DTYPE_FLOAT32, "x", &in[0], error) ||
      !centered(b, node, 3, 5, channel_shape(b, rank, 0), DS_DTYPE_FLOAT32, "w", &in[1], error) ||
      (has_bias && !input_as(b, node, 8, DS_DTYPE_FLOAT32, "bias", &in[2], error)))
    return FALSE;
  DsNode *conv = ds_onnx_emit_conv(b, node, 3, in, has_bias, error);
  if (conv == NULL)
    return FALSE;
  return requantize(b, node, ds_onnx_entry(conv, 0), 1, NULL, 4, channel_shape(b, rank, 1), 6, 7,
                    error);
}

const DsOnnxOpTranslator ds_onnx_quant_ops[] = {
    {"QuantizeLinear", 10, translate_quantize_linear},
    {"DequantizeLinear", 10, translate_dequantize_linear},
    {"DynamicQuantizeLinear", 11, translate_dynamic_quantize_linear},
    {"MatMulInteger", 10, translate_matmul_integer},
    {"ConvInteger", 10, translate_conv_integer},
    {"QLinearMatMul", 10, translate_qlinear_matmul},
    {"QLinearConv", 10, translate_qlinear_conv},
    {NULL, 0, NULL},
};
