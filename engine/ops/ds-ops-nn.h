/* ds-ops-nn.h: neural-network layers and matrix products: ids and parsed attributes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"
#include "ds-tensor.h"

#define DS_OPS_NN(X)                                                                          \
  X(CONVOLUTION, "Convolution")                                                               \
  X(POOLING, "Pooling")                                                                       \
  X(FULLY_CONNECTED, "FullyConnected")                                                        \
  X(BATCH_NORM, "BatchNorm")                                                                  \
  X(LAYER_NORM, "LayerNorm")                                                                  \
  X(ACTIVATION, "Activation")                                                                 \
  X(LEAKY_RELU, "LeakyReLU")                                                                  \
  X(SOFTMAX, "softmax")                                                                       \
  X(LOG_SOFTMAX, "log_softmax")                                                               \
  X(SOFTMAX_OUTPUT, "SoftmaxOutput")                                                          \
  X(DROPOUT, "Dropout")                                                                       \
  X(EMBEDDING, "Embedding")                                                                   \
  X(DOT, "dot")                                                                               \
  X(BATCH_DOT, "batch_dot")                                                                   \
  X(RNN, "RNN")

/* Parsed attribute structs for these ops follow; kernels read them through DsKernelCtx.param. */

/* Spatial dims a convolution or pooling kernel may have: 1-D (NCW), 2-D (NCHW), 3-D (NCDHW). */
#define DS_NN_MAX_SPATIAL 3

/* Convolution. Tuples are expanded to `n_spatial` entries with MXNet's defaults (stride and
 * dilate 1, pad 0). Only the channels-first layouts are supported; `workspace`, `cudnn_*`
 * are accepted and ignored. */
typedef struct {
  int n_spatial;
  int64_t kernel[DS_NN_MAX_SPATIAL];
  int64_t stride[DS_NN_MAX_SPATIAL];
  int64_t dilate[DS_NN_MAX_SPATIAL];
  int64_t pad[DS_NN_MAX_SPATIAL];
  int64_t num_filter;
  int64_t num_group;
  bool no_bias;
} DsConvolutionParam;

typedef enum { DS_POOL_MAX, DS_POOL_AVG, DS_POOL_SUM, DS_POOL_LP } DsPoolType;
typedef enum { DS_POOL_VALID, DS_POOL_FULL, DS_POOL_SAME } DsPoolConvention;

/* Pooling. `n_spatial` is the kernel's rank, 0 when `kernel` is absent (only allowed with
 * global_pool, where the data's rank decides). stride defaults to 1 and pad to 0. */
typedef struct {
  int n_spatial;
  int64_t kernel[DS_NN_MAX_SPATIAL];
  int64_t stride[DS_NN_MAX_SPATIAL];
  int64_t pad[DS_NN_MAX_SPATIAL];
  DsPoolType pool_type;
  DsPoolConvention convention;
  bool global_pool;
  bool count_include_pad; /* avg only; MXNet's default is true */
  int p_value;            /* lp only: 1, 2 or 3 */
} DsPoolingParam;

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

/* LayerNorm. */
typedef struct {
  int axis; /* may be negative */
  double eps;
  bool output_mean_var;
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

/* softmax and log_softmax. */
typedef struct {
  int axis;           /* may be negative */
  double temperature; /* 1 when absent */
  DsDType dtype;      /* output dtype; DS_DTYPE_UNKNOWN means the data's */
  bool use_length;    /* a second input gives each row's valid length */
} DsSoftmaxParam;

/* SoftmaxOutput. Only the forward pass matters at inference: the label and the loss
 * attributes are parsed for validation and otherwise ignored. */
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
