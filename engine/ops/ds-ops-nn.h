/* ds-ops-nn.h: neural-network layers and matrix products: ids and parsed attributes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"
#include "ds-tensor.h"

#define DS_OPS_NN(X)                                                                               \
  X(CONVOLUTION, "Convolution")                                                                    \
  X(POOLING, "Pooling")                                                                            \
  X(BACKWARD_POOLING, "_backward_Pooling")                                                         \
  X(FULLY_CONNECTED, "FullyConnected")                                                             \
  X(BATCH_NORM, "BatchNorm")                                                                       \
  X(LAYER_NORM, "LayerNorm")                                                                       \
  X(ACTIVATION, "Activation")                                                                      \
  X(LEAKY_RELU, "LeakyReLU")                                                                       \
  X(SOFTMAX, "softmax")                                                                            \
  X(LOG_SOFTMAX, "log_softmax")                                                                    \
  X(SOFTMAX_OUTPUT, "SoftmaxOutput")                                                               \
  X(DROPOUT, "Dropout")                                                                            \
  X(EMBEDDING, "Embedding")                                                                        \
  X(DOT, "dot")                                                                                    \
  X(BATCH_DOT, "batch_dot")                                                                        \
  X(RNN, "RNN")                                                                                    \
  X(MATMUL, "_npi_matmul")                                                                         \
  X(INSTANCE_NORM, "InstanceNorm")                                                                 \
  X(LRN, "LRN")                                                                                    \
  X(HARDMAX, "_contrib_hardmax")                                                                   \
  X(RECURRENT_LAYER, "_contrib_RecurrentLayer")                                                    \
  X(EINSUM, "_npi_einsum")                                                                         \
  X(SOFTMIN, "softmin")                                                                            \
  X(SOFTMAX_ACTIVATION, "SoftmaxActivation")                                                       \
  X(L2_NORMALIZATION, "L2Normalization")                                                           \
  X(UPSAMPLING, "UpSampling")

/* Parsed attribute structs for these ops follow; kernels read them through DsKernelCtx.param. */

/* Spatial dims a convolution or pooling kernel may have: 1-D (NCW), 2-D (NCHW), 3-D (NCDHW). */
#define DS_NN_MAX_SPATIAL 3

/* Padding that ONNX's auto_pad computes from the input size at run time (attribute
 * `auto_pad` of Convolution and Pooling, an extension of MXNet's): "same_upper" and
 * "same_lower" make the output ceil(input / stride) long, padding as little as that needs,
 * the odd element at the end (upper) or at the beginning (lower). */
typedef enum { DS_AUTO_PAD_NONE, DS_AUTO_PAD_SAME_UPPER, DS_AUTO_PAD_SAME_LOWER } DsAutoPad;

/* The padding before and after a spatial axis of `in` elements: `pad` and `pad_end` as given,
 * or what `auto_pad` computes for the stride and the dilated kernel size `eff_kernel`. */
static inline void ds_nn_axis_pads(DsAutoPad auto_pad, int64_t pad, int64_t pad_end, int64_t in,
                                   int64_t stride, int64_t eff_kernel, int64_t *begin, int64_t *end)
{
  if (auto_pad == DS_AUTO_PAD_NONE) {
    *begin = pad;
    *end = pad_end;
    return;
  }
  int64_t out = (in + stride - 1) / stride;
  int64_t total = (out - 1) * stride + eff_kernel - in;
  if (total < 0)
    total = 0;
  *begin = auto_pad == DS_AUTO_PAD_SAME_LOWER ? total - total / 2 : total / 2;
  *end = total - *begin;
}

/* Convolution. Tuples are expanded to `n_spatial` entries with MXNet's defaults (stride and
 * dilate 1, pad 0). Only the channels-first layouts are supported; `workspace`, `cudnn_*`
 * are accepted and ignored. Extensions of MXNet's attributes, for ONNX's Conv: `pad_end`
 * (default: `pad`) pads the end of each axis differently from its beginning, `auto_pad`
 * (DsAutoPad) replaces both, and num_filter=0 takes the filter count from the weight's first
 * dim. */
typedef struct {
  int n_spatial;
  int64_t kernel[DS_NN_MAX_SPATIAL];
  int64_t stride[DS_NN_MAX_SPATIAL];
  int64_t dilate[DS_NN_MAX_SPATIAL];
  int64_t pad[DS_NN_MAX_SPATIAL];
  int64_t pad_end[DS_NN_MAX_SPATIAL];
  DsAutoPad auto_pad;
  int64_t num_filter; /* 0: the weight's */
  int64_t num_group;
  bool no_bias;
} DsConvolutionParam;

