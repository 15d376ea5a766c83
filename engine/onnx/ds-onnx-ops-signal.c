/* ds-onnx-ops-signal.c: ONNX's DFT and STFT (opset 17) onto the engine's _contrib_dft.
 *
 * DFT is one node. STFT is built from engine ops, so that each step shows in the graph and can
 * be stepped through: the frame starts (0, step, 2 step... while a whole frame fits), the
 * positions in a frame, the frames taken from the signal as a (batch, frames, frame_length,
 * parts) tensor, the window applied, and a DFT of every frame. What is known while importing
 * (a constant step and frame length, a signal of static length) becomes constants; a step,
 * frame length or signal length known only at run time makes the starts with
 * _contrib_dynamic_arange, and the frame count is then a data-dependent dim.
 */
#include "ds-onnx-translate.h"

static const char *fmt_int(DsOnnxBuilder *b, gint64 v)
{
  return ds_onnx_printf(b, "%" G_GINT64_FORMAT, v);
}

/* DFT(input, dft_length?): axis, inverse and onesided as the engine's op takes them. */
static gboolean translate_dft(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  gint64 length = 0;
  if (ds_onnx_has_input(node, 1)) {
    const DsNDArray *c = ds_onnx_input_const(b, node, 1);
    if (c == NULL || ds_onnx_const_ints(c, &length, 1) != 1)
      return ds_onnx_unsupported(error, "dft_length is computed at run time (only a constant "
                                        "length is supported)");
    if (length < 1)
      return ds_onnx_invalid(error, "dft_length is %" G_GINT64_FORMAT ", not a positive length",
                             length);
  }
  DsEntry x;
  if (!ds_onnx_input(b, node, 0, &x, error))
    return FALSE;
  DsNode *y = ds_onnx_emit(b, node, "_contrib_dft", NULL, &x, 1, error, "axis",
                           fmt_int(b, ds_onnx_attr_int(node, "axis", 1)), "inverse",
                           ds_onnx_attr_int(node, "inverse", 0) ? "True" : "False", "onesided",
                           ds_onnx_attr_int(node, "onesided", 0) ? "True" : "False", "length",
                           fmt_int(b, length), NULL);
  return y != NULL && ds_onnx_bind_outputs(b, node, y, error);
}

/* A positive integer constant input, 0 when it is computed at run time, -1 when invalid. */
static gint64 const_positive(DsOnnxBuilder *b, const DsOnnxNode *node, guint i)
{
  const DsNDArray *c = ds_onnx_input_const(b, node, i);
  gint64 v;
  if (c == NULL)
    return 0;
  return ds_onnx_const_ints(c, &v, 1) == 1 && v > 0 ? v : -1;
}

/* The frame length as a (1,) int64 tensor: the window's length or the frame_length input. */
static gboolean frame_length_tensor(DsOnnxBuilder *b, const DsOnnxNode *node, gint64 length,
                                    DsEntry *out, GError **error)
{
  if (length > 0) {
    *out = ds_onnx_add_ints(b, "frame_length", &length, 1, FALSE);
    return TRUE;
  }
  if (ds_onnx_has_input(node, 3))
    return ds_onnx_input(b, node, 3, out, error);
  DsEntry window;
  return ds_onnx_input(b, node, 2, &window, error) &&
         ds_onnx_emit1(b, node, "shape_array", "frame_length", &window, 1, out, error, NULL);
}

/* 0, step, 2 step... while a frame of `length` fits in the signal: (frames,) int64. */
static gboolean frame_starts(DsOnnxBuilder *b, const DsOnnxNode *node, DsEntry signal, gint64 step,
                             gint64 length, DsEntry *out, GError **error)
{
  gint64 dims[DS_MAX_NDIM];
  int rank;
  const char *name = node->inputs[0];
  if (step > 0 && length > 0 && ds_onnx_value_static_shape(b, name, dims, &rank) && rank == 3) {
    if (dims[1] < length)
      return ds_onnx_invalid(error,
                             "the signal's %" G_GINT64_FORMAT " values are fewer than one frame "
                             "of %" G_GINT64_FORMAT,
                             dims[1], length);
    gint64 n = (dims[1] - length) / step + 1;
    g_autofree gint64 *starts = g_new(gint64, n);
    for (gint64 i = 0; i < n; i++)
      starts[i] = i * step;
    *out = ds_onnx_add_ints(b, "frame_starts", starts, (int)n, FALSE);
    return TRUE;
  }
  /* stop = signal length - frame length + 1, step and stop as tensors. */
  DsEntry shape, in[3];
  if (!ds_onnx_emit1(b, node, "shape_array", "signal_shape", &signal, 1, &shape, error, NULL) ||
      !ds_onnx_emit1(b, node, "slice_axis", "signal_length", &shape, 1, &in[0], error, "axis", "0",
                     "begin", "1", "end", "2", NULL) ||
      !frame_length_tensor(b, node, length, &in[1], error) ||
      !ds_onnx_emit1(b, node, "broadcast_sub", "spare", in, 2, &in[0], error, NULL) ||
      !ds_onnx_emit1(b, node, "_plus_scalar", "starts_end", &in[0], 1, &in[1], error, "scalar", "1",
                     NULL))
    return FALSE;
  in[0] = ds_onnx_add_scalar(b, "frames_begin", DS_DTYPE_INT64, 0.0, FALSE);
  if (step > 0)
    in[2] = ds_onnx_add_ints(b, "frame_step", &step, 1, FALSE);
  else if (!ds_onnx_input(b, node, 1, &in[2], error))
    return FALSE;
  return ds_onnx_emit1(b, node, "_contrib_dynamic_arange", "frame_starts", in, 3, out, error,
                       "dtype", "int64", NULL);
}

