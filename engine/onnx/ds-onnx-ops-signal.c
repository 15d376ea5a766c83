/* ds-onnx-ops-signal.c: ONNX's DFT and STFT (opset 17) onto the engine's _contrib_dft, and
 * MelWeightMatrix built from engine ops.
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

/* ---- MelWeightMatrix ------------------------------------------------------------------------ */

/* One step of the mel matrix: `op` on `in`, with one attribute (or none: key NULL). */
static gboolean mel_step(DsOnnxBuilder *b, const DsOnnxNode *node, const char *op,
                         const char *suffix, const DsEntry *in, guint n_in, const char *key,
                         const char *value, DsEntry *out, GError **error)
{
  const char *keys[1] = {key}, *values[1] = {value};
  DsNode *n = ds_onnx_emitv(b, node, op, suffix, in, n_in, keys, values, key != NULL, error);
  if (n == NULL)
    return FALSE;
  *out = ds_onnx_entry(n, 0);
  return TRUE;
}

/* Hz to mel, 2595 log10(1 + hz / 700), in float64 as ONNX's reference computes it. */
static gboolean to_mel(DsOnnxBuilder *b, const DsOnnxNode *node, DsEntry hz, const char *tag,
                       DsEntry *out, GError **error)
{
  DsEntry t;
  return mel_step(b, node, "_div_scalar", ds_onnx_printf(b, "%s_over_700", tag), &hz, 1,
                  "scalar", "700", &t, error) &&
         mel_step(b, node, "_plus_scalar", ds_onnx_printf(b, "%s_plus_1", tag), &t, 1, "scalar",
                  "1", &t, error) &&
         mel_step(b, node, "log10", ds_onnx_printf(b, "%s_log10", tag), &t, 1, NULL, NULL, &t,
                  error) &&
         mel_step(b, node, "_mul_scalar", ds_onnx_printf(b, "%s_mel", tag), &t, 1, "scalar",
                  "2595", out, error);
}

/* MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz):
 * the (dft_length / 2 + 1, num_mel_bins) matrix of triangular filters, built from engine ops
 * in float64 as ONNX's reference computes it. num_mel_bins + 2 points from the lower edge in
 * mel steps of (upper - lower) / (num_mel_bins + 2) become spectrogram bins b = floor((dft_length + 1) hz / sample_rate); filter
 * i rises from b[i] to 1 at b[i + 1] and falls to b[i + 2]: at bin j,
 *   (j - b[i]) / (b[i + 1] - b[i])          for b[i] <= j < b[i + 1],
 *   1                                        for j == b[i + 1],
 *   (b[i + 2] - j) / (b[i + 2] - b[i + 1])   for b[i + 1] < j < b[i + 2], and 0 elsewhere.
 * The sizes come from the inputs' values, so they are data-dependent unless inference follows
 * them from constants. */