/* Axis i's padding for an input of `in` elements. */
static inline void ds_conv_axis_pads(const DsConvolutionParam *p, int i, int64_t in, int64_t *begin,
                                     int64_t *end)
{
  ds_nn_axis_pads(p->auto_pad, p->pad[i], p->pad_end[i], in, p->stride[i],
                  p->dilate[i] * (p->kernel[i] - 1) + 1, begin, end);
}

typedef enum { DS_POOL_MAX, DS_POOL_AVG, DS_POOL_SUM, DS_POOL_LP } DsPoolType;
typedef enum { DS_POOL_VALID, DS_POOL_FULL, DS_POOL_SAME } DsPoolConvention;
/* Whether max pooling also outputs where each maximum was: its flat index in the data, as
 * the plane's offset plus the position within the plane in row- or column-major order (ONNX
 * MaxPool's Indices output with storage_order 0 or 1, as ONNX Runtime numbers them). */
typedef enum {
  DS_POOL_INDICES_NONE,
  DS_POOL_INDICES_ROW_MAJOR,
  DS_POOL_INDICES_COLUMN_MAJOR
} DsPoolIndices;

/* Pooling. `n_spatial` is the kernel's rank, 0 when `kernel` is absent (only allowed with
 * global_pool, where the data's rank decides). stride defaults to 1 and pad to 0. Extensions
 * of MXNet's attributes, for ONNX's pools: `pad_end` (default: `pad`), `auto_pad` as for
 * Convolution, `dilate` (default 1; max pooling only) and `indices` (none, row_major or
 * column_major; max pooling only: a second, int64 output). Padding never counts as an element
 * of a max window. */
typedef struct {
  int n_spatial;
  int64_t kernel[DS_NN_MAX_SPATIAL];
  int64_t stride[DS_NN_MAX_SPATIAL];
  int64_t pad[DS_NN_MAX_SPATIAL];
  int64_t pad_end[DS_NN_MAX_SPATIAL];
  int64_t dilate[DS_NN_MAX_SPATIAL];
  DsAutoPad auto_pad;
  DsPoolType pool_type;
  DsPoolConvention convention;
  bool global_pool;
  bool count_include_pad; /* avg only; MXNet's default is true */
  int p_value;            /* lp only: 1, 2 or 3 */
  DsPoolIndices indices;  /* max only */
} DsPoolingParam;

/* Axis i's padding for an input of `in` elements (global pooling has none). */
static inline void ds_pool_axis_pads(const DsPoolingParam *p, int i, int64_t in, int64_t *begin,
                                     int64_t *end)
{
  if (p->global_pool) {
    *begin = *end = 0;
    return;
  }
  ds_nn_axis_pads(p->auto_pad, p->pad[i], p->pad_end[i], in, p->stride[i],
                  p->dilate[i] * (p->kernel[i] - 1) + 1, begin, end);
}

/* FullyConnected. */
typedef struct {
  int64_t num_hidden;
  bool no_bias;
  bool flatten;
} DsFullyConnectedParam;

/* BatchNorm. At inference the moving statistics normalise; fix_gamma treats gamma as 1. */
typedef struct {
  double eps;
  double momentum;
  bool fix_gamma;
  bool use_global_stats;
  bool output_mean_var;
  int axis; /* may be negative */
} DsBatchNormParam;

/* LayerNorm. With `trailing_axes` (an extension, for ONNX's LayerNormalization) the
 * statistics run over `axis` and every axis after it, gamma and beta have the shape of those
 * axes, and mean and std keep the data's rank with those axes reduced to 1. */
typedef struct {
  int axis; /* may be negative */
  double eps;
  bool output_mean_var;
  bool trailing_axes;
} DsLayerNormParam;

typedef enum {
  DS_ACT_RELU,
  DS_ACT_SIGMOID,
  DS_ACT_TANH,
  DS_ACT_SOFTRELU,
  DS_ACT_SOFTSIGN,
  DS_ACT_LOG_SIGMOID,
  DS_ACT_MISH,
} DsActType;

/* Activation. */
typedef struct {
  DsActType act_type;
} DsActivationParam;

typedef enum {
  DS_LEAKY_LEAKY,
  DS_LEAKY_PRELU,
  DS_LEAKY_RRELU,
  DS_LEAKY_ELU,
  DS_LEAKY_SELU,
  DS_LEAKY_GELU,
} DsLeakyType;

/* LeakyReLU. rrelu uses the mean slope (lower + upper) / 2 at inference, as MXNet does. */
typedef struct {
  DsLeakyType act_type;
  double slope;
  double lower_bound;
  double upper_bound;
} DsLeakyReLUParam;

/* softmax and log_softmax. With `trailing_axes` (an extension, for ONNX's opset < 13 Softmax,
 * which coerces its input to 2-D at `axis`) a row is `axis` and every axis after it,
 * flattened; it excludes use_length. */
