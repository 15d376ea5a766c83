/* ds-ops-tensor.h: shape manipulation, creation, indexing and reductions: ids and attributes. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "ds-dtype.h"
#include "ds-tensor.h"

#define DS_OPS_TENSOR(X)                                                                      \
  X(RESHAPE, "Reshape")                                                                       \
  X(FLATTEN, "Flatten")                                                                       \
  X(EXPAND_DIMS, "expand_dims")                                                               \
  X(SQUEEZE, "squeeze")                                                                       \
  X(TRANSPOSE, "transpose")                                                                   \
  X(SWAP_AXIS, "SwapAxis")                                                                    \
  X(CONCAT, "Concat")                                                                         \
  X(BROADCAST_AXIS, "broadcast_axis")                                                         \
  X(BROADCAST_TO, "broadcast_to")                                                             \
  X(BROADCAST_LIKE, "broadcast_like")                                                         \
  X(ARANGE, "_arange")                                                                        \
  X(ZEROS, "_zeros")                                                                          \
  X(ONES, "_ones")                                                                            \
  X(FULL, "_full")                                                                            \
  X(SEQUENCE_MASK, "SequenceMask")                                                            \
  X(SLICE_AXIS, "slice_axis")                                                                 \
  X(SLICE, "slice")                                                                           \
  X(TAKE, "take")                                                                             \
  X(CAST, "Cast")                                                                             \
  X(SUM, "sum")                                                                               \
  X(MEAN, "mean")                                                                             \
  X(MAX, "max")                                                                               \
  X(MIN, "min")

/* Parsed attribute structs for these ops follow. */