/* 0 .. length - 1: (length,) int64. */
static gboolean frame_positions(DsOnnxBuilder *b, const DsOnnxNode *node, gint64 length,
                                DsEntry *out, GError **error)
{
  if (length > 0) {
    g_autofree gint64 *positions = g_new(gint64, length);
    for (gint64 i = 0; i < length; i++)
      positions[i] = i;
    *out = ds_onnx_add_ints(b, "frame_positions", positions, (int)length, FALSE);
    return TRUE;
  }
  if (ds_onnx_has_input(node, 2)) {
    /* Numbered like the window, so the frames and the window share one symbolic length. */
    DsEntry window;
    return ds_onnx_input(b, node, 2, &window, error) &&
           ds_onnx_emit1(b, node, "_contrib_arange_like", "frame_positions", &window, 1, out, error,
                         "axis", "0", "dtype", "int64", NULL);
  }
  DsEntry in[3];
  in[0] = ds_onnx_add_scalar(b, "positions_begin", DS_DTYPE_INT64, 0.0, FALSE);
  in[2] = ds_onnx_add_scalar(b, "positions_step", DS_DTYPE_INT64, 1.0, FALSE);
  return frame_length_tensor(b, node, 0, &in[1], error) &&
         ds_onnx_emit1(b, node, "_contrib_dynamic_arange", "frame_positions", in, 3, out, error,
                       "dtype", "int64", NULL);
}

/* STFT(signal, frame_step, window?, frame_length?) with onesided (default 1). */
static gboolean translate_stft(DsOnnxBuilder *b, const DsOnnxNode *node, GError **error)
{
  const gboolean has_window = ds_onnx_has_input(node, 2);
  if (!has_window && !ds_onnx_has_input(node, 3))
    return ds_onnx_invalid(error, "it gives neither a window nor a frame_length");
  if (ds_onnx_input_rank(b, node, 0) >= 0 && ds_onnx_input_rank(b, node, 0) != 3)
    return ds_onnx_invalid(error, "the signal has rank %d, not (batch, length, 1 or 2)",
                           ds_onnx_input_rank(b, node, 0));
  const gint64 step = const_positive(b, node, 1);
  gint64 length = 0, dims[DS_MAX_NDIM];
  int rank;
  if (has_window) {
    if (ds_onnx_value_static_shape(b, node->inputs[2], dims, &rank) && rank == 1)
      length = dims[0];
  } else {
    length = const_positive(b, node, 3);
  }
  if (step < 0 || length < 0)
    return ds_onnx_invalid(error, "frame_step and frame_length must be positive");

  DsEntry signal, starts, positions, pair[2], index, frames;
  if (!ds_onnx_input(b, node, 0, &signal, error) ||
      !frame_starts(b, node, signal, step, length, &starts, error) ||
      !frame_positions(b, node, length, &positions, error) ||
      !ds_onnx_emit1(b, node, "expand_dims", "starts_column", &starts, 1, &pair[0], error, "axis",
                     "1", NULL) ||
      !ds_onnx_emit1(b, node, "expand_dims", "positions_row", &positions, 1, &pair[1], error,
                     "axis", "0", NULL) ||
      !ds_onnx_emit1(b, node, "broadcast_add", "frame_index", pair, 2, &index, error, NULL))
    return FALSE;
  pair[0] = signal, pair[1] = index;
  if (!ds_onnx_emit1(b, node, "take", "frames", pair, 2, &frames, error, "axis", "1", "mode",
                     "clip", NULL))
    return FALSE;
  if (has_window) {
    if (!ds_onnx_input(b, node, 2, &pair[1], error) ||
        !ds_onnx_emit1(b, node, "Reshape", "window_column", &pair[1], 1, &pair[1], error, "shape",
                       "(1, 1, -1, 1)", NULL))
      return FALSE;
    pair[0] = frames;
    if (!ds_onnx_emit1(b, node, "broadcast_mul", "windowed", pair, 2, &frames, error, NULL))
      return FALSE;
  }
  DsNode *y =
      ds_onnx_emit(b, node, "_contrib_dft", NULL, &frames, 1, error, "axis", "2", "onesided",
                   ds_onnx_attr_int(node, "onesided", 1) ? "True" : "False", NULL);
  return y != NULL && ds_onnx_bind_outputs(b, node, y, error);
}

const DsOnnxOpTranslator ds_onnx_signal_ops[] = {
    {"DFT", 17, translate_dft},
    {"STFT", 17, translate_stft},
    {NULL, 0, NULL},
};