static gboolean translate_mel_weight_matrix(DsOnnxBuilder *b, const DsOnnxNode *node,
                                            GError **error)
{
  gint64 out_type = ds_onnx_attr_int(node, "output_datatype", 1);
  DsDType out_dtype = ds_onnx_dtype((int)out_type);
  if (out_dtype == DS_DTYPE_UNKNOWN)
    return ds_onnx_unsupported(error, "a matrix of %s is not supported",
                               ds_onnx_elem_type_name((int)out_type));
  static const char *const names[] = {"mel_bins", "dft_length", "sample_rate", "lower_hz",
                                      "upper_hz"};
  DsEntry in[5], f[5];
  for (guint i = 0; i < 5; i++)
    if (!ds_onnx_input(b, node, i, &in[i], error) ||
        !mel_step(b, node, "Cast", ds_onnx_printf(b, "%s_f64", names[i]), &in[i], 1, "dtype",
                  "float64", &f[i], error))
      return FALSE;
  /* num_mel_bins + 2 points, evenly spaced in mel. */
  DsEntry zero = ds_onnx_add_scalar(b, "mel_zero", DS_DTYPE_FLOAT64, 0.0, FALSE);
  DsEntry one = ds_onnx_add_scalar(b, "mel_one", DS_DTYPE_FLOAT64, 1.0, FALSE);
  DsEntry n_points, k, lo_mel, hi_mel, span, n_count, step, mel, hz, bins;
  if (!mel_step(b, node, "_plus_scalar", "points", &f[0], 1, "scalar", "2", &n_points, error))
    return FALSE;
  DsEntry range[3] = {zero, n_points, one};
  if (!mel_step(b, node, "_contrib_dynamic_arange", "point_index", range, 3, "dtype", "float64",
                &k, error) ||
      !to_mel(b, node, f[3], "lower", &lo_mel, error) ||
      !to_mel(b, node, f[4], "upper", &hi_mel, error))
    return FALSE;
  /* The step divides the span by the number of points, not of gaps between them: ONNX's
   * reference and ONNX Runtime both do, so the last point falls short of the upper edge. */
  DsEntry pair[2] = {hi_mel, lo_mel};
  if (!mel_step(b, node, "broadcast_sub", "mel_span", pair, 2, NULL, NULL, &span, error) ||
      !mel_step(b, node, "_plus_scalar", "point_count", &f[0], 1, "scalar", "2", &n_count, error))
    return FALSE;
  pair[0] = span, pair[1] = n_count;
  if (!mel_step(b, node, "broadcast_div", "mel_step", pair, 2, NULL, NULL, &step, error))
    return FALSE;
  pair[0] = k, pair[1] = step;
  if (!mel_step(b, node, "broadcast_mul", "mel_offsets", pair, 2, NULL, NULL, &mel, error))
    return FALSE;
  pair[0] = mel, pair[1] = lo_mel;
  if (!mel_step(b, node, "broadcast_add", "mel_points", pair, 2, NULL, NULL, &mel, error) ||
      /* back to Hz: 700 (10^(mel / 2595) - 1) */
      !mel_step(b, node, "_div_scalar", "mel_over_2595", &mel, 1, "scalar", "2595", &hz, error) ||
      !mel_step(b, node, "_rpower_scalar", "ten_to", &hz, 1, "scalar", "10", &hz, error) ||
      !mel_step(b, node, "_minus_scalar", "ten_to_minus_1", &hz, 1, "scalar", "1", &hz, error) ||
      !mel_step(b, node, "_mul_scalar", "hz_points", &hz, 1, "scalar", "700", &hz, error) ||
      !mel_step(b, node, "_plus_scalar", "dft_length_plus_1", &f[1], 1, "scalar", "1", &bins,
                error))
    return FALSE;
  pair[0] = hz, pair[1] = bins;
  if (!mel_step(b, node, "broadcast_mul", "hz_scaled", pair, 2, NULL, NULL, &bins, error))
    return FALSE;
  pair[0] = bins, pair[1] = f[2];
  if (!mel_step(b, node, "broadcast_div", "bin_points", pair, 2, NULL, NULL, &bins, error) ||
      !mel_step(b, node, "floor", "bins", &bins, 1, NULL, NULL, &bins, error))
    return FALSE;

  /* Spectrogram bins j = 0 .. dft_length / 2, as a column. */
  DsEntry half, j, left, center, right;
  if (!mel_step(b, node, "_div_scalar", "half_length", &f[1], 1, "scalar", "2", &half, error) ||
      !mel_step(b, node, "floor", "half_floor", &half, 1, NULL, NULL, &half, error) ||
      !mel_step(b, node, "_plus_scalar", "spectrum_bins", &half, 1, "scalar", "1", &half, error))
    return FALSE;
  range[1] = half;
  if (!mel_step(b, node, "_contrib_dynamic_arange", "bin_index", range, 3, "dtype", "float64",
                &j, error) ||
      !mel_step(b, node, "expand_dims", "bin_column", &j, 1, "axis", "1", &j, error))
    return FALSE;
  DsNode *l = ds_onnx_emit(b, node, "slice_axis", "left", &bins, 1, error, "axis", "0", "begin",
                           "0", "end", "-2", NULL);
  DsNode *c = l == NULL ? NULL
                        : ds_onnx_emit(b, node, "slice_axis", "center", &bins, 1, error, "axis",
                                       "0", "begin", "1", "end", "-1", NULL);
  DsNode *r = c == NULL ? NULL
                        : ds_onnx_emit(b, node, "slice_axis", "right", &bins, 1, error, "axis",
                                       "0", "begin", "2", "end", "None", NULL);
  if (r == NULL)
    return FALSE;
  left = ds_onnx_entry(l, 0), center = ds_onnx_entry(c, 0), right = ds_onnx_entry(r, 0);

  /* The rising and falling edges, and where each applies. */
  DsEntry rise, fall, t, width, is_rising, is_center, is_falling, w;
  DsEntry jl[2] = {j, left}, cl[2] = {center, left}, rj[2] = {right, j}, rc[2] = {right, center};
  if (!mel_step(b, node, "broadcast_sub", "from_left", jl, 2, NULL, NULL, &t, error) ||
      !mel_step(b, node, "broadcast_sub", "rise_width", cl, 2, NULL, NULL, &width, error))
    return FALSE;
  pair[0] = t, pair[1] = width;
  if (!mel_step(b, node, "broadcast_div", "rise", pair, 2, NULL, NULL, &rise, error) ||
      !mel_step(b, node, "broadcast_sub", "to_right", rj, 2, NULL, NULL, &t, error) ||
      !mel_step(b, node, "broadcast_sub", "fall_width", rc, 2, NULL, NULL, &width, error))
    return FALSE;
  pair[0] = t, pair[1] = width;
  if (!mel_step(b, node, "broadcast_div", "fall", pair, 2, NULL, NULL, &fall, error))
    return FALSE;
  DsEntry ge_left, lt_center, gt_center, lt_right;
  DsEntry jc[2] = {j, center}, jr[2] = {j, right};
  if (!mel_step(b, node, "broadcast_greater_equal", "past_left", jl, 2, NULL, NULL, &ge_left,
                error) ||
      !mel_step(b, node, "broadcast_lesser", "before_center", jc, 2, NULL, NULL, &lt_center,
                error) ||
      !mel_step(b, node, "broadcast_equal", "at_center", jc, 2, NULL, NULL, &is_center, error) ||
      !mel_step(b, node, "broadcast_greater", "past_center", jc, 2, NULL, NULL, &gt_center,
                error) ||
      !mel_step(b, node, "broadcast_lesser", "before_right", jr, 2, NULL, NULL, &lt_right, error))
    return FALSE;
  pair[0] = ge_left, pair[1] = lt_center;
  if (!mel_step(b, node, "broadcast_logical_and", "rising", pair, 2, NULL, NULL, &is_rising,
                error))
    return FALSE;
  pair[0] = gt_center, pair[1] = lt_right;
  if (!mel_step(b, node, "broadcast_logical_and", "falling", pair, 2, NULL, NULL, &is_falling,
                error))
    return FALSE;
  DsEntry choose[3] = {is_falling, fall, zero};
  if (!mel_step(b, node, "_npi_where", "falling_part", choose, 3, NULL, NULL, &w, error))
    return FALSE;
  choose[0] = is_center, choose[1] = one, choose[2] = w;
  if (!mel_step(b, node, "_npi_where", "with_center", choose, 3, NULL, NULL, &w, error))
    return FALSE;
  choose[0] = is_rising, choose[1] = rise, choose[2] = w;
  if (!mel_step(b, node, "_npi_where", "weights", choose, 3, NULL, NULL, &w, error))
    return FALSE;
  if (ds_dtype_is_storage_only(out_dtype))
    return ds_onnx_set_output_storage(b, node, 0, w, out_dtype, error);
  DsNode *y =
      ds_onnx_emit(b, node, "Cast", NULL, &w, 1, error, "dtype", ds_dtype_name(out_dtype), NULL);
  return y != NULL && ds_onnx_bind_outputs(b, node, y, error);
}

const DsOnnxOpTranslator ds_onnx_signal_ops[] = {
    {"DFT", 17, translate_dft},
    {"STFT", 17, translate_stft},
    {"MelWeightMatrix", 17, translate_mel_weight_matrix, 21},
    {NULL, 0, NULL},
};