typedef struct {
  int axis;           /* may be negative */
  double temperature; /* 1 when absent */
  DsDType dtype;      /* output dtype; DS_DTYPE_UNKNOWN means the data's */
  bool use_length;    /* a second input gives each row's valid length */
  bool trailing_axes;
} DsSoftmaxParam;

/* softmin is softmax of -data (MXNet's `negate`) and parses into DsSoftmaxParam (no length
 * input). SoftmaxActivation (deprecated) parses into it too: mode=instance is a softmax over
 * the last axis (MXNet flattens the data to 2-D keeping the last axis), mode=channel over axis
 * 1 of data of rank 3 or more. */

/* L2Normalization: data / sqrt(sum(data^2) + eps) over every axis but the first (instance),
 * over axis 1 (channel), or over the axes after the first two (spatial); the hidden second
 * output holds the norms. */
typedef enum {
  DS_L2NORM_INSTANCE,
  DS_L2NORM_CHANNEL,
  DS_L2NORM_SPATIAL,
} DsL2NormMode;

typedef struct {
  float eps;
  DsL2NormMode mode;
} DsL2NormalizationParam;

/* UpSampling on NCHW data. nearest: each of num_args inputs repeated to (scale * H0,
 * scale * W0), the first input's size times scale, then concatenated along the channels or
 * summed (multi_input_mode). bilinear: MXNet's grouped deconvolution of the data with a
 * (C, 1, k, k) weight, k = 2 * scale - scale % 2, stride scale and pad ceil((scale - 1) / 2). */
typedef enum {
  DS_UPSAMPLE_NEAREST,
  DS_UPSAMPLE_BILINEAR,
} DsUpSampleType;

typedef struct {
  int scale;
  int num_filter;
  DsUpSampleType sample_type;
  int num_args;
  bool sum; /* multi_input_mode=sum; concat otherwise */
} DsUpSamplingParam;

/* SoftmaxOutput. The forward pass is softmax; the label and the loss attributes shape its
 * gradient (ds_grad_softmax_output). */
typedef struct {
  double grad_scale;
  double ignore_label;
  bool multi_output;
  bool use_ignore;
  bool preserve_shape;
  int normalization; /* 0 null, 1 batch, 2 valid */
  bool out_grad;
  double smooth_alpha;
} DsSoftmaxOutputParam;

typedef enum { DS_DROPOUT_TRAINING, DS_DROPOUT_ALWAYS } DsDropoutMode;

/* Dropout. */
typedef struct {
  double p;
  DsDropoutMode mode;
  int n_axes;
  int64_t axes[DS_MAX_NDIM];
} DsDropoutParam;

/* Embedding. */
typedef struct {
  int64_t input_dim;
  int64_t output_dim;
  DsDType dtype;
  bool sparse_grad;
} DsEmbeddingParam;

/* dot and batch_dot. */
typedef struct {
  bool transpose_a;
  bool transpose_b;
} DsDotParam;

typedef enum { DS_RNN_RELU, DS_RNN_TANH, DS_RNN_LSTM, DS_RNN_GRU } DsRNNMode;

/* RNN (the fused op, layout TNC). projection_size and LSTM state clipping are refused. */
typedef struct {
  int64_t state_size;
  int64_t num_layers;
  bool bidirectional;
  DsRNNMode mode;
  double p;
  bool state_outputs;
  bool use_sequence_length;
} DsRNNParam;

/* Gates per mode: 1 for the plain RNNs, 4 for LSTM (i, f, g, o), 3 for GRU (r, z, n). */
static inline int ds_rnn_n_gates(DsRNNMode mode)
{
  return mode == DS_RNN_LSTM ? 4 : mode == DS_RNN_GRU ? 3 : 1;
}

/* InstanceNorm: each (image, channel) plane normalised by its own mean and variance, then
 * scaled by gamma[channel] and shifted by beta[channel]. Data is (N, C, spatial...). */
typedef struct {
  double eps; /* MXNet's default 1e-3 */
} DsInstanceNormParam;

/* LRN across channels (axis 1): out = x / (knorm + alpha / nsize * sum of x^2 over the window)
 * ^ beta, the window running from channel c - (nsize - 1) / 2 to c + nsize / 2 (ONNX's floor
 * and ceil of (nsize - 1) / 2; the same for the odd sizes MXNet allows). */
typedef struct {
  double alpha;
  double beta;
  double knorm;
  int64_t nsize;
} DsLRNParam;

/* _contrib_hardmax: 1 at the first maximum of each row along `axis`, 0 elsewhere; with
 * `trailing_axes` a row is `axis` and every axis after it, flattened (ONNX opset < 13). */
typedef struct {
  int axis; /* may be negative */
  bool trailing_axes;
} DsHardmaxParam;

typedef enum { DS_RNN_FORWARD, DS_RNN_REVERSE, DS_RNN_BIDIRECTIONAL } DsRNNDirection;

