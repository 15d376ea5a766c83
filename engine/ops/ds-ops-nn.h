/* ds-ops-nn.h: neural-network layers and matrix products: ids and parsed attributes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"

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