/* _contrib_RecurrentLayer: one recurrent layer with ONNX's LSTM, GRU and RNN semantics, its
 * weights as separate inputs in ONNX's layout and gate order (LSTM i, o, f, c; GRU z, r, h),
 * so that they need no repacking and may be computed at run time.
 *
 * Inputs: data (T, N, I), or (N, T, I) with batch_first; W (D, G*H, I); R (D, G*H, H); then,
 * as the flags say, B (D, 2*G*H: input then recurrent biases), sequence_length (N),
 * initial_h and initial_c (D, N, H, or N, D, H with batch_first; zeros when absent), P (D, 3*H:
 * LSTM peepholes i, o, f). Outputs: Y (T, D, N, H) or (N, T, D, H); Y_h (D, N, H) or (N, D, H);
 * LSTM also Y_c. Past a batch entry's length Y is 0 and the state stays at its last step; the
 * reverse direction starts at length - 1. Activations are the defaults (sigmoid and tanh;
 * rnn_tanh or rnn_relu for the plain RNN); `clip` > 0 clips every gate's input to
 * [-clip, clip]. GRU's linear_before_reset says whether the reset gate multiplies the
 * recurrent projection (as MXNet's RNN op does) or the state before it. */
typedef struct {
  DsRNNMode mode;
  int64_t state_size;
  DsRNNDirection direction;
  bool batch_first;
  bool linear_before_reset;
  double clip; /* <= 0: none */
  bool use_bias;
  bool use_sequence_length;
  bool use_initial_h;
  bool use_initial_c; /* LSTM only */
  bool use_peephole;  /* LSTM only */
} DsRecurrentLayerParam;

static inline int64_t ds_recurrent_dirs(const DsRecurrentLayerParam *p)
{
  return p->direction == DS_RNN_BIDIRECTIONAL ? 2 : 1;
}

/* _npi_einsum: NumPy's einsum on `num_args` operands. Labels are 0..51 for a-z and A-Z;
 * DS_EINSUM_ELLIPSIS marks where "..." stands in a term. Without "->" in `subscripts` the output
 * is the ellipsis, then the labels used once, in ASCII order (NumPy's implicit mode). */
#define DS_EINSUM_MAX_OPERANDS 8
#define DS_EINSUM_LETTERS      52
#define DS_EINSUM_ELLIPSIS     (-1)
/* Letters, then one label per ellipsis dim. */
#define DS_EINSUM_MAX_LABELS (DS_EINSUM_LETTERS + DS_MAX_NDIM)

typedef struct {
  int8_t labels[DS_MAX_NDIM + 1]; /* with at most one DS_EINSUM_ELLIPSIS */
  int n;
} DsEinsumTerm;

typedef struct {
  int num_args;
  DsEinsumTerm in[DS_EINSUM_MAX_OPERANDS];
  DsEinsumTerm out;
} DsEinsumParam;

/* A term with its ellipsis replaced by the labels of the dims it covers: the last `n_ell` of
 * the `total_ell` ellipsis labels (DS_EINSUM_LETTERS + j), as broadcasting aligns them right.
 * `rank` is the operand's (for the output: the labels' count is the output's rank). Returns
 * the expanded length, or -1 if the rank does not fit the term. */
static inline int ds_einsum_expand_term(const DsEinsumTerm *t, int rank, int total_ell, int *labels)
{
  int explicit_n = 0, has_ell = 0;
  for (int i = 0; i < t->n; i++) {
    if (t->labels[i] == DS_EINSUM_ELLIPSIS)
      has_ell = 1;
    else
      explicit_n++;
  }
  int n_ell = rank < 0 ? total_ell : rank - explicit_n; /* rank < 0: the output's */
  if (n_ell < 0 || (!has_ell && n_ell != 0) || n_ell > total_ell ||
      explicit_n + n_ell > DS_MAX_NDIM)
    return -1;
  int k = 0;
  for (int i = 0; i < t->n; i++) {
    if (t->labels[i] != DS_EINSUM_ELLIPSIS) {
      labels[k++] = t->labels[i];
      continue;
    }
    for (int j = 0; j < n_ell; j++)
      labels[k++] = DS_EINSUM_LETTERS + (total_ell - n_ell) + j;
  }
  return k;
}

/* The ellipsis rank of an einsum over operands of these ranks: the most dims any operand's
 * ellipsis covers (they broadcast). */
static inline int ds_einsum_ellipsis_rank(const DsEinsumParam *p, const int *ranks)
{
  int total = 0;
  for (int k = 0; k < p->num_args; k++) {
    int explicit_n = 0;
    for (int i = 0; i < p->in[k].n; i++)
      explicit_n += p->in[k].labels[i] != DS_EINSUM_ELLIPSIS;
    if (ranks[k] - explicit_n > total)
      total = ranks[k] - explicit_n;
  }
  return total;
}
